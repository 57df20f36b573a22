"""Fan-out benchmark: digests through the delivery engine to a rate-limited Bot API, and planning.

Part 1, delivery: 10,000 chats each due a digest of 5 new pages (planned with
``Planner.plan_now``), sent through ``bot.delivery.Delivery`` and ``TelegramSender`` (cap
200 messages/s) to ``tests/fakes/serve_telegram.py`` in a process of its own, which adds
100 ms to every request and enforces the Bot API limits (1 message/s per chat, 200/s in
all). Runs (``--runs``):

* ``aiohttp``: the engine as deployed (``make_bot``: python-telegram-bot over aiohttp);
* ``aiohttp-message``: the same, the sender going through ``Bot.send_message`` (which makes
  a ``telegram.Message`` of every answer) instead of posting ``sendMessage`` itself;
* ``httpx``: the engine with python-telegram-bot's default transport, ``HTTPXRequest``;
* ``none``: the engine with a sender that only sleeps the latency: the engine's own CPU
  (claims, chat records, rendering, pacing, records of sends);
* ``naive``: the loop that awaits each ``bot.send_message`` in turn, on ``--naive``
  messages (it runs at about 1/latency).

Each run gets a fresh database and a fresh server; the counters (429s answered, limit
violations, messages received) are read from the server's ``GET /_stats``.

Part 2, planning: ``--plan-chats`` chats (1-3 of 14 tags each, some with a required or an
excluded tag) x ``--plan-pages`` new pages (1-3 tags each), on SQLite and, with
``--database-url``, on PostgreSQL: the time ``Planner.plan_now`` takes to plan every digest.
With ``--plan-voted-tags N`` every chat has weights (from -3 to 3) for N tags its votes
taught, drawn from the 14 page tags and 20 others, so its digest is ranked; with
``--plan-limit N`` every chat's digest is cut at its N best pages.

Part 3, ``--beside-run``: a live ``trendbot run`` (``--replicas`` of them on PostgreSQL) on
a database of ``--beside-chats`` chats (2,000) each with 5 new pages, the cap at
``--beside-cap`` (300) messages/s for the bot and the server alike, 100 ms per request; then
``trendbot digest --now`` plans every digest and, seeing the run, leaves the sending to it.
Figures: 429s answered, limit violations, the rate from the first message to the last (the
server's count polled every 100 ms; the rate between the first poll that saw a message and
the last before the end), the command's wall time, and the CPU of the run processes.

Every measured run is a child process of its own, so its CPU time (``time.process_time``)
and peak RSS are the bot's alone; setting up the data is not measured. Figures depend on
the machine being otherwise idle: the table's first line gives its load average.

    .venv/bin/python bench/fanout.py [--part all|delivery|planning] [--database-url URL]
        [--runs aiohttp,aiohttp-message,httpx,none,naive] [--chats 10000] [--naive 300]
        [--plan-chats 100000] [--plan-pages 50] [--plan-voted-tags 20] [--plan-limit 10]
        [--profile DIR]
    .venv/bin/python bench/fanout.py --beside-run [--database-url URL] [--replicas N]
        [--beside-chats 2000] [--beside-cap 300]

``--database-url`` (a PostgreSQL server URL, e.g. postgresql+asyncpg://postgres@127.0.0.1/test)
runs part 1 on PostgreSQL instead of SQLite and part 2 on both; scratch databases are created
on that server and dropped afterwards. ``--profile DIR`` writes a cProfile of each child run
there (its CPU figures then include the profiler's overhead).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import datetime as dt
import json
import os
import platform
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from sqlalchemy import func, insert, select, text
from sqlalchemy.engine import make_url
from telegram import Bot
from telegram.request import HTTPXRequest

from bot import digest as digest_stage
from bot import filters, render
from bot.channels import telegram as tg_channel
from bot.channels.telegram import TelegramSender, close_bot, make_bot, send_outgoing
from bot.delivery import Delivery
from bot.models import ChatSettings, Filter, Outgoing, Platform
from bot.planner import Planner
from bot.poll import Poller
from bot.settings import Settings
from bot.sources.feed import make_feed_client
from bot.store import chats as chat_store
from bot.store import feedback, outbox, scratch
from bot.store import pages as page_store
from bot.store.engine import create_engine, upgrade
from bot.store.schema import chat_pages, chat_tags, chat_weights, chats
from bot.store.schema import outbox as outbox_table

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CAP = 200  # messages/s: TelegramSender's rate_per_second and the server's global_rate
LATENCY = 0.100  # seconds the server adds to every request
FIRST_CHAT_ID = 700_000_001  # private chats: positive ids
TAGS = (
    "rl", "reasoning", "post-training", "agentic-rl", "robotics", "vision", "efficiency",
    "safety", "multimodal", "exploration", "distillation", "alignment", "long-context", "agents",
)  # fmt: skip
WORDS = (
    "policy", "reward", "model", "token", "agent", "sample", "gradient", "rollout", "verifier",
    "benchmark", "context", "memory", "latency", "budget", "scaling", "curriculum",
)  # fmt: skip
TIMEZONES = ("UTC", "Europe/Berlin", "Asia/Seoul", "America/New_York")
INSERT_CHUNK = 5_000
SERVER_NICE = -10  # the fake server's scheduling priority, when the bench may raise it

TARGET_SHARE_OF_CAP = 0.95
TARGET_CPU_MS = 1.5
TARGET_PLAN_SECONDS = 10.0
TARGET_PLAN_RSS_MB = 500.0


# ------------------------------------------------------------------------------ data


def page_text(i: int, *, tags: list[str], rng: random.Random) -> str:
    title = " ".join(rng.choice(WORDS).title() for _ in range(6))
    tldr = " ".join(rng.choice(WORDS) for _ in range(35))
    return (
        f'---\ntitle: "{title} ({i})"\ntype: paper\narxiv: "2611.{i:05d}"\n'
        f"created: 2026-11-01\nupdated: 2026-11-02\ntags: [{', '.join(tags)}]\n---\n\n"
        f"## TL;DR\n\n{tldr}.\n\n## Method\n\n{tldr}\n"
    )


def delivery_filter(rng: random.Random) -> Filter:
    """Every page of part 1 carries ``rl``: each chat gets all of them, in one digest."""
    return Filter(any_of=frozenset(["rl", *rng.sample(TAGS[1:], rng.randint(0, 2))]))


def planning_filter(rng: random.Random) -> Filter:
    chosen = rng.sample(TAGS, 4)
    any_of = frozenset(chosen[: rng.randint(1, 3)])
    roll = rng.random()
    if roll < 0.10:
        return Filter(any_of=any_of, excluded=frozenset([chosen[3]]))
    if roll < 0.15:
        return Filter(any_of=any_of, required=frozenset([chosen[3]]))
    return Filter(any_of=any_of)


async def seed(
    url: str,
    *,
    chat_count: int,
    page_count: int,
    delivery: bool,
    plan: bool,
    salt: int = 1,
    voted_tags: int = 0,
    limit: int | None = None,
) -> None:
    """A migrated database with a baseline wiki, ``chat_count`` chats (bulk inserts), then
    ``page_count`` new pages polled from a generated wiki directory; planned if ``plan``.
    Each chat has weights for ``voted_tags`` tags and a digest ``limit``."""
    rng = random.Random(salt)
    engine = create_engine(url)
    await upgrade(engine)
    with tempfile.TemporaryDirectory() as tmp:
        wiki = Path(tmp)
        (wiki / "papers").mkdir()
        (wiki / "papers" / "baseline.md").write_text(page_text(0, tags=["rl"], rng=rng))
        http = make_feed_client()
        poller = Poller(
            engine=engine,
            sources=[str(wiki)],
            base_url="https://wiki.example.org/",
            default_lang="en",
            http=http,
        )
        await poller.poll()  # the baseline scan: no events
        make_filter = delivery_filter if delivery else planning_filter
        await insert_chats(
            engine,
            [make_filter(rng) for _ in range(chat_count)],
            rng=rng,
            voted_tags=voted_tags,
            limit=limit,
        )
        for i in range(1, page_count + 1):
            tags = (
                ["rl", *rng.sample(TAGS[1:], 2)]
                if delivery
                else rng.sample(TAGS, rng.randint(1, 3))
            )
            (wiki / "papers" / f"paper-{i}.md").write_text(page_text(i, tags=tags, rng=rng))
        await poller.poll()
        await http.aclose()
    if engine.dialect.name == "postgresql":
        # What autovacuum does to a database after bulk loads: without statistics the
        # planner's batch query picks the state index and sorts every chat.
        async with engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text("ANALYZE"))
    if plan:
        await Planner(engine=engine).plan_now()
    await engine.dispose()


async def insert_chats(
    engine: Any,
    chat_filters: list[Filter],
    *,
    rng: random.Random,
    voted_tags: int = 0,
    limit: int | None = None,
) -> None:
    now = page_store.utcnow()
    async with engine.begin() as conn:
        cursor = await chat_store.latest_event_id(conn)
        rows = [
            {
                "platform": Platform.TELEGRAM.value,
                "chat_id": str(FIRST_CHAT_ID + i),
                "kind": "private",
                "title": None,
                "state": "active",
                "mode": "daily",
                "digest_time": f"{rng.randint(6, 10):02d}:00",
                "timezone": rng.choice(TIMEZONES),
                "lang": "ko" if i % 5 == 0 else "en",
                "filter": filters.format_filter(f),
                "cursor": cursor,
                "next_digest_at": now + dt.timedelta(hours=rng.randint(1, 23)),
                "inactive_reason": None,
                "created_at": now,
                "updated_at": now,
                "digest_limit": limit,
            }
            for i, f in enumerate(chat_filters)
        ]
        for start in range(0, len(rows), INSERT_CHUNK):
            await conn.execute(insert(chats), rows[start : start + INSERT_CHUNK])
        pks = dict((await conn.execute(select(chats.c.chat_id, chats.c.id))).tuples().all())
        tag_rows = [
            {"chat_pk": pks[str(FIRST_CHAT_ID + i)], "tag": tag, "kind": kind}
            for i, f in enumerate(chat_filters)
            for kind, tags in (
                ("any", f.any_of),
                ("required", f.required),
                ("excluded", f.excluded),
            )
            for tag in sorted(tags)
        ]
        for start in range(0, len(tag_rows), INSERT_CHUNK):
            await conn.execute(insert(chat_tags), tag_rows[start : start + INSERT_CHUNK])
        if voted_tags:
            votes_rng = random.Random(len(chat_filters))  # the other data stay as without
            vocabulary = [*TAGS, *(f"topic-{n:02d}" for n in range(20))]
            weight_rows = [
                {
                    "chat_pk": pk,
                    "weights": feedback.encode(
                        {
                            tag: votes_rng.choice([-1, 1]) * votes_rng.uniform(0.1, 3.0)
                            for tag in votes_rng.sample(vocabulary, voted_tags)
                        }
                    ),
                    "based_at": now,
                }
                for pk in pks.values()
            ]
            for start in range(0, len(weight_rows), INSERT_CHUNK):
                await conn.execute(insert(chat_weights), weight_rows[start : start + INSERT_CHUNK])


# ------------------------------------------------------------------------------ databases


class Databases:
    """Scratch databases: SQLite files in a temporary directory, or PostgreSQL databases
    created on the server of ``base`` and dropped at the end."""

    def __init__(self, base: str | None) -> None:
        self._base = base
        self._tmp = Path(tempfile.mkdtemp(prefix="fanout-"))
        self._created: list[str] = []

    @property
    def backend(self) -> str:
        return "postgresql" if self._base else "sqlite"

    async def new(self) -> str:
        if self._base is None:
            return f"sqlite+aiosqlite:///{self._tmp}/{uuid.uuid4().hex[:8]}.db"
        url = await scratch.create_database(self._base, prefix="fanout")
        self._created.append(url)
        return url

    async def drop(self, url: str) -> None:
        if self._base is None:
            for path in self._tmp.glob(f"{Path(make_url(url).database or '').name}*"):
                path.unlink()
            return
        await scratch.drop_database(url, base_url=self._base)
        self._created.remove(url)

    async def close(self) -> None:
        for url in list(self._created):
            assert self._base is not None
            await scratch.drop_database(url, base_url=self._base)
        shutil.rmtree(self._tmp, ignore_errors=True)


# ------------------------------------------------------------------------------ the server


@asynccontextmanager
async def fake_telegram(*, rate: int = CAP) -> AsyncIterator[tuple[str, int]]:
    """``serve_telegram.py`` with Telegram's limits and latency: (base_url, port)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests" / "fakes" / "serve_telegram.py"),
        "--token",
        TOKEN,
        "--latency",
        str(LATENCY),
        "--enforce-limits",
        "--global-rate",
        str(rate),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    # The server stands in for Telegram's, which other load on this machine does not slow
    # down: when it can, it runs ahead of the bot and of everything else here, so that it
    # counts arrivals when they happen (needs root; otherwise it runs as it is).
    with contextlib.suppress(PermissionError):
        os.setpriority(os.PRIO_PROCESS, process.pid, SERVER_NICE)
    try:
        info = json.loads(await process.stdout.readline())
        yield info["base_url"], info["port"]
    finally:
        process.stdin.write(b'{"op": "close"}\n')
        await process.stdin.drain()
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=10)
        except TimeoutError:
            process.kill()
            await process.wait()


