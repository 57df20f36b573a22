"""A private PostgreSQL cluster for one test, that the test may stop and start at will.

The suite's PostgreSQL server is shared by every lane and never stopped; a test that needs
a real server to shut down (sessions ended with FATAL 57P01, a connect answered FATAL 57P03
"the database system is shutting down") makes its own here: ``initdb`` in a temporary
directory, the server listening on 127.0.0.1 at a port of its own (``tests.ports``) and on
a Unix socket in that directory, trust authentication for ``postgres``. It is stopped and
its directory removed when the ``async with`` block ends.

PostgreSQL refuses to run as root: where the tests run as root (CI), ``initdb`` and
``pg_ctl`` run as the ``postgres`` user through ``runuser``, in a directory given to it.
Where something is missing (the server's binaries, ``runuser``, the user), or ``initdb``
fails, the calling test is skipped, saying why.

A shutdown checkpoint writes every dirty buffer; with ``fsync`` off it takes a fraction of
a second (97 MB in 0.04 s here), too short a window to meet reliably. :meth:`PgCluster.stop`
can hold it (``hold_checkpoint``): the checkpointer is paused (SIGSTOP) before the stop is
asked and resumed (SIGCONT) that many seconds later, as a slow disk would hold it.
Meanwhile the real postmaster refuses connections as it does while it shuts down.
:meth:`PgCluster.dirty` leaves buffers for the checkpoint to write.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import pwd
import re
import shutil
import signal
import tempfile
from pathlib import Path
from types import TracebackType

import asyncpg
import pytest

from tests.ports import free_port

USER = "postgres"  # the cluster's superuser, and the system user that runs it under root
START_SECONDS = 60  # pg_ctl's wait for a start or a stop, on a loaded machine
# One row to a page (fillfactor 10 leaves room for one row of this size): each row dirties a
# whole buffer for the checkpoint to write.
ROW_CHARS = 500
ROWS_PER_MEGABYTE = 128
INITDB_OPTIONS = ("-A", "trust", "-U", USER, "-E", "UTF8", "--locale=C", "--no-sync")
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "fsync": "off",  # a throwaway cluster: its data need not survive a crash
    "synchronous_commit": "off",
    "full_page_writes": "off",
    # Dirty buffers stay in memory until the shutdown checkpoint writes them: no background
    # writer, no timed checkpoint, no checkpoint forced by the WAL's size.
    "bgwriter_lru_maxpages": "0",
    "checkpoint_timeout": "1h",
    "max_wal_size": "4GB",
    "log_checkpoints": "on",
    "log_connections": "off",
    "max_connections": "100",
}


def binaries() -> Path | None:
    """The directory of the newest installed server's ``initdb``, ``pg_ctl`` and ``postgres``."""
    found = [
        Path(d)
        for d in glob.glob("/usr/lib/postgresql/*/bin")
        if all(os.access(Path(d) / name, os.X_OK) for name in ("initdb", "pg_ctl", "postgres"))
    ]
    if not found:
        return None
    return max(found, key=lambda d: int(re.sub(r"\D", "", d.parent.name) or 0))


