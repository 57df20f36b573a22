"""Polling a directory wiki and a feed into the store, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.matching.planner import Planner
from bot.models import ChatSettings, Platform
from bot.rules import filters
from bot.sources.feed import make_feed_client
from bot.sources.poll import POLL_CONCURRENCY, Poller
from bot.store import chats as chat_store
from bot.store import current
from bot.store import pages as page_store
from bot.store.schema import chat_pages, page_events, pages, sources
from tests.cli import run_cli
from tests.fakes.feed_server import FeedServer, Served


def page(
    key: str,
    *,
    lang: str | None = "en",
    tags: str = "[rl]",
    tldr: str = "A finding.",
    updated: str = "2026-11-01",
    title: str | None = None,
) -> tuple[str, str]:
    suffix = f".{lang}" if lang else ""
    front = [
        "---",
        f'title: "{title or key.rsplit("/", 1)[-1]}"',
        "created: 2026-10-30",
        f"updated: {updated}",
        f"tags: {tags}",
        "---",
    ]
    return f"{key}{suffix}.md", "\n".join(
        front
    ) + f"\n\n## TL;DR\n\n{tldr}\n\n## Method\n\nDetails.\n"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


async def make_poller(
    engine: AsyncEngine, *sources_: str, transport: httpx.AsyncBaseTransport | None = None
) -> Poller:
    return Poller(
        engine=engine,
        sources=sources_,
        base_url="https://wiki.example.org/",
        default_lang="en",
        http=make_feed_client(transport=transport),
    )


async def event_count(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(page_events))).scalar_one())


async def test_baseline_then_idempotent(engine: AsyncEngine, tmp_path: Path) -> None:
    for key in ("papers/2026/a-one", "papers/2026/b-two"):
        write(tmp_path, *page(key))
    poller = await make_poller(engine, str(tmp_path))
    first = await poller.poll()
    assert first.line() == "2 new, 0 updated, 0 skipped (baseline: nothing queued)"
    assert await event_count(engine) == 0
    second = await poller.poll()
    assert second.line() == "0 new, 0 updated, 0 skipped"
    assert await event_count(engine) == 0


async def test_new_updated_translation_and_deleted(engine: AsyncEngine, tmp_path: Path) -> None:
    write(tmp_path, *page("papers/2026/a-one"))
    poller = await make_poller(engine, str(tmp_path))
    await poller.poll()

    write(tmp_path, *page("papers/2026/b-two"))
    assert (await poller.poll()).line() == "1 new, 0 updated, 0 skipped"
    assert await event_count(engine) == 1

    # A changed TL;DR makes the page updated; a touched but identical file does not.
    write(tmp_path, *page("papers/2026/a-one", tldr="A better finding."))
    write(tmp_path, *page("papers/2026/b-two"))
    assert (await poller.poll()).line() == "0 new, 1 updated, 0 skipped"

    # A translation added later is the same page: a new TL;DR language is an update.
    write(tmp_path, *page("papers/2026/b-two", lang="ko", tldr="발견."))
    summary = await poller.poll()
    assert (summary.new, summary.updated) == (0, 1)
    async with engine.connect() as conn:
        count = (await conn.execute(select(func.count()).select_from(pages))).scalar_one()
        loaded = await page_store.load_pages(conn, [2])
    assert count == 2
    assert {t.lang for t in loaded[2].texts} == {"en", "ko"}
    assert loaded[2].url == "https://wiki.example.org/papers/2026/b-two"

    # A deleted file: no crash, no notification; the page leaves `tags` and `latest`.
    (tmp_path / "papers/2026/a-one.en.md").unlink()
    events_before = await event_count(engine)
    assert (await poller.poll()).line() == "0 new, 0 updated, 0 skipped"
    assert await event_count(engine) == events_before
    async with engine.connect() as conn:
        assert await current.paper_count(conn) == 1
        assert await current.tag_counts(conn) == [("rl", 1)]


async def test_malformed_files_are_skipped_and_counted(engine: AsyncEngine, tmp_path: Path) -> None:
    write(tmp_path, *page("papers/2026/good"))
    write(tmp_path, "papers/2026/bad-yaml.md", "---\ntitle: [unclosed\n---\n\nText.\n")
    write(tmp_path, "papers/2026/binary.md", b"\x00\x01\x02\xff")
    write(tmp_path, "papers/2026/latin1.md", "caf\xe9".encode("latin-1"))
    write(tmp_path, "papers/2026/empty.md", "")
    poller = await make_poller(engine, str(tmp_path))
    assert (await poller.poll()).line() == "1 new, 0 updated, 4 skipped (baseline: nothing queued)"
    # Still malformed on the next poll: still counted, nothing recorded twice.
    assert (await poller.poll()).line() == "0 new, 0 updated, 4 skipped"
    # Fixed: recorded as new.
    write(tmp_path, *page("papers/2026/bad-yaml", lang=None))
    assert (await poller.poll()).line() == "1 new, 0 updated, 3 skipped"


async def add_chat(engine: AsyncEngine, chat_id: str, filter_text: str) -> int:
    settings = ChatSettings(
        platform=Platform.TELEGRAM, chat_id=chat_id, filter=filters.parse_filter(filter_text)
    )
    async with engine.begin() as conn:
        return (await chat_store.ensure(conn, defaults=settings)).pk


async def planned_pages(engine: AsyncEngine, chat_pk: int) -> set[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(pages.c.key)
            .join(chat_pages, chat_pages.c.page_id == pages.c.id)
            .where(chat_pages.c.chat_pk == chat_pk)
        )
        return {key for (key,) in rows}


async def test_backfill_queues_recent_pages(engine: AsyncEngine, tmp_path: Path) -> None:
    write(tmp_path, *page("papers/2026/recent", updated="2026-11-20"))
    write(tmp_path, *page("papers/2026/old", updated="2025-01-01"))
    poller = await make_poller(engine, str(tmp_path))
    await add_chat(engine, "1", "rl")
    summary = await poller.poll(backfill_days=30, today=dt.date(2026, 12, 1))
    assert summary.line() == "2 new, 0 updated, 0 skipped (backfill: 1 notifications queued)"
    assert await event_count(engine) == 1


async def test_backfill_counts_what_chats_will_receive(engine: AsyncEngine, tmp_path: Path) -> None:
    """The count is the pages the chats' next digests carry, a chat and a page once: a page
    no chat follows, or that a chat already had, is not counted (nor queued); what is
    counted is planned."""
    write(tmp_path, *page("papers/2026/a", updated="2026-11-20"))
    write(tmp_path, *page("papers/2026/b", updated="2026-11-21"))
    write(tmp_path, *page("papers/2026/c", updated="2026-11-22", tags="[vision]"))
    write(tmp_path, *page("papers/2026/d", updated="2026-11-23", tags="[robotics]"))
    poller = await make_poller(engine, str(tmp_path))
    today = dt.date(2026, 12, 1)
    assert (await poller.poll()).line().endswith("(baseline: nothing queued)")
    planner = Planner(engine=engine, welcome=False)
    rl, vision = await add_chat(engine, "1", "rl"), await add_chat(engine, "2", "vision")
    summary = await poller.poll(backfill_days=30, today=today)
    assert summary.line() == "0 new, 0 updated, 0 skipped (backfill: 3 notifications queued)"
    assert await event_count(engine) == 3  # d: followed by no chat
    assert await planner.plan_now() == 2
    assert await planned_pages(engine, rl) == {"papers/2026/a", "papers/2026/b"}
    assert await planned_pages(engine, vision) == {"papers/2026/c"}

    # The chats had them all: a backfill now would bring them nothing.
    again = await poller.poll(backfill_days=30, today=today)
    assert again.line() == "0 new, 0 updated, 0 skipped (backfill: 0 notifications queued)"
    # A chat that follows rl from now on gets the rl pages; the others are not counted again.
    late = await add_chat(engine, "3", "rl")
    later = await poller.poll(backfill_days=30, today=today)
    assert later.line() == "0 new, 0 updated, 0 skipped (backfill: 2 notifications queued)"
    assert await planner.plan_now() == 1
    assert await planned_pages(engine, late) == {"papers/2026/a", "papers/2026/b"}
    # Queued and not yet planned: not queued or counted a second time.
    await add_chat(engine, "4", "vision")
    assert (
        (await poller.poll(backfill_days=30, today=today))
        .line()
        .endswith("(backfill: 1 notifications queued)")
    )
    assert (
        (await poller.poll(backfill_days=30, today=today))
        .line()
        .endswith("(backfill: 0 notifications queued)")
    )


async def test_failed_source_does_not_stop_others(engine: AsyncEngine, tmp_path: Path) -> None:
    write(tmp_path, *page("papers/2026/a-one"))
    poller = await make_poller(engine, str(tmp_path / "missing"), str(tmp_path))
    summary = await poller.poll()
    assert summary.new == 1 and not summary.all_failed
    async with engine.connect() as conn:
        rows = {r.name: r for r in await page_store.all_sources(conn)}
    assert rows[str(tmp_path / "missing")].last_error
    assert rows[str(tmp_path)].last_error is None

    only_missing = await make_poller(engine, str(tmp_path / "missing"))
    assert (await only_missing.poll()).all_failed


ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">
  <title>Wiki</title><id>urn:wiki</id><updated>2026-11-02T00:00:00Z</updated>
  <entry>
    <id>urn:page:1</id><title>Entry one</title>
    <link href="https://wiki.example.org/one"/>
    <updated>2026-11-02T00:00:00Z</updated><published>2026-11-01T00:00:00Z</published>
    <category term="rl"/><category term="Reasoning"/>
    <summary>First &lt;b&gt;summary&lt;/b&gt;.</summary>
  </entry>
</feed>"""


