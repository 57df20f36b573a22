"""Links to a chat's settings page, and the browser sessions they open.

A link (``PUBLIC_BASE_URL/settings/open/TOKEN``) names one chat, expires, and opens once:
the first browser to open it gets a session of its own (a cookie), and the link refuses
every later opening. Only SHA-256 hashes of the link's token and of the session are kept,
so neither the database nor a backup holds anything that opens a page.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store.schema import settings_links

TOKEN_BYTES = 32  # 256 bits: a link's token and a session's
LINK_LIFETIME = dt.timedelta(minutes=15)  # from the reply to the first opening
SESSION_LIFETIME = dt.timedelta(hours=1)  # from the opening to the last save
KEPT_AFTER_EXPIRY = dt.timedelta(days=1)  # an expired link still says "expired", not "unknown"
# What a token looks like (``token_urlsafe`` writes 43 of these); anything else, a cookie of
# odd bytes included, is no token and never reaches a hash or a query.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")


class Refusal(enum.StrEnum):
    """Why a link does not open a page."""

    UNKNOWN = "unknown"  # never issued, mistyped or tampered with
    EXPIRED = "expired"
    USED = "used"  # opened before, by another browser


@dataclass(frozen=True, slots=True)
class Opened:
    chat_pk: int
    session: str  # the session's token, for the cookie: the store keeps its hash only
    expires_at: dt.datetime


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def well_formed(token: str) -> bool:
    """Whether ``token`` may be a link's or a session's token at all."""
    return _TOKEN.fullmatch(token) is not None


def digest(token: str) -> str:
    """What the store keeps of a token: its SHA-256 (a token is random, so no salt)."""
    return hashlib.sha256(token.encode()).hexdigest()


async def issue(conn: AsyncConnection, *, chat_pk: int, now: dt.datetime) -> str:
    """A new link's token for the chat's settings page. Links whose sessions ended a day
    ago go (until then an old link is told apart from a forged one: "expired")."""
    gone = now - KEPT_AFTER_EXPIRY
    await conn.execute(
        delete(settings_links).where(
            settings_links.c.expires_at <= gone,
            (settings_links.c.session_expires_at.is_(None))
            | (settings_links.c.session_expires_at <= gone),
        )
    )
    token = new_token()
    await conn.execute(
        insert(settings_links).values(
            token_hash=digest(token), chat_pk=chat_pk, expires_at=now + LINK_LIFETIME
        )
    )
    return token


async def open_link(conn: AsyncConnection, *, token: str, now: dt.datetime) -> Opened | Refusal:
    """Open the link ``token``: a new session for its chat, or why not. Of two browsers
    opening one link at once, one gets the session (the update is conditional)."""
    session = new_token()
    expires = now + SESSION_LIFETIME
    done = await conn.execute(
        update(settings_links)
        .where(
            settings_links.c.token_hash == digest(token),
            settings_links.c.session_hash.is_(None),
            settings_links.c.expires_at > now,
        )
        .values(session_hash=digest(session), session_expires_at=expires)
        .returning(settings_links.c.chat_pk)
    )
    chat_pk = done.scalar()
    if chat_pk is not None:
        return Opened(chat_pk=chat_pk, session=session, expires_at=expires)
    return await _refusal(conn, token)


async def peek(conn: AsyncConnection, *, token: str, now: dt.datetime) -> int | Refusal:
    """The chat the link ``token`` would open now, or why it would not, opening nothing:
    what a GET of the link shows (a link checker may fetch it before its person does)."""
    chat_pk = (
        await conn.execute(
            select(settings_links.c.chat_pk).where(
                settings_links.c.token_hash == digest(token),
                settings_links.c.session_hash.is_(None),
                settings_links.c.expires_at > now,
            )
        )
    ).scalar()
    return chat_pk if chat_pk is not None else await _refusal(conn, token)


async def _refusal(conn: AsyncConnection, token: str) -> Refusal:
    row = (
        await conn.execute(
            select(settings_links.c.session_hash, settings_links.c.expires_at).where(
                settings_links.c.token_hash == digest(token)
            )
        )
    ).first()
    if row is None:
        return Refusal.UNKNOWN
    return Refusal.USED if row.session_hash is not None else Refusal.EXPIRED


async def open_session(conn: AsyncConnection, *, chat_pk: int, now: dt.datetime) -> Opened:
    """A session for the chat without a link, for a caller proven otherwise (a Telegram
    Mini App's signed ``initData``)."""
    session = new_token()
    expires = now + SESSION_LIFETIME
    await conn.execute(
        insert(settings_links).values(
            token_hash=digest(new_token()),
            chat_pk=chat_pk,
            expires_at=now,
            session_hash=digest(session),
            session_expires_at=expires,
        )
    )
    return Opened(chat_pk=chat_pk, session=session, expires_at=expires)


async def session_chat(conn: AsyncConnection, *, session: str, now: dt.datetime) -> int | None:
    """The chat a live session may change, or None."""
    return (
        await conn.execute(
            select(settings_links.c.chat_pk).where(
                settings_links.c.session_hash == digest(session),
                settings_links.c.session_expires_at > now,
            )
        )
    ).scalar()