async def server_stats(port: int) -> dict[str, Any]:
    async with httpx.AsyncClient() as client:
        response = await client.get(f"http://127.0.0.1:{port}/_stats")
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result


# ------------------------------------------------------------------------------ child runs


class SleepSender:
    """A Telegram sender that sends nothing: it waits the server's latency and succeeds.

    What the engine costs on its own: claims, chat records, rendering, pacing, records.
    """

    platform = Platform.TELEGRAM

    def __init__(self, *, rate: float, latency: float) -> None:
        self._rate = rate
        self._latency = latency
        self.sent = 0

    @property
    def rate_per_second(self) -> float | None:
        return self._rate

    def interval(self, chat: ChatSettings) -> float:
        return tg_channel.PRIVATE_CHAT_INTERVAL

    async def send(self, chat_id: str, message: Outgoing, *, thread: str | None) -> str | None:
        await asyncio.sleep(self._latency)
        self.sent += 1
        return str(self.sent)


def httpx_bot(base_url: str) -> Bot:
    """``make_bot`` as it was: python-telegram-bot's default transport, same pool and timeouts."""
    request = HTTPXRequest(
        connection_pool_size=tg_channel.CONNECTION_POOL_SIZE,
        connect_timeout=tg_channel.CONNECT_TIMEOUT,
        read_timeout=tg_channel.READ_TIMEOUT,
        write_timeout=tg_channel.WRITE_TIMEOUT,
        pool_timeout=tg_channel.POOL_TIMEOUT,
    )
    return Bot(TOKEN, base_url=base_url, request=request)


