"""A chat's settings as one line, and back (``export`` / ``import``).

``trendbot:1 filter="rl +post-training -robotics" mode=daily time=09:00 tz=Asia/Seoul lang=ko``

The line starts with the format's name and version, then ``key=value`` fields separated by
spaces, in the order of :data:`FIELDS`. A value with a space, a quote or a backslash (and
an empty one) is written in double quotes, with ``\\"`` and ``\\\\`` inside. Fields that a
chat may leave unset (``day`` of a weekly digest, ``quiet``, ``limit``) are written only
when set; a line without one of them means "not set". Every field a line names is checked
before anything is applied, so a line is taken whole or not at all.

Adding a setting is one entry in :data:`FIELDS` (how to read it from the chat, write it,
parse it, and put it back) and one attribute of :class:`ChatSettings`.

The JSON lines of ``trendbot export`` / ``import`` carry one chat each: its address, kind
and state, and this line.

Pure: imports only ``models``, ``errors``, ``filters`` and the standard library.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, TypeVar

from bot.errors import FilterError, TransferError
from bot.models import LANGUAGES, ChatKind, ChatSettings, ChatState, Mode, Platform, QuietHours
from bot.rules import filters
from bot.rules.schedule import resolve_zone, zone_label

FORMAT = "trendbot"
VERSION = 1
HEADER = f"{FORMAT}:{VERSION}"
# A line longer than this is not an export (50 tags of 64 characters and the rest fit).
MAX_LINE_CHARS = 4000

# The reasons of TransferError, each with a message in bot/i18n/destinations.py.
REASON_EMPTY = "empty"
REASON_TOO_LONG = "too_long"
REASON_HEADER = "header"  # not a trendbot line, or another version
REASON_SYNTAX = "syntax"  # not key=value, or an unterminated quote
REASON_UNKNOWN = "unknown_field"
REASON_DUPLICATE = "duplicate_field"
REASON_MISSING = "missing_field"
REASON_VALUE = "bad_value"

_TIME = re.compile(r"(\d{2}):(\d{2})")
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"'})
# A value written bare: no space, no quote (typographic ones included: the reader takes
# them for plain ones) and no backslash.
_BARE = re.compile(r'[^\s"\\\u201c-\u201f]+')
_ESCAPED = re.compile(r'["\\\u201c-\u201f]')


@dataclass(frozen=True, slots=True)
class Field:
    """One setting of the line.

    ``read`` takes the value from a chat (None: unset, the field is left out); ``write``
    turns it into text; ``parse`` turns text back into the value, raising ValueError with
    a short reason; ``apply`` puts the value (None when the line leaves it out) on a chat.
    """

    name: str
    read: Callable[[ChatSettings], Any]
    write: Callable[[Any], str]
    parse: Callable[[str], Any]
    apply: Callable[[ChatSettings, Any], ChatSettings]
    required: bool = True


def _parse_filter(text: str) -> Any:
    try:
        return filters.parse_filter(text)
    except FilterError as exc:
        raise ValueError(f"{exc.item!r}: {exc.reason}") from None


def _parse_mode(text: str) -> Mode:
    try:
        return Mode(text)
    except ValueError:
        raise ValueError("not one of " + ", ".join(m.value for m in Mode)) from None


def _parse_time(text: str) -> dt.time:
    match = _TIME.fullmatch(text)
    if not match or int(match[1]) > 23 or int(match[2]) > 59:
        raise ValueError("not a 24-hour time HH:MM")
    return dt.time(int(match[1]), int(match[2]))


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _parse_zone(text: str) -> str:
    """An IANA name, or an offset as the export writes it (``UTC+9``)."""
    if text in _zones():
        return text
    zone = resolve_zone(text) if text.upper().startswith("UTC") else None
    if zone is None:
        raise ValueError("not an IANA time zone")
    return zone


WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
LIMIT_RANGE = (1, 50)  # as the `limit` command takes


def _parse_day(text: str) -> int:
    if text not in WEEKDAYS:
        raise ValueError("not one of " + ", ".join(WEEKDAYS))
    return WEEKDAYS.index(text)


def _parse_quiet(text: str) -> QuietHours:
    start, sep, end = text.partition("-")
    if not sep:
        raise ValueError("not HH:MM-HH:MM")
    quiet = QuietHours(_parse_time(start), _parse_time(end))
    if quiet.start == quiet.end:
        raise ValueError("starts where it ends")
    return quiet


def _parse_limit(text: str) -> int:
    low, high = LIMIT_RANGE
    if not text.isdigit() or not low <= int(text) <= high:
        raise ValueError(f"not a whole number from {low} to {high}")
    return int(text)


def _parse_lang(text: str) -> str:
    if text not in LANGUAGES:
        raise ValueError("not one of " + ", ".join(LANGUAGES))
    return text


FIELDS: tuple[Field, ...] = (
    Field(
        "filter",
        read=lambda c: c.filter,
        write=filters.format_filter,
        parse=_parse_filter,
        apply=lambda c, v: replace(c, filter=v),
    ),
    Field(
        "mode",
        read=lambda c: c.mode,
        write=lambda v: str(v.value),
        parse=_parse_mode,
        apply=lambda c, v: replace(c, mode=v),
    ),
    Field(
        "time",
        read=lambda c: c.digest_time,
        write=lambda v: v.strftime("%H:%M"),
        parse=_parse_time,
        apply=lambda c, v: replace(c, digest_time=v),
    ),
    Field(
        "tz",
        read=lambda c: c.timezone,
        write=zone_label,
        parse=_parse_zone,
        apply=lambda c, v: replace(c, timezone=v),
    ),
    Field(
        "lang",
        read=lambda c: c.lang,
        write=str,
        parse=_parse_lang,
        apply=lambda c, v: replace(c, lang=v),
    ),
    # Written only when set: the weekly digest's day, quiet hours, the limit.
    Field(
        "day",
        read=lambda c: c.weekday if c.mode == Mode.WEEKLY else None,
        write=lambda v: WEEKDAYS[v],
        parse=_parse_day,
        apply=lambda c, v: replace(c, weekday=v or 0),
        required=False,
    ),
    Field(
        "quiet",
        read=lambda c: c.quiet,
        write=str,
        parse=_parse_quiet,
        apply=lambda c, v: replace(c, quiet=v),
        required=False,
    ),
    Field(
        "limit",
        read=lambda c: c.limit,
        write=str,
        parse=_parse_limit,
        apply=lambda c, v: replace(c, limit=v),
        required=False,
    ),
)
_BY_NAME = {f.name: f for f in FIELDS}


def _quote(value: str) -> str:
    if value and _BARE.fullmatch(value):
        return value
    # Every quote escaped, typographic ones too: the reader turns those into plain quotes
    # before it reads, and a value must not close its own quotes to write another field.
    return '"' + _ESCAPED.sub(lambda m: "\\" + m[0], value) + '"'


def export_line(chat: ChatSettings) -> str:
    """The chat's settings as one line (:func:`import_line` reads it back unchanged)."""
    words = [HEADER]
    for spec in FIELDS:
        value = spec.read(chat)
        if value is not None:
            words.append(f"{spec.name}={_quote(spec.write(value))}")
    return " ".join(words)


