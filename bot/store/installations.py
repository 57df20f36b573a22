"""Slack installations by OAuth, and the OAuth states of installs under way.

One row per workspace (or Enterprise Grid organisation) that installed the app. Its bot
token and refresh token are encrypted with :class:`TokenCipher` before they reach the
database and decrypted as they leave it: a copy of the database alone sends nothing.

OAuth states are signed and need no row while an install is under way; a state that was
used is recorded, as an HMAC (:func:`state_hash`), until it expires, so that it works once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.models import Platform
from bot.store import teams as team_store
from bot.store.pages import utcnow
from bot.store.schema import slack_installations, slack_oauth_states

# Where Slack gives no enterprise (or, for an org-wide install, no team), the column holds "".
NONE = ""


class TokenKeyError(Exception):
    """A stored token cannot be decrypted with any key of ``SLACK_TOKEN_KEY``."""


class TokenCipher:
    """Fernet encryption of tokens at rest (AES-128-CBC with HMAC-SHA256, authenticated).

    ``keys`` is ``SLACK_TOKEN_KEY``: one Fernet key, or several separated by commas while
    the key is being changed; the first encrypts, any of them decrypts.
    """

    def __init__(self, keys: str) -> None:
        fernets = [Fernet(key.strip()) for key in keys.split(",") if key.strip()]
        if not fernets:
            raise ValueError("no key")
        self._first = fernets[0]
        self._fernet = MultiFernet(fernets)

    def encrypt(self, token: str) -> str:
        return self._fernet.encrypt(token.encode()).decode("ascii")

    def decrypt(self, stored: str) -> str:
        try:
            return self._fernet.decrypt(stored.encode("ascii")).decode()
        except (InvalidToken, UnicodeError) as exc:
            raise TokenKeyError("a stored Slack token does not open with SLACK_TOKEN_KEY") from exc

    def current(self, stored: str) -> bool:
        """Whether ``stored`` is encrypted with the first key already."""
        try:
            self._first.decrypt(stored.encode("ascii"))
        except (InvalidToken, UnicodeError):
            return False
        return True

    def rotate(self, stored: str) -> str:
        """``stored`` encrypted again with the first key (``MultiFernet.rotate``: the same
        token, its original timestamp kept).

        Raises:
            TokenKeyError: no key opens it.
        """
        try:
            return self._fernet.rotate(stored.encode("ascii")).decode("ascii")
        except (InvalidToken, UnicodeError) as exc:
            raise TokenKeyError("a stored Slack token does not open with SLACK_TOKEN_KEY") from exc


@dataclass(frozen=True, slots=True)
class InstallationRecord:
    """One installation, tokens in the clear (in memory only)."""

    enterprise_id: str | None
    team_id: str | None
    is_enterprise_install: bool
    bot_token: str
    app_id: str | None = None
    enterprise_name: str | None = None
    enterprise_url: str | None = None
    team_name: str | None = None
    bot_id: str | None = None
    bot_user_id: str | None = None
    bot_scopes: str | None = None
    bot_refresh_token: str | None = None
    bot_token_expires_at: dt.datetime | None = None  # naive UTC
    installer_user_id: str | None = None
    token_type: str | None = None
    installed_at: dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class Unreadable:
    """An installation whose token no key of ``SLACK_TOKEN_KEY`` opens."""

    enterprise_id: str | None
    team_id: str | None


@dataclass(frozen=True, slots=True)
class Rotation:
    """What :func:`rotate_keys` did: tokens encrypted again with the first key, and the
    installations that no key opens."""

    rotated: int
    unreadable: tuple[Unreadable, ...]


# Installations read (and written back) per transaction while tokens are re-encrypted.
ROTATION_BATCH = 200


def _key(enterprise_id: str | None, team_id: str | None) -> dict[str, str]:
    return {"enterprise_id": enterprise_id or NONE, "team_id": team_id or NONE}


async def save(
    conn: AsyncConnection,
    record: InstallationRecord,
    *,
    cipher: TokenCipher,
    now: dt.datetime | None = None,
) -> None:
    """Store ``record`` as its workspace's installation, replacing the one before (a
    reinstall, or a rotated token)."""
    now = now or utcnow()
    # An org-wide install is the organisation's, whatever workspace it was made from.
    key = _key(record.enterprise_id, None if record.is_enterprise_install else record.team_id)
    values = {
        "is_enterprise_install": record.is_enterprise_install,
        "app_id": record.app_id,
        "enterprise_name": (record.enterprise_name or "")[:255] or None,
        "enterprise_url": (record.enterprise_url or "")[:2000] or None,
        "team_name": (record.team_name or "")[:255] or None,
        "bot_id": record.bot_id,
        "bot_user_id": record.bot_user_id,
        "bot_scopes": record.bot_scopes,
        "bot_token": cipher.encrypt(record.bot_token),
        "bot_refresh_token": (
            cipher.encrypt(record.bot_refresh_token) if record.bot_refresh_token else None
        ),
        "bot_token_expires_at": record.bot_token_expires_at,
        "installer_user_id": record.installer_user_id,
        "token_type": record.token_type,
        "updated_at": now,
    }
    where = (slack_installations.c.enterprise_id == key["enterprise_id"]) & (
        slack_installations.c.team_id == key["team_id"]
    )
    found = (await conn.execute(select(slack_installations.c.id).where(where))).first()
    if found is None:
        await conn.execute(insert(slack_installations).values(**key, **values, installed_at=now))
        return
    if record.installer_user_id is None:
        del values["installer_user_id"]  # a token refresh keeps who installed the app
    await conn.execute(update(slack_installations).where(where).values(**values))


async def find(
    conn: AsyncConnection,
    *,
    enterprise_id: str | None,
    team_id: str | None,
    cipher: TokenCipher,
) -> InstallationRecord | None:
    """The installation that serves ``team_id`` (of ``enterprise_id``): the workspace's own,
    else its organisation's org-wide install. None when the app is not installed there."""
    keys = [_key(enterprise_id, team_id)]
    if enterprise_id and team_id:
        keys.append(_key(enterprise_id, None))
    for key in keys:
        row = (
            (
                await conn.execute(
                    select(slack_installations).where(
                        slack_installations.c.enterprise_id == key["enterprise_id"],
                        slack_installations.c.team_id == key["team_id"],
                    )
                )
            )
            .mappings()
            .first()
        )
        if row is not None:
            return InstallationRecord(
                enterprise_id=row["enterprise_id"] or None,
                team_id=row["team_id"] or None,
                is_enterprise_install=bool(row["is_enterprise_install"]),
                bot_token=cipher.decrypt(row["bot_token"]),
                app_id=row["app_id"],
                enterprise_name=row["enterprise_name"],
                enterprise_url=row["enterprise_url"],
                team_name=row["team_name"],
                bot_id=row["bot_id"],
                bot_user_id=row["bot_user_id"],
                bot_scopes=row["bot_scopes"],
                bot_refresh_token=(
                    cipher.decrypt(row["bot_refresh_token"]) if row["bot_refresh_token"] else None
                ),
                bot_token_expires_at=row["bot_token_expires_at"],
                installer_user_id=row["installer_user_id"],
                token_type=row["token_type"],
                installed_at=row["installed_at"],
            )
    return None