def default_bot(base_url: str) -> Bot:
    return make_bot(Settings(telegram_bot_token=TOKEN, telegram_api_base_url=base_url))


class MessageSender(TelegramSender):
    """``TelegramSender`` through ``Bot.send_message``, which parses each answer into a
    ``telegram.Message`` (the sender posts ``sendMessage`` itself and reads only the id)."""

    async def send(self, chat_id: str, message: Outgoing, *, thread: str | None) -> str | None:
        sent = await send_outgoing(self._bot, chat_id=int(chat_id), message=message)
        return str(sent.message_id)


async def run_deliver(args: argparse.Namespace) -> dict[str, Any]:
    engine = create_engine(args.url)
    bot: Bot | None = None
    if args.transport == "none":
        sender: Any = SleepSender(rate=CAP, latency=LATENCY)
    else:
        bot = httpx_bot(args.base_url) if args.transport == "httpx" else default_bot(args.base_url)
        kind = MessageSender if args.transport == "aiohttp-message" else TelegramSender
        sender = kind(bot, rate_per_second=CAP)
    delivery = Delivery(engine=engine, senders={Platform.TELEGRAM: sender})
    cpu, started = time.process_time(), time.monotonic()
    await delivery.drain()
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    async with engine.connect() as conn:
        statuses = dict(
            (
                await conn.execute(
                    select(outbox_table.c.status, func.count()).group_by(outbox_table.c.status)
                )
            )
            .tuples()
            .all()
        )
    if bot is not None:
        await close_bot(bot)
    await engine.dispose()
    return {"rows_sent": delivery.sent, "seconds": elapsed, "cpu": cpu, "statuses": statuses}


