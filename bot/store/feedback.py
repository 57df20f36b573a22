"""Feedback: the 👍 and 👎 of each chat's users, and the tag weights they give.

A vote is one row per chat, page and user, so in a group every member counts once. Each
change works the chat's weights out again from all its votes (``bot.rules.ranking``) and keeps
them in ``chat_weights``, which is what planning reads.

A vote counts only for a page the chat received (:func:`delivered`): a button's action names
a page by its id, and anyone can send an action naming any id.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence

from sqlalchemy import delete, func, insert, select, union_all, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.rules import ranking
from bot.store.schema import chat_pages, chat_weights, chats, page_tags, pages, shown_pages, votes
from bot.util import utcnow


async def press(
    conn: AsyncConnection,
    *,
    chat_pk: int,
    page_id: int,
    user_id: str,
    value: int,
    now: dt.datetime | None = None,
) -> int | None:
    """A press of 👍 (``ranking.UP``) or 👎 (``ranking.DOWN``) by ``user_id``.

    Pressing the vote the user already gave takes it back; the other one replaces it. This
    is the one place every platform's vote is stored, so the rule is here: only a page
    :func:`delivered` to the chat takes a vote.

    Returns the user's vote now (``0``: none), or None when the chat never received the page
    (or it is no longer known): nothing is stored then.
    """
    now = now or utcnow()
    # One press of a chat at a time (on PostgreSQL): weights are worked out from all votes.
    await conn.execute(select(chats.c.id).where(chats.c.id == chat_pk).with_for_update())
    if (await conn.execute(select(pages.c.id).where(pages.c.id == page_id))).first() is None:
        return None
    if not await delivered(conn, chat_pk=chat_pk, page_id=page_id):
        return None
    key = (votes.c.chat_pk == chat_pk) & (votes.c.page_id == page_id) & (votes.c.user_id == user_id)
    before = (await conn.execute(select(votes.c.value).where(key))).scalar_one_or_none()
    if before == value:
        await conn.execute(delete(votes).where(key))
        result = 0
    elif before is not None:
        await conn.execute(update(votes).where(key).values(value=value, voted_at=now))
        result = value
    else:
        await conn.execute(
            insert(votes).values(
                chat_pk=chat_pk, page_id=page_id, user_id=user_id, value=value, voted_at=now
            )
        )
        result = value
    await refresh(conn, chat_pk=chat_pk, now=now)
    return result


async def delivered(conn: AsyncConnection, *, chat_pk: int, page_id: int) -> bool:
    """Whether the chat received the page with its 👍/👎: in a digest or an instant message
    (the ledger, ``chat_pages``) or in a ``latest`` reply (``shown_pages``, :func:`shown`)."""
    ledger = select(chat_pages.c.page_id).where(
        chat_pages.c.chat_pk == chat_pk, chat_pages.c.page_id == page_id
    )
    latest = select(shown_pages.c.page_id).where(
        shown_pages.c.chat_pk == chat_pk, shown_pages.c.page_id == page_id
    )
    return (await conn.execute(union_all(ledger, latest).limit(1))).first() is not None


async def shown(
    conn: AsyncConnection,
    *,
    chat_pk: int,
    page_ids: Sequence[int],
    now: dt.datetime | None = None,
) -> None:
    """A ``latest`` reply shows the chat ``page_ids`` with their 👍/👎: votes on them count."""
    if not page_ids:
        return
    now = now or utcnow()
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(shown_pages).values(
        [
            {"chat_pk": chat_pk, "page_id": page_id, "shown_at": now}
            for page_id in dict.fromkeys(page_ids)
        ]
    )
    await conn.execute(
        statement.on_conflict_do_update(
            index_elements=[shown_pages.c.chat_pk, shown_pages.c.page_id],
            set_={"shown_at": statement.excluded.shown_at},
        )
    )


async def refresh(conn: AsyncConnection, *, chat_pk: int, now: dt.datetime) -> dict[str, float]:
    """Work the chat's weights out again from its votes, store and return them."""
    rows = await conn.execute(
        select(votes.c.page_id, votes.c.user_id, votes.c.value, votes.c.voted_at, page_tags.c.tag)
        .select_from(votes.outerjoin(page_tags, page_tags.c.page_id == votes.c.page_id))
        .where(votes.c.chat_pk == chat_pk)
    )
    cast: dict[tuple[int, str], tuple[int, dt.datetime, list[str]]] = {}
    for page_id, user_id, value, voted_at, tag in rows:
        entry = cast.setdefault((page_id, user_id), (value, voted_at, []))
        if tag is not None:
            entry[2].append(tag)
    found = ranking.weights(
        (ranking.Vote(value=v, at=at, tags=tuple(tags)) for v, at, tags in cast.values()),
        now=now,
    )
    await conn.execute(delete(chat_weights).where(chat_weights.c.chat_pk == chat_pk))
    if found:
        await conn.execute(
            insert(chat_weights).values(chat_pk=chat_pk, weights=encode(found), based_at=now)
        )
    return found