async def rotate_keys(engine: AsyncEngine, *, cipher: TokenCipher) -> Rotation:
    """Encrypt every stored token that is not under the first key of ``SLACK_TOKEN_KEY``
    again with it, so that the other keys can be retired.

    Safe beside other replicas doing the same and beside token refreshes and reinstalls:
    each row is written only if its ciphertexts are still those that were read (compare and
    set), so a row that changed in between keeps its newer value, already under the first
    key of whoever wrote it. Rows are read in batches by id, each batch in a short
    transaction of its own.
    """
    table = slack_installations
    rotated, unreadable, after = 0, [], 0
    while True:
        async with engine.begin() as conn:
            rows = (
                await conn.execute(
                    select(
                        table.c.id,
                        table.c.enterprise_id,
                        table.c.team_id,
                        table.c.bot_token,
                        table.c.bot_refresh_token,
                    )
                    .where(table.c.id > after)
                    .order_by(table.c.id)
                    .limit(ROTATION_BATCH)
                )
            ).all()
            for row in rows:
                token, refresh = row.bot_token, row.bot_refresh_token
                if cipher.current(token) and (refresh is None or cipher.current(refresh)):
                    continue
                try:
                    new_token = cipher.rotate(token)
                    new_refresh = cipher.rotate(refresh) if refresh is not None else None
                except TokenKeyError:
                    unreadable.append(Unreadable(row.enterprise_id or None, row.team_id or None))
                    continue
                same_refresh = (
                    table.c.bot_refresh_token.is_(None)
                    if refresh is None
                    else table.c.bot_refresh_token == refresh
                )
                result = await conn.execute(
                    update(table)
                    .where(table.c.id == row.id, table.c.bot_token == token, same_refresh)
                    .values(bot_token=new_token, bot_refresh_token=new_refresh)
                )
                rotated += int(result.rowcount or 0)
        if len(rows) < ROTATION_BATCH:
            return Rotation(rotated=rotated, unreadable=tuple(unreadable))
        after = rows[-1].id


