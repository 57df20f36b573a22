"""The database goes away in the middle of a fan-out and comes back: deliveries resume by
themselves, every message is sent, the sends made meanwhile are recorded (not sent again),
``/healthz`` says 503 with the reason meanwhile, and SIGTERM still exits 0.

How the outage is made:

- PostgreSQL (shared with others, so never stopped): the bot reaches it through a TCP proxy
  (``tests/fakes/tcp_proxy.py``) that is cut, as a stopped server is to its clients: the
  connections open are reset and new ones refused.
- SQLite: every connection the bot's pool hands out is set ``PRAGMA query_only`` while the
  outage lasts. A write then fails as on a read-only file (SQLITE_READONLY, "attempt to write
  a readonly database"), through the same driver path; ``chmod`` cannot make one here, since
  the tests run as root, who writes read-only files. A full disk is ``PRAGMA max_page_count``
  at the file's size (SQLITE_FULL, "database or disk is full"), for the one-shot command.
"""

from __future__ import annotations

import asyncio
import collections
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from sqlalchemy import event, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.telegram.client import close_bot, make_bot
from bot.channels.telegram.sender import TelegramSender
from bot.delivery.engine import SHUTDOWN_GRACE_SECONDS, Delivery
from bot.models import Platform
from bot.ops import web
from bot.ops.leader import LEASE_SECONDS
from bot.store.engine import create_engine
from bot.store.schema import outbox
from tests.cli import start_cli
from tests.conftest import Settings
from tests.fakes.tcp_proxy import TcpProxy
from tests.fakes.telegram_api import FakeTelegram
from tests.fanout import fan_out
from tests.integration.test_admin import subscribers
from tests.integration.test_crash import IN_FLIGHT_BOUND
from tests.integration.test_replicas import broadcast
from tests.run_env import telegram_env
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
# Work resumes within this long of the database answering again (the bound).
RECOVERY_SECONDS = 30.0


@dataclass(slots=True)
class Outage:
    """The database as the bot sees it: ``url`` to reach it, ``begin``/``end`` the outage."""

    url: str
    begin: Callable[[], Awaitable[None]]
    end: Callable[[], Awaitable[None]]
    engine: AsyncEngine | None = None  # the bot's engine, for a test in this process


def _proxied(database_url: str, port: int) -> str:
    return (
        make_url(database_url)
        .set(host="127.0.0.1", port=port)
        .render_as_string(hide_password=False)
    )


