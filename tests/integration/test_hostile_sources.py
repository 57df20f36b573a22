"""Hostile sources beyond the corpus: text no column can hold, and a wiki whose files are
swapped under the scanner (a symlink out of the wiki, a FIFO) between its walk and its read.

Every case goes through a real poll (``Poller.poll`` on SQLite and PostgreSQL, or the
``trendbot poll`` and ``trendbot run`` commands). The races are made deterministic without
touching the scanner: the scanner logs a warning for a too-long path after its walk and
before any read, and a handler on that logger swaps the file at that moment, in the
scanning thread, so the read always finds the swapped file.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import feedparser
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.sources import directory
from bot.sources.bounds import MAX_PATH_CHARS
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store.engine import create_engine, upgrade
from bot.store.schema import page_texts, pages, sources
from tests.cli import run_cli, start_cli
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_destinations import TG_TOKEN, TG_USER, feed_path, running
from tests.integration.test_hostile import (
    GOOD_PAGE,
    HOSTILE,
    content,
    no_traceback,
    serving,
)
from tests.integration.test_ops import wait_healthy
from tests.ports import free_port
from tests.unit.test_feeds import check_atom
from tests.waiting import wait_until

ATOM = "{http://www.w3.org/2005/Atom}"
SECRET = "---\ntitle: Outside secret\n---\n\n## TL;DR\n\nroot:x:0:0 must never be read.\n"


async def titles(engine: AsyncEngine) -> dict[str, str]:
    """Every recorded page's key and first title."""
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                select(pages.c.key, page_texts.c.title).join(
                    page_texts, page_texts.c.page_id == pages.c.id
                )
            )
        ).all()
    return {str(key): str(title) for key, title in rows}


def poller(engine: AsyncEngine, source: str, http: httpx.AsyncClient | None = None) -> Poller:
    return Poller(
        engine=engine,
        sources=[source],
        base_url=None,
        default_lang="en",
        http=http or make_feed_client(),
    )


# --- 8. text no column can hold ------------------------------------------------------------


@pytest.mark.parametrize("name", ["keep-lone-surrogates.json", "keep-lone-surrogates.xml"])
async def test_a_lone_surrogate_costs_one_character_not_the_feed(
    name: str, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    path = HOSTILE / "feeds" / name
    url = f"https://feeds.example.org/{name}"
    with caplog.at_level(logging.INFO):
        summary = await poller(engine, url, make_feed_client(transport=serving(path))).poll()
    no_traceback(caplog)
    (outcome,) = summary.outcomes
    assert outcome.error is None
    recorded = await titles(engine)
    assert recorded["urn:good"] == "A good entry"
    if name.endswith(".json"):
        assert recorded["urn:bad-title"] == "bad \ufffd entry"
        assert "urn:bad-\ufffd-id" in recorded
        assert recorded["urn:nul"] == "nul \ufffd title"
        assert recorded["urn:pair"] == "a real pair \U0001f600 stays"
    else:
        assert recorded["urn:bad-\ufffd"] == "bad \ufffd entry"


def _write_named(folder: Path, name: bytes, data: bytes) -> None:
    with open(os.path.join(os.fsencode(folder), name), "wb") as file:
        file.write(data)


async def test_a_file_name_that_is_not_utf8_is_skipped_alone(
    engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "good.md").write_text(GOOD_PAGE)
    _write_named(wiki, b"bad-\xff-name.md", GOOD_PAGE.encode())
    with caplog.at_level(logging.INFO):
        first = await poller(engine, str(wiki)).poll()
    no_traceback(caplog)
    assert [o.error for o in first.outcomes] == [None]
    assert (first.new, first.skipped) == (1, 1)
    assert set(await titles(engine)) == {"good"}
    lines = [r.getMessage() for r in caplog.records if "not valid UTF-8" in r.getMessage()]
    assert lines == [f"{wiki}: skipped bad-\ufffd-name.md: file name is not valid UTF-8"]


_ANY_CHARACTER = st.characters(exclude_categories=())  # lone surrogates and NUL included
_HOSTILE_TEXT = st.text(_ANY_CHARACTER, max_size=20) | st.sampled_from(
    ["\ud800", "bad \udfff entry", "\x00", "\ud83d\ude00", "&#xD800;", "\u202e", "\x1b[31m"]
)
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_HOSTILE_TEXT, inner, max_size=3),
    max_leaves=12,
)
_ITEM_FIELDS = st.sampled_from(
    [
        "id",
        "url",
        "title",
        "summary",
        "content_text",
        "content_html",
        "tags",
        "language",
        "date_published",
        "date_modified",
    ]
)
_GOOD_ITEM = {"id": "urn:good", "title": "A good entry", "summary": "Kept."}


