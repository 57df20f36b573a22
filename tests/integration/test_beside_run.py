"""``trendbot digest --now`` and ``trendbot broadcast --yes`` beside a live ``trendbot run``
(on PostgreSQL, two replicas) share the run's rate budget: the fake Bot API, which enforces
Telegram's limits, answers no 429, and every chat gets each message exactly once. With no
service running, the commands send themselves, until a run starts; a service that stops
while a command waits on it leaves the rest to the command."""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import re
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.ops.leader import LEASE_SECONDS, Leases, live_services, one_shots_sending
from bot.payloads import Notice
from bot.store import outbox, queueing
from bot.store import standing as progress
from bot.store.schema import chats
from bot.store.schema import outbox as outbox_table
from bot.util import utcnow
from tests.cli import run_cli_async
from tests.fakes.telegram_api import FakeTelegram, TelegramCall
from tests.integration.test_admin import subscribers
from tests.integration.test_crash import run_env, start_run
from tests.integration.test_planner import started
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CAP = 100  # messages/s: the overall cap, for the bot and the fake alike
# More than one claim of the delivery engine (500 rows): a command sending itself beside the
# run would claim one part and the run the rest, each sending at the full cap (429s).
CHATS = 600
# The tests where a run starts or stops while a command sends: at this cap the command
# sends for 12 s, ample time for a run to start (or stop) on a busy machine.
SLOW_CAP = 50
HANDED_OFF = "A trendbot run is sending on this database"
COMMAND_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class Done:
    returncode: int
    stdout: list[str]
    stderr: str


async def cli(env: dict[str, str], cwd: Path, *args: str) -> Done:
    """A one-shot ``trendbot`` command, run without blocking the fake server in this loop."""
    result = await run_cli_async(*args, env=env, cwd=cwd, seconds=COMMAND_TIMEOUT)
    return Done(result.returncode, result.stdout.splitlines(), result.stderr)


async def due_later(engine: AsyncEngine, count: int) -> list[int]:
    """``count`` private chats following ``rl`` whose next digest is a day away: only
    ``digest --now`` plans them, not the running service's planner."""
    return await subscribers(engine, count, start=20_000, due_in=dt.timedelta(days=1))


def once_each(calls: list[TelegramCall], ids: list[int]) -> None:
    """``calls`` reached every chat of ``ids`` exactly once, and no other chat."""
    counts = collections.Counter(c.chat_id for c in calls)
    assert sorted(counts) == ids and set(counts.values()) == {1}


def digests(tg: FakeTelegram) -> list[TelegramCall]:
    return [
        c for c in tg.calls("sendMessage", ok=True) if "beside-the-run" in c.params.get("text", "")
    ]


def broadcasts(tg: FakeTelegram) -> list[TelegramCall]:
    return [c for c in tg.calls("sendMessage", ok=True) if c.params.get("text") == "Hello all"]


def no_429s(tg: FakeTelegram) -> None:
    assert tg.stats()["rate_limited"] == 0
    assert tg.limit_violations == []


def sent_all(digest: Done, *, by_run: str) -> None:
    """``digest --now`` ended well, every chat planned and sent: by a run (``by_run``
    ``"all"``), by itself (``"none"``), or by both (``"some"``), as its summary says."""
    assert digest.returncode == 0, digest.stderr
    summary = re.fullmatch(
        rf"{CHATS} planned, 0 retried, {CHATS} sent(?: \((\d+) by the trendbot run\))?, "
        "0 failed, 0 left queued for retry",
        digest.stdout[-1],
    )
    assert summary is not None, digest.stdout
    sent_by_run = int(summary.group(1) or 0)
    expected = {"all": sent_by_run == CHATS, "none": sent_by_run == 0}
    assert expected.get(by_run, 0 < sent_by_run < CHATS), digest.stdout


async def stop(runs: list[subprocess.Popen[bytes]]) -> None:
    for process in runs:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in runs:
        try:
            await asyncio.to_thread(process.wait, 30)
        except subprocess.TimeoutExpired:
            process.kill()


async def world_with_chats(engine: AsyncEngine, wiki: Path, count: int) -> list[int]:
    world = await started(engine, wiki)
    ids = await due_later(engine, count)
    await world.publish("papers/2026/beside-the-run", tags="[rl]")
    return ids


