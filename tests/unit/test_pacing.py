"""The pace and the per-chat slots (``bot.delivery.pacing``), as tables on a fake clock.

Nothing here reads the wall clock: each test drives virtual time, so a loaded machine
cannot change an outcome. A stall of the event loop is the clock jumping ahead while every
timer waits, as a busy loop wakes its sleepers late.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from bot import metrics
from bot.delivery.pacing import (
    PACE_CATCH_UP_SECONDS,
    PACE_HEADROOM,
    PACE_WINDOW_MARGIN_SECONDS,
    PER_CHAT_MARGIN_SECONDS,
    Abandoned,
    ChatSlots,
    Pace,
    Pacing,
    request_written,
    stamped_after,
)
from bot.delivery.replies import REPLY_ATTEMPTS, Replies
from bot.errors import OutcomeUnknown, PermanentError, RateLimited, TransientError


class FakeClock:
    """Virtual time: ``sleep`` waits until :meth:`run` moves the clock to its deadline,
    which it does only once every task has done all it can at the current time."""

    def __init__(self) -> None:
        self.now = 0.0
        self._timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._timers, (self.now + max(0.0, seconds), next(self._seq), done))
        await done

    def stall(self, seconds: float) -> None:
        """The event loop is busy for ``seconds``: time passes, no timer fires meanwhile."""
        self.now += seconds

    async def run(self, *aws: Awaitable[Any], stalls: dict[int, float] | None = None) -> list[Any]:
        """Run ``aws`` to the end; ``stalls``: after the n-th timer fires, stall so long."""
        tasks = [asyncio.ensure_future(a) for a in aws]
        fired = 0
        while True:
            for _ in range(20):  # let every task run until it waits on a timer
                await asyncio.sleep(0)
            if all(t.done() for t in tasks):
                return [t.result() for t in tasks]
            while self._timers and self._timers[0][2].done():  # cancelled sleepers
                heapq.heappop(self._timers)
            assert self._timers, "every task waits, and no timer will wake any"
            at, _, done = heapq.heappop(self._timers)
            self.now = max(self.now, at)
            done.set_result(None)
            fired += 1
            if stalls and fired in stalls:
                self.stall(stalls[fired])


def densest(stamps: list[float], *, window: float = 1.0) -> int:
    """The most stamps in any half-open window of ``window`` seconds (less a nanosecond of
    rounding: ``a + w - a`` may come out a hair under ``w``)."""
    stamps = sorted(stamps)
    most, start = 0, 0
    for end, at in enumerate(stamps):
        while at - stamps[start] >= window - 1e-9:
            start += 1
        most = max(most, end - start + 1)
    return most


async def _senders(pace: Pace, *, tasks: int, sends: int) -> list[float]:
    """``tasks`` tasks acquire ``pace`` until ``sends`` have gone; their stamps."""
    stamps: list[float] = []

    async def go() -> None:
        while len(stamps) < sends:
            stamps.append(await pace.acquire())

    await asyncio.gather(*(go() for _ in range(tasks)))
    return stamps


@pytest.mark.parametrize(("rate", "tasks"), [(30, 8), (200, 40), (1_000, 150), (0.5, 2)])
async def test_pace_keeps_the_cap_in_every_window_at_its_share_of_the_cap(
    rate: float, tasks: int
) -> None:
    clock = FakeClock()
    pace = Pace(rate, clock=clock, sleep=clock.sleep)
    sends = int(max(rate, 1) * 5)
    (stamps,) = await clock.run(_senders(pace, tasks=tasks, sends=sends))
    span = max(1.0, 1 / rate)
    assert densest(stamps, window=span) <= max(1, int(rate * span))
    mean = (len(stamps) - 1) / (max(stamps) - min(stamps))
    assert mean >= 0.95 * rate


# (rate, the timers after which the loop stalls and for how long)
STALLS = [
    (30, {3: 0.02}),
    (30, {5: 0.5, 20: 2.0}),
    (200, {10: PACE_CATCH_UP_SECONDS * 0.8}),
    (200, {10: 0.1, 50: 0.1, 90: 0.1}),
    (1_000, {100: 0.05, 300: 0.3, 301: 0.3}),
    (1_000, {n: 0.011 for n in range(50, 2_000, 37)}),
]


@pytest.mark.parametrize(("rate", "stalls"), STALLS)
async def test_a_burst_after_a_stall_never_exceeds_the_window(
    rate: int, stalls: dict[int, float]
) -> None:
    clock = FakeClock()
    pace = Pace(rate, clock=clock, sleep=clock.sleep)
    (stamps,) = await clock.run(_senders(pace, tasks=64, sends=rate * 4), stalls=stalls)
    # The stamps are when the sends left (after each stall, not when they were due):
    # no window of a second and the margin holds more than the cap.
    assert densest(stamps, window=1.0 + PACE_WINDOW_MARGIN_SECONDS) <= rate


async def test_a_caller_that_resumes_late_counts_from_when_it_resumed() -> None:
    clock = FakeClock()
    loop = asyncio.get_running_loop()

    async def sleep(seconds: float) -> None:
        await clock.sleep(seconds)
        # The loop is busy after the pace lets the caller go and before it resumes.
        loop.call_soon(clock.stall, 0.05)

    pace = Pace(1, clock=clock, sleep=sleep)
    window = 1.0 + PACE_WINDOW_MARGIN_SECONDS

    async def three() -> list[float]:
        return [await pace.acquire() for _ in range(3)]

    (stamps,) = await clock.run(three())
    # The second went 50 ms after its turn: the third keeps a window from then.
    assert stamps == [0.0, pytest.approx(window + 0.05), pytest.approx(2 * (window + 0.05))]


async def test_a_send_counts_from_when_its_request_was_written() -> None:
    clock = FakeClock()
    pace = Pace(1, clock=clock, sleep=clock.sleep)
    window = 1.0 + PACE_WINDOW_MARGIN_SECONDS

    async def two() -> list[float]:
        first = await pace.acquire()
        request_written(first + 0.2)  # it waited 200 ms for a connection, say
        return [first, await pace.acquire()]

    (stamps,) = await clock.run(two())
    assert stamps == [0.0, pytest.approx(0.2 + window)]


# (the loop's stalls while the request is written: before its headers, before its body)
WRITTEN_LATE = [(0.0, 0.0), (0.2, 0.0), (0.0, 0.05), (0.03, 0.3)]


@pytest.mark.parametrize(("before_headers", "before_body"), WRITTEN_LATE)
async def test_a_send_counts_from_the_last_part_of_its_request_on_the_paces_clock(
    before_headers: float, before_body: float
) -> None:
    """The transport says when each part of the request is handed to the socket, and the
    stamp is read on the pace's own clock (the fake one here): the last part counts."""
    clock = FakeClock()
    pace = Pace(1, clock=clock, sleep=clock.sleep)
    window = 1.0 + PACE_WINDOW_MARGIN_SECONDS

    async def two() -> list[float]:
        first = await pace.acquire()
        clock.stall(before_headers)
        request_written()
        clock.stall(before_body)
        request_written()
        return [first, await pace.acquire()]

    (stamps,) = await clock.run(two())
    assert stamps == [0.0, pytest.approx(before_headers + before_body + window)]