class _Backend:
    """One migrated database for every example of a property, each example polling a new
    source (a new feed URL, a new wiki directory) so that examples do not meet."""

    def __init__(self, database_url: str, tmp_path: Path) -> None:
        self.url = database_url
        self.tmp_path = tmp_path
        self.migrated = False
        self.counter = itertools.count()

    async def poll(self, source: str, http: httpx.AsyncClient | None = None) -> dict[str, str]:
        engine = create_engine(self.url)
        try:
            if not self.migrated:
                await upgrade(engine)
                self.migrated = True
            summary = await poller(engine, source, http).poll()
            (outcome,) = summary.outcomes
            assert outcome.error is None, outcome.error
            async with engine.connect() as conn:
                rows = (
                    await conn.execute(
                        select(pages.c.key, page_texts.c.title)
                        .join(page_texts, page_texts.c.page_id == pages.c.id)
                        .where(pages.c.key.in_(["urn:good", "good"]))
                    )
                ).all()
            return {str(key): str(title) for key, title in rows}
        finally:
            await engine.dispose()


@pytest.fixture
def backend(database_url: str, tmp_path: Path) -> _Backend:
    return _Backend(database_url, tmp_path)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    items=st.lists(st.dictionaries(_ITEM_FIELDS, _JSON_VALUES, max_size=6), max_size=4),
    feed_fields=st.dictionaries(st.sampled_from(["language", "title"]), _JSON_VALUES),
)
def test_any_json_in_any_field_of_an_entry_never_fails_the_feed(
    backend: _Backend, items: list[dict[str, object]], feed_fields: dict[str, object]
) -> None:
    document = {"version": "https://jsonfeed.org/version/1.1", **feed_fields}
    document["items"] = [_GOOD_ITEM, *items]
    # ensure_ascii writes a lone surrogate as its escape, as a hostile server would.
    body = json.dumps(document, ensure_ascii=True).encode()
    transport = httpx.MockTransport(
        lambda request: httpx.Response(
            200, content=body, headers={"Content-Type": "application/feed+json"}
        )
    )
    url = f"https://feeds.example.org/{next(backend.counter)}.json"

    async def check() -> None:
        async with make_feed_client(transport=transport) as http:
            recorded = await backend.poll(url, http)
        assert "urn:good" in recorded  # the good entry is never lost with a bad one

    asyncio.run(check())


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=400)
    | st.builds(
        lambda front, body: ("---\n" + front + "\n---\n\n" + body).encode("utf-8", "surrogatepass"),
        st.text(_ANY_CHARACTER, max_size=80) | st.just('title: "nul \\0 and \\x00"'),
        st.text(_ANY_CHARACTER, max_size=80),
    )
)
def test_any_bytes_in_a_page_file_never_fail_the_wiki(backend: _Backend, data: bytes) -> None:
    wiki = backend.tmp_path / f"wiki-{next(backend.counter)}"
    wiki.mkdir()
    (wiki / "good.md").write_text(GOOD_PAGE)
    (wiki / "hostile.md").write_bytes(data)

    async def check() -> None:
        recorded = await backend.poll(str(wiki))
        assert recorded == {"good": "Good"}

    asyncio.run(check())


