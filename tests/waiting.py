"""Waiting for something to happen: a condition polled until it holds, or a clear failure.

A test that waits for an effect nothing tells it of (a row written, a line logged, a process
listening, a screen redrawn) polls for it here rather than sleeping a fixed time: it goes on
as soon as the effect is there, and a slow or busy machine only makes it wait longer, up to
a deadline that is generous on purpose. Where the fake it waits on records calls, its own
``wait_for`` wakes on each call and is the better wait.

A test that checks that nothing happens for a while, or lets a real clock pass a lease, a
window or a grace period, sleeps instead: that is time by nature.
"""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

DEADLINE_SECONDS = 30.0  # long enough for a loaded machine; a wait ends once its check holds
INTERVAL_SECONDS = 0.05  # between two checks: a check is cheap (a read, a request)

Describe = str | Callable[[], str]


async def wait_until(
    check: Callable[[], T | Awaitable[T]],
    *,
    seconds: float = DEADLINE_SECONDS,
    what: Describe = "the expected change",
    interval: float = INTERVAL_SECONDS,
) -> T:
    """Call ``check`` (a function, or a coroutine function) until it returns a true value,
    and return that value.

    Raises ``AssertionError`` after ``seconds``, naming ``what`` it waited for (a callable
    ``what`` is called then, to describe the state the wait ended in). An exception from
    ``check`` (an assertion that the process waited on still runs, say) ends the wait at once.
    """
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(_failure(what, seconds))
        await asyncio.sleep(interval)


def wait_until_sync(
    check: Callable[[], T],
    *,
    seconds: float = DEADLINE_SECONDS,
    what: Describe = "the expected change",
    interval: float = INTERVAL_SECONDS,
) -> T:
    """:func:`wait_until` for a test with no event loop (a terminal driven by keystrokes,
    a process started and read synchronously)."""
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(_failure(what, seconds))
        time.sleep(interval)


def still_running(process: subprocess.Popen[bytes], log: Path | None = None) -> bool:
    """True while ``process`` runs; fails with the end of ``log`` once it has exited. For a
    check that waits on a process, so that its exit ends the wait at once."""
    if process.poll() is not None:
        tail = log.read_text(errors="replace")[-3000:] if log is not None else ""
        raise AssertionError(f"the process exited with code {process.returncode}\n{tail}")
    return True


def _failure(what: Describe, seconds: float) -> str:
    described = what() if callable(what) else what
    return f"waited {seconds:g} s for {described}"
