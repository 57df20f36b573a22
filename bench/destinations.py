"""Destinations benchmark: what one private feed request and one incident check cost.

A wiki of ``--pages`` pages (one in ten tagged ``rl``) is recorded, and ``--sent`` sent
messages (one a second, going back in time) are put in the outbox. Then, five times each:

- a feed whose filter matches one page in ten (``rl``): the 50 newest, read and rendered;
- a feed whose filter matches nothing: every page is read to find that out;
- an incident check's observation (``bot.store.alerts.observe``), which the leader of
  ``trendbot run`` makes every minute.

    .venv/bin/python bench/destinations.py [--pages 10000] [--sent 200000] [--database-url URL]

``--database-url`` takes a PostgreSQL URL of an existing database: a scratch database
``trendbot_bench_<random>`` is created beside it and dropped after. Without it, SQLite in
a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import time
from collections.abc import Awaitable, Callable

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.models import Page, PageText
from bot.render import atom as feeds
from bot.rules import filters
from bot.store import alerts as alert_store
from bot.store import feeds as feed_store
from bot.store import pages as page_store
from bot.store.engine import create_engine, upgrade
from bot.store.schema import outbox
from tests.scratch import scratch_database

ROUNDS = 5


async def seed(engine: AsyncEngine, *, pages: int, sent: int) -> None:
    found = [
        Page(
            source="wiki",
            key=f"papers/2026/p{i}",
            texts=(PageText("en", f"Title {i}", "A finding. " * 30),),
            tags=("rl" if i % 10 == 0 else "vision", "agents"),
            url=f"https://wiki.example.com/p{i}",
            updated=dt.date(2026, 1, 1) + dt.timedelta(days=i % 300),
        )
        for i in range(pages)
    ]
    now = page_store.utcnow()
    async with engine.begin() as conn:
        source = await page_store.source(conn, name="wiki", kind="feed")
        await page_store.record_pages(conn, source=source, found=found, present_keys=None, now=now)
        await conn.execute(
            text(
                "INSERT INTO chats (platform, chat_id, kind, state, mode, digest_time, timezone,"
                " lang, filter, cursor, created_at, updated_at)"
                " VALUES ('telegram', '1', 'private', 'active', 'daily', '09:00', 'UTC', 'en',"
                " 'rl', 0, :now, :now)"
            ),
            {"now": now},
        )
        rows = [
            {
                "chat_pk": 1,
                "platform": "telegram",
                "kind": "digest",
                "payload": "{}",
                "status": "sent",
                "priority": 10,
                "attempts": 0,
                "parts_sent": 1,
                "not_before": now - dt.timedelta(seconds=i),
                "created_at": now - dt.timedelta(seconds=i),
                "sent_at": now - dt.timedelta(seconds=i),
            }
            for i in range(sent)
        ]
        for start in range(0, len(rows), 10_000):
            await conn.execute(outbox.insert(), rows[start : start + 10_000])
    async with engine.begin() as conn:
        await conn.execute(text("ANALYZE"))  # the planner's statistics, as a live store has


async def timed(label: str, run: Callable[[], Awaitable[str]]) -> None:
    samples = []
    detail = ""
    for _ in range(ROUNDS):
        started = time.perf_counter()
        detail = await run()
        samples.append(time.perf_counter() - started)
    samples.sort()
    print(f"{label}: median {samples[ROUNDS // 2] * 1000:.0f} ms ({detail})")


async def measure(engine: AsyncEngine, *, pages: int, sent: int) -> None:
    await upgrade(engine)
    started = time.perf_counter()
    await seed(engine, pages=pages, sent=sent)
    print(f"seeded {pages} pages and {sent} sent messages in {time.perf_counter() - started:.1f} s")

    def feed(expression: str) -> Callable[[], Awaitable[str]]:
        chat_filter = filters.parse_filter(expression)

        async def run() -> str:
            async with engine.connect() as conn:
                entries = await feed_store.entries(conn, chat_filter)
            body = feeds.render(
                feeds.Feed(
                    feed_id=feeds.feed_id("0" * 64),
                    title="AI trends",
                    author="AI Trend Notifier",
                    self_url="https://bot.example.com/feeds/x.atom",
                    lang="en",
                    updated=dt.datetime(2026, 1, 1),
                    entries=tuple(entries),
                )
            )
            return f"{len(entries)} entries, {len(body)} bytes"

        return run

    async def observe() -> str:
        async with engine.connect() as conn:
            seen = await alert_store.observe(
                conn, sources=["wiki"], now=page_store.utcnow(), window=dt.timedelta(minutes=15)
            )
        return f"{seen.sends['telegram'].sent} sends in the window"

    await timed("feed, 1 page in 10 matches", feed("rl"))
    await timed("feed, nothing matches", feed("robotics"))
    await timed("incident check", observe)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--sent", type=int, default=200_000)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    async with scratch_database(args.database_url, prefix="trendbot_bench") as url:
        engine = create_engine(url)
        try:
            await measure(engine, pages=args.pages, sent=args.sent)
        finally:
            await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main())