# --- 9 and 10. files swapped between the walk and the read ------------------------------------


class _SwapAfterWalk(logging.Handler):
    """Runs ``swap`` when the scanner logs the too-long path: after its walk, before reads."""

    def __init__(self, swap: object) -> None:
        super().__init__()
        self.swap = swap
        self.swapped = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "path longer than" in record.getMessage() and not self.swapped:
            self.swapped += 1
            self.swap()  # type: ignore[operator]


def _too_long_path(wiki: Path) -> None:
    """A page file whose path is past MAX_PATH_CHARS: the scanner skips it with a warning."""
    folder = wiki
    while len(str(folder.relative_to(wiki))) < MAX_PATH_CHARS:
        folder = folder / ("d" * 200)
    folder.mkdir(parents=True)
    (folder / "long.md").write_text(GOOD_PAGE)


@pytest.fixture
def swapped_wiki(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """``(wiki, outside)``: a wiki with a good page, and a secret page outside it."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    outside = tmp_path / "outside" / "secret.md"
    outside.parent.mkdir()
    outside.write_text(SECRET)
    (wiki / "good.md").write_text(GOOD_PAGE)
    _too_long_path(wiki)
    yield wiki, outside


def _make_victims(wiki: Path, count: int) -> list[Path]:
    """``count`` ordinary pages; with many, the scanner reads them in its threads."""
    victims = []
    for n in range(count):
        victim = wiki / f"v{n:03}.md"
        victim.write_text(GOOD_PAGE.replace("Good", f"Victim {n}"))
        victims.append(victim)
    return victims


def _to_symlink(victims: list[Path], target: Path) -> None:
    for victim in victims:
        victim.unlink()
        victim.symlink_to(target)


def _to_fifo(victims: list[Path]) -> None:
    for victim in victims:
        victim.unlink()
        os.mkfifo(victim)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["symlink-out", "fifo"])
@pytest.mark.parametrize("count", [1, directory.READ_THREADS_FROM + 2], ids=["inline", "threads"])
async def test_a_file_swapped_between_walk_and_read_is_skipped_never_read(
    kind: str,
    count: int,
    engine: AsyncEngine,
    swapped_wiki: tuple[Path, Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    wiki, outside = swapped_wiki
    victims = _make_victims(wiki, count)
    hook = _SwapAfterWalk(
        lambda: _to_symlink(victims, outside) if kind == "symlink-out" else _to_fifo(victims)
    )
    scanner_log = logging.getLogger("bot.sources")
    scanner_log.addHandler(hook)
    try:
        with caplog.at_level(logging.INFO):
            summary = await asyncio.wait_for(poller(engine, str(wiki)).poll(), 30)
    finally:
        scanner_log.removeHandler(hook)
    assert hook.swapped == 1
    no_traceback(caplog)
    (outcome,) = summary.outcomes
    assert outcome.error is None
    recorded = await titles(engine)
    assert recorded == {"good": "Good"}  # the swapped files, never the outside secret
    assert outcome.skipped == count + 1  # each swapped file, and the too-long path
    reason = (
        "file replaced while the wiki was scanned"
        if kind == "symlink-out"
        else ("not a regular file")
    )
    lines = [r.getMessage() for r in caplog.records if r.getMessage().endswith(reason)]
    assert len(lines) == count


async def test_a_cancelled_poll_stops_its_scan_before_the_next_read(
    engine: AsyncEngine, swapped_wiki: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """Shutdown cancels a poll; its scan thread must not go on reading the wiki."""
    wiki, _ = swapped_wiki
    (wiki / "broken.md").write_text("---\ntitle: [unclosed\n---\n")
    walked, cancelled = threading.Event(), threading.Event()

    def hold() -> None:  # in the scan thread, after the walk: wait until the poll is gone
        walked.set()
        assert cancelled.wait(30)

    hook = _SwapAfterWalk(hold)
    scanner_log = logging.getLogger("bot.sources")
    scanner_log.addHandler(hook)
    try:
        with caplog.at_level(logging.INFO):
            task = asyncio.create_task(poller(engine, str(wiki)).poll())
            assert await asyncio.to_thread(walked.wait, 30)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            cancelled.set()
            await wait_until(
                lambda: any("scan stopped" in r.getMessage() for r in caplog.records),
                what="the scan's stop logged",
            )
    finally:
        scanner_log.removeHandler(hook)
    assert [r.getMessage() for r in caplog.records if "scan stopped" in r.getMessage()] == [
        f"{wiki}: scan stopped: its poll was cancelled or ran out of time"
    ]
    assert not [r for r in caplog.records if "broken.md" in r.getMessage()]  # never read


@pytest.fixture
def wiki_with_specials(tmp_path: Path) -> Path:
    """A wiki holding, before any scan, a FIFO, a symlink out of it and one inside it."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "good.md").write_text(GOOD_PAGE)
    (wiki / "alias.md").symlink_to(wiki / "good.md")  # inside: read, as it always was
    outside = tmp_path / "outside.md"
    outside.write_text(SECRET)
    (wiki / "escape.md").symlink_to(outside)
    os.mkfifo(wiki / "pipe.md")
    os.mkfifo(tmp_path / "outside-pipe.md")
    (wiki / "pipe-link.md").symlink_to(tmp_path / "outside-pipe.md")
    return wiki


def test_trendbot_poll_passes_over_fifos_and_outside_symlinks(
    wiki_with_specials: Path, clean_env: dict[str, str], tmp_path: Path
) -> None:
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
        WIKI_SOURCES=str(wiki_with_specials),
    )
    result = run_cli("poll", env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "2 new, 0 updated, 0 skipped" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "Outside secret" not in result.stdout + result.stderr


@pytest.mark.slow
async def test_trendbot_run_with_a_fifo_in_the_wiki_answers_and_stops(
    wiki_with_specials: Path, clean_env: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
        WIKI_SOURCES=str(wiki_with_specials),
        HTTP_PORT=str(port),
    )
    log = tmp_path / "run.log"
    process = start_cli(env=env, cwd=tmp_path, out=log, err=log)
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            await wait_healthy(client, f"http://127.0.0.1:{port}/healthz", process)

            async def polled() -> bool:  # /healthz answers all along the first poll
                health = await client.get(f"http://127.0.0.1:{port}/healthz")
                assert health.status_code == 200
                return "poll finished" in log.read_text()

            await wait_until(polled, interval=0.2, what="the first poll finished")
        process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(process.wait, 30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    assert "poll finished: 2 new" in text
    assert "Traceback" not in text


# --- 11. the private feed gets the chats' rules --------------------------------------------

# What bot.i18n.clean removes: bidi controls and invisible zero-width characters.
_SPOOFING = frozenset("\u200b\u2060\ufeff\u061c\u200e\u200f") | frozenset(
    chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
)


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TG_TOKEN, long_poll_cap=0.2) as server:
        yield server


def keep_cases() -> list[object]:
    return [
        pytest.param(path, id=f"{path.parent.name}/{path.name}")
        for folder in ("feeds", "pages")
        for path in sorted((HOSTILE / folder).iterdir())
        if path.name.startswith("keep-")
    ]


@pytest.mark.parametrize("path", keep_cases())
async def test_the_private_feed_of_a_hostile_source_has_only_safe_links_and_text(
    path: Path, engine: AsyncEngine, tg: FakeTelegram, tmp_path: Path
) -> None:
    if path.parent.name == "feeds":
        url = f"https://feeds.example.org/{path.name}"
        http = make_feed_client(transport=serving(path))
        summary = await poller(engine, url, http).poll()
    else:
        wiki = tmp_path / "wiki"
        wiki.mkdir()
        name = path.name.removesuffix(".gz")
        (wiki / name).write_bytes(content(path))
        summary = await poller(engine, str(wiki)).poll()
    assert [o.error for o in summary.outcomes] == [None]
    async with running(engine, tg=tg) as bot:
        await bot.say(TG_USER, "/subscribe *")
        status, _, body = await bot.get(feed_path(await bot.say(TG_USER, "/feed")))
    assert status == 200
    root = check_atom(body)
    assert len(root.findall(f"{ATOM}entry")) >= 1
    for link in root.iter(f"{ATOM}link"):
        assert link.get("href", "").startswith(("http://", "https://")), link.get("href")
        assert not any(ord(ch) < 32 for ch in link.get("href", ""))
    text = body.decode("utf-8")
    assert not _SPOOFING & set(text), sorted(f"U+{ord(c):04X}" for c in _SPOOFING & set(text))
    assert "javascript:" not in text.lower() and "tg://" not in text


async def test_a_javascript_or_tg_link_is_no_href_and_the_entry_has_content(
    engine: AsyncEngine, tg: FakeTelegram
) -> None:
    path = HOSTILE / "feeds" / "keep-hostile-links.json"
    http = make_feed_client(transport=serving(path))
    await poller(engine, "https://feeds.example.org/links.json", http).poll()
    async with running(engine, tg=tg) as bot:
        await bot.say(TG_USER, "/subscribe *")
        _, _, body = await bot.get(feed_path(await bot.say(TG_USER, "/feed")))
    root = check_atom(body)
    entries = root.findall(f"{ATOM}entry")
    assert len(entries) == 6
    hrefs = [link.get("href") for e in entries for link in e.findall(f"{ATOM}link")]
    assert hrefs == ["https://example.org/good?a=1&b=%222%22"]
    titles = {e.findtext(f"{ATOM}title") for e in entries}
    assert {"Click me gnp.exe", "Telegram link"} <= titles
    for entry in entries:  # RFC 4287 4.1.2: no alternate link, so content
        assert entry.find(f"{ATOM}link") is not None or entry.find(f"{ATOM}content") is not None
    assert len(feedparser.parse(body).entries) == 6


# --- relative links and ids under a credentialed feed URL ---------------------------------

RELATIVE_CASES = sorted((HOSTILE / "feeds").glob("keep-relative-links*"))
FEED_PASSWORD = "hostilePassw0rd"
FEED_TOKEN = "hostileT0kenValue"


@pytest.mark.parametrize("path", RELATIVE_CASES, ids=[p.name for p in RELATIVE_CASES])
async def test_relative_links_of_a_credentialed_feed_resolve_against_its_public_url(
    path: Path, engine: AsyncEngine, tg: FakeTelegram
) -> None:
    """Served from ``https://reader:PASSWORD@feeds.example.org/NAME?token=TOKEN``: every
    link and key resolves against ``https://feeds.example.org/NAME``; a link that is the
    feed itself is dropped; neither the store nor the private feed holds a credential."""
    public = f"https://feeds.example.org/{path.name}"
    configured = f"https://reader:{FEED_PASSWORD}@feeds.example.org/{path.name}?token={FEED_TOKEN}"
    summary = await poller(engine, configured, make_feed_client(transport=serving(path))).poll()
    assert [o.error for o in summary.outcomes] == [None]
    async with engine.connect() as conn:
        rows = (await conn.execute(select(pages.c.key, pages.c.url, pages.c.paper))).all()
        names = (await conn.execute(select(sources.c.name))).scalars().all()
    assert names == [public]
    stored = "\n".join(str(value) for row in rows for value in row)
    for secret in (FEED_PASSWORD, FEED_TOKEN, "hunter2", "pw9999", "reader:"):
        assert secret not in stored
    links = {str(url) for _, url, _ in rows if url is not None}
    assert public not in links  # <link href=""/> names the feed, not a page
    base = public.rsplit("/", 1)[0]
    for url in links:
        assert url.startswith(("https://feeds.example.org/", "https://example.net/")), url
        assert "@" not in url.split("/", 3)[2], url
    if path.name == "keep-relative-links.xml":
        assert {key for key, _, _ in rows} >= {
            f"{base}/papers/rel-id-1",
            "tag:example.org,2026:2",
            f"{base}/papers/rel3?page=2",
            f"{base}/sub/rel-under-base",
        }
        assert f"{public}?page=4" in links and "https://example.net/x" in links
    async with running(engine, tg=tg) as bot:
        await bot.say(TG_USER, "/subscribe *")
        _, _, body = await bot.get(feed_path(await bot.say(TG_USER, "/feed")))
        latest = await bot.say(TG_USER, "/latest 20")
    text = body.decode("utf-8") + latest
    assert f"{base}/" in text or "example.net" in text
    for secret in (FEED_PASSWORD, FEED_TOKEN, "hunter2", "pw9999"):
        assert secret not in text


# --- 12. log lines cannot be forged -------------------------------------------------------

FORGED = "\n2026-12-05 12:00:00,000 CRITICAL bot.security: FAKE line\x1b[2J\r\x85\u2028"


def test_a_wiki_file_name_cannot_forge_a_text_log_line(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "good.md").write_text(GOOD_PAGE)
    (wiki / f"bad{FORGED}.md").write_text("---\ntitle: [unclosed\n---\n")
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
        WIKI_SOURCES=str(wiki),
        LOG_FORMAT="text",
    )
    result = run_cli("poll", env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert "\x1b" not in output and "\r" not in output and "\x85" not in output
    assert "\u2028" not in output
    (line,) = [line for line in output.split("\n") if "FAKE line" in line]
    assert line.startswith("20") and " WARNING bot.sources: " in line
    assert "skipped bad\\n2026-12-05 12:00:00,000 CRITICAL bot.security: FAKE line\\x1b[2J" in line
    assert not any(line.startswith("2026-12-05 12:00:00") for line in output.split("\n"))


def test_a_wiki_file_name_keeps_a_json_log_valid_one_record_a_line(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / f"bad{FORGED}.md").write_text("---\ntitle: [unclosed\n---\n")
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
        WIKI_SOURCES=str(wiki),
        LOG_FORMAT="json",
    )
    result = run_cli("poll", env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stderr.splitlines() if line]
    (skipped,) = [r for r in records if "FAKE line" in r["event"]]
    assert f"skipped bad{FORGED}.md" in skipped["event"]  # the name, exactly, once parsed


