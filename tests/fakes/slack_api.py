"""A local HTTP server that speaks the Slack Web API, for tests; and signed requests for an app.

slack-sdk's ``AsyncWebClient(token, base_url=sl.base_url)`` runs unchanged against it. Calls
arrive as ``GET`` or ``POST {base_url}{method}`` with a form or JSON body and
``Authorization: Bearer xoxb-...``. Every answer is Slack's envelope: HTTP 200 with
``{"ok": true, ...}`` or ``{"ok": false, "error": "channel_not_found"}``; only ``ratelimited``
comes as HTTP 429 with a ``Retry-After`` header, as on Slack.

Failures are part of the fake's input, set by the test:

* ``channel_errors[channel] = "is_archived"`` (any Slack error code) -- permanent per channel;
  ``add_channel(..., is_archived=True)`` / ``is_member=False`` give the answers Slack gives:
  a private channel, a DM between people (a ``D`` id with ``is_member=False``) or a group DM
  (``is_mpim=True``) the bot is not in is ``channel_not_found`` to every method, as if it did
  not exist; a public channel it is not in takes posts with ``chat:write.public``;
* ``scopes`` -- the bot token's scopes; a method or conversation whose scope is missing
  answers ``missing_scope`` with ``needed`` and ``provided``; every answer to an accepted
  token lists them in an ``X-OAuth-Scopes`` header;
* ``user_errors[user] = "user_not_found"`` -- for conversations.open and users.info;
* ``join(channel, *users)`` -- people in a conversation: chat.postEphemeral to anyone else is
  ``user_not_in_channel`` (a DM's user is in it);
* ``token_errors[token] = "token_revoked"`` -- every call with that token (app uninstalled);
* ``fail_next(method, status=429, retry_after=1, error="ratelimited")`` -- the next calls fail;
* ``drop_next(method)`` -- the next calls lose their connection without an answer;
* ``latency`` -- seconds before every answer;
* ``uninstall(team)`` -- the app removed from a workspace: its tokens answer ``token_revoked``;
* ``enforce_limits`` -- one chat.postMessage per second per channel, else 429 and an entry in
  ``limit_violations``;
* ``workspace_rate`` -- at most this many chat.postMessage a second in each workspace
  (Slack's own figure is "several hundred messages per minute"), else the same 429.

Many workspaces (an app distributed by OAuth, https://api.slack.com/authentication/oauth-v2):
``authorize(team_id, user_id=...)`` is a user approving the install in Slack and returns the
code Slack would put in the redirect; ``oauth.v2.access`` exchanges it once for that
workspace's bot token (https://api.slack.com/methods/oauth.v2.access), and every method then
answers as that workspace (auth.test, the channels it sees, the team of what it posts). With
``token_rotation`` the tokens expire after ``token_lifetime_seconds`` and come with a refresh
token, which ``oauth.v2.access`` with ``grant_type=refresh_token`` exchanges, once, for a new
pair (https://api.slack.com/authentication/rotation).

It also receives what an app posts to a slash command's ``response_url``:
``sl.response_url("r1")`` is a URL on this server, and ``sl.responses["r1"]`` the JSON bodies
posted to it. ``slack_signature``, ``signed_headers``, ``slash_command_body`` and
``block_actions_body``, ``event_body`` and ``url_verification_body`` build the signed
requests Slack itself would send to the app.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import math
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus, urlencode

from aiohttp import web

from tests.fakes.base import Dropped, LocalApiServer

DEFAULT_TOKEN = "xoxb-1-test-token"
DEFAULT_TEAM_ID = "T1"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"

MAX_BLOCKS = 50  # Block Kit: blocks in one message
MAX_SECTION_TEXT = 3000  # Block Kit: section text and each field
MAX_HEADER_TEXT = 150  # Block Kit: header plain_text
MAX_CONTEXT_ELEMENTS = 10  # Block Kit: elements of a context block
MAX_ACTIONS_ELEMENTS = 25  # Block Kit: elements of an actions block
MAX_BUTTON_TEXT = 75  # Block Kit: button text
MAX_BUTTON_VALUE = 2000  # Block Kit: button value
MAX_ACTION_ID = 255  # Block Kit: action_id and block_id
MAX_TEXT_CHARS = 40000  # chat.postMessage text; longer is msg_too_long
CHANNEL_INTERVAL_SECONDS = 1.0  # Slack: about one message per second per channel
# The limit counts exactly: chat.postMessage allows "1 message per second to a specific
# channel" ("Special" rate limit, https://api.slack.com/methods/chat.postMessage#rate_limiting)
# and Slack names no allowance for jitter. A test that needs slack sets ``limit_tolerance``
# and says why.
DEFAULT_LIMIT_TOLERANCE = 0.0
FIRST_TS_MICROS = 1_700_000_000_000_100  # message ts, in microseconds: 1700000000.000100
DEFAULT_CLIENT_ID = "1111111111.2222222222"
DEFAULT_CLIENT_SECRET = "fake-client-secret-0123456789abcdef"
APP_ID = "A0TRENDBOT"
# https://api.slack.com/authentication/oauth-v2: "codes expire after ten minutes".
CODE_LIFETIME_SECONDS = 600
# https://api.slack.com/authentication/rotation: a rotating access token lasts 12 hours.
ROTATING_TOKEN_SECONDS = 12 * 3600
# Methods that authenticate with the app's client id and secret, not a token.
_CLIENT_METHODS = frozenset({"oauth.v2.access"})

# The bot scopes a token has unless a test says otherwise: every scope a method below needs.
ALL_BOT_SCOPES = frozenset(
    {"commands", "chat:write", "chat:write.public", "channels:read", "groups:read", "im:read",
     "mpim:read", "users:read", "files:write"}
)  # fmt: skip
# Scopes per method (https://api.slack.com/methods/chat.postMessage "Required scopes",
# https://api.slack.com/methods/users.info, https://api.slack.com/methods/auth.test: none);
# conversations.info needs the scope of the conversation's type (below).
METHOD_SCOPES: dict[str, frozenset[str]] = {
    "chat.postMessage": frozenset({"chat:write"}),
    "chat.postEphemeral": frozenset({"chat:write"}),
    "chat.update": frozenset({"chat:write"}),
    "users.info": frozenset({"users:read"}),
    # https://docs.slack.dev/reference/methods/files.getUploadURLExternal and
    # .../files.completeUploadExternal, "Scopes": files:write.
    "files.getUploadURLExternal": frozenset({"files:write"}),
    "files.completeUploadExternal": frozenset({"files:write"}),
}
# files.getUploadURLExternal, Errors: "alt_txt_too_large: Description for the image is
# longer than the limit of 1000 character".
MAX_ALT_TXT_CHARS = 1000

_JSON_PARAMS = frozenset({"blocks", "attachments", "metadata", "view"})  # JSON strings in a form
# https://api.slack.com/reference/surfaces/views: "blocks: An array of blocks ... Maximum of
# 100 blocks"; views.publish takes a view of type "home" (https://api.slack.com/methods/views.publish).
MAX_VIEW_BLOCKS = 100

_log = logging.getLogger(__name__)


class _ApiError(Exception):
    def __init__(self, error: str, *, status: int = 200, retry_after: int | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.status = status
        self.retry_after = retry_after
        self.details: dict[str, Any] = {}


@dataclass(slots=True)
class SlackCall:
    """One request the app made, as the fake answered it.

    ``method`` is the Web API method, or ``"response_url"`` for a post to a response URL (then
    ``channel`` is the response URL's name). ``status`` is the HTTP status (0 when dropped).
    """

    method: str
    params: dict[str, Any]
    at: float  # time.monotonic() when the request arrived
    channel: str | None
    status: int = 0
    response: dict[str, Any] | None = None
    token: str | None = None  # the bearer token the call carried
    team: str | None = None  # the workspace that token belongs to

    @property
    def refreshed(self) -> bool:
        """An oauth.v2.access refresh (token rotation)."""
        return self.method == "oauth.v2.access" and self.params.get("grant_type") == (
            "refresh_token"
        )

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.response and self.response.get("ok"))

    @property
    def error(self) -> str | None:
        return self.response.get("error") if self.response else None


@dataclass(frozen=True, slots=True)
class LimitViolation:
    """A post refused with 429 because the channel already had one within a second."""

    at: float
    method: str
    channel: str
    retry_after: int


@dataclass(slots=True)
class _Failure:
    status: int
    error: str
    retry_after: int | None
    target: str | None  # the channel (for "response_url", the URL's name); None: any
    remaining: int


@dataclass(slots=True)
class _Grant:
    """An install a user approved: what its code stands for."""

    team_id: str
    team_name: str
    user_id: str
    enterprise_id: str | None
    redirect_uri: str | None
    expires_at: float
    org_wide: bool = False


@dataclass(slots=True)
class _Workspace:
    team_id: str
    name: str
    bot_user_id: str
    bot_id: str
    enterprise_id: str | None = None


@dataclass(slots=True)
class _Ts:
    next_micros: int = FIRST_TS_MICROS

    def take(self) -> str:
        micros, self.next_micros = self.next_micros, self.next_micros + 100
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


class FakeSlack(LocalApiServer[SlackCall]):
    """A Slack Web API server on 127.0.0.1 with an ephemeral port.

    Use as ``async with FakeSlack() as sl:`` and give slack-sdk ``base_url=sl.base_url``. All
    state is plain attributes the test may read and set at any time.

    Args:
        token: the bot token accepted (more in ``sl.tokens``); others get ``invalid_auth``.
        team_id: the workspace, as auth.test and every object report it.
        log_requests: log every request at INFO on this module's logger.
    """

    def __init__(
        self,
        *,
        token: str = DEFAULT_TOKEN,
        team_id: str = DEFAULT_TEAM_ID,
        log_requests: bool = False,
    ) -> None:
        super().__init__()
        self.token = token
        self.tokens: set[str] = {token}
        self.team_id = team_id
        self.bot_user_id = BOT_USER_ID
        self.bot_id = BOT_ID
        self.log_requests = log_requests

        # Workspaces and the app's OAuth credentials (many workspaces, by OAuth).
        self.client_id = DEFAULT_CLIENT_ID
        self.client_secret = DEFAULT_CLIENT_SECRET
        self.token_rotation = False
        self.token_lifetime_seconds = ROTATING_TOKEN_SECONDS
        self.workspaces: dict[str, _Workspace] = {
            team_id: _Workspace(team_id, "Fake Workspace", BOT_USER_ID, BOT_ID)
        }
        self.token_teams: dict[str, str] = {token: team_id}
        self.token_expires: dict[str, float] = {}  # time.time() after which a token expired
        self.refresh_tokens: dict[str, str] = {}  # refresh token -> access token it renews
        self.refresh_issued: list[str] = []  # every refresh token handed out, used or not
        self.channel_teams: dict[str, str] = {}
        self.org_tokens: dict[str, str] = {}  # token of an org-wide install -> its enterprise
        self._grants: dict[str, _Grant] = {}
        self._serial = 0
        self._team: str = team_id  # the workspace of the call being answered
        self._token: str | None = None  # and the token it came with

        # What the app did (and ``sent``: every call).
        self.request_count: Counter[str] = Counter()
        self.limit_violations: list[LimitViolation] = []
        self.ephemerals: list[dict[str, Any]] = []
        # The people (not the bot) in each conversation, set by the test with ``join``.
        self.members: dict[str, set[str]] = {}
        # Files of the external upload flow, by file id: name, alt_txt, the declared length,
        # the bytes uploaded (None until then), whether completed, where shared.
        self.files: dict[str, dict[str, Any]] = {}
        self.responses: dict[str, list[dict[str, Any]]] = {}

        # Failures and limits, set by the test.
        self.channel_errors: dict[str, str] = {}
        self.token_errors: dict[str, str] = {}
        self.scopes: set[str] = set(ALL_BOT_SCOPES)
        self.user_errors: dict[str, str] = {}
        self.latency = 0.0
        self.enforce_limits = False
        self.limit_tolerance = DEFAULT_LIMIT_TOLERANCE
        self.workspace_rate: float | None = None
        # Block types a workspace's Slack does not take yet (by team id): invalid_blocks.
        self.unsupported_blocks: dict[str, set[str]] = {}

        # The workspace the app talks to.
        self.channels: dict[str, dict[str, Any]] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.user_locales: dict[str, str] = {}
        self.user_timezones: dict[str, str] = {}
        self.home_views: dict[str, dict[str, Any]] = {}  # views.publish, by user

        self._last_post: dict[str, float] = {}
        self._workspace_posts: dict[str, deque[float]] = {}  # by workspace
        self._messages: dict[tuple[str, str], dict[str, Any]] = {}
        self._by_channel: dict[str, list[dict[str, Any]]] = {}
        self._ts = _Ts()
        self._delivered = 0
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.update": self._update,
            "conversations.info": self._conversations_info,
            "conversations.open": self._conversations_open,
            "users.info": self._users_info,
            "views.publish": self._views_publish,
            "oauth.v2.access": self._oauth_access,
            "files.getUploadURLExternal": self._get_upload_url,
            "files.completeUploadExternal": self._complete_upload,
        }

    # ------------------------------------------------------------------ lifecycle

    def _routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_post("/response/{name}", self._handle_response_url)
        app.router.add_post("/upload/{file_id}", self._handle_upload)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        """slack-sdk's ``base_url``: the method name is appended to it."""
        return f"{self.url}/api/"

    def response_url(self, name: str) -> str:
        """A ``response_url`` on this server; what is posted to it lands in ``responses[name]``."""
        self.responses.setdefault(name, [])
        return f"{self.url}/response/{name}"

    # ------------------------------------------------------------------ the workspace

    def add_channel(
        self,
        channel_id: str,
        *,
        name: str | None = None,
        is_private: bool = False,
        is_archived: bool = False,
        is_member: bool = True,
        is_mpim: bool = False,
        user: str | None = None,
        team_id: str | None = None,
    ) -> dict[str, Any]:
        """Describe a conversation; posting follows it (see :meth:`_writable_channel`).

        An id starting with ``D`` is a direct message with ``user``: the bot's own with
        ``is_member`` (the App Home messages tab), else one between two people. ``is_mpim``:
        a group DM (private, ``G`` id), the bot in it only with ``is_member``.
        """
        team = team_id or self._team
        channel = _channel_object(channel_id, name=name, team_id=team)
        self.channel_teams[channel_id] = team
        private = is_private or is_mpim or channel["is_im"]
        channel.update(
            is_private=private,
            is_group=private and not channel["is_im"] and not is_mpim,
            is_channel=not private,
            is_mpim=is_mpim,
            is_archived=is_archived,
            is_member=is_member,
        )
        if is_mpim:
            channel["name"] = name or f"mpdm-{channel_id.lower()}-1"
        if channel["is_im"]:
            channel["user"] = user or "U" + channel_id[1:]
        self.channels[channel_id] = channel
        return channel

    def join(self, channel_id: str, *users: str) -> None:
        """``users`` are in the conversation ``channel_id`` (what chat.postEphemeral asks)."""
        self.members.setdefault(channel_id, set()).update(users)

    def im_channel(self, user_id: str) -> str:
        """The id of the bot's direct-message conversation with a user."""
        return "D" + user_id[1:]

    def add_workspace(
        self, team_id: str, *, name: str | None = None, enterprise_id: str | None = None
    ) -> None:
        """A workspace the app may be installed in, with a bot user of its own."""
        n = len(self.workspaces) + 1
        self.workspaces[team_id] = _Workspace(
            team_id, name or f"Workspace {team_id}", f"U0BOT{n}", f"B0BOT{n}", enterprise_id
        )

    def authorize(
        self,
        team_id: str,
        *,
        user_id: str = "U0INSTALLER",
        redirect_uri: str | None = None,
        org_wide: bool = False,
    ) -> str:
        """A user of ``team_id`` approves the install on Slack's authorize page; returns the
        ``code`` Slack appends to the redirect URL (single use, for ten minutes). ``org_wide``:
        an Enterprise Grid admin installs the app for the whole organisation of ``team_id``
        (https://api.slack.com/enterprise/org-ready-apps)."""
        if team_id not in self.workspaces:
            self.add_workspace(team_id)
        workspace = self.workspaces[team_id]
        self._serial += 1
        # Slack's codes: two numbers and 64 hex digits, e.g. 4724469134.4644010092847.232b...
        digest = hashlib.sha256(f"{team_id}:{self._serial}".encode()).hexdigest()
        code = f"{4_000_000_000 + self._serial}.{time.time_ns() // 1_000_000}.{digest}"
        self._grants[code] = _Grant(
            team_id=team_id,
            team_name=workspace.name,
            user_id=user_id,
            enterprise_id=workspace.enterprise_id,
            redirect_uri=redirect_uri,
            expires_at=time.time() + CODE_LIFETIME_SECONDS,
            org_wide=org_wide,
        )
        return code

    def tokens_of(self, team_id: str) -> list[str]:
        """The bot tokens issued for a workspace, oldest first."""
        return [token for token, team in self.token_teams.items() if team == team_id]

    def uninstall(self, team_id: str) -> None:
        """The app is removed from the workspace: every token it had is revoked."""
        for token in self.tokens_of(team_id):
            self.token_errors[token] = "token_revoked"

    # ------------------------------------------------------------------ failures

    def fail_next(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: int = 1,
        error: str | None = None,
        times: int = 1,
        channel: str | None = None,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` (``"*"``: any) with an error.

        A 429 comes with ``Retry-After`` and ``ratelimited``; any other status with
        ``{"ok": false, "error": error}`` (``fatal_error`` unless given), e.g.
        ``fail_next("chat.postMessage", status=200, error="internal_error")``. Method
        ``"response_url"`` fails posts to response URLs (``channel``: the URL's name).
        """
        if error is None:
            error = "ratelimited" if status == 429 else "fatal_error"
        failure = _Failure(status, error, retry_after if status == 429 else None, channel, times)
        self._add_failure(method, failure)

    def refuse_blocks(self, *kinds: str, team_id: str | None = None) -> None:
        """The workspace (the first one by default) answers a message with a block of one of
        ``kinds`` (e.g. ``"container"``) ``invalid_blocks``, as Slack answers a block type it
        does not know (https://api.slack.com/methods/chat.postMessage#errors)."""
        self.unsupported_blocks.setdefault(team_id or self.team_id, set()).update(kinds)

    def _unsupported(self) -> frozenset[str]:
        return frozenset(self.unsupported_blocks.get(self._team, ()))

    def drop_next(self, method: str, times: int = 1, *, channel: str | None = None) -> None:
        """Close the connection of the next ``times`` calls of ``method`` without an answer."""
        self._add_drop(method, target=channel, times=times)

    # ------------------------------------------------------------------ what the app did

    def messages_to(self, channel: str) -> list[dict[str, Any]]:
        """Messages posted to a channel, oldest first, as they are now (updates applied).

        Each is the ``message`` object chat.postMessage answered, plus ``channel`` and, when
        given, ``thread_ts``.
        """
        return list(self._by_channel.get(channel, ()))

    def ephemerals_to(self, user: str, channel: str | None = None) -> list[dict[str, Any]]:
        """Ephemeral messages shown to a user (in one channel, when given), oldest first."""
        return [
            e
            for e in self.ephemerals
            if e["user"] == user and (channel is None or e["channel"] == channel)
        ]

    def calls(self, method: str | None = None, *, ok: bool | None = None) -> list[SlackCall]:
        """Recorded calls, optionally of one method and only the successful or failed ones."""
        return [
            call
            for call in self.sent
            if (method is None or call.method == method) and (ok is None or call.ok == ok)
        ]

    @property
    def delivered(self) -> int:
        """How many chat.postMessage calls succeeded."""
        return self._delivered

    @staticmethod
    def _is_delivered(call: SlackCall) -> bool:
        return call.ok and call.method == "chat.postMessage"

    @staticmethod
    def _describe(call: SlackCall) -> str:
        return f"{call.method}({call.channel})={call.error or 'ok'}"

    async def wait_for_response(
        self,
        name: str,
        *,
        count: int = 1,
        timeout: float = 5.0,  # noqa: ASYNC109 - the deadline is the point of this helper
    ) -> list[dict[str, Any]]:
        """Wait until ``count`` bodies were posted to ``response_url(name)``; return them all."""
        await self.wait_for(
            lambda c: c.method == "response_url" and c.channel == name and c.status == 200,
            count=count,
            timeout=timeout,
        )
        return list(self.responses[name])

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic()
        method = request.match_info["method"]
        self.request_count[method] += 1
        params = await _read_params(request)
        client = _basic_auth(request)
        token = None if client else _bearer(request) or params.pop("token", None)
        channel = params.get("channel")
        call = SlackCall(method, params, arrived, channel if isinstance(channel, str) else None)
        call.token = token
        call.team = self.token_teams.get(token or "")
        if self.log_requests:
            _log.info("%s %s", method, params)
        # Every answer to a token Slack accepts lists its scopes
        # (https://api.slack.com/scopes, "x-oauth-scopes" header).
        accepted = token in self.tokens and token not in self.token_errors
        headers = {"X-OAuth-Scopes": ",".join(sorted(self.scopes))} if accepted else {}
        try:
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            if method in _CLIENT_METHODS:
                body = self._answer_client(client, method, params)
            else:
                body = self._answer(token, method, params)
            call.status, call.response = 200, body
        except _ApiError as err:
            call.status, call.response = (
                err.status,
                {"ok": False, "error": err.error, **err.details},
            )
            if err.retry_after is not None:
                headers["Retry-After"] = str(err.retry_after)
        except Dropped:
            call.status, call.response = 0, None
        await self._record(call)
        if call.response is None:
            assert request.transport is not None
            request.transport.abort()
            raise asyncio.CancelledError  # aiohttp finishes the aborted request quietly
        return web.json_response(call.response, status=call.status, headers=headers)

    async def _handle_response_url(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        self.request_count["response_url"] += 1
        if request.content_type == "application/json":
            body = await request.json()
        else:
            body = dict(await _read_params(request))
        call = SlackCall("response_url", body, time.monotonic(), name)
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        failure = self._take_failure("response_url", name)
        if failure is not None:
            call.status, call.response = failure.status, {"ok": False, "error": failure.error}
            await self._record(call)
            return web.Response(status=failure.status, text=failure.error)
        self.responses.setdefault(name, []).append(body)
        call.status, call.response = 200, {"ok": True}
        await self._record(call)
        return web.Response(text="ok")

    async def _handle_upload(self, request: web.Request) -> web.StreamResponse:
        """Step 2 of the external upload flow, the ``upload_url`` files.getUploadURLExternal
        gave: "Upload a file by making a POST request to the upload URL ... Files can be sent
        as raw bytes or can be multipart form encoded. Slack will return HTTP 200 if the
        upload is successful; non-200 otherwise"
        (https://docs.slack.dev/reference/methods/files.getUploadURLExternal, Usage info).
        The bytes must be as many as the ``length`` declared in step 1."""
        file_id = request.match_info["file_id"]
        self.request_count["upload"] += 1
        data = await request.read()
        call = SlackCall("upload", {"file_id": file_id, "size": len(data)}, time.monotonic(), None)
        entry = self.files.get(file_id)
        failure = self._take_failure("upload", None)
        if failure is not None:
            call.status, call.response = failure.status, {"ok": False, "error": failure.error}
        elif entry is None or entry["data"] is not None:
            call.status, call.response = 404, {"ok": False, "error": "not_found"}
        elif len(data) != entry["length"]:
            call.status, call.response = 400, {"ok": False, "error": "length_mismatch"}
        else:
            entry["data"] = data
            call.status, call.response = 200, {"ok": True}
        await self._record(call)
        if call.status != 200:
            return web.Response(status=call.status, text=str(call.error))
        return web.Response(text=f"OK - {len(data)}")

    def _answer_client(
        self, client: tuple[str, str] | None, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """A method the app calls with its client id and secret: in HTTP Basic auth (Slack's
        preference) or as ``client_id`` and ``client_secret`` arguments."""
        client_id, secret = client or (
            str(params.get("client_id") or ""),
            str(params.get("client_secret") or ""),
        )
        if client_id != self.client_id:
            raise _ApiError("invalid_client_id")
        if secret != self.client_secret:
            raise _ApiError("bad_client_secret")
        if self._take_drop(method, None):
            raise Dropped
        failure = self._take_failure(method, None)
        if failure is not None:
            raise _ApiError(failure.error, status=failure.status, retry_after=failure.retry_after)
        return {"ok": True, **self._handlers[method](params)}

    def _answer(self, token: str | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if not token:
            raise _ApiError("not_authed")
        if token in self.token_errors:
            raise _ApiError(self.token_errors[token])
        if token not in self.tokens:
            raise _ApiError("invalid_auth")
        # https://api.slack.com/authentication/rotation: an expired token is refused.
        if token in self.token_expires and time.time() >= self.token_expires[token]:
            raise _ApiError("token_expired")
        self._team = self.token_teams.get(token, self.team_id)
        self._token = token
        handler = self._handlers.get(method)
        if handler is None:
            raise _ApiError("unknown_method")
        self._require_scopes(METHOD_SCOPES.get(method, frozenset()))
        channel = params.get("channel")
        if self._take_drop(method, channel):
            raise Dropped
        failure = self._take_failure(method, channel)
        if failure is not None:
            raise _ApiError(failure.error, status=failure.status, retry_after=failure.retry_after)
        if isinstance(channel, str) and channel in self.channel_errors:
            raise _ApiError(self.channel_errors[channel])
        return {"ok": True, **handler(params)}

    def _require_scopes(self, needed: frozenset[str]) -> None:
        """Slack's ``missing_scope``, naming the scope needed and those the token has
        (https://api.slack.com/methods/chat.postMessage#errors, "missing_scope")."""
        missing = sorted(needed - self.scopes)
        if missing:
            error = _ApiError("missing_scope")
            error.details = {"needed": ",".join(missing), "provided": ",".join(sorted(self.scopes))}
            raise error

    def _check_limit(self, method: str, channel: str) -> None:
        """https://api.slack.com/methods/chat.postMessage, Rate limiting: "1 message per
        second to a specific channel", and a workspace-wide limit above that; over either,
        HTTP 429 with Retry-After (https://api.slack.com/apis/rate-limits)."""
        now = time.monotonic()
        if self.workspace_rate is not None:
            window = self._workspace_posts.setdefault(self._team, deque())
            while window and now - window[0] >= 1.0 - self.limit_tolerance:
                window.popleft()
            if len(window) >= self.workspace_rate:
                self.limit_violations.append(LimitViolation(now, method, channel, 1))
                raise _ApiError("ratelimited", status=429, retry_after=1)
            window.append(now)
        if not self.enforce_limits:
            return
        last = self._last_post.get(channel)
        gap = CHANNEL_INTERVAL_SECONDS - self.limit_tolerance
        if last is not None and now - last < gap:
            retry_after = max(1, math.ceil(gap - (now - last)))
            self.limit_violations.append(LimitViolation(now, method, channel, retry_after))
            raise _ApiError("ratelimited", status=429, retry_after=retry_after)
        self._last_post[channel] = now

    # ------------------------------------------------------------------ methods

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://api.slack.com/methods/auth.test: who the token is, in its workspace."""
        workspace = self.workspaces[self._team]
        answer: dict[str, Any] = {
            "url": f"https://{workspace.team_id.lower()}.slack.com/",
            "team": workspace.name,
            "user": "trendbot",
            "team_id": workspace.team_id,
            "user_id": workspace.bot_user_id,
            "bot_id": workspace.bot_id,
            "is_enterprise_install": False,
        }
        if workspace.enterprise_id:
            answer["enterprise_id"] = workspace.enterprise_id
        if self._token in self.org_tokens:  # the organisation's token
            answer.update(enterprise_id=self.org_tokens[self._token], is_enterprise_install=True)
        return answer

    def _oauth_access(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://api.slack.com/methods/oauth.v2.access: a code (once, within ten minutes,
        with the redirect_uri of the authorize step if one was given) for the workspace's
        bot token; with token rotation, ``grant_type=refresh_token`` exchanges a refresh token
        (once: it is revoked as it is used) for a new access token and refresh token
        (https://api.slack.com/authentication/rotation)."""
        grant_type = str(params.get("grant_type") or "authorization_code")
        if grant_type == "refresh_token":
            return self._refresh(str(params.get("refresh_token") or ""))
        if grant_type != "authorization_code":
            raise _ApiError("invalid_grant_type")
        grant = self._grants.pop(str(params.get("code") or ""), None)
        if grant is None or time.time() >= grant.expires_at:
            raise _ApiError("invalid_code")
        redirect = params.get("redirect_uri")
        if grant.redirect_uri is not None and redirect != grant.redirect_uri:
            raise _ApiError("bad_redirect_uri")
        workspace = self.workspaces[grant.team_id]
        # The organisation's install (org-wide): ``team`` null, ``enterprise`` set,
        # ``is_enterprise_install`` true; its token serves every workspace of the org
        # (https://api.slack.com/enterprise/apps, "org-wide apps").
        org = workspace.enterprise_id or ("E0" if grant.org_wide else None)
        team = None if grant.org_wide else {"id": workspace.team_id, "name": workspace.name}
        answer: dict[str, Any] = {
            "app_id": APP_ID,
            "authed_user": {"id": grant.user_id},
            "scope": ",".join(sorted(self.scopes)),
            "token_type": "bot",
            "bot_user_id": workspace.bot_user_id,
            "team": team,
            "enterprise": {"id": org, "name": f"Org {org}"} if org else None,
            "is_enterprise_install": grant.org_wide,
        }
        answer.update(self._issue(workspace.team_id))
        if grant.org_wide:
            self.org_tokens[answer["access_token"]] = answer["enterprise"]["id"]
        return answer

    def _issue(self, team_id: str) -> dict[str, Any]:
        """A new bot token for the workspace (and, with rotation, its refresh token)."""
        self._serial += 1
        secret = hashlib.sha256(f"{team_id}:{self._serial}".encode()).hexdigest()[:24]
        if not self.token_rotation:
            token = f"xoxb-{self._serial}-{team_id.lower()}-{secret}"
            self.tokens.add(token)
            self.token_teams[token] = team_id
            return {"access_token": token}
        token = f"xoxe.xoxb-{self._serial}-{team_id.lower()}-{secret}"
        refresh = f"xoxe-1-{team_id.lower()}-{secret[::-1]}"
        self.tokens.add(token)
        self.token_teams[token] = team_id
        self.token_expires[token] = time.time() + self.token_lifetime_seconds
        self.refresh_tokens[refresh] = token
        self.refresh_issued.append(refresh)
        return {
            "access_token": token,
            "refresh_token": refresh,
            "expires_in": self.token_lifetime_seconds,
        }

    def _refresh(self, refresh_token: str) -> dict[str, Any]:
        old = self.refresh_tokens.pop(refresh_token, None)
        if old is None:
            raise _ApiError("invalid_refresh_token")
        team_id = self.token_teams[old]
        answer = {"token_type": "bot", "scope": ",".join(sorted(self.scopes))}
        answer.update(self._issue(team_id))
        answer["team"] = {"id": team_id, "name": self.workspaces[team_id].name}
        return answer

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._writable_channel(params)
        text, blocks = _message_content(params, unsupported=self._unsupported())
        self._check_limit("chat.postMessage", channel)
        ts = self._ts.take()
        workspace = self.workspaces[self._team]
        message: dict[str, Any] = {
            "type": "message",
            "subtype": "bot_message",
            "text": text,
            "user": workspace.bot_user_id,
            "bot_id": workspace.bot_id,
            "team": workspace.team_id,
            "ts": ts,
        }
        if blocks is not None:
            message["blocks"] = blocks
        if params.get("thread_ts"):
            message["thread_ts"] = str(params["thread_ts"])
        stored = {**message, "channel": channel}
        self._messages[(channel, ts)] = stored
        self._by_channel.setdefault(channel, []).append(stored)
        self._delivered += 1
        return {"channel": channel, "ts": ts, "message": message}

    def _post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._writable_channel(params)
        user = params.get("user")
        if not user:
            raise _ApiError("user_not_found")
        if user in self.user_errors:
            raise _ApiError(self.user_errors[user])
        # "The user should be in the channel specified by the channel argument"
        # (https://api.slack.com/methods/chat.postEphemeral, errors: user_not_in_channel);
        # the blocks are checked as chat.postMessage's.
        dm_user = self.channels.get(channel, {}).get("user")
        if user != dm_user and user not in self.members.get(channel, set()):
            raise _ApiError("user_not_in_channel")
        text, blocks = _message_content(params, unsupported=self._unsupported())
        ts = self._ts.take()
        self.ephemerals.append(
            {"channel": channel, "user": user, "text": text, "blocks": blocks, "ts": ts}
        )
        return {"message_ts": ts}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._writable_channel(params)
        ts = str(params.get("ts") or "")
        message = self._messages.get((channel, ts))
        if message is None:
            raise _ApiError("message_not_found")
        text, blocks = _message_content(params, unsupported=self._unsupported())
        message["text"] = text
        if blocks is not None:
            message["blocks"] = blocks
        message["edited"] = {"user": self.bot_user_id, "ts": self._ts.take()}
        public = {k: v for k, v in message.items() if k != "channel"}
        return {"channel": channel, "ts": ts, "text": text, "message": public}

    def _get_upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://docs.slack.dev/reference/methods/files.getUploadURLExternal: ``filename``
        and ``length`` (bytes) required, ``alt_txt`` optional (at most 1,000 characters);
        answers ``upload_url`` and ``file_id``. A ``length`` of 0 is ``missing_argument``
        ("Typically only occurs when the length provided is 0")."""
        filename = str(params.get("filename") or "")
        try:
            length = int(params.get("length") or 0)
        except (TypeError, ValueError):
            raise _ApiError("invalid_arguments") from None
        if not filename or length <= 0:
            raise _ApiError("missing_argument")
        alt = params.get("alt_txt")
        if alt is not None and len(str(alt)) > MAX_ALT_TXT_CHARS:
            raise _ApiError("alt_txt_too_large")
        file_id = f"F0UPLOAD{len(self.files) + 1:04d}"
        self.files[file_id] = {
            "id": file_id,
            "name": filename,
            "alt_txt": alt,
            "length": length,
            "data": None,
            "completed": False,
            "team": self._team,
            "channels": [],
        }
        return {"upload_url": f"{self.url}/upload/{file_id}", "file_id": file_id}

    def _complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://docs.slack.dev/reference/methods/files.completeUploadExternal: ``files``
        (a JSON array of ``{"id", "title"}``) required; ``channel_id`` (or ``channels``) shares
        the files there, with ``initial_comment``, "If not specified the file will be
        private". A file not uploaded (step 2) or already completed is ``file_not_found``; a
        conversation the bot cannot post to answers as chat.postMessage would."""
        raw = params.get("files")
        try:
            items = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            raise _ApiError("invalid_arguments") from None
        if not isinstance(items, list) or not items:
            raise _ApiError("invalid_arguments")
        entries = []
        for item in items:
            entry = self.files.get(str(item.get("id") if isinstance(item, dict) else ""))
            if entry is None or entry["data"] is None or entry["completed"]:
                raise _ApiError("file_not_found")
            entries.append((entry, item))
        targets = [str(params["channel_id"])] if params.get("channel_id") else []
        targets += [c for c in str(params.get("channels") or "").split(",") if c]
        channels = [self._writable_channel({"channel": target}) for target in targets]
        answered = []
        for entry, item in entries:
            entry.update(completed=True, title=item.get("title") or entry["name"])
            entry["channels"] = channels
            answered.append(self._file_object(entry))
        for channel in channels:
            workspace = self.workspaces[self._team]
            ts = self._ts.take()
            stored = {
                "type": "message",
                "text": str(params.get("initial_comment") or ""),
                "user": workspace.bot_user_id,
                "bot_id": workspace.bot_id,
                "team": workspace.team_id,
                "ts": ts,
                "files": answered,
                "channel": channel,
            }
            self._messages[(channel, ts)] = stored
            self._by_channel.setdefault(channel, []).append(stored)
        return {"files": answered}

    def _file_object(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A file object (https://docs.slack.dev/reference/objects/file-object), its main
        fields."""
        file_id, name = entry["id"], entry["name"]
        private = f"{self.url}/files-pri/{entry['team']}-{file_id}/{name}"
        return {
            "id": file_id,
            "name": name,
            "title": entry.get("title", name),
            "mimetype": "image/png" if name.endswith(".png") else "application/octet-stream",
            "filetype": name.rsplit(".", 1)[-1] if "." in name else "",
            "size": len(entry["data"] or b""),
            "alt_txt": entry["alt_txt"],
            "user": self.workspaces[entry["team"]].bot_user_id,
            "url_private": private,
            "permalink": f"{self.url}/files/{file_id}/{name}",
            "is_public": any(c[:1] == "C" for c in entry["channels"]),
            "channels": [c for c in entry["channels"] if c[:1] == "C"],
            "groups": [c for c in entry["channels"] if c[:1] == "G"],
            "ims": [c for c in entry["channels"] if c[:1] == "D"],
        }

    def _conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://api.slack.com/methods/conversations.info: a conversation the bot cannot see
        (a private channel, DM or group DM it is not in) is ``channel_not_found``; each type
        needs its read scope (channels:read, groups:read, im:read, mpim:read)."""
        channel_id = str(params.get("channel") or "")
        if not channel_id:
            raise _ApiError("channel_not_found")
        channel = self._visible_channel(channel_id)
        if channel["is_im"]:
            scope = "im:read"
        elif channel["is_mpim"]:
            scope = "mpim:read"
        elif channel["is_private"]:
            scope = "groups:read"
        else:
            scope = "channels:read"
        self._require_scopes(frozenset({scope}))
        return {"channel": channel}

    def _conversations_open(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("channel"):
            return {"channel": {"id": str(params["channel"])}}
        users = [u for u in str(params.get("users") or "").split(",") if u]
        if not users:
            raise _ApiError("users_list_not_supplied")
        for user in users:
            if user in self.user_errors:
                raise _ApiError(self.user_errors[user])
        if len(users) == 1:
            channel_id = self.im_channel(users[0])
        else:
            channel_id = "G" + "".join(u[1:] for u in sorted(users))[:16]
        already_open = channel_id in self.channels
        if not already_open:
            if len(users) == 1:
                self.add_channel(channel_id, user=users[0])
            else:
                self.add_channel(channel_id, is_private=True).update(is_mpim=True)
        if _truthy(params.get("return_im")):
            channel: dict[str, Any] = dict(self.channels[channel_id])
        else:
            channel = {"id": channel_id}
        body: dict[str, Any] = {"channel": channel}
        if already_open:
            body.update(no_op=True, already_open=True)
        return body

    def _views_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://api.slack.com/methods/views.publish: ``user_id`` and a ``view`` of type
        ``home`` with at most 100 blocks; anything else is ``invalid_arguments``."""
        user_id = str(params.get("user_id") or "")
        view = params.get("view")
        if not user_id or not isinstance(view, dict) or view.get("type") != "home":
            raise _ApiError("invalid_arguments")
        blocks = view.get("blocks")
        if not isinstance(blocks, list) or len(blocks) > MAX_VIEW_BLOCKS:
            raise _ApiError("invalid_arguments")
        self.home_views[user_id] = view
        return {"view": {"id": f"V{len(self.home_views)}", "type": "home", **view}}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user_id = str(params.get("user") or "")
        if not user_id:
            raise _ApiError("user_not_found")
        if user_id in self.user_errors:
            raise _ApiError(self.user_errors[user_id])
        name = f"user{user_id.lower()}"
        user: dict[str, Any] = {
            "id": user_id,
            "team_id": self._team,
            "name": name,
            "deleted": False,
            "real_name": f"User {user_id}",
            "tz": self.user_timezones.get(user_id, "UTC"),
            "is_bot": False,
            "is_admin": False,
            "profile": {"real_name": f"User {user_id}", "display_name": name},
        }
        user.update(self.users.get(user_id, {}))
        if _truthy(params.get("include_locale")):  # as on Slack: only when asked for
            user["locale"] = self.user_locales.get(user_id, "en-US")
        return {"user": user}

    # ------------------------------------------------------------------ the workspace

    def _channel(self, channel_id: str) -> dict[str, Any]:
        channel = self.channels.get(channel_id)
        if channel is None:
            if channel_id[:1] not in ("C", "G", "D"):
                raise _ApiError("channel_not_found")
            channel = self.add_channel(channel_id, is_private=channel_id.startswith("G"))
        return dict(channel)

    def _visible_channel(self, channel_id: str) -> dict[str, Any]:
        """The conversation as the bot sees it: a private one it is not a member of does not
        exist for it (Slack answers ``channel_not_found``, never ``not_in_channel``)."""
        channel = self._channel(channel_id)
        if channel["is_private"] and not channel["is_member"]:
            raise _ApiError("channel_not_found")
        # Another workspace's conversation does not exist for this workspace's token (an
        # org-wide install's token sees every workspace of its organisation).
        owner = self.channel_teams.get(channel_id, self._team)
        if owner != self._team and not self._same_org(owner):
            raise _ApiError("channel_not_found")
        return channel

    def _same_org(self, team_id: str) -> bool:
        org = self.org_tokens.get(self._token or "")
        owner = self.workspaces.get(team_id)
        return org is not None and owner is not None and owner.enterprise_id == org

    def _writable_channel(self, params: dict[str, Any]) -> str:
        """The conversation a message goes to, or the error Slack gives for it.

        https://api.slack.com/methods/chat.postMessage: a user id posts in the bot's DM with
        that user (the App Home messages tab); a private channel, DM or group DM without the
        bot is ``channel_not_found``; an archived one ``is_archived``; a public channel the bot
        is not in takes the post with ``chat:write.public`` and is ``not_in_channel`` without.
        """
        channel_id = str(params.get("channel") or "")
        if not channel_id:
            raise _ApiError("channel_not_found")
        if channel_id[:1] in ("U", "W"):  # posting to a user id goes to the bot's DM with them
            if channel_id in self.user_errors:
                raise _ApiError(self.user_errors[channel_id])
            channel_id = self.im_channel(channel_id)
        if channel_id in self.channel_errors:
            raise _ApiError(self.channel_errors[channel_id])
        channel = self._visible_channel(channel_id)
        if channel["is_archived"]:
            raise _ApiError("is_archived")
        if not channel["is_member"] and "chat:write.public" not in self.scopes:
            raise _ApiError("not_in_channel")
        return channel_id


# ---------------------------------------------------------------------- helpers


def _channel_object(channel_id: str, *, name: str | None, team_id: str) -> dict[str, Any]:
    is_im = channel_id.startswith("D")
    return {
        "id": channel_id,
        "name": name or ("" if is_im else f"channel-{channel_id.lower()}"),
        "is_channel": not is_im,
        "is_group": False,
        "is_im": is_im,
        "is_mpim": False,
        "is_private": is_im,
        "is_archived": False,
        "is_general": False,
        "is_member": True,
        "created": 1_600_000_000,
        "context_team_id": team_id,
    }


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() in ("1", "true")


def _basic_auth(request: web.Request) -> tuple[str, str] | None:
    """The client id and secret of an ``Authorization: Basic`` header (RFC 6749 2.3.1:
    each form-encoded before they are joined)."""
    header = request.headers.get("Authorization", "")
    if not header.startswith("Basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:], validate=True).decode()
    except ValueError:
        return None
    client_id, _, secret = decoded.partition(":")
    return unquote_plus(client_id), unquote_plus(secret)


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header[:7].lower() == "bearer " else None


def _message_content(
    params: dict[str, Any], *, unsupported: frozenset[str] = frozenset()
) -> tuple[str, list[dict[str, Any]] | None]:
    """The text and blocks of a message, or the error Slack gives for them."""
    text = params.get("text")
    text = "" if text is None else str(text)
    blocks = params.get("blocks")
    if isinstance(blocks, str):
        try:
            blocks = json.loads(blocks)
        except ValueError:
            raise _ApiError("invalid_blocks_format") from None
    if blocks is not None:
        _check_blocks(blocks, unsupported=unsupported)
    if not text.strip() and not blocks and not params.get("attachments"):
        raise _ApiError("no_text")
    if len(text) > MAX_TEXT_CHARS:
        raise _ApiError("msg_too_long")
    return text, blocks


# The block types of Block Kit's reference (https://docs.slack.dev/reference/block-kit/blocks);
# Slack answers any other type invalid_blocks.
BLOCK_TYPES = frozenset(
    {"actions", "container", "context", "context_actions", "divider", "file", "header", "image",
     "input", "markdown", "rich_text", "section", "table", "video"}
)  # fmt: skip
# The container block (https://docs.slack.dev/reference/block-kit/blocks/container-block):
# a plain_text title of at most 150 characters, 1 to 10 child blocks of these types.
MAX_CONTAINER_TITLE = 150
MAX_CONTAINER_CHILDREN = 10
CONTAINER_CHILD_TYPES = frozenset(
    {"actions", "context", "divider", "file", "header", "image", "input", "rich_text",
     "section", "table", "video"}
)  # fmt: skip
# The context_actions block (https://docs.slack.dev/reference/block-kit/blocks/
# context-actions-block): 1 to 5 feedback_buttons or icon_button elements.
MAX_CONTEXT_ACTIONS_ELEMENTS = 5
CONTEXT_ACTIONS_ELEMENT_TYPES = frozenset({"feedback_buttons", "icon_button"})
# The feedback buttons element (https://docs.slack.dev/reference/block-kit/block-elements/
# feedback-buttons-element): positive_button and negative_button, each a plain_text text of
# at most 75 characters, a value of at most 2000 and an accessibility_label of at most 75.
MAX_ACCESSIBILITY_LABEL = 75


def block_problems(blocks: Any, *, unsupported: frozenset[str] = frozenset()) -> list[str]:
    """What Slack finds wrong with a message's blocks, in its words (none: it takes them).

    ``unsupported`` are block types a workspace's Slack does not take (yet): each is a
    problem, as an unknown type is. A container's children count towards the 50 blocks of a
    message: the reference does not say they do not, and the stricter reading is the one a
    message must pass.
    """
    problems: list[str] = []
    if not isinstance(blocks, list):
        return ["must be an array [json-pointer:/blocks]"]
    count = len(blocks) + sum(
        len(b.get("child_blocks") or ())
        for b in blocks
        if isinstance(b, dict) and isinstance(b.get("child_blocks"), list)
    )
    if count > MAX_BLOCKS:
        problems.append(f"no more than {MAX_BLOCKS} items allowed [json-pointer:/blocks]")
    for i, block in enumerate(blocks):
        _check_block(block, f"/blocks/{i}", problems, unsupported=unsupported)
    return problems


def _check_block(
    block: Any, where: str, problems: list[str], *, unsupported: frozenset[str]
) -> None:
    if not isinstance(block, dict) or "type" not in block:
        problems.append(f"missing required field: type [json-pointer:{where}]")
        return
    kind = block["type"]
    if kind not in BLOCK_TYPES or kind in unsupported:
        problems.append(f"unsupported type: {kind} [json-pointer:{where}/type]")
        return
    if len(str(block.get("block_id", ""))) > MAX_ACTION_ID:
        problems.append(f"must be less than 256 characters [json-pointer:{where}/block_id]")
    if kind == "section":
        text = block.get("text")
        if text is None and not block.get("fields"):
            problems.append(f"must provide text or fields [json-pointer:{where}]")
        texts = ([("text", text)] if text else []) + [
            (f"fields/{j}", f) for j, f in enumerate(block.get("fields", []))
        ]
        for path, item in texts:
            _check_text(item, MAX_SECTION_TEXT, f"{where}/{path}", problems)
    elif kind == "header":
        _check_text(block.get("text"), MAX_HEADER_TEXT, f"{where}/text", problems)
    elif kind == "context":
        elements = block.get("elements") or []
        if not elements or len(elements) > MAX_CONTEXT_ELEMENTS:
            problems.append(
                f"must have 1 to {MAX_CONTEXT_ELEMENTS} items [json-pointer:{where}/elements]"
            )
    elif kind == "actions":
        elements = block.get("elements") or []
        if not elements or len(elements) > MAX_ACTIONS_ELEMENTS:
            problems.append(
                f"must have 1 to {MAX_ACTIONS_ELEMENTS} items [json-pointer:{where}/elements]"
            )
        for j, element in enumerate(elements):
            _check_element(element, f"{where}/elements/{j}", problems)
    elif kind == "container":
        _check_container(block, where, problems, unsupported=unsupported)
    elif kind == "context_actions":
        elements = block.get("elements") or []
        if not isinstance(elements, list) or not 0 < len(elements) <= MAX_CONTEXT_ACTIONS_ELEMENTS:
            problems.append(
                f"must have 1 to {MAX_CONTEXT_ACTIONS_ELEMENTS} items "
                f"[json-pointer:{where}/elements]"
            )
            return
        for j, element in enumerate(elements):
            path = f"{where}/elements/{j}"
            if not isinstance(element, dict):
                problems.append(f"must be an object [json-pointer:{path}]")
            elif element.get("type") not in CONTEXT_ACTIONS_ELEMENT_TYPES:
                problems.append(f"unsupported type: {element.get('type')} [json-pointer:{path}]")
            else:
                _check_element(element, path, problems)


def _check_container(
    block: dict[str, Any], where: str, problems: list[str], *, unsupported: frozenset[str]
) -> None:
    """https://docs.slack.dev/reference/block-kit/blocks/container-block: a title (or a
    rich_text_title), 1 to 10 child blocks of the listed types, booleans for is_collapsible
    and default_collapsed, and default_collapsed only with is_collapsible."""
    if "rich_text_title" not in block:
        title = block.get("title")
        if isinstance(title, dict) and title.get("type") != "plain_text":
            problems.append(f"must be a plain_text object [json-pointer:{where}/title]")
        else:
            _check_text(title, MAX_CONTAINER_TITLE, f"{where}/title", problems)
    for flag in ("is_collapsible", "default_collapsed"):
        if flag in block and not isinstance(block[flag], bool):
            problems.append(f"must be a boolean [json-pointer:{where}/{flag}]")
    if block.get("default_collapsed") is True and block.get("is_collapsible") is not True:
        problems.append(
            f"default_collapsed requires is_collapsible [json-pointer:{where}/default_collapsed]"
        )
    children = block.get("child_blocks")
    if not isinstance(children, list) or not 0 < len(children) <= MAX_CONTAINER_CHILDREN:
        problems.append(
            f"must have 1 to {MAX_CONTAINER_CHILDREN} items [json-pointer:{where}/child_blocks]"
        )
        return
    for j, child in enumerate(children):
        path = f"{where}/child_blocks/{j}"
        kind = child.get("type") if isinstance(child, dict) else None
        if kind is not None and kind not in CONTAINER_CHILD_TYPES:
            problems.append(f"unsupported type: {kind} [json-pointer:{path}/type]")
        else:
            _check_block(child, path, problems, unsupported=unsupported)


def _check_blocks(blocks: Any, *, unsupported: frozenset[str] = frozenset()) -> None:
    """Block Kit's limits, answered as Slack does: ``invalid_blocks`` with the reasons
    (https://api.slack.com/methods/chat.postMessage#errors)."""
    if not isinstance(blocks, list):
        raise _ApiError("invalid_blocks_format")
    problems = block_problems(blocks, unsupported=unsupported)
    if problems:
        error = _ApiError("invalid_blocks")
        error.details = {
            "errors": problems,
            "response_metadata": {"messages": [f"[ERROR] {p}" for p in problems]},
        }
        raise error


def _check_text(item: Any, limit: int, where: str, problems: list[str]) -> None:
    if not isinstance(item, dict) or item.get("type") not in ("mrkdwn", "plain_text"):
        problems.append(f"must be a text object [json-pointer:{where}]")
        return
    text = str(item.get("text", ""))
    if not text:
        problems.append(f"must be more than 0 characters [json-pointer:{where}/text]")
    elif len(text) > limit:
        problems.append(f"must be less than {limit + 1} characters [json-pointer:{where}/text]")


def _check_element(element: Any, where: str, problems: list[str]) -> None:
    if not isinstance(element, dict) or "type" not in element:
        problems.append(f"missing required field: type [json-pointer:{where}]")
        return
    if element["type"] == "button":
        _check_text(element.get("text"), MAX_BUTTON_TEXT, f"{where}/text", problems)
        if len(str(element.get("value", ""))) > MAX_BUTTON_VALUE:
            problems.append(f"must be less than 2001 characters [json-pointer:{where}/value]")
    if element["type"] == "feedback_buttons":
        for side in ("positive_button", "negative_button"):
            _check_feedback_button(element.get(side), f"{where}/{side}", problems)
    if len(str(element.get("action_id", ""))) > MAX_ACTION_ID:
        problems.append(f"must be less than 256 characters [json-pointer:{where}/action_id]")


def _check_feedback_button(button: Any, where: str, problems: list[str]) -> None:
    """https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element:
    text (plain_text only, at most 75) and value (at most 2000) required."""
    if not isinstance(button, dict):
        problems.append(f"missing required field [json-pointer:{where}]")
        return
    text = button.get("text")
    if isinstance(text, dict) and text.get("type") != "plain_text":
        problems.append(f"must be a plain_text object [json-pointer:{where}/text]")
    else:
        _check_text(text, MAX_BUTTON_TEXT, f"{where}/text", problems)
    value = button.get("value")
    if not isinstance(value, str) or not value:
        problems.append(f"missing required field: value [json-pointer:{where}/value]")
    elif len(value) > MAX_BUTTON_VALUE:
        problems.append(f"must be less than 2001 characters [json-pointer:{where}/value]")
    label = button.get("accessibility_label")
    if label is not None and len(str(label)) > MAX_ACCESSIBILITY_LABEL:
        problems.append(
            f"must be less than 76 characters [json-pointer:{where}/accessibility_label]"
        )


async def _read_params(request: web.Request) -> dict[str, Any]:
    """The call's arguments from the query string and a form or JSON body."""
    params: dict[str, Any] = dict(request.query)
    if not request.can_read_body:
        return params
    if request.content_type == "application/json":
        body = await request.json()
        if isinstance(body, dict):
            params.update(body)
        return params
    form = await request.post()
    for key, value in form.items():
        if isinstance(value, web.FileField):  # an uploaded file
            params[key] = {"filename": value.filename, "size": len(value.file.read())}
        elif not isinstance(value, str):
            params[key] = {"size": len(value)}
        elif key in _JSON_PARAMS:
            try:
                params[key] = json.loads(value)
            except ValueError:
                params[key] = value  # left for the method to refuse
        else:
            params[key] = value
    return params


# ---------------------------------------------------------------------- requests to the app


def slack_signature(secret: str, timestamp: int, body: bytes) -> str:
    """Slack's request signature: ``v0=`` HMAC-SHA256 of ``v0:{timestamp}:{body}``."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def signed_headers(
    secret: str,
    body: bytes,
    *,
    timestamp: int | None = None,
    content_type: str = "application/x-www-form-urlencoded",
) -> dict[str, str]:
    """The headers Slack sends with ``body``: its content type, timestamp and signature.

    ``timestamp`` defaults to now; pass an old one to test the 5-minute staleness check.
    """
    ts = int(time.time()) if timestamp is None else timestamp
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": str(ts),
        "X-Slack-Signature": slack_signature(secret, ts, body),
    }


def slash_command_body(
    command: str = "/trend",
    text: str = "subscribe rl",
    *,
    user_id: str = "U1",
    channel_id: str = "C1",
    team_id: str = DEFAULT_TEAM_ID,
    response_url: str,
    channel_name: str = "general",
    user_name: str | None = None,
    trigger_id: str = "1111.2222.abcd",
    api_app_id: str = "A1",
    enterprise_id: str | None = None,
    org_install: bool = False,
) -> bytes:
    """A slash command as Slack posts it to the app: an urlencoded form (from a workspace of
    an Enterprise Grid organisation: with ``enterprise_id``; ``is_enterprise_install`` true
    when the app was installed for the whole organisation)."""
    fields = {
        "token": "verification-token",
        "team_id": team_id,
        "team_domain": "fake-workspace",
        "channel_id": channel_id,
        "channel_name": "directmessage" if channel_id.startswith("D") else channel_name,
        "user_id": user_id,
        "user_name": user_name or f"user{user_id.lower()}",
        "command": command,
        "text": text,
        "api_app_id": api_app_id,
        "is_enterprise_install": "true" if org_install else "false",
        "response_url": response_url,
        "trigger_id": trigger_id,
    }
    if enterprise_id:
        fields["enterprise_id"] = enterprise_id
        fields["enterprise_name"] = f"Org {enterprise_id}"
    return urlencode(fields).encode()


async def shown_for_command(
    sl: FakeSlack,
    post: Callable[[bytes], Awaitable[tuple[int, str]]],
    text: str,
    *,
    response_name: str,
    **fields: Any,
) -> tuple[str, dict[str, Any]]:
    """``/trend text`` posted to the app by ``post`` (the status and body of its answer;
    ``fields`` as for :func:`slash_command_body`): what the user was shown and how, the
    acknowledgement's body (``"ack"``), or else the last post to the command's response_url
    named ``response_name`` (``"response_url"``)."""
    body = slash_command_body("/trend", text, response_url=sl.response_url(response_name), **fields)
    status, ack = await post(body)
    assert status == 200, ack
    if ack:
        return "ack", json.loads(ack)
    return "response_url", (await sl.wait_for_response(response_name))[-1]


def block_actions_payload(
    action_id: str,
    *,
    value: str | None = None,
    user_id: str = "U1",
    channel_id: str = "C1",
    team_id: str = DEFAULT_TEAM_ID,
    response_url: str,
    message_ts: str = "1700000000.000100",
    block_id: str = "actions",
    button_text: str = "Send",
    message: dict[str, Any] | None = None,
    element: str = "button",
) -> dict[str, Any]:
    """The payload of a button press. Without ``message`` the button was in an ephemeral
    message, which Slack does not echo back (``container.is_ephemeral``).

    ``element="feedback_buttons"``: a press of one of a feedback_buttons element's two
    buttons; the action is the element's ``action_id`` with the pressed button's ``text``
    and ``value`` (https://docs.slack.dev/tools/bolt-js/reference/interfaces/
    FeedbackButtonsAction, https://docs.slack.dev/reference/interaction-payloads/
    block_actions-payload)."""
    action: dict[str, Any] = {
        "type": element,
        "action_id": action_id,
        "block_id": block_id,
        "text": {"type": "plain_text", "text": button_text, "emoji": True},
        "action_ts": f"{time.time():.6f}",
    }
    if value is not None:
        action["value"] = value
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {
            "id": user_id,
            "username": f"user{user_id.lower()}",
            "name": f"user{user_id.lower()}",
            "team_id": team_id,
        },
        "api_app_id": "A1",
        "token": "verification-token",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel_id,
            "is_ephemeral": message is None,
        },
        "trigger_id": "1111.2222.abcd",
        "team": {"id": team_id, "domain": "fake-workspace"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel_id, "name": "general"},
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [action],
    }
    if message is not None:
        payload["message"] = message
    return payload


def block_actions_body(payload: dict[str, Any]) -> bytes:
    """An interactivity request as Slack posts it: ``payload=<json>``, urlencoded."""
    return urlencode({"payload": json.dumps(payload)}).encode()


def event_body(
    event: dict[str, Any],
    *,
    event_id: str = "Ev0001",
    team_id: str = DEFAULT_TEAM_ID,
    api_app_id: str = "A1",
) -> bytes:
    """An Events API request as Slack posts it: JSON, the event in an ``event_callback``
    envelope (https://api.slack.com/apis/events-api#callback-field). Slack retries one it
    got no 200 for with the same ``event_id`` and an ``X-Slack-Retry-Num`` header."""
    envelope = {
        "token": "verification-token",
        "team_id": team_id,
        "api_app_id": api_app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": BOT_USER_ID,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
    }
    return json.dumps(envelope).encode()


def url_verification_body(challenge: str) -> bytes:
    """The request Slack sends when the Request URL is set; the app answers the challenge
    (https://api.slack.com/events/url_verification)."""
    return json.dumps(
        {"token": "verification-token", "challenge": challenge, "type": "url_verification"}
    ).encode()


__all__ = [
    "ALL_BOT_SCOPES",
    "DEFAULT_CLIENT_ID",
    "DEFAULT_CLIENT_SECRET",
    "DEFAULT_TEAM_ID",
    "DEFAULT_TOKEN",
    "FakeSlack",
    "LimitViolation",
    "SlackCall",
    "block_actions_body",
    "block_actions_payload",
    "event_body",
    "signed_headers",
    "slack_signature",
    "slash_command_body",
    "url_verification_body",
]
