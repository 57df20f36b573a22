"""When is a chat's digest due: local wall-clock time in an IANA zone -> UTC instant.

Pure. A wall-clock time that does not exist on a day (the spring-forward gap) is due at
the first valid minute after it; one that happens twice (fall-back) is due at the first
occurrence only. A digest that came due while the bot was down is due once, now.

A weekly digest is due at the chat's time on its weekday. Quiet hours are local wall-clock
hours (``22:00-07:00`` wraps midnight): a digest due in them is due when they end.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from bot.models import QuietHours

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


def next_due(
    *,
    at: dt.time,
    timezone: str,
    after: dt.datetime,
    weekday: int | None = None,
    quiet: QuietHours | None = None,
) -> dt.datetime:
    """The first due instant strictly after ``after`` (aware UTC datetime).

    Daily when ``weekday`` is None, else weekly on that day (0 = Monday); a time that falls
    in ``quiet`` hours moves to their end.
    """
    zone = ZoneInfo(timezone)
    after = _aware(after)
    local_day = after.astimezone(zone).date()
    for offset in range(-1, 10):
        day = local_day + dt.timedelta(days=offset)
        if weekday is not None and day.weekday() != weekday:
            continue
        candidate = due_on(day, at, zone)
        if candidate > after:
            if quiet is not None:
                candidate = quiet_end(candidate, quiet=quiet, timezone=timezone) or candidate
            return candidate
    raise AssertionError("a weekly time is always due within ten days")  # pragma: no cover


def quiet_of(text: str | None) -> QuietHours | None:
    """The :class:`QuietHours` of their stored form ``HH:MM-HH:MM``; None for none."""
    if not text:
        return None
    start, _, end = text.partition("-")
    return QuietHours(dt.time.fromisoformat(start), dt.time.fromisoformat(end))


def in_quiet(moment: dt.datetime, *, quiet: QuietHours | None, timezone: str) -> bool:
    """Whether ``moment`` (UTC) falls in the chat's quiet hours."""
    return quiet is not None and quiet_end(moment, quiet=quiet, timezone=timezone) is not None


def quiet_end(moment: dt.datetime, *, quiet: QuietHours, timezone: str) -> dt.datetime | None:
    """When the quiet hours that ``moment`` falls in end (aware UTC), or None when it is
    outside them. Equal start and end mean no quiet hours."""
    zone = ZoneInfo(timezone)
    moment = _aware(moment)
    local = moment.astimezone(zone)
    now, day = local.time().replace(tzinfo=None), local.date()
    start, end = quiet.start, quiet.end
    if start < end:
        if not start <= now < end:
            return None
    elif start > end:
        if now >= start:
            day += dt.timedelta(days=1)
        elif now >= end:
            return None
    else:
        return None
    ends = due_on(day, end, zone)
    if ends <= moment:  # the end time happens twice (fall-back) and its first is past
        ends = dt.datetime.combine(day, end, tzinfo=zone).replace(fold=1).astimezone(UTC)
    return ends if ends > moment else None


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def naive_utc(moment: dt.datetime) -> dt.datetime:
    """The naive UTC datetime the store keeps."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def local_date(moment_utc: dt.datetime, timezone: str) -> dt.date:
    aware = moment_utc if moment_utc.tzinfo else moment_utc.replace(tzinfo=UTC)
    return aware.astimezone(ZoneInfo(timezone)).date()
