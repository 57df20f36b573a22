"""Slack for many workspaces: the OAuth install and each workspace's bot token.

With ``SLACK_CLIENT_ID`` set, any workspace adds the app from ``GET /slack/install`` (an
"Add to Slack" page); Slack sends the installer back to ``GET /slack/oauth_redirect``, where
Bolt's :class:`~slack_bolt.oauth.async_oauth_flow.AsyncOAuthFlow` checks the state and
exchanges the code for the workspace's bot token (https://api.slack.com/methods/oauth.v2.access).

- :class:`Workspaces` is the one place a workspace's token is read: from the project's
  database (``bot.store.installations``, encrypted at rest), refreshed before it expires
  when the app uses token rotation (https://api.slack.com/authentication/rotation). The
  refresh happens in a transaction that locks the installation's row, so that two replicas
  never both spend the refresh token (Slack revokes it as it is used).
- :class:`InstallationStore` and :class:`StateStore` are Bolt's stores on that database;
  a state is signed with ``SLACK_STATE_SECRET`` (no row until it is used), works once, and
  expires after :data:`STATE_EXPIRATION_SECONDS`.

A chat of an installed workspace is addressed ``TEAM/CHANNEL`` (``T123/C456``): the team
picks the token, the channel is where it posts.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from dataclasses import dataclass, replace

from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.keyed import KeyedLocks
from bot.models import Platform
from bot.store import installations as store
from bot.store import teams as team_store
from bot.store.engine import reader
from bot.store.installations import InstallationRecord, TokenCipher, TokenKeyError
from bot.store.pages import utcnow

log = logging.getLogger("bot.channels.slack")

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
# An install link works for ten minutes, once (Bolt's and Slack's own default).
STATE_EXPIRATION_SECONDS = 600
# A state is EXPIRES.NONCE.MAC (see StateStore): URL- and cookie-safe characters only.
STATE_RE = re.compile(r"([1-9][0-9]{0,11})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})")
STATE_NONCE_BYTES = 16
# What a state's MAC signs besides the state, so that no other HMAC under
# SLACK_STATE_SECRET (the stored hash of a used state) can pass for one.
STATE_PURPOSE = "trendbot.slack.oauth-state.v1"
# Used states remembered at most, each until it expires; beyond it the oldest go (a state
# dropped early could be used a second time, from the browser holding its cookie only).
MAX_USED_STATES = 10_000
# A rotating token lives 12 hours (https://api.slack.com/authentication/rotation); it is
# refreshed this long before it expires (Bolt's token_rotation_expiration_minutes default).
TOKEN_ROTATION_MINUTES = 120
# Chats made inactive for one of these codes wait for the app to be installed again.
UNINSTALL_CODES = frozenset(
    {"app_uninstalled", "tokens_revoked", "invalid_auth", "token_revoked", "account_inactive",
     "not_authed", "no_installation"}
)  # fmt: skip
NO_INSTALLATION = "no_installation"
# A chat address of an installed workspace: TEAM/CHANNEL (a channel or a user id).
ADDRESS_RE = re.compile(r"^([TE][A-Z0-9]{1,31})/([A-Z0-9]{1,32})$")
# Workspaces' tokens kept in memory at most; the least recently used are read again.
MAX_CACHED_TOKENS = 10_000
# Why a workspace cannot be reached when no key of SLACK_TOKEN_KEY opens its stored token
# (for /healthz: it names the setting, never a key or a token).
UNREADABLE_REASON = "token_key: its stored token opens with no key of SLACK_TOKEN_KEY"
# ``GET /slack/install?team=T123`` preselects a workspace on Slack's page; only a team id
# (T and letters and digits) goes into the link, so nothing else can ride in on it.
TEAM_PARAM_RE = re.compile(r"^T[A-Za-z0-9]{1,31}$")


def address(team_id: str, conversation: str) -> str:
    """The chat id of ``conversation`` in workspace ``team_id``: ``T123/C456``."""
    return f"{team_id}/{conversation}"


def split_address(chat_id: str) -> tuple[str, str] | None:
    """``T123/C456`` -> (``T123``, ``C456``); None for an id without a workspace."""
    match = ADDRESS_RE.match(chat_id)
    return (match[1], match[2]) if match else None


def _epoch(value: dt.datetime | None) -> int | None:
    return int(value.replace(tzinfo=dt.UTC).timestamp()) if value is not None else None


def _naive_utc(epoch: int | float | None) -> dt.datetime | None:
    if epoch is None:
        return None
    return dt.datetime.fromtimestamp(float(epoch), dt.UTC).replace(tzinfo=None)


def record_of(installation: Installation | Bot, *, installer: str | None) -> InstallationRecord:
    """Bolt's installation (or bot) as the store keeps it: bot token only, no user token."""
    expires = getattr(installation, "bot_token_expires_at", None)
    scopes = installation.bot_scopes
    return InstallationRecord(
        enterprise_id=installation.enterprise_id,
        team_id=installation.team_id,
        is_enterprise_install=bool(installation.is_enterprise_install),
        bot_token=str(installation.bot_token),
        app_id=installation.app_id,
        enterprise_name=installation.enterprise_name,
        enterprise_url=getattr(installation, "enterprise_url", None),
        team_name=installation.team_name,
        bot_id=installation.bot_id,
        bot_user_id=installation.bot_user_id,
        bot_scopes=scopes if isinstance(scopes, str) or scopes is None else ",".join(scopes),
        bot_refresh_token=installation.bot_refresh_token,
        bot_token_expires_at=_naive_utc(expires) if isinstance(expires, int | float) else None,
        installer_user_id=installer,
        token_type=getattr(installation, "token_type", None) or "bot",
    )