async def run_naive(args: argparse.Namespace) -> dict[str, Any]:
    """Claim, then for each row in turn: load, render, ``await bot.send_message``, record."""
    engine = create_engine(args.url)
    bot = default_bot(args.base_url)
    cpu, started = time.process_time(), time.monotonic()
    async with engine.begin() as conn:
        rows = await outbox.claim(
            conn,
            worker="naive",
            limit=args.limit,
            now=page_store.utcnow(),
            platforms=[Platform.TELEGRAM.value],
        )
    for row in rows:
        async with engine.connect() as conn:
            record = await chat_store.get_by_pk(conn, row.chat_pk)
            assert record is not None
            page_ids = [int(page_id) for page_id, _ in row.payload["pages"]]
            loaded = await page_store.load_pages(conn, page_ids)
        built = digest_stage.build_digest(
            lang=record.chat.lang,
            filter=record.chat.filter,
            candidates=[(loaded[p], bool(u)) for p, u in row.payload["pages"] if p in loaded],
            today=dt.date.fromisoformat(row.payload["date"]),
        )
        assert built is not None
        for part in render.digest_messages(Platform.TELEGRAM, built):
            await send_outgoing(bot, chat_id=int(record.chat.chat_id), message=part)
        async with engine.begin() as conn:
            await outbox.sent(conn, row_id=row.id, now=page_store.utcnow())
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    await close_bot(bot)
    await engine.dispose()
    return {"rows_sent": len(rows), "seconds": elapsed, "cpu": cpu}