async def test_feed_source_with_conditional_requests(engine: AsyncEngine) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304)
        return httpx.Response(
            200, content=ATOM, headers={"content-type": "application/atom+xml", "etag": '"v1"'}
        )

    url = "https://feeds.example.org/wiki.atom"
    poller = await make_poller(engine, url, transport=httpx.MockTransport(handler))
    assert (await poller.poll()).line() == "1 new, 0 updated, 0 skipped (baseline: nothing queued)"
    assert (await poller.poll()).line() == "0 new, 0 updated, 0 skipped"
    assert seen[-1].headers["if-none-match"] == '"v1"'
    async with engine.connect() as conn:
        assert dict(await current.tag_counts(conn)) == {"rl": 1, "reasoning": 1}
        row = (await conn.execute(select(sources.c.etag))).scalar_one()
    assert row == '"v1"'


def test_poll_command_on_the_sample_wiki(
    clean_env: dict[str, str], tmp_path: Path, database_url: str
) -> None:
    # The default WIKI_SOURCES: the sample wiki inside the package, from any directory.
    env = dict(clean_env, DATABASE_URL=database_url)
    first = run_cli("poll", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    last = first.stdout.strip().splitlines()[-1]
    assert last.endswith("new, 0 updated, 0 skipped (baseline: nothing queued)")
    assert int(last.split()[0]) >= 12
    assert "poll finished" not in first.stderr  # the summary is printed once, not logged too
    second = run_cli("poll", env=env, cwd=tmp_path)
    assert second.stdout.strip().splitlines()[-1] == "0 new, 0 updated, 0 skipped"
    # No chat yet: a backfill would notify no one, and says so.
    backfill = run_cli("poll", "--backfill", "3650", env=env, cwd=tmp_path)
    assert backfill.stdout.strip().splitlines()[-1] == (
        "0 new, 0 updated, 0 skipped (backfill: 0 notifications queued)"
    )


def test_a_backfill_says_what_the_chat_then_gets(clean_env: dict[str, str], tmp_path: Path) -> None:
    """A chat that had its welcome digest: a backfill of the pages it had counts none and
    its digest says nothing is new; a backfill of older pages counts what its digest then
    sends, page for page."""
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
        LANG="C.UTF-8",
    )
    assert run_cli("poll", env=env, cwd=tmp_path).returncode == 0
    welcomed = run_cli("console", env=env, cwd=tmp_path, stdin="/subscribe rl\n/digest\n")
    assert "Sending your digest now (" in welcomed.stdout, welcomed.stdout
    recent = run_cli("poll", "--backfill", "30", env=env, cwd=tmp_path)
    assert recent.stdout.strip().splitlines()[-1].endswith("(backfill: 0 notifications queued)")
    nothing = run_cli("console", env=env, cwd=tmp_path, stdin="/digest\n")
    assert "Nothing new for your filter since the last digest." in nothing.stdout

    older = run_cli("poll", "--backfill", "3650", env=env, cwd=tmp_path)
    line = older.stdout.strip().splitlines()[-1]
    queued = int(line.rsplit("(backfill: ", 1)[1].split()[0])
    assert queued > 0, line
    sent = run_cli("console", env=env, cwd=tmp_path, stdin="/lang ko\n/digest\n")
    assert f"지금 요약을 보냅니다 (페이지 {queued}개)." in sent.stdout, sent.stdout


