"""Fan-out benchmark: digests through the delivery engine to a rate-limited Bot API, and planning.

Part 1, delivery: at every cap of ``--caps`` (30, 200, 1,000 messages/s) and latency of
``--latencies`` (100 and 300 ms), cap x ``--seconds`` (15) chats each due a digest of 5 new
pages (planned with ``Planner.plan_now``), sent through ``bot.delivery.engine.Delivery`` and
``TelegramSender`` to ``tests/fakes/serve_telegram.py`` in a process of its own, which adds
the latency to every request and enforces the Bot API limits (1 message/s per chat, 30/s in
all; above 30/s the sender sends paid broadcasts, ``allow_paid_broadcast``, which the
server holds to the cap with ``--paid-rate``). Runs (``--runs``, default ``aiohttp,bare``):

* ``aiohttp``: the engine as deployed (``make_bot``: python-telegram-bot over aiohttp);
* ``bare``: the floor: the same messages (rendered before the clock starts) posted with
  aiohttp alone, paced at the engine's rate, one JSON body and one POST each, nothing
  recorded; it does not guard against bursts, so under load it is answered some 429s;
* ``aiohttp-message``: the engine, the sender going through ``Bot.send_message`` (which
  makes a ``telegram.Message`` of every answer) instead of posting ``sendMessage`` itself;
* ``httpx``: the engine with python-telegram-bot's default transport, ``HTTPXRequest``;
* ``none``: the engine with a sender that only sleeps the latency: the engine's own CPU
  (claims, chat records, rendering, pacing, records of sends);
* ``naive``: the loop that awaits each ``bot.send_message`` in turn, on ``--naive``
  messages (it runs at about 1/latency).

The rate is taken from when each send began, between 5 % and 95 % of them (start-up and
the last answers are not counted), and shown beside the densest second the server saw (the
most messages that arrived in any one second; it counts its limits exactly, so more than
the cap would be 429s); the engine's CPU per message is compared with the bare
sender's of the same cap and latency, in the same run. Each run gets a fresh database and
a fresh server; the counters (429s answered, limit violations, messages received) are read
from the server's ``GET /_stats``.

Part 2, planning: ``--plan-chats`` chats (1-3 of 14 tags each, some with a required or an
excluded tag; seeded in bulk with ``queueing.insert_many``) x ``--plan-pages`` new pages (1-3
tags each), on SQLite and, with ``--database-url``, on PostgreSQL (``--plan-stores``): the
time ``Planner.plan_now`` takes to plan every digest (``trendbot digest --now``); with
``--plan-due``, ``Planner.plan_due`` a day on, as the schedule plans (every chat is due, and
its next digest moves on too).
With ``--plan-voted-tags N`` every chat has weights (from -3 to 3) for N tags its votes
taught, drawn from the 14 page tags and 20 others, so its digest is ranked; with
``--plan-limit N`` every chat's digest is cut at its N best pages.

Part 3, ``--beside-run``: a live ``trendbot run`` (``--replicas`` of them on PostgreSQL) on
a database of ``--beside-chats`` chats (2,000; 0: cap x ``--seconds``) each with 5 new pages,
at every cap of ``--beside-cap`` (300; comma-separated) messages/s for the bot and the server
alike (paid broadcasts above 30/s, as in part 1) and latency of ``--latencies``, ``--repeat``
rounds of each; then ``trendbot digest --now`` plans every digest and, seeing the run, leaves
the sending to it.
Figures: 429s answered, limit violations, the rate from the first message to the last (the
server's count polled every 100 ms; the rate between the first poll that saw a message and
the last before the end), the command's wall time, and the CPU of the run processes. With
``--timeline [SECONDS]``, each round also prints the messages the server counted in every
second (or SECONDS) after the command started, with the CPU the command and the runs used
in it: where a round's rate went (the start of the fan-out, a stall, the end).

``--hog [N]`` (parts 1 and 3): N processes (1) spinning on a core each beside every measured
run (``bench/starved.py``), as another CPU-bound process on the machine would: the bot gets
its core late. Part 1 then also sets each send's stamps as the bot took them (let go, and
written: the stamp the pace counts) beside the server's arrival of the same request: the
densest second by each, and how much later than its write stamp each request arrived.

Part 4, ``--part slack``: Slack digests as each page's collapsible container with its
feedback buttons, against today's sections and buttons: ``--slack-digests`` (2,000) digests
of 5 pages (one message) and of 12 (a summary and thread replies), drawn from 60 pages as a
day's digests share their pages, each rendered and its ``chat.postMessage`` body encoded as
the sender sends it (the containers' ``Outgoing`` also carries the sections to fall back
to); the CPU per message of each, in ``--slack-rounds`` (5) alternating rounds in one
process, and the ratio of their medians (target at most 1.5x). It runs in this process,
not a child: the figure that counts is the ratio of two runs side by side.

Every measured run is a child process of its own, so its CPU time (``time.process_time``)
and peak RSS are the bot's alone; setting up the data is not measured. Figures depend on
the machine being otherwise idle: the table's first line gives its load average.

    .venv/bin/python bench/fanout.py [--part all|delivery|planning|slack] [--database-url URL]
        [--runs aiohttp,bare,aiohttp-message,httpx,none,naive] [--caps 30,200,1000]
        [--latencies 100,300] [--seconds 15] [--chats N] [--naive 300]
        [--plan-chats 100000] [--plan-pages 50] [--plan-voted-tags 20] [--plan-limit 10]
        [--plan-stores sqlite,postgresql] [--profile DIR] [--hog [N]]
    .venv/bin/python bench/fanout.py --beside-run [--database-url URL] [--replicas N]
        [--beside-chats 2000] [--beside-cap 30,200,1000] [--latencies 100,300] [--repeat 3]
        [--timeline [SECONDS]] [--hog [N]]

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
import statistics
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
import starved  # bench/starved.py, beside this file
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from telegram import Bot
from telegram.request import HTTPXRequest

from bot import render
from bot.channels.registry import settings_class
from bot.channels.slack import blocks as slack_render
from bot.channels.slack.payload import payload as slack_payload
from bot.channels.telegram import client as tg_channel
from bot.channels.telegram.client import close_bot, make_bot
from bot.channels.telegram.payload import payload as telegram_payload
from bot.channels.telegram.sender import TelegramSender, send_outgoing
from bot.delivery.engine import Delivery
from bot.delivery.pacing import written_at
from bot.delivery.sender import Attempt, BaseSender
from bot.matching.planner import Planner
from bot.models import (
    ChatSettings,
    Digest,
    DigestItem,
    Filter,
    Outgoing,
    Page,
    PageText,
    Platform,
)
from bot.rules import digest as digest_stage
from bot.rules import filters
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store import chats as chat_store
from bot.store import feedback, outbox, queueing
from bot.store import pages as page_store
from bot.store.engine import create_engine, upgrade
from bot.store.schema import chat_pages, chat_tags, chat_weights, chats
from bot.store.schema import outbox as outbox_table
from bot.util import settle_heap
from tests import scratch

# The settings the CLI reads: the core's and every platform's section.
Settings = settings_class()

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CAPS = (30, 200, 1_000)  # messages/s: the sender's rate_per_second and the server's cap
LATENCIES = (0.100, 0.300)  # seconds the server adds to every request
FREE_RATE = 30  # Telegram's free broadcast rate; a cap above it sends paid broadcasts
RUN_SECONDS = 15.0  # each delivery run sends cap x this many messages
MEASURED_FROM, MEASURED_TO = 0.05, 0.95  # the share of the messages the rate is taken over
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
SERVER_NICE = -10  # the fake server's scheduling priority, when the bench may raise it

TARGET_SHARE_OF_CAP = 0.95
TARGET_CPU_MS = 0.6
TARGET_CPU_RATIO = 2.0  # the engine's CPU per message against the bare sender's
TARGET_SLACK_RATIO = 1.5  # container digests' CPU per message against today's sections'
TARGET_PLAN_SECONDS = 10.0  # up to 100,000 chats
TARGET_PLAN_RSS_MB = 500.0
LARGE_PLAN_CHATS = 1_000_000  # and from a million chats:
TARGET_LARGE_PLAN_SECONDS = 60.0
TARGET_LARGE_PLAN_RSS_MB = 1_000.0


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
    """The chats, their tags and weights in bulk (``queueing.insert_many``: one ``unnest``
    insert per 10,000 rows on PostgreSQL), so a million chats seed in about a minute."""
    now = page_store.utcnow()
    async with engine.begin() as conn:
        cursor = await chat_store.latest_event_id(conn)
        rows = [
            (
                str(FIRST_CHAT_ID + i),
                f"{rng.randint(6, 10):02d}:00",
                rng.choice(TIMEZONES),
                "ko" if i % 5 == 0 else "en",
                filters.format_filter(f),
                now + dt.timedelta(hours=rng.randint(1, 23)),
            )
            for i, f in enumerate(chat_filters)
        ]
        await queueing.insert_many(
            conn,
            chats,
            ("chat_id", "digest_time", "timezone", "lang", "filter", "next_digest_at"),
            rows,
            same={
                "platform": Platform.TELEGRAM.value,
                "kind": "private",
                "title": None,
                "state": "active",
                "mode": "daily",
                "cursor": cursor,
                "inactive_reason": None,
                "inactive_code": None,
                "created_at": now,
                "updated_at": now,
                "digest_limit": limit,
                "weekday": 0,  # the column's default
            },
        )
        del rows
        pks = dict((await conn.execute(select(chats.c.chat_id, chats.c.id))).tuples().all())
        tag_rows = [
            (pks[str(FIRST_CHAT_ID + i)], tag, kind)
            for i, f in enumerate(chat_filters)
            for kind, tags in (
                ("any", f.any_of),
                ("required", f.required),
                ("excluded", f.excluded),
            )
            for tag in sorted(tags)
        ]
        await queueing.insert_many(conn, chat_tags, ("chat_pk", "tag", "kind"), tag_rows, same={})
        del tag_rows
        if voted_tags:
            votes_rng = random.Random(len(chat_filters))  # the other data stay as without
            vocabulary = [*TAGS, *(f"topic-{n:02d}" for n in range(20))]
            weight_rows = [
                (
                    pk,
                    feedback.encode(
                        {
                            tag: votes_rng.choice([-1, 1]) * votes_rng.uniform(0.1, 3.0)
                            for tag in votes_rng.sample(vocabulary, voted_tags)
                        }
                    ),
                )
                for pk in pks.values()
            ]
            await queueing.insert_many(
                conn, chat_weights, ("chat_pk", "weights"), weight_rows, same={"based_at": now}
            )


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
async def fake_telegram(
    *, rate: int, latency: float = 0.100, paid_rate: int | None = None
) -> AsyncIterator[tuple[str, int]]:
    """``serve_telegram.py`` with Telegram's limits and latency: (base_url, port). Free
    sends are held to ``rate`` a second, paid broadcasts to ``paid_rate`` (default: its own)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests" / "fakes" / "serve_telegram.py"),
        "--token",
        TOKEN,
        "--latency",
        str(latency),
        "--enforce-limits",
        "--global-rate",
        str(rate),
        *(("--paid-rate", str(paid_rate)) if paid_rate else ()),
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


