"""Operator incidents: what counts as one, when it starts and when it ends (pure).

Each check observes the bot (:class:`Observation`), turns it into signals, and compares
them with the incidents already open. An incident starts when its signal fires and none
with its key is open, and ends when its signal is clear; between the two thresholds
(``HOLD``) nothing changes, so a value hovering around a threshold does not open and close
an incident at every check. The caller stores the transitions and tells the admins: one
message when an incident starts, one when it ends.

Incidents, by key:

- ``source:ID``: the source failed ``source_failures`` polls in a row; ends at the first
  successful poll. ``ID`` is the source's id (:mod:`bot.sources`), never its configured
  URL, and the admins are told its redacted name.
- ``sends:PLATFORM``: over :data:`SEND_FAILURE_RATIO` of the sends to a platform in the last
  :data:`SEND_WINDOW` failed (at least :data:`MIN_SENDS` tried); ends at or below
  :data:`SEND_CLEAR_RATIO`.
- ``queue``: the oldest message due has waited over :data:`QUEUE_MAX_AGE`; ends at or below
  :data:`QUEUE_CLEAR_AGE`.
- ``auth:PLATFORM``: the platform rejected the bot's credentials; ends at the first
  successful send to it after that.
- ``slow:PLATFORM``: sends to the platform had no answer in time (their outcome unknown: they
  may have arrived) in the last :data:`SEND_WINDOW`, or messages were held for it (sent
  twice with no answer, not sent again); ends when the window holds none.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

SEND_WINDOW = dt.timedelta(minutes=15)  # CONTRACT.md: "over 20 % of sends failing in 15 minutes"
SEND_FAILURE_RATIO = 0.20
SEND_CLEAR_RATIO = 0.10
# Fewer sends than this in the window prove nothing (one failure of two is not an outage).
MIN_SENDS = 10
QUEUE_MAX_AGE = dt.timedelta(minutes=30)  # CONTRACT.md: "oldest queued message older than 30 min"
QUEUE_CLEAR_AGE = dt.timedelta(minutes=15)


class Level(enum.StrEnum):
    FIRING = "firing"
    HOLD = "hold"  # between the thresholds: an open incident stays open, none starts


@dataclass(frozen=True, slots=True)
class SendCounts:
    sent: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.sent + self.failed

    @property
    def ratio(self) -> float:
        return self.failed / self.total if self.total else 0.0


@dataclass(frozen=True, slots=True)
class SlowCounts:
    unknown: int = 0  # messages whose send in the window had no answer
    held: int = 0  # of them, held: sent twice with no answer, not sent again


@dataclass(frozen=True, slots=True)
class AuthState:
    reason: str
    failed_at: dt.datetime
    recovered: bool  # a send to the platform succeeded after the failure


@dataclass(frozen=True, slots=True)
class Observation:
    """The bot as one check sees it."""

    # By source id: failed polls in a row and the last error.
    source_streaks: Mapping[str, tuple[int, str | None]] = field(default_factory=dict)
    # The redacted name of each configured source, by id, as the admins are told it.
    source_names: Mapping[str, str] = field(default_factory=dict)
    sends: Mapping[str, SendCounts] = field(default_factory=dict)
    oldest_due: dt.timedelta = dt.timedelta()
    queue_depth: int = 0
    auth: Mapping[str, AuthState] = field(default_factory=dict)
    slow: Mapping[str, SlowCounts] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Signal:
    key: str
    level: Level


@dataclass(frozen=True, slots=True)
class Transition:
    """An incident starts (``started``) or ends. ``message`` is the catalogue key of what
    admins are told, ``params`` its values."""

    key: str
    started: bool
    message: str
    params: Mapping[str, str | int]


def signals(obs: Observation, *, source_failures: int) -> dict[str, Signal]:
    """The incidents ``obs`` shows, by key; a key that is absent is clear."""
    found: dict[str, Signal] = {}

    def put(key: str, level: Level) -> None:
        found[key] = Signal(key, level)

    for name, (failures, _) in obs.source_streaks.items():
        if failures >= source_failures:
            put(f"source:{name}", Level.FIRING)
        elif failures > 0:
            put(f"source:{name}", Level.HOLD)
    for platform, counts in obs.sends.items():
        if counts.total >= MIN_SENDS and counts.ratio > SEND_FAILURE_RATIO:
            put(f"sends:{platform}", Level.FIRING)
        elif counts.ratio > SEND_CLEAR_RATIO:
            put(f"sends:{platform}", Level.HOLD)
    if obs.oldest_due > QUEUE_MAX_AGE:
        put("queue", Level.FIRING)
    elif obs.oldest_due > QUEUE_CLEAR_AGE:
        put("queue", Level.HOLD)
    for platform, state in obs.auth.items():
        if not state.recovered:
            put(f"auth:{platform}", Level.FIRING)
    for platform, slow in obs.slow.items():
        if slow.unknown:
            put(f"slow:{platform}", Level.FIRING)
    return found


def transitions(
    obs: Observation, *, open_keys: frozenset[str] | set[str], source_failures: int
) -> list[Transition]:
    """What changes from the incidents ``open_keys`` given ``obs``: starts, then ends."""
    now = signals(obs, source_failures=source_failures)
    changes = [
        _describe(obs, key, started=True)
        for key, signal in sorted(now.items())
        if signal.level == Level.FIRING and key not in open_keys
    ]
    changes += [_describe(obs, key, started=False) for key in sorted(open_keys) if key not in now]
    return changes


def _minutes(delta: dt.timedelta) -> int:
    return int(delta.total_seconds() // 60)


def _describe(obs: Observation, key: str, *, started: bool) -> Transition:
    kind, _, subject = key.partition(":")
    phase = "start" if started else "clear"
    params: dict[str, str | int] = {}
    if kind == "source":
        failures, error = obs.source_streaks.get(subject, (0, None))
        name = obs.source_names.get(subject, subject)
        params = {"name": name, "count": failures, "error": error or "?"}
    elif kind == "sends":
        counts = obs.sends.get(subject, SendCounts())
        params = {
            "platform": subject.capitalize(),
            "percent": round(counts.ratio * 100),
            "failed": counts.failed,
            "total": counts.total,
        }
    elif kind == "queue":
        params = {"minutes": _minutes(obs.oldest_due), "depth": obs.queue_depth}
    elif kind == "auth":
        state = obs.auth.get(subject)
        params = {"platform": subject.capitalize(), "reason": state.reason if state else "?"}
    elif kind == "slow":
        slow = obs.slow.get(subject, SlowCounts())
        params = {"platform": subject.capitalize(), "unknown": slow.unknown, "held": slow.held}
    return Transition(key=key, started=started, message=f"dest.alert.{phase}.{kind}", params=params)