@pytest.fixture
async def outage(database_url: str, engine: AsyncEngine) -> AsyncIterator[Outage]:
    if database_url.startswith("sqlite"):
        state = {"read_only": False}
        bot_engine = create_engine(database_url)

        @event.listens_for(bot_engine.sync_engine, "checkout")
        def _read_only(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA query_only = {int(state['read_only'])}")
            cursor.close()

        async def begin() -> None:
            state["read_only"] = True

        async def end() -> None:
            state["read_only"] = False

        try:
            yield Outage(url=database_url, begin=begin, end=end, engine=bot_engine)
        finally:
            await bot_engine.dispose()
        return
    url = make_url(database_url)
    async with TcpProxy(upstream_host=url.host or "127.0.0.1", upstream_port=url.port or 5432) as p:
        bot_engine = create_engine(_proxied(database_url, p.port))
        try:
            yield Outage(
                url=_proxied(database_url, p.port), begin=p.cut, end=p.restore, engine=bot_engine
            )
        finally:
            await bot_engine.dispose()


async def counts(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as conn:
        rows = await conn.execute(select(outbox.c.status, func.count()).group_by(outbox.c.status))
        return {status: int(n) for status, n in rows}


async def all_recorded(engine: AsyncEngine, chats: int) -> bool:
    """Whether the fan-out to ``chats`` chats is recorded as sent: the records of the last
    sends settle (a group commit) a moment after the platform took them."""
    return (await counts(engine)).get("sent", 0) == chats


@pytest.mark.slow
async def test_sends_made_while_the_database_is_away_are_recorded_when_it_is_back(
    engine: AsyncEngine, outage: Outage
) -> None:
    chats = await subscribers(engine, 300)
    assert await broadcast(engine, "Outage", tag="rl") == len(chats)
    assert outage.engine is not None
    async with FakeTelegram(token=TOKEN) as tg:
        tg.latency = 0.2  # many sends in flight when the database goes
        bot = make_bot(Settings(telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url))
        delivery = Delivery(
            engine=outage.engine,
            senders={Platform.TELEGRAM: TelegramSender(bot, rate_per_second=100)},
            concurrency=16,
        )
        stop = asyncio.Event()
        task = asyncio.create_task(delivery.run(stop))
        hooks = web.WebHooks(problem=lambda: delivery.problem)
        runner, port = await web.start(
            web.make_app(engine=outage.engine, hooks=hooks), host="127.0.0.1", port=0
        )
        session = aiohttp.ClientSession()

        async def healthz() -> tuple[int, dict[str, Any]]:
            async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                return response.status, await response.json()

        def delivered() -> int:
            return len(tg.calls("sendMessage", ok=True))

        try:
            await wait_until(lambda: delivered() >= 60, seconds=60)
            await outage.begin()
            await asyncio.sleep(1.0)  # the sends in flight come back meanwhile
            recorded = (await counts(engine)).get("sent", 0)
            made = delivered()
            # Sends the platform took that the database could not record: they wait in
            # memory, their rows still claimed.
            assert made > recorded
            assert made < len(chats), "the fan-out finished before the outage"
            await wait_until(lambda: delivery.problem is not None, seconds=10)
            # Not ready while the deliveries cannot make progress, with the reason (on
            # SQLite the database still answers a read: it was 200 there).
            status, body = await healthz()
            assert status == 503, body
            assert body["status"] == "unavailable" and body["reason"], body
            await asyncio.sleep(3.0)  # the outage lasts
            assert not task.done()  # no worker, no claimer died of it
            await outage.end()
            back = time.monotonic()
            await wait_until(lambda: delivered() >= len(chats), seconds=RECOVERY_SECONDS + 60)
            await wait_until(
                lambda: all_recorded(engine, len(chats)), seconds=RECOVERY_SECONDS + 30
            )
            assert await counts(engine) == {"sent": len(chats)}
            assert delivery.problem is None
            assert (await healthz())[0] == 200
            assert time.monotonic() - back < RECOVERY_SECONDS + 60
        finally:
            await session.close()
            await runner.cleanup()
            stop.set()
            await asyncio.wait_for(task, SHUTDOWN_GRACE_SECONDS + 10)
            await close_bot(bot)
    per_chat = collections.Counter(c.chat_id for c in tg.calls("sendMessage", ok=True))
    assert sorted(int(c) for c in per_chat) == chats
    assert set(per_chat.values()) == {1}  # nothing sent twice: the records were kept


@pytest.mark.slow
async def test_while_the_database_is_away_no_more_than_the_cap_of_sends_await_their_records(
    engine: AsyncEngine, outage: Outage
) -> None:
    """What a crash could send twice is what was sent and not yet recorded. However long
    the database is away, that stays within the platform's cap in a second (a send counts
    as under way in the pace until its record), not one send per worker: here 64 workers,
    20 a second, and 4 s away (the workers alone would have let about 64 pile up)."""
    cap = 20
    chats = await subscribers(engine, 160)
    assert await broadcast(engine, "Outage", tag="rl") == len(chats)
    assert outage.engine is not None
    async with fan_out(outage.engine, cap=cap) as sending:
        await wait_until(lambda: sending.delivered() >= 10, seconds=60)
        await outage.begin()
        await asyncio.sleep(4.0)  # the outage lasts: the sends stop at the cap
        unrecorded = sending.delivered() - (await counts(engine)).get("sent", 0)
        assert 0 < unrecorded <= cap
        await outage.end()
        await wait_until(lambda: sending.delivered() >= len(chats), seconds=RECOVERY_SECONDS + 60)
        await wait_until(lambda: all_recorded(engine, len(chats)), seconds=RECOVERY_SECONDS + 30)
        assert await counts(engine) == {"sent": len(chats)}
    assert set(sending.per_chat().values()) == {1}


def _healthz(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError as exc:
        return 0, str(exc)


def _logged_port(log: Path) -> int | None:
    found = re.search(r"HTTP server on [^:\s]+:(\d+)", log.read_text() if log.exists() else "")
    return int(found.group(1)) if found else None


async def _port_of(log: Path) -> int:
    return await wait_until(lambda: _logged_port(log), seconds=60, what=f"an HTTP port in {log}")


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_replicas_recover_after_the_database_is_stopped_mid_fanout(
    engine: AsyncEngine,
    database_url: str,
    outage: Outage,
    tmp_path: Path,
    clean_env: dict[str, str],
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("several replicas need PostgreSQL; SQLite serves one run process")
    (tmp_path / "wiki").mkdir()
    chats = await subscribers(engine, 1500)
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.5) as tg:
        tg.enforce_limits = True
        tg.global_rate = tg.paid_rate = 100
        tg.latency = 0.1
        env = dict(
            clean_env,
            DATABASE_URL=outage.url,
            WIKI_SOURCES=str(tmp_path / "wiki"),
            **telegram_env(tg),
            TELEGRAM_RATE_PER_SECOND="100",
            TELEGRAM_PAID_BROADCAST="true",
            HTTP_PORT="0",
            POLL_INTERVAL_SECONDS="3600",
            PTB_TIMEDELTA="true",
        )
        logs = [tmp_path / f"replica{i}" for i in range(2)]
        replicas: list[subprocess.Popen[bytes]] = []
        for directory in logs:
            directory.mkdir()
            replicas.append(start_cli(env=env, cwd=directory, err=directory / "run.log"))

        def delivered() -> list[str]:
            return [c.chat_id for c in tg.calls("sendMessage", ok=True)]

        try:
            ports = [await _port_of(d / "run.log") for d in logs]
            # Both registered, and each has read the other's presence (on its own schedule,
            # which nothing signals) before the fan-out shares the cap between them.
            await asyncio.sleep(2.0)
            assert await broadcast(engine, "Stopped", tag="rl") == len(chats)
            await wait_until(lambda: len(delivered()) >= 300, seconds=90)
            await outage.begin()
            cut = len(delivered())
            # During the outage every replica says it cannot work, with the reason.
            for port in ports:

                async def unavailable(port: int = port) -> bool:
                    return (await asyncio.to_thread(_healthz, port))[0] == 503

                await wait_until(
                    unavailable,
                    seconds=10,
                    what=lambda port=port: f"503 from :{port}, not {_healthz(port)}",
                )
            # Longer than a presence lease (LEASE_SECONDS): back, each replica at first
            # sees only itself alive, and must not take the whole cap.
            await asyncio.sleep(LEASE_SECONDS + 3)
            assert all(p.poll() is None for p in replicas)
            # Each replica sent what it held, up to its window, and waits for the records.
            at_end = len(delivered())
            assert at_end - cut <= len(replicas) * IN_FLIGHT_BOUND
            await outage.end()
            back = time.monotonic()
            # Progress again within the bound, and every chat gets its message.
            await wait_until(lambda: len(delivered()) > at_end + 50, seconds=RECOVERY_SECONDS)
            await wait_until(
                lambda: len(set(delivered())) >= len(chats), seconds=RECOVERY_SECONDS + 60
            )
            await wait_until(lambda: all_recorded(engine, len(chats)), seconds=60)
            assert await counts(engine) == {"sent": len(chats)}
            for port in ports:  # ready again once they have recovered
                status, body = await asyncio.to_thread(_healthz, port)
                assert status == 200, body
            assert time.monotonic() - back < RECOVERY_SECONDS + 60

            # SIGTERM while the database is away: exit 0, no traceback.
            await outage.begin()
            await asyncio.sleep(1.0)  # the replicas are under the outage when told to stop
            for process in replicas:
                process.send_signal(signal.SIGTERM)
            codes = [await asyncio.to_thread(p.wait, 60) for p in replicas]
            assert codes == [0, 0], [(d / "run.log").read_text()[-3000:] for d in logs]
            await outage.end()
        finally:
            for process in replicas:
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=10)
    per_chat = collections.Counter(delivered())
    assert sorted(int(c) for c in per_chat) == chats
    assert sum(n - 1 for n in per_chat.values()) <= IN_FLIGHT_BOUND
    assert tg.limit_violations == []
    for directory in logs:
        text = (directory / "run.log").read_text()
        assert "Traceback" not in text, text[-3000:]
        assert "delivery worker failed" not in text
        assert TOKEN not in text


@pytest.mark.slow
async def test_one_shot_command_says_which_database_failed_in_one_line(
    database_url: str, outage: Outage, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    await outage.begin()
    env = dict(clean_env, DATABASE_URL=outage.url, WIKI_SOURCES=str(tmp_path))
    if database_url.startswith("sqlite"):
        pytest.skip("the read-only pragma is set on this process's connections only")
    process = start_cli("digest", "--now", env=env, cwd=tmp_path, err=tmp_path / "err")
    code = await asyncio.to_thread(process.wait, 120)
    err = (tmp_path / "err").read_text()
    assert code == 1, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("trendbot digest:")]
    assert len(lines) == 1, err
    assert f"127.0.0.1:{make_url(outage.url).port}/" in lines[0]


async def test_full_sqlite_disk_is_named_in_the_error_line(tmp_path: Path) -> None:
    from bot import dberrors
    from bot.store.engine import upgrade

    url = f"sqlite+aiosqlite:///{tmp_path / 'full.db'}"
    full = create_engine(url)
    await upgrade(full)

    @event.listens_for(full.sync_engine, "checkout")
    def _no_room(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA page_count")
        pages = cursor.fetchone()[0]
        cursor.execute(f"PRAGMA max_page_count = {pages}")
        cursor.close()

    try:
        with pytest.raises(Exception) as raised:
            await subscribers(full, 2000)
    finally:
        await full.dispose()
    assert dberrors.is_outage(raised.value)
    line = dberrors.describe(raised.value, database_url=url)
    assert line == f"database error: {tmp_path / 'full.db'}: database or disk is full"
