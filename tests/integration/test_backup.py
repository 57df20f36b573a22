"""``trendbot db backup FILE``: a consistent copy of a SQLite database, also while ``run``
writes to it; PostgreSQL is pointed to ``pg_dump``."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.settings import SAMPLE_WIKI
from bot.store.engine import head_revision
from tests.cli import run_cli_async, start_cli
from tests.conftest import ROOT


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
        async with asyncio.timeout(60):
            while "HTTP server on" not in log.read_text():
                assert run.poll() is None, log.read_text()[-3000:]
                await asyncio.sleep(0.1)

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