def _stamp_before(write: Callable[[float], None]) -> Callable[[float], None]:
    """The order of a transport that stamps a send before handing its bytes to the kernel
    (aiohttp's trace of a sent chunk): what :func:`stamped_after` replaced."""

    def stamp_then_write(stall: float) -> None:
        request_written()
        write(stall)

    return stamp_then_write


async def _starved_sends(
    order: Callable[[Callable[[float], None]], Callable[[float], None]],
    *,
    rate: int,
    tasks: int,
    seed: int,
) -> list[float]:
    """``rate`` x 20 sends through ``tasks`` tasks, each answered in 100 ms, one request's
    write in 20 losing the core for 50 or 100 ms (the clock jumps while its bytes wait to
    reach the kernel, which takes the moment they arrive); their arrivals."""
    sends, latency = rate * 20, 0.1
    clock = FakeClock()
    pace = Pace(rate, clock=clock, sleep=clock.sleep)
    rng = random.Random(seed)
    arrivals: list[float] = []

    def kernel_write(stall: float) -> None:
        clock.stall(stall)  # the process waits for a core, its request not yet written
        arrivals.append(clock.now)

    write = order(kernel_write)

    async def task() -> None:
        while len(arrivals) < sends:
            await pace.acquire(hold=True)
            try:
                write(rng.choice((0.05, 0.1)) if rng.random() < 0.05 else 0.0)
                await clock.sleep(latency)  # the answer
            finally:
                pace.release()

    await clock.run(*(task() for _ in range(tasks)))
    return arrivals