async def run_plan(args: argparse.Namespace) -> dict[str, Any]:
    engine = create_engine(args.url)
    planner = Planner(engine=engine)
    cpu, started = time.process_time(), time.monotonic()
    written = await planner.plan_now()
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    async with engine.connect() as conn:
        ledger = (await conn.execute(select(func.count()).select_from(chat_pages))).scalar_one()
    await engine.dispose()
    return {"digests": written, "ledger_rows": ledger, "seconds": elapsed, "cpu": cpu}


def child(args: argparse.Namespace) -> None:
    run = {"deliver": run_deliver, "naive": run_naive, "plan": run_plan}[args.phase]
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    result = asyncio.run(run(args))
    if profiler is not None:
        profiler.disable()
        name = f"{args.phase}-{args.transport or ''}-{make_url(args.url).get_backend_name()}"
        profiler.dump_stats(str(Path(args.profile) / f"{name}.prof"))
    result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


async def in_child(phase: str, url: str, *extra: str, profile: str | None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--phase", phase, "--url", url, *extra]
    if profile:
        command += ["--profile", profile]
    process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{phase} run failed with exit code {process.returncode}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


# ------------------------------------------------------------------------------ the report


@dataclass(slots=True)
class Row:
    part: str
    run: str
    figure: str
    value: str
    target: str = ""
    met: bool | None = None


def check(value: float, *, at_least: float | None = None, at_most: float | None = None) -> bool:
    if at_least is not None:
        return value >= at_least
    assert at_most is not None
    return value <= at_most


def delivery_rows(run: str, result: dict[str, Any], *, engine: bool) -> list[Row]:
    messages = result["messages"]
    rate = messages / result["seconds"] if result["seconds"] else 0.0
    cpu_ms = 1000 * result["cpu"] / messages if messages else 0.0
    part = "1 delivery"
    rows = [
        Row(part, run, "messages delivered", f"{messages:,} in {result['seconds']:.1f} s"),
        Row(
            part,
            run,
            "messages/s (share of cap)",
            f"{rate:.1f} ({rate / CAP:.3f})",
            f">= {TARGET_SHARE_OF_CAP} of {CAP}" if engine else "",
            check(rate / CAP, at_least=TARGET_SHARE_OF_CAP) if engine else None,
        ),
    ]
    if "rate_limited" in result:
        rows += [
            Row(
                part,
                run,
                "429s answered",
                str(result["rate_limited"]),
                "0",
                not result["rate_limited"],
            ),
            Row(
                part,
                run,
                "limit violations (by rule)",
                f"{result['limit_violations']} {result['violations_by_rule'] or ''}".strip(),
                "0",
                not result["limit_violations"],
            ),
        ]
    rows += [
        Row(
            part,
            run,
            "bot CPU per message",
            f"{cpu_ms:.3f} ms",
            f"<= {TARGET_CPU_MS} ms" if engine else "",
            check(cpu_ms, at_most=TARGET_CPU_MS) if engine else None,
        ),
        Row(part, run, "peak RSS", f"{result['rss_mb']:.0f} MB"),
    ]
    return rows


def print_table(rows: list[Row], *, header: str) -> None:
    print()
    print(header)
    widths = [
        max(len(getattr(r, name)) for r in rows) for name in ("part", "run", "figure", "value")
    ]
    titles = ("part", "run", "figure", "value")
    target_width = max(len("target"), *(len(r.target) for r in rows))
    line = "  ".join(t.ljust(w) for t, w in zip(titles, widths, strict=True))
    print(f"{line}  {'target'.ljust(target_width)}  met")
    print("-" * (sum(widths) + 2 * len(widths) + target_width + 5))
    for r in rows:
        cells = "  ".join(getattr(r, name).ljust(w) for name, w in zip(titles, widths, strict=True))
        met = "" if r.met is None else ("yes" if r.met else "NO")
        print(f"{cells}  {r.target.ljust(target_width)}  {met}")


def machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; load average {load}"
    )