def test_poll_command_fails_when_every_source_fails(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    env = dict(clean_env, WIKI_SOURCES=str(tmp_path / "nowhere"))
    result = run_cli("poll", env=env, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.strip().splitlines()[-1] == "0 new, 0 updated, 0 skipped"
    assert "nowhere" in result.stderr and "Traceback" not in result.stderr


def test_poll_rejects_a_bad_backfill(clean_env: dict[str, str], tmp_path: Path) -> None:
    result = run_cli("poll", "--backfill", "soon", env=clean_env, cwd=tmp_path)
    assert result.returncode == 2
    assert "whole number of days" in result.stderr


# --- hostile sizes, one failing source, slow sources ----------------------------------------


async def test_long_fields_are_bounded_and_every_source_still_polls(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """A 65-character ``type`` and a 5,000-character entry id stopped every poll on
    PostgreSQL (StringDataRightTruncationError); now they are recorded within bounds."""
    wiki = tmp_path / "wiki"
    write(
        wiki,
        "papers/2026/long-type.md",
        page("x")[1].replace("created:", f"type: {'t' * 65}\ncreated:"),
    )
    long_id = "urn:entry:" + "i" * 5000
    body = json_feed_body([{"id": long_id, "title": "Long id", "tags": ["rl"]}])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "application/feed+json"})

    url = "https://feeds.example.org/long.json"
    poller = await make_poller(engine, str(wiki), url, transport=httpx.MockTransport(handler))
    first = await poller.poll()
    assert [o.error for o in first.outcomes] == [None, None]
    assert first.new == 2
    again = await poller.poll()  # the same long id is the same page: a stable key
    assert (again.new, again.updated) == (0, 0)
    async with engine.connect() as conn:
        rows = dict((await conn.execute(select(pages.c.key, pages.c.type))).all())
    # The two sources are polled at once: the order their rows were written in is not fixed.
    assert rows.pop("papers/2026/long-type") == "t" * 63 + "…"
    ((long_key, _),) = rows.items()
    assert len(long_key) == 1000 and long_key.startswith("urn:entry:iii")


def json_feed_body(items: list[dict[str, object]]) -> bytes:
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "items": items}).encode()


