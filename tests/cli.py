"""``trendbot`` in a child process, as an operator runs it: a command to its end, or a
``trendbot run`` in the background with its output in log files."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

TRENDBOT = (sys.executable, "-m", "bot")
# Where each background process started by ``start_cli`` writes its stderr, by pid.
_STDERR: dict[int, Path] = {}


def run_cli(
    *args: str | bytes,
    env: dict[str, str],
    cwd: Path,
    stdin: str | None = None,
    timeout: float = 120,
    errors: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``trendbot args`` to its end, its output captured as text (decoded with ``errors``)."""
    return subprocess.run(
        [*TRENDBOT, *args],
        env=env,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        errors=errors,
        timeout=timeout,
    )


async def run_cli_async(
    *args: str, env: dict[str, str], cwd: Path, seconds: float = 120
) -> subprocess.CompletedProcess[str]:
    """``trendbot args`` to its end (within ``seconds``) like ``run_cli``, stdin closed,
    without blocking the event loop: a fake platform server in this loop answers it meanwhile."""
    process = await asyncio.create_subprocess_exec(
        *TRENDBOT,
        *args,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=seconds)
    assert process.returncode is not None
    return subprocess.CompletedProcess(args, process.returncode, out.decode(), err.decode())


def start_cli(
    *args: str,
    env: dict[str, str],
    cwd: Path,
    out: Path | None = None,
    err: Path | None = None,
    append: bool = False,
    pipe: bool = False,
) -> subprocess.Popen[bytes]:
    """``trendbot args`` (``run`` without any) started in the background, stdin closed.

    Its stdout goes to the file ``out`` and its stderr to ``err``, both to ``out`` where
    ``err`` is ``out``, and nowhere where one is None; ``append`` keeps what the files held.
    With ``pipe`` its stderr reaches ``err`` through a pipe, copied by a thread of this
    process: kept even while the process cannot write files (``tests.fakes.full_disk``).
    """
    mode = "ab" if append else "wb"
    with contextlib.ExitStack() as files:
        stdout: int | IO[bytes] = subprocess.DEVNULL
        stderr: int | IO[bytes] = subprocess.DEVNULL
        if out is not None:
            stdout = files.enter_context(out.open(mode))
        if err is not None and pipe:
            stderr = subprocess.PIPE
        elif err is not None:
            stderr = subprocess.STDOUT if err == out else files.enter_context(err.open(mode))
        process = subprocess.Popen(
            [*TRENDBOT, *(args or ("run",))],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
    if err is not None:
        _STDERR[process.pid] = err
    if pipe and err is not None and process.stderr is not None:
        threading.Thread(target=_copy, args=(process.stderr, err, mode), daemon=True).start()
    return process


def stderr_tail(process: subprocess.Popen[bytes], lines: int = 20) -> str:
    """The last lines a process of ``start_cli`` wrote on stderr, to explain its exit."""
    path = _STDERR.get(process.pid)
    if path is None or not path.exists():
        return "(its stderr was not kept)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _copy(source: IO[bytes], target: Path, mode: str) -> None:
    with source, target.open(mode) as sink:
        while line := source.readline():
            sink.write(line)
            sink.flush()


# What a command logs (WARNING, on stderr) when it created the database it was pointed at.
CREATED = "created a new database: "


def refusal(result: subprocess.CompletedProcess[str]) -> str:
    """The one line on stderr of a command refused with exit code 2 (beside the line naming
    the database it created, when it got that far)."""
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if CREATED not in line]
    assert len(lines) == 1, result.stderr
    return lines[0]
