"""One ``trendbot run`` per SQLite file (``bot/service/lock.py``): what the lock promises.

A second holder is refused at once, naming the file; the holder's pid is in the lock file;
a holder that dies (SIGKILL, no clean-up) leaves nothing that refuses the next run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bot.service import AlreadyRunning, CannotLock, sqlite_run_lock
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
HOLD = (
    "import sys, time\n"
    "from bot.service.lock import sqlite_run_lock\n"
    "with sqlite_run_lock(sys.argv[1]):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(120)\n"
)


def _holder(url: str) -> subprocess.Popen[str]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, url], stdout=subprocess.PIPE, text=True, env=env
    )
    assert child.stdout is not None and child.stdout.readline() == "held\n"
    return child


def _take(url: str) -> None:
    with sqlite_run_lock(url):
        pass


def test_a_second_run_is_refused_and_a_killed_holder_frees_the_file(tmp_path: Path) -> None:
    database = tmp_path / "data" / "trendbot.db"  # its directory not made yet
    url = f"sqlite+aiosqlite:///{database}"
    holder = _holder(url)
    try:
        lock_file = Path(f"{database}.run.lock")
        assert lock_file.read_text() == f"{holder.pid}\n"
        with pytest.raises(
            AlreadyRunning, match=f"another trendbot run is already using {database}"
        ):
            _take(url)
        assert lock_file.read_text() == f"{holder.pid}\n"  # the refused one wrote nothing
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        assert holder.stdout is not None
        holder.stdout.close()
    with sqlite_run_lock(url):  # the kernel released the dead holder's lock
        assert lock_file.read_text() == f"{os.getpid()}\n"
        with pytest.raises(AlreadyRunning):  # in one process too: one run
            _take(url)


def test_other_databases_take_no_lock(tmp_path: Path) -> None:
    for url in ("sqlite+aiosqlite:///:memory:", "postgresql+asyncpg://u@h/db"):
        with sqlite_run_lock(url), sqlite_run_lock(url):
            pass
    assert not list(tmp_path.iterdir())


def test_a_lock_file_that_cannot_be_taken_stops_run_in_one_line(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    # A directory where the lock file goes: it cannot be opened, so the run does not start
    # unguarded, and says so in one line (no traceback), before opening the database.
    database = tmp_path / "trendbot.db"
    Path(f"{database}.run.lock").mkdir()
    env = {**clean_env, "DATABASE_URL": f"sqlite+aiosqlite:///{database}"}
    done = run_cli("run", env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"trendbot run: cannot open {database}.run.lock: Is a directory"
    ], done.stderr
    assert not database.exists()
    with pytest.raises(CannotLock, match="cannot open"):
        _take(f"sqlite+aiosqlite:///{database}")
