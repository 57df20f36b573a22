"""Replica benchmark: throughput of 1, 2 and 3 ``trendbot run`` replicas on PostgreSQL.

A local Bot API server (in its own process) enforces the flood limits with the cap set to
600 messages a second and adds 100 ms of latency to every request; each run sends one
broadcast message to each of N chats. For each replica count it reports the achieved rate
as a fraction of the cap (measured between 5 % and 95 % of the messages received, so
start-up is not counted), the limit violations the server saw, and the replicas' CPU time
per message.

    .venv/bin/python bench/replicas.py [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]
        [--messages 9000] [--cap 600] [--replicas 1,2,3]

With ``--cap`` over 30 the replicas send paid broadcasts (``TELEGRAM_PAID_BROADCAST``): the
server holds them to ``--paid-rate`` = the cap, and free sends to the same cap.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import insert, select, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.store import admin as admin_store  # noqa: E402
from bot.store.engine import create_engine, upgrade  # noqa: E402
from bot.store.schema import chat_tags, chats  # noqa: E402
from bot.util import utcnow  # noqa: E402
from tests import scratch  # noqa: E402

TOKEN = "123456789:AAHbenchTokenForReplicas_0123456789abcdef"
LATENCY = 0.1


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


async def queue_broadcast(url: str, *, chats_count: int, start: int) -> None:
    engine = create_engine(url)
    await upgrade(engine)
    now = utcnow()
    ids = [str(start + i) for i in range(chats_count)]
    async with engine.begin() as conn:
        for offset in range(0, chats_count, 2000):
            await conn.execute(
                insert(chats),
                [
                    {
                        "platform": "telegram",
                        "chat_id": chat_id,
                        "kind": "private",
                        "state": "active",
                        "mode": "daily",
                        "digest_time": "09:00",
                        "timezone": "UTC",
                        "lang": "en",
                        "filter": "bench",
                        "cursor": 0,
                        "next_digest_at": now,
                        "created_at": now,
                        "updated_at": now,
                    }
                    for chat_id in ids[offset : offset + 2000]
                ],
            )
        rows = await conn.execute(select(chats.c.id).where(chats.c.filter == "bench"))
        pks = [pk for (pk,) in rows]
        for offset in range(0, len(pks), 2000):
            await conn.execute(
                insert(chat_tags),
                [
                    {"chat_pk": pk, "tag": "bench", "kind": "any"}
                    for pk in pks[offset : offset + 2000]
                ],
            )
        await admin_store.broadcast_now(
            conn,
            text="Benchmark",
            audience=admin_store.Audience(tags=("bench",)),
            created_by="bench",
        )
        # The chats are done with: the next run gets its own.
        await conn.execute(text("UPDATE chats SET filter = 'done' WHERE filter = 'bench'"))
        await conn.execute(text("DELETE FROM chat_tags WHERE tag = 'bench'"))
    await engine.dispose()


async def run_once(
    *, replicas: int, url: str, messages: int, cap: int, fake: dict[str, Any], start: int
) -> dict[str, Any]:
    stats_url = f"http://127.0.0.1:{fake['port']}/_stats"
    async with httpx.AsyncClient(timeout=10) as client:
        before = (await client.get(stats_url)).json()
        base_delivered = before["delivered"]
        base_violations = before["limit_violations"]
        base_limited = before["rate_limited"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SLACK_"))}
        env.update(
            DATABASE_URL=url,
            WIKI_SOURCES=tempfile.mkdtemp(prefix="trendbot-bench-wiki-"),
            POLL_INTERVAL_SECONDS="3600",
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_API_BASE_URL=fake["base_url"],
            TELEGRAM_RATE_PER_SECOND=str(cap),
            TELEGRAM_PAID_BROADCAST="true",  # over 30 a second
            HTTP_PORT="0",
            LOG_LEVEL="WARNING",
            PTB_TIMEDELTA="true",
        )
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "bot", "run"],
                env=env,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(replicas)
        ]
        await asyncio.sleep(4.0)  # start-up, leases: every replica knows its share
        cpu_before = sum(cpu_seconds(p.pid) for p in processes)
        await queue_broadcast(url, chats_count=messages, start=start)
        marks: dict[str, float] = {}
        deadline = time.monotonic() + messages / cap * 6 + 60
        while time.monotonic() < deadline:
            got = (await client.get(stats_url)).json()["delivered"] - base_delivered
            now = time.monotonic()
            if got >= 0.05 * messages:
                marks.setdefault("p5", now)
            if got >= 0.95 * messages:
                marks.setdefault("p95", now)
            if got >= messages:
                break
            await asyncio.sleep(0.05)
        cpu_after = sum(cpu_seconds(p.pid) for p in processes)
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=60)
        after = (await client.get(stats_url)).json()
    rate = 0.9 * messages / (marks["p95"] - marks["p5"])
    return {
        "replicas": replicas,
        "rate": rate,
        "of_cap": rate / cap,
        "violations": after["limit_violations"] - base_violations,
        "rate_limited": after["rate_limited"] - base_limited,
        "load": os.getloadavg()[0],
        "cpu_ms_per_message": (cpu_after - cpu_before) / messages * 1000,
    }


async def measure(args: argparse.Namespace) -> None:
    url = await scratch.create_database(args.database_url, prefix="trendbot_bench")
    fake = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests/fakes/serve_telegram.py"),
            "--token",
            TOKEN,
            "--latency",
            str(LATENCY),
            "--enforce-limits",
            "--global-rate",
            str(args.cap),
            "--paid-rate",
            str(args.cap),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert fake.stdout is not None
        info = json.loads(fake.stdout.readline())
        results = []
        for index, replicas in enumerate(int(n) for n in args.replicas.split(",")):
            result = await run_once(
                replicas=replicas,
                url=url,
                messages=args.messages,
                cap=args.cap,
                fake=info,
                start=1_000_000 * (index + 1),
            )
            results.append(result)
            print(
                f"{replicas} replica(s): {result['rate']:6.0f} msg/s = "
                f"{result['of_cap']:.3f} of the cap, {result['rate_limited']} x 429, "
                f"{result['violations']} limit violations, "
                f"{result['cpu_ms_per_message']:.2f} ms CPU per message; "
                f"load average {result['load']:.2f}",
                flush=True,
            )
    finally:
        if fake.stdin:
            fake.stdin.close()
        fake.wait(timeout=30)
        await scratch.drop_database(url, base_url=args.database_url)
    print(
        f"cap {args.cap} msg/s, {LATENCY * 1000:.0f} ms latency, {args.messages} messages a run; "
        f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} cores, "
        f"CPython {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--messages", type=int, default=9000)
    parser.add_argument("--cap", type=int, default=600)
    parser.add_argument("--replicas", default="1,2,3", help="replica counts, comma-separated")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