async def part_delivery(args: argparse.Namespace, rows: list[Row]) -> None:
    databases = Databases(args.database_url)
    backend = databases.backend
    runs = [
        ("engine, aiohttp (make_bot)", "deliver", "aiohttp"),
        ("engine, aiohttp, Bot.send_message", "deliver", "aiohttp-message"),
        ("engine, httpx (PTB default)", "deliver", "httpx"),
        ("engine, no HTTP (sleep)", "deliver", "none"),
        (f"naive loop, aiohttp, {args.naive} msgs", "naive", "aiohttp"),
    ]
    rates: dict[str, float] = {}
    wanted = set(args.runs.split(","))
    try:
        for label, phase, transport in runs:
            if (transport if phase == "deliver" else phase) not in wanted:
                continue
            url = await databases.new()
            chat_count = args.naive if phase == "naive" else args.chats
            await seed(url, chat_count=chat_count, page_count=5, delivery=True, plan=True)
            print(f"[delivery] {label} on {backend} ...", file=sys.stderr, flush=True)
            if transport == "none":
                result = await in_child(phase, url, "--transport", transport, profile=args.profile)
                result["messages"] = result["rows_sent"]
            else:
                async with fake_telegram() as (base_url, port):
                    extra = ["--base-url", base_url, "--transport", transport]
                    extra += ["--limit", str(args.naive)]
                    result = await in_child(phase, url, *extra, profile=args.profile)
                    stats = await server_stats(port)
                result.update(stats)
                result["messages"] = stats["delivered"]
            await databases.drop(url)
            rates[label] = result["messages"] / result["seconds"]
            rows += delivery_rows(f"{label} [{backend}]", result, engine=phase == "deliver")
    finally:
        await databases.close()
    if runs[0][0] not in rates or runs[-1][0] not in rates:
        return
    engine_rate, naive_rate = rates[runs[0][0]], rates[runs[-1][0]]
    rows.append(
        Row(
            "1 delivery",
            "engine / naive (aiohttp)",
            "throughput ratio",
            f"{engine_rate / naive_rate:.1f}x",
        )
    )