async def weights_of(
    conn: AsyncConnection, *, chat_pk: int, now: dt.datetime | None = None
) -> dict[str, float]:
    """The chat's tag weights as they are ``now`` (decayed since they were worked out)."""
    row = (
        await conn.execute(
            select(chat_weights.c.weights, chat_weights.c.based_at).where(
                chat_weights.c.chat_pk == chat_pk
            )
        )
    ).first()
    if row is None:
        return {}
    found = {tag: units / ranking.UNIT for tag, units in _decode(row[0]).items()}
    return ranking.decayed(found, based_at=row[1], now=now or utcnow())


async def weights_in_range(
    conn: AsyncConnection, *, first: int, last: int, wanted: Sequence[int]
) -> dict[int, Mapping[str, int]]:
    """The stored weights of the chats ``wanted`` (primary keys from ``first`` to ``last``),
    in millionths (``ranking.units``), as pages are ranked with them.

    Not decayed: decay scales all of a chat's weights alike and changes no order.
    """
    keep = set(wanted)
    rows = await conn.execute(
        select(chat_weights.c.chat_pk, chat_weights.c.weights).where(
            chat_weights.c.chat_pk.between(first, last)
        )
    )
    return {pk: _decode(text) for pk, text in rows if pk in keep}


async def vote_of(conn: AsyncConnection, *, chat_pk: int, page_id: int) -> tuple[int, int]:
    """``(👍, 👎)``: how many of the chat's users gave each to the page."""
    rows = await conn.execute(
        select(votes.c.value, func.count())
        .where(votes.c.chat_pk == chat_pk, votes.c.page_id == page_id)
        .group_by(votes.c.value)
    )
    counts = dict(rows.tuples().all())
    return counts.get(ranking.UP, 0), counts.get(ranking.DOWN, 0)


async def count(conn: AsyncConnection, *, chat_pk: int) -> int:
    """How many votes the chat's users have given."""
    return int(
        (await conn.execute(select(func.count()).where(votes.c.chat_pk == chat_pk))).scalar_one()
    )


async def reset(conn: AsyncConnection, *, chat_pk: int) -> int:
    """Forget every vote of the chat and its weights; returns how many votes there were."""
    gone = await count(conn, chat_pk=chat_pk)
    await conn.execute(delete(votes).where(votes.c.chat_pk == chat_pk))
    await conn.execute(delete(chat_weights).where(chat_weights.c.chat_pk == chat_pk))
    return gone


def encode(found: Mapping[str, float]) -> str:
    """Weights as ``chat_weights`` keeps them: compact JSON of each tag's weight in
    millionths (``ranking.units``), tags sorted."""
    return json.dumps(dict(sorted(ranking.units(found).items())), separators=(",", ":"))


_DECODER = json.JSONDecoder()


def _decode(text: str) -> dict[str, int]:
    # Written by :func:`encode`: tags to integers. Planning decodes one per chat, so past
    # ``json.loads``' own wrappers.
    data, _ = _DECODER.raw_decode(text)
    return data if isinstance(data, dict) else {}
