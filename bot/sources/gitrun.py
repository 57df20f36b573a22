"""Running the git command for a git source: bounded in time, stoppable, and leaving nothing.

``git fetch`` starts helpers of its own (``git-remote-http``, ``ssh``, ``index-pack``), which
hold the connection. Each git command therefore runs in a process group of its own (a new
session), and a command that outlives its deadline, or whose poll stops waiting for it
(the poll timed out, was cancelled, or the service is stopping), is ended with its whole
group: no helper is left behind, reparented to PID 1 and holding a socket.

Output is read as git writes it, so a caller may stop early (a tree listing past its cap)
and only what it keeps is held; git's error output goes to a temporary file, of which the
end is kept. A failure becomes a :class:`~bot.errors.SourceError` whose ``reason`` is one of
a few public words (``unreachable``, ``authentication failed``, ``timed out``...), what
``/healthz`` shows to anyone, and whose ``detail`` is git's own text without the source's
credentials, which only the log shows.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from bot.errors import SourceError
from bot.rules.sources import Credentials

GIT_TIMEOUT_SECONDS = 50.0  # below the poller's 60 s a source: a hung fetch fails alone
WATCH_INTERVAL_SECONDS = 0.05  # how soon a stop or a deadline ends the git process group
READ_CHUNK = 64 * 1024
MAX_STDERR_BYTES = 16 * 1024  # the end of git's error output kept for the log
MAX_DETAIL_CHARS = 600  # git's text in one log line
# Never ask for a password on a terminal, never read the user's or the system's config, and
# read the subdirectory as a path, never as pathspec magic (``:(top)``, ``*``).
BASE_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_LITERAL_PATHSPECS": "1",
    "LC_ALL": "C",
}
# Every command: redirects are never followed by git itself; the source follows one that
# the redirect policy allows (bot/sources/git.py), so each hop is checked as a feed's is.
# A blob over a megabyte (no page is) is streamed to disk by the fetch, never held whole in
# git's memory (core.bigFileThreshold, git-config(1); 512 MB by default).
BASE_CONFIG = (
    "-c",
    "http.followRedirects=false",
    "-c",
    "core.bigFileThreshold=1m",
)

# git's messages (LC_ALL=C) -> the public reason, the first that matches; git's own words
# never reach /healthz, where they would tell anyone what the bot's network can reach.
_REASONS = (
    ("couldn't find remote ref", "branch or tag not found"),
    ("invalid refspec", "branch or tag not found"),
    ("authentication failed", "authentication failed"),
    ("could not read username", "authentication failed"),
    ("could not read password", "authentication failed"),
    ("permission denied", "authentication failed"),
    ("host key verification failed", "authentication failed"),
    ("returned error: 401", "authentication failed"),
    ("returned error: 403", "authentication failed"),
    ("returned error: 30", "redirect refused"),
    ("returned error: 404", "repository not found"),
    ("repository not found", "repository not found"),
    ("not found", "repository not found"),
    ("does not appear to be a git repository", "repository not found"),
    ("not a git repository", "repository not found"),
    ("returned error: 5", "server error"),
    ("could not resolve", "unreachable"),
    ("failed to connect", "unreachable"),
    ("connection refused", "unreachable"),
    ("connection timed out", "unreachable"),
    ("connection reset", "unreachable"),
    ("connection closed", "unreachable"),
    ("empty reply", "unreachable"),
    ("network is unreachable", "unreachable"),
    ("no route to host", "unreachable"),
    ("ssl", "unreachable"),
    ("could not read from remote repository", "unreachable"),
    ("the remote end hung up", "unreachable"),
)


# What git says after every failure to read a remote, whatever the cause.
_BOILERPLATE = frozenset(
    {
        "Could not read from remote repository.",
        "Please make sure you have the correct access rights",
        "and the repository exists.",
    }
)


def public_reason(stderr: str) -> str:
    """The public word for what git's error output says (``failed`` for anything else)."""
    folded = stderr.lower()
    return next((reason for needle, reason in _REASONS if needle in folded), "failed")


def redirected(stderr: str) -> bool:
    """Whether git failed because the server answered a redirect it did not follow."""
    return any(f"returned error: {status}" in stderr for status in (301, 302, 303, 307, 308))