def bot_of(record: InstallationRecord) -> Bot:
    return Bot(
        app_id=record.app_id,
        enterprise_id=record.enterprise_id,
        enterprise_name=record.enterprise_name,
        team_id=record.team_id,
        team_name=record.team_name,
        bot_token=record.bot_token,
        bot_id=record.bot_id or "",
        bot_user_id=record.bot_user_id or "",
        bot_scopes=record.bot_scopes or "",
        bot_refresh_token=record.bot_refresh_token,
        bot_token_expires_at=_epoch(record.bot_token_expires_at),
        is_enterprise_install=record.is_enterprise_install,
        installed_at=(record.installed_at or utcnow()).replace(tzinfo=dt.UTC).timestamp(),
    )


@dataclass(frozen=True, slots=True)
class _Cached:
    token: str
    fresh_until: float  # time.time() after which the store is asked again (None: never)


class Workspaces:
    """Installed workspaces: their bot tokens (refreshed before expiry), installers, removal.

    Args:
        engine: the project's database.
        cipher: ``SLACK_TOKEN_KEY``'s cipher for the tokens at rest.
        client_id, client_secret: the app's credentials, for refreshing rotating tokens.
        client: a Web API client without a token, for ``oauth.v2.access``.
        rotation_minutes: refresh a rotating token this long before it expires.
    """

    def __init__(
        self,
        *,
        engine: AsyncEngine,
        cipher: TokenCipher,
        client_id: str,
        client_secret: str,
        client: AsyncWebClient,
        rotation_minutes: int = TOKEN_ROTATION_MINUTES,
    ) -> None:
        self._engine = engine
        self.cipher = cipher
        self.client_id = client_id
        self.client_secret = client_secret
        self._rotator = AsyncTokenRotator(
            client_id=client_id, client_secret=client_secret, client=client
        )
        self.rotation_minutes = rotation_minutes
        self._cache: dict[tuple[str, str], _Cached] = {}
        self._locks: KeyedLocks[tuple[str, str]] = KeyedLocks()
        self._unreadable: dict[tuple[str, str], str] = {}

    @staticmethod
    def _key(enterprise_id: str | None, team_id: str | None) -> tuple[str, str]:
        return (enterprise_id or "", team_id or "")

    def forget(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        """Drop what is remembered of the workspace: the next use reads the store."""
        self._cache.pop(self._key(enterprise_id, team_id), None)
        self._unreadable.pop(self._key(enterprise_id, team_id), None)
        if enterprise_id:
            for key in [k for k in self._cache if k[0] == enterprise_id]:
                del self._cache[key]
            for key in [k for k in self._unreadable if k[0] == enterprise_id]:
                del self._unreadable[key]

    def unreadable(self) -> dict[str, str]:
        """The workspaces (team id, or organisation id for an org-wide install) whose stored
        token no key of ``SLACK_TOKEN_KEY`` opens, with the reason, as this process found
        them: at start (:meth:`rotate_keys`) or when one was used."""
        return {
            team or enterprise: reason for (enterprise, team), reason in self._unreadable.items()
        }

    def _cannot_read(self, key: tuple[str, str]) -> None:
        """Remember that no key opens the workspace's token; the operator is told once."""
        if key in self._unreadable:
            return
        self._unreadable[key] = UNREADABLE_REASON
        log.error(
            "slack: the stored token of workspace %s opens with no key of SLACK_TOKEN_KEY; "
            "the workspace cannot be reached until its key is listed again or the app is "
            "installed there again",
            key[1] or key[0],
            extra={"platform": "slack"},
        )

    async def rotate_keys(self) -> None:
        """Encrypt the stored tokens again with the first key of ``SLACK_TOKEN_KEY`` (see
        :func:`bot.store.installations.rotate_keys`); those that no key opens are
        remembered for ``/healthz`` and logged once each. Run in the background at start: a
        failure is logged, never raised."""
        try:
            done = await store.rotate_keys(self._engine, cipher=self.cipher)
        except Exception as exc:  # the database failed: the next start tries again
            log.warning(
                "slack: stored tokens were not re-encrypted (%s); the next start tries again",
                type(exc).__name__,
                extra={"platform": "slack"},
            )
            return
        for found in done.unreadable:
            self._cannot_read(self._key(found.enterprise_id, found.team_id))
        # Said at every start, 0 included: the operator knows when the old key can go.
        log.info(
            "slack: %d stored tokens re-encrypted with the first key of SLACK_TOKEN_KEY; "
            "%d open with no key",
            done.rotated,
            len(done.unreadable),
            extra={"platform": "slack"},
        )

    async def token(self, *, team_id: str, enterprise_id: str | None = None) -> str | None:
        """The workspace's bot token, fresh for at least ``rotation_minutes``; None when the
        app is not installed there.

        Raises:
            TokenKeyError: no key of ``SLACK_TOKEN_KEY`` opens the stored token.
            SlackTokenRotationError: the token needed a refresh and Slack refused it.
            SlackClientError: Slack could not be asked for the refresh.
        """
        key = self._key(enterprise_id, team_id)
        cached = self._cache.get(key)
        if cached is not None and time.time() < cached.fresh_until:
            return cached.token
        record = await self.installation(enterprise_id=enterprise_id, team_id=team_id)
        return record.bot_token if record is not None else None

    async def installation(
        self, *, enterprise_id: str | None, team_id: str | None
    ) -> InstallationRecord | None:
        """The installation serving the workspace, its token refreshed when it would expire
        within ``rotation_minutes``.

        Raises:
            TokenKeyError: no key of ``SLACK_TOKEN_KEY`` opens the stored token (remembered
                for ``/healthz``, logged once).
        """
        key = self._key(enterprise_id, team_id)
        try:
            record = await self._installation(key, enterprise_id=enterprise_id, team_id=team_id)
        except TokenKeyError:
            self._cache.pop(key, None)
            self._cannot_read(key)
            raise
        self._unreadable.pop(key, None)
        return record

    async def _installation(
        self, key: tuple[str, str], *, enterprise_id: str | None, team_id: str | None
    ) -> InstallationRecord | None:
        async with self._locks.hold(key):
            async with reader(self._engine).connect() as conn:
                if enterprise_id is None and team_id:
                    # A workspace of an Enterprise Grid organisation may be served by the
                    # organisation's org-wide install; its chats know the organisation.
                    enterprise_id = await team_store.enterprise_of_team(
                        conn, platform=Platform.SLACK, team_id=team_id
                    )
                record = await store.find(
                    conn, enterprise_id=enterprise_id, team_id=team_id, cipher=self.cipher
                )
            if record is not None and self._expiring(record):
                record = await self._refresh(record)
            if record is None:
                self._cache.pop(key, None)
                return None
            self._remember(key, record)
            return record

    def _expiring(self, record: InstallationRecord) -> bool:
        expires = _epoch(record.bot_token_expires_at)
        return expires is not None and expires <= time.time() + self.rotation_minutes * 60

    def _remember(self, key: tuple[str, str], record: InstallationRecord) -> None:
        expires = _epoch(record.bot_token_expires_at)
        fresh_until = float("inf") if expires is None else expires - self.rotation_minutes * 60 + 1
        # A token that does not rotate is read again now and then all the same: another
        # replica may have seen the app uninstalled.
        fresh_until = min(fresh_until, time.time() + 300)
        self._cache[key] = _Cached(record.bot_token, fresh_until)
        while len(self._cache) > MAX_CACHED_TOKENS:
            del self._cache[next(iter(self._cache))]

    async def _refresh(self, record: InstallationRecord) -> InstallationRecord | None:
        """Exchange the refresh token for a new token, once across replicas: the row stays
        locked (PostgreSQL ``FOR UPDATE``; SQLite has one writer) from the read to the save,
        and a replica that waited finds the token already fresh."""
        async with self._engine.begin() as conn:
            await store.lock(
                conn,
                enterprise_id=record.enterprise_id,
                team_id=None if record.is_enterprise_install else record.team_id,
            )
            current = await store.find(
                conn,
                enterprise_id=record.enterprise_id,
                team_id=record.team_id,
                cipher=self.cipher,
            )
            if current is None or not self._expiring(current):
                return current
            refreshed = await self._rotator.perform_bot_token_rotation(
                bot=bot_of(current), minutes_before_expiration=self.rotation_minutes
            )
            if refreshed is None:
                return current
            updated = replace(
                current,
                bot_token=str(refreshed.bot_token),
                bot_refresh_token=refreshed.bot_refresh_token,
                bot_token_expires_at=_naive_utc(refreshed.bot_token_expires_at),
            )
            await store.save(conn, updated, cipher=self.cipher)
        log.info(
            "slack: the bot token of %s was refreshed before it expired",
            record.team_id or record.enterprise_id,
            extra={"platform": "slack"},
        )
        return updated

    async def save(self, record: InstallationRecord) -> None:
        async with self._engine.begin() as conn:
            await store.save(conn, record, cipher=self.cipher)
        self.forget(enterprise_id=record.enterprise_id, team_id=record.team_id)

    async def installed(self, record: InstallationRecord) -> int:
        """After an install: the workspace's chats that stopped because the app was
        uninstalled are active again (nothing missed is replayed), and chats of the
        single-token setup move to ``TEAM/CHANNEL``. How many became active."""
        team = record.team_id or ""
        return await team_store.team_installed(
            self._engine,
            platform=Platform.SLACK,
            team_id=team,
            enterprise_id=record.enterprise_id,
            address=lambda conversation: address(team, conversation),
            codes=UNINSTALL_CODES,
        )

    async def remove(self, *, enterprise_id: str | None, team_id: str | None, reason: str) -> int:
        """The app was uninstalled or its tokens revoked: forget the workspace's tokens,
        make its chats inactive and fail what was queued for them. How many chats."""
        stopped = await store.uninstall(
            self._engine, enterprise_id=enterprise_id, team_id=team_id, reason=reason
        )
        self.forget(enterprise_id=enterprise_id, team_id=team_id)
        return stopped

    async def installer(self, *, team_id: str) -> str | None:
        async with reader(self._engine).connect() as conn:
            return await store.installer_of(conn, team_id=team_id)


__all__ = [
    "INSTALL_PATH",
    "REDIRECT_PATH",
    "UNINSTALL_CODES",
    "Workspaces",
    "address",
    "split_address",
]