async def part_planning(args: argparse.Namespace, rows: list[Row]) -> None:
    bases: list[str | None] = [None]
    if args.database_url:
        bases.append(args.database_url)
    for base in bases:
        databases = Databases(base)
        try:
            url = await databases.new()
            print(f"[planning] seeding {args.plan_chats:,} chats on {databases.backend} ...",
                  file=sys.stderr, flush=True)  # fmt: skip
            await seed(
                url,
                chat_count=args.plan_chats,
                page_count=args.plan_pages,
                delivery=False,
                plan=False,
                voted_tags=args.plan_voted_tags,
                limit=args.plan_limit or None,
            )
            result = await in_child("plan", url, profile=args.profile)
        finally:
            await databases.close()
        run = f"plan_now, {args.plan_chats:,} chats x {args.plan_pages} pages [{databases.backend}]"
        if args.plan_voted_tags or args.plan_limit:
            run += f", {args.plan_voted_tags} voted tags, limit {args.plan_limit or 'off'}"
        rows += [
            Row(
                "2 planning",
                run,
                "digests (ledger rows) planned",
                f"{result['digests']:,} ({result['ledger_rows']:,})",
            ),
            Row(
                "2 planning",
                run,
                "time to plan all",
                f"{result['seconds']:.2f} s (CPU {result['cpu']:.2f} s)",
                f"<= {TARGET_PLAN_SECONDS:g} s",
                check(result["seconds"], at_most=TARGET_PLAN_SECONDS),
            ),
            Row(
                "2 planning",
                run,
                "peak RSS",
                f"{result['rss_mb']:.0f} MB",
                f"<= {TARGET_PLAN_RSS_MB:g} MB",
                check(result["rss_mb"], at_most=TARGET_PLAN_RSS_MB),
            ),
        ]


def contract_free_env() -> dict[str, str]:
    """This environment without any of the bot's variables (a ``.env`` is not read either:
    the commands run in a scratch directory)."""
    names = {name.upper() for name in Settings.model_fields}
    return {k: v for k, v in os.environ.items() if k not in names}


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a live process, from ``/proc`` (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def part_beside_run(args: argparse.Namespace, rows: list[Row]) -> None:
    """``digest --now`` beside a live ``trendbot run``: one rate budget for both."""
    from bot.leader import RENEW_SECONDS, live_services
    from bot.service import SHARE_SETTLE_SECONDS

    databases = Databases(args.database_url)
    if args.replicas > 1 and databases.backend != "postgresql":
        raise SystemExit("--replicas above 1 needs --database-url (PostgreSQL)")
    work = Path(tempfile.mkdtemp(prefix="beside-"))
    (work / "wiki").mkdir()
    runs: list[asyncio.subprocess.Process] = []
    try:
        url = await databases.new()
        # Each chat's next digest is hours away: only digest --now plans them.
        await seed(url, chat_count=args.beside_chats, page_count=5, delivery=True, plan=False)
        async with fake_telegram(rate=args.beside_cap) as (base_url, port):
            env = dict(
                contract_free_env(),
                DATABASE_URL=url,
                WIKI_SOURCES=str(work / "wiki"),
                TELEGRAM_BOT_TOKEN=TOKEN,
                TELEGRAM_API_BASE_URL=base_url,
                TELEGRAM_RATE_PER_SECOND=str(args.beside_cap),
                TELEGRAM_PAID_BROADCAST="true",  # a cap over 30 a second needs it
                HTTP_PORT="0",
                POLL_INTERVAL_SECONDS="3600",
                LOG_LEVEL="WARNING",
                PTB_TIMEDELTA="true",
            )
            with (work / "run.log").open("ab") as log:
                for _ in range(args.replicas):
                    runs.append(
                        await asyncio.create_subprocess_exec(
                            sys.executable,
                            "-m",
                            "bot",
                            "run",
                            env=env,
                            cwd=work,
                            stdin=asyncio.subprocess.DEVNULL,
                            stdout=asyncio.subprocess.DEVNULL,
                            stderr=log,
                        )
                    )
            engine = create_engine(url)
            deadline = time.monotonic() + 60
            while await live_services(engine) < args.replicas:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the runs did not start; see {work / 'run.log'}")
                await asyncio.sleep(0.2)
            await engine.dispose()
            if args.replicas > 1:  # until each replica counts the others in its share
                await asyncio.sleep(2 * RENEW_SECONDS + SHARE_SETTLE_SECONDS)
            print(f"[beside-run] digest --now beside {args.replicas} run(s) on "
                  f"{databases.backend} ...", file=sys.stderr, flush=True)  # fmt: skip
            cpu_before = sum(cpu_seconds(p.pid) for p in runs)
            started = time.monotonic()
            command = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                "digest",
                "--now",
                env=env,
                cwd=work,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
            )
            output = asyncio.create_task(command.communicate())
            samples: list[tuple[float, int]] = []
            async with httpx.AsyncClient() as client:
                while not output.done():
                    response = await client.get(f"http://127.0.0.1:{port}/_stats")
                    samples.append((time.monotonic(), int(response.json()["delivered"])))
                    await asyncio.sleep(0.1)
            out, _ = await output
            wall = time.monotonic() - started
            cpu = sum(cpu_seconds(p.pid) for p in runs) - cpu_before
            stats = await server_stats(port)
    finally:
        for process in runs:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
        for process in runs:
            try:
                await asyncio.wait_for(process.wait(), timeout=30)
            except TimeoutError:
                process.kill()
        await databases.close()
    lines = out.decode().strip().splitlines()
    delivered = stats["delivered"]
    during = [(t, n) for t, n in samples if 0 < n < delivered]
    rate = (
        (during[-1][1] - during[0][1]) / (during[-1][0] - during[0][0])
        if len(during) > 1 and during[-1][0] > during[0][0]
        else 0.0
    )
    first = next((t for t, n in samples if n > 0), started)
    run = f"digest --now beside {args.replicas} run(s) [{databases.backend}]"
    part = "3 beside run"
    cap = args.beside_cap
    rows += [
        Row(part, run, "command's summary", lines[-1] if lines else "(none)"),
        Row(part, run, "left to the run", "yes" if len(lines) > 1 else "NO: sent itself"),
        Row(part, run, "messages delivered", f"{delivered:,}"),
        Row(
            part,
            run,
            "messages/s, first to last (of cap)",
            f"{rate:.1f} ({rate / cap:.3f})",
            f">= {TARGET_SHARE_OF_CAP} of {cap}",
            check(rate / cap, at_least=TARGET_SHARE_OF_CAP),
        ),
        Row(part, run, "429s answered", str(stats["rate_limited"]), "0", not stats["rate_limited"]),
        Row(
            part,
            run,
            "limit violations (by rule)",
            f"{stats['limit_violations']} {stats['violations_by_rule'] or ''}".strip(),
            "0",
            not stats["limit_violations"],
        ),
        Row(part, run, "command start to first message", f"{first - started:.2f} s"),
        Row(part, run, "command wall time", f"{wall:.2f} s ({delivered / wall:.1f} msg/s)"),
        Row(part, run, "run CPU per message", f"{1000 * cpu / max(1, delivered):.3f} ms"),
    ]
    shutil.rmtree(work, ignore_errors=True)