def env_for(
    clean_env: dict[str, str], database_url: str, wiki: Path, tg: FakeTelegram, *, rate: int = CAP
) -> dict[str, str]:
    """``tg`` made to enforce a cap of ``rate`` messages a second (20 ms a send), and the
    environment of the runs and commands that send to it at that cap."""
    tg.enforce_limits = True
    tg.global_rate = rate
    tg.latency = 0.02
    return dict(
        run_env(clean_env, database_url, wiki, tg),
        TELEGRAM_RATE_PER_SECOND=str(rate),
        TELEGRAM_PAID_BROADCAST="true",  # a cap over 30 a second needs paid broadcasts
    )


SlowCap = tuple[list[int], FakeTelegram, dict[str, str]]


@pytest.fixture
async def slow_cap(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> AsyncIterator[SlowCap]:
    """CHATS chats with a digest due later, a Telegram capped at SLOW_CAP messages a second,
    and the environment of runs and commands sending at that cap: a ``digest --now`` lasts
    long enough for a run to start or stop in the middle of it."""
    wiki = tmp_path / "wiki"
    ids = await world_with_chats(engine, wiki, CHATS)
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.5) as tg:
        yield ids, tg, env_for(clean_env, database_url, wiki, tg, rate=SLOW_CAP)


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_digest_and_broadcast_beside_a_run_share_its_cap(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    replicas = 1 if database_url.startswith("sqlite") else 2
    wiki = tmp_path / "wiki"
    ids = await world_with_chats(engine, wiki, CHATS)
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.5) as tg:
        env = env_for(clean_env, database_url, wiki, tg)
        runs = [start_run(env, tmp_path) for _ in range(replicas)]
        try:
            # Every replica is live before the commands start.
            await wait_until(lambda: _at_least(engine, replicas), seconds=60)
            digest = await cli(env, tmp_path, "digest", "--now")
            sent_all(digest, by_run="all")
            assert digest.stdout[0].startswith(HANDED_OFF)
            once_each(digests(tg), ids)

            broadcast = await cli(env, tmp_path, "broadcast", "--text", "Hello all", "--yes")
            assert broadcast.returncode == 0, broadcast.stderr
            assert broadcast.stdout[0].startswith(f"This broadcast reaches {CHATS} chats")
            assert broadcast.stdout[1].startswith(HANDED_OFF)
            assert broadcast.stdout[-1] == (
                f"Broadcast #1: {CHATS} queued, {CHATS} sent ({CHATS} by the trendbot run), "
                "0 failed, 0 left queued for retry"
            )
            once_each(broadcasts(tg), ids)
            no_429s(tg)
            assert all(process.poll() is None for process in runs)  # the run went on
        finally:
            await stop(runs)
    assert TOKEN not in (tmp_path / "run.log").read_text()


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_with_no_service_running_the_commands_send_themselves(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    wiki = tmp_path / "wiki"
    ids = await world_with_chats(engine, wiki, 40)
    async with FakeTelegram(token=TOKEN) as tg:
        env = env_for(clean_env, database_url, wiki, tg)
        digest = await cli(env, tmp_path, "digest", "--now")
        assert digest.returncode == 0, digest.stderr
        assert digest.stdout == [
            "40 planned, 0 retried, 40 sent, 0 failed, 0 left queued for retry"
        ]
        broadcast = await cli(env, tmp_path, "broadcast", "--text", "Hello all", "--yes")
        assert broadcast.returncode == 0, broadcast.stderr
        assert broadcast.stdout[-1] == (
            "Broadcast #1: 40 queued, 40 sent, 0 failed, 0 left queued for retry"
        )
        assert not any(line.startswith(HANDED_OFF) for line in broadcast.stdout)
        for calls in (digests(tg), broadcasts(tg)):
            once_each(calls, ids)
        no_429s(tg)


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_run_that_stops_mid_digest_leaves_the_rest_to_the_command(
    slow_cap: SlowCap, engine: AsyncEngine, tmp_path: Path
) -> None:
    ids, tg, env = slow_cap
    runs = [start_run(env, tmp_path)]
    try:
        await wait_until(lambda: _at_least(engine, 1), seconds=60)
        command = asyncio.create_task(cli(env, tmp_path, "digest", "--now"))
        await wait_until(lambda: len(digests(tg)) >= SLOW_CAP // 2, seconds=60)
        await stop(runs)
        digest = await command
    finally:
        await stop(runs)
    sent_all(digest, by_run="some")
    assert digest.stdout[0].startswith(HANDED_OFF)
    assert "The trendbot run stopped; sending the rest from here." in digest.stdout
    once_each(digests(tg), ids)  # a clean stop: once
    no_429s(tg)


async def _at_least(engine: AsyncEngine, count: int) -> bool:
    return await live_services(engine) >= count


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_run_that_starts_mid_digest_takes_over_the_sending(
    slow_cap: SlowCap, engine: AsyncEngine, tmp_path: Path
) -> None:
    ids, tg, env = slow_cap
    runs: list[subprocess.Popen[bytes]] = []
    try:
        command = asyncio.create_task(cli(env, tmp_path, "digest", "--now"))
        await wait_until(lambda: len(digests(tg)) >= SLOW_CAP // 2, seconds=60)
        runs.append(start_run(env, tmp_path))
        digest = await command
        assert runs[0].poll() is None  # the run goes on
    finally:
        await stop(runs)
    sent_all(digest, by_run="some")
    assert digest.stdout[0] == "A trendbot run started on this database; it sends the rest."
    # What the command had not begun went back to the queue for the run: once each,
    # and the run sent nothing before the command had stopped.
    once_each(digests(tg), ids)
    no_429s(tg)


async def test_live_services_and_one_shots_count_live_leases_only(engine: AsyncEngine) -> None:
    gone = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import os; print(os.getpid())", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await gone.communicate()
    now = utcnow()
    assert await live_services(engine, now=now) == 0
    await Leases(engine=engine, holder="host-a:1:x").tick(now=now)  # a run elsewhere
    await Leases(engine=engine, holder=f"{socket.gethostname()}:{out.decode().strip()}:z").tick(
        now=now
    )  # a run of this host that was killed: it sends nothing
    one_shot = Leases(engine=engine, holder="host-b:1:y")
    await one_shot.hold_one_shot()
    assert await live_services(engine, now=now) == 1
    assert await one_shots_sending(engine) == 1
    later = now + dt.timedelta(seconds=LEASE_SECONDS + 1)
    assert await live_services(engine, now=later) == 0  # the run stopped renewing
    await one_shot.release_one_shot()
    assert await one_shots_sending(engine) == 0


async def test_where_a_commands_messages_stand(engine: AsyncEngine) -> None:
    await due_later(engine, 7)
    now = utcnow()
    async with engine.begin() as conn:
        pks = [pk for (pk,) in await conn.execute(select(chats.c.id).order_by(chats.c.id))]
        rows = [
            queueing.row_values(
                chat_pk=pk, platform="telegram", kind="notice", payload=Notice(text="x"), now=now
            )
            for pk in pks
        ]
        await queueing.enqueue(conn, rows)
        ids = [row_id for (row_id,) in await conn.execute(select(outbox_table.c.id))]
        claimed = await outbox.claim(
            conn, worker="w", limit=1, now=now, platforms=["telegram"], only_chats=[pks[0]]
        )
        await outbox.sent(conn, row_id=ids[1], now=now)
        await outbox.fail(conn, row_id=ids[2], error="gone", attempts=1)
        await outbox.retry_later(
            conn, row_id=ids[3], not_before=now + dt.timedelta(minutes=5), error="timeout"
        )
        await outbox.hold(conn, row_id=ids[6], error="no answer", attempts=2, unknown=True, now=now)
    assert [r.id for r in claimed] == [ids[0]]  # being sent: still to send now
    async with engine.connect() as conn:
        assert await progress.due_ids(conn, now=now) == [ids[0], ids[4], ids[5]]
        assert await progress.due_ids(conn, now=now, chat_pks=[pks[4]]) == [ids[4]]
        assert await progress.standing(conn, row_ids=ids, now=now) == progress.Standing(
            sent=1, failed=1, due=3, later=1, held=1
        )
        assert await progress.due_count(conn, now=now) == 3
        assert await progress.due_count(conn, now=now, up_to_id=ids[4]) == 2
        assert await progress.due_count(conn, now=now, chat_pks=[pks[3], pks[5]]) == 1
        assert await progress.due_count(conn, now=now + dt.timedelta(minutes=6)) == 4
