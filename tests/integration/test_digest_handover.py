"""``digest --now`` says what happened, not what did not: when a run it waits on is killed
(``kill -9``) it does not stop waiting while the rest is still being sent, and its summary
counts what a run sent and what it sent itself; when the run cannot write (a full disk) it
does not say the run stopped and take over, it waits for it.

The issue's runs said ``600 planned, 0 retried, 177 sent, 0 failed, 423 left queued for
retry`` while the surviving replica delivered all 600, and "The trendbot run stopped;
sending the rest from here." on a full disk while the run was alive.
"""

from __future__ import annotations

import asyncio
import collections
import signal
import subprocess
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.ops.leader import LEASE_SECONDS
from tests.cli import start_cli
from tests.fakes import full_disk
from tests.integration.test_beside_run import (
    CHATS,
    HANDED_OFF,
    SLOW_CAP,
    SlowCap,
    _at_least,
    cli,
    digests,
    sent_all,
    slow_cap,  # noqa: F401
    start_run,
    stop,
)
from tests.integration.test_crash import IN_FLIGHT_BOUND
from tests.waiting import wait_until

STOPPED = "The trendbot run stopped; sending the rest from here."


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_a_run_killed_while_digest_waits_on_it_is_not_taken_for_done(
    slow_cap: SlowCap,  # noqa: F811
    engine: AsyncEngine,
    database_url: str,
    tmp_path: Path,
) -> None:
    """PostgreSQL: two replicas, one killed; the survivor sends the rest, and the command
    waits for it. SQLite: the only run killed; the command takes its claims back (a process
    of this host that is gone) and sends the rest itself."""
    ids, tg, env = slow_cap
    replicas = 1 if database_url.startswith("sqlite") else 2
    runs = [start_run(env, tmp_path) for _ in range(replicas)]
    try:
        await wait_until(lambda: _at_least(engine, replicas), seconds=60)
        command = asyncio.create_task(cli(env, tmp_path, "digest", "--now"))
        await wait_until(lambda: len(digests(tg)) >= SLOW_CAP, seconds=60)
        runs[0].send_signal(signal.SIGKILL)
        await asyncio.to_thread(runs[0].wait, 10)  # reaped, as its supervisor would
        digest = await command
    finally:
        await stop(runs)
    assert digest.stdout[0].startswith(HANDED_OFF), digest.stdout
    if replicas == 1:
        assert STOPPED in digest.stdout
        sent_all(digest, by_run="some")
    else:
        assert STOPPED not in digest.stdout
        sent_all(digest, by_run="all")
    per_chat = collections.Counter(c.chat_id for c in digests(tg))
    assert sorted(int(c) for c in per_chat) == ids
    assert sum(n - 1 for n in per_chat.values()) <= IN_FLIGHT_BOUND  # sent, not yet recorded
    assert "Traceback" not in digest.stderr


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_a_run_on_a_full_disk_is_waited_for_not_said_to_have_stopped(
    slow_cap: SlowCap,  # noqa: F811
    engine: AsyncEngine,
    database_url: str,
    tmp_path: Path,
) -> None:
    """The run's disk full for longer than its presence lease: it cannot renew it, yet it
    runs and holds what it claimed. The command keeps waiting, and once there is room
    again the run sends the rest."""
    if not database_url.startswith("sqlite"):
        pytest.skip("a full disk of the run's own: SQLite beside it")
    full_disk.supported()
    ids, tg, env = slow_cap
    run = start_cli(env=env, cwd=tmp_path, err=tmp_path / "run.log", append=True, pipe=True)
    runs: list[subprocess.Popen[bytes]] = [run]
    try:
        await wait_until(lambda: _at_least(engine, 1), seconds=60)
        command = asyncio.create_task(cli(env, tmp_path, "digest", "--now"))
        await wait_until(lambda: len(digests(tg)) >= SLOW_CAP, seconds=60)
        full_disk.fill(run.pid)
        await asyncio.sleep(LEASE_SECONDS + 5)  # its lease has lapsed
        assert not command.done()
        assert len(digests(tg)) < CHATS
        full_disk.free(run.pid)
        digest = await command
        assert run.poll() is None
    finally:
        await stop(runs)
    assert STOPPED not in digest.stdout, digest.stdout
    assert "Traceback" not in digest.stderr, digest.stderr
    sent_all(digest, by_run="all")
    per_chat = collections.Counter(c.chat_id for c in digests(tg))
    assert sorted(int(c) for c in per_chat) == ids
