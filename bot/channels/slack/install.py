"""Bolt's OAuth on the project's database: the installation and state stores, the install
flow and its pages (``GET /slack/install``, ``GET /slack/oauth_redirect``); see
:mod:`bot.channels.slack.oauth` for the workspaces' tokens."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import html
import logging
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from slack_bolt.oauth.async_callback_options import (
    AsyncCallbackOptions,
    AsyncFailureArgs,
    AsyncSuccessArgs,
)
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.slack.client import log
from bot.channels.slack.oauth import (
    INSTALL_PATH,
    MAX_USED_STATES,
    REDIRECT_PATH,
    STATE_EXPIRATION_SECONDS,
    STATE_NONCE_BYTES,
    STATE_PURPOSE,
    STATE_RE,
    TEAM_PARAM_RE,
    Workspaces,
    bot_of,
    record_of,
)
from bot.i18n import negotiate, t
from bot.logs import Refusals
from bot.store import installations as store


class InstallationStore(AsyncInstallationStore):
    """Bolt's installation store on :class:`Workspaces` (bot tokens only: the app asks for
    no user scopes). ``find_bot`` returns a token already refreshed, and no refresh token:
    refreshing is :class:`Workspaces`' alone, so a refresh token is never spent twice."""

    def __init__(self, workspaces: Workspaces) -> None:
        self._workspaces = workspaces

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_save(self, installation: Installation) -> None:
        await self._workspaces.save(record_of(installation, installer=installation.user_id))

    async def async_save_bot(self, bot: Bot) -> None:
        await self._workspaces.save(record_of(bot, installer=None))

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        record = await self._workspaces.installation(
            enterprise_id=enterprise_id, team_id=None if is_enterprise_install else team_id
        )
        if record is None:
            return None
        # Refreshed already; without its refresh token Bolt never rotates it a second time.
        return bot_of(replace(record, bot_refresh_token=None, bot_token_expires_at=None))

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        bot = await self.async_find_bot(
            enterprise_id=enterprise_id,
            team_id=team_id,
            is_enterprise_install=is_enterprise_install,
        )
        if bot is None:
            return None
        return Installation(
            app_id=bot.app_id,
            enterprise_id=bot.enterprise_id,
            enterprise_name=bot.enterprise_name,
            team_id=bot.team_id,
            team_name=bot.team_name,
            bot_token=bot.bot_token,
            bot_id=bot.bot_id,
            bot_user_id=bot.bot_user_id,
            bot_scopes=bot.bot_scopes,
            bot_refresh_token=bot.bot_refresh_token,
            bot_token_expires_at=bot.bot_token_expires_at,
            user_id=user_id or "",
            is_enterprise_install=bot.is_enterprise_install,
            installed_at=bot.installed_at,
        )

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._workspaces.remove(
            enterprise_id=enterprise_id, team_id=team_id, reason="app_uninstalled"
        )

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is None:
            await self.async_delete_bot(enterprise_id=enterprise_id, team_id=team_id)