async def poison(engine: AsyncEngine, word: str) -> None:
    """A database that refuses any page whose key holds ``word``, as a constraint would:
    the error the poller sees is the database's own."""
    async with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            await conn.exec_driver_sql(
                "CREATE TRIGGER poison BEFORE INSERT ON pages "
                f"WHEN NEW.key LIKE '%{word}%' BEGIN SELECT RAISE(ABORT, 'poisoned'); END"
            )
        else:
            await conn.exec_driver_sql(
                "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                f"IF NEW.key LIKE '%{word}%' THEN RAISE EXCEPTION 'poisoned'; END IF; "
                "RETURN NEW; END $$"
            )
            await conn.exec_driver_sql(
                "CREATE TRIGGER poison BEFORE INSERT ON pages "
                "FOR EACH ROW EXECUTE FUNCTION poison()"
            )


async def test_an_unexpected_error_fails_that_source_alone(
    engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bad, good = tmp_path / "bad", tmp_path / "good"
    write(bad, *page("papers/2026/poisoned-page"))
    write(good, *page("papers/2026/fine-page"))
    await poison(engine, "poisoned")
    poller = await make_poller(engine, str(bad), str(good))
    with caplog.at_level(logging.ERROR, logger="bot.poll"):
        summary = await poller.poll()
    by_name = {o.name: o for o in summary.outcomes}
    assert by_name[str(good)].new == 1 and by_name[str(good)].error is None
    assert by_name[str(bad)].error is not None
    assert by_name[str(bad)].error.startswith("unexpected error: ")
    bad_id = poller.sources.of(str(bad)).id
    assert poller.failures == {bad_id: 1}  # by the source's id, as /healthz reads them
    (logged,) = [r for r in caplog.records if r.name == "bot.poll"]
    assert logged.getMessage().startswith(f"source failed: {bad}: unexpected error: ")
    async with engine.connect() as conn:
        rows = {r.name: r for r in await page_store.all_sources(conn)}
    assert rows[str(bad)].last_error == by_name[str(bad)].error  # /healthz shows it
    assert rows[str(good)].last_error is None
    await poller.poll()
    assert poller.failures == {bad_id: 2}


async def test_sources_are_polled_at_once_and_a_hanging_one_meets_its_deadline(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    write(tmp_path, *page("papers/2026/a-one"))
    async with FeedServer() as server:
        hanging = [server.hang(f"/hang{n}") for n in range(3)]
        poller = Poller(
            engine=engine,
            sources=[*hanging, str(tmp_path)],
            base_url=None,
            default_lang="en",
            http=make_feed_client(),
            source_deadline=2.0,
        )
        polled = asyncio.create_task(poller.poll())
        await server.wait_in_flight(3)  # all three hang at the same time
        summary = await polled
    assert server.most_in_flight == 3
    assert [o.error for o in summary.outcomes] == ["took longer than 2 s"] * 3 + [None]
    assert summary.new == 1


async def test_no_more_sources_than_the_bound_are_fetched_at_once(engine: AsyncEngine) -> None:
    async with FeedServer() as server:
        hanging = [server.hang(f"/hang{n}") for n in range(POLL_CONCURRENCY + 2)]
        poller = Poller(
            engine=engine,
            sources=hanging,
            base_url=None,
            default_lang="en",
            http=make_feed_client(),
        )
        polled = asyncio.create_task(poller.poll())
        await server.wait_in_flight(POLL_CONCURRENCY)
        # Without the bound the other two would be hanging too within this second.
        with pytest.raises(TimeoutError):
            await server.wait_in_flight(POLL_CONCURRENCY + 1, seconds=1.0)
        server.release_all()
        summary = await polled
    assert server.most_in_flight == POLL_CONCURRENCY
    assert [o.error for o in summary.outcomes] == ["HTTP 503 Service Unavailable"] * len(hanging)
    assert len(server.paths) == POLL_CONCURRENCY + 2


async def test_feed_allow_cross_host_redirects_reaches_the_poll(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    async with FeedServer() as server:
        server.serve(
            "/feed.json",
            Served(
                body=json_feed_body([{"id": "urn:1", "title": "One"}]),
                content_type="application/feed+json",
            ),
        )
        # 127.0.0.1 -> localhost: another host name, both internal.
        moved = server.redirect(
            "/old", server.base_url.replace("127.0.0.1", "localhost") + "/feed.json"
        )
        env = dict(
            clean_env,
            WIKI_SOURCES=moved,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
        )
        refused = await asyncio.to_thread(run_cli, "poll", env=env, cwd=tmp_path)
        allowed = await asyncio.to_thread(
            run_cli, "poll", env=dict(env, FEED_ALLOW_CROSS_HOST_REDIRECTS="true"), cwd=tmp_path
        )
        bad = await asyncio.to_thread(
            run_cli, "poll", env=dict(env, FEED_ALLOW_CROSS_HOST_REDIRECTS="maybe"), cwd=tmp_path
        )
    assert refused.returncode == 1
    assert "redirect to another host (localhost) refused" in refused.stderr
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip().splitlines()[-1].startswith("1 new")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "configuration error: FEED_ALLOW_CROSS_HOST_REDIRECTS: must be a valid boolean, "
        "unable to interpret input"
    ]