@pytest.mark.parametrize(("rate", "tasks"), [(10, 5), (30, 8), (100, 40)])
async def test_a_starved_process_never_puts_more_than_the_cap_in_a_second_of_arrivals(
    rate: int, tasks: int
) -> None:
    """The process loses its core between reading the clock and writing a request (the
    fake clock jumps there), as it does beside another busy process: stamped after the
    write, no second of arrivals holds more than the cap, counted exactly as the platform
    counts (no margin); stamped before it, as aiohttp's trace of a sent chunk did, a write
    that lands late joins a window the pace had already filled."""
    over_before = 0
    for seed in range(3):
        arrivals = await _starved_sends(stamped_after, rate=rate, tasks=tasks, seed=seed)
        assert densest(arrivals) <= rate
        assert len(arrivals) / (max(arrivals) - min(arrivals)) >= 0.75 * rate  # late, not lost
        before = await _starved_sends(_stamp_before, rate=rate, tasks=tasks, seed=seed)
        over_before += densest(before) > rate
    assert over_before  # the fault this reproduces


async def test_a_held_send_counts_in_every_window_until_it_is_over() -> None:
    clock = FakeClock()
    pace = Pace(1, clock=clock, sleep=clock.sleep)
    stamps: list[float] = []

    async def send(after: float, *, written: float, answered: float) -> None:
        await clock.sleep(after)
        stamps.append(await pace.acquire(hold=True))
        try:
            await clock.sleep(written)  # waiting for a connection, say
            request_written()
            await clock.sleep(answered)
        finally:
            pace.release()

    await clock.run(send(0.0, written=2.9, answered=0.1), send(0.5, written=0.0, answered=0.1))
    # Without the hold the second would have gone a window after the first's turn (at
    # 1.03 s), 1.87 s before the first's request was written: two in the same second.
    assert stamps == [0.0, pytest.approx(2.9 + 1.0 + PACE_WINDOW_MARGIN_SECONDS)]


async def test_no_more_than_the_cap_of_sends_are_unsettled_at_once() -> None:
    """Answered sends whose records are slow (a database away) stop new sends once a
    window's worth is unsettled, and those go as records settle: what a crash can send
    twice stays within the cap. Answered and settled at once, the next ones go on the
    even schedule."""
    clock = FakeClock()
    pace = Pace(3, clock=clock, sleep=clock.sleep)
    stamps: list[float] = []

    async def send(*, recorded: float) -> None:
        stamps.append(await pace.acquire(hold=True, settle=True))
        try:
            await clock.sleep(0.1)  # the answer
        finally:
            pace.release()
        try:
            await clock.sleep(recorded)  # the record's commit
        finally:
            pace.settle()

    # Three records take 10 s: the fourth send waits for the first of them.
    await clock.run(*(send(recorded=10.0 if n < 3 else 0.0) for n in range(5)))
    spacing = 1 / (3 * PACE_HEADROOM)
    assert stamps[2] < 1.0
    assert stamps[3] == pytest.approx(0.1 + 10.0)
    assert stamps[3] < stamps[4] <= stamps[3] + spacing


async def test_a_reply_goes_while_the_sends_ahead_wait_for_their_records() -> None:
    """The sends let go wait for their records (a database that takes no writes): no new
    delivery goes, but a reply (``first``, never recorded) goes at its turn in the cap,
    ahead of the deliveries waiting, and counts in the window like any send."""
    clock = FakeClock()
    pace = Pace(3, clock=clock, sleep=clock.sleep)
    deliveries: list[float] = []
    replies: list[float] = []

    async def deliver() -> None:
        deliveries.append(await pace.acquire(hold=True, settle=True))
        pace.release()
        await clock.sleep(30.0)  # the record waits for the database
        pace.settle()

    async def reply(at: float) -> None:
        await clock.sleep(at)
        replies.append(await pace.acquire(first=True, hold=True))
        pace.release()

    await clock.run(*(deliver() for _ in range(6)), reply(2.0), reply(2.0))
    assert len([d for d in deliveries if d < 30.0]) == 3  # the cap's worth, then none
    # At once and by the even schedule's next slot: there is room in the window.
    assert replies[0] == pytest.approx(2.0)
    assert replies[1] <= 2.0 + 1 / (3 * PACE_HEADROOM)
    assert densest(deliveries + replies, window=1.0 + PACE_WINDOW_MARGIN_SECONDS) <= 3


