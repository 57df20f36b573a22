"""A push that comes while the database is away is not lost: ``POST /hooks/refresh`` answers
503 (the request cannot be stored), and once the database answers again the poll it asked
for follows, without waiting for the scheduled one (an hour here).

The database is away as an operator meets it: PostgreSQL stopped, through the TCP proxy in
front of it (``tests/fakes/tcp_proxy.py``); SQLite on a full disk, the run's writes to
files failing (``tests/fakes/full_disk.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.cli import start_cli
from tests.fakes import full_disk
from tests.fakes.tcp_proxy import TcpProxy
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import wait_healthy
from tests.integration.test_refresh_hook import SECRET, TOKEN, page, signed
from tests.ports import free_port
from tests.run_env import telegram_env

Switch = Callable[[int], Awaitable[None]]  # given the run's pid: the database away, or back


@contextlib.asynccontextmanager
async def away(database_url: str) -> AsyncIterator[tuple[str, Switch, Switch]]:
    """The URL a run reaches the database by, and how to take it away and bring it back."""
    if database_url.startswith("sqlite"):
        full_disk.supported()

        async def fill(pid: int) -> None:
            full_disk.fill(pid)

        async def free(pid: int) -> None:
            full_disk.free(pid)

        yield database_url, fill, free
        return
    url = make_url(database_url)
    async with TcpProxy(upstream_host=url.host or "127.0.0.1", upstream_port=url.port or 5432) as p:

        async def cut(_pid: int) -> None:
            await p.cut()

        async def restore(_pid: int) -> None:
            await p.restore()

        proxied = url.set(host="127.0.0.1", port=p.port).render_as_string(hide_password=False)
        yield proxied, cut, restore


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_push_during_an_outage_is_polled_once_the_database_is_back(
    database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "papers").mkdir(parents=True)
    (wiki / "papers" / "first.md").write_text(page("First"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with (
        away(database_url) as (url, take_away, bring_back),
        FakeTelegram(token=TOKEN, long_poll_cap=0.2) as tg,
        httpx.AsyncClient(timeout=30) as client,
    ):
        env = dict(
            clean_env,
            DATABASE_URL=url,
            WIKI_SOURCES=str(wiki),
            POLL_INTERVAL_SECONDS="3600",
            REFRESH_WEBHOOK_SECRET=SECRET,
            HTTP_PORT=str(port),
            **telegram_env(tg),
        )
        process = start_cli(env=env, cwd=tmp_path, err=tmp_path / "err.log", pipe=True)
        try:
            await wait_healthy(client, f"{base}/healthz", process)
            tg.message(1001, "/subscribe rl")
            tg.message(1001, "/mode instant")
            await tg.wait_for(2, timeout=30)
            (wiki / "papers" / "second.md").write_text(page("Second"))
            body = b'{"ref": "refs/heads/main", "after": "second"}'
            await take_away(process.pid)
            answer = await client.post(f"{base}/hooks/refresh", content=body, headers=signed(body))
            assert answer.status_code == 503  # not stored: said so, and kept
            await asyncio.sleep(4.0)  # a poll meanwhile cannot record what it read
            assert len(tg.messages_to(1001)) == 2
            await bring_back(process.pid)
            await tg.wait_for(3, timeout=40)  # not the hour of POLL_INTERVAL_SECONDS
            assert "Second" in tg.messages_to(1001)[-1]["text"]
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)
    log = (tmp_path / "err.log").read_text()
    assert process.returncode == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert "refresh hook: signed requests answered 503" in log
