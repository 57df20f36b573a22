"""When is a chat's daily digest due: local wall-clock time in an IANA zone -> UTC instant.

Pure. A wall-clock time that does not exist on a day (the spring-forward gap) is due at
the first valid minute after it; one that happens twice (fall-back) is due at the first
occurrence only. A digest that came due while the bot was down is due once, now.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

UTC = dt.UTC
# Longest DST gap in the tz database is 2 hours; searching a little longer is harmless.
MAX_GAP_MINUTES = 180


def _to_utc(local: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    return local.replace(tzinfo=zone, fold=0).astimezone(UTC)


def _exists(local: dt.datetime, zone: ZoneInfo) -> bool:
    back = _to_utc(local, zone).astimezone(zone).replace(tzinfo=None)
    return back == local


def due_on(day: dt.date, at: dt.time, zone: ZoneInfo) -> dt.datetime:
    """The UTC instant of ``at`` local time on ``day`` (aware datetime)."""
    local = dt.datetime.combine(day, at)
    for _ in range(MAX_GAP_MINUTES):
        if _exists(local, zone):
            return _to_utc(local, zone)
        local = (local + dt.timedelta(minutes=1)).replace(second=0, microsecond=0)
    return _to_utc(dt.datetime.combine(day, at), zone)  # pragma: no cover - no such zone


def next_due(*, at: dt.time, timezone: str, after: dt.datetime) -> dt.datetime:
    """The first daily due instant strictly after ``after`` (aware UTC datetime)."""
    zone = ZoneInfo(timezone)
    after = after.astimezone(UTC) if after.tzinfo else after.replace(tzinfo=UTC)
    local_day = after.astimezone(zone).date()
    for offset in range(-1, 3):
        candidate = due_on(local_day + dt.timedelta(days=offset), at, zone)
        if candidate > after:
            return candidate
    raise AssertionError("a daily time is always due within three days")  # pragma: no cover


def naive_utc(moment: dt.datetime) -> dt.datetime:
    """The naive UTC datetime the store keeps."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def local_date(moment_utc: dt.datetime, timezone: str) -> dt.date:
    aware = moment_utc if moment_utc.tzinfo else moment_utc.replace(tzinfo=UTC)
    return aware.astimezone(ZoneInfo(timezone)).date()