class PgCluster:
    """``async with PgCluster() as pg``: a server started, its database at ``pg.url()``;
    ``stop`` and ``start`` it again as often as the test needs."""

    def __init__(self, *, shared_buffers_mb: int = 128) -> None:
        self.shared_buffers_mb = shared_buffers_mb
        self.port = 0
        self.directory: Path | None = None
        self.running = False
        self._bin = Path()
        self._as_user: list[str] = []

    # Where it is ----------------------------------------------------------------------

    def url(self, database: str = USER) -> str:
        """SQLAlchemy's URL of ``database`` over TCP (what the bot is given)."""
        return f"postgresql+asyncpg://{USER}@127.0.0.1:{self.port}/{database}"

    def socket_url(self, database: str = USER) -> str:
        """The same database over the cluster's Unix socket, which a start with ``tcp=False``
        alone listens on."""
        return f"postgresql+asyncpg://{USER}@/{database}?host={self.directory}&port={self.port}"

    @property
    def data(self) -> Path:
        assert self.directory is not None
        return self.directory / "data"

    def log(self) -> str:
        """The server's log so far (its checkpoints: "checkpoint complete: wrote N buffers")."""
        try:
            return (self.data.parent / "server.log").read_text(errors="replace")
        except OSError:
            return ""

    # Life -----------------------------------------------------------------------------

    async def __aenter__(self) -> PgCluster:
        found = binaries()
        if found is None:
            pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
        self._bin = found
        owner = None
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                pytest.skip("PostgreSQL will not run as root, and runuser is missing")
            try:
                owner = pwd.getpwnam(USER)
            except KeyError:
                pytest.skip(f"PostgreSQL will not run as root, and there is no {USER} user")
            self._as_user = [runuser, "-u", USER, "--"]
        # Not pytest's tmp_path: under /tmp/pytest-of-root, which the postgres user may not
        # be able to enter. The socket's path must also stay short (107 bytes).
        self.directory = Path(tempfile.mkdtemp(prefix="pgcluster-"))
        try:
            if owner is not None:
                os.chown(self.directory, owner.pw_uid, owner.pw_gid)
            os.chmod(self.directory, 0o700)
            self.port = free_port()
            init = await self._run("initdb", "-D", str(self.data), *INITDB_OPTIONS)
            if init[0] != 0:
                pytest.skip(f"initdb failed: {init[1][-500:]}")
            settings = dict(
                SETTINGS,
                port=str(self.port),
                unix_socket_directories=f"'{self.directory}'",
                shared_buffers=f"{self.shared_buffers_mb}MB",
            )
            with (self.data / "postgresql.conf").open("a") as conf:
                conf.writelines(f"{name} = {value}\n" for name, value in settings.items())
            await self.start()
        except BaseException:
            await self._remove()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._remove()

    async def start(self, *, tcp: bool = True) -> None:
        """Start the server and wait until it takes connections; ``tcp=False``: on the Unix
        socket alone (for the test to read the database while nothing else can reach it)."""
        options = [] if tcp else ["-o", "-c listen_addresses=''"]
        log = str(self.data.parent / "server.log")
        code, output = await self._pg_ctl("start", "-l", log, *options)
        if code != 0:
            raise RuntimeError(f"pg_ctl start failed: {output}\n{self.log()[-2000:]}")
        self.running = True

    async def stop(self, mode: str = "fast", *, hold_checkpoint: float = 0.0) -> None:
        """Shut the server down (``pg_ctl stop -m mode``) and return once it has exited.

        ``hold_checkpoint``: the shutdown checkpoint waits that many seconds before it
        starts, during which the server refuses every connect with 57P03."""
        checkpointer = await self._checkpointer() if hold_checkpoint > 0 else None
        if checkpointer is not None:
            os.kill(checkpointer, signal.SIGSTOP)
        try:
            stopping = asyncio.create_task(self._pg_ctl("stop", "-m", mode))
            if checkpointer is not None:
                await asyncio.sleep(hold_checkpoint)  # the checkpoint held: time by nature
        finally:
            if checkpointer is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(checkpointer, signal.SIGCONT)
        code, output = await stopping
        if code != 0:
            raise RuntimeError(f"pg_ctl stop failed: {output}\n{self.log()[-2000:]}")
        self.running = False

    async def dirty(self, megabytes: int) -> None:
        """Leave about ``megabytes`` of dirty buffers for the next checkpoint to write (an
        unlogged table: no WAL, and only a shutdown checkpoint writes its buffers)."""
        conn = await self._connect()
        try:
            await conn.execute(
                "CREATE UNLOGGED TABLE IF NOT EXISTS ballast (n int, pad text) "
                "WITH (fillfactor = 10, autovacuum_enabled = off)"
            )
            await conn.execute(
                "INSERT INTO ballast SELECT g, repeat('x', $1::int) "
                "FROM generate_series(1, $2::int) AS g",
                ROW_CHARS,
                megabytes * ROWS_PER_MEGABYTE,
            )
        finally:
            await conn.close()

    # Inside ---------------------------------------------------------------------------

    async def _connect(self) -> asyncpg.Connection:
        return await asyncpg.connect(
            host=str(self.directory), port=self.port, user=USER, database=USER
        )

    async def _checkpointer(self) -> int:
        conn = await self._connect()
        try:
            pid = await conn.fetchval(
                "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"
            )
        finally:
            await conn.close()
        return int(pid)

    async def _pg_ctl(self, action: str, *args: str) -> tuple[int, str]:
        return await self._run(
            "pg_ctl", action, "-D", str(self.data), "-w", "-t", str(START_SECONDS), *args
        )

    async def _run(self, program: str, *args: str) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *self._as_user,
            str(self._bin / program),
            *args,
            cwd=self.directory,  # readable by the postgres user, unlike the test's own
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await process.communicate()
        return process.returncode or 0, output.decode(errors="replace")

    async def _remove(self) -> None:
        if self.directory is None:
            return
        if self.running or (self.data / "postmaster.pid").exists():
            await self._pg_ctl("stop", "-m", "immediate")
            self.running = False
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None