class GitOutput:
    """A running git command's standard output, read as it comes (see :meth:`GitRunner.open`)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.enough = False  # set by :meth:`close_early`: the caller stopped on purpose

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(size) if size >= 0 else self._stream.read()

    def chunks(self) -> Iterator[bytes]:
        while chunk := self._stream.read1(READ_CHUNK):  # type: ignore[attr-defined]
            yield chunk

    def records(self, separator: bytes = b"\0") -> Iterator[bytes]:
        """Each ``separator``-terminated record (``-z`` output), without reading ahead of it
        by more than one chunk."""
        pending = b""
        for chunk in self.chunks():
            pending += chunk
            *done, pending = pending.split(separator)
            yield from done
        if pending:
            yield pending

    def close_early(self) -> None:
        """The caller has what it needs: git is ended with its group, and that is no failure."""
        self.enough = True


class GitRunner:
    """Runs ``git --git-dir DIRECTORY …`` for one source.

    Args:
        source: The source's public identity, as errors name it.
        directory: The bare clone.
        stop: Set when nobody waits for the scan any longer: the running command is ended.
        timeout: Each command's deadline.
        credentials: The source's, scrubbed from every text git writes.
        env: More of git's environment (the credentials' header, for the source's host).
    """

    def __init__(
        self,
        source: str,
        *,
        directory: Path,
        stop: threading.Event | None = None,
        timeout: float = GIT_TIMEOUT_SECONDS,
        credentials: Credentials | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.source = source
        self.directory = directory
        self.stop = stop or threading.Event()
        self.timeout = timeout
        self._credentials = credentials or Credentials()
        self._extra_env = dict(env or {})

    def _env(self) -> dict[str, str]:
        return {
            **BASE_ENV,
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.directory),  # no user's config or credentials leak in
            "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
            **self._extra_env,
        }

    def run(self, *args: str, stdin: bytes | None = None) -> bytes:
        """The command's whole output; a SourceError when it fails, times out or is stopped."""
        with self.open(*args, stdin=stdin) as out:
            return out.read()

    @contextlib.contextmanager
    def open(self, *args: str, stdin: bytes | None = None) -> Iterator[GitOutput]:
        """The command running, its output to read; on leaving, the command has ended and
        its process group with it.

        Raises:
            SourceError: git is not installed, or the command failed, outlived
                ``timeout`` or was stopped (unless the caller called ``close_early``).
        """
        if self.stop.is_set():
            raise SourceError(self.source, "stopped")
        errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed below
        try:
            # The arguments are this module's callers' own and the repository's ids: no
            # shell, and the source URL is never among them (it is in the clone's config).
            process = subprocess.Popen(  # noqa: S603
                ["git", *BASE_CONFIG, "--git-dir", str(self.directory), *args],  # noqa: S607
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=self._env(),
                start_new_session=True,  # its own process group, ended as one
            )
        except FileNotFoundError:
            errors.close()
            raise SourceError(self.source, "the git command is not installed") from None
        watch = _Watch(process, stop=self.stop, deadline=time.monotonic() + self.timeout)
        feeder = _feed(process, stdin)
        assert process.stdout is not None
        output = GitOutput(process.stdout)
        failed: BaseException | None = None
        try:
            yield output
        except BaseException as exc:
            failed = exc
            raise
        finally:
            if failed is not None or output.enough:
                watch.end_group()
            process.stdout.close()
            returncode = process.wait()
            watch.finished()
            if feeder is not None:
                feeder.join()
            errors.seek(max(0, os.fstat(errors.fileno()).st_size - MAX_STDERR_BYTES))
            stderr = errors.read().decode("utf-8", "replace")
            errors.close()
        if output.enough:
            return
        if watch.why is not None:
            raise SourceError(self.source, _named(args, watch.why, self.timeout))
        if returncode != 0:
            raise SourceError(
                self.source,
                f"git {args[0]}: {public_reason(stderr)}",
                detail=self._detail(stderr),
            )

    def _detail(self, stderr: str) -> str:
        """git's error output as one line: its own words, without the advice it adds to
        every failure of a remote, and without the source's credentials."""
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        lines = [line.removeprefix("fatal: ").removeprefix("error: ") for line in lines]
        lines = [line for line in lines if line not in _BOILERPLATE] or lines
        # git asks for a user name or password when the server refused the credentials of
        # its header (or wanted some): what it means, not git's prompt.
        lines = [
            "Authentication failed"
            + (": the server refused the credentials" if self._credentials else "")
            if line.startswith(("could not read Username", "could not read Password"))
            else line
            for line in lines
        ]
        text = self._credentials.scrub("; ".join(lines) or "failed")
        return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"


def _named(args: Sequence[str], why: str, timeout: float) -> str:
    if why == "stopped":
        return "stopped"
    return f"git {args[0]}: timed out after {timeout:g} s"


def _feed(process: subprocess.Popen[bytes], data: bytes | None) -> threading.Thread | None:
    """Writes ``data`` to git's stdin beside the reader, so neither pipe fills and blocks."""
    if data is None:
        return None

    def write() -> None:
        assert process.stdin is not None
        with contextlib.suppress(OSError):  # git ended early: the reader learns why
            process.stdin.write(data)
        with contextlib.suppress(OSError):
            process.stdin.close()

    thread = threading.Thread(target=write, name="git-stdin", daemon=True)
    thread.start()
    return thread


class _Watch:
    """Ends the process group when the deadline passes or ``stop`` is set."""

    def __init__(
        self, process: subprocess.Popen[bytes], *, stop: threading.Event, deadline: float
    ) -> None:
        self._process = process
        self._stop = stop
        self._deadline = deadline
        self._done = threading.Event()
        self.why: str | None = None
        self._thread = threading.Thread(target=self._run, name="git-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(WATCH_INTERVAL_SECONDS):
            if self._stop.is_set():
                self.why = "stopped"
            elif time.monotonic() > self._deadline:
                self.why = "timed out"
            else:
                continue
            self.end_group()
            return

    def end_group(self) -> None:
        """SIGKILL to git and every helper it started (they share its process group)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)

    def finished(self) -> None:
        """git has exited: any helper still in its group goes too, and the watch ends."""
        self._done.set()
        self._thread.join()
        self.end_group()


def auth_environment(remote: str, credentials: Credentials) -> dict[str, str]:
    """git's environment for a repository's credentials: an ``Authorization: Basic``
    header sent to the repository's scheme, host and port alone (``http.<url>.extraHeader``
    through ``GIT_CONFIG_COUNT``, git 2.31)."""
    basic = credentials.basic()
    if basic is None or not remote.startswith(("https://", "http://")):
        return {}
    parts = urlsplit(remote)
    pair = base64.b64encode(":".join(basic).encode("utf-8")).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"http.{parts.scheme}://{parts.netloc}/.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {pair}",
    }