def test_an_exception_message_is_escaped_and_its_traceback_keeps_its_lines() -> None:
    """What a logged exception shows in the text format: frames on their own lines, the
    message (which may come from outside) escaped, and secrets still redacted."""
    import io

    from bot import logs

    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    logs.configure(level="INFO", fmt="text", secrets=["s3cret-value"], stream=stream)
    try:
        try:
            raise KeyError("inner")
        except KeyError as exc:
            raise ValueError(f"bad{FORGED} s3cret-value") from exc
    except ValueError:
        logging.getLogger("bot.poll").exception("source failed: %s", f"x{FORGED}")
    finally:
        root.handlers[:], root.level = saved
    lines = stream.getvalue().rstrip("\n").split("\n")
    assert lines[0].endswith(
        "ERROR   bot.poll: source failed: x\\n2026-12-05 12:00:00,000 "
        "CRITICAL bot.security: FAKE line\\x1b[2J\\r\\x85\\u2028"
    )
    assert lines[1] == "Traceback (most recent call last):"
    assert lines[-1] == (
        "ValueError: bad\\n2026-12-05 12:00:00,000 CRITICAL bot.security: FAKE line"
        "\\x1b[2J\\r\\x85\\u2028 [redacted]"
    )
    assert "The above exception was the direct cause of the following exception:" in lines
    assert all(not line.startswith("2026-12-05 12:00:00") for line in lines)
    assert "\x1b" not in stream.getvalue()