async def test_a_send_waiting_for_its_turn_gives_its_chat_up_to_a_reply() -> None:
    """A delivery took the chat's slot and waits for a turn the unsettled sends hold back:
    a reply that comes for the chat takes the slot at once (the delivery gives up its wait,
    nothing let go) and goes at its own turn in the cap."""
    clock = FakeClock()
    pacing = Pacing(1, clock=clock, sleep=clock.sleep)
    pace, chats = pacing.pace(), pacing.chats
    await pace.acquire(hold=True, settle=True)  # sent; its record never comes
    pace.release()
    assert chats.take("7", interval=1.0) == 0.0
    events: list[tuple[str, float]] = []

    async def deliver() -> None:
        try:
            events.append(
                ("went", await pace.acquire(hold=True, settle=True, unless=chats.wanted("7")))
            )
        except Abandoned:
            events.append(("gave up", clock.now))
        finally:
            chats.left("7", at=None, interval=1.0)

    async def reply() -> None:
        await clock.sleep(0.5)
        await chats.take_first("7")
        at = await pace.acquire(first=True, hold=True)
        pace.release()
        chats.left("7", at=at, interval=1.0)
        events.append(("reply", at))

    await clock.run(deliver(), reply())
    assert events == [
        ("gave up", pytest.approx(0.5)),
        ("reply", pytest.approx(1.0 + PACE_WINDOW_MARGIN_SECONDS)),  # a window after the send
    ]


async def test_sends_unsettled_while_unpaced_count_once_a_cap_comes() -> None:
    """A pace with no cap lets every send go at once, but still counts those unsettled:
    given a cap of one a second, a new send waits for both that are not yet recorded."""
    clock = FakeClock()
    pace = Pace(None, clock=clock, sleep=clock.sleep)
    await pace.acquire(settle=True)
    await pace.acquire(settle=True)
    pace.set_rate(1)
    stamps: list[float] = []

    async def later() -> None:
        stamps.append(await pace.acquire(settle=True))

    async def records() -> None:
        for _ in range(2):
            await clock.sleep(5.0)
            pace.settle()

    await clock.run(later(), records())
    assert stamps == [pytest.approx(10.0)]


# (rate, how long after its turn each request is written, in the order the sends are let
# go: one waited for a connection, or for a busy event loop to come round to the task that
# writes its body; bench/fanout.py's runs on a loaded machine measured lags up to 1.7 s)
WRITES_LAG = [
    (2, [1.5, 0.0, 0.0, 0.0, 0.0, 0.0]),
    (2, [0.0, 1.2, 0.0, 1.9, 0.0, 0.0, 0.0]),
    (30, [1.2, *[0.0] * 29, 1.6, *[0.0] * 60]),
    (200, [1.5 if n % 50 == 0 else 0.0 for n in range(800)]),
]


@pytest.mark.parametrize(("rate", "lags"), WRITES_LAG)
async def test_requests_written_late_never_land_among_the_sends_after_them(
    rate: int, lags: list[float]
) -> None:
    """A request written more than a window after its turn lands among sends let go after
    it; held until its answer, it is counted with them (let go at once, the first of the
    table's first row would share a second with two others)."""
    clock = FakeClock()
    pace = Pace(rate, clock=clock, sleep=clock.sleep)
    written: list[float] = []
    order = iter(lags)

    async def worker() -> None:
        for lag in order:
            await pace.acquire(hold=True)
            try:
                await clock.sleep(lag)
                request_written()
                written.append(clock())
                await clock.sleep(0.1)  # the answer
            finally:
                pace.release()

    await clock.run(*(worker() for _ in range(rate + 4)))
    assert len(written) == len(lags)
    assert densest(written, window=1.0 + PACE_WINDOW_MARGIN_SECONDS) <= rate


async def test_a_short_stall_is_made_up_at_once_a_long_one_is_not() -> None:
    clock = FakeClock()
    pace = Pace(200, clock=clock, sleep=clock.sleep)
    interval = 1 / (200 * PACE_HEADROOM)
    stamps: list[float] = []

    async def go() -> None:
        for _ in range(10):
            stamps.append(await pace.acquire())

    await clock.run(go())
    assert stamps[-1] - stamps[0] == pytest.approx(9 * interval - PACE_CATCH_UP_SECONDS, abs=1e-9)
    # After an idle second the schedule is not a second behind: no burst of 200.
    clock.stall(1.0)
    later: list[float] = []

    async def again() -> None:
        for _ in range(20):
            later.append(await pace.acquire())

    await clock.run(again())
    made_up = sum(1 for at in later if at == later[0])
    assert made_up == int(PACE_CATCH_UP_SECONDS / interval) + 1


