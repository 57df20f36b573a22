"""When is a chat's digest due: local wall-clock time in an IANA zone -> UTC instant.

Pure. A wall-clock time that does not exist on a day (the spring-forward gap) is due at
the first valid minute after it; one that happens twice (fall-back) is due at the first
occurrence only. A digest that came due while the bot was down is due once, now.

A weekly digest is due at the chat's time on its weekday. Quiet hours are local wall-clock
hours (``22:00-07:00`` wraps midnight): a digest due in them is due when they end.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import zoneinfo
from functools import cache
from zoneinfo import ZoneInfo

from bot.models import ChatSettings, Mode, QuietHours

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


def next_digest(
    *,
    mode: str,
    at: dt.time,
    weekday: int,
    timezone: str,
    now: dt.datetime,
    quiet: QuietHours | None = None,
) -> dt.datetime | None:
    """When a chat's next digest is due, strictly after ``now`` (aware UTC); None in instant
    mode, which has no digest. The one rule the store, the planner and the commands share.

    Args:
        mode: the chat's :class:`~bot.models.Mode` (or its stored value).
        at: the local wall-clock time of the digest.
        weekday: the day of a weekly digest (0 = Monday); a daily chat's is not read.
        timezone: the chat's IANA zone.
        now: the instant the next digest comes after (naive means UTC).
        quiet: the chat's quiet hours: a time in them moves to their end.
    """
    if mode == Mode.INSTANT:
        return None
    return next_due(
        at=at, timezone=timezone, after=now, weekday=digest_weekday(mode, weekday), quiet=quiet
    )


def next_digest_for(chat: ChatSettings, *, now: dt.datetime) -> dt.datetime | None:
    """:func:`next_digest` for a chat's settings: its mode, time, weekday, zone and quiet
    hours; strictly after ``now``, aware UTC; None in instant mode."""
    return next_digest(
        mode=chat.mode,
        at=chat.digest_time,
        weekday=chat.weekday,
        timezone=chat.timezone,
        now=now,
        quiet=chat.quiet,
    )


def digest_weekday(mode: str, weekday: int) -> int | None:
    """The day a chat's digests come on: its ``weekday`` when weekly, None otherwise (every
    day); a daily chat keeps the weekday it had, unread."""
    return weekday if mode == Mode.WEEKLY else None


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


# Abbreviations a user may type for a zone, mapped only where one zone is meant: CST (US
# Central or China), IST (India, Israel or Ireland) and BST (British or Bangladesh) are not.
ZONE_ABBREVIATIONS: dict[str, str] = {
    "UTC": "UTC",
    "GMT": "UTC",
    "Z": "UTC",
    "KST": "Asia/Seoul",
    "JST": "Asia/Tokyo",
    "HKT": "Asia/Hong_Kong",
    "SGT": "Asia/Singapore",
    "WIB": "Asia/Jakarta",
    "AEST": "Australia/Sydney",
    "AEDT": "Australia/Sydney",
    "NZST": "Pacific/Auckland",
    "NZDT": "Pacific/Auckland",
    "CET": "Europe/Berlin",
    "CEST": "Europe/Berlin",
    "EET": "Europe/Athens",
    "EEST": "Europe/Athens",
    "ET": "America/New_York",
    "EST": "America/New_York",
    "EDT": "America/New_York",
    "CT": "America/Chicago",
    "CDT": "America/Chicago",
    "MT": "America/Denver",
    "MDT": "America/Denver",
    "PT": "America/Los_Angeles",
    "PST": "America/Los_Angeles",
    "PDT": "America/Los_Angeles",
}
# Abbreviations that name more than one zone: the user is asked which they mean.
AMBIGUOUS_ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "IST": ("Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"),
    "CST": ("America/Chicago", "Asia/Shanghai", "America/Havana"),
    "BST": ("Europe/London", "Asia/Dhaka"),
    "AST": ("America/Halifax", "Asia/Riyadh"),
}
# Common city and country names in Korean (English city names are found from the zones'
# own names: ``tokyo``, ``new york``).
ZONE_NAMES_KO: dict[str, str] = {
    "서울": "Asia/Seoul",
    "부산": "Asia/Seoul",
    "한국": "Asia/Seoul",
    "도쿄": "Asia/Tokyo",
    "일본": "Asia/Tokyo",
    "베이징": "Asia/Shanghai",
    "상하이": "Asia/Shanghai",
    "중국": "Asia/Shanghai",
    "홍콩": "Asia/Hong_Kong",
    "타이베이": "Asia/Taipei",
    "싱가포르": "Asia/Singapore",
    "방콕": "Asia/Bangkok",
    "하노이": "Asia/Bangkok",
    "자카르타": "Asia/Jakarta",
    "뭄바이": "Asia/Kolkata",
    "델리": "Asia/Kolkata",
    "두바이": "Asia/Dubai",
    "모스크바": "Europe/Moscow",
    "이스탄불": "Europe/Istanbul",
    "런던": "Europe/London",
    "영국": "Europe/London",
    "파리": "Europe/Paris",
    "베를린": "Europe/Berlin",
    "뮌헨": "Europe/Berlin",
    "암스테르담": "Europe/Amsterdam",
    "취리히": "Europe/Zurich",
    "뉴욕": "America/New_York",
    "워싱턴": "America/New_York",
    "보스턴": "America/New_York",
    "토론토": "America/Toronto",
    "시카고": "America/Chicago",
    "덴버": "America/Denver",
    "로스앤젤레스": "America/Los_Angeles",
    "엘에이": "America/Los_Angeles",
    "샌프란시스코": "America/Los_Angeles",
    "시애틀": "America/Los_Angeles",
    "밴쿠버": "America/Vancouver",
    "상파울루": "America/Sao_Paulo",
    "시드니": "Australia/Sydney",
    "멜버른": "Australia/Melbourne",
    "오클랜드": "Pacific/Auckland",
}
# Offsets that are not whole hours have no Etc/ zone: the one large zone that keeps them
# all year.
_PART_HOUR_OFFSETS = {
    "+03:30": "Asia/Tehran",
    "+04:30": "Asia/Kabul",
    "+05:30": "Asia/Kolkata",
    "+05:45": "Asia/Kathmandu",
    "+06:30": "Asia/Yangon",
    "+09:30": "Australia/Darwin",
}
_OFFSET = re.compile(r"(?:UTC|GMT)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?", re.IGNORECASE)
# The areas of the tz database's geographic zones; "Etc" holds the fixed offsets and UTC.
# Anything else (``localtime``, ``Factory``, ``posixrules``, ``posix/…``, ``right/…``, the
# legacy ``EST5EDT`` and one-word aliases such as ``Japan``) is refused.
_AREAS = frozenset(
    {
        "Africa",
        "America",
        "Antarctica",
        "Arctic",
        "Asia",
        "Atlantic",
        "Australia",
        "Europe",
        "Indian",
        "Pacific",
        "Etc",
        # backward links that still name a place
        "US",
        "Canada",
        "Brazil",
        "Mexico",
        "Chile",
    }
)
_NOT_PLACES = frozenset({"Etc/Unknown"})


def is_place_zone(name: str) -> bool:
    """Whether ``name`` is a zone a chat may use: ``UTC``, ``Area/Location`` of a geographic
    area, or ``Etc/GMT±N``; never ``localtime``, ``Factory`` or ``posix/…`` copies."""
    if name == "UTC":
        return True
    area, sep, _ = name.partition("/")
    return bool(sep) and area in _AREAS and name not in _NOT_PLACES


ZONE_RULE = "must be an IANA time zone of a place, such as UTC or Asia/Seoul"


def is_chat_zone(name: str) -> bool:
    """Whether a chat may keep ``name`` as its zone: a place zone (:func:`is_place_zone`)
    that the tz database has. The one check of both ``DEFAULT_TIMEZONE`` and the
    ``timezone`` command (which stores only what :func:`resolve_zone` returns)."""
    if not is_place_zone(name):
        return False
    try:
        ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def check_zone(name: str) -> str:
    """``name`` when a chat may keep it as its zone (:func:`is_chat_zone`); otherwise
    raises ValueError with a one-line reason, naming the zone meant when there is one
    (``GMT`` -> ``UTC``, ``asia/seoul`` -> ``Asia/Seoul``)."""
    if is_chat_zone(name):
        return name
    meant = resolve_zone(name)
    hint = f" (did you mean {meant}?)" if meant is not None else ""
    raise ValueError(ZONE_RULE + hint)


@cache
def _zones_by_folded_name() -> dict[str, str]:
    return {name.casefold(): name for name in zoneinfo.available_timezones() if is_place_zone(name)}


@cache
def _zones_by_city() -> dict[str, str]:
    """``new york`` -> ``America/New_York``: the last part of each place zone, when only
    one zone has it."""
    found: dict[str, str | None] = {}
    for name in zoneinfo.available_timezones():
        if not is_place_zone(name) or name.startswith("Etc/"):
            continue
        city = name.rsplit("/", 1)[-1].replace("_", " ").casefold()
        found[city] = None if city in found and found[city] != name else name
    return {city: name for city, name in found.items() if name is not None}


def zone_candidates(text: str) -> tuple[str, ...]:
    """The zones an ambiguous abbreviation may mean (``IST``: India, Ireland or Israel);
    empty when ``text`` is not one."""
    return AMBIGUOUS_ABBREVIATIONS.get(text.strip().upper(), ())


def resolve_zone(text: str) -> str | None:
    """The IANA zone a user means by ``text``, or ``None``.

    ``asia/seoul`` -> ``Asia/Seoul`` (any case); ``KST`` -> ``Asia/Seoul`` (see
    :data:`ZONE_ABBREVIATIONS`); ``UTC+9``, ``+09:00``, ``+9`` -> ``Etc/GMT-9`` and ``GMT-5`` ->
    ``Etc/GMT+5`` (the tz database's ``Etc`` names invert the sign, POSIX style).
    """
    text = text.strip()
    if not text or len(text) > 64:
        return None
    name = _zones_by_folded_name().get(text.casefold())
    if name is None:
        name = ZONE_ABBREVIATIONS.get(text.upper())
    if name is None:
        name = ZONE_NAMES_KO.get(text.replace(" ", ""))
    if name is None:
        name = _zones_by_city().get(" ".join(text.replace("_", " ").split()).casefold())
    if name is None:
        match = _OFFSET.fullmatch(text)
        if match is None:
            return None
        sign, hours, minutes = match[1], int(match[2]), int(match[3] or 0)
        if hours == 0 and minutes == 0:
            name = "UTC"
        elif minutes:
            name = _PART_HOUR_OFFSETS.get(f"{sign}{hours:02d}:{minutes:02d}")
        elif (sign == "+" and hours <= 14) or (sign == "-" and hours <= 12):
            name = f"Etc/GMT{'-' if sign == '+' else '+'}{hours}"
        if name is None:
            return None
    return name if is_chat_zone(name) else None


_ETC_OFFSET = re.compile(r"Etc/GMT([+-])(\d{1,2})")


def zone_label(name: str) -> str:
    """A stored zone as people write it: ``Etc/GMT-9`` -> ``UTC+9``, ``Etc/GMT+5`` ->
    ``UTC-5`` (the tz database's ``Etc`` names invert the sign, which reads backwards to
    everyone); any other name as it is. :func:`resolve_zone` reads the label back."""
    match = _ETC_OFFSET.fullmatch(name)
    if match is None or int(match[2]) == 0:
        return name  # Etc/GMT+0 and the like read the same either way
    sign, hours = match[1], int(match[2])
    return f"UTC{'-' if sign == '+' else '+'}{hours}"


def until(later: dt.datetime, now: dt.datetime) -> tuple[int, int]:
    """How long from ``now`` to ``later`` in whole hours and minutes, rounded up to the
    minute (a digest 30 s away is "in 1 min", not "in 0 min")."""
    seconds = max(0, math.ceil((later - now).total_seconds() / 60)) * 60
    return seconds // 3600, seconds % 3600 // 60