async def server_arrivals(port: int) -> list[list[Any]]:
    """Every send the server counted: ``[chat_id, arrived, status]`` (``GET /_arrivals``)."""
    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.get(f"http://127.0.0.1:{port}/_arrivals")
        response.raise_for_status()
        result: list[list[Any]] = response.json()
        return result


async def server_stats(port: int) -> dict[str, Any]:
    async with httpx.AsyncClient() as client:
        response = await client.get(f"http://127.0.0.1:{port}/_stats")
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result


# ------------------------------------------------------------------------------ child runs


class SleepSender(BaseSender):
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

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
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

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        sent = await send_outgoing(self._bot, chat_id=int(chat_id), message=message)
        return str(sent.message_id)


class Stamped(BaseSender):
    """A sender that notes when each send begins (a list append): the rate is taken from
    these, between ``MEASURED_FROM`` and ``MEASURED_TO`` of the messages, so the start-up
    and the last replies are not counted."""

    def __init__(
        self, sender: Any, starts: list[float], sends: list[tuple[str, float, float]]
    ) -> None:
        self._sender = sender
        self._starts = starts
        self._sends = sends
        self.platform = sender.platform

    @property
    def rate_per_second(self) -> float | None:
        rate: float | None = self._sender.rate_per_second
        return rate

    def interval(self, chat: ChatSettings) -> float:
        seconds: float = self._sender.interval(chat)
        return seconds

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        let_go = time.monotonic()
        self._starts.append(let_go)
        ref: str | None = await self._sender.send(chat_id, message, thread=thread)
        # When the request was written, as the pace counts it (bench/starved.py compares it
        # with the server's arrival).
        self._sends.append((chat_id, let_go, written_at(let_go)))
        return ref


