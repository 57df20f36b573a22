"""What the local platform servers share: lifecycle, recorded calls, ``wait_for``, faults.

:class:`~tests.fakes.telegram_api.FakeTelegram` and :class:`~tests.fakes.slack_api.FakeSlack`
each speak their platform's API; this base holds what is the same for both: listening on
127.0.0.1 on a free port, the list of calls the bot made (``sent``) and waiting on it, and
the queues of injected failures and dropped connections, matched by method (``"*"``: any)
and target (a chat or channel id; None: any).
"""

from __future__ import annotations

import abc
import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, Self, TypeVar

from aiohttp import web


class Dropped(Exception):
    """The connection is to be closed without an answer."""


class Fault(Protocol):
    """An injected failure: it applies to calls for ``target`` (None: any), ``remaining``
    more times."""

    target: Any
    remaining: int


@dataclass(slots=True)
class Drop:
    target: Any
    remaining: int


CallT = TypeVar("CallT")
FaultT = TypeVar("FaultT", bound=Fault)


class LocalApiServer(abc.ABC, Generic[CallT]):
    """A platform API on 127.0.0.1 with an ephemeral port; use as ``async with``."""

    def __init__(self) -> None:
        self.sent: list[CallT] = []  # every call recorded, in arrival order
        self._failures: dict[str, deque[Any]] = {}
        self._drops: dict[str, deque[Drop]] = {}
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self._port = 0

    # ------------------------------------------------------------------ lifecycle

    @abc.abstractmethod
    def _routes(self, app: web.Application) -> None:
        """Add the platform's routes to ``app``."""

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Listen on 127.0.0.1 on a free port."""
        app = web.Application()
        self._routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        sockets = getattr(server, "sockets", None) or []
        self._port = sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def port(self) -> int:
        return self._port

    # ------------------------------------------------------------------ faults

    def _add_failure(self, method: str, failure: Fault) -> None:
        self._failures.setdefault(method, deque()).append(failure)

    def _add_drop(self, method: str, *, target: Any, times: int) -> None:
        self._drops.setdefault(method, deque()).append(Drop(target, times))

    def _take_failure(self, method: str, target: Any) -> Any:
        """The failure to answer this call with, if one applies (it is used up once more)."""
        return _take(self._failures, method, target)

    def _take_drop(self, method: str, target: Any) -> bool:
        return _take(self._drops, method, target) is not None

    # ------------------------------------------------------------------ what the bot did

    async def _record(self, call: CallT) -> None:
        self.sent.append(call)
        async with self._changed:
            self._changed.notify_all()

    @staticmethod
    @abc.abstractmethod
    def _is_delivered(call: CallT) -> bool:
        """Whether ``call`` delivered a message (what ``wait_for(n)`` counts)."""

    @staticmethod
    @abc.abstractmethod
    def _describe(call: CallT) -> str:
        """One call, briefly, for the message of a ``wait_for`` that timed out."""

    async def wait_for(
        self,
        until: int | Callable[[CallT], bool],
        *,
        count: int = 1,
        timeout: float = 5.0,  # noqa: ASYNC109 - the deadline is the point of this helper
    ) -> list[CallT]:
        """Wait until the bot has done what the test expects, and return those calls.

        ``until`` is either a number of delivered messages (in all, counted from the start)
        or a predicate over the recorded calls, of which ``count`` must match. Wakes on each
        recorded call; never polls. Raises ``TimeoutError`` naming what was seen.
        """
        predicate: Callable[[CallT], bool]
        if isinstance(until, int):
            count, predicate = until, self._is_delivered
        else:
            predicate = until
        matches: list[CallT] = []
        cursor = 0

        def satisfied() -> bool:
            nonlocal cursor
            calls = self.sent
            while cursor < len(calls):
                if predicate(calls[cursor]):
                    matches.append(calls[cursor])
                cursor += 1
            return len(matches) >= count

        try:
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(satisfied)
        except TimeoutError:
            recent = ", ".join(self._describe(c) for c in self.sent[-5:])
            raise TimeoutError(
                f"{len(matches)} of {count} expected calls after {timeout}s; last: [{recent}]"
            ) from None
        return matches


def _take(queues: dict[str, deque[Any]], method: str, target: Any) -> Any:
    for key in (method, "*"):
        queue = queues.get(key)
        if not queue:
            continue
        for entry in queue:
            if entry.target is None or entry.target == target:
                entry.remaining -= 1
                if entry.remaining <= 0:
                    queue.remove(entry)
                return entry
    return None