async def test_a_caller_with_first_goes_before_those_waiting() -> None:
    clock = FakeClock()
    pace = Pace(10, clock=clock, sleep=clock.sleep)
    order: list[str] = []

    async def go(name: str, *, first: bool = False, after: float = 0.0) -> None:
        await clock.sleep(after)
        await pace.acquire(first=first)
        order.append(name)

    await clock.run(*(go(f"digest{n}") for n in range(5)), go("reply", first=True, after=0.05))
    # The first digest went at once; the reply came while four waited and went next.
    assert order == ["digest0", "reply", "digest1", "digest2", "digest3", "digest4"]


async def test_a_cancelled_waiter_takes_no_turn() -> None:
    clock = FakeClock()
    pace = Pace(10, clock=clock, sleep=clock.sleep)
    went: list[int] = []

    async def go(n: int) -> None:
        went.append(n) if await pace.acquire() is not None else None

    tasks = [asyncio.ensure_future(go(n)) for n in range(4)]
    await asyncio.sleep(0)
    tasks[1].cancel()
    tasks[2].cancel()
    await clock.run(*(asyncio.shield(t) for t in (tasks[0], tasks[3])))
    assert went == [0, 3]
    assert clock.now == pytest.approx(1 / (10 * PACE_HEADROOM) - PACE_CATCH_UP_SECONDS)
    await clock.run(pace.acquire())  # and the pace goes on


async def test_an_unpaced_pace_never_waits() -> None:
    clock = FakeClock()
    pace = Pace(None, clock=clock, sleep=clock.sleep)
    stamps = await clock.run(*(pace.acquire() for _ in range(100)))
    assert set(stamps) == {0.0} and pace.rate is None


async def test_set_rate_changes_the_window() -> None:
    clock = FakeClock()
    pace = Pace(100, clock=clock, sleep=clock.sleep)
    pace.set_rate(10)
    (stamps,) = await clock.run(_senders(pace, tasks=4, sends=40))
    assert densest(stamps) <= 10


# ---------------------------------------------------------------------------- chat slots


@pytest.mark.parametrize(
    ("interval", "left_at", "asked_at", "wait"),
    [
        (1.0, 0.0, 0.5, 0.5 + PER_CHAT_MARGIN_SECONDS),
        (1.0, 0.0, 1.0 + PER_CHAT_MARGIN_SECONDS, 0.0),
        (3.0, 2.0, 3.0, 2.0 + PER_CHAT_MARGIN_SECONDS),
        (1.0, None, 0.1, 0.0),  # the send did not leave: the chat is free
    ],
)
def test_a_chat_is_free_its_interval_after_a_message_left(
    interval: float, left_at: float | None, asked_at: float, wait: float
) -> None:
    clock = FakeClock()
    slots = ChatSlots(clock=clock, sleep=clock.sleep)
    assert slots.take("7", interval=interval) == 0.0
    slots.left("7", at=left_at, interval=interval)
    clock.now = asked_at
    assert slots.take("7", interval=interval) == pytest.approx(wait)
    assert slots.take("8", interval=interval) == 0.0  # another chat is not held


def test_a_taken_slot_is_not_taken_twice() -> None:
    clock = FakeClock()
    slots = ChatSlots(clock=clock, sleep=clock.sleep)
    assert slots.take("7", interval=1.0) == 0.0
    assert slots.take("7", interval=1.0) == 1.0  # in flight: try again an interval on


async def test_a_reply_takes_the_chat_first_and_waits_only_what_the_chat_needs() -> None:
    clock = FakeClock()
    slots = ChatSlots(clock=clock, sleep=clock.sleep)
    assert slots.take("7", interval=1.0) == 0.0  # a digest is on its way
    took: list[float] = []

    async def reply() -> None:
        await slots.take_first("7")
        took.append(clock.now)

    async def digest_leaves() -> None:
        await clock.sleep(0.2)
        slots.left("7", at=clock.now, interval=1.0)

    waiting = asyncio.ensure_future(reply())
    await asyncio.sleep(0)
    # While the reply waits, a delivery does not take the chat.
    assert slots.take("7", interval=1.0) > 0
    await clock.run(digest_leaves(), waiting)
    assert took == [pytest.approx(1.2 + PER_CHAT_MARGIN_SECONDS)]


def test_a_hold_keeps_every_sender_from_the_chat() -> None:
    clock = FakeClock()
    slots = ChatSlots(clock=clock, sleep=clock.sleep)
    slots.hold("7", seconds=5.0)
    assert slots.take("7", interval=1.0) == 5.0


