"""Weekly due times and quiet hours, with a controlled clock: midnight wraps and the DST
changes of America/New_York (8 Mar, 1 Nov 2026) and Europe/Berlin (29 Mar, 25 Oct 2026)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.models import QuietHours
from bot.rules.schedule import in_quiet, next_due, quiet_end, quiet_of

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def q(text: str) -> QuietHours:
    quiet = quiet_of(text)
    assert quiet is not None
    return quiet


@pytest.mark.parametrize(
    ("zone", "quiet", "moment", "ends"),
    [
        # Wraps midnight: in at 23:00, out at 07:00 the next morning.
        ("UTC", "22:00-07:00", "2026-12-03T23:00:00", "2026-12-04T07:00:00"),
        ("UTC", "22:00-07:00", "2026-12-04T03:00:00", "2026-12-04T07:00:00"),
        ("UTC", "22:00-07:00", "2026-12-03T22:00:00", "2026-12-04T07:00:00"),  # start is in
        ("UTC", "22:00-07:00", "2026-12-04T07:00:00", None),  # end is out
        ("UTC", "22:00-07:00", "2026-12-04T12:00:00", None),
        # Within one day.
        ("UTC", "13:00-14:30", "2026-12-04T13:59:00", "2026-12-04T14:30:00"),
        ("UTC", "13:00-14:30", "2026-12-04T12:59:00", None),
        # Equal start and end: no quiet hours at all.
        ("UTC", "09:00-09:00", "2026-12-04T09:00:00", None),
        # Berlin: the night of spring forward (29 Mar, 02:00 CET -> 03:00 CEST).
        ("Europe/Berlin", "22:00-07:00", "2026-03-28T22:00:00", "2026-03-29T05:00:00"),
        # ... and of fall back (25 Oct, 03:00 CEST -> 02:00 CET): a 10-hour night.
        ("Europe/Berlin", "22:00-07:00", "2026-10-24T21:00:00", "2026-10-25T06:00:00"),
        # Berlin quiet hours ending in the gap: 02:30 does not exist -> 03:00 CEST.
        ("Europe/Berlin", "01:00-02:30", "2026-03-29T00:30:00", "2026-03-29T01:00:00"),
        # New York, spring forward (8 Mar): 02:30 does not exist -> 03:00 EDT.
        ("America/New_York", "01:00-02:30", "2026-03-08T06:30:00", "2026-03-08T07:00:00"),
        # New York, fall back (1 Nov): 23:00 EDT -> 07:00 EST.
        ("America/New_York", "22:00-07:00", "2026-11-01T03:00:00", "2026-11-01T12:00:00"),
        # 01:15 EST, the second 01:15: the first 01:30 (EDT) has passed, the second has not.
        ("America/New_York", "00:00-01:30", "2026-11-01T06:15:00", "2026-11-01T06:30:00"),
        ("America/New_York", "00:00-01:30", "2026-11-01T05:15:00", "2026-11-01T05:30:00"),
    ],
)
def test_quiet_hours_end(zone: str, quiet: str, moment: str, ends: str | None) -> None:
    found = quiet_end(at(moment), quiet=q(quiet), timezone=zone)
    assert found == (at(ends) if ends else None)
    assert in_quiet(at(moment), quiet=q(quiet), timezone=zone) is (ends is not None)


@pytest.mark.parametrize(
    ("zone", "local", "weekday", "quiet", "after", "expected"),
    [
        # Weekly on Monday (0): from a Thursday to the next Monday.
        ("UTC", "09:00", 0, None, "2026-12-03T10:00:00", "2026-12-07T09:00:00"),
        # On the day, just before; exactly at it -> a week later.
        ("UTC", "09:00", 0, None, "2026-12-07T08:59:00", "2026-12-07T09:00:00"),
        ("UTC", "09:00", 0, None, "2026-12-07T09:00:00", "2026-12-14T09:00:00"),
        # Seoul's Monday 07:00 is Sunday 22:00 UTC.
        ("Asia/Seoul", "07:00", 0, None, "2026-12-06T21:00:00", "2026-12-06T22:00:00"),
        # New York, Sunday 09:00 on the day of spring forward: EDT.
        ("America/New_York", "09:00", 6, None, "2026-03-07T12:00:00", "2026-03-08T13:00:00"),
        # ... and a week before it, EST.
        ("America/New_York", "09:00", 6, None, "2026-02-28T12:00:00", "2026-03-01T14:00:00"),
        # Berlin, Sunday 02:30 on 29 Mar is in the gap: 03:00 CEST.
        ("Europe/Berlin", "02:30", 6, None, "2026-03-28T12:00:00", "2026-03-29T01:00:00"),
        # Berlin, Sunday 02:30 on 25 Oct happens twice: the first, CEST.
        ("Europe/Berlin", "02:30", 6, None, "2026-10-24T12:00:00", "2026-10-25T00:30:00"),
        # Daily 23:00 in quiet hours 22:00-07:00: at their end, the next morning.
        ("UTC", "23:00", None, "22:00-07:00", "2026-12-03T12:00:00", "2026-12-04T07:00:00"),
        # ... and the next one after that is again the morning after.
        ("UTC", "23:00", None, "22:00-07:00", "2026-12-04T07:00:00", "2026-12-05T07:00:00"),
        # Berlin, daily 23:00, quiet to 07:00 across spring forward: 07:00 CEST.
        (
            "Europe/Berlin",
            "23:00",
            None,
            "22:00-07:00",
            "2026-03-28T12:00:00",
            "2026-03-29T05:00:00",
        ),
        # New York, weekly Saturday 23:30, quiet 23:00-06:00 across fall back: Sunday 06:00 EST.
        (
            "America/New_York",
            "23:30",
            5,
            "23:00-06:00",
            "2026-10-31T12:00:00",
            "2026-11-01T11:00:00",
        ),
        # A time outside the quiet hours is not moved.
        ("UTC", "09:00", 0, "22:00-07:00", "2026-12-03T10:00:00", "2026-12-07T09:00:00"),
    ],
)
def test_weekly_and_quiet_due_times(
    zone: str, local: str, weekday: int | None, quiet: str | None, after: str, expected: str
) -> None:
    due = next_due(
        at=dt.time.fromisoformat(local),
        timezone=zone,
        after=at(after),
        weekday=weekday,
        quiet=q(quiet) if quiet else None,
    )
    assert due == at(expected)


ZONES = st.sampled_from(["UTC", "America/New_York", "Europe/Berlin", "Asia/Seoul"])
TIMES = st.builds(dt.time, st.integers(0, 23), st.sampled_from([0, 15, 30, 45]))
MOMENTS = st.datetimes(min_value=dt.datetime(2026, 1, 1), max_value=dt.datetime(2027, 12, 31)).map(
    lambda d: d.replace(tzinfo=UTC)
)


@settings(deadline=None)  # timing on a busy machine is no failure
@given(ZONES, TIMES, st.one_of(st.none(), st.integers(0, 6)), TIMES, TIMES, MOMENTS)
def test_a_due_time_is_ahead_soon_and_never_in_quiet_hours(
    zone: str,
    local: dt.time,
    weekday: int | None,
    start: dt.time,
    end: dt.time,
    after: dt.datetime,
) -> None:
    quiet = QuietHours(start, end)
    due = next_due(at=local, timezone=zone, after=after, weekday=weekday, quiet=quiet)
    assert after < due <= after + dt.timedelta(days=8, hours=1)
    assert not in_quiet(due, quiet=quiet, timezone=zone)
    plain = next_due(at=local, timezone=zone, after=after, weekday=weekday)
    if weekday is not None:
        assert plain.astimezone(ZoneInfo(zone)).weekday() == weekday
    assert plain <= due
