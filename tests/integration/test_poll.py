"""Polling a directory wiki and a feed into the store, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.poll import Poller
from bot.sources.feed import make_feed_client
from bot.store import pages as page_store
from bot.store.schema import page_events, pages, sources
from tests.conftest import ROOT


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
        assert await page_store.page_count(conn) == 1
        assert await page_store.tag_counts(conn) == [("rl", 1)]


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


async def test_backfill_queues_recent_pages(engine: AsyncEngine, tmp_path: Path) -> None:
    write(tmp_path, *page("papers/2026/recent", updated="2026-11-20"))
    write(tmp_path, *page("papers/2026/old", updated="2025-01-01"))
    poller = await make_poller(engine, str(tmp_path))
    summary = await poller.poll(backfill_days=30, today=dt.date(2026, 12, 1))
    assert summary.line() == "2 new, 0 updated, 0 skipped (backfill: 1 notifications queued)"
    assert await event_count(engine) == 1


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
        assert dict(await page_store.tag_counts(conn)) == {"rl": 1, "reasoning": 1}
        row = (await conn.execute(select(sources.c.etag))).scalar_one()
    assert row == '"v1"'


def run_cli(args: list[str], *, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_poll_command_on_the_sample_wiki(
    clean_env: dict[str, str], tmp_path: Path, database_url: str
) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = dict(clean_env, DATABASE_URL=database_url)
    first = run_cli(["poll"], env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    last = first.stdout.strip().splitlines()[-1]
    assert last.endswith("new, 0 updated, 0 skipped (baseline: nothing queued)")
    assert int(last.split()[0]) >= 12
    second = run_cli(["poll"], env=env, cwd=tmp_path)
    assert second.stdout.strip().splitlines()[-1] == "0 new, 0 updated, 0 skipped"
    backfill = run_cli(["poll", "--backfill", "3650"], env=env, cwd=tmp_path)
    assert backfill.stdout.strip().splitlines()[-1] == (
        f"0 new, 0 updated, 0 skipped (backfill: {last.split()[0]} notifications queued)"
    )
    # What the first backfill queued is not queued again.
    again = run_cli(["poll", "--backfill", "3650"], env=env, cwd=tmp_path)
    assert again.stdout.strip().splitlines()[-1] == (
        "0 new, 0 updated, 0 skipped (backfill: 0 notifications queued)"
    )


def test_poll_command_fails_when_every_source_fails(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    env = dict(clean_env, WIKI_SOURCES=str(tmp_path / "nowhere"))
    result = run_cli(["poll"], env=env, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.strip().splitlines()[-1] == "0 new, 0 updated, 0 skipped"
    assert "nowhere" in result.stderr and "Traceback" not in result.stderr


def test_poll_rejects_a_bad_backfill(clean_env: dict[str, str], tmp_path: Path) -> None:
    result = run_cli(["poll", "--backfill", "soon"], env=clean_env, cwd=tmp_path)
    assert result.returncode == 2
    assert "whole number of days" in result.stderr