def steady_rate(starts: list[float]) -> float:
    """Sends a second between ``MEASURED_FROM`` and ``MEASURED_TO`` of them."""
    if len(starts) < 20:
        return 0.0
    times = sorted(starts)
    first, last = int(MEASURED_FROM * len(times)), int(MEASURED_TO * len(times)) - 1
    return (last - first) / (times[last] - times[first]) if times[last] > times[first] else 0.0


async def run_deliver(args: argparse.Namespace) -> dict[str, Any]:
    engine = create_engine(args.url)
    bot: Bot | None = None
    paid = args.cap > FREE_RATE
    if args.transport == "none":
        sender: Any = SleepSender(rate=args.cap, latency=args.latency)
    else:
        bot = httpx_bot(args.base_url) if args.transport == "httpx" else default_bot(args.base_url)
        if args.transport == "aiohttp-message":
            sender = MessageSender(bot, rate_per_second=args.cap, paid_broadcast=paid)
        else:
            rich = "auto" if args.transport == "aiohttp-rich" else "off"
            sender = TelegramSender(bot, rate_per_second=args.cap, paid_broadcast=paid, rich=rich)
    starts: list[float] = []
    sends: list[tuple[str, float, float]] = []
    delivery = Delivery(engine=engine, senders={Platform.TELEGRAM: Stamped(sender, starts, sends)})
    settle_heap()  # as the command line does once its start-up is over
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
    return {
        "rows_sent": delivery.sent,
        "seconds": elapsed,
        "cpu": cpu,
        "statuses": statuses,
        "rate": steady_rate(starts),
        "window": delivery.window,
        "sends": sends,
    }


async def due_messages(url: str) -> list[tuple[int, Outgoing]]:
    """Every message the outbox holds, rendered as the engine renders it: (chat id, part)."""
    engine = create_engine(url)
    async with engine.begin() as conn:
        rows = await outbox.claim(
            conn,
            worker="bare",
            limit=1_000_000,
            now=page_store.utcnow(),
            platforms=[Platform.TELEGRAM.value],
        )
        records = await chat_store.get_many(conn, sorted({row.chat_pk for row in rows}))
        page_ids = {int(page_id) for row in rows for page_id, _ in row.payload["pages"]}
        loaded = await page_store.load_pages(conn, sorted(page_ids))
    await engine.dispose()
    messages: list[tuple[int, Outgoing]] = []
    for row in rows:
        chat = records[row.chat_pk].chat
        built = digest_stage.build_digest(
            lang=chat.lang,
            filter=chat.filter,
            candidates=[(loaded[int(p)], bool(u)) for p, u in row.payload["pages"]],
            today=dt.date.fromisoformat(row.payload["date"]),
        )
        assert built is not None
        messages += [
            (int(chat.chat_id), part) for part in render.digest_messages(chat.platform, built)
        ]
    return messages


