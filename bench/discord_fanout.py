"""Discord fan-out benchmark: a digest to each of 1,000 channels against Discord's limits.

``--channels`` (1,000) Discord channels each due a digest of 5 new pages (planned with
``Planner.plan_now``), sent through ``bot.delivery.engine.Delivery`` and ``DiscordSender``
to ``tests/fakes/discord_api.py``, which validates every body against Discord's OpenAPI
description and enforces Discord's limits exactly: 50 requests a second in all (any second),
5 messages per 5 seconds per channel, 429s with their headers. The fake runs in a process
of its own (``tests/fakes/serve_discord.py``), the engine in another, so the latter's CPU
time is the bot's alone; ``--latency`` (100 ms) is added to every answer.

Figures: the rate (sends a second, between 5 % and 95 % of them, as ``bench/fanout.py`` takes
it) as a share of what the limits allow (50 a second) and of the 48 a second the sender
paces messages at (the rest is the bot's other requests), the 429s answered (target 0), the
invalid requests counted, every message delivered, and the CPU per message, beside
Telegram's: the same digests to private chats through ``TelegramSender`` and
``tests/fakes/serve_telegram.py`` at its free cap of 30 a second (``bench/fanout.py``'s run),
on the same machine in the same run. ``--rounds`` (1) repeats both; medians are shown.

    .venv/bin/python bench/discord_fanout.py [--channels 1000] [--latency 0.1] [--rounds 1]
        [--telegram-chats 450] [--database-url postgresql+asyncpg://...]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fanout  # bench/fanout.py: the seeding, the Telegram run and its server
from sqlalchemy import select, update

from bot.channels.discord.rest import RestClient
from bot.channels.discord.sender import (
    GLOBAL_RATE_PER_SECOND,
    MESSAGE_RATE_PER_SECOND,
    DiscordSender,
)
from bot.channels.discord.settings import DISCORD
from bot.delivery.engine import Delivery
from bot.matching.planner import Planner
from bot.models import Outgoing
from bot.store.engine import create_engine
from bot.store.schema import chats
from bot.util import settle_heap
from tests.fakes.discord_api import DEFAULT_TOKEN

ROOT = Path(__file__).resolve().parent.parent
FIRST_CHANNEL = 1_300_000_000_000_000_000
TARGET_SHARE = 0.95  # of the rate messages are paced at (48 of Discord's 50 a second)
TARGET_CPU_RATIO = 1.5  # Discord's CPU per message against Telegram's


class Timed(DiscordSender):
    """``DiscordSender`` noting when each send begins."""

    def __init__(self, rest: RestClient, starts: list[float]) -> None:
        super().__init__(rest)
        self._starts = starts

    async def send(self, chat_id: str, message: Outgoing, *, thread: str | None) -> str | None:
        self._starts.append(time.monotonic())
        return await super().send(chat_id, message, thread=thread)


async def run_child(args: argparse.Namespace) -> dict[str, Any]:
    """The measured run: every due digest through the engine to the fake."""
    engine = create_engine(args.url)
    rest = RestClient(base_url=args.base_url, token=DEFAULT_TOKEN)
    starts: list[float] = []
    delivery = Delivery(engine=engine, senders={DISCORD: Timed(rest, starts)})
    settle_heap()
    cpu, started = time.process_time(), time.monotonic()
    await delivery.drain()
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    await rest.close()
    await engine.dispose()
    return {
        "sent": delivery.sent,
        "failed": delivery.failed,
        "seconds": elapsed,
        "cpu": cpu,
        "rate": fanout.steady_rate(starts),
        "invalid": rest.invalid.count(),
    }


async def seed_discord(url: str, channels: int) -> list[str]:
    """``channels`` Discord channels following rl, 5 new pages, every digest planned."""
    await fanout.seed(url, chat_count=channels, page_count=5, delivery=True, plan=False)
    engine = create_engine(url)
    async with engine.begin() as conn:
        pks = list((await conn.execute(select(chats.c.id).order_by(chats.c.id))).scalars())
        ids = [str(FIRST_CHANNEL + n) for n in range(len(pks))]
        for pk, channel in zip(pks, ids, strict=True):
            await conn.execute(
                update(chats)
                .where(chats.c.id == pk)
                .values(platform=DISCORD.value, chat_id=channel, kind="group")
            )
    await Planner(engine=engine).plan_now()
    await engine.dispose()
    return ids


async def child_process(*command: str) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, *command, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{command[0]} failed with exit code {process.returncode}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


@contextlib.asynccontextmanager
async def fake_discord(
    *, latency: float, channels: int
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``tests/fakes/serve_discord.py`` in a process of its own, ahead of everything else
    here when the bench may raise its priority (as ``bench/fanout.py`` runs its Bot API),
    so that it counts arrivals when they happen."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "tests" / "fakes" / "serve_discord.py"),
        "--latency", str(latency), "--channels", f"{FIRST_CHANNEL}:{channels}",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    with contextlib.suppress(PermissionError):
        os.setpriority(os.PRIO_PROCESS, process.pid, fanout.SERVER_NICE)
    try:
        yield process
    finally:
        assert process.stdin is not None
        process.stdin.write(b'{"op": "close"}\n')
        await process.stdin.drain()
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=10)
        except TimeoutError:
            process.kill()
            await process.wait()


async def ask(process: asyncio.subprocess.Process, op: str | None = None) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    if op is not None:
        process.stdin.write(json.dumps({"op": op}).encode() + b"\n")
        await process.stdin.drain()
    answer: dict[str, Any] = json.loads(await process.stdout.readline())
    return answer


async def discord_round(args: argparse.Namespace, databases: fanout.Databases) -> dict[str, Any]:
    url = await databases.new()
    await seed_discord(url, args.channels)
    async with fake_discord(latency=args.latency, channels=args.channels) as server:
        base_url = (await ask(server))["base_url"]
        print(f"[discord] {args.channels:,} channels ...", file=sys.stderr, flush=True)
        result = await child_process(
            __file__, "--phase", "deliver", "--url", url, "--base-url", base_url
        )
        stats = await ask(server, "stats")
    await databases.drop(url)
    arrivals = stats["arrivals"]
    first = arrivals[0] if arrivals else 0.0
    result["delivered"] = len(arrivals)
    result["arrival_rate"] = fanout.steady_rate(arrivals)
    result["densest"] = max(
        (bisect.bisect_right(arrivals, t + 1.0) - i for i, t in enumerate(arrivals)), default=0
    )
    result["limited"] = len(stats["limited"])
    result["limited_at"] = [f"{at - first:.2f}({scope})" for at, scope in stats["limited"]]
    result["server_invalid"] = stats["invalid"]
    result["channels_reached"] = stats["reached"]
    return result


async def telegram_round(args: argparse.Namespace, databases: fanout.Databases) -> dict[str, Any]:
    url = await databases.new()
    await fanout.seed(url, chat_count=args.telegram_chats, page_count=5, delivery=True, plan=True)
    print(f"[telegram] {args.telegram_chats:,} chats ...", file=sys.stderr, flush=True)
    cap = fanout.FREE_RATE
    async with fanout.fake_telegram(rate=cap, latency=args.latency) as (base_url, port):
        result = await child_process(
            str(Path(fanout.__file__)), "--phase", "deliver", "--url", url,
            "--transport", "aiohttp", "--cap", str(cap), "--latency", str(args.latency),
            "--base-url", base_url,
        )  # fmt: skip
        stats = await fanout.server_stats(port)
    await databases.drop(url)
    result.update(stats)
    return result


async def measure(args: argparse.Namespace) -> int:
    databases = fanout.Databases(args.database_url)
    discord: list[dict[str, Any]] = []
    telegram: list[dict[str, Any]] = []
    try:
        for _ in range(args.rounds):
            discord.append(await discord_round(args, databases))
            telegram.append(await telegram_round(args, databases))
    finally:
        await databases.close()
    rate = statistics.median(r["rate"] for r in discord)
    share = rate / GLOBAL_RATE_PER_SECOND
    of_pace = rate / MESSAGE_RATE_PER_SECOND
    d_cpu = statistics.median(1000 * r["cpu"] / max(1, r["delivered"]) for r in discord)
    t_cpu = statistics.median(1000 * r["cpu"] / max(1, r["delivered"]) for r in telegram)
    limited = sum(r["limited"] for r in discord)
    reached = min(r["channels_reached"] for r in discord)
    print(f"machine: {fanout.machine()}; load average {fanout.load_average()}")
    print(f"store: {databases.backend}; latency {args.latency * 1000:.0f} ms; rounds {args.rounds}")
    rows = [
        ("Discord rate (msg/s)", f"{statistics.median(r['rate'] for r in discord):.1f}", ""),
        ("  share of the 50/s the limits allow", f"{share:.3f}", ""),
        ("  share of the 48/s messages are paced at", f"{of_pace:.3f}", f">= {TARGET_SHARE}"),
        (
            "  as the server saw them (msg/s)",
            f"{statistics.median(r['arrival_rate'] for r in discord):.1f}",
            "",
        ),
        ("  densest 1-s window", str(max(r["densest"] for r in discord)), "<= 50"),
        ("  429s answered", str(limited), "0"),
        (
            "  invalid requests counted (bot / server)",
            f"{sum(r['invalid'] for r in discord)} / {sum(r['server_invalid'] for r in discord)}",
            "0",
        ),
        ("  channels reached", f"{reached:,} of {args.channels:,}", "all"),
        ("  CPU per message (ms)", f"{d_cpu:.3f}", ""),
        (
            "Telegram at 30/s: rate (msg/s)",
            f"{statistics.median(r['rate'] for r in telegram):.1f}",
            "",
        ),
        ("  CPU per message (ms)", f"{t_cpu:.3f}", ""),
        ("Discord CPU / Telegram CPU", f"{d_cpu / t_cpu:.2f}", f"<= {TARGET_CPU_RATIO}"),
    ]
    late = [at for r in discord for at in r["limited_at"]]
    if late:
        rows.append(("  429s at (s after the first message)", " ".join(map(str, late[:12])), ""))
    width = max(len(name) for name, _, _ in rows)
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>14}  {target}")
    met = (
        of_pace >= TARGET_SHARE
        and limited == 0
        and reached == args.channels
        and d_cpu / t_cpu <= TARGET_CPU_RATIO
    )
    return 0 if met else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=1_000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--telegram-chats", type=int, default=450)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--phase", choices=("deliver",), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(asyncio.run(run_child(args))))
        return
    sys.exit(asyncio.run(measure(args)))


if __name__ == "__main__":
    main()
