"""The filter syntax of ``subscribe`` / ``unsubscribe``, and matching pages against a filter.

Pure: text in, :class:`~bot.models.Filter` out; ``Filter`` x page tags -> bool.

Syntax (CONTRACT.md): ``rl reasoning`` -- a page with any of these tags; ``+rl`` -- a page
must have it; ``-robotics`` -- a page with it is left out; ``*`` -- every page. Words are
separated by whitespace or commas, so ``rl,reasoning`` and ``rl, reasoning`` are two words.

What a tag is, and the form it is compared in, is :mod:`bot.tags`: the same vocabulary
as the pages' tags, so a chat subscribed to ``강화학습`` gets the pages tagged ``강화학습``.

Errors name the first offending word and carry a reason code (one of the ``REASON_*``
constants) that the command layer maps to a message in the chat's language. Every function
that changes a filter returns a new one, so a failed change leaves the caller's filter as it
was: when one item of a list is malformed, none of the list is applied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from bot.errors import FilterError
from bot.models import Filter
from bot.tags import MAX_TAG_LENGTH, fold_tag, valid_chars

MAX_TAGS = 50  # per chat, all buckets counted (CONTRACT.md)

REASON_EMPTY = "empty"  # no word at all
REASON_TOO_LONG = "too_long"  # a tag over MAX_TAG_LENGTH characters
REASON_BAD_CHARS = "bad_chars"  # a character outside letters, digits, "-", "_", "."
REASON_BARE_SIGN = "bare_sign"  # a lone "+" or "-"
REASON_SIGNED_STAR = "signed_star"  # "+*" or "-*"
REASON_TOO_MANY = "too_many"  # the filter would hold more than MAX_TAGS tags
REASONS = frozenset(
    {
        REASON_EMPTY,
        REASON_TOO_LONG,
        REASON_BAD_CHARS,
        REASON_BARE_SIGN,
        REASON_SIGNED_STAR,
        REASON_TOO_MANY,
    }
)

EVERYTHING = "*"
_SEPARATORS = re.compile(r"[\s,]+")

Kind = Literal["any", "required", "excluded", "everything"]


@dataclass(frozen=True, slots=True)
class FilterItem:
    """One parsed word of a filter argument. ``tag`` is normalised; ``""`` for ``*``."""

    kind: Kind
    tag: str


def _parse_tag(word: str, raw: str) -> str:
    tag = fold_tag(raw)
    if not tag:
        raise FilterError(word, REASON_EMPTY)
    if len(tag) > MAX_TAG_LENGTH:
        raise FilterError(word, REASON_TOO_LONG)
    # The second check keeps normalisation a fixed point, so format(parse(s)) is stable.
    if not valid_chars(tag) or fold_tag(tag) != tag:
        raise FilterError(word, REASON_BAD_CHARS)
    return tag


def _parse_word(word: str) -> FilterItem:
    if word == EVERYTHING:
        return FilterItem("everything", "")
    sign, rest = word[0], word[1:]
    if sign in "+-":
        if not rest:
            raise FilterError(word, REASON_BARE_SIGN)
        if rest == EVERYTHING:
            raise FilterError(word, REASON_SIGNED_STAR)
        kind: Kind = "required" if sign == "+" else "excluded"
        return FilterItem(kind, _parse_tag(word, rest))
    return FilterItem("any", _parse_tag(word, word))


def parse_items(args: Sequence[str]) -> tuple[FilterItem, ...]:
    """Parse the arguments of ``subscribe`` / ``unsubscribe`` into items, in order.

    Each argument may hold several words separated by whitespace or commas.

    Raises:
        FilterError: for the first malformed word, with ``item`` set to it and ``reason``
            one of ``REASON_*``; ``FilterError("", "empty")`` when there is no word at all.
    """
    items: list[FilterItem] = []
    for arg in args:
        for word in _SEPARATORS.split(arg):
            if word:
                items.append(_parse_word(word))
    if not items:
        raise FilterError("", REASON_EMPTY)
    return tuple(items)


def add(f: Filter, items: Iterable[FilterItem]) -> Filter:
    """``f`` with ``items`` added, in order; a tag lives in exactly one bucket.

    Adding ``+rl`` when ``rl`` is an any-of tag moves it to the required ones, adding
    ``-rl`` moves it to the excluded ones, and so on; ``*`` sets ``everything``. A bare
    ``rl`` never weakens a required ``+rl``: it stays required (:func:`kept_required`
    names such tags, for the reply to say so); ``unsubscribe`` is how it becomes optional.

    Raises:
        FilterError: ``(tag, "too_many")`` when a new tag would make the filter hold more
            than ``MAX_TAGS`` tags. Nothing is applied: ``f`` is unchanged.
    """
    buckets: dict[Kind, set[str]] = {
        "any": set(f.any_of),
        "required": set(f.required),
        "excluded": set(f.excluded),
    }
    everything = f.everything
    count = len(f.tags)
    for item in items:
        if item.kind == "everything":
            everything = True
            continue
        if item.kind == "any" and item.tag in buckets["required"]:
            continue  # already required: the stronger form stays
        present = False
        for bucket in buckets.values():
            if item.tag in bucket:
                bucket.discard(item.tag)
                present = True
        if not present:
            count += 1
            if count > MAX_TAGS:
                raise FilterError(item.tag, REASON_TOO_MANY)
        buckets[item.kind].add(item.tag)
    return Filter(
        any_of=frozenset(buckets["any"]),
        required=frozenset(buckets["required"]),
        excluded=frozenset(buckets["excluded"]),
        everything=everything,
    )


def kept_required(f: Filter, items: Iterable[FilterItem]) -> tuple[str, ...]:
    """The tags of ``items`` asked for bare (``rl``) that :func:`add` keeps required in
    ``f`` (``+rl``), in order, each once."""
    found: dict[str, None] = {}
    required = set(f.required)
    for item in items:
        if item.kind == "required":
            required.add(item.tag)
        elif item.kind == "excluded":
            required.discard(item.tag)
        elif item.kind == "any" and item.tag in required:
            found[item.tag] = None
    return tuple(found)


def remove(f: Filter, items: Iterable[FilterItem]) -> Filter:
    """``f`` without ``items``: a tag leaves whichever bucket holds it, whatever its sign.

    ``*`` clears ``everything``. A tag the filter does not hold is ignored. ``unsubscribe
    all`` is the command layer's business (it means ``Filter()``), not a filter word.
    """
    tags = set()
    everything = f.everything
    for item in items:
        if item.kind == "everything":
            everything = False
        else:
            tags.add(item.tag)
    return replace(
        f,
        any_of=f.any_of - tags,
        required=f.required - tags,
        excluded=f.excluded - tags,
        everything=everything,
    )


def matches(f: Filter, tags: Iterable[str]) -> bool:
    """Whether a page carrying ``tags`` matches ``f`` (see :class:`~bot.models.Filter`).

    A page matches when (``everything``, or it carries one of ``any_of``, or ``any_of`` is
    empty and ``required`` is not) and it carries every ``required`` tag and no ``excluded``
    one. The empty filter matches nothing; a filter of excluded tags only matches nothing.
    """
    return matches_normalized(f, normalized_tags(tags))


def normalized_tags(tags: Iterable[str]) -> frozenset[str]:
    """A page's tags as :func:`matches_normalized` takes them: normalised once, for a page
    matched against many filters."""
    return frozenset(fold_tag(tag) for tag in tags)


def matches_normalized(f: Filter, page: frozenset[str]) -> bool:
    """:func:`matches` for tags already passed through :func:`normalized_tags`."""
    if not page.isdisjoint(f.excluded) or not f.required <= page:
        return False
    if f.everything:
        return True
    if f.any_of:
        return not page.isdisjoint(f.any_of)
    return bool(f.required)


def matched_tags(f: Filter, tags: Iterable[str]) -> tuple[str, ...]:
    """The page's tags that are any-of or required tags of ``f``, in the page's order.

    Tags keep the page's spelling; a tag the page repeats (in any case) is listed once.
    For ``*`` with no other tags this is empty.
    """
    wanted = f.any_of | f.required
    seen: set[str] = set()
    found: list[str] = []
    for tag in tags:
        key = fold_tag(tag)
        if key in wanted and key not in seen:
            seen.add(key)
            found.append(tag)
    return tuple(found)


def format_filter(f: Filter) -> str:
    """The canonical text of ``f``: ``* rl reasoning +post-training -robotics``.

    ``*`` first when set, then the any-of tags sorted, the required ones sorted with ``+``,
    the excluded ones sorted with ``-``. ``""`` for the empty filter.
    """
    words = [EVERYTHING] if f.everything else []
    words += sorted(f.any_of)
    words += [f"+{tag}" for tag in sorted(f.required)]
    words += [f"-{tag}" for tag in sorted(f.excluded)]
    return " ".join(words)


def parse_filter(text: str) -> Filter:
    """The filter that ``text`` (e.g. from :func:`format_filter`) describes.

    Blank text is the empty filter. ``parse_filter(format_filter(f)) == f`` for every valid
    ``f``.

    Raises:
        FilterError: as :func:`parse_items` and :func:`add` do.
    """
    if not text.strip():
        return Filter()
    return add(Filter(), parse_items([text]))
