"""Pacing: how fast messages leave for a platform, and for each chat on it.

Everything sent to a platform goes through that platform's :class:`Pacing`: deliveries
(digests, instant messages, broadcasts, alerts) from ``bot.delivery.engine`` and the replies
to commands from the channels (``bot.delivery.replies``). So the platform's cap and each
chat's limit hold for all of it together, and a reply goes ahead of queued deliveries.

The platforms count a message when it arrives, over an exact window (the Bot API FAQ: about
one message a second in a chat, 20 a minute in a group, 30 a second in all; Slack's
chat.postMessage: one a second per channel). So a :class:`Pace` stamps a send when it is
let go, moves the stamp on to when the transport says the request was written, and keeps a
log of those stamps: no more sends than the cap in any window of its span and a margin,
however late the event loop wakes. A send let go and not yet over counts as in every
window until it is (``acquire(hold=True)`` ... :meth:`Pace.release`): a request may be
written long after its turn (waiting for a connection, or for a busy event loop to come
round to the task that writes its body), and it must not then land among sends let go
after it. No credit piles up while nothing is sent, as it would in a token bucket.

Both :class:`Pace` and :class:`ChatSlots` take the clock and the sleep they use, so their
tests run on a fake clock.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import contextvars
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

# A platform cap is paced with this much to spare: sends are spaced evenly at this share of
# the cap, and what a late wake-up of the event loop holds back is made up in a burst.
PACE_HEADROOM = 0.98
# However they bunch up, no more sends than the cap allows in a second go in any window of a
# second and this much: the platform counts them on arrival, and a send let go on time may
# reach it a little late (the next turn of the event loop, building the request, the
# server's own loop) while a later one does not. It also holds the steady rate to
# 1 / 1.03 = 0.971 of the cap. With 20 ms, runs at 1,000/s and 100 ms on PostgreSQL drew
# 2 429s in one run of two (an exact server, bench/fanout.py); with 30 ms, none in six.
PACE_WINDOW_MARGIN_SECONDS = 0.03
# A schedule that runs further behind than this (a long stall) is moved; the rest of the
# time is not made up.
PACE_CATCH_UP_SECONDS = 0.03
# Extra spacing on top of each per-chat limit, against the same jitter on the way.
PER_CHAT_MARGIN_SECONDS = 0.05
# Chats whose next free time is kept; past this, those already free are forgotten.
CHAT_SLOTS_KEPT = 10_000

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
_Data = TypeVar("_Data")

# The stamp of the send this task was last let go for, and the pace that let it go (whose
# clock reads it); the transport moves the stamp on to when the request was written
# (:func:`request_written`).
_LEAVING: contextvars.ContextVar[tuple[list[float], Pace] | None] = contextvars.ContextVar(
    "pacing_leaving", default=None
)


class Pace:
    """Lets sends go, across tasks, at ``rate`` a second as the platform counts them.

    :meth:`acquire` returns the moment its send may go (its stamp); the caller hands the
    request to the transport at once. Sends are spaced evenly at ``PACE_HEADROOM`` x
    ``rate``; one that is let go late (the event loop was busy) goes at once, and so do
    those that fell due meanwhile, up to ``PACE_CATCH_UP_SECONDS`` of them. What bounds
    any burst is the log of the stamps: no more than ``rate`` sends (at least one) in any
    second and ``PACE_WINDOW_MARGIN_SECONDS`` (for a rate under one a second, in
    ``1 / rate`` seconds and the margin). Callers that ask with ``first`` (replies to
    commands) go before every caller waiting without it; each kind in its turn.

    A send acquired with ``hold`` counts as in every window until :meth:`release`, then
    from the moment its request was last written: so the stamps the transport reports,
    however late after the turn, never put more than ``rate`` sends in a window (a send
    let go while others are still on their way is counted with them, wherever their
    writes land). One acquired with ``settle`` is also counted until :meth:`settle`, and
    no more than a window's worth (``rate``) are unsettled at once.
    """

    def __init__(
        self,
        rate: float | None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._interval = 0.0
        self._window = 0.0
        self._next = float("-inf")  # the even schedule's next slot
        self._cap = 1  # sends a window holds
        # The stamps of the last sends that are over (as many as the window holds), in
        # order; each in a cell of its own, which the transport moves on to when the request
        # was written (see :func:`request_written`), so after a move it is sorted again.
        self._log: list[list[float]] = []
        self._unsorted = False
        self._held = 0  # sends let go with ``hold`` and not yet released
        self._unsettled = 0  # sends let go with ``settle`` and not yet settled
        self._released = asyncio.Event()
        # Waiting: with ``hold``? with ``settle``?
        self._holds: dict[asyncio.Future[list[float]], tuple[bool, bool]] = {}
        self._first: deque[asyncio.Future[list[float]]] = deque()
        self._rest: deque[asyncio.Future[list[float]]] = deque()
        self._driver: asyncio.Task[None] | None = None
        self.set_rate(rate)

    def set_rate(self, rate: float | None) -> None:
        """Pace at ``rate`` a second from now on (None or 0: not at all)."""
        self._interval = 1.0 / (rate * PACE_HEADROOM) if rate else 0.0
        if rate:
            span = max(1.0, 1.0 / rate)
            self._window = span + PACE_WINDOW_MARGIN_SECONDS
            self._cap = max(1, int(rate * span + 1e-9))
            self._trim()

    @property
    def rate(self) -> float | None:
        """Sends per second this pace lets go on average (None: unpaced)."""
        return 1.0 / self._interval if self._interval else None

    @property
    def waiting(self) -> int:
        """Callers waiting for their turn."""
        return len(self._first) + len(self._rest)

    async def acquire(
        self,
        *,
        first: bool = False,
        hold: bool = False,
        settle: bool = False,
        unless: asyncio.Event | None = None,
    ) -> float:
        """Wait for this send's turn; return its stamp: the clock's time when the caller
        resumed with its turn (a caller let go while the event loop was busy resumes late,
        and its send counts from then, so the sends after it keep their distance).

        Args:
            first: go before every caller waiting without it (a reply to a command).
            hold: the send counts as in every window until the caller's :meth:`release`
                (which it must call, however the send ends).
            settle: the send counts against the cap until the caller's :meth:`settle`
                (which it must call, however the send ends): no more than the cap's
                window of such sends are ever unsettled at once. The delivery engine
                settles a send once its record is committed, so at most that many are
                ever sent and not yet recorded (what a crash can send twice).
            unless: give up waiting once this is set (a reply wants the chat whose slot
                the caller holds): :class:`Abandoned` is raised, and nothing was let go.
        """
        if not self._interval:
            if settle:  # counted all the same, should a cap come (see :meth:`set_rate`)
                self._unsettled += 1
            return self._clock()
        if self._driver is None and not self._first and not self._rest:
            now = self._clock()
            if self._due(settle=settle) <= now:
                stamp = self._let_go(now, hold=hold, settle=settle)
                _LEAVING.set((stamp, self))
                return stamp[0]
        ticket: asyncio.Future[list[float]] = asyncio.get_running_loop().create_future()
        self._holds[ticket] = (hold, settle)
        queue = self._first if first else self._rest
        queue.append(ticket)
        if self._driver is None:
            self._driver = asyncio.create_task(self._drive())
        elif first:
            self._released.set()  # the driver may wait for records a reply does not need
        try:
            stamp = await (ticket if unless is None else _first_of(ticket, unless))
        except (asyncio.CancelledError, Abandoned):
            self._holds.pop(ticket, None)
            if ticket.done() and not ticket.cancelled():  # let go, then cancelled: never went
                if len(ticket.result()) == 2:
                    self._close(ticket.result())
                if settle:
                    self.settle()
            with contextlib.suppress(ValueError):
                queue.remove(ticket)
            if not self._first and not self._rest and self._driver is not None:
                self._driver.cancel()
                self._driver = None
            raise
        now = self._clock()
        if now > stamp[0]:
            stamp[0] = now
            if len(stamp) == 1:  # over at once: its stamp moved, the log is sorted again
                self._unsorted = True
        _LEAVING.set((stamp, self))
        return stamp[0]

    def release(self) -> None:
        """The send this task acquired with ``hold`` is over (answered, failed, or never
        begun): from now on it counts from when its request was last written."""
        leaving = _LEAVING.get()
        if leaving is None or leaving[1] is not self or len(leaving[0]) != 2:
            return
        self._close(leaving[0])

    def settle(self) -> None:
        """A send acquired with ``settle`` is settled (recorded, failed, or never begun)."""
        self._unsettled -= 1
        self._released.set()

    def _close(self, stamp: list[float]) -> None:
        del stamp[1]  # over: a cell of the log
        self._held -= 1
        if self._unsorted:
            self._log.sort()
            self._unsorted = False
        bisect.insort(self._log, stamp)
        self._trim()
        self._released.set()

    def _trim(self) -> None:
        if len(self._log) > self._cap:
            if self._unsorted:
                self._log.sort()
                self._unsorted = False
            del self._log[: len(self._log) - self._cap]

    def _due(self, *, settle: bool) -> float:
        """When the next send may go: the even schedule's slot, and a window after the
        stamp that leaves room for it beside the sends still on their way. A send to be
        settled (``settle``) also waits while the cap's worth are unsettled; one that is
        not (a reply, never recorded) goes past them, within the cap all the same."""
        due = self._next
        room = self._cap - self._held  # sends over that a window may hold, and this one
        if room <= 0 or (settle and self._unsettled >= self._cap):
            return math.inf  # until one on its way is over, or one unsettled is settled
        log_ = self._log
        if len(log_) >= room:
            if self._unsorted:
                log_.sort()
                self._unsorted = False
            due = max(due, log_[-room][0] + self._window)
        return due

    def _let_go(self, now: float, *, hold: bool, settle: bool) -> list[float]:
        self._next = max(self._next, now - PACE_CATCH_UP_SECONDS) + self._interval
        if settle:
            self._unsettled += 1
        if hold:
            self._held += 1
            return [now, 0.0]  # a second item: on its way, not in the log yet
        stamp = [now]
        self._log.append(stamp)  # the latest stamp: the log stays in order
        self._trim()
        return stamp

    def _head(self) -> deque[asyncio.Future[list[float]]] | None:
        for queue in (self._first, self._rest):
            while queue and queue[0].done():  # cancelled
                queue.popleft()
            if queue:
                return queue
        return None

    async def _drive(self) -> None:
        """Let the waiting callers go, one at a time, each when its turn is due."""
        me = asyncio.current_task()
        try:
            while (queue := self._head()) is not None:
                now = self._clock()
                due = self._due(settle=self._holds.get(queue[0], (False, False))[1])
                if due == math.inf:  # the window is full of sends on their way
                    self._released.clear()
                    await self._released.wait()
                    continue
                if due > now:
                    await self._sleep(due - now)
                    continue  # a caller with ``first`` may have come meanwhile
                ticket = queue.popleft()
                hold, settle = self._holds.pop(ticket, (False, False))
                ticket.set_result(self._let_go(now, hold=hold, settle=settle))
        finally:
            if self._driver is me:
                self._driver = None


class Abandoned(Exception):
    """:meth:`Pace.acquire` gave up waiting for its turn (its ``unless`` was set)."""


async def _first_of(ticket: asyncio.Future[list[float]], unless: asyncio.Event) -> list[float]:
    """The ticket's result once it comes, unless ``unless`` is set first: then the ticket
    is cancelled and :class:`Abandoned` raised."""
    if not unless.is_set():
        gave_up = asyncio.ensure_future(unless.wait())
        try:
            await asyncio.wait((ticket, gave_up), return_when=asyncio.FIRST_COMPLETED)
        finally:
            gave_up.cancel()
    if ticket.done():
        return ticket.result()
    ticket.cancel()
    raise Abandoned


def request_written(at: float | None = None) -> None:
    """The transport wrote the request of the send this task was let go for at ``at``
    (default: now, on the clock of the pace that let it go): the send counts from then. A
    request that waited for a connection, or for a core, after its turn would otherwise
    leave later than its stamp says, closer to the sends a window after it than the
    platform allows. The transport calls it after each part of the request is handed to the
    socket (:func:`stamped_after`; a task it starts for the body inherits the stamp), so
    the last part counts."""
    leaving = _LEAVING.get()
    if leaving is None:
        return
    stamp, pace = leaving
    if at is None:
        at = pace._clock()
    if at > stamp[0]:
        stamp[0] = at
        if len(stamp) == 1:  # a send already over (not held): the log is sorted again
            pace._unsorted = True


def stamped_after(write: Callable[[_Data], object]) -> Callable[[_Data], None]:
    """``write`` (a transport's: it hands the bytes to the kernel, which takes the moment
    they arrive), then :func:`request_written`. The stamp is read after the write, never
    before it: a process that loses its core between reading the clock and writing would
    otherwise count the send earlier than it arrived, by as long as it waited for the core
    (tens of milliseconds beside another busy process, more than the window's margin), and
    a full window could then take one send more than the cap. Read after, a stamp is never
    earlier than the arrival, and a late one only holds the next sends back a little."""

    def write_then_stamp(data: _Data) -> None:
        write(data)
        request_written()

    return write_then_stamp


def written_at(stamp: float) -> float:
    """When the send this task was let go for at ``stamp`` left, as the transport said
    (:func:`request_written`); ``stamp`` when it said nothing. A chat's next message keeps
    its distance from this: a request written late leaves late."""
    leaving = _LEAVING.get()
    return stamp if leaving is None else max(stamp, leaving[0][0])


class ChatSlots:
    """When the next message may leave for each chat (or each set of chats sharing a
    limit, such as the topics of one Telegram forum group: the caller names the key).

    A sender :meth:`take` s a chat's slot, sends, and says when the message left with
    :meth:`left` (None: it did not), which frees the chat ``interval`` and
    ``PER_CHAT_MARGIN_SECONDS`` later. While a slot is taken, or a reply waits for it
    (:meth:`take_first`), no one else takes it.
    """

    def __init__(self, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._free_at: dict[str, float] = {}
        self._taken: dict[str, asyncio.Event] = {}
        self._wanted: dict[str, int] = {}  # replies waiting for the chat
        # Set when a reply comes to want a chat whose slot a send holds (see :meth:`wanted`).
        self._wants: dict[str, asyncio.Event] = {}

    def free_in(self, key: str) -> float:
        """Seconds until the chat's next message may leave (0: now)."""
        return max(0.0, self._free_at.get(key, 0.0) - self._clock())

    def take(self, key: str, *, interval: float) -> float:
        """Take the chat's slot if it is free now and return 0.0; else return the seconds
        to wait before trying again (``interval`` while another send or a reply has it)."""
        if key in self._taken or self._wanted.get(key):
            return max(interval, self.free_in(key))
        wait = self.free_in(key)
        if wait > 0:
            return wait
        self._taken[key] = asyncio.Event()
        self._wants[key] = asyncio.Event()
        return 0.0

    def wanted(self, key: str) -> asyncio.Event | None:
        """Set once a reply comes to want the chat while the send that took its slot with
        :meth:`take` holds it: a send still waiting for the platform's turn gives the slot
        up (``Pace.acquire(unless=...)``), so the reply does not wait behind a turn that may
        be long in coming (sends that wait for their records hold the deliveries' turns)."""
        return self._wants.get(key)

    def _want(self, key: str) -> None:
        self._wanted[key] = self._wanted.get(key, 0) + 1
        want = self._wants.get(key)
        if want is not None:
            want.set()

    async def take_first(self, key: str) -> None:
        """Wait until the chat's slot is free and take it, ahead of :meth:`take`."""
        self._want(key)
        try:
            while True:
                taken = self._taken.get(key)
                if taken is not None:
                    await taken.wait()
                    continue
                wait = self.free_in(key)
                if wait <= 0:
                    break
                await self._sleep(wait)
        finally:
            self._wanted[key] -= 1
            if not self._wanted[key]:
                del self._wanted[key]
        self._taken[key] = asyncio.Event()

    @contextlib.contextmanager
    def expect(self, key: str) -> Iterator[None]:
        """A reply to the chat is being made: until it is on its way (:meth:`take_first`),
        no delivery takes the chat's slot (``/digest`` queues a digest before its reply
        is sent, and the reply goes first)."""
        self._want(key)
        try:
            yield
        finally:
            self._wanted[key] -= 1
            if not self._wanted[key]:
                del self._wanted[key]

    def left(self, key: str, *, at: float | None, interval: float) -> None:
        """The send that took the chat's slot left at ``at`` (None: it did not leave)."""
        taken = self._taken.pop(key, None)
        self._wants.pop(key, None)
        if at is not None:
            free = at + interval + PER_CHAT_MARGIN_SECONDS
            self._free_at[key] = max(free, self._free_at.get(key, 0.0))
            if len(self._free_at) > CHAT_SLOTS_KEPT:
                now = self._clock()
                self._free_at = {k: t for k, t in self._free_at.items() if t > now}
        if taken is not None:
            taken.set()

    def hold(self, key: str, *, seconds: float) -> None:
        """Nothing leaves for the chat for ``seconds`` (the platform asked for it: a 429)."""
        until = self._clock() + seconds
        self._free_at[key] = max(until, self._free_at.get(key, 0.0))


class Pacing:
    """One platform's pacing, shared by everything that sends to it: its overall pace (one
    per key where the platform caps each key apart, e.g. each Slack workspace) and the
    slots of its chats."""

    def __init__(
        self,
        rate: float | None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._rate = rate
        self._clock = clock
        self._sleep = sleep
        self._paces: dict[str | None, Pace] = {}
        self.chats = ChatSlots(clock=clock, sleep=sleep)

    @property
    def rate(self) -> float | None:
        """The cap of each key's pace (None: unpaced)."""
        return self._rate

    @property
    def keys(self) -> int:
        """Keys paced apart so far (0: one pace for the whole platform)."""
        return sum(key is not None for key in self._paces)

    def pace(self, key: str | None = None) -> Pace:
        """The pace of ``key`` (None: the platform's own)."""
        pace = self._paces.get(key)
        if pace is None:
            pace = self._paces[key] = Pace(self._rate, clock=self._clock, sleep=self._sleep)
        return pace

    def set_rate(self, rate: float | None) -> None:
        """Every pace of the platform at ``rate`` from now on (replicas share a cap)."""
        self._rate = rate
        for pace in self._paces.values():
            pace.set_rate(rate)
