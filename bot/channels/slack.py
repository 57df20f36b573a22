"""Slack: messages out (:class:`SlackSender`) and commands in (:class:`SlackChannel`).

Both sides share one :class:`~slack_sdk.web.async_client.AsyncWebClient` from
:func:`make_client`. slack-sdk's errors are translated here, at the boundary, into the
``bot.errors`` tree (:func:`translate_error`); nothing past this module reads a Slack error
code. Error reasons are built from Slack's error codes and HTTP statuses only, never from
the library's exception texts, so no reason carries a token.

Inbound, a Bolt :class:`~slack_bolt.async_app.AsyncApp` serves the slash command
(``SLACK_COMMAND``, ``/trend`` by default), the buttons of its replies and the events of
:data:`BOT_EVENTS`, over HTTP (``POST /slack/events``, every request's signature checked on
its raw body before anything parses it) or Socket Mode. Every answer is ephemeral to the
caller: in the acknowledgement itself, or through the request's ``response_url`` when the
work may take longer than Slack's 3 seconds.

One workspace (``SLACK_BOT_TOKEN``): :class:`SlackAuth` holds whether Slack accepts the bot
token, for the sender and the channel alike; a refused token stops every send, not one chat.

Many workspaces (``SLACK_CLIENT_ID``, :mod:`bot.channels.slack_oauth`): Bolt authorizes each
request with its workspace's installation; chats are ``TEAM/CHANNEL``, each send uses its
workspace's token and counts against that workspace's cap (:meth:`SlackSender.pace_key`);
an uninstalled workspace stops its own chats only.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import hmac
import json
import logging
import re
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qsl

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError, SlackClientError, SlackTokenRotationError
from slack_sdk.web.async_client import AsyncWebClient

from bot import charts, metrics, render
from bot.commands import Caller, ChatStatus, CommandCore, registry, split_command
from bot.errors import (
    ChatGone,
    ConfigError,
    DeliveryError,
    NotInChannel,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)
from bot.i18n import LANGUAGES, negotiate, t
from bot.models import (
    Chart,
    ChatKind,
    ChatSettings,
    ChatState,
    Outgoing,
    Platform,
    Reply,
    Toast,
    Toggled,
)
from bot.pacing import Pacing, Replies
from bot.render import toggle
from bot.settings import Settings
from bot.util import utcnow

if TYPE_CHECKING:
    from bot.channels.slack_oauth import StateStore, Workspaces

log = logging.getLogger("bot.channels.slack")

# A Web API call that has not answered in this long is abandoned (chat.postMessage answers
# in well under a second); the delivery engine retries it as a possible duplicate.
REQUEST_TIMEOUT_SECONDS = 15
# Slack waits 3 s for the acknowledgement of a slash command or a button. A reply that is
# not ready this long after the request arrived is acknowledged empty and sent through the
# response_url instead; the rest of the 3 s is margin for the network.
ACK_BUDGET_SECONDS = 2.0
# users.info (for a new chat's language) is skipped when Slack is slower than this.
LOCALE_TIMEOUT_SECONDS = 1.0
# A 429 without a usable Retry-After header waits this long.
DEFAULT_RETRY_AFTER_SECONDS = 1.0
# stop() lets commands being answered finish for this long, then cancels them.
SHUTDOWN_GRACE_SECONDS = 5.0
# The action_id of every button the Slack renderer makes (``trend:{index}``, and
# ``trend:vote-{n}-up|down`` for the 👍/👎 of page n).
# ``trend:vote-{n}`` is the feedback_buttons element of page n (its value says 👍 or 👎).
# ``trend:lang`` is a digest's language toggle (bot/render/toggle.py).
ACTION_ID_RE = re.compile(r"^trend:(?:\d+|lang|vote-\d+(?:-(?:up|down))?)$")
# Slack's answer to blocks it does not take (https://api.slack.com/methods/chat.postMessage
# #errors: "invalid_blocks: Blocks submitted with this message are not valid"); a message
# with fallback blocks is posted again with them, and the workspace keeps to them.
REFUSED_BLOCKS = "invalid_blocks"
# A direct message with the bot: its channel id starts with D; Slack names it so.
DM_CHANNEL_PREFIX = "D"
DM_CHANNEL_NAME = "directmessage"
# Slack names a group DM's conversation "mpdm-alice--bob--carol-1".
GROUP_DM_NAME_PREFIX = "mpdm-"
# conversations.info (where a command was typed) is given up on after this long; the
# command then runs as the conversation's id suggests.
CONVERSATION_TIMEOUT_SECONDS = 1.0
# Conversations known to be postable are remembered, so that each costs one lookup.
MAX_REMEMBERED_CONVERSATIONS = 10_000
# GET /slack/install and /slack/oauth_redirect: Slack's redirect carries a code and a state
# of a few dozen characters each; a longer query is not Slack's.
MAX_OAUTH_QUERY_CHARS = 2000
# The Events API events handled here; deploy/slack-app-manifest.yml subscribes to these.
BOT_EVENTS = (
    "app_uninstalled",
    "tokens_revoked",
    "member_joined_channel",
    "channel_archive",
    "group_archive",
    "channel_deleted",
    "group_deleted",
    "channel_unarchive",
    "group_unarchive",
)
NOT_IN_CHANNEL = "not_in_channel"
CHANNEL_NOT_FOUND = "channel_not_found"
# A chat whose deliveries stopped for one of these codes waits for the bot to be invited back.
INVITE_CODES = frozenset({NOT_IN_CHANNEL, CHANNEL_NOT_FOUND})
# A subscription asked for in a private channel the app is not a member of: the chat is kept
# inactive under this code (reason and code alike) and becomes active when the app is
# invited (member_joined_channel), unless the request is older than AWAITING_INVITE_DAYS.
AWAITING_INVITE = "awaiting_invite"
AWAITING_INVITE_DAYS = 7
# Why a chat stopped at its channel's channel_archive or channel_deleted event: its reason
# and code alike. Only an archive is undone (by channel_unarchive).
ARCHIVED_REASON = "is_archived"
DELETED_REASON = "channel_deleted"
# Error codes after which nothing can be posted to the conversation again
# (https://api.slack.com/methods/chat.postMessage#errors).
GONE_ERRORS = frozenset({CHANNEL_NOT_FOUND, "is_archived", "channel_is_archived", "user_not_found"})
# The token itself was refused, whatever the conversation (chat.postMessage and auth.test
# errors): nothing can be sent anywhere in the workspace until it works again.
AUTH_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "token_revoked",
        "token_expired",
        "account_inactive",
        "missing_scope",
    }
)
# While the token is refused, auth.test is asked this often whether it works again.
AUTH_RETRY_SECONDS = 60.0
# Slack failed while handling the call; part of it may have happened (a posted message).
AMBIGUOUS_ERRORS = frozenset({"fatal_error", "internal_error"})
# Slack could not take the call now; nothing happened.
UNAVAILABLE_ERRORS = frozenset({"service_unavailable", "request_timeout"})
_APP_TOKEN_REJECTED = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "account_inactive", "not_allowed_token_type"}
)

_ERRORS: tuple[type[BaseException], ...] = (SlackClientError, aiohttp.ClientError, TimeoutError)
# files.getUploadURLExternal alt_txt: longer is alt_txt_too_large
# (https://docs.slack.dev/reference/methods/files.getUploadURLExternal, Errors).
MAX_ALT_TEXT_CHARS = 1000
CHART_FILENAME = "chart.png"

# Slack signs every request it sends; one older than this is refused as stale
# (https://api.slack.com/authentication/verifying-requests-from-slack).
SIGNATURE_MAX_AGE_SECONDS = 300
SIGNATURE_VERSION = "v0"
# A signed request seen again within SIGNATURE_MAX_AGE_SECONDS is answered, not acted on;
# at most this many signatures are remembered (the oldest forgotten first).
MAX_REMEMBERED_REQUESTS = 100_000
# Events API retries (X-Slack-Retry-Num) carry the event_id of the first delivery; Slack
# retries three times within about an hour (https://api.slack.com/apis/events-api#retries).
EVENT_RETRY_WINDOW_SECONDS = 3600.0
MAX_REMEMBERED_EVENTS = 10_000
# Slack's payloads nest a few levels (a message's blocks in a button press); deeper JSON is
# refused before Bolt walks it.
MAX_JSON_DEPTH = 64
# The bot scopes each Web API method this module calls needs (the "Required scopes" of
# https://api.slack.com/methods/<method>); conversations.info needs the read scope of the
# conversation's type. deploy/slack-app-manifest.yml asks for exactly these and "commands".
METHOD_SCOPES: dict[str, frozenset[str]] = {
    "apps.connections.open": frozenset(),  # the app-level token's connections:write
    "auth.test": frozenset(),
    "chat.postMessage": frozenset({"chat:write", "chat:write.public"}),
    "conversations.info": frozenset({"channels:read", "groups:read", "im:read"}),
    "users.info": frozenset({"users:read"}),
    # A reply's chart, uploaded into the DM with the app (files_upload_v2).
    "files.getUploadURLExternal": frozenset({"files:write"}),
    "files.completeUploadExternal": frozenset({"files:write"}),
}
# Every bot scope the app asks for: the OAuth install requests exactly these.
BOT_SCOPES = frozenset({"commands"}).union(*METHOD_SCOPES.values())


# ---------------------------------------------------------------------------- the client


def make_client(settings: Settings, *, timeout: int = REQUEST_TIMEOUT_SECONDS) -> AsyncWebClient:
    """The one Web API client of the process, for the sender and the channel.

    Calls go to ``settings.slack_api_base_url``. The client has no retry handlers at all:
    slack-sdk would otherwise retry a dropped connection (possibly posting a message twice)
    and, given a rate-limit handler, sleep on 429s; the delivery engine owns both decisions.
    No request is made here.
    """
    if settings.slack_bot_token is None and not settings.slack_oauth:
        raise ValueError("SLACK_BOT_TOKEN is not set")
    base_url = settings.slack_api_base_url
    if not base_url.endswith("/"):  # slack-sdk appends the method name to it
        base_url += "/"
    token = settings.slack_bot_token
    return AsyncWebClient(
        # OAuth install: no token of its own; each call names its workspace's token.
        token=token.get_secret_value() if token is not None else None,
        base_url=base_url,
        timeout=timeout,
        retry_handlers=[],
    )


def _retry_after(headers: Mapping[str, Any] | None) -> float:
    for name, value in (headers or {}).items():
        if name.lower() != "retry-after":
            continue
        raw = value[0] if isinstance(value, list | tuple) and value else value
        try:
            seconds = float(str(raw).strip())
        except ValueError:
            break
        if seconds >= 0:
            return seconds
        break
    return DEFAULT_RETRY_AFTER_SECONDS


def translate_error(exc: BaseException) -> DeliveryError:
    """A slack-sdk or aiohttp error as the ``bot.errors`` class the delivery engine acts on.

    The reason starts with Slack's error code (``channel_not_found``, ``ratelimited``...)
    or a short label (``timeout``, ``network``, ``http_502``), the word metrics count by.

    - HTTP 429 / ``ratelimited``: :class:`RateLimited` for the ``Retry-After`` seconds.
    - :data:`AUTH_ERRORS`: :class:`PlatformAuthFailed` (sending to Slack stops as a whole).
    - ``not_in_channel``: :class:`NotInChannel` (the chat is paused with an invite hint).
    - :data:`GONE_ERRORS`: :class:`ChatGone`.
    - ``fatal_error``, ``internal_error``: ambiguous :class:`TransientError` (Slack says
      the operation may have partly succeeded); a 5xx other than 503 and a timeout too.
    - ``service_unavailable``, ``request_timeout``, 503, a refused connection: a
      :class:`TransientError` that certainly posted nothing.
    - anything else: :class:`PermanentError` (a malformed message, a missing scope).
    """
    if isinstance(exc, SlackApiError):
        response = exc.response
        status = int(getattr(response, "status_code", 0) or 0)
        data = getattr(response, "data", None)
        code = str(data.get("error") or "") if isinstance(data, dict) else ""
        if status == 429 or code == "ratelimited":
            seconds = _retry_after(getattr(response, "headers", None))
            return RateLimited(f"ratelimited: retry after {seconds:g}s", retry_after=seconds)
        if code in AUTH_ERRORS:
            return PlatformAuthFailed(f"{code}: Slack refused the bot token", code=code)
        if code == NOT_IN_CHANNEL:
            return NotInChannel(NOT_IN_CHANNEL)
        if code in GONE_ERRORS:
            return ChatGone(code, code=code)
        if code in AMBIGUOUS_ERRORS:
            return TransientError(code, ambiguous=True)
        if code in UNAVAILABLE_ERRORS:
            return TransientError(code)
        if status >= 500:
            label = f"http_{status}" + (f": {code}" if code else "")
            return TransientError(label, ambiguous=status != 503)
        return PermanentError(code or f"http_{status}")
    if isinstance(exc, TimeoutError):  # also aiohttp's ServerTimeoutError
        return TransientError("timeout: no answer from Slack", ambiguous=True)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return TransientError(f"network: {type(exc).__name__}")
    if isinstance(exc, aiohttp.ClientError):  # the connection broke after the request left
        return TransientError(f"network: {type(exc).__name__}", ambiguous=True)
    return PermanentError(f"error: {type(exc).__name__}")


# ---------------------------------------------------------------------------- outbound


def _needed_scopes(exc: BaseException) -> frozenset[str]:
    """The scopes a ``missing_scope`` answer says are needed (its ``needed`` field)."""
    data = getattr(getattr(exc, "response", None), "data", None)
    needed = data.get("needed") if isinstance(data, dict) else None
    return frozenset(s.strip() for s in str(needed or "").split(",") if s.strip())


def _granted_scopes(headers: Mapping[str, Any], *, default: frozenset[str]) -> frozenset[str]:
    """The token's scopes from an answer's ``x-oauth-scopes`` header; ``default`` without."""
    for name, value in headers.items():
        if name.lower() == "x-oauth-scopes":
            raw = value[0] if isinstance(value, list | tuple) and value else value
            return frozenset(s.strip() for s in str(raw).split(",") if s.strip())
    return default


class SlackAuth:
    """Whether Slack accepts the bot token: one state for the whole workspace.

    :meth:`refused` (a send or an event said the token is refused) stops sending to Slack:
    one ERROR line, ``trendbot_platform_auth_failures_total`` counts it, ``/healthz`` shows
    the code (:attr:`error`), and auth.test is asked every ``retry_seconds`` until it
    passes; then :meth:`wait_accepted` returns and sending resumes.
    """

    def __init__(self, client: AsyncWebClient, *, retry_seconds: float = AUTH_RETRY_SECONDS):
        self._client = client
        self._retry_seconds = retry_seconds
        self._accepted = asyncio.Event()
        self._accepted.set()
        self._probe: asyncio.Task[None] | None = None
        self._needed: frozenset[str] = frozenset()
        self.error: str | None = None
        metrics.PLATFORM_UP.labels("slack").set(1)

    def refused(self, code: str, *, needed: frozenset[str] = frozenset()) -> None:
        """The token was refused with ``code``; stop sending until auth.test passes (and,
        for ``missing_scope``, its ``x-oauth-scopes`` header lists the ``needed`` scopes)."""
        self._needed = needed
        if self.error is None:
            log.error(
                "slack: the bot token was refused (%s); nothing is sent to Slack until "
                "auth.test passes (asked every %gs); check SLACK_BOT_TOKEN",
                code,
                self._retry_seconds,
                extra={"platform": "slack"},
            )
            metrics.PLATFORM_AUTH_FAILURES.labels("slack", code).inc()
            metrics.PLATFORM_UP.labels("slack").set(0)
        self.error = code
        self._accepted.clear()
        if self._probe is None or self._probe.done():
            self._probe = asyncio.create_task(self._retry())

    async def wait_accepted(self) -> None:
        """Return once Slack accepts the token (at once while it does)."""
        await self._accepted.wait()

    async def close(self) -> None:
        probe, self._probe = self._probe, None
        if probe is not None and not probe.done():
            probe.cancel()
            await asyncio.gather(probe, return_exceptions=True)

    async def _retry(self) -> None:
        while self.error is not None:
            await asyncio.sleep(self._retry_seconds)
            try:
                response = await self._client.auth_test()
            except _ERRORS as exc:
                error = translate_error(exc)
                if isinstance(error, PlatformAuthFailed):
                    self.error = error.code
                log.debug("slack: auth.test still fails: %s", error.reason)
                continue
            if not self._needed <= _granted_scopes(response.headers, default=self._needed):
                log.debug("slack: the token still lacks %s", ",".join(sorted(self._needed)))
                continue
            self.error = None
            self._needed = frozenset()
            metrics.PLATFORM_UP.labels("slack").set(1)
            self._accepted.set()
            log.info("slack: the bot token is accepted again; sending resumes")


class SlackSender:
    """Posts rendered messages to Slack conversations (satisfies ``bot.delivery.Sender``).

    Slack limits posting per channel (about one message a second, :meth:`interval`) and,
    above that, per workspace (``rate_per_second``, ``SLACK_WORKSPACE_RATE_PER_SECOND``).
    A refused token stops every send (:class:`SlackAuth`); the delivery engine waits on
    :meth:`wait_authorized` before it sends to Slack again.
    """

    platform = Platform.SLACK

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        per_channel_rate: float,
        workspace_rate: float | None = None,
        auth: SlackAuth | None = None,
        workspaces: Workspaces | None = None,
    ) -> None:
        self._client = client
        self._interval = 1.0 / per_channel_rate
        self._workspace_rate = workspace_rate
        # Each workspace's pace and the channels' slots, shared with the replies.
        self.pacing = Pacing(workspace_rate)
        self.auth = auth or SlackAuth(client)
        self._workspaces = workspaces
        # Workspaces (pace_key; "" for the one of a bot token) that refused a message's
        # blocks and took its fallback blocks: they get the fallback blocks from then on.
        self.fallback_workspaces: set[str] = set()

    @property
    def rate_per_second(self) -> float | None:
        return self._workspace_rate

    def interval(self, chat: ChatSettings) -> float:
        return self._interval

    def pace_key(self, chat_id: str) -> str | None:
        """The workspace whose cap a send to ``chat_id`` counts against (installed by
        OAuth: ``T123`` of ``T123/C456``); None for the one workspace of a bot token."""
        if self._workspaces is None:
            return None
        from bot.channels.slack_oauth import split_address

        parts = split_address(chat_id)
        return parts[0] if parts else None

    async def wait_authorized(self) -> None:
        """Return once Slack accepts the bot token again."""
        await self.auth.wait_accepted()

    async def send(self, chat_id: str, message: Outgoing, *, thread: str | None) -> str | None:
        """``chat.postMessage`` of one message; returns its ``ts``.

        ``chat_id`` is a channel id, or a user id for the user's DM with the app (Slack posts
        it in the App Home messages tab). A message marked ``in_thread`` goes into the thread
        of ``thread`` (the ``ts`` of the delivery's first message). Links and media are never
        unfurled; plain messages (broadcasts) are posted with mrkdwn off.

        Raises:
            DeliveryError: a subclass saying what to do (see :func:`translate_error`);
                :class:`PlatformAuthFailed` at once, without a call, while the token is refused.
        """
        if self._workspaces is not None:
            return await self._send_installed(chat_id, message, thread=thread)
        if self.auth.error is not None:
            code = self.auth.error
            raise PlatformAuthFailed(f"{code}: Slack refused the bot token", code=code)
        try:
            response = await self._post(message, channel=chat_id, thread=thread, workspace="")
        except _ERRORS as exc:
            error = translate_error(exc)
            if isinstance(error, PlatformAuthFailed):
                self.auth.refused(error.code, needed=_needed_scopes(exc))
            raise error from None
        ts = response.get("ts")
        return str(ts) if ts else None

    async def _send_installed(
        self, chat_id: str, message: Outgoing, *, thread: str | None
    ) -> str | None:
        """Installed by OAuth: post with the token of the chat's workspace (``T123/C456``).

        A workspace that no longer has the app (uninstalled, its token refused) stops its
        own chats, never the others': they become inactive (:class:`ChatGone`) until the
        app is installed there again.
        """
        from bot.channels.slack_oauth import NO_INSTALLATION, UNREADABLE_REASON, split_address
        from bot.store.installations import TokenKeyError

        assert self._workspaces is not None
        parts = split_address(chat_id)
        if parts is None:
            raise ChatGone(
                f"{NO_INSTALLATION}: a chat id without its workspace", code=NO_INSTALLATION
            )
        team, channel = parts
        try:
            token = await self._workspaces.token(team_id=team)
        except TokenKeyError:
            # The operator is told (ERROR, /healthz); the chats wait for the key, not for
            # a reinstall: nothing is made inactive.
            raise TransientError(f"{UNREADABLE_REASON} ({team})") from None
        except SlackTokenRotationError:
            raise TransientError("token_refresh_failed: Slack refused the refresh") from None
        except _ERRORS as exc:
            raise TransientError(f"token_refresh: {translate_error(exc).reason}") from None
        if token is None:
            raise ChatGone(
                f"{NO_INSTALLATION}: the app is not installed in {team}", code=NO_INSTALLATION
            )
        try:
            response = await self._post(
                message, channel=channel, thread=thread, workspace=team, token=token
            )
        except _ERRORS as exc:
            error = translate_error(exc)
            if isinstance(error, PlatformAuthFailed):
                self._workspaces.forget(enterprise_id=None, team_id=team)
                if error.code == "token_expired":  # read (and refreshed) again next time
                    raise TransientError(error.code) from None
                if error.code == "missing_scope":
                    raise PermanentError(error.code) from None
                raise ChatGone(
                    f"{error.code}: Slack refused the workspace's token", code=error.code
                ) from None
            raise error from None
        ts = response.get("ts")
        return str(ts) if ts else None

    async def _post(
        self,
        message: Outgoing,
        *,
        channel: str,
        thread: str | None,
        workspace: str,
        token: str | None = None,
    ) -> Any:
        """``chat.postMessage``; where Slack refuses the blocks (``invalid_blocks``) of a
        message that has fallback blocks, the message again with those, and the workspace
        keeps to them (logged once per workspace). Nothing was posted by the refused call,
        so nothing is posted twice; a refusal of the fallback blocks too is raised."""
        extra: dict[str, Any] = {} if token is None else {"token": token}
        fallback = message.fallback_blocks
        if fallback and workspace in self.fallback_workspaces:
            return await self._client.chat_postMessage(
                **extra, **_post_args(message, channel=channel, thread=thread, blocks=fallback)
            )
        try:
            return await self._client.chat_postMessage(
                **extra, **_post_args(message, channel=channel, thread=thread)
            )
        except SlackApiError as exc:
            if not fallback or _error_code(exc) != REFUSED_BLOCKS:
                raise
        response = await self._client.chat_postMessage(
            **extra, **_post_args(message, channel=channel, thread=thread, blocks=fallback)
        )
        if workspace not in self.fallback_workspaces:
            self.fallback_workspaces.add(workspace)
            log.warning(
                "slack: %s refused the digest's container blocks (%s); its digests go out "
                "as sections from now on",
                f"workspace {workspace}" if workspace else "the workspace",
                REFUSED_BLOCKS,
                extra={"platform": "slack"},
            )
        return response


def _error_code(exc: SlackApiError) -> str:
    data = getattr(exc.response, "data", None)
    return str(data.get("error") or "") if isinstance(data, dict) else ""


def _post_args(
    message: Outgoing,
    *,
    channel: str,
    thread: str | None,
    blocks: tuple[dict[str, object], ...] | None = None,
) -> dict[str, Any]:
    return {
        "channel": channel,
        "text": message.text,
        "blocks": list(message.blocks if blocks is None else blocks) or None,
        "thread_ts": thread if message.in_thread and thread else None,
        "unfurl_links": False,
        "unfurl_media": False,
        "mrkdwn": not message.plain,
    }


# ---------------------------------------------------------------------------- inbound


class _ChatLocks:
    """One lock per conversation while someone uses it: two taps on a tag picker must not
    both read the filter before either writes it."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: Counter[str] = Counter()

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(chat_id, asyncio.Lock())
        self._users[chat_id] += 1
        try:
            async with lock:
                yield
        finally:
            self._users[chat_id] -= 1
            if self._users[chat_id] <= 0:
                del self._users[chat_id]
                self._locks.pop(chat_id, None)


def unescape(text: str) -> str:
    """Slack's escaping of ``&``, ``<`` and ``>`` in what a user typed, undone."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


class Where(Enum):
    """Where a command was typed, as far as posting there goes."""

    CHANNEL = "channel"  # a channel the bot can post to (a member, or public)
    APP_DM = "app_dm"  # the user's DM with the app (App Home messages tab)
    PEOPLE_DM = "people_dm"  # a DM between people or a group DM: the bot cannot post
    INVITE = "invite"  # a private channel the bot is not a member of


class _Answer(NamedTuple):
    """A command's reply (None: nothing to say), and whether the command failed."""

    reply: Reply | None
    failed: bool = False


@dataclass(frozen=True, slots=True)
class Conversation:
    where: Where
    chat_id: str  # where deliveries go: the channel's id, or the user's for the App DM


@dataclass(frozen=True, slots=True)
class _Workspace:
    """The workspace a request came from, for everything its handler calls."""

    team_id: str
    enterprise_id: str | None
    client: AsyncWebClient | None  # installed by OAuth: a client with its token
    addressed: bool  # installed by OAuth: chat ids name the team (T123/C456)


# Set by each handler (Bolt runs every listener in a task of its own).
_WORKSPACE: ContextVar[_Workspace | None] = ContextVar("slack_workspace", default=None)


class _Seen:
    """Keys seen within ``ttl`` seconds, at most ``limit`` of them (the oldest forgotten)."""

    def __init__(self, *, ttl: float, limit: int) -> None:
        self._ttl = ttl
        self._limit = limit
        self._seen: OrderedDict[str, float] = OrderedDict()

    def add(self, key: str, *, now: float) -> bool:
        """Remember ``key``; False when it was already seen within the window."""
        while self._seen:
            oldest, at = next(iter(self._seen.items()))
            if now - at <= self._ttl and len(self._seen) < self._limit:
                break
            del self._seen[oldest]
        if key in self._seen:
            return False
        self._seen[key] = now
        return True


def verify_signature(
    secret: str, *, body: bytes, timestamp: str | None, signature: str | None, now: float
) -> str | None:
    """Why a request does not carry Slack's signature of ``body``; None when it does.

    Slack signs ``v0:{timestamp}:{raw body}`` with HMAC-SHA256 and refuses to be believed
    after five minutes (https://api.slack.com/authentication/verifying-requests-from-slack).
    Checked on the raw bytes, before anything parses them; any header value is handled.
    """
    if not timestamp or not signature:
        return "unsigned"
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        return "malformed timestamp"
    if abs(now - int(timestamp)) > SIGNATURE_MAX_AGE_SECONDS:
        return "stale timestamp"
    base = f"{SIGNATURE_VERSION}:{timestamp}:".encode() + body
    expected = f"{SIGNATURE_VERSION}=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        return "bad signature"
    return None


def malformed_body(body: bytes, content_type: str | None) -> str | None:
    """Why a signed body cannot be an event, a command or an interaction; None when it can.

    Mirrors how Bolt reads a body (JSON when sent as JSON or starting with ``{``; otherwise a
    form, whose ``payload`` field is JSON), so that what passes here Bolt reads without error:
    UTF-8, and JSON that is an object nested at most :data:`MAX_JSON_DEPTH` deep.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    if not text:
        return "empty body"
    document: str | None = None
    if (content_type or "").split(";")[0].strip().lower() == "application/json" or text.startswith(
        "{"
    ):
        document = text
    elif "payload" in text:
        document = dict(parse_qsl(text, keep_blank_values=True)).get("payload")
    if document is None:
        return _odd_form(dict(parse_qsl(text, keep_blank_values=True)))
    try:
        parsed = json.loads(document)
    except RecursionError:
        return "JSON nested too deeply"
    except ValueError:
        return "not valid JSON"
    if not isinstance(parsed, dict):
        return "JSON is not an object"
    if _depth(parsed) > MAX_JSON_DEPTH:
        return "JSON nested too deeply"
    if not isinstance(parsed.get("type"), str):
        return "no type"  # every event and interaction payload names its type
    return _odd_field(parsed)


# A slash command's form names the command, who typed it and where
# (https://api.slack.com/interactivity/slash-commands#app_command_handling); Slack's
# certificate check is a form of its own (ssl_check=1), which Bolt answers.
_COMMAND_FIELDS = ("command", "user_id", "channel_id")


def _odd_form(form: dict[str, str]) -> str | None:
    """Why a form without ``payload`` is neither a slash command nor Slack's ssl_check."""
    if form.get("ssl_check"):
        return None
    missing = [name for name in _COMMAND_FIELDS if not form.get(name)]
    return f"a command without {', '.join(missing)}" if missing else None


_TEXT = (str,)
_OBJECT = (dict,)
_TEXT_OR_OBJECT = (str, dict)
# The fields Bolt reads to route a request, as Slack sends them (JSON null too, for those
# that may be text); Bolt reads them without checking, so any other type fails inside it.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "type": _TEXT,
    "event": _OBJECT,
    "actions": (list,),
    "authorizations": (list,),
    "view": _OBJECT,
    "container": _OBJECT,
    "message": _OBJECT,
    "previous_message": _OBJECT,
    "item": _OBJECT,
    "function_data": _OBJECT,
    "assistant_thread": _OBJECT,
    "tokens": _OBJECT,
    "team": _TEXT_OR_OBJECT,
    "user": _TEXT_OR_OBJECT,
    "channel": _TEXT_OR_OBJECT,
    "enterprise": _TEXT_OR_OBJECT,
    "id": _TEXT,
    "event_id": _TEXT,
    "team_id": _TEXT,
    "user_id": _TEXT,
    "channel_id": _TEXT,
    "enterprise_id": _TEXT,
    "context_team_id": _TEXT,
    "context_enterprise_id": _TEXT,
    "api_app_id": _TEXT,
    "command": _TEXT,
    "callback_id": _TEXT,
    "action_id": _TEXT,
    "block_id": _TEXT,
    "value": _TEXT,
    "response_url": _TEXT,
    "trigger_id": _TEXT,
    "thread_ts": _TEXT,
    "bot_access_token": _TEXT,
    "function_execution_id": _TEXT,
    "is_enterprise_install": (bool,),
    "is_ext_shared_channel": (bool,),
}
# The objects whose fields Bolt reads, beside the body itself.
_ROUTED_OBJECTS = frozenset(
    {"event", "message", "previous_message", "item", "container", "view", "team", "user",
     "channel", "enterprise", "function_data", "assistant_thread"}
)  # fmt: skip


