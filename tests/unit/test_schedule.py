"""Daily due times across time zones and DST changes, with a controlled clock."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest

from bot.rules import schedule
from bot.rules.schedule import local_date, next_due

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "local", "after", "expected"),
    [
        # UTC: today if still ahead, else tomorrow.
        ("UTC", "09:00", "2026-12-03T08:59:59", "2026-12-03T09:00:00"),
        ("UTC", "09:00", "2026-12-03T09:00:00", "2026-12-04T09:00:00"),
        # Seoul is UTC+9 all year.
        ("Asia/Seoul", "09:00", "2026-12-02T23:00:00", "2026-12-03T00:00:00"),
        ("Asia/Seoul", "00:30", "2026-12-03T00:00:00", "2026-12-03T15:30:00"),
        # New York, spring forward (2026-03-08): 02:30 does not exist;
        # due at the first valid minute, 03:00 EDT.
        ("America/New_York", "02:30", "2026-03-08T05:00:00", "2026-03-08T07:00:00"),
        # ... and the day after it is 02:30 EDT again.
        ("America/New_York", "02:30", "2026-03-08T07:00:00", "2026-03-09T06:30:00"),
        # New York, fall back (2026-11-01): 01:30 happens twice -> once, the first (EDT).
        ("America/New_York", "01:30", "2026-11-01T04:00:00", "2026-11-01T05:30:00"),
        ("America/New_York", "01:30", "2026-11-01T05:30:00", "2026-11-02T06:30:00"),
        # Chatham is UTC+13:45 in (southern) summer, with a 45-minute offset.
        ("Pacific/Chatham", "09:00", "2026-12-02T12:00:00", "2026-12-02T19:15:00"),
        # Chatham spring forward (2026-09-27 02:45 -> 03:45): 03:00 is in the gap -> 03:45.
        ("Pacific/Chatham", "03:00", "2026-09-26T12:00:00", "2026-09-26T14:00:00"),
    ],
)
def test_next_due(zone: str, local: str, after: str, expected: str) -> None:
    hour, minute = map(int, local.split(":"))
    got = next_due(at=dt.time(hour, minute), timezone=zone, after=at(after))
    assert got == at(expected)


@pytest.mark.parametrize("zone", ["UTC", "Asia/Seoul", "America/New_York", "Pacific/Chatham"])
def test_exactly_one_due_time_per_local_day_over_a_year(zone: str) -> None:
    moment = at("2026-01-01T00:00:00")
    days: list[dt.date] = []
    for _ in range(366):
        moment = next_due(at=dt.time(2, 30), timezone=zone, after=moment)
        days.append(local_date(moment, zone))
    assert len(days) == len(set(days)), "a local day got two digests"
    gaps = {(b - a).days for a, b in itertools.pairwise(days)}
    assert gaps == {1}, "a local day got no digest"


def test_after_downtime_due_once_now() -> None:
    """A digest missed for days is due once: the next due time is in the future."""
    down_since = at("2026-11-28T10:00:00")
    back = at("2026-12-03T10:00:00")
    first = next_due(at=dt.time(9, 0), timezone="UTC", after=down_since)
    assert first < back
    assert next_due(at=dt.time(9, 0), timezone="UTC", after=back) == at("2026-12-04T09:00:00")


@pytest.mark.parametrize(
    ("typed", "zone"),
    [
        ("Asia/Seoul", "Asia/Seoul"),
        ("asia/SEOUL", "Asia/Seoul"),
        ("KST", "Asia/Seoul"),
        ("kst", "Asia/Seoul"),
        ("JST", "Asia/Tokyo"),
        ("UTC", "UTC"),
        ("gmt", "UTC"),
        ("UTC+9", "Etc/GMT-9"),
        ("UTC+09:00", "Etc/GMT-9"),
        ("+09:00", "Etc/GMT-9"),
        ("+9", "Etc/GMT-9"),
        ("GMT-5", "Etc/GMT+5"),
        ("-05:00", "Etc/GMT+5"),
        ("UTC+14", "Etc/GMT-14"),
        ("UTC-12", "Etc/GMT+12"),
        ("+00:00", "UTC"),
        ("+05:30", "Asia/Kolkata"),
        ("Etc/GMT-9", "Etc/GMT-9"),
        ("US/Eastern", "US/Eastern"),
    ],
)
def test_resolve_zone_takes_names_abbreviations_and_offsets(typed: str, zone: str) -> None:
    assert schedule.resolve_zone(typed) == zone


@pytest.mark.parametrize(
    "typed",
    [
        "localtime",
        "Factory",
        "posixrules",
        "posix/Asia/Seoul",
        "right/UTC",
        "EST5EDT",
        "Japan",
        "Etc/Unknown",
        "IST",  # India, Israel or Ireland
        "CST",  # US Central or China
        "UTC+15",
        "UTC-13",
        "+05:17",
        "",
        "x" * 100,
        "../../etc/passwd",
    ],
)
def test_resolve_zone_refuses_what_is_not_a_place(typed: str) -> None:
    assert schedule.resolve_zone(typed) is None


def test_every_accepted_zone_is_a_place() -> None:
    import zoneinfo

    accepted = {z for z in zoneinfo.available_timezones() if schedule.is_place_zone(z)}
    assert "Asia/Seoul" in accepted and "Etc/GMT-9" in accepted
    assert not {"localtime", "Factory", "posixrules"} & accepted
    assert not any(z.startswith(("posix/", "right/")) for z in accepted)


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(0, (0, 0)), (30, (0, 1)), (60, (0, 1)), (61, (0, 2)), (12_000, (3, 20)), (-5, (0, 0))],
)
def test_until_rounds_up_to_the_minute(seconds: int, expected: tuple[int, int]) -> None:
    now = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.UTC)
    assert schedule.until(now + dt.timedelta(seconds=seconds), now) == expected


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("Etc/GMT-9", "UTC+9"),
        ("Etc/GMT+5", "UTC-5"),
        ("Etc/GMT-14", "UTC+14"),
        ("Etc/GMT", "Etc/GMT"),
        ("UTC", "UTC"),
        ("Asia/Seoul", "Asia/Seoul"),
    ],
)
def test_a_zone_is_labelled_as_people_write_it(stored: str, shown: str) -> None:
    assert schedule.zone_label(stored) == shown
    assert schedule.resolve_zone(shown) == stored