class StateStore(AsyncOAuthStateStore):
    """OAuth states that cost nothing to hand out: signed, expiring, single use.

    A state is ``EXPIRES.NONCE.MAC``: when it expires (Unix seconds), 16 random bytes, and an
    HMAC-SHA256 of both under ``SLACK_STATE_SECRET``. Issuing one writes nothing, so a flood
    of ``GET /slack/install`` fills no table and pushes out no installer's state. Bolt puts
    the state in a ``Secure``, ``HttpOnly`` cookie and takes the redirect only from the
    browser that holds it. The state works once: its use is recorded (as an HMAC, until it
    expires) in one insert that two requests cannot both make.

    Args:
        engine: the project's database, for the record of used states.
        secret: ``SLACK_STATE_SECRET``.
        expiration_seconds: how long a state works.
        max_used: used states remembered at most; the oldest go first (see the README).
        clock: the time, in Unix seconds.
    """

    def __init__(
        self,
        *,
        engine: AsyncEngine,
        secret: str,
        expiration_seconds: int = STATE_EXPIRATION_SECONDS,
        max_used: int = MAX_USED_STATES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._engine = engine
        self._secret = secret
        self.expiration_seconds = expiration_seconds
        self.max_used = max_used
        self.clock = clock

    @property
    def logger(self) -> logging.Logger:
        return log

    def _mac(self, expires: int, nonce: str) -> str:
        signed = f"{STATE_PURPOSE}.{expires}.{nonce}".encode()
        digest = hmac.new(self._secret.encode(), signed, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        expires = int(self.clock()) + self.expiration_seconds
        nonce = secrets.token_urlsafe(STATE_NONCE_BYTES)
        return f"{expires}.{nonce}.{self._mac(expires, nonce)}"

    async def async_consume(self, state: str) -> bool:
        match = STATE_RE.fullmatch(state or "")
        if match is None:
            return False
        expires, nonce, mac = int(match[1]), match[2], match[3]
        if not hmac.compare_digest(mac.encode(), self._mac(expires, nonce).encode()):
            return False
        now = self.clock()
        if not now < expires <= now + self.expiration_seconds:
            return False  # expired (or made to last longer than this store issues)
        async with self._engine.begin() as conn:
            return await store.use_state(
                conn,
                hashed=store.state_hash(self._secret, state),
                expires_at=dt.datetime.fromtimestamp(expires, dt.UTC).replace(tzinfo=None),
                now=dt.datetime.fromtimestamp(now, dt.UTC).replace(tzinfo=None),
                keep=self.max_used,
            )


class _NoCodes(logging.Filter):
    """Bolt logs a failed code exchange with the code in it; the code is a credential."""

    _CODE = re.compile(r"with code: \S+")

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self._CODE.sub("with code: [redacted]", record.getMessage()), None
        return True


_FLOW_LOG = logging.getLogger("bot.channels.slack.oauth")


def _lang(request: AsyncBoltRequest, default: str) -> str:
    accept = request.headers.get("accept-language", [""])
    first = (accept[0] if accept else "").split(",")[0].split(";")[0].strip()
    return negotiate(first or None, default=default)


def _page(lang: str, *, title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
        f"{body}</body></html>"
    )


# Why an install did not complete, as the page says it (Bolt's failure reasons).
_FAILURES = {
    "invalid_browser": "slack.oauth.failed_state",
    "invalid_state": "slack.oauth.failed_state",
    "missing_code": "slack.oauth.failed_code",
    "invalid_code": "slack.oauth.failed_code",
    "access_denied": "slack.oauth.cancelled",
}


class InstallFlow(AsyncOAuthFlow):
    """Bolt's OAuth flow, with the project's pages in the installer's language."""

    def __init__(self, *, settings: AsyncOAuthSettings, client: AsyncWebClient, default_lang: str):
        if not any(isinstance(f, _NoCodes) for f in _FLOW_LOG.filters):
            _FLOW_LOG.addFilter(_NoCodes())
        super().__init__(client=client, logger=_FLOW_LOG, settings=settings)
        self._default_lang = default_lang

    async def build_authorize_url(self, state: str, request: AsyncBoltRequest) -> str:
        """Slack's authorize link with ``state``; the request's ``team`` goes in only when it
        is a team id (Bolt pastes it into the link as it is, so ``T1&redirect_uri=...`` would
        add parameters of the caller's choosing). Anything else is ignored."""
        teams = request.query.get("team") or []
        team = teams[0] if len(teams) == 1 and TEAM_PARAM_RE.match(teams[0]) else None
        return self.settings.authorize_url_generator.generate(state=state, team=team)

    async def build_install_page_html(self, url: str, request: AsyncBoltRequest) -> str:
        lang = _lang(request, self._default_lang)
        link = f'<p><a href="{html.escape(url)}">{html.escape(t(lang, "slack.oauth.add"))}</a></p>'
        return _page(lang, title=t(lang, "slack.oauth.install_title"), body=link)


def failure_page(lang: str, *, key: str = "slack.oauth.failed") -> str:
    """The page of an install that did not complete: why, and a link to start again."""
    retry = f'<p><a href="{INSTALL_PATH}">{html.escape(t(lang, "slack.oauth.retry"))}</a></p>'
    body = f"<p>{html.escape(t(lang, key))}</p>{retry}"
    return _page(lang, title=t(lang, "slack.oauth.failed_title"), body=body)


def page_lang(request: AsyncBoltRequest, default: str) -> str:
    """The installer's language, from the browser's Accept-Language (English or Korean)."""
    return _lang(request, default)


def _headers(set_cookie: str) -> dict[str, str | Sequence[str]]:
    """An HTML page's headers; the browser forgets the state cookie (it was used)."""
    return {"Content-Type": "text/html; charset=utf-8", "Set-Cookie": [set_cookie]}


def callbacks(workspaces: Workspaces, *, default_lang: str) -> AsyncCallbackOptions:
    """What the redirect answers: a page in the installer's language, never a traceback.
    Installs that did not complete (anyone may call the redirect) are logged at most once a
    minute."""
    unfinished = Refusals(log, "slack: an install did not complete")

    async def success(args: AsyncSuccessArgs) -> BoltResponse:
        installation = args.installation
        record = record_of(installation, installer=installation.user_id)
        resumed = await workspaces.installed(record)
        log.info(
            "slack: installed in %s (%d chats active again)",
            installation.team_id or installation.enterprise_id,
            resumed,
            extra={"platform": "slack"},
        )
        lang = _lang(args.request, default_lang)
        body = f"<p>{html.escape(t(lang, 'slack.oauth.done_text'))}</p>"
        return BoltResponse(
            status=200,
            body=_page(lang, title=t(lang, "slack.oauth.done_title"), body=body),
            headers=_headers(args.settings.state_utils.build_set_cookie_for_deletion()),
        )

    async def failure(args: AsyncFailureArgs) -> BoltResponse:
        reason = str(args.reason)[:64]
        unfinished.refused(reason, extra={"platform": "slack"})
        lang = _lang(args.request, default_lang)
        key = _FAILURES.get(reason, "slack.oauth.failed")
        status = args.suggested_status_code
        if status >= 500:
            status = 503  # the store could not save it: try again later
        return BoltResponse(
            status=status,
            body=failure_page(lang, key=key),
            headers=_headers(args.settings.state_utils.build_set_cookie_for_deletion()),
        )

    return AsyncCallbackOptions(success=success, failure=failure)


def oauth_settings(
    *,
    workspaces: Workspaces,
    state_store: StateStore,
    scopes: list[str],
    redirect_uri: str | None,
    authorization_url: str | None = None,
    default_lang: str,
) -> AsyncOAuthSettings:
    """Bolt's OAuth settings on the project's stores."""
    return AsyncOAuthSettings(
        client_id=workspaces.client_id,
        client_secret=workspaces.client_secret,
        scopes=scopes,
        user_scopes=[],
        redirect_uri=redirect_uri,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        callback_options=callbacks(workspaces, default_lang=default_lang),
        authorization_url=authorization_url,
        installation_store=InstallationStore(workspaces),
        installation_store_bot_only=True,
        token_rotation_expiration_minutes=workspaces.rotation_minutes,
        state_store=state_store,
        state_expiration_seconds=state_store.expiration_seconds,
        logger=_FLOW_LOG,
    )


__all__ = [
    "InstallFlow",
    "InstallationStore",
    "StateStore",
    "oauth_settings",
]
