"""Command benchmark: chats sending commands to the Telegram channel at a steady rate.

Simulated chats send a realistic mix of commands (subscribe and unsubscribe with tags,
settings, tags, latest, mode, time, lang, help; a few malformed) through a local Bot API
server (the test fake, in a process of its own) to a real ``TelegramChannel`` (long polling,
python-telegram-bot unchanged) and the real command core on a real database, seeded by
polling ``bot/sample_wiki``. Each chat sends one command every 1-2 s, so the offered rate is
steady (200 chats: about 113 commands a second) rather than one burst. A short warm-up from
other chats runs first and is not counted.

Latency is measured in the fake's process, on one monotonic clock: from the moment an update
is queued for ``getUpdates`` (a long poll waiting in the fake returns at once) to the arrival
of the reply's ``sendMessage``. CPU is this process's (``time.process_time``, all threads),
the bot's alone: the fake and the load generator run in the other process. SQLite's work
runs in this process and is counted; PostgreSQL's server is not. The machine line says how
busy all cores were meanwhile: figures taken beside other work are not the bot's best.

    .venv/bin/python bench/commands.py [--chats 200] [--commands 20] [--database-url URL]

``--database-url`` takes a PostgreSQL URL of an existing database (e.g.
``postgresql+asyncpg://postgres@127.0.0.1:5432/test``): a scratch database
``trendbot_bench_<random>`` is created beside it and dropped after. The exit code is 0 when
the targets (p99 <= 100 ms, >= 300 commands per CPU-second, every command answered, no 429
from the fake's flood limits, which it counts exactly) are met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import telegram
from sqlalchemy.engine import make_url

from bot import logs
from bot.app import App, open_app
from bot.channels.registry import settings_class
from bot.channels.telegram.connect import TelegramConnection
from bot.store import current
from tests import scratch

# The settings the CLI reads: the core's and every platform's section.
Settings = settings_class()

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "123456789:AAHbenchTokenForTheLocalServer_0123456789"
FIRST_CHAT = 70_000_001
WARMUP_CHAT = 60_000_001
KOREAN_SHARE = 0.2  # chats whose users have a Korean client
UNKNOWN_TAG = "quantum-widgets"  # a tag no page carries: the reply notes it
PAID_REPLY_RATE = 1_000  # Bot API: paid broadcasts, up to 1,000 messages a second
# Long polls are held as Telegram holds them; an injected update answers a held one at once.
LONG_POLL_CAP = 10.0
SETTLE_SECONDS = 30.0  # how long the fake waits for the last replies
TARGET_P99_MS = 100.0
TARGET_PER_CPU_SECOND = 300.0


# ---------------------------------------------------------------------- the load


@dataclass(slots=True)
class Chat:
    chat_id: int
    language_code: str | None
    followed: set[str] = field(default_factory=set)


def next_command(rng: random.Random, chat: Chat, tags: list[str]) -> tuple[str, str]:
    """One command a user of ``chat`` might send next, as (kind, text)."""
    kind = rng.choices(
        ["subscribe", "unsubscribe", "settings", "tags", "latest", "mode", "time", "lang", "help"],
        weights=[22, 8, 12, 10, 20, 6, 6, 6, 10],
    )[0]
    if kind == "subscribe":
        picked = rng.sample(tags, rng.randint(1, 3))
        if rng.random() < 0.1:
            picked.append(UNKNOWN_TAG)
        words = [f"+{tag}" if rng.random() < 0.15 else tag for tag in picked]
        if rng.random() < 0.15:
            words.append(f"-{rng.choice(tags)}")
        chat.followed.update(picked)
        return kind, "/subscribe " + " ".join(words)
    if kind == "unsubscribe":
        if not chat.followed or rng.random() < 0.1:
            chat.followed.clear()
            return kind, "/unsubscribe all"
        tag = rng.choice(sorted(chat.followed))
        chat.followed.discard(tag)
        return kind, f"/unsubscribe {tag}"
    if kind == "latest":
        return kind, rng.choice(["/latest 5", "/latest 5", "/latest", "/latest 3"])
    if kind == "mode":
        return kind, rng.choice(["/mode daily", "/mode instant"])
    if kind == "time":
        if rng.random() < 0.1:
            return kind, "/time 25:99"  # malformed: the usage reply
        return kind, f"/time {rng.randint(6, 22):02d}:{rng.choice(['00', '15', '30', '45'])}"
    if kind == "lang":
        return kind, rng.choice(["/lang en", "/lang ko"])
    return kind, f"/{kind}"


@dataclass(slots=True)
class Load:
    script: list[list[Any]]  # [offset, chat_id, text, language_code]
    kinds: dict[int, list[str]]  # per chat, the kind of each command in order

    @property
    def span(self) -> float:
        offsets = [item[0] for item in self.script]
        return max(offsets) - min(offsets) if offsets else 0.0


def make_load(
    *,
    chats: int,
    commands: int,
    tags: list[str],
    first_chat: int,
    gap: tuple[float, float],
    seed: int,
) -> Load:
    """Each chat starts with ``/start`` at a random moment of its first gap, then sends a
    command every ``gap`` seconds (uniform), so the offered rate is steady."""
    rng = random.Random(seed)
    script: list[list[Any]] = []
    kinds: dict[int, list[str]] = {}
    for i in range(chats):
        code = "ko" if rng.random() < KOREAN_SHARE else rng.choice(["en", None])
        chat = Chat(first_chat + i, code)
        offset = rng.uniform(0.0, gap[1])
        kinds[chat.chat_id] = []
        for n in range(commands):
            kind, command = ("start", "/start") if n == 0 else next_command(rng, chat, tags)
            script.append([round(offset, 4), chat.chat_id, command, code])
            kinds[chat.chat_id].append(kind)
            offset += rng.uniform(*gap)
    return Load(script, kinds)


# ---------------------------------------------------------------------- the fake's process


class FakeProcess:
    """``tests/fakes/serve_telegram.py`` in a subprocess, spoken to in JSON lines."""

    def __init__(self, proc: asyncio.subprocess.Process, hello: dict[str, Any]) -> None:
        self._proc = proc
        self.base_url: str = hello["base_url"]

    @classmethod
    @contextlib.asynccontextmanager
    async def running(cls) -> AsyncIterator[FakeProcess]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(ROOT / "tests" / "fakes" / "serve_telegram.py"),
            "--token",
            TOKEN,
            "--long-poll-cap",
            str(LONG_POLL_CAP),
            # Telegram's flood limits, counted exactly: a reply the bot sends too soon is
            # refused with a 429 and counted, as the platform would.
            "--enforce-limits",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 26,
        )
        try:
            assert proc.stdout is not None
            hello = json.loads(await asyncio.wait_for(proc.stdout.readline(), 30))
            yield cls(proc, hello)
        finally:
            if proc.returncode is None:
                with contextlib.suppress(Exception):
                    await cls._send(proc, {"op": "close"})
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()

    @staticmethod
    async def _send(proc: asyncio.subprocess.Process, request: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        await proc.stdin.drain()

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        await self._send(self._proc, request)
        assert self._proc.stdout is not None
        line = await self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the fake Bot API server exited")
        answer: dict[str, Any] = json.loads(line)
        return answer


# ---------------------------------------------------------------------- the figures


@dataclass(slots=True)
class Outcome:
    latencies: dict[str, list[float]]  # per kind, seconds
    unanswered: int
    extra_parts: int

    @property
    def all(self) -> list[float]:
        return [x for values in self.latencies.values() for x in values]


def match_replies(load: Load, played: dict[str, Any]) -> Outcome:
    """A chat's commands are handled one after another, each answered by one message (no
    reply in this mix nears Telegram's 4,096 characters): the k-th sendMessage to a chat
    answers its k-th command."""
    injected: dict[int, list[float]] = defaultdict(list)
    for chat_id, at in played["injected"]:
        injected[chat_id].append(at)
    replies: dict[int, list[float]] = defaultdict(list)
    for chat_id, at in played["sent"]:
        replies[chat_id].append(at)
    latencies: dict[str, list[float]] = defaultdict(list)
    unanswered = extra = 0
    for chat_id, times in injected.items():
        answers = sorted(replies.get(chat_id, ()))
        unanswered += max(0, len(times) - len(answers))
        extra += max(0, len(answers) - len(times))
        for k, (sent_at, replied_at) in enumerate(zip(times, answers, strict=False)):
            latencies[load.kinds[chat_id][k]].append(replied_at - sent_at)
    return Outcome(dict(latencies), unanswered, extra)


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile, nearest rank (the value at or below which ``q`` of them lie)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q * len(ordered) + 0.5)))
    return ordered[rank - 1]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


@dataclass(frozen=True, slots=True)
class MachineTimes:
    """The whole machine's CPU time so far (``/proc/stat``, in clock ticks): how busy the
    other processes kept it, and how much the hypervisor took (steal), during a run."""

    total: int
    idle: int
    steal: int

    @classmethod
    def now(cls) -> MachineTimes | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path("/proc/stat").read_text().splitlines()[0].split()
            ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
            return cls(total=sum(ticks), idle=ticks[3] + ticks[4], steal=ticks[7])
        return None

    def since(self, before: MachineTimes) -> tuple[float, float]:
        """(busy, steal) shares of all cores between ``before`` and this sample."""
        total = max(1, self.total - before.total)
        busy = total - (self.idle - before.idle) - (self.steal - before.steal)
        return busy / total, (self.steal - before.steal) / total


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


# ---------------------------------------------------------------------- the run


@contextlib.asynccontextmanager
async def scratch_database(url: str | None) -> AsyncIterator[tuple[str, str]]:
    """(the URL to use, a label): a temp SQLite file, or a scratch PostgreSQL database."""
    async with scratch.scratch_database(url, prefix="trendbot_bench") as scratch_url:
        if url is None:
            yield scratch_url, "SQLite (temp file, WAL)"
            return
        base = make_url(url)
        version = await scratch.server_version(url)
        yield scratch_url, f"PostgreSQL {version} ({base.host}:{base.port or 5432}, asyncpg)"


def _transport(bot: telegram.Bot) -> str:
    """The HTTP clients python-telegram-bot was given, for sends and for getUpdates."""
    requests = getattr(bot, "_request", None)  # (getUpdates, everything else) in PTB 22
    updates = type(requests[0]).__name__ if requests else "?"
    return (
        f"python-telegram-bot {telegram.__version__}, long polling; "
        f"sendMessage over {type(bot.request).__name__}, getUpdates over {updates}"
    )


async def _known_tags(app: App) -> list[str]:
    async with app.engine.connect() as conn:
        return [tag for tag, _ in await current.tag_counts(conn)]


async def run(args: argparse.Namespace) -> bool:
    async with (
        scratch_database(args.database_url) as (database_url, label),
        FakeProcess.running() as fake,
    ):
        settings = Settings(
            database_url=database_url,
            wiki_sources=(str(ROOT / "bot" / "sample_wiki"),),
            telegram_bot_token=TOKEN,
            telegram_api_base_url=fake.base_url,
            # The replies share the bot's overall pace: at over 100 commands a second they
            # go as paid broadcasts (up to 1,000 a second), as Telegram would require.
            telegram_rate_per_second=PAID_REPLY_RATE,
            telegram_paid_broadcast=True,
        )
        logs.configure(level="WARNING", fmt="text", secrets=settings.secrets())
        async with open_app(settings) as app:
            summary = await app.poller.poll()
            tags = await _known_tags(app)
            telegram = app.connected(TelegramConnection)
            assert telegram is not None
            transport = _transport(telegram.bot)
            channel = telegram.channel(app.core)
            await channel.start()
            try:
                await fake.ask({"op": "wait_for_poll"})
                warmup = make_load(
                    chats=20, commands=10, tags=tags, first_chat=WARMUP_CHAT,
                    gap=(0.05, 0.1), seed=args.seed + 1,
                )  # fmt: skip
                await fake.ask({"op": "play", "script": warmup.script, "settle": 30})
                load = make_load(
                    chats=args.chats,
                    commands=args.commands,
                    tags=tags,
                    first_chat=FIRST_CHAT,
                    gap=(args.min_gap, args.max_gap),
                    seed=args.seed,
                )
                counts_before = await fake.ask({"op": "counts"})
                profiler = _start_profiler(args.cprofile)
                machine_before = MachineTimes.now()
                wall_started = time.perf_counter()
                cpu_started = time.process_time()
                played = await fake.ask(
                    {"op": "play", "script": load.script, "settle": SETTLE_SECONDS}
                )
                cpu = time.process_time() - cpu_started
                wall = time.perf_counter() - wall_started
                machine_after = MachineTimes.now()
                _stop_profiler(profiler, args.cprofile)
                counts_after = await fake.ask({"op": "counts"})
                refused = (await fake.ask({"op": "stats"}))["rate_limited"]
            finally:
                await channel.stop()
    outcome = match_replies(load, played)
    return report(
        args=args,
        label=label,
        wiki=summary.line(),
        transport=transport,
        tags=len(tags),
        load=load,
        outcome=outcome,
        played=played,
        requests={k: n - counts_before.get(k, 0) for k, n in counts_after.items()},
        cpu=cpu,
        wall=wall,
        refused=refused,
        machine=(machine_after.since(machine_before) if machine_before and machine_after else None),
    )


def report(
    *,
    args: argparse.Namespace,
    label: str,
    wiki: str,
    transport: str,
    tags: int,
    load: Load,
    outcome: Outcome,
    played: dict[str, Any],
    requests: dict[str, int],
    cpu: float,
    wall: float,
    refused: int,
    machine: tuple[float, float] | None,
) -> bool:
    total = len(load.script)
    answered = len(outcome.all)
    offered = total / load.span if load.span else float("inf")
    print(f"database: {label}")
    print(f"wiki:     bot/sample_wiki, {tags} tags ({wiki})")
    print(f"telegram: {transport}")
    print(
        f"load:     {args.chats} chats x {args.commands} commands = {total}, each chat one "
        f"every {args.min_gap:g}-{args.max_gap:g} s; offered {offered:.1f} commands/s "
        f"over {load.span:.1f} s"
    )
    if played["late_injections"]:
        print(f"          ({played['late_injections']} injections more than 10 ms late)")
    print()
    print(f"{'command':<12} {'count':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind in sorted(outcome.latencies, key=lambda k: -len(outcome.latencies[k])):
        values = outcome.latencies[kind]
        print(
            f"{kind:<12} {len(values):>6} {_ms(quantile(values, 0.5))} "
            f"{_ms(quantile(values, 0.99))} {_ms(max(values))}"
        )
    values = outcome.all
    p50, p99, worst = quantile(values, 0.5), quantile(values, 0.99), max(values)
    print(f"{'all':<12} {answered:>6} {_ms(p50)} {_ms(p99)} {_ms(worst)}")
    print(f"{'mean':<12} {'':>6} {_ms(statistics.fmean(values))}")
    print()
    replies = [at for _, at in played["sent"]]
    if replies:
        served = answered / (max(replies) - min(at for _, at in played["injected"]))
        note = "" if served >= 0.95 * offered else " -- the bot fell behind the offered load"
        print(f"served:   {served:.1f} commands/s{note}")
    per_cpu = answered / cpu if cpu else float("inf")
    print(
        f"bot CPU:  {cpu:.2f} s over {wall:.1f} s wall ({cpu / wall:.0%} of one core) -> "
        f"{per_cpu:.0f} commands per CPU-second"
    )
    print(f"fake CPU: {played['cpu_seconds']:.2f} s (its own process, not counted)")
    print(
        "requests: "
        + ", ".join(
            f"{n} {method}" for method, n in sorted(requests.items(), key=lambda x: -x[1]) if n
        )
        + f" ({requests.get('getUpdates', 0) / max(1, total):.2f} getUpdates per command)"
    )
    if outcome.unanswered or outcome.extra_parts:
        print(f"replies:  {outcome.unanswered} unanswered, {outcome.extra_parts} extra parts")
    print(f"429s:     {refused} (the flood limits: 1 a second in a chat, 1,000 paid in all)")
    print(
        f"machine:  {cpu_model()}, {len(os.sched_getaffinity(0))} cores, "
        f"{platform.python_implementation()} {platform.python_version()} ({platform.system()})"
    )
    if machine is not None:
        busy, steal = machine
        print(
            f"          during the run: all cores {busy:.0%} busy (bot, fake, database server "
            f"and any other process), {steal:.0%} stolen by the hypervisor"
        )
    met = p99 * 1000 <= TARGET_P99_MS and per_cpu >= TARGET_PER_CPU_SECOND
    met = met and not outcome.unanswered and not refused
    print(
        f"targets:  p99 <= {TARGET_P99_MS:g} ms, >= {TARGET_PER_CPU_SECOND:g} commands per "
        f"CPU-second, every command answered, no 429: {'met' if met else 'MISSED'}"
    )
    return met


def _start_profiler(path: str | None) -> Any:
    if path is None:
        return None
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    return profiler


def _stop_profiler(profiler: Any, path: str | None) -> None:
    if profiler is not None and path is not None:
        profiler.disable()
        profiler.dump_stats(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--commands", type=int, default=20, help="per chat")
    parser.add_argument("--min-gap", type=float, default=1.0, help="seconds between a chat's")
    parser.add_argument("--max-gap", type=float, default=2.0, help="commands, uniform")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--database-url",
        default=None,
        help="a PostgreSQL database beside which a scratch one is made (default: SQLite)",
    )
    parser.add_argument(
        "--cprofile",
        metavar="FILE",
        help="profile the bot's main thread into FILE (pstats); slows the bot about twofold",
    )
    args = parser.parse_args()
    os.environ.setdefault("PTB_TIMEDELTA", "true")  # as `trendbot` sets it (PTB 22)
    sys.exit(0 if asyncio.run(run(args)) else 1)


if __name__ == "__main__":
    main()