def line_of(values: Mapping[str, str]) -> str:
    """The line of settings given as text by field name (a form's fields): read back by
    :func:`import_line` with every check a typed line gets. An empty value of a field that
    may be unset leaves it out."""
    words = [HEADER]
    for spec in FIELDS:
        value = values.get(spec.name, "").strip()
        if value or spec.required:
            words.append(f"{spec.name}={_quote(value)}")
    return " ".join(words)


def _fields(text: str) -> list[tuple[str, str]]:
    """``key=value`` pairs of ``text``, values unquoted."""
    pairs: list[tuple[str, str]] = []
    i, end = 0, len(text)
    while True:
        while i < end and text[i].isspace():
            i += 1
        if i == end:
            return pairs
        start = i
        while i < end and text[i] not in '= \t\r\n"\\':
            i += 1
        key = text[start:i]
        if not key or i == end or text[i] != "=":
            word = text[start:].split(None, 1)[0] if text[start:].strip() else text[start:]
            raise TransferError(REASON_SYNTAX, field=word[:40])
        i += 1
        if i < end and text[i] == '"':
            i += 1
            chars: list[str] = []
            while True:
                if i == end:
                    raise TransferError(REASON_SYNTAX, field=key)
                char = text[i]
                if char == "\\" and i + 1 < end and text[i + 1] in '"\\':
                    chars.append(text[i + 1])
                    i += 2
                elif char == '"':
                    i += 1
                    break
                else:
                    chars.append(char)
                    i += 1
            if i < end and not text[i].isspace():
                raise TransferError(REASON_SYNTAX, field=key)
            value = "".join(chars)
        else:
            start = i
            while i < end and not text[i].isspace():
                if text[i] in '"\\':
                    raise TransferError(REASON_SYNTAX, field=key)
                i += 1
            value = text[start:i]
        pairs.append((key, value))


def parse_line(text: str) -> dict[str, Any]:
    """The values a line sets, by field name, every one checked (None: left unset).

    Raises:
        TransferError: the first thing wrong, with ``reason`` one of the ``REASON_*``,
            ``field`` the field concerned and ``detail`` what was wrong with its value.
    """
    # Chat clients may turn typed or pasted quotes into typographic ones.
    text = text.strip().translate(_SMART_QUOTES)
    if not text:
        raise TransferError(REASON_EMPTY)
    if len(text) > MAX_LINE_CHARS:
        raise TransferError(REASON_TOO_LONG)
    head, *tail = text.split(None, 1)
    if head != HEADER:
        raise TransferError(REASON_HEADER, field=head[:40])
    rest = tail[0] if tail else ""
    values: dict[str, Any] = {}
    for key, raw in _fields(rest):
        spec = _BY_NAME.get(key)
        if spec is None:
            raise TransferError(REASON_UNKNOWN, field=key[:40])
        if key in values:
            raise TransferError(REASON_DUPLICATE, field=key)
        try:
            values[key] = spec.parse(raw)
        except ValueError as exc:
            raise TransferError(REASON_VALUE, field=key, value=raw[:64], detail=str(exc)) from None
    for spec in FIELDS:
        if spec.name not in values:
            if spec.required:
                raise TransferError(REASON_MISSING, field=spec.name)
            values[spec.name] = None
    return values


