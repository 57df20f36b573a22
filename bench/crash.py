"""Crash benchmark: ``kill -9`` of a ``trendbot run`` in the middle of a fan-out, then a restart.

``--chats`` private chats (300) each have the message of one new page planned; a ``trendbot
run`` sends them at ``--cap`` messages a second (200, paid broadcasts) to the local Bot API
server (in this process, ``--latency`` 100 ms per request, its flood limits counted
exactly), and is killed with SIGKILL once a third of them have arrived. A second run sends
the rest. Figures: messages that had arrived at the crash, chats that got the message twice
(sends that reached the server but whose records had not been committed), 429s. Each of
``--repeat`` rounds runs on a fresh database.

    .venv/bin/python bench/crash.py [--chats 300] [--cap 200] [--latency 100] [--repeat 3]
        [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.channels.registry import settings_class
from bot.delivery.recording import RECORD_BATCH
from bot.store.engine import create_engine, upgrade
from tests.cli import start_cli
from tests.fakes.telegram_api import FakeTelegram, TelegramCall
from tests.integration.test_admin import subscribers
from tests.integration.test_planner import started
from tests.run_env import telegram_env
from tests.scratch import scratch_database

# The settings the CLI reads: the core's and every platform's section.
Settings = settings_class()

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"


def clean_env() -> dict[str, str]:
    """This environment without any of the bot's variables."""
    names = {name.upper() for name in Settings.model_fields}
    env = {k: v for k, v in os.environ.items() if k not in names}
    env["PYTHONUNBUFFERED"] = "1"
    env["PTB_TIMEDELTA"] = "true"
    return env


def _digests(tg: FakeTelegram) -> list[TelegramCall]:
    """The digests that reached their chats, whichever form they took (a rich message, or
    the HTML of a chat or server that refuses rich ones)."""
    return tg.calls("sendMessage", ok=True) + tg.calls("sendRichMessage", ok=True)


async def wait_until(predicate: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the runs")
        await asyncio.sleep(0.02)


async def one_round(args: argparse.Namespace, work: Path) -> dict[str, int]:
    async with scratch_database(args.database_url, directory=work) as url:
        engine = create_engine(url)
        await upgrade(engine)
        world = await started(engine, work / "wiki")
        await subscribers(engine, args.chats)
        await world.publish("papers/2026/crash-bench", tags="[rl]")
        assert await world.planner.plan_now() == args.chats
        await engine.dispose()
        async with FakeTelegram(token=TOKEN, long_poll_cap=0.5) as tg:
            tg.latency = args.latency / 1000
            tg.enforce_limits = True
            tg.paid_rate = args.cap
            env = dict(
                clean_env(),
                DATABASE_URL=url,
                WIKI_SOURCES=str(work / "wiki"),
                **telegram_env(tg),
                TELEGRAM_RATE_PER_SECOND=str(args.cap),
                TELEGRAM_PAID_BROADCAST="true",
                HTTP_PORT="0",
                POLL_INTERVAL_SECONDS="3600",
            )

            def arrived() -> int:
                return len(_digests(tg))

            first = start_cli(env=env, cwd=work, err=work / "run.log", append=True)
            try:
                await wait_until(lambda: arrived() >= args.chats // 3, seconds=120)
            finally:
                first.send_signal(signal.SIGKILL)
                first.wait(timeout=10)
            at_crash = arrived()
            second = start_cli(env=env, cwd=work, err=work / "run.log", append=True)
            try:
                await wait_until(
                    lambda: len({c.chat_id for c in _digests(tg)}) >= args.chats,
                    seconds=180,
                )
                await asyncio.sleep(1.0)  # anything extra would arrive now
            finally:
                second.send_signal(signal.SIGTERM)
                second.wait(timeout=30)
            per_chat = collections.Counter(c.chat_id for c in _digests(tg))
            return {
                "at_crash": at_crash,
                "chats": len(per_chat),
                "twice": sum(1 for n in per_chat.values() if n > 1),
                "rate_limited": tg.stats()["rate_limited"],
            }


async def measure(args: argparse.Namespace) -> None:
    print(
        f"{args.chats} chats, cap {args.cap}/s paid, {args.latency:g} ms, "
        f"{'PostgreSQL' if args.database_url else 'SQLite'}, RECORD_BATCH {RECORD_BATCH}; "
        f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for n in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            result = await one_round(args, Path(tmp))
        print(
            f"round {n + 1}: {result['at_crash']} arrived at the crash; "
            f"{result['chats']} chats reached, {result['twice']} twice; "
            f"{result['rate_limited']} 429s",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=300)
    parser.add_argument("--cap", type=int, default=200)
    parser.add_argument("--latency", type=float, default=100.0, help="ms per request")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    if args.repeat < 1:
        raise SystemExit(f"--repeat must be 1 or more, not {args.repeat}")
    asyncio.run(measure(args))


if __name__ == "__main__":
    main()