async def run_bare(args: argparse.Namespace) -> dict[str, Any]:
    """The floor: the same messages posted with aiohttp alone, paced at the engine's rate
    (``PACE_HEADROOM`` x the cap), as many in flight as it takes. Per message: one JSON
    body, one POST, one JSON answer read for its id (with orjson, as the engine's sender);
    nothing else."""
    import aiohttp
    import orjson

    from bot.delivery.engine import MAX_IN_FLIGHT
    from bot.delivery.pacing import PACE_HEADROOM

    messages = await due_messages(args.url)
    paid = args.cap > FREE_RATE
    url = f"{args.base_url}{TOKEN}/sendMessage"  # python-telegram-bot's base_url + token
    starts: list[float] = []
    failed = 0
    slots = asyncio.Semaphore(MAX_IN_FLIGHT)
    headers = {"Content-Type": "application/json"}

    async def post(session: aiohttp.ClientSession, chat_id: int, message: Outgoing) -> None:
        nonlocal failed
        body: dict[str, Any] = {
            "chat_id": chat_id,
            "text": message.text,
            "link_preview_options": {"is_disabled": True},
        }
        if not message.plain:
            body["parse_mode"] = "HTML"
        if markup := telegram_payload(message).markup:
            body["reply_markup"] = markup
        if paid:
            body["allow_paid_broadcast"] = True
        try:
            async with session.post(url, data=orjson.dumps(body), headers=headers) as response:
                answer = orjson.loads(await response.read())
            if not answer.get("ok") or not answer["result"]["message_id"]:
                failed += 1
        finally:
            slots.release()

    settle_heap()  # the same process settings as the engine's run
    cpu, started = time.process_time(), time.monotonic()
    interval = 1.0 / (args.cap * PACE_HEADROOM)
    connector = aiohttp.TCPConnector(limit=MAX_IN_FLIGHT)
    async with aiohttp.ClientSession(connector=connector) as session:
        tasks = []
        for i, (chat_id, message) in enumerate(messages):
            due = started + i * interval
            now = time.monotonic()
            if due > now:
                await asyncio.sleep(due - now)
            await slots.acquire()
            starts.append(time.monotonic())
            tasks.append(asyncio.create_task(post(session, chat_id, message)))
        await asyncio.gather(*tasks)
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    return {
        "rows_sent": len(messages),
        "seconds": elapsed,
        "cpu": cpu,
        "rate": steady_rate(starts),
        "failed": failed,
    }


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
    settle_heap()  # as ``trendbot digest`` does before it plans
    cpu, started = time.process_time(), time.monotonic()
    if args.plan_due:  # as the schedule plans: a day on, every chat is due
        written = await planner.plan_due(now=page_store.utcnow() + dt.timedelta(days=1))
    else:
        written = await planner.plan_now()
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    async with engine.connect() as conn:
        ledger = (await conn.execute(select(func.count()).select_from(chat_pages))).scalar_one()
    await engine.dispose()
    return {"digests": written, "ledger_rows": ledger, "seconds": elapsed, "cpu": cpu}


