"""The one next-digest rule (``schedule.next_digest``) and the one zone check
(``schedule.check_zone``) that the store, the planner, the commands and the settings share."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.commands import describe_next, find_timezone
from bot.errors import ConfigError
from bot.models import ChatSettings, Mode, Platform, QuietHours
from bot.rules import schedule
from bot.settings import load_settings
from bot.store import chats as chat_store
from tests.conftest import Settings

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("mode", "local", "weekday", "zone", "now", "expected"),
    [
        # Daily: today while ahead, else tomorrow; the weekday is not read.
        (Mode.DAILY, "09:00", 3, "UTC", "2026-12-03T08:59", "2026-12-03T09:00"),
        (Mode.DAILY, "09:00", 0, "UTC", "2026-12-03T09:00", "2026-12-04T09:00"),
        (Mode.DAILY, "09:00", 0, "Asia/Seoul", "2026-12-02T23:00", "2026-12-03T00:00"),
        # Weekly on Friday (2026-12-04 is one): this week's, then next week's.
        (Mode.WEEKLY, "09:00", 4, "UTC", "2026-12-03T09:00", "2026-12-04T09:00"),
        (Mode.WEEKLY, "09:00", 4, "UTC", "2026-12-04T09:00", "2026-12-11T09:00"),
        # Friday 09:00 in Seoul is Friday 00:00 UTC; Monday 08:00 in New York (EST).
        (Mode.WEEKLY, "09:00", 4, "Asia/Seoul", "2026-12-03T12:00", "2026-12-04T00:00"),
        (Mode.WEEKLY, "08:00", 0, "America/New_York", "2026-12-03T12:00", "2026-12-07T13:00"),
        # A stored value of the mode reads the same as the mode.
        ("weekly", "08:00", 0, "America/New_York", "2026-12-03T12:00", "2026-12-07T13:00"),
        ("daily", "09:00", 6, "UTC", "2026-12-03T09:00", "2026-12-04T09:00"),
        # New York springs forward on Sunday 2026-03-08: 02:30 is due at 03:00 EDT.
        (Mode.WEEKLY, "02:30", 6, "America/New_York", "2026-03-07T00:00", "2026-03-08T07:00"),
        (Mode.DAILY, "02:30", 0, "America/New_York", "2026-03-08T07:00", "2026-03-09T06:30"),
        # Berlin falls back on Sunday 2026-10-25: 02:30 happens twice, due at the first.
        (Mode.WEEKLY, "02:30", 6, "Europe/Berlin", "2026-10-20T00:00", "2026-10-25T00:30"),
        # Offsets kept as Etc zones (the sign is POSIX's: Etc/GMT-9 is UTC+9).
        (Mode.DAILY, "09:00", 0, "Etc/GMT-9", "2026-12-03T00:00", "2026-12-04T00:00"),
        (Mode.WEEKLY, "09:00", 2, "Etc/GMT+5", "2026-12-03T00:00", "2026-12-09T14:00"),
        # Instant mode has no digest.
        (Mode.INSTANT, "09:00", 0, "UTC", "2026-12-03T08:00", None),
        ("instant", "09:00", 0, "Asia/Seoul", "2026-12-03T08:00", None),
    ],
)
def test_next_digest(
    mode: str, local: str, weekday: int, zone: str, now: str, expected: str | None
) -> None:
    due = schedule.next_digest(
        mode=mode,
        at=dt.time.fromisoformat(local),
        weekday=weekday,
        timezone=zone,
        now=at(now),
    )
    assert due == (None if expected is None else at(expected))


def test_quiet_hours_move_the_next_digest_to_their_end() -> None:
    quiet = QuietHours(dt.time(22), dt.time(7))
    due = schedule.next_digest(
        mode=Mode.WEEKLY,
        at=dt.time(23),
        weekday=4,
        timezone="Asia/Seoul",
        now=at("2026-12-01T00:00"),
        quiet=quiet,
    )
    assert due == at("2026-12-04T22:00")  # Saturday 07:00 in Seoul, when they end


# Zones with DST changes both ways (and Lord Howe's half-hour one), a southern one, a
# 45-minute offset, a zone that skipped a whole day (Apia, end of 2011) and fixed ones.
ZONES = st.sampled_from(
    [
        "UTC",
        "Asia/Seoul",
        "America/New_York",
        "Europe/Berlin",
        "Australia/Lord_Howe",
        "America/Santiago",
        "Pacific/Chatham",
        "Pacific/Apia",
        "Asia/Kolkata",
        "Etc/GMT-14",
        "Etc/GMT+12",
    ]
)
TIMES = st.times().map(lambda t: t.replace(second=0, microsecond=0))
# Moments from 2010 to 2030, naive UTC as the store keeps them or aware.
MOMENTS = st.datetimes(min_value=dt.datetime(2010, 1, 1), max_value=dt.datetime(2030, 12, 31))
# The longest a due time moves for a wall-clock time in a DST gap.
LONGEST_GAP = dt.timedelta(hours=2)


@settings(deadline=None, max_examples=300)  # timing on a busy machine is no failure
@given(
    ZONES,
    st.sampled_from([Mode.DAILY, Mode.WEEKLY]),
    TIMES,
    st.integers(0, 6),
    MOMENTS,
    st.booleans(),
)
# A Friday digest in the week Apia skipped its Friday (30 December 2011).
@example("Pacific/Apia", Mode.WEEKLY, dt.time(0, 0), 4, dt.datetime(2011, 12, 24), False)
def test_the_next_digest_is_after_now_on_its_day_at_its_time(
    zone: str, mode: Mode, local: dt.time, weekday: int, now: dt.datetime, aware: bool
) -> None:
    moment = now.replace(tzinfo=UTC) if aware else now
    due = schedule.next_digest(mode=mode, at=local, weekday=weekday, timezone=zone, now=moment)
    assert due is not None and due.tzinfo is not None
    now_utc = now.replace(tzinfo=UTC)
    assert due > now_utc
    there = due.astimezone(ZoneInfo(zone))
    # At the chat's time, or a little after it when that time does not exist that day.
    wall = dt.datetime.combine(there.date(), local)
    shown = there.replace(tzinfo=None)
    assert wall <= shown <= wall + LONGEST_GAP
    if shown != wall:  # moved: the time itself does not exist on that day
        assert schedule.due_on(there.date(), local, ZoneInfo(zone)) == due
    if mode == Mode.WEEKLY:
        # On its day; or, where a zone skipped that whole day (Apia, 30 December 2011), at
        # the first moment after it, the instant its day's time maps to.
        day_before = there.date() - dt.timedelta(days=1)
        assert there.weekday() == weekday or (
            day_before.weekday() == weekday
            and schedule.due_on(day_before, local, ZoneInfo(zone)) == due
        )
        assert due - now_utc <= dt.timedelta(days=7, hours=3)
    else:
        assert due - now_utc <= dt.timedelta(days=1, hours=3)
    # The first such time after now: the one a period before has passed already.
    period = dt.timedelta(days=7 if mode == Mode.WEEKLY else 1)
    day_before = there.date() - period
    assert schedule.due_on(day_before, local, ZoneInfo(zone)) <= now_utc or (
        # Apia skipped 30 December 2011: the day a period before is not "before" in UTC
        zone == "Pacific/Apia"
    )
    # The store keeps the same instant, naive.
    chat = ChatSettings(
        platform=Platform.TELEGRAM,
        chat_id="1",
        mode=mode,
        digest_time=local,
        timezone=zone,
        weekday=weekday,
    )
    assert chat_store.next_digest(chat, after=moment) == due.replace(tzinfo=None)


@pytest.mark.parametrize("zone", ["Etc/GMT-9", "Etc/GMT+5", "Etc/GMT-14", "Asia/Kolkata"])
@pytest.mark.parametrize("mode", [Mode.DAILY, Mode.WEEKLY])
def test_the_settings_reply_reads_the_next_digest_in_any_zone(zone: str, mode: Mode) -> None:
    # No stored next digest (or one gone by): the reply works it out with the same rule.
    chat = ChatSettings(
        platform=Platform.TELEGRAM, chat_id="1", mode=mode, timezone=zone, weekday=2
    )
    now = at("2026-12-03T00:00")  # a Thursday
    due = schedule.next_digest(mode=mode, at=chat.digest_time, weekday=2, timezone=zone, now=now)
    assert due is not None
    for stored in (None, dt.datetime(2026, 12, 1)):
        found = describe_next(chat, next_at=stored, now=now)
        assert found is not None
        when, _wait = found
        assert due.astimezone(ZoneInfo(zone)).strftime("%H:%M") in when


def test_an_instant_chat_has_no_next_digest() -> None:
    chat = ChatSettings(platform=Platform.TELEGRAM, chat_id="1", mode=Mode.INSTANT)
    assert chat_store.next_digest(chat, after=at("2026-12-03T00:00")) is None
    assert describe_next(chat, next_at=None, now=at("2026-12-03T00:00")) is None


# ---------------------------------------------------------------- the one zone check


def _settings_accept(zone: str) -> bool:
    try:
        load_settings(Settings, _env_file=None, default_timezone=zone)
    except ConfigError as exc:
        assert exc.variable == "DEFAULT_TIMEZONE"
        assert "\n" not in str(exc)
        return False
    return True


def test_each_zone_the_settings_accept_the_timezone_command_accepts() -> None:
    names = sorted(zoneinfo.available_timezones())
    accepted = [name for name in names if _settings_accept(name)]
    assert "Asia/Seoul" in accepted and "Etc/GMT-9" in accepted and "UTC" in accepted
    for name in accepted:
        assert find_timezone(name) == name  # the command keeps it as it is written
    for name in set(names) - set(accepted):
        assert find_timezone(name) != name  # refused, or read as the zone it stands for


@pytest.mark.parametrize(
    "zone",
    ["Factory", "localtime", "posixrules", "posix/Asia/Seoul", "right/UTC", "EST5EDT", "Japan"],
)
def test_what_the_command_refuses_the_settings_refuse(zone: str) -> None:
    assert find_timezone(zone) is None
    with pytest.raises(ValueError, match="IANA time zone of a place"):
        schedule.check_zone(zone)
    assert not _settings_accept(zone)


@pytest.mark.parametrize(
    ("typed", "meant"), [("GMT", "UTC"), ("KST", "Asia/Seoul"), ("asia/seoul", "Asia/Seoul")]
)
def test_a_refused_zone_names_the_one_meant(typed: str, meant: str) -> None:
    with pytest.raises(ValueError) as info:
        schedule.check_zone(typed)
    assert str(info.value).endswith(f"(did you mean {meant}?)")