# ------------------------------------------------------------------------------- replies


def _replies(clock: FakeClock, rate: float = 30) -> Replies:
    return Replies(Pacing(rate, clock=clock, sleep=clock.sleep), platform="test", sleep=clock.sleep)


def _counted(outcome: str) -> float:
    value = metrics.REGISTRY.get_sample_value(
        "trendbot_replies_total", {"platform": "test", "outcome": outcome}
    )
    return value or 0.0


def _failing(*errors: Exception) -> tuple[Callable[[], Awaitable[str]], list[float]]:
    calls: list[float] = []
    queue = list(errors)

    async def send() -> str:
        calls.append(len(calls))
        if queue:
            raise queue.pop(0)
        return "ok"

    return send, calls


@pytest.mark.parametrize(
    ("errors", "result", "tries", "outcomes"),
    [
        ([], "ok", 1, {"sent": 1}),
        ([RateLimited("429", retry_after=3)], "ok", 2, {"sent": 1, "retried": 1}),
        (
            [RateLimited("429", retry_after=1), TransientError("502"), TransientError("503")],
            "ok",
            4,
            {"sent": 1, "retried": 3},
        ),
        ([PermanentError("400")], None, 1, {"failed": 1}),
        (
            [TransientError("timeout")] * REPLY_ATTEMPTS,
            None,
            REPLY_ATTEMPTS,
            {"retried": REPLY_ATTEMPTS - 1, "failed": 1},
        ),
        # No answer (it may have arrived): sent again once, then given up: two copies at most.
        ([OutcomeUnknown("timeout")], "ok", 2, {"sent": 1, "retried": 1}),
        (
            [OutcomeUnknown("timeout"), TransientError("502"), OutcomeUnknown("timeout")],
            None,
            3,
            {"retried": 2, "failed": 1},
        ),
    ],
)
async def test_a_reply_is_retried_as_deliveries_are_and_counted(
    errors: list[Exception], result: str | None, tries: int, outcomes: dict[str, int]
) -> None:
    clock = FakeClock()
    replies = _replies(clock)
    send, calls = _failing(*errors)
    before = {o: _counted(o) for o in ("sent", "retried", "failed")}
    (answer,) = await clock.run(replies.send(send, chat="7", interval=1.0))
    assert answer == result
    assert len(calls) == tries
    assert {o: _counted(o) - before[o] for o in before} == {o: outcomes.get(o, 0) for o in before}


async def test_a_reply_after_a_429_waits_what_the_platform_asked() -> None:
    clock = FakeClock()
    replies = _replies(clock)
    stamps: list[float] = []
    errors = [RateLimited("429", retry_after=4)]

    async def send() -> None:
        stamps.append(clock.now)
        if errors:
            raise errors.pop()

    await clock.run(replies.send(send, chat="7", interval=1.0))
    assert stamps == [0.0, 4.0]


async def test_replies_to_one_chat_are_spaced_by_its_interval() -> None:
    clock = FakeClock()
    replies = _replies(clock, rate=1_000)
    stamps: list[float] = []

    async def send() -> None:
        stamps.append(clock.now)

    async def three() -> None:
        for _ in range(3):
            await replies.send(send, chat="7", interval=1.0)

    await clock.run(three())
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert gaps == [pytest.approx(1.0 + PER_CHAT_MARGIN_SECONDS)] * 2


# (how late each reply's request was written after its turn)
WRITTEN_LATE_TO_ONE_CHAT = [(0.0, 0.0, 0.0), (0.2, 0.0, 0.0), (0.0, 0.3, 0.01), (0.08, 0.08, 0.08)]


@pytest.mark.parametrize("late", WRITTEN_LATE_TO_ONE_CHAT)
async def test_a_chat_keeps_its_interval_from_when_each_request_was_written(
    late: tuple[float, ...],
) -> None:
    """A reply let go on time but written late (the loop was busy) left late: the chat's
    next message keeps the chat's interval from when it left, not from its turn."""
    clock = FakeClock()
    replies = _replies(clock, rate=1_000)
    written: list[float] = []
    delays = iter(late)

    async def send() -> None:
        clock.stall(next(delays))
        request_written()
        written.append(clock.now)

    async def three() -> None:
        for _ in range(3):
            await replies.send(send, chat="7", interval=1.0)

    await clock.run(three())
    gaps = [b - a for a, b in itertools.pairwise(written)]
    assert all(gap >= 1.0 + PER_CHAT_MARGIN_SECONDS - 1e-9 for gap in gaps), gaps