def child(args: argparse.Namespace) -> None:
    run = {"deliver": run_deliver, "bare": run_bare, "naive": run_naive, "plan": run_plan}[
        args.phase
    ]
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    result = asyncio.run(run(args))
    if profiler is not None:
        profiler.disable()
        name = f"{args.phase}-{args.transport or ''}-{args.cap}-{args.latency * 1000:.0f}ms-"
        name += make_url(args.url).get_backend_name()
        Path(args.profile).mkdir(parents=True, exist_ok=True)
        profiler.dump_stats(str(Path(args.profile) / f"{name}.prof"))
    result["rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def peak_rss_mb() -> float:
    """This process's peak resident memory since it started (``VmHWM``, Linux).

    Not ``ru_maxrss``: Linux carries that over an ``exec``, so a child started by the bench
    after seeding a million chats reported the bench's own size (864 MB) as its peak.
    """
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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


def delivery_rows(
    run: str, result: dict[str, Any], *, cap: int, engine: bool, floor: bool = False
) -> list[Row]:
    """``engine``: the targets apply; ``floor``: the bare sender, whose rate is checked too."""
    messages = result["messages"]
    rate = result.get("rate") or (messages / result["seconds"] if result["seconds"] else 0.0)
    cpu_ms = 1000 * result["cpu"] / messages if messages else 0.0
    part = "1 delivery"
    paced = engine or floor
    rows = [
        Row(part, run, "messages delivered", f"{messages:,} in {result['seconds']:.1f} s"),
        Row(
            part,
            run,
            "messages/s (share of cap)",
            f"{rate:.1f} ({rate / cap:.3f})",
            f">= {TARGET_SHARE_OF_CAP} of {cap}" if paced else "",
            check(rate / cap, at_least=TARGET_SHARE_OF_CAP) if paced else None,
        ),
    ]
    if "densest_second" in result:
        densest = result["densest_second"]
        rows.append(
            Row(
                part,
                run,
                "densest 1-s window (share of cap)",
                f"{densest} ({densest / cap:.3f})",
                f"<= {cap}",
                densest <= cap,
            )
        )
    if stamps := result.get("stamps"):
        rows += [
            Row(
                part,
                run,
                "densest 1-s by the bot's write stamps / by arrival",
                f"{stamps['densest_by_write']} / {stamps['densest_by_arrival']}"
                f" ({stamps['lagged_into_densest']} of it written before it began)",
            ),
            Row(
                part,
                run,
                "arrival - write stamp, ms (p50, p99, max)",
                f"{stamps['lag_p50_ms']:.1f}, {stamps['lag_p99_ms']:.1f}, "
                f"{stamps['lag_max_ms']:.1f}; {stamps['late']} over "
                f"{starved.LATE_SECONDS * 1000:.0f} ms",
            ),
            Row(
                part,
                run,
                "write stamp - let go, ms (p99, max)",
                f"{stamps['write_delay_p99_ms']:.1f}, {stamps['write_delay_max_ms']:.1f}",
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
            "CPU per message",
            f"{cpu_ms:.3f} ms",
            f"<= {TARGET_CPU_MS} ms" if engine else "",
            check(cpu_ms, at_most=TARGET_CPU_MS) if engine else None,
        ),
        Row(part, run, "peak RSS", f"{result['rss_mb']:.0f} MB"),
    ]
    if "window" in result:
        rows.append(Row(part, run, "in-flight window at the end", str(result["window"])))
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


DELIVERY_RUNS = {
    "aiohttp": ("deliver", "engine, aiohttp (make_bot)"),
    "aiohttp-rich": ("deliver", "engine, aiohttp, rich digests (sendRichMessage)"),
    "aiohttp-message": ("deliver", "engine, aiohttp, Bot.send_message"),
    "httpx": ("deliver", "engine, httpx (PTB default)"),
    "none": ("deliver", "engine, no HTTP (sleep)"),
    "bare": ("bare", "bare aiohttp sender (floor)"),
    "naive": ("naive", "naive loop, aiohttp"),
}


def combo_label(cap: int, latency: float) -> str:
    """How the report names a cap and latency: "cap 1,000/s paid, 100 ms"."""
    paid = " paid" if cap > FREE_RATE else ""
    return f"cap {cap:,}/s{paid}, {latency * 1000:.0f} ms"


async def delivery_round(
    args: argparse.Namespace,
    databases: Databases,
    wanted: list[str],
    cap: int,
    latency: float,
    rows: list[Row],
    tag: str,
) -> tuple[dict[str, float], dict[str, float]]:
    """Each run of ``wanted`` once at ``cap`` and ``latency``, each on a fresh database and a
    fresh server; their rows, and each run's CPU per message (ms) and messages a second."""
    backend = databases.backend
    combo = combo_label(cap, latency)
    cpu: dict[str, float] = {}
    rates: dict[str, float] = {}
    for name in wanted:
        phase, label = DELIVERY_RUNS[name]
        url = await databases.new()
        chat_count = args.naive if phase == "naive" else round(cap * args.seconds)
        if args.chats:
            chat_count = args.chats if phase != "naive" else chat_count
        await seed(url, chat_count=chat_count, page_count=5, delivery=True, plan=True)
        print(f"[delivery] {label}, {combo}{tag} on {backend} ({chat_count:,} chats) ...",
              file=sys.stderr, flush=True)  # fmt: skip
        extra = ["--transport", name, "--cap", str(cap), "--latency", str(latency)]
        if name == "none":
            result = await in_child(phase, url, *extra, profile=args.profile)
            result["messages"] = result["rows_sent"]
        else:
            async with fake_telegram(rate=min(cap, FREE_RATE), latency=latency, paid_rate=cap) as (
                base_url,
                port,
            ):
                extra += ["--base-url", base_url, "--limit", str(args.naive)]
                async with starved.hogs(args.hog):
                    result = await in_child(phase, url, *extra, profile=args.profile)
                stats = await server_stats(port)
                if "sends" in result:
                    stats["stamps"] = starved.compare(
                        result.pop("sends"), await server_arrivals(port), cap=cap
                    )
            result.update(stats)
            result["messages"] = stats["delivered"]
        await databases.drop(url)
        messages = max(1, result["messages"])
        cpu[name] = 1000 * result["cpu"] / messages
        rates[name] = messages / result["seconds"]
        rows += delivery_rows(
            f"{label}, {combo} [{backend}]{tag}",
            result,
            cap=cap,
            engine=phase == "deliver" and name != "none",
            floor=phase == "bare",
        )
    return cpu, rates


def ratio_rows(run: str, ratios: list[tuple[float, float, float]]) -> list[Row]:
    """The engine's CPU per message against the bare sender's: one round's, or the median of
    several rounds (each pair run back to back, so a machine that drifts over the rounds
    moves both), with every round's figure beside it."""
    if len(ratios) == 1:
        ratio, engine, bare = ratios[0]
        shown = f"{ratio:.2f}x ({engine:.3f} / {bare:.3f} ms)"
        return [
            Row(
                "1 delivery",
                run,
                "CPU per message, ratio",
                shown,
                f"<= {TARGET_CPU_RATIO:g}x",
                check(ratio, at_most=TARGET_CPU_RATIO),
            )
        ]
    ratio = statistics.median(r for r, _, _ in ratios)
    engine = statistics.median(e for _, e, _ in ratios)
    return [
        Row(
            "1 delivery",
            run,
            f"CPU per message, ratio, median of {len(ratios)}",
            f"{ratio:.2f}x ({', '.join(f'{r:.2f}' for r, _, _ in ratios)})",
            f"<= {TARGET_CPU_RATIO:g}x",
            check(ratio, at_most=TARGET_CPU_RATIO),
        ),
        Row(
            "1 delivery",
            run,
            f"engine CPU per message, median of {len(ratios)}",
            f"{engine:.3f} ms ({', '.join(f'{e:.3f}' for _, e, _ in ratios)})",
            f"<= {TARGET_CPU_MS} ms",
            check(engine, at_most=TARGET_CPU_MS),
        ),
    ]


async def part_delivery(args: argparse.Namespace, rows: list[Row]) -> None:
    """Every run of ``--runs`` at every cap of ``--caps`` and latency of ``--latencies``,
    each on a fresh database and a fresh server."""
    databases = Databases(args.database_url)
    backend = databases.backend
    wanted = [name for name in args.runs.split(",") if name]
    unknown = set(wanted) - DELIVERY_RUNS.keys()
    if unknown:
        raise SystemExit(f"unknown --runs: {', '.join(sorted(unknown))}")
    if args.repeat < 1:
        raise SystemExit(f"--repeat must be 1 or more, not {args.repeat}")
    caps = [int(c) for c in args.caps.split(",")]
    latencies = [float(ms) / 1000 for ms in args.latencies.split(",")]
    plotted: dict[str, dict[str, list[float]]] = {}  # combo -> figure -> each round's
    try:
        for cap in caps:
            for latency in latencies:
                combo = combo_label(cap, latency)
                ratios: list[tuple[float, float, float]] = []  # (ratio, engine, bare)
                for repeat in range(args.repeat):
                    tag = f" #{repeat + 1}" if args.repeat > 1 else ""
                    cpu, rates = await delivery_round(
                        args, databases, wanted, cap, latency, rows, tag
                    )
                    figures = plotted.setdefault(combo, {})
                    for name in ("aiohttp", "bare"):
                        if name in rates:
                            figures.setdefault(f"{name} rate", []).append(rates[name] / cap)
                            figures.setdefault(f"{name} cpu", []).append(cpu[name])
                    if "aiohttp" in cpu and "bare" in cpu and cpu["bare"]:
                        ratios.append((cpu["aiohttp"] / cpu["bare"], cpu["aiohttp"], cpu["bare"]))
                run = f"engine / bare, {combo} [{backend}]"
                if ratios:
                    rows += ratio_rows(run, ratios)
                if "aiohttp" in rates and "naive" in rates:
                    rows.append(
                        Row(
                            "1 delivery",
                            f"engine / naive, {combo} [{backend}]",
                            "throughput ratio",
                            f"{rates['aiohttp'] / rates['naive']:.1f}x",
                        )
                    )
                rows.append(Row("1 delivery", combo, "load average after", load_average()))
        if args.plots:
            write_delivery_plots(Path(args.plots), plotted, backend=backend)
    finally:
        await databases.close()


def write_delivery_plots(
    directory: Path, plotted: dict[str, dict[str, list[float]]], *, backend: str
) -> None:
    """The delivery part as two charts: rate ÷ cap at each cap and latency, and the CPU per
    message beside the bare sender's (medians of the rounds)."""
    from plots import bar_chart

    combos = list(plotted)

    def medians(figure: str) -> list[float]:
        return [statistics.median(plotted[c].get(figure) or [0.0]) for c in combos]

    bar_chart(
        directory / f"delivery-rate-{backend}.svg",
        title=f"Delivery: rate ÷ cap ({backend})",
        categories=combos,
        series={"engine": medians("aiohttp rate"), "bare sender": medians("bare rate")},
        y_label="share of the cap",
        reference=TARGET_SHARE_OF_CAP,
        reference_label=f"target {TARGET_SHARE_OF_CAP}",
        y_min=0.8,
    )
    bar_chart(
        directory / f"delivery-cpu-{backend}.svg",
        title=f"Delivery: CPU per message ({backend})",
        categories=combos,
        series={"engine": medians("aiohttp cpu"), "bare sender": medians("bare cpu")},
        y_label="ms per message",
    )
    print(f"plots written to {directory}/delivery-*-{backend}.svg")


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


async def part_planning(args: argparse.Namespace, rows: list[Row]) -> None:
    stores = set(args.plan_stores.split(","))
    bases: list[str | None] = [None] if "sqlite" in stores else []
    if args.database_url and "postgresql" in stores:
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
            print(f"[planning] planning on {databases.backend}; load average {load_average()}",
                  file=sys.stderr, flush=True)  # fmt: skip
            how = ["--plan-due"] if args.plan_due else []
            result = await in_child("plan", url, *how, profile=args.profile)
            print(f"[planning] {databases.backend}: {result['seconds']:.1f} s "
                  f"(CPU {result['cpu']:.1f} s), {result['rss_mb']:.0f} MB",
                  file=sys.stderr, flush=True)  # fmt: skip
            rows.append(Row("2 planning", databases.backend, "load average after", load_average()))
        finally:
            await databases.close()
        large = args.plan_chats >= LARGE_PLAN_CHATS
        seconds = TARGET_LARGE_PLAN_SECONDS if large else TARGET_PLAN_SECONDS
        rss = TARGET_LARGE_PLAN_RSS_MB if large else TARGET_PLAN_RSS_MB
        how = "plan_due" if args.plan_due else "plan_now"
        run = f"{how}, {args.plan_chats:,} chats x {args.plan_pages} pages [{databases.backend}]"
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
                f"<= {seconds:g} s",
                check(result["seconds"], at_most=seconds),
            ),
            Row(
                "2 planning",
                run,
                "peak RSS",
                f"{result['rss_mb']:.0f} MB",
                f"<= {rss:g} MB",
                check(result["rss_mb"], at_most=rss),
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
    """``digest --now`` beside a live ``trendbot run`` at every cap of ``--beside-cap`` and
    latency of ``--latencies``, ``--repeat`` rounds of each."""
    if args.repeat < 1:
        raise SystemExit(f"--repeat must be 1 or more, not {args.repeat}")
    for cap in (int(c) for c in str(args.beside_cap).split(",")):
        for latency in (float(ms) / 1000 for ms in args.latencies.split(",")):
            for repeat in range(args.repeat):
                tag = f" #{repeat + 1}" if args.repeat > 1 else ""
                await beside_round(args, rows, cap=cap, latency=latency, tag=tag)
            rows.append(Row("3 beside run", combo_label(cap, latency), "load average after",
                            load_average()))  # fmt: skip


async def beside_round(
    args: argparse.Namespace, rows: list[Row], *, cap: int, latency: float, tag: str
) -> None:
    """``digest --now`` beside a live ``trendbot run``: one rate budget for both."""
    from bot.ops.leader import RENEW_SECONDS, live_services
    from bot.service import SHARE_SETTLE_SECONDS

    databases = Databases(args.database_url)
    if args.replicas > 1 and databases.backend != "postgresql":
        raise SystemExit("--replicas above 1 needs --database-url (PostgreSQL)")
    work = Path(tempfile.mkdtemp(prefix="beside-"))
    (work / "wiki").mkdir()
    runs: list[asyncio.subprocess.Process] = []
    chat_count = args.beside_chats or round(cap * args.seconds)
    paid = cap > FREE_RATE
    try:
        url = await databases.new()
        # Each chat's next digest is hours away: only digest --now plans them.
        await seed(url, chat_count=chat_count, page_count=5, delivery=True, plan=False)
        async with fake_telegram(rate=min(cap, FREE_RATE), latency=latency, paid_rate=cap) as (
            base_url,
            port,
        ):
            env = dict(
                contract_free_env(),
                DATABASE_URL=url,
                WIKI_SOURCES=str(work / "wiki"),
                TELEGRAM_BOT_TOKEN=TOKEN,
                TELEGRAM_API_BASE_URL=base_url,
                TELEGRAM_RATE_PER_SECOND=str(cap),
                # A cap over 30 a second needs paid broadcasts, which the server holds to it.
                TELEGRAM_PAID_BROADCAST="true" if paid else "false",
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
            print(f"[beside-run] digest --now beside {args.replicas} run(s), "
                  f"{combo_label(cap, latency)}{tag} on {databases.backend} ({chat_count:,} "
                  "chats) ...", file=sys.stderr, flush=True)  # fmt: skip
            async with starved.hogs(args.hog):  # --hog: a core taken while it runs
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
                cpus: list[tuple[float, float]] = []  # the command's and the runs' CPU seconds
                async with httpx.AsyncClient() as client:
                    while not output.done():
                        response = await client.get(f"http://127.0.0.1:{port}/_stats")
                        samples.append((time.monotonic(), int(response.json()["delivered"])))
                        with contextlib.suppress(OSError):
                            cpus.append(
                                (cpu_seconds(command.pid), sum(cpu_seconds(p.pid) for p in runs))
                            )
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
    if args.timeline is not None:
        print_timeline(samples, cpus, started=started, cap=cap, step=args.timeline)
    run = (
        f"digest --now beside {args.replicas} run(s), {combo_label(cap, latency)} "
        f"[{databases.backend}]{tag}"
    )
    part = "3 beside run"
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
        Row(
            part,
            run,
            "densest 1-s window (share of cap)",
            f"{stats['densest_second']} ({stats['densest_second'] / cap:.3f})",
            f"<= {cap}",
            stats["densest_second"] <= cap,
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


def print_timeline(
    samples: list[tuple[float, int]],
    cpus: list[tuple[float, float]],
    *,
    started: float,
    cap: int,
    step: float,
) -> None:
    """Messages delivered in each ``step`` seconds after the command started, as a share of
    the cap, with the CPU the command and the runs used in it."""
    print("[timeline] second: delivered (share of cap), CPU: command, runs", file=sys.stderr)
    mark, count, at = started, 0, 0
    for i, (t, n) in enumerate(samples[: len(cpus)]):
        if t - mark >= step:
            rate = (n - count) / (t - mark)
            command = cpus[i][0] - cpus[at][0]
            run = cpus[i][1] - cpus[at][1]
            print(f"[timeline] {mark - started:5.1f}: {n - count:5d} ({rate / cap:.3f}), "
                  f"CPU {command:.2f} s, {run:.2f} s", file=sys.stderr)  # fmt: skip
            mark, count, at = t, n, i


def slack_digests(count: int, *, pages: int, rng: random.Random) -> list[Digest]:
    """``count`` digests of ``pages`` pages each, drawn from one pool of 60 pages."""
    pool = [
        Page(
            source="wiki",
            key=f"papers/2026/{i:04d}",
            texts=(
                PageText(
                    "en",
                    " ".join(rng.choice(WORDS).title() for _ in range(rng.randint(3, 9))),
                    " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) + ".",
                ),
            ),
            tags=tuple(rng.sample(TAGS, rng.randint(1, 3))),
            url=f"https://wiki.example.org/papers/2026/{i:04d}",
            arxiv=f"2608.{i:05d}",
            created=dt.date(2026, 8, 29),
        )
        for i in range(60)
    ]
    digests = []
    for _ in range(count):
        chosen = rng.sample(range(len(pool)), pages)
        items = tuple(
            DigestItem(page=pool[i], matched=pool[i].tags[:1], page_id=1 + i) for i in chosen
        )
        digests.append(
            Digest(lang=rng.choice(("en", "ko")), date=dt.date(2026, 12, 3), items=items)
        )
    return digests


def slack_bodies(digests: list[Digest], *, containers: bool) -> int:
    """Render ``digests`` and encode each message's blocks as the sender posts them."""
    messages = 0
    for d in digests:
        if containers:
            parts = [slack_payload(m).blocks for m in render.digest_messages(Platform.SLACK, d)]
        else:
            summary, replies = slack_render.render_digest(d)
            parts = [summary.blocks, *(r.blocks for r in replies)]
        for blocks in parts:
            json.dumps(list(blocks))
            messages += 1
    return messages


async def part_slack(args: argparse.Namespace, rows: list[Row]) -> None:
    rng = random.Random(7)
    for pages in (5, 12):
        digests = slack_digests(args.slack_digests, pages=pages, rng=rng)
        slack_bodies(digests[:50], containers=False)  # warm the caches both share
        slack_bodies(digests[:50], containers=True)
        cpu: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.slack_rounds):
            for containers in (False, True):
                started = time.process_time()
                messages = slack_bodies(digests, containers=containers)
                cpu[containers].append(1000 * (time.process_time() - started) / messages)
        plain, rich = statistics.median(cpu[False]), statistics.median(cpu[True])
        run = f"{pages} pages, {len(digests)} digests"
        rows += [
            Row("slack", run, "sections: CPU per message", f"{plain:.3f} ms"),
            Row("slack", run, "containers: CPU per message", f"{rich:.3f} ms"),
            Row(
                "slack",
                run,
                "containers / sections",
                f"{rich / plain:.2f}x",
                f"<= {TARGET_SLACK_RATIO:g}x",
                check(rich / plain, at_most=TARGET_SLACK_RATIO),
            ),
        ]


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
    if args.part in ("all", "slack"):
        await part_slack(args, rows)
    print_table(rows, header=f"machine: {machine()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("all", "delivery", "planning", "slack"), default="all")
    parser.add_argument("--slack-digests", type=int, default=2_000)
    parser.add_argument("--slack-rounds", type=int, default=5)
    parser.add_argument("--database-url", default=None)
    parser.add_argument(
        "--chats", type=int, default=0, help="chats a delivery run; 0: cap x --seconds"
    )
    parser.add_argument("--seconds", type=float, default=RUN_SECONDS)
    parser.add_argument(
        "--hog",
        nargs="?",
        type=int,
        const=1,
        default=0,
        metavar="N",
        help="N processes (1) spinning on a core each beside every measured run",
    )
    parser.add_argument("--caps", default=",".join(str(c) for c in CAPS))
    parser.add_argument(
        "--latencies", default=",".join(f"{1000 * s:g}" for s in LATENCIES), help="in ms"
    )
    parser.add_argument("--naive", type=int, default=300)
    parser.add_argument(
        "--plots",
        default=None,
        metavar="DIR",
        help="write the delivery part's charts (SVG) into DIR, e.g. docs/benchmarks",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="parts 1 and 3: rounds of the runs at each cap and latency; part 1's ratio is "
        "their median",
    )
    parser.add_argument(
        "--runs",
        default="aiohttp,bare",
        help="part 1 runs, comma-separated: aiohttp, aiohttp-message, httpx, none, bare, naive",
    )
    parser.add_argument("--plan-chats", type=int, default=100_000)
    parser.add_argument("--plan-pages", type=int, default=50)
    parser.add_argument(
        "--plan-stores", default="sqlite,postgresql", help="part 2: the stores to plan on"
    )
    parser.add_argument(
        "--plan-voted-tags", type=int, default=0, help="tags with vote weights, per chat"
    )
    parser.add_argument("--plan-limit", type=int, default=0, help="pages per digest; 0: none")
    parser.add_argument(
        "--plan-due",
        action="store_true",
        help="plan as the schedule does (each chat's next digest moves a day on), "
        "not as digest --now",
    )
    parser.add_argument("--profile", default=None, help="write a cProfile of each run here")
    parser.add_argument(
        "--beside-run", action="store_true", help="part 3 alone: digest --now beside a live run"
    )
    parser.add_argument(
        "--beside-chats", type=int, default=2_000, help="part 3: chats; 0: cap x --seconds"
    )
    parser.add_argument(
        "--beside-cap",
        default="300",
        help="part 3: caps, comma-separated (each at every latency of --latencies)",
    )
    parser.add_argument(
        "--replicas", type=int, default=1, help="part 3: trendbot run replicas (PostgreSQL)"
    )
    parser.add_argument(
        "--timeline",
        nargs="?",
        type=float,
        const=1.0,
        default=None,
        metavar="SECONDS",
        help="part 3: print the messages of each second (or SECONDS) of a round",
    )
    # A measured run in a child process (internal).
    parser.add_argument(
        "--phase", choices=("deliver", "bare", "naive", "plan"), help=argparse.SUPPRESS
    )
    parser.add_argument("--cap", type=int, default=200, help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, default=0.1, help=argparse.SUPPRESS)
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
