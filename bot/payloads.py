"""What an outbox row carries, by kind: typed, versioned, encoded and decoded here only.

Pure. A row's ``kind`` column says which payload it holds: ``digest`` (:class:`Digest`),
``page`` (:class:`Instant`, one page in instant mode), ``broadcast``, ``alert`` and
``notice`` (:class:`Broadcast`, :class:`Alert`, :class:`Notice`: a text). Messages are
rendered from them at send time, in the chat's language of that moment.

The JSON keeps the field names it always had, plus ``"v"``: rows written before there was
a version (no ``"v"``) read as version 1, so a queue written by an older release is sent.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

VERSION = 1  # the payload format written now

DIGEST = "digest"
INSTANT = "page"
BROADCAST = "broadcast"
ALERT = "alert"
NOTICE = "notice"

Entry = tuple[int, bool]  # (page id, whether the page is an update of one sent before)


@dataclass(frozen=True, slots=True)
class Digest:
    """A digest's pages in the order shown; ``date`` the chat's local day it is for (None:
    the day the row was written); ``ranked``: already in the chat's order (by its votes);
    ``rest``: pages the chat's limit left out; ``welcome``: the chat's first digest."""

    pages: tuple[Entry, ...]
    date: dt.date | None = None
    ranked: bool = False
    rest: tuple[int, ...] = ()
    welcome: bool = False
    version: int = VERSION

    kind = DIGEST


@dataclass(frozen=True, slots=True)
class Instant:
    """Instant mode: one page (a list, for rows that held several)."""

    pages: tuple[Entry, ...]
    version: int = VERSION

    kind = INSTANT


@dataclass(frozen=True, slots=True)
class _Text:
    text: str
    version: int = VERSION


@dataclass(frozen=True, slots=True)
class Broadcast(_Text):
    """An admin's broadcast, to each chat of its audience."""

    kind = BROADCAST


@dataclass(frozen=True, slots=True)
class Alert(_Text):
    """An operator alert, to an admin's private chat."""

    kind = ALERT


@dataclass(frozen=True, slots=True)
class Notice(_Text):
    """A text to one chat that is neither a broadcast nor an alert (an admin's report)."""

    kind = NOTICE


Payload = Digest | Instant | Broadcast | Alert | Notice
Text = Broadcast | Alert | Notice
_TEXTS: dict[str, type[Broadcast] | type[Alert] | type[Notice]] = {
    BROADCAST: Broadcast,
    ALERT: Alert,
    NOTICE: Notice,
}


def encode(payload: Payload) -> str:
    """The JSON text stored in ``outbox.payload``."""
    if isinstance(payload, Digest):
        return encode_digest(
            payload.pages,
            rest=payload.rest,
            day=payload.date,
            ranked=payload.ranked,
            welcome=payload.welcome,
        )
    if isinstance(payload, Instant):
        data: dict[str, Any] = {"v": VERSION, "pages": [list(e) for e in payload.pages]}
    else:
        data = {"v": VERSION, "text": payload.text}
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def encode_digest(
    pages: Sequence[Entry],
    *,
    rest: Sequence[int],
    day: dt.date | None,
    ranked: bool,
    welcome: bool,
) -> str:
    """:func:`encode` of a :class:`Digest`, without building one.

    Built by hand rather than by ``json.dumps``: a ranked digest is a chat's own, made once
    per chat at planning time, and this is a third of the time (ids are ints, the date ISO
    digits: nothing to escape).
    """
    shown = ",".join([f"[{p},true]" if u else f"[{p},false]" for p, u in pages])
    head = f'{{"v":{VERSION},"pages":[{shown}]'
    if day is not None:
        head += f',"date":"{day.isoformat()}"'
    if ranked:
        head += ',"ranked":true'
    if rest:
        head += f',"rest":[{",".join([str(p) for p in rest])}]'
    if welcome:
        head += ',"welcome":true'
    return head + "}"


class PayloadError(ValueError):
    """A stored payload that no version of the format describes."""


def decode(kind: str, stored: str | Mapping[str, Any]) -> Payload:
    """The payload of an outbox row of ``kind`` from its JSON (or the JSON already parsed).

    Raises:
        PayloadError: for an unknown kind or version, or fields of the wrong shape.
    """
    data = json.loads(stored) if isinstance(stored, str) else stored
    if not isinstance(data, Mapping):
        raise PayloadError("not a JSON object")
    version = data.get("v", 1)
    if version != VERSION:
        raise PayloadError(f"unknown payload version {version!r}")
    try:
        if kind == DIGEST:
            date = data.get("date")
            return Digest(
                pages=_entries(data.get("pages", ())),
                date=dt.date.fromisoformat(date) if date else None,
                ranked=bool(data.get("ranked")),
                rest=tuple(int(p) for p in data.get("rest", ())),
                welcome=bool(data.get("welcome")),
            )
        if kind == INSTANT:
            return Instant(pages=_entries(data.get("pages", ())))
        text_kind = _TEXTS.get(kind)
        if text_kind is not None:
            return text_kind(text=str(data["text"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise PayloadError(f"malformed {kind} payload: {exc}") from exc
    raise PayloadError(f"unknown kind {kind!r}")


def _entries(raw: Any) -> tuple[Entry, ...]:
    return tuple((int(page_id), bool(updated)) for page_id, updated in raw)
