"""Votes -> tag weights -> page scores -> the order of a digest. Pure.

The rule, as the README states it: every 👍 on a page adds 1 to each of the page's tags,
every 👎 takes 1 away, and a vote counts half as much every :data:`HALF_LIFE` (30 days)
after it was cast. A page's score is the sum of its tags' weights (a tag nobody voted on
weighs 0). A digest lists its pages best score first; pages with equal scores keep the
usual order (more matched tags first, then newest), so a chat without votes, or after
``feedback reset``, gets exactly that usual order.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

HALF_LIFE = dt.timedelta(days=30)
UP = 1
DOWN = -1
# Weights closer to 0 than this are dropped: a vote's share after about 20 half-lives.
NEGLIGIBLE = 1e-6
# Weights are counted in millionths (``UNIT``) when pages are ranked: sums of integers are
# exact in any order, so equal scores are equal and keep the usual order.
UNIT = 1_000_000


@dataclass(frozen=True, slots=True)
class Vote:
    """One user's 👍 (``UP``) or 👎 (``DOWN``) on a page carrying ``tags``, cast ``at``."""

    value: int
    at: dt.datetime
    tags: tuple[str, ...]


def decay(age: dt.timedelta) -> float:
    """The share of a vote still counted after ``age``: 1, then halved every half-life."""
    if age <= dt.timedelta(0):
        return 1.0
    return math.pow(0.5, age / HALF_LIFE)


def weights(votes: Iterable[Vote], *, now: dt.datetime) -> dict[str, float]:
    """Each tag's weight at ``now`` from ``votes``; tags that weigh (about) nothing are left out."""
    found: dict[str, float] = {}
    for vote in votes:
        share = vote.value * decay(now - vote.at)
        for tag in set(vote.tags):
            found[tag] = found.get(tag, 0.0) + share
    return {tag: w for tag, w in found.items() if abs(w) >= NEGLIGIBLE}


def decayed(
    found: Mapping[str, float], *, based_at: dt.datetime, now: dt.datetime
) -> dict[str, float]:
    """Weights worked out at ``based_at``, as they are at ``now``.

    Every vote decays by the same factor over the same time, so this equals
    :func:`weights` of the same votes at ``now``; it changes no order, only the figures.
    """
    factor = decay(now - based_at)
    return {tag: w * factor for tag, w in found.items() if abs(w * factor) >= NEGLIGIBLE}


def units(found: Mapping[str, float]) -> dict[str, int]:
    """Weights in millionths: what :func:`order_indexed` adds up."""
    return {tag: round(w * UNIT) for tag, w in found.items()}


def score(found: Mapping[str, float], tags: Collection[str]) -> float:
    """A page's score: the sum of the weights of its (distinct) tags, each to the
    millionth, as pages are ranked."""
    counted = units(found)
    return sum(counted.get(tag, 0) for tag in set(tags)) / UNIT


def order(
    pages_tags: Sequence[Collection[str]],
    found: Mapping[str, float],
    *,
    limit: int | None = None,
) -> list[int]:
    """The positions of ``pages_tags`` (given in the usual order), best score first.

    Equal scores keep the given order. With ``limit``, only the first ``limit`` positions.
    """
    return order_indexed(index(pages_tags), len(pages_tags), units(found), limit=limit)


def index(pages_tags: Sequence[Collection[str]]) -> dict[str, list[int]]:
    """Each tag's positions in ``pages_tags``: what :func:`order_indexed` scores with."""
    found: dict[str, list[int]] = {}
    for position, tags in enumerate(pages_tags):
        for tag in set(tags):
            found.setdefault(tag, []).append(position)
    return found


def order_indexed(
    positions_of: Mapping[str, Sequence[int]],
    count: int,
    found: Mapping[str, int],
    *,
    limit: int | None = None,
) -> list[int]:
    """:func:`order` for ``count`` pages given by :func:`index`, with weights in
    :func:`units`: a planning run ranks the same pages for many chats, each with its own
    weights, and adds up only the weights of tags the pages carry."""
    ranked: Sequence[int] = range(count)
    if found:
        scores = [0] * count
        weight_of = found.get
        for tag, positions in positions_of.items():
            weight = weight_of(tag)
            if weight:
                for position in positions:
                    scores[position] += weight
        # Sorting is stable, reversed too: equal scores keep the usual order.
        ranked = sorted(ranked, key=scores.__getitem__, reverse=True)
    return list(ranked if limit is None else ranked[:limit])


def top_tags(found: Mapping[str, float], *, count: int) -> tuple[list[tuple[str, float]], ...]:
    """``(liked, disliked)``: up to ``count`` tags of each sign, the strongest first."""
    liked = sorted(((t, w) for t, w in found.items() if w > 0), key=lambda x: (-x[1], x[0]))
    disliked = sorted(((t, w) for t, w in found.items() if w < 0), key=lambda x: (x[1], x[0]))
    return liked[:count], disliked[:count]
