"""Claim benchmark: how long the delivery engine takes to claim a batch with many messages
queued (a digest to every chat of a large community, a broadcast).

``--queued`` chats (1,000,000), each with one queued message of one of three priorities,
seeded in bulk with ``queueing.insert_many``, on SQLite and, with ``--database-url``, on
PostgreSQL (a scratch database, dropped afterwards). Then ``--claims`` claims (7) of
``--batch`` rows (500) through ``bot.store.outbox.claim``, as the engine makes them, each
in a transaction rolled back so that every claim sees the same queue. Prints the median
and the slowest claim. Seeding is not measured.

    .venv/bin/python bench/claims.py [--queued 1000000] [--batch 500] [--claims 7]
        [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot import payloads
from bot.store import outbox, queueing
from bot.store.engine import create_engine, upgrade
from bot.store.schema import chats
from bot.store.schema import outbox as outbox_table
from bot.util import utcnow
from tests import scratch


async def seed(url: str, queued: int) -> None:
    engine = create_engine(url)
    await upgrade(engine)
    now = utcnow()
    notice = payloads.encode(payloads.Notice(text="A notice to every chat"))
    async with engine.begin() as conn:
        await queueing.insert_many(
            conn,
            chats,
            ("id", "chat_id"),
            [(pk, str(pk)) for pk in range(1, queued + 1)],
            same={
                "platform": "telegram",
                "kind": "private",
                "state": "active",
                "mode": "daily",
                "digest_time": "09:00",
                "timezone": "UTC",
                "lang": "en",
                "filter": "",
                "cursor": 0,
                "created_at": now,
                "updated_at": now,
                "weekday": 0,
            },
        )
        await queueing.insert_many(
            conn,
            outbox_table,
            ("chat_pk", "priority"),
            [(pk, 5 * (pk % 3)) for pk in range(1, queued + 1)],
            same={
                "platform": "telegram",
                "kind": payloads.NOTICE,
                "payload": notice,
                "status": outbox.QUEUED,
                "attempts": 0,
                "parts_sent": 0,
                "not_before": now,
                "created_at": now,
            },
        )
    await engine.dispose()


async def time_claims(url: str, *, batch: int, claims: int) -> list[float]:
    engine = create_engine(url)
    times = []
    try:
        for _ in range(claims):
            async with engine.connect() as conn:
                transaction = await conn.begin()
                started = time.perf_counter()
                rows = await outbox.claim(
                    conn, worker="bench", limit=batch, now=utcnow(), platforms=["telegram"]
                )
                times.append(time.perf_counter() - started)
                await transaction.rollback()
            if len(rows) != batch:
                raise SystemExit(f"a claim took {len(rows)} rows, not {batch}")
    finally:
        await engine.dispose()
    return times


async def measure(args: argparse.Namespace) -> None:
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average "
        + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    stores: list[tuple[str, str]] = []
    tmp = tempfile.TemporaryDirectory(prefix="claims-")
    stores.append(("sqlite", f"sqlite+aiosqlite:///{tmp.name}/claims.db"))
    created = None
    if args.database_url:
        created = await scratch.create_database(args.database_url, prefix="claims")
        stores.append(("postgresql", created))
    try:
        for name, url in stores:
            print(f"[{name}] seeding {args.queued:,} queued messages ...", file=sys.stderr)
            await seed(url, args.queued)
            times = await time_claims(url, batch=args.batch, claims=args.claims)
            print(
                f"{name:<10}  {args.queued:>9,} queued  claim of {args.batch}: "
                f"median {statistics.median(times) * 1000:8.1f} ms, "
                f"slowest {max(times) * 1000:8.1f} ms ({args.claims} claims)"
            )
    finally:
        if created is not None:
            await scratch.drop_database(created, base_url=args.database_url)
        tmp.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queued", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--claims", type=int, default=7)
    parser.add_argument("--database-url", default=None)
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