def _odd_field(body: dict[str, Any]) -> str | None:
    """The first routing field of a type Slack never sends, e.g. ``event`` a string."""
    actions = body.get("actions")
    if actions is not None and not (isinstance(actions, list) and actions):
        return "actions is not a list of actions"  # Bolt reads the first one
    if body.get("type") == "block_actions" and not all(
        isinstance(a, dict) and isinstance(a.get("action_id"), str) for a in actions or ()
    ):
        return "an action has no action_id"
    objects: list[dict[str, Any]] = [body]
    seen = 0
    while objects and seen < 1000:
        current = objects.pop()
        seen += 1
        for key, value in current.items():
            types = _FIELD_TYPES.get(key)
            if types is None or (value is None and str in types):  # null ids: none given
                continue
            if not isinstance(value, types):
                return f"{key} is not {' or '.join(t.__name__ for t in types)}"
            if isinstance(value, list):  # actions, authorizations
                if not all(isinstance(item, dict) for item in value):
                    return f"{key} is not a list of objects"
                objects.extend(value)
            elif key in _ROUTED_OBJECTS and isinstance(value, dict):
                objects.append(value)
    return None


def _depth(value: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


class SlackChannel:
    """Slash commands and button presses -> the command core -> ephemeral replies.

    HTTP mode (``SLACK_SIGNING_SECRET``): the web server hands each ``POST /slack/events``
    to :meth:`handle_request`; Bolt verifies its signature and age (an unsigned, badly
    signed or over-5-minutes-old request gets 401 and reaches no handler). Socket Mode
    (``SLACK_APP_TOKEN``): :meth:`start` connects, and :meth:`handle_request` answers 404.

    ``/trend TEXT`` runs ``TEXT`` as a command of the chat the command was typed in: the
    channel (a group chat) or, in a direct message with the bot, the user's own chat.
    In a Slack channel anyone who can type there may change its subscription (the caller's
    ``can_manage`` is None): Slack has no cheap equivalent of a Telegram group's
    administrators, a channel's members already chose to be there, and who may use the
    app at all is the workspace's setting.

    ``latest``, ``tags`` and ``digest`` are acknowledged at once with nothing and answered
    through the ``response_url``; the other commands are answered in the acknowledgement,
    unless their reply is not ready within ``ack_budget`` seconds, when they go the
    same way. A button's value is the core's action; the reply replaces the message that
    held the button (the tag picker updates in place). When the delivery engine paused the
    chat because the bot is not a member of the channel, every reply ends with a hint to
    invite it. A failure in a handler is logged and answered with ``cmd.error``.

    Bolt's ``AsyncApp`` never calls ``auth.test`` when it is built (the synchronous
    ``App``'s ``token_verification_enabled`` has no async counterpart); it calls it on the
    first request and keeps the answer. :meth:`start` calls it too, to log who the bot is.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        core: CommandCore,
        client: AsyncWebClient,
        auth: SlackAuth | None = None,
        workspaces: Workspaces | None = None,
        state_store: StateStore | None = None,
        ack_budget: float = ACK_BUDGET_SECONDS,
        pacing: Pacing | None = None,
    ) -> None:
        self._settings = settings
        self._ack_budget = ack_budget
        # Replies that follow the acknowledgement share the sender's pacing when given it.
        self._replies = Replies(
            pacing or Pacing(settings.slack_workspace_rate_per_second),
            platform=Platform.SLACK.value,
        )
        self._reply_interval = 1.0 / settings.slack_rate_per_second
        self.auth = auth or SlackAuth(client)
        self._workspaces = workspaces
        # Workspaces (pace_key; "" for the one of a bot token) that refused a message's
        # blocks and took its fallback blocks: they get the fallback blocks from then on.
        self.fallback_workspaces: set[str] = set()
        self._core = core
        self._client = client
        self._prefix = f"{settings.slack_command} "
        self._locks = _ChatLocks()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._socket: AsyncSocketModeHandler | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._stopping = False
        self._running = False
        self._bot_name: str | None = None
        self._bot_user_id: str | None = None
        self._requests = _Seen(ttl=SIGNATURE_MAX_AGE_SECONDS, limit=MAX_REMEMBERED_REQUESTS)
        self._events = _Seen(ttl=EVENT_RETRY_WINDOW_SECONDS, limit=MAX_REMEMBERED_EVENTS)
        self._conversations: OrderedDict[str, Conversation] = OrderedDict()
        self._scope_warned: set[str] = set()
        secret = settings.slack_signing_secret
        self._http_mode = secret is not None
        if workspaces is not None:
            assert state_store is not None
            self.app = self._oauth_app(client, workspaces=workspaces, state_store=state_store)
        else:
            self.app = AsyncApp(
                name="trendbot",
                client=client,
                signing_secret=secret.get_secret_value() if secret is not None else "",
                request_verification_enabled=True,
                process_before_response=False,
            )
        self.app.middleware(self._once_per_event)
        self.app.command(settings.slack_command)(self._on_command)
        self.app.action(ACTION_ID_RE)(self._on_action)
        self.app.event("app_uninstalled")(self._on_uninstalled)
        self.app.event("tokens_revoked")(self._on_tokens_revoked)
        self.app.event("member_joined_channel")(self._on_member_joined)
        for name in ("channel_archive", "group_archive"):
            self.app.event(name)(self._on_archived)
        for name in ("channel_deleted", "group_deleted"):
            self.app.event(name)(self._on_deleted)
        for name in ("channel_unarchive", "group_unarchive"):
            self.app.event(name)(self._on_unarchived)

    def _oauth_app(
        self, client: AsyncWebClient, *, workspaces: Workspaces, state_store: StateStore
    ) -> AsyncApp:
        """Bolt's app for many workspaces: each request authorized with its workspace's
        installation, the install pages served by :class:`~bot.channels.slack_oauth.InstallFlow`."""
        from bot.channels import slack_oauth

        settings = self._settings
        secret = settings.slack_signing_secret
        assert secret is not None  # required with SLACK_CLIENT_ID
        redirect = (
            f"{settings.public_base_url}{slack_oauth.REDIRECT_PATH}"
            if settings.public_base_url
            else None
        )
        oauth = slack_oauth.oauth_settings(
            workspaces=workspaces,
            state_store=state_store,
            scopes=sorted(BOT_SCOPES),
            redirect_uri=redirect,
            default_lang=settings.default_language,
        )
        flow = slack_oauth.InstallFlow(
            settings=oauth, client=client, default_lang=settings.default_language
        )
        not_installed = "\n".join(t(lang, "slack.oauth.not_installed") for lang in LANGUAGES)
        return AsyncApp(
            name="trendbot",
            client=client,
            signing_secret=secret.get_secret_value(),
            oauth_flow=flow,
            request_verification_enabled=True,
            process_before_response=False,
            before_authorize=self._reachable,
            user_facing_authorize_error_message=not_installed,
        )

    async def _reachable(
        self, req: AsyncBoltRequest, next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        """Bolt middleware before authorization (installed by OAuth): a command or button of
        a workspace whose stored token no key of ``SLACK_TOKEN_KEY`` opens is told that the
        bot cannot reach the workspace and that its operator knows (logged at ERROR, shown
        in ``/healthz``), not that the app is not installed. Any other request goes on."""
        from bot.store.installations import TokenKeyError

        context = req.context
        if self._workspaces is None or not context.team_id or context.response_url is None:
            await next()
            return None
        try:
            await self._workspaces.token(
                team_id=context.team_id, enterprise_id=context.enterprise_id
            )
        except TokenKeyError:
            text = "\n".join(t(lang, "slack.oauth.unreachable") for lang in LANGUAGES)
            try:
                await context.respond(text)  # type: ignore[misc]
            except _ERRORS as exc:
                log.warning(
                    "slack: could not answer through response_url: %s",
                    translate_error(exc).reason,
                    extra={"platform": "slack"},
                )
            return BoltResponse(status=200, body="")
        except Exception:  # noqa: S110 - authorization asks again and answers for itself
            pass
        await next()
        return None

    @property
    def oauth(self) -> bool:
        """Installed by OAuth to many workspaces (``SLACK_CLIENT_ID``)."""
        return self._workspaces is not None

    async def handle_install(self, request: web.Request) -> web.StreamResponse:
        """``GET /slack/install`` (the "Add to Slack" page, with a new state) and
        ``GET /slack/oauth_redirect`` (Slack's answer: the state checked and used up, the
        code exchanged for the workspace's token). 404 without ``SLACK_CLIENT_ID``; a page
        saying what went wrong, never a traceback."""
        flow = self.app.oauth_flow
        if flow is None:
            return web.Response(status=404, text="not found")
        if self._stopping:
            return web.Response(status=503, text="stopping")
        if len(request.query_string) > MAX_OAUTH_QUERY_CHARS:
            return web.Response(status=400, text="query too long")
        bolt_request = AsyncBoltRequest(
            body="",
            query=request.query_string,
            headers=request.headers,  # type: ignore[arg-type]
        )
        try:
            if request.path == flow.redirect_uri_path:
                response = await flow.handle_callback(bolt_request)
            else:
                response = await flow.handle_installation(bolt_request)
        except Exception as exc:  # Slack did not answer, or the store failed: never a 500
            from bot.channels.slack_oauth import failure_page, page_lang

            log.warning(
                "slack: an install did not complete: %s",
                translate_error(exc).reason,
                extra={"platform": "slack"},
            )
            lang = page_lang(bolt_request, self._settings.default_language)
            return web.Response(
                status=503, text=failure_page(lang), content_type="text/html", charset="utf-8"
            )
        return await to_aiohttp_response(response)

    def _enter(self, context: Mapping[str, Any], client: AsyncWebClient | None) -> None:
        """Remember the request's workspace for what its handler calls, and the handler's
        task, which Bolt starts on its own after acknowledging: :meth:`stop` waits for it
        like for the channel's own, so that none is cut off in the middle of its work."""
        self._track(asyncio.current_task())
        team = str(context.get("team_id") or "")
        if not team:
            _WORKSPACE.set(None)
            return
        enterprise = context.get("enterprise_id")
        _WORKSPACE.set(
            _Workspace(
                team_id=team,
                enterprise_id=str(enterprise) if enterprise else None,
                client=client if self.oauth else None,
                addressed=self.oauth,
            )
        )

    def _address(self, conversation: str) -> str:
        """The chat id of a conversation of the current workspace (``T123/C456`` when
        installed by OAuth; the conversation's own id with a bot token)."""
        current = _WORKSPACE.get()
        if current is None or not current.addressed or not conversation:
            return conversation
        return f"{current.team_id}/{conversation}"

    def _api(self) -> AsyncWebClient:
        """The client for the current workspace's calls."""
        current = _WORKSPACE.get()
        return current.client if current is not None and current.client else self._client

    @property
    def running(self) -> bool:
        """Between :meth:`start` and :meth:`stop` (for ``/healthz``)."""
        return self._running

    @property
    def bot_name(self) -> str | None:
        """The bot user's name, known after :meth:`start` (None when auth.test failed)."""
        return self._bot_name

    # Lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Check the bot token and log the bot's identity (auth.test); in Socket Mode, connect.

        An auth.test that Slack could not answer is logged, not raised: sends report their
        own errors, and Bolt asks again on the first request. In Socket Mode the app-level
        token is checked (apps.connections.open) before the connection is opened in the
        background; the client reconnects by itself after that.

        Raises:
            ConfigError: Slack refused ``SLACK_BOT_TOKEN``, or in Socket Mode
                ``SLACK_APP_TOKEN``.
            DeliveryError: Socket Mode, and Slack could not be reached (``TransientError``).
        """
        self._stopping = False
        if self.oauth:  # no token of its own; each workspace's is checked as it is used
            assert self._workspaces is not None
            self._running = True
            log.info("slack: serving the workspaces that installed the app (OAuth)")
            # The stored tokens move to the first key of SLACK_TOKEN_KEY in the background:
            # start-up and /healthz do not wait for it.
            self._track(asyncio.create_task(self._workspaces.rotate_keys()))
            return
        try:
            identity = await self._client.auth_test()
        except _ERRORS as exc:
            refused = translate_error(exc)
            if isinstance(refused, PlatformAuthFailed):
                raise ConfigError(
                    "SLACK_BOT_TOKEN",
                    f"was refused by Slack ({refused.code}); check the Bot User OAuth Token "
                    "(xoxb-) of the installed app",
                ) from None
            log.warning(
                "slack: could not check the bot token (%s); commands will retry",
                translate_error(exc).reason,
                extra={"platform": "slack"},
            )
        else:
            self._bot_name = str(identity.get("user") or "") or None
            self._bot_user_id = str(identity.get("user_id") or "") or None
            log.info(
                "slack: connected as @%s (%s) in %s",
                self._bot_name,
                self._bot_user_id,
                identity.get("team"),
                extra={"platform": "slack"},
            )
        app_token = self._settings.slack_app_token
        if app_token is None:
            self._running = True
            return
        token = app_token.get_secret_value()
        # slack-sdk's connect retries a failed connection forever, every 10 seconds; ask for
        # a connection URL first, so that a rejected or unreachable token fails start-up.
        try:
            await self._client.apps_connections_open(app_token=token)
        except _ERRORS as exc:
            error = translate_error(exc)
            if error.reason.split(":", 1)[0] in _APP_TOKEN_REJECTED:
                raise ConfigError(
                    "SLACK_APP_TOKEN", "was rejected by Slack; check the app-level token (xapp-)"
                ) from None
            raise TransientError(f"socket mode: {error.reason}") from None
        self._socket = AsyncSocketModeHandler(self.app, token)
        # Connecting (and later reconnecting) is the client's own loop; start does not wait.
        self._connecting = asyncio.create_task(self._connect(self._socket))
        self._running = True

    async def _connect(self, socket: AsyncSocketModeHandler) -> None:
        await socket.connect_async()  # type: ignore[no-untyped-call]
        if self._socket is socket:
            log.info("slack: socket mode connected", extra={"platform": "slack"})

    async def stop(self) -> None:
        """Stop taking requests; let the commands being answered finish, briefly."""
        self._stopping = True
        self._running = False
        await self._close_socket()
        await self.auth.close()
        current = asyncio.current_task()
        pending = {task for task in self._tasks if task is not current and not task.done()}
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=SHUTDOWN_GRACE_SECONDS)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    async def _close_socket(self) -> None:
        socket, self._socket = self._socket, None
        connecting, self._connecting = self._connecting, None
        if connecting is not None and not connecting.done():
            connecting.cancel()
            await asyncio.gather(connecting, return_exceptions=True)
        if socket is None:
            return
        try:
            await socket.close_async()  # type: ignore[no-untyped-call]
        except Exception as exc:  # closing must not fail the shutdown
            log.warning("slack: closing socket mode failed: %s", type(exc).__name__)

    async def handle_request(self, request: web.Request) -> web.StreamResponse:
        """One ``POST /slack/events`` request, answered by Bolt once it is known to be Slack's.

        404 in Socket Mode (no signing secret: no request could be verified); 503 while
        stopping. The signature is checked on the raw body before anything parses it: 401
        for an unsigned, badly signed or stale request, whatever its body; 400 for a signed
        body that is not UTF-8 or whose JSON is not an object or nests too deeply; each with
        one WARNING line. A signed request seen before (a replay within its five minutes) is
        answered 200 and not acted on again; the signatures are remembered in this process
        only. Otherwise Bolt's answer: the acknowledgement of a command, button or event, the
        challenge of a url_verification, 404 for anything no handler here listens to.
        """
        if not self._http_mode:
            return web.Response(status=404, text="not found")
        if self._stopping:
            return web.Response(status=503, text="stopping")
        received = time.monotonic()
        body = await request.read()
        secret = self._settings.slack_signing_secret
        assert secret is not None  # HTTP mode
        signature = request.headers.get("X-Slack-Signature")
        refused = verify_signature(
            secret.get_secret_value(),
            body=body,
            timestamp=request.headers.get("X-Slack-Request-Timestamp"),
            signature=signature,
            now=time.time(),
        )
        if refused is not None:
            log.warning("slack: request refused (401): %s", refused, extra={"platform": "slack"})
            return web.Response(status=401, text="unauthorized")
        malformed = malformed_body(body, request.headers.get("Content-Type"))
        if malformed is not None:
            log.warning(
                "slack: signed request refused (400): %s", malformed, extra={"platform": "slack"}
            )
            return web.Response(status=400, text="malformed request")
        assert signature is not None  # verified
        if not self._requests.add(signature, now=time.time()):
            log.info("slack: a request seen before was answered, not acted on again")
            return web.Response(status=200)
        # Bolt reads the fields it routes on without checking their types: a signed body of
        # a shape Slack never sends (an event that is a string, a channel that is a number)
        # raises while the request is built, or makes the dispatch answer 500. Listeners run
        # after the acknowledgement, so a 5xx here always means such a body: malformed.
        try:
            bolt_request = AsyncBoltRequest(
                body=body.decode("utf-8"),
                query=request.query_string,
                headers=request.headers,  # type: ignore[arg-type]
            )
        except Exception as exc:
            return _unreadable(type(exc).__name__)
        bolt_request.context["trendbot_received"] = received
        bolt_response = await self.app.async_dispatch(bolt_request)
        if bolt_response.status >= 500:
            return _unreadable(f"status {bolt_response.status}")
        return await to_aiohttp_response(bolt_response)

    # Handlers (Bolt passes arguments by name) -------------------------------------------

    async def _on_command(
        self,
        ack: AsyncAck,
        command: dict[str, Any],
        respond: AsyncRespond,
        context: Mapping[str, Any],
        client: AsyncWebClient,
    ) -> None:
        self._enter(context, client)  # and tracks this handler's task
        text = unescape(str(command.get("text") or "")).strip() or "help"
        name, _ = split_command(text)
        user_id = str(command.get("user_id") or "")
        channel_name = command.get("channel_name")
        conversation, refusal = await self._where_from(
            channel_id=str(command.get("channel_id") or ""),
            channel_name=channel_name,
            user_id=user_id,
        )
        if refusal is not None and not (conversation.where == Where.INVITE and name == "subscribe"):
            await ack(**_ephemeral(refusal))
            return
        chat_id = conversation.chat_id
        if refusal is not None:  # a channel all the same: its chat is the channel's
            conversation = replace(conversation, where=Where.CHANNEL)
        caller = await self._caller(conversation, channel_name=channel_name, user_id=user_id)
        if refusal is not None:  # remembered until the app is invited
            await ack()
            reply = (await self._answer(caller, self._until_invited(text))).reply
            if reply is not None:
                await self._respond(respond, reply, chat_id=chat_id)
            return

        def run(c: Caller) -> Awaitable[Reply | None]:
            return self._core.handle(c, text, prefix=self._prefix)

        work = asyncio.ensure_future(self._answer(caller, run))
        self._track(work)
        # A command that reads many pages or queues work (``slow`` in its declaration) is
        # always acknowledged at once and answered later.
        declared = registry.find(name)
        if declared is None or not declared.slow:
            budget = self._ack_budget - (time.monotonic() - _received(context))
            done, _ = await asyncio.wait({work}, timeout=max(budget, 0.0))
            if done:
                reply = work.result().reply
                if reply is None:
                    await ack()
                else:
                    await ack(**_ephemeral(reply))
                    await self._send_chart(
                        reply, conversation, channel_id=command.get("channel_id")
                    )
                return
        await ack()
        reply = (await work).reply
        if reply is not None:
            await self._respond(respond, reply, chat_id=chat_id)
            await self._send_chart(reply, conversation, channel_id=command.get("channel_id"))

    async def _send_chart(
        self, reply: Reply, conversation: Conversation, *, channel_id: Any
    ) -> None:
        """A reply's chart, after its text, where it stays as private as the text: in the
        user's DM with the app, uploaded there (``files_upload_v2``:
        files.getUploadURLExternal, the upload, files.completeUploadExternal with the DM as
        ``channel_id``) with the alt text as its comment.

        Elsewhere the text is the whole answer. An ephemeral message cannot carry a file,
        nor an image block of one only the app can see (a file uploaded without a channel
        is private to its uploader, and ``slack_file`` wants the viewer to have access);
        sharing it into a channel would show everyone there what the command answered to
        one person. A chart that cannot be drawn or uploaded (no ``files:write`` scope,
        uploads disabled in the workspace) is logged, once, and nothing else happens."""
        chart = reply.chart
        if chart is None or conversation.where != Where.APP_DM or not channel_id:
            return
        png = await charts.picture(chart)
        if png is None:
            return
        try:
            api_client = self._api()
            await api_client.files_upload_v2(
                content=png,
                filename=CHART_FILENAME,
                title=_chart_title(chart),
                alt_txt=chart.alt[:MAX_ALT_TEXT_CHARS],
                channel=str(channel_id),
                initial_comment=chart.alt,
            )
        except _ERRORS as exc:
            log.warning(
                "slack: could not upload a chart: %s",
                translate_error(exc).reason,
                extra=_chat_ctx(conversation.chat_id),
            )

    async def _on_action(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        respond: AsyncRespond,
        context: Mapping[str, Any],
        client: AsyncWebClient,
    ) -> None:
        self._enter(context, client)  # and tracks this handler's task
        await ack()
        channel = body.get("channel") or {}
        container = body.get("container") or {}
        user = body.get("user") or {}
        user_id = str(user.get("id") or "")
        conversation, refusal = await self._where_from(
            channel_id=str(channel.get("id") or container.get("channel_id") or ""),
            channel_name=channel.get("name"),
            user_id=user_id,
        )
        if refusal is not None:
            await self._respond(respond, refusal, chat_id=conversation.chat_id)
            return
        value = str(action.get("value") or "")
        caller = await self._caller(conversation, channel_name=channel.get("name"), user_id=user_id)
        if value.startswith(toggle.TOGGLE):
            channel_id = str(channel.get("id") or container.get("channel_id") or "")
            await self._on_toggle(caller, value, channel_id=channel_id, respond=respond)
            return

        toasts: list[Toast] = []

        async def run(c: Caller) -> Reply | None:
            answer = await self._core.handle_action(c, value, prefix=self._prefix)
            if isinstance(answer, Toast):  # a vote: Slack has no toast; a note to the presser
                toasts.append(answer)
                return Reply(answer.lang, answer.text)
            return answer

        answer = await self._answer(caller, run)
        if answer.reply is not None:
            # A failure leaves the buttons as they were and tells the caller beside them.
            keep = answer.failed or bool(toasts)
            await self._respond(
                respond, answer.reply, chat_id=conversation.chat_id, replace_original=not keep
            )

    async def _on_toggle(
        self, caller: Caller, value: str, *, channel_id: str, respond: AsyncRespond
    ) -> None:
        """The language toggle: the digest in the other language for the one who pressed
        only (``chat.postEphemeral``, https://api.slack.com/methods/chat.postEphemeral):
        the others in the channel keep theirs. Where Slack refuses the container blocks,
        the same messages in sections."""
        toggled: list[Toggled] = []

        async def run(c: Caller) -> Reply | None:
            answer = await self._core.toggle_language(c, value)
            if isinstance(answer, Reply):
                return answer
            toggled.append(answer)
            return None

        answer = await self._answer(caller, run)
        if answer.reply is not None or not toggled:
            if answer.reply is not None:
                await self._respond(respond, answer.reply, chat_id=caller.chat_id)
            return
        done = toggled[0]
        back = toggle.button(toggle.other(done.digest.lang), done.row_id)
        parts = toggle.with_toggle(
            Platform.SLACK, render.digest_messages(Platform.SLACK, done.digest), back
        )
        client = self._api()
        for part in parts:
            try:
                try:
                    await client.chat_postEphemeral(
                        channel=channel_id, user=caller.user_id, text=part.text, blocks=part.blocks
                    )
                except SlackApiError as exc:
                    if not part.fallback_blocks or _error_code(exc) != REFUSED_BLOCKS:
                        raise
                    await client.chat_postEphemeral(
                        channel=channel_id,
                        user=caller.user_id,
                        text=part.text,
                        blocks=part.fallback_blocks,
                    )
            except _ERRORS as exc:
                log.warning(
                    "slack: could not post a toggled digest: %s",
                    translate_error(exc).reason,
                    extra={"chat": f"slack:{caller.chat_id}", "platform": "slack"},
                )
                return

    async def _once_per_event(
        self, body: dict[str, Any], next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        """Bolt middleware: an Events API event is acted on once, however often Slack
        delivers it (a retry, ``X-Slack-Retry-Num``, carries the same ``event_id``); over
        HTTP and Socket Mode alike."""
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        seen = isinstance(event_id, str) and not self._events.add(event_id, now=time.monotonic())
        if seen:
            log.info("slack: an event delivered again was acted on once")
            return BoltResponse(status=200, body="")
        await next()
        return None

    # Events -----------------------------------------------------------------------------

    async def _on_uninstalled(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/app_uninstalled: the token no longer works. Installed
        by OAuth: that workspace's tokens are deleted and its chats inactive; the other
        workspaces go on."""
        if self.oauth:
            await self._removed(context, reason="app_uninstalled")
            return
        self.auth.refused("app_uninstalled")

    async def _on_tokens_revoked(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/tokens_revoked: stops Slack (or, installed by OAuth,
        that workspace) when a bot token is among them (the app uses no user token)."""
        tokens = event.get("tokens") if isinstance(event.get("tokens"), dict) else {}
        if not (tokens and tokens.get("bot")):
            return
        if self.oauth:
            await self._removed(context, reason="tokens_revoked")
            return
        self.auth.refused("tokens_revoked")

    async def _removed(self, context: Mapping[str, Any], *, reason: str) -> None:
        assert self._workspaces is not None
        team = str(context.get("team_id") or "") or None
        enterprise = str(context.get("enterprise_id") or "") or None
        if context.get("is_enterprise_install"):
            team = None
        if team is None and enterprise is None:
            return
        stopped = await self._workspaces.remove(
            enterprise_id=enterprise, team_id=team, reason=reason
        )
        self._conversations.clear()
        log.info(
            "slack: %s in %s: its tokens are deleted, %d chats inactive",
            reason,
            team or enterprise,
            stopped,
            extra={"platform": "slack"},
        )

    def _until_invited(self, text: str) -> Callable[[Caller], Awaitable[Reply | None]]:
        """A ``subscribe`` in a private channel the app is not a member of: the chat takes
        it and waits, inactive, for the app's invitation (:meth:`_on_member_joined`)."""

        async def run(caller: Caller) -> Reply | None:
            reply = await self._core.handle(caller, text, prefix=self._prefix)
            status = await self._status(caller.chat_id)
            if reply is None or status is None:  # nothing was taken: nothing to remember
                return reply
            await self._core.chat_gone(
                platform=Platform.SLACK,
                chat_id=caller.chat_id,
                reason=AWAITING_INVITE,
                code=AWAITING_INVITE,
            )
            key = (
                "slack.starts_when_invited"
                if self._bot_name
                else "slack.starts_when_invited_unnamed"
            )
            note = t(reply.lang, key, bot=self._bot_name or "", days=AWAITING_INVITE_DAYS)
            return replace(reply, text=f"{reply.text}\n\n{note}")

        return run

    async def _on_member_joined(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/member_joined_channel: when the bot itself joined, a
        chat of the channel that waited for an invite becomes active (from now on)."""
        self._enter(context, None)
        bot_user = context.get("bot_user_id") if self.oauth else None
        bot_user = bot_user or self._bot_user_id or context.get("bot_user_id")
        channel = self._address(str(event.get("channel") or ""))
        if not channel or not bot_user or event.get("user") != bot_user:
            return
        # A chat paused by its members, or gone for another reason, stays as it is.
        if await self._core.chat_reachable(
            platform=Platform.SLACK, chat_id=channel, codes=INVITE_CODES
        ):
            log.info("slack: invited to the channel; deliveries resume", extra=_chat_ctx(channel))
        elif await self._core.chat_reachable(
            platform=Platform.SLACK,
            chat_id=channel,
            codes=frozenset({AWAITING_INVITE}),
            since=utcnow() - dt.timedelta(days=AWAITING_INVITE_DAYS),
        ):
            log.info(
                "slack: invited to the channel; its subscription starts", extra=_chat_ctx(channel)
            )

    async def _on_archived(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/channel_archive, .../group_archive."""
        self._enter(context, None)
        await self._stopped(self._address(str(event.get("channel") or "")), reason=ARCHIVED_REASON)

    async def _on_deleted(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/channel_deleted, .../group_deleted."""
        self._enter(context, None)
        await self._stopped(self._address(str(event.get("channel") or "")), reason=DELETED_REASON)

    async def _on_unarchived(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/channel_unarchive, .../group_unarchive: a chat made
        inactive by the archive is active again; what was published meanwhile is skipped."""
        self._enter(context, None)
        channel = self._address(str(event.get("channel") or ""))
        if await self._core.chat_reachable(
            platform=Platform.SLACK,
            chat_id=channel,
            codes=frozenset({ARCHIVED_REASON}),
            states=frozenset({ChatState.INACTIVE}),
        ):
            log.info("slack: channel unarchived; deliveries resume", extra=_chat_ctx(channel))

    async def _stopped(self, channel: str, *, reason: str) -> None:
        """The channel can take no more messages: its chat is inactive, its queue failed."""
        if not channel:
            return
        if await self._core.chat_gone(
            platform=Platform.SLACK, chat_id=channel, reason=reason, code=reason
        ):
            self._conversations.pop(channel, None)
            log.info("slack: chat now inactive: %s", reason, extra=_chat_ctx(channel))

    # Helpers ----------------------------------------------------------------------------

    def _track(self, task: asyncio.Task[Any] | asyncio.Future[Any] | None) -> None:
        if isinstance(task, asyncio.Task):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _caller(
        self, conversation: Conversation, *, channel_name: Any, user_id: str
    ) -> Caller:
        name = str(channel_name) if channel_name else None
        group = conversation.where == Where.CHANNEL
        current = _WORKSPACE.get()
        installer = None
        if self._workspaces is not None and current is not None:
            installer = await self._workspaces.installer(team_id=current.team_id)
        return Caller(
            platform=Platform.SLACK,
            chat_id=conversation.chat_id,
            user_id=user_id,
            chat_kind=ChatKind.GROUP if group else ChatKind.PRIVATE,
            chat_title=f"#{name}" if group and name else None,
            can_manage=None,
            workspace=current.team_id if current is not None else None,
            workspace_admin=bool(installer) and installer == user_id,
        )

    async def _conversation(
        self, *, channel_id: str, channel_name: Any, user_id: str
    ) -> Conversation:
        """Where a command was typed, from conversations.info, once per conversation.

        The bot sees only the conversations it may post to: a private channel it is not in,
        a DM between people and a group DM answer ``channel_not_found``
        (https://api.slack.com/methods/conversations.info), told apart by the conversation's
        id and name. In the DM with the app the chat is the user's, delivered to their id.
        Needs channels:read, groups:read and im:read; without one (``missing_scope``, logged
        once naming it) or when Slack does not answer, the id and name decide.
        """
        key = self._address(channel_id)
        known = self._conversations.get(key)
        if known is not None:
            # A chat whose sends stopped (the bot removed, the channel archived) is looked
            # at again: the command may be the user's answer to that.
            status = await self._status(known.chat_id)
            if status is None or status.state != ChatState.INACTIVE:
                self._conversations.move_to_end(key)
                return known
            del self._conversations[key]
        conversation = await self._look_up(channel_id, channel_name=channel_name, user_id=user_id)
        conversation = replace(conversation, chat_id=self._address(conversation.chat_id))
        if conversation.where == Where.APP_DM:
            await self._move_dm(key, conversation.chat_id)
        if conversation.where in (Where.CHANNEL, Where.APP_DM):
            self._conversations[key] = conversation
            while len(self._conversations) > MAX_REMEMBERED_CONVERSATIONS:
                self._conversations.popitem(last=False)
        return conversation

    async def _where_from(
        self, *, channel_id: str, channel_name: Any, user_id: str
    ) -> tuple[Conversation, Reply | None]:
        """Where a command or a button press came from (:meth:`_conversation`), and the
        refusal to answer there instead where subscriptions do not work (:meth:`_refusal`)."""
        conversation = await self._conversation(
            channel_id=channel_id, channel_name=channel_name, user_id=user_id
        )
        if conversation.where in (Where.PEOPLE_DM, Where.INVITE):
            return conversation, await self._refusal(conversation, user_id=user_id)
        return conversation, None

    async def _look_up(self, channel_id: str, *, channel_name: Any, user_id: str) -> Conversation:
        """Where a command was typed, in the conversation ids of the workspace."""
        name = str(channel_name or "")
        guess = _guess(channel_id, name, user_id=user_id)
        api_client = self._api()
        try:
            async with asyncio.timeout(CONVERSATION_TIMEOUT_SECONDS):
                response = await api_client.conversations_info(channel=channel_id)
        except SlackApiError as exc:
            data = getattr(exc.response, "data", None)
            code = str(data.get("error") or "") if isinstance(data, dict) else ""
            if code == CHANNEL_NOT_FOUND:
                where = Where.PEOPLE_DM if guess.where != Where.CHANNEL else Where.INVITE
                return Conversation(where, channel_id)
            if code == "missing_scope" and isinstance(data, dict):
                needed = str(data.get("needed") or "")
                if needed not in self._scope_warned:
                    self._scope_warned.add(needed)
                    log.warning(
                        "slack: conversations.info needs the %s scope, which the app lacks; "
                        "add it (deploy/slack-app-manifest.yml) so the bot can tell where it "
                        "can post",
                        needed[:100],
                        extra={"platform": "slack"},
                    )
            else:
                log.info("slack: conversations.info failed: %s", translate_error(exc).reason)
            return guess
        except _ERRORS as exc:
            log.info("slack: conversations.info failed: %s", translate_error(exc).reason)
            return guess
        info = response.get("channel") or {}
        if not isinstance(info, dict):
            return guess
        if info.get("is_im"):
            return Conversation(Where.APP_DM, str(info.get("user") or user_id))
        if info.get("is_mpim"):
            return Conversation(Where.PEOPLE_DM, channel_id)
        if info.get("is_private") and not info.get("is_member"):
            return Conversation(Where.INVITE, channel_id)
        return Conversation(Where.CHANNEL, channel_id)

    async def _move_dm(self, dm_channel: str, user_id: str) -> None:
        """A DM chat kept under its conversation id (``D…``) moves to the user's id, once."""
        if not user_id or dm_channel == user_id:
            return
        await self._core.chat_readdressed(
            platform=Platform.SLACK, old_chat_id=dm_channel, new_chat_id=user_id
        )

    async def _refusal(self, conversation: Conversation, *, user_id: str) -> Reply:
        """Where subscriptions work (a DM between people, a group DM), or how to invite the
        app (a private channel without it); in the user's Slack language."""
        locale = await self._user_locale(user_id)
        lang = negotiate(locale, default=self._settings.default_language)
        if conversation.where == Where.PEOPLE_DM:
            return Reply(lang, t(lang, "slack.where_subscriptions_work", p=self._prefix))
        if self._bot_name:
            return Reply(lang, t(lang, "slack.invite_first", bot=self._bot_name, p=self._prefix))
        return Reply(lang, t(lang, "slack.invite_first_unnamed", p=self._prefix))

    async def _answer(
        self, caller: Caller, run: Callable[[Caller], Awaitable[Reply | None]]
    ) -> _Answer:
        """Run a command for ``caller`` under the chat's lock; never raises: a failure is
        logged and answered with ``cmd.error``."""
        lang: str = self._settings.default_language
        try:
            async with self._locks.hold(caller.chat_id):
                before = await self._status(caller.chat_id)
                if before is not None:
                    lang = before.lang
                else:
                    locale, zone = await self._user_profile(caller.user_id)
                    caller = replace(caller, language_code=locale, timezone=zone)
                    lang = negotiate(locale, default=lang)
                reply = await run(caller)
                # A chat learns its workspace (and organisation) the first time it is used.
                after = await self._status(caller.chat_id, note_workspace=True)
                if reply is None:
                    return _Answer(None)
                if after is not None and after.waits_for_invite:
                    reply = replace(reply, text=f"{reply.text}\n\n{self._invite_hint(reply.lang)}")
                return _Answer(reply)
        except Exception as exc:
            log.exception(
                "slack: command failed: %s",
                type(exc).__name__,
                extra={"chat": f"slack:{caller.chat_id}", "platform": "slack"},
            )
            return _Answer(Reply(lang, t(lang, "cmd.error")), failed=True)

    async def _status(self, chat_id: str, *, note_workspace: bool = False) -> ChatStatus | None:
        """The chat's status; with ``note_workspace``, the chat records the request's
        workspace if it did not know it."""
        current = _WORKSPACE.get() if note_workspace else None
        return await self._core.chat_status(
            platform=Platform.SLACK,
            chat_id=chat_id,
            team_id=current.team_id if current is not None else None,
            enterprise_id=current.enterprise_id if current is not None else None,
        )

    async def _user_locale(self, user_id: str) -> str | None:
        """The user's Slack locale (``ko-KR``); None if unknown."""
        locale, _zone = await self._user_profile(user_id)
        return locale

    async def _user_profile(self, user_id: str) -> tuple[str | None, str | None]:
        """The user's Slack locale (``ko-KR``) and time zone (``Asia/Seoul``), for a new
        chat's language and zone; None for what is unknown.

        One users.info call per new chat; it needs the ``users:read`` scope, and without it
        (or when Slack is slow) the chat simply starts in ``DEFAULT_LANGUAGE`` and
        ``DEFAULT_TIMEZONE``.
        """
        if not user_id:
            return None, None
        try:
            async with asyncio.timeout(LOCALE_TIMEOUT_SECONDS):
                api_client = self._api()
                response = await api_client.users_info(user=user_id, include_locale=True)
        except _ERRORS as exc:
            log.debug("slack: no locale for a user: %s", translate_error(exc).reason)
            return None, None
        user = response.get("user") or {}
        if not isinstance(user, dict):
            return None, None
        # https://api.slack.com/methods/users.info: ``tz`` is an IANA name such as
        # "America/Los_Angeles"; a value that is not one leaves the default zone.
        locale, zone = user.get("locale"), user.get("tz")
        return (
            str(locale) if isinstance(locale, str) and locale else None,
            zone if isinstance(zone, str) and zone else None,
        )

    def _invite_hint(self, lang: str) -> str:
        if self._bot_name:
            return t(lang, "slack.invite_hint", bot=self._bot_name, p=self._prefix)
        return t(lang, "slack.invite_hint_unnamed", p=self._prefix)

    async def _respond(
        self,
        respond: AsyncRespond,
        reply: Reply,
        *,
        chat_id: str,
        replace_original: bool = False,
    ) -> None:

        async def post() -> None:
            try:
                if replace_original:
                    answer = await respond(replace_original=True, **_ephemeral(reply))
                else:
                    answer = await respond(**_ephemeral(reply))
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise TransientError(type(exc).__name__) from None
            except (SlackClientError, ValueError) as exc:
                raise PermanentError(type(exc).__name__) from None
            status = getattr(answer, "status_code", 200)
            if status == 429:
                seconds = _retry_after(getattr(answer, "headers", None))
                raise RateLimited(f"response_url answered {status}", retry_after=seconds)
            if status >= 500:
                raise TransientError(f"response_url answered {status}")
            if status != 200:
                raise PermanentError(f"response_url answered {status}")

        # Through the workspace's pace and the channel's slot, as deliveries go.
        key, _, _ = chat_id.rpartition("/")
        await self._replies.send(
            post, chat=chat_id, interval=self._reply_interval, pace_key=key or None
        )


def _unreadable(what: str) -> web.Response:
    log.warning(
        "slack: signed request refused (400): Bolt could not read it (%s)",
        what,
        extra={"platform": "slack"},
    )
    return web.Response(status=400, text="malformed request")


def _guess(channel_id: str, channel_name: str, *, user_id: str) -> Conversation:
    """Where a command was typed, from the conversation's id and name alone."""
    if channel_id.startswith(DM_CHANNEL_PREFIX) or channel_name == DM_CHANNEL_NAME:
        return Conversation(Where.APP_DM, user_id or channel_id)
    if channel_name.startswith(GROUP_DM_NAME_PREFIX):
        return Conversation(Where.PEOPLE_DM, channel_id)
    return Conversation(Where.CHANNEL, channel_id)


def _chat_ctx(channel: str) -> dict[str, str]:
    return {"chat": f"slack:{channel}", "platform": "slack"}


def _received(context: Mapping[str, Any]) -> float:
    value = context.get("trendbot_received")
    return float(value) if isinstance(value, int | float) else time.monotonic()


def _chart_title(chart: Chart) -> str:
    """The file's title: the first panel's, else the alt text."""
    title = chart.panels[0].title if chart.panels else ""
    return (title or chart.alt)[:MAX_ALT_TEXT_CHARS]


def _message(reply: Reply) -> Outgoing:
    return render.reply_messages(Platform.SLACK, reply)[0]


def _ephemeral(reply: Reply) -> dict[str, Any]:
    message = _message(reply)
    return {"response_type": "ephemeral", "text": message.text, "blocks": list(message.blocks)}


__all__ = [
    "BOT_EVENTS",
    "METHOD_SCOPES",
    "SlackAuth",
    "SlackChannel",
    "SlackSender",
    "make_client",
    "malformed_body",
    "translate_error",
    "unescape",
    "verify_signature",
]