def apply(chat: ChatSettings, values: dict[str, Any]) -> ChatSettings:
    """``chat`` with every setting of ``values`` (from :func:`parse_line`) in place."""
    for spec in FIELDS:
        chat = spec.apply(chat, values.get(spec.name))
    return chat


def import_line(chat: ChatSettings, text: str) -> ChatSettings:
    """``chat`` with the settings of the line ``text``; raises TransferError, changing
    nothing, when any part of it is wrong."""
    return apply(chat, parse_line(text))


# ---------------------------------------------------------------------------- JSON lines

# The JSON lines of ``trendbot export``: one chat each, its settings as the line above.
REASON_JSON = "json"  # not a JSON object
REASON_CHAT = "chat"  # "chat" is not PLATFORM:CHAT_ID
REASON_KIND = "kind"
REASON_STATE = "state"
RECORD_KEYS = ("chat", "kind", "state", "settings")
_CHAT_ID = re.compile(r"[A-Za-z0-9_./-]{1,64}")


@dataclass(frozen=True, slots=True)
class ChatEntry:
    """One chat of an export: where it is, and everything to set on it."""

    platform: Platform
    chat_id: str
    kind: ChatKind
    state: ChatState
    values: dict[str, Any]

    def settings(self, base: ChatSettings | None = None) -> ChatSettings:
        """The chat's settings: ``base`` (the chat as stored, if it exists) with the entry's."""
        chat = base or ChatSettings(platform=self.platform, chat_id=self.chat_id, kind=self.kind)
        return apply(replace(chat, state=self.state), self.values)


def export_record(chat: ChatSettings) -> dict[str, str]:
    return {
        "chat": chat.address,
        "kind": chat.kind.value,
        "state": chat.state.value,
        "settings": export_line(chat),
    }


def parse_record(text: str) -> ChatEntry:
    """One JSON line of ``trendbot export``, every part checked.

    Raises:
        TransferError: what is wrong; ``reason`` one of the ``REASON_*``.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise TransferError(REASON_JSON) from None
    if not isinstance(data, dict):
        raise TransferError(REASON_JSON)
    for key in data:
        if key not in RECORD_KEYS:
            raise TransferError(REASON_UNKNOWN, field=str(key)[:40])
    address = data.get("chat")
    platform_name, _, chat_id = address.partition(":") if isinstance(address, str) else ("", "", "")
    try:
        platform = Platform(platform_name)
    except ValueError:
        platform = None
    if platform is None or not _CHAT_ID.fullmatch(chat_id):
        raise TransferError(REASON_CHAT, value=str(address)[:80])
    kind = _choice(data, "kind", enum=ChatKind, reason=REASON_KIND, default=ChatKind.PRIVATE)
    state = _choice(data, "state", enum=ChatState, reason=REASON_STATE, default=ChatState.ACTIVE)
    line = data.get("settings")
    if not isinstance(line, str):
        raise TransferError(REASON_MISSING, field="settings")
    return ChatEntry(
        platform=platform, chat_id=chat_id, kind=kind, state=state, values=parse_line(line)
    )


E = TypeVar("E", ChatKind, ChatState)


def _choice(data: dict[str, Any], key: str, *, enum: type[E], reason: str, default: E) -> E:
    if key not in data:
        return default
    try:
        return enum(data[key])
    except (ValueError, TypeError):
        raise TransferError(reason, field=key, value=str(data[key])[:40]) from None


def describe_error(exc: TransferError) -> str:
    """What is wrong, in English, for the command line."""
    messages = {
        REASON_EMPTY: "the settings line is empty",
        REASON_TOO_LONG: f"the settings line is over {MAX_LINE_CHARS} characters",
        REASON_HEADER: f"the settings line does not start with {HEADER} ({exc.field!r})",
        REASON_SYNTAX: f"the settings line cannot be read near {exc.field!r}",
        REASON_UNKNOWN: f"{exc.field!r} is not a known key",
        REASON_DUPLICATE: f"{exc.field} is given twice",
        REASON_MISSING: f"{exc.field} is missing",
        REASON_VALUE: f"{exc.field}={exc.value!r}: {exc.detail}",
        REASON_JSON: "not a JSON object",
        REASON_CHAT: f"chat {exc.value!r} is not PLATFORM:CHAT_ID ("
        + ", ".join(p.value for p in Platform)
        + ")",
        REASON_KIND: f"kind {exc.value!r} is not one of " + ", ".join(k.value for k in ChatKind),
        REASON_STATE: f"state {exc.value!r} is not one of " + ", ".join(s.value for s in ChatState),
    }
    return messages.get(exc.reason, exc.reason)