async def lock(conn: AsyncConnection, *, enterprise_id: str | None, team_id: str | None) -> None:
    """Hold the installation row of ``team_id`` (of ``enterprise_id``; no team: the org-wide
    install) until the caller's transaction ends: PostgreSQL ``SELECT ... FOR UPDATE``;
    SQLite has one writer at a time already. Nothing is held when the app is not installed."""
    key = _key(enterprise_id, team_id)
    await conn.execute(
        select(slack_installations.c.id)
        .where(
            slack_installations.c.enterprise_id == key["enterprise_id"],
            slack_installations.c.team_id == key["team_id"],
        )
        .with_for_update()
    )


async def delete_installation(
    conn: AsyncConnection, *, enterprise_id: str | None, team_id: str | None
) -> int:
    """Forget the installation of ``team_id`` (of ``enterprise_id``) and its tokens; how
    many rows went (0 or 1)."""
    key = _key(enterprise_id, team_id)
    result = await conn.execute(
        delete(slack_installations).where(
            slack_installations.c.enterprise_id == key["enterprise_id"],
            slack_installations.c.team_id == key["team_id"],
        )
    )
    return int(result.rowcount or 0)


async def uninstall(
    engine: AsyncEngine, *, enterprise_id: str | None, team_id: str | None, reason: str
) -> int:
    """The app was uninstalled from ``team_id`` (of ``enterprise_id``), or its tokens were
    revoked, in one transaction: the installation and its tokens go, the workspace's chats
    become inactive for ``reason`` (also their code) and what was queued for them fails.
    How many chats."""
    async with engine.begin() as conn:
        await delete_installation(conn, enterprise_id=enterprise_id, team_id=team_id)
        return await team_store.team_removed(
            conn,
            platform=Platform.SLACK,
            team_id=team_id or "",
            enterprise_id=enterprise_id,
            reason=reason,
            code=reason,
        )


async def installer_of(conn: AsyncConnection, *, team_id: str) -> str | None:
    """The user who installed the app in ``team_id`` (that workspace's own install)."""
    row = (
        await conn.execute(
            select(slack_installations.c.installer_user_id).where(
                slack_installations.c.team_id == team_id
            )
        )
    ).first()
    return str(row[0]) if row is not None and row[0] else None


# ---------------------------------------------------------------------------- OAuth states


def state_hash(secret: str, state: str) -> str:
    """The form a state is stored in: HMAC-SHA256 under ``SLACK_STATE_SECRET``, hex."""
    return hmac.new(secret.encode(), state.encode("utf-8", "replace"), hashlib.sha256).hexdigest()


async def use_state(
    conn: AsyncConnection,
    *,
    hashed: str,
    expires_at: dt.datetime,
    now: dt.datetime,
    keep: int,
) -> bool:
    """Record that a state was used; True the first time only. The record is needed until
    the state expires (after that the state is refused for its age): expired records go,
    and beyond ``keep`` records the oldest go too, so that the table stays small however
    many redirects arrive.

    One ``INSERT ... ON CONFLICT DO NOTHING``: of two requests with the same state, only one
    inserts its row.
    """
    await conn.execute(delete(slack_oauth_states).where(slack_oauth_states.c.expires_at <= now))
    dialect_insert = postgresql_insert if conn.dialect.name == "postgresql" else sqlite_insert
    result = await conn.execute(
        dialect_insert(slack_oauth_states)
        .values(state_hash=hashed, expires_at=expires_at)
        .on_conflict_do_nothing(index_elements=[slack_oauth_states.c.state_hash])
    )
    if not result.rowcount:
        return False
    count = (await conn.execute(select(func.count()).select_from(slack_oauth_states))).scalar_one()
    if count > keep:
        oldest = (
            select(slack_oauth_states.c.state_hash)
            .order_by(slack_oauth_states.c.expires_at)
            .limit(count - keep)
        )
        await conn.execute(
            delete(slack_oauth_states).where(slack_oauth_states.c.state_hash.in_(oldest))
        )
    return True