async def measure(args: argparse.Namespace) -> None:
    rows: list[Row] = []
    if args.beside_run:
        await part_beside_run(args, rows)
        print_table(rows, header=f"machine: {machine()}")
        return
    if args.part in ("all", "delivery"):
        await part_delivery(args, rows)
    if args.part in ("all", "planning"):
        await part_planning(args, rows)
    print_table(rows, header=f"machine: {machine()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("all", "delivery", "planning"), default="all")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--chats", type=int, default=10_000)
    parser.add_argument("--naive", type=int, default=300)
    parser.add_argument(
        "--runs",
        default="aiohttp,aiohttp-message,httpx,none,naive",
        help="part 1 runs, comma-separated: aiohttp, aiohttp-message, httpx, none, naive",
    )
    parser.add_argument("--plan-chats", type=int, default=100_000)
    parser.add_argument("--plan-pages", type=int, default=50)
    parser.add_argument(
        "--plan-voted-tags", type=int, default=0, help="tags with vote weights, per chat"
    )
    parser.add_argument("--plan-limit", type=int, default=0, help="pages per digest; 0: none")
    parser.add_argument("--profile", default=None, help="write a cProfile of each run here")
    parser.add_argument(
        "--beside-run", action="store_true", help="part 3 alone: digest --now beside a live run"
    )
    parser.add_argument("--beside-chats", type=int, default=2_000)
    parser.add_argument("--beside-cap", type=int, default=300)
    parser.add_argument(
        "--replicas", type=int, default=1, help="part 3: trendbot run replicas (PostgreSQL)"
    )
    # A measured run in a child process (internal).
    parser.add_argument("--phase", choices=("deliver", "naive", "plan"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--transport", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("PTB_TIMEDELTA", "true")  # PTB 22: retry_after as a timedelta
    if args.phase:
        child(args)
    else:
        asyncio.run(measure(args))


if __name__ == "__main__":
    main()
