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

Many workspaces (``SLACK_CLIENT_ID``, :mod:`bot.channels.slack.oauth`): Bolt authorizes each
request with its workspace's installation; chats are ``TEAM/CHANNEL``, each send uses its
workspace's token and counts against that workspace's cap (:meth:`SlackSender.pace_key`);
an uninstalled workspace stops its own chats only.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot import metrics
from bot.channels.slack.settings import SlackSettings
from bot.errors import (
    ChatGone,
    DeliveryError,
    NotInChannel,
    OutcomeUnknown,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)

log = logging.getLogger("bot.channels.slack")

# A Web API call that has not answered in this long is abandoned: slack-sdk's own default.
# chat.postMessage answers in well under a second, but Slack has answered in tens of seconds
# when busy and posted the message all the same, so a shorter wait turns a slow answer into
# a message whose outcome is unknown (``OutcomeUnknown``), which may be posted twice.
REQUEST_TIMEOUT_SECONDS = 30
# A message whose earlier send had no answer is sent again once, waiting this long for it.
RESEND_TIMEOUT_SECONDS = 90
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
# A request from a workspace where the app is not installed is logged (INFO) once in this
# long per workspace: each is answered, but a stray workspace's users should not flood the log.
NOT_INSTALLED_LOG_SECONDS = 3600
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
    "app_home_opened",
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
# The app-level token (Socket Mode's apps.connections.open) was refused: the socket cannot
# connect until SLACK_APP_TOKEN is fixed.
APP_TOKEN_REJECTED = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "account_inactive", "not_allowed_token_type"}
)

# What a Web API call raises: Slack's refusal, the connection's failure, the timeout. Each
# goes through :func:`translate_error`.
CALL_ERRORS: tuple[type[BaseException], ...] = (SlackClientError, aiohttp.ClientError, TimeoutError)
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
    # The Home tab (https://api.slack.com/methods/views.publish: no scope).
    "views.publish": frozenset(),
    # A reply's chart, uploaded into the DM with the app (files_upload_v2).
    "files.getUploadURLExternal": frozenset({"files:write"}),
    "files.completeUploadExternal": frozenset({"files:write"}),
}
# Every bot scope the app asks for: the OAuth install requests exactly these.
BOT_SCOPES = frozenset({"commands"}).union(*METHOD_SCOPES.values())


# ---------------------------------------------------------------------------- the client


def make_client(
    settings: SlackSettings, *, timeout: int = REQUEST_TIMEOUT_SECONDS
) -> AsyncWebClient:
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


def retry_after_seconds(headers: Mapping[str, Any] | None) -> float:
    """A 429's ``Retry-After`` in seconds; :data:`DEFAULT_RETRY_AFTER_SECONDS` without one."""
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
            seconds = retry_after_seconds(getattr(response, "headers", None))
            return RateLimited(f"ratelimited: retry after {seconds:g}s", retry_after=seconds)
        if code in AUTH_ERRORS:
            return PlatformAuthFailed(f"{code}: Slack refused the bot token", code=code)
        if code == NOT_IN_CHANNEL:
            return NotInChannel(NOT_IN_CHANNEL)
        if code in GONE_ERRORS:
            return ChatGone(code, code=code)
        if code in AMBIGUOUS_ERRORS:
            return OutcomeUnknown(code)
        if code in UNAVAILABLE_ERRORS:
            return TransientError(code)
        if status >= 500:
            label = f"http_{status}" + (f": {code}" if code else "")
            return OutcomeUnknown(label) if status != 503 else TransientError(label)
        return PermanentError(code or f"http_{status}")
    if isinstance(exc, TimeoutError):  # also aiohttp's ServerTimeoutError
        return OutcomeUnknown("timeout: no answer from Slack")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return TransientError(f"network: {type(exc).__name__}")
    if isinstance(exc, aiohttp.ClientError):  # the connection broke after the request left
        return OutcomeUnknown(f"network: {type(exc).__name__}")
    return PermanentError(f"error: {type(exc).__name__}")


# ---------------------------------------------------------------------------- outbound


def needed_scopes(exc: BaseException) -> frozenset[str]:
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
            except CALL_ERRORS as exc:
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


def error_code(exc: SlackApiError) -> str:
    """Slack's ``error`` field of a refused call (``invalid_blocks``); empty without one."""
    data = getattr(exc.response, "data", None)
    return str(data.get("error") or "") if isinstance(data, dict) else ""


__all__ = [
    "APP_TOKEN_REJECTED",
    "BOT_EVENTS",
    "CALL_ERRORS",
    "METHOD_SCOPES",
    "SlackAuth",
    "error_code",
    "make_client",
    "needed_scopes",
    "retry_after_seconds",
    "translate_error",
]
