"""``trendbot db backup FILE``: a consistent copy of a SQLite database, also while ``run``
writes to it; PostgreSQL is pointed to ``pg_dump``."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.console.chat import logs_to_file
from bot.settings import SAMPLE_WIKI
from bot.store import files
from bot.store.engine import head_revision
from tests.cli import run_cli_async, start_cli
from tests.conftest import ROOT
from tests.waiting import still_running, wait_until


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_backup_while_run_writes_is_a_whole_database(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    env = dict(
        clean_env,
        DATABASE_URL=database_url,
        WIKI_SOURCES=str(SAMPLE_WIKI),
        HTTP_PORT="0",
    )
    copy = tmp_path / "copy.db"
    if not database_url.startswith("sqlite"):
        refused = await run_cli_async("db", "backup", str(copy), env=env, cwd=tmp_path)
        assert refused.returncode == 2 and "pg_dump" in refused.stderr
        assert refused.stderr.count("\n") == 1 and not copy.exists()
        # It points at the operating page's section that shows pg_dump and pg_restore.
        page, anchor = "docs/operating.md", "#backups"
        assert f"see {page}{anchor}" in refused.stderr and "README" not in refused.stderr
        operating = (ROOT / page).read_text(encoding="utf-8")
        section = operating.split("\n## Backups\n", 1)[1].split("\n## ", 1)[0]
        assert "pg_dump" in section and "pg_restore" in section
        return

    log = tmp_path / "run.log"
    run = start_cli(env=env, cwd=tmp_path, err=log)
    try:
        await wait_until(
            lambda: still_running(run, log) and "HTTP server on" in log.read_text(),
            seconds=60,
            what="the HTTP server",
        )

        async def write() -> None:  # a writer beside run and the copy
            for index in range(200):
                async with engine.begin() as conn:
                    await conn.execute(
                        text(
                            "INSERT INTO leases (name, holder, expires_at) "
                            "VALUES (:n, 'test', CURRENT_TIMESTAMP)"
                        ),
                        {"n": f"test-{index}"},
                    )

        writer = asyncio.create_task(write())
        made = await run_cli_async("db", "backup", str(copy), env=env, cwd=tmp_path)
        await writer
        assert made.returncode == 0, made.stderr
        assert made.stdout.strip().endswith(f"written to {copy}")

        again = await run_cli_async("db", "backup", str(copy), env=env, cwd=tmp_path)
        assert again.returncode == 1 and "exists" in again.stderr  # never overwritten
    finally:
        run.send_signal(signal.SIGTERM)
        await asyncio.to_thread(run.wait, 60)
    assert run.returncode == 0, log.read_text()[-3000:]

    conn = sqlite3.connect(copy)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (head_revision(),)
        ]
        copied = conn.execute("SELECT count(*) FROM leases WHERE holder = 'test'").fetchone()[0]
        assert 0 <= copied <= 200
    finally:
        conn.close()


async def test_a_backup_of_a_missing_database_says_so(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    env = dict(clean_env, DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/none.db")
    done = await run_cli_async("db", "backup", str(tmp_path / "copy.db"), env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == f"trendbot db backup: no database at {tmp_path}/none.db\n"


# --- files readable by their owner alone, whatever the umask ------------------------------


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which a file is created readable by everyone (0644)."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.usefixtures("umask_022")
async def test_the_database_its_side_files_and_a_backup_are_the_owners_alone(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    env = dict(clean_env, WIKI_SOURCES=str(SAMPLE_WIKI), HTTP_PORT="0")  # ./data/trendbot.db
    polled_url = "sqlite+aiosqlite:///./polled/trendbot.db"
    polled = await run_cli_async("poll", env=dict(env, DATABASE_URL=polled_url), cwd=tmp_path)
    assert polled.returncode == 0, polled.stderr
    assert mode(tmp_path / "polled") == 0o700
    assert mode(tmp_path / "polled" / "trendbot.db") == 0o600

    data = tmp_path / "data"  # made by run, with its lock file

    log = tmp_path / "run.log"
    run = start_cli(env=env, cwd=tmp_path, err=log)
    try:
        await wait_until(
            lambda: still_running(run, log) and "HTTP server on" in log.read_text(),
            seconds=60,
            what="the HTTP server",
        )
        assert mode(data) == 0o700 and mode(data / "trendbot.db") == 0o600
        assert mode(data / "trendbot.db.run.lock") == 0o600
        side = [data / "trendbot.db-wal", data / "trendbot.db-shm"]
        assert all(path.exists() for path in side)
        assert [mode(path) for path in side] == [0o600, 0o600]
        made = await run_cli_async("db", "backup", "copy.db", env=env, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
        assert mode(tmp_path / "copy.db") == 0o600
        assert not (tmp_path / "copy.db.partial").exists()
    finally:
        run.send_signal(signal.SIGTERM)
        await asyncio.to_thread(run.wait, 60)
    assert run.returncode == 0, log.read_text()[-3000:]


@pytest.mark.usefixtures("umask_022")
def test_the_console_s_log_and_nested_directories_are_the_owners_alone(tmp_path: Path) -> None:
    log = tmp_path / "a" / "b" / "trendbot.log"
    with logs_to_file(log) as moved:
        assert moved
        logging.getLogger("bot.test").warning("a line")
    assert [mode(d) for d in (tmp_path / "a", tmp_path / "a" / "b")] == [0o700, 0o700]
    assert mode(log) == 0o600 and "a line" in log.read_text()
    earlier = tmp_path / "earlier.log"  # as an earlier build left it: 0644
    earlier.write_text("old\n")
    assert mode(earlier) == 0o644
    files.private_append(earlier)
    assert mode(earlier) == 0o600 and earlier.read_text() == "old\n"
    planted = tmp_path / "planted.log"
    planted.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        files.private_append(planted)
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.usefixtures("umask_022")
async def test_a_database_others_could_read_is_tightened(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    database = tmp_path / "earlier.db"
    sqlite3.connect(database).close()  # as an earlier build left it: 0644
    assert mode(database) == 0o644
    env = dict(clean_env, DATABASE_URL=f"sqlite+aiosqlite:///{database}")
    done = await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert mode(database) == 0o600


@pytest.mark.usefixtures("umask_022")
async def test_a_partial_file_already_there_is_refused_never_written_into(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    database = tmp_path / "trendbot.db"
    env = dict(clean_env, DATABASE_URL=f"sqlite+aiosqlite:///{database}")
    assert (await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)).returncode == 0
    planted = tmp_path / "copy.db.partial"
    planted.write_bytes(b"someone else's file")
    planted.chmod(0o666)
    target = tmp_path / "elsewhere"
    linked = tmp_path / "link.db.partial"
    linked.symlink_to(target)
    for name, partial in (("copy.db", planted), ("link.db", linked)):
        done = await run_cli_async("db", "backup", name, env=env, cwd=tmp_path)
        assert done.returncode == 1
        assert done.stderr == (
            f"trendbot db backup: {partial.name} exists (a copy under way, or one left "
            "unfinished); remove it if no copy is running\n"
        )
        assert not (tmp_path / name).exists()
    assert planted.read_bytes() == b"someone else's file" and mode(planted) == 0o666
    assert linked.is_symlink() and not target.exists()


def test_two_copies_kept_in_the_same_second_are_both_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A refused upgrade and the command after it, started within one second, each keep
    # their copy: the later one is numbered, never refused for the earlier one's name.
    from bot.store import backup

    database = tmp_path / "bot.db"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE t (x)")
    frozen = backup.dt.datetime(2026, 12, 7, 4, 29, 52, tzinfo=backup.dt.UTC)

    class Clock(backup.dt.datetime):
        @classmethod
        def now(cls, tz: backup.dt.tzinfo | None = None) -> backup.dt.datetime:  # type: ignore[override]
            return frozen

    monkeypatch.setattr(backup.dt, "datetime", Clock)
    first = backup.keep_before_upgrade(database, revision="0001")
    second = backup.keep_before_upgrade(database, revision="0001")
    assert first.name == "bot.db.before-0001-20261207T042952Z"
    assert second.name == "bot.db.before-0001-20261207T042952Z-2"
    for kept in (first, second):
        with sqlite3.connect(kept) as conn:
            assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("t",)]
