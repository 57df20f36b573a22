"""Pages x chat -> :class:`~bot.models.Digest`: which pages a chat gets, in which order.

Pure. The renderers (``bot.render``) turn a digest into platform messages; this module
only decides what is in it, and offers :func:`truncate`, which every renderer uses to keep
a text within a platform limit.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from bot.models import Digest, DigestItem, Filter, Page
from bot.rules import filters

TLDR_LIMIT = 400  # characters of TL;DR per page: a digest is a list to skim, the page has the rest
ELLIPSIS = "…"

_ZWJ = "\u200d"
_WHITESPACE = re.compile(r"\s")


def _one(_ch: str) -> int:
    return 1


def _splits_cluster(text: str, p: int) -> bool:
    """Whether cutting ``text`` before index ``p`` would break a character apart.

    Keeps a base character with its combining marks and variation selectors, emoji joined
    by ZWJ, emoji with skin-tone modifiers, and surrogate pairs (only present when text was
    decoded with ``surrogatepass``) together.
    """
    if p <= 0 or p >= len(text):
        return False
    after, before = text[p], text[p - 1]
    if "\udc00" <= after <= "\udfff" or "\ud800" <= before <= "\udbff":
        return True
    if after == _ZWJ or before == _ZWJ:
        return True
    if "\U0001f3fb" <= after <= "\U0001f3ff":  # emoji skin-tone modifiers
        return True
    return unicodedata.category(after).startswith("M")


def truncate(text: str, limit: int, *, cost: Callable[[str], int] | None = None) -> str:
    """``text`` cut to at most ``limit``, with ``…`` appended when it was cut.

    The cut falls at the last whitespace when that keeps at least half of the room;
    otherwise (one long word, a URL, CJK text without spaces) it is a hard cut, moved back
    so that no character loses its combining marks, ZWJ partner or surrogate half. The
    result never ends in whitespace before the ``…``. Text that fits is returned as is.

    Args:
        text: the text to shorten.
        limit: the room, ellipsis included; ``0`` or less gives ``""``.
        cost: the room one character takes, e.g. its escaped length in UTF-16 code units
            for a platform that counts those; one per character when omitted.
    """
    measure = cost or _one
    if limit <= 0:
        return ""
    if cost is None and len(text) <= limit:
        return text
    total = 0
    costs: list[int] = []
    for ch in text:
        c = measure(ch)
        costs.append(c)
        total += c
    if total <= limit:
        return text
    budget = limit - measure(ELLIPSIS)
    if budget <= 0:
        return ELLIPSIS if measure(ELLIPSIS) <= limit else ""
    # hard: the longest prefix within the budget
    hard, used = 0, 0
    while hard < len(text) and used + costs[hard] <= budget:
        used += costs[hard]
        hard += 1
    cut = hard
    # a whitespace at index ``hard`` ends the last word exactly at the budget
    boundary = max(
        (m.start() for m in _WHITESPACE.finditer(text, 0, min(hard + 1, len(text)))),
        default=-1,
    )
    if boundary >= hard // 2 and boundary > 0:
        cut = boundary
    else:
        while cut > 0 and _splits_cluster(text, cut):
            cut -= 1
        if cut == 0:
            cut = hard
    head = text[:cut].rstrip()
    return head + ELLIPSIS


def _sort_key(item: DigestItem) -> tuple[int, int, str, str]:
    date = item.page.date
    return (-len(item.matched), -date.toordinal() if date else 0, item.page.source, item.page.key)


def build_digest(
    *,
    lang: str,
    filter: Filter,
    candidates: Sequence[tuple[Page, bool]],
    today: dt.date,
    instant: bool = False,
    welcome: bool = False,
) -> Digest | None:
    """The digest a chat gets from ``candidates``, or ``None`` when none matches its filter.

    Args:
        lang: the chat's language; renderers show each page in it where the page has it.
        filter: the chat's filter; pages that do not match it are left out.
        candidates: ``(page, is_update)`` pairs; a page listed twice (same source and key)
            is kept once, as first listed.
        today: the digest's date, in the chat's zone.
        instant: a one-page message in instant mode rather than a daily digest.
        welcome: the chat's first digest, which includes recent pages to get it started.

    Items carry the page's tags that matched and are ordered by the number of matched
    tags (most first), then by the page's date (``updated`` or else ``created``; newest
    first, undated last), then by source and key so the order is deterministic.
    """
    seen: set[tuple[str, str]] = set()
    items: list[DigestItem] = []
    for page, is_update in candidates:
        identity = (page.source, page.key)
        if identity in seen:
            continue
        seen.add(identity)
        if not page.texts or not filters.matches(filter, page.tags):
            continue
        matched = filters.matched_tags(filter, page.tags)
        items.append(DigestItem(page=page, matched=matched, updated=is_update))
    if not items:
        return None
    items.sort(key=_sort_key)
    return Digest(lang=lang, date=today, items=tuple(items), instant=instant, welcome=welcome)


def as_planned(
    d: Digest, *, page_ids: Sequence[int], pages: Mapping[int, Page], ranked: bool, more: int = 0
) -> Digest:
    """``d`` with each item's store id, in the order planning ranked them (``ranked``) or
    in its own, and with ``more`` pages the chat's limit left out."""
    ids = {(pages[pid].source, pages[pid].key): pid for pid in page_ids if pid in pages}
    items = [replace(item, page_id=ids.get((item.page.source, item.page.key))) for item in d.items]
    if ranked:
        position = {pid: i for i, pid in enumerate(page_ids)}
        items.sort(key=lambda item: position.get(item.page_id or -1, len(position)))
    return replace(d, items=tuple(items), more=more)
