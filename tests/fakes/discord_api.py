"""A local HTTP server that speaks Discord's REST API v10, for tests; and signed interactions.

The bot's REST client runs unchanged against it with ``DISCORD_API_BASE_URL=dc.base_url``.
Every request body is validated against Discord's own OpenAPI description
(``tests/data/discord/openapi.json``, trimmed from the public repository
discord/discord-api-spec, MIT: ``tests/data/discord/README.md``); a body it refuses is
answered as Discord answers it, 400 with code 50035 "Invalid Form Body" and the error's
place in ``errors``. Beyond the schema the fake enforces what the documentation says and
the schema cannot:

* a message's ``content`` is at most 2,000 characters and its embeds 6,000 in all
  (https://discord.com/developers/docs/resources/message#create-message, "Limits");
* with ``IS_COMPONENTS_V2`` (``1 << 15``) a message has no ``content``, ``embeds``,
  ``poll`` or ``sticker_ids``, at most 40 components in all, nested ones counted, and at
  most 4,000 characters of text across them
  (https://discord.com/developers/docs/components/reference, "Component Reference");
  without it no layout component (container, text display...) is accepted;
* an empty message is code 50006 (https://discord.com/developers/docs/topics/opcodes-and-
  status-codes#json, "JSON Error Codes");
* rate limits (https://discord.com/developers/docs/topics/rate-limits): every answer to a
  message create carries the route's bucket in ``X-RateLimit-Limit``, ``-Remaining``,
  ``-Reset``, ``-Reset-After`` and ``-Bucket``; past ``route_limit`` creates per channel
  within ``route_window`` seconds, or past ``global_rate`` requests of the bot in any
  second (interaction endpoints aside, "Global Rate Limit"), the answer is 429 with
  ``Retry-After``, ``X-RateLimit-Scope`` (``user`` or ``global``), ``X-RateLimit-Global``
  for the global one, and the JSON body ``{"message", "retry_after", "global"}``; each is
  kept in ``limit_violations``;
* invalid requests (401, 403 and 429 answers, "Invalid Request Limit") are counted in
  ``invalid_requests``: 10,000 of them in 10 minutes get an IP banned;
* a message create with ``nonce`` and ``enforce_nonce`` that repeats a nonce of the last
  few minutes in the channel returns that earlier message and creates none
  (https://discord.com/developers/docs/resources/message#create-message, ``enforce_nonce``);
* an interaction is answered once (40060 "Interaction has already been acknowledged"),
  within 3 seconds of its creation (10062 "Unknown interaction"), and its follow-ups go
  to ``/webhooks/APPLICATION/TOKEN`` for 15 minutes after
  (https://discord.com/developers/docs/interactions/receiving-and-responding).

Failures are the fake's input: ``add_channel(cid)`` makes a channel exist (any other is
10003 "Unknown Channel", 404); ``channel_errors[cid] = 50001`` (Missing Access), ``50013``
(Missing Permissions) or ``50007`` (Cannot send messages to this user) answer 403, ``50083``
(a thread archived and locked) 400;
``fail_next(route, status=500)`` answers the next calls with a server error;
``drop_next(route)`` loses their connection; ``latency`` delays every answer.

``sign_request`` and the ``*_interaction`` helpers build what Discord itself posts to an
app's Interactions Endpoint URL, signed with ``TEST_SIGNING_KEY`` (Ed25519), whose public
half is ``TEST_PUBLIC_KEY``.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import json
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import fastjsonschema
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.fakes.base import Dropped, LocalApiServer
from tests.fakes.telegram_api import _STAMPED_PORTS, _arrived

SPEC_PATH = Path(__file__).resolve().parents[1] / "data" / "discord" / "openapi.json"
API_PREFIX = "/api/v10"
DEFAULT_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GfakeX.fake-discord-token-0123456789abcdef"
APPLICATION_ID = "1100000000000000001"
BOT_USER_ID = APPLICATION_ID  # a bot's user id is its application's id
# A fixed test key: 32 bytes of seed, so a test can sign as Discord does.
TEST_SIGNING_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
TEST_PUBLIC_KEY = TEST_SIGNING_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

IS_COMPONENTS_V2 = 1 << 15  # Message Flags (resources/message#message-object-message-flags)
EPHEMERAL = 1 << 6
MAX_CONTENT_CHARS = 2000  # Create Message: "content: up to 2000 characters"
MAX_EMBED_CHARS = 6000  # Embed Limits: title, description, fields, footer, author in all
MAX_V2_COMPONENTS = 40  # Component Reference: "up to 40 total components"
MAX_V2_TEXT_CHARS = 4000  # Component Reference: "4000 characters" of text in all
# Component types (components/reference#component-object-component-types) that exist only
# in Components V2 messages: section, text display, thumbnail, gallery, file, separator,
# container.
V2_ONLY_TYPES = frozenset({9, 10, 11, 12, 13, 14, 17})
# Rate limits: Discord publishes none for the message-create route ("should not be hard
# coded"); 5 per 5 seconds per channel is what its headers have long said.
ROUTE_LIMIT = 5
ROUTE_WINDOW_SECONDS = 5.0
GLOBAL_RATE = 50  # "All bots can make up to 50 requests per second to our API"
INTERACTION_ANSWER_SECONDS = 3.0  # receiving-and-responding: "within 3 seconds"
INTERACTION_TOKEN_SECONDS = 15 * 60  # "Interaction tokens are valid for 15 minutes"
NONCE_WINDOW_SECONDS = 5 * 60  # enforce_nonce: "in the past few minutes"
INVALID_WINDOW_SECONDS = 600  # Invalid Request Limit: 10,000 per 10 minutes
# Permissions (topics/permissions#permissions-bitwise-permission-flags).
ADMINISTRATOR = 1 << 3
MANAGE_CHANNELS = 1 << 4
MANAGE_GUILD = 1 << 5
SEND_MESSAGES = 1 << 11
VIEW_CHANNEL = 1 << 10
# Channel types (resources/channel#channel-object-channel-types).
GUILD_TEXT, DM, PUBLIC_THREAD = 0, 1, 11

# JSON error codes (topics/opcodes-and-status-codes#json) and their HTTP statuses.
ERRORS: dict[int, tuple[int, str]] = {
    10003: (404, "Unknown Channel"),
    10008: (404, "Unknown Message"),
    10015: (404, "Unknown Webhook"),
    10062: (404, "Unknown interaction"),
    40060: (400, "Interaction has already been acknowledged"),
    50001: (403, "Missing Access"),
    50006: (400, "Cannot send an empty message"),
    50007: (403, "Cannot send messages to this user"),
    50013: (403, "Missing Permissions"),
    50083: (400, "Thread is archived"),  # "Operation cannot be performed on an archived thread"
    50035: (400, "Invalid Form Body"),
}

_ids = itertools.count(1_200_000_000_000_000_000)


def snowflake() -> str:
    return str(next(_ids))


class _ApiError(Exception):
    def __init__(
        self,
        code: int,
        *,
        errors: dict[str, Any] | None = None,
        status: int | None = None,
        message: str | None = None,
    ) -> None:
        known_status, known_message = ERRORS.get(code, (400, "Bad Request"))
        super().__init__(message or known_message)
        self.status = status or known_status
        self.body: dict[str, Any] = {"message": message or known_message, "code": code}
        if errors is not None:
            self.body["errors"] = errors


class _Limited(Exception):
    def __init__(self, *, retry_after: float, scope: str) -> None:
        super().__init__(scope)
        self.retry_after = retry_after
        self.scope = scope


@dataclass(slots=True)
class DiscordCall:
    """One request the bot made, as the fake answered it (``status`` 0: dropped)."""

    method: str
    route: str  # "POST /channels/{channel_id}/messages"
    path: str
    body: Any
    at: float
    channel: str | None = None
    status: int = 0
    response: Any = None
    query: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True, slots=True)
class LimitViolation:
    at: float
    scope: str  # "user" (the route's bucket) or "global"
    channel: str | None


@dataclass(slots=True)
class _Failure:
    status: int
    code: int
    target: str | None
    remaining: int


@dataclass(slots=True)
class _Bucket:
    reset_at: float = 0.0  # monotonic
    used: int = 0


@dataclass(slots=True)
class _Interaction:
    id: str
    token: str
    created: float
    answered: int | None = None  # the callback type it was answered with
    original: dict[str, Any] | None = None
    event: asyncio.Event = field(default_factory=asyncio.Event)


def _load_spec() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    return spec


class _Schemas:
    """The request-body validators of the kept operations, compiled once per process
    (fastjsonschema: a digest's body is checked in about 2 ms, where a validator that
    walks the schema took over 100, and held the fake below Discord's own rate)."""

    _cache: ClassVar[dict[tuple[str, str], Callable[[Any], Any] | None]] = {}
    _spec: ClassVar[dict[str, Any] | None] = None

    @classmethod
    def validator(cls, route: str, method: str) -> Callable[[Any], Any] | None:
        key = (route, method)
        if key in cls._cache:
            return cls._cache[key]
        if cls._spec is None:
            cls._spec = _load_spec()
        operation = cls._spec["paths"][route][method.lower()]
        content = operation.get("requestBody", {}).get("content", {})
        schema = content.get("application/json", {}).get("schema")
        validator = None
        if schema is not None:
            # Local references resolve against this root, which carries the components.
            # The description is JSON Schema 2020-12; the keywords it uses ($ref with no
            # sibling but a description, oneOf, anyOf, allOf, const, enum, the bounds) mean
            # the same in draft 7, which fastjsonschema implements.
            root = {**schema, "components": cls._spec["components"]}
            validator = fastjsonschema.compile(root)
        cls._cache[key] = validator
        return validator


def form_errors(error: fastjsonschema.JsonSchemaValueException) -> dict[str, Any]:
    """A schema error as Discord's ``errors`` object: the field's path, then ``_errors``
    (https://discord.com/developers/docs/reference#error-messages)."""
    leaf: dict[str, Any] = {"_errors": [{"code": _error_code(error), "message": error.message}]}
    for part in reversed(list(error.path or [])[1:]):  # the first is "data", the body
        leaf = {str(part): leaf}
    return leaf


def _error_code(error: fastjsonschema.JsonSchemaValueException) -> str:
    return {
        "maxLength": "BASE_TYPE_MAX_LENGTH",
        "minLength": "BASE_TYPE_MIN_LENGTH",
        "maxItems": "BASE_TYPE_MAX_LENGTH",
        "required": "BASE_TYPE_REQUIRED",
        "type": "BASE_TYPE_BAD_TYPE",
        "enum": "BASE_TYPE_CHOICES",
    }.get(str(error.rule), "BASE_TYPE_INVALID")


def _invalid(where: list[str], message: str, code: str = "BASE_TYPE_INVALID") -> _ApiError:
    leaf: dict[str, Any] = {"_errors": [{"code": code, "message": message}]}
    for part in reversed(where):
        leaf = {part: leaf}
    return _ApiError(50035, errors=leaf)


def _walk(components: Any) -> list[dict[str, Any]]:
    """Every component of a message, nested ones included (a section's accessory too)."""
    found: list[dict[str, Any]] = []
    stack = list(components or [])
    while stack:
        item = stack.pop()
        if not isinstance(item, dict):
            continue
        found.append(item)
        stack.extend(item.get("components") or [])
        if isinstance(item.get("accessory"), dict):
            stack.append(item["accessory"])
    return found


def _text_chars(component: dict[str, Any]) -> int:
    """The characters of text a component shows: a text display's content, a button's
    label (counted too: the reference says "all text", which is no less)."""
    total = 0
    for key in ("content", "label"):
        value = component.get(key)
        if isinstance(value, str):
            total += len(value)
    return total


def check_message(body: dict[str, Any], *, interaction: bool = False) -> None:
    """The limits beyond the schema of a message body (module docstring); raises _ApiError."""
    flags = body.get("flags") or 0
    if flags & EPHEMERAL and not interaction:
        # Message Flags: EPHEMERAL "only visible to the user who invoked the Interaction".
        raise _invalid(["flags"], "Invalid flag: EPHEMERAL outside an interaction")
    components = body.get("components") or []
    everything = _walk(components)
    if flags & IS_COMPONENTS_V2:
        for name in ("content", "embeds", "poll", "sticker_ids"):
            if body.get(name):
                raise _invalid([name], f"{name} cannot be used with IS_COMPONENTS_V2")
        if len(everything) > MAX_V2_COMPONENTS:
            raise _invalid(
                ["components"],
                f"Must be {MAX_V2_COMPONENTS} or fewer in length.",
                "BASE_TYPE_MAX_LENGTH",
            )
        text = sum(_text_chars(c) for c in everything)
        if text > MAX_V2_TEXT_CHARS:
            raise _invalid(
                ["components"],
                f"The total text of the components must be {MAX_V2_TEXT_CHARS} or fewer "
                "characters.",
                "BASE_TYPE_MAX_LENGTH",
            )
        if not components:
            raise _ApiError(50006)
    else:
        for index, item in enumerate(components):
            if isinstance(item, dict) and item.get("type") in V2_ONLY_TYPES:
                raise _invalid(
                    ["components", str(index), "type"],
                    "This component type needs the IS_COMPONENTS_V2 flag",
                    "COMPONENT_LAYOUT_INVALID",
                )
        content = body.get("content")
        if isinstance(content, str) and len(content) > MAX_CONTENT_CHARS:
            raise _invalid(
                ["content"],
                f"Must be {MAX_CONTENT_CHARS} or fewer in length.",
                "BASE_TYPE_MAX_LENGTH",
            )
        embed_chars = sum(len(json.dumps(e)) for e in body.get("embeds") or [])
        if embed_chars > MAX_EMBED_CHARS:
            raise _invalid(["embeds"], "Embed size exceeds maximum size of 6000")
        if not (content or body.get("embeds") or components or body.get("attachments")):
            raise _ApiError(50006)
    ids = [c["custom_id"] for c in everything if isinstance(c.get("custom_id"), str)]
    if len(ids) != len(set(ids)):
        # Component Reference, custom_id: "must be unique per component".
        raise _invalid(["components"], "Component custom id cannot be duplicated")


class FakeDiscord(LocalApiServer[DiscordCall]):
    """Discord's REST API v10 on 127.0.0.1; use as ``async with FakeDiscord() as dc:``."""

    def __init__(
        self,
        *,
        token: str = DEFAULT_TOKEN,
        application_id: str = APPLICATION_ID,
        route_limit: int = ROUTE_LIMIT,
        route_window: float = ROUTE_WINDOW_SECONDS,
        global_rate: int = GLOBAL_RATE,
    ) -> None:
        super().__init__()
        self.token = token
        self.application_id = application_id
        self.route_limit = route_limit
        self.route_window = route_window
        self.global_rate = global_rate
        self.latency = 0.0
        self.channels: dict[str, int] = {}  # id -> channel type
        self.channel_errors: dict[str, int] = {}
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.commands: list[dict[str, Any]] = []
        self.command_puts = 0
        self.limit_violations: list[LimitViolation] = []
        self.invalid_requests: deque[float] = deque()
        self.interactions: dict[str, _Interaction] = {}  # by token
        self._buckets: dict[str, _Bucket] = {}
        self._global: list[float] = []  # arrivals of the last two seconds, in order
        self._nonces: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}

    # ------------------------------------------------------------------ set-up

    def _routes(self, app: web.Application) -> None:
        app.router.add_route("*", API_PREFIX + "/{tail:.*}", self._handle)

    async def start(self) -> None:
        await super().start()
        _STAMPED_PORTS.add(self.port)  # its connections read with the kernel's receive time

    async def close(self) -> None:
        _STAMPED_PORTS.discard(self.port)
        await super().close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{API_PREFIX}"

    def add_channel(self, channel_id: str, *, kind: int = GUILD_TEXT) -> str:
        self.channels[channel_id] = kind
        return channel_id

    def fail_next(
        self, route: str = "*", *, status: int = 500, code: int = 0, times: int = 1,
        channel: str | None = None,
    ) -> None:  # fmt: skip
        """The next ``times`` calls of ``route`` (``"POST /channels/{channel_id}/messages"``)
        answer ``status`` with ``code``."""
        self._add_failure(route, _Failure(status, code, channel, times))

    def drop_next(self, route: str = "*", *, times: int = 1, channel: str | None = None) -> None:
        self._add_drop(route, target=channel, times=times)

    def invalid_in_window(self) -> int:
        """Invalid requests (401, 403, 429) in the last 10 minutes."""
        self._trim_invalid(time.monotonic())
        return len(self.invalid_requests)

    def messages_to(self, channel_id: str) -> list[dict[str, Any]]:
        return list(self.messages.get(channel_id, []))

    def calls(self, route: str | None = None) -> list[DiscordCall]:
        return [c for c in self.sent if route is None or c.route == route]

    def delivered(self) -> int:
        return sum(1 for c in self.sent if self._is_delivered(c))

    @staticmethod
    def _is_delivered(call: DiscordCall) -> bool:
        return call.route == "POST /channels/{channel_id}/messages" and call.ok

    @staticmethod
    def _describe(call: DiscordCall) -> str:
        return f"{call.method} {call.path} -> {call.status}"

    # ------------------------------------------------------------------ interactions

    def new_interaction(self) -> _Interaction:
        """An interaction Discord has just created (id and token), to answer within 3 s."""
        found = _Interaction(
            id=snowflake(), token=f"aW50ZXJhY3Rpb24{snowflake()}tok", created=time.monotonic()
        )
        self.interactions[found.token] = found
        return found

    def callbacks(self, token: str | None = None) -> list[DiscordCall]:
        return [
            c
            for c in self.sent
            if c.route == "POST /interactions/{interaction_id}/{interaction_token}/callback"
            and (token is None or c.path.endswith(f"/{token}/callback"))
        ]

    def followups(self, token: str | None = None) -> list[DiscordCall]:
        return [
            c
            for c in self.sent
            if c.route.startswith(("POST /webhooks/", "PATCH /webhooks/"))
            and (token is None or f"/{token}" in c.path)
        ]

    async def interact(
        self,
        http: aiohttp.ClientSession,
        url: str,
        body: dict[str, Any],
        *,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, Any]:
        """Post an interaction to the bot's endpoint ``url`` as Discord does, signed unless
        ``headers`` are given, and take the HTTP answer as its response: validated as the
        callback endpoint validates one, within 3 seconds. Returns the status and the JSON
        answer (None when there is none)."""
        data = body_bytes(body) if raw is None else raw
        sent = time.monotonic()
        async with http.post(url, data=data, headers=headers or sign_request(data)) as response:
            status = response.status
            text = await response.text()
        answer = json.loads(text) if status == 200 and text else None
        found = self.interactions.get(str(body.get("token")))
        if found is not None and isinstance(answer, dict) and answer.get("type") != 1:
            assert time.monotonic() - sent <= INTERACTION_ANSWER_SECONDS, "answered too late"
            self._validate(
                "POST /interactions/{interaction_id}/{interaction_token}/callback", answer
            )
            inner = answer.get("data")
            if answer.get("type") in (4, 7) and isinstance(inner, dict):
                check_message(inner, interaction=True)
            found.answered = int(answer["type"])
            found.original = inner if isinstance(inner, dict) else None
            found.event.set()
        return status, answer

    async def _answered(self, token: str) -> None:
        """A follow-up waits a moment for its interaction's answer, which Discord takes
        from the app's HTTP answer (the test's :meth:`interact`)."""
        found = self.interactions.get(token)
        if found is not None and found.answered is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(found.event.wait(), timeout=1.0)

    # ------------------------------------------------------------------ the API

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        # When the request reached the fake, as the kernel received it, not when its
        # handler came to run: Discord counts requests as they reach it (the Bot API fake's
        # reasons, tests/fakes/telegram_api.py).
        arrived = _arrived(request)
        path = "/" + request.match_info["tail"]
        route, params = _route(request.method, path)
        files: dict[str, bytes] = {}
        try:
            body, files = await _read_body(request)
        except ValueError:
            body = _UNREADABLE
        call = DiscordCall(
            request.method, route, path, body, arrived, channel=params.get("channel_id"),
            query=dict(request.query), files=files,
        )  # fmt: skip
        headers: dict[str, str] = {}
        try:
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            if self._take_drop(route, call.channel):
                raise Dropped
            if route.startswith(("POST /webhooks/", "PATCH /webhooks/")):
                await self._answered(params.get("webhook_token", ""))
            answer = self._answer(request, route, params, body, headers, call)
            call.status, call.response = 200, answer
            if answer is None:
                call.status = 204
        except _ApiError as err:
            call.status, call.response = err.status, err.body
        except _Limited as limited:
            call.status = 429
            call.response = {
                "message": "You are being rate limited.",
                "retry_after": limited.retry_after,
                "global": limited.scope == "global",
            }
            headers["Retry-After"] = str(math.ceil(limited.retry_after))
            headers["X-RateLimit-Scope"] = limited.scope
            if limited.scope == "global":
                headers["X-RateLimit-Global"] = "true"
            self.limit_violations.append(LimitViolation(arrived, limited.scope, call.channel))
        except Dropped:
            call.status = 0
        if call.status in (401, 403, 429) and headers.get("X-RateLimit-Scope") != "shared":
            self.invalid_requests.append(arrived)
            self._trim_invalid(arrived)
        await self._record(call)
        if call.status == 0:
            assert request.transport is not None
            request.transport.abort()
            raise asyncio.CancelledError
        if call.status == 204:
            return web.Response(status=204, headers=headers)
        return web.json_response(call.response, status=call.status, headers=headers)

    def _trim_invalid(self, now: float) -> None:
        while self.invalid_requests and self.invalid_requests[0] < now - INVALID_WINDOW_SECONDS:
            self.invalid_requests.popleft()

    def _answer(
        self,
        request: web.Request,
        route: str,
        params: dict[str, str],
        body: Any,
        headers: dict[str, str],
        call: DiscordCall,
    ) -> Any:
        interaction_route = route.startswith(
            ("POST /interactions/", "POST /webhooks/", "PATCH /webhooks/")
        )
        if not interaction_route:
            # Authorization: Bot TOKEN (reference#authentication).
            if request.headers.get("Authorization") != f"Bot {self.token}":
                raise _ApiError(0, status=401, message="401: Unauthorized")
            self._take_global(call.at)
        failure = self._take_failure(route, call.channel)
        if failure is not None:
            raise _ApiError(failure.code, status=failure.status, message="Internal Server Error")
        if body is _UNREADABLE:
            raise _ApiError(50109, status=400, message="The request body contains invalid JSON.")
        if route == "GET /users/@me":
            return {"id": BOT_USER_ID, "username": "trendbot", "bot": True, "discriminator": "0"}
        if route in (
            "GET /applications/{application_id}/commands",
            "PUT /applications/{application_id}/commands",
        ):
            if params["application_id"] != self.application_id:
                raise _ApiError(50001)
            if request.method == "GET":
                return self.commands
            self._validate(route, body)
            self.command_puts += 1
            self.commands = [
                {
                    **command,
                    "id": snowflake(),
                    "application_id": self.application_id,
                    "version": snowflake(),
                }
                for command in body
            ]
            return self.commands
        if route == "POST /channels/{channel_id}/messages":
            return self._create_message(params["channel_id"], body, headers, call.at)
        if route == "POST /interactions/{interaction_id}/{interaction_token}/callback":
            return self._callback(params, body, call.at)
        if route.startswith(("POST /webhooks/", "PATCH /webhooks/")):
            return self._webhook(route, params, body, call.at)
        raise _ApiError(0, status=404, message="404: Not Found")

    def _validate(self, route: str, body: Any) -> None:
        method, _, path = route.partition(" ")
        validator = _Schemas.validator(path, method)
        if validator is None:
            return
        try:
            validator(body)
        except fastjsonschema.JsonSchemaValueException as error:
            raise _ApiError(50035, errors=form_errors(error)) from None

    def _take_global(self, now: float) -> None:
        """At most ``global_rate`` requests in any second ("Global Rate Limit"), counted on
        their arrival (two requests read in one turn of the loop may be handled out of the
        order they arrived in)."""
        window = self._global
        del window[: bisect.bisect_right(window, now - 2.0)]
        at = bisect.bisect_left(window, now)
        before = at - bisect.bisect_right(window, now - 1.0)  # in (now - 1, now)
        after = bisect.bisect_left(window, now + 1.0) - at  # in [now, now + 1)
        if max(before, after) >= self.global_rate:
            oldest = window[at - before] if before else now
            raise _Limited(retry_after=round(max(0.001, oldest + 1.0 - now), 3), scope="global")
        window.insert(at, now)

    def _take_route(self, channel_id: str, headers: dict[str, str], now: float) -> None:
        """The message-create bucket of the channel; its headers on every answer."""
        bucket = self._buckets.setdefault(channel_id, _Bucket())
        if now >= bucket.reset_at:
            bucket.reset_at, bucket.used = now + self.route_window, 0
        reset_after = max(0.0, bucket.reset_at - now)
        headers.update(
            {
                "X-RateLimit-Limit": str(self.route_limit),
                "X-RateLimit-Remaining": str(max(0, self.route_limit - bucket.used - 1)),
                "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
                "X-RateLimit-Reset-After": f"{reset_after:.3f}",
                "X-RateLimit-Bucket": "fake0message0create0bucket",
            }
        )
        if bucket.used >= self.route_limit:
            headers["X-RateLimit-Remaining"] = "0"
            raise _Limited(retry_after=round(reset_after, 3), scope="user")
        bucket.used += 1

    def _create_message(
        self, channel_id: str, body: Any, headers: dict[str, str], now: float
    ) -> dict[str, Any]:
        if channel_id not in self.channels:
            raise _ApiError(10003)
        self._take_route(channel_id, headers, now)
        code = self.channel_errors.get(channel_id)
        if code is not None:
            raise _ApiError(code)
        self._validate("POST /channels/{channel_id}/messages", body)
        check_message(body)
        nonce = body.get("nonce")
        if nonce is not None and body.get("enforce_nonce"):
            seen = self._nonces.get((channel_id, str(nonce)))
            if seen is not None and seen[0] > now - NONCE_WINDOW_SECONDS:
                return seen[1]
        message = self._message(channel_id, body)
        if nonce is not None:
            self._nonces[(channel_id, str(nonce))] = (now, message)
        self.messages.setdefault(channel_id, []).append(message)
        return message

    def _message(self, channel_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": snowflake(),
            "channel_id": channel_id,
            "type": 0,
            "content": body.get("content") or "",
            "components": body.get("components") or [],
            "embeds": body.get("embeds") or [],
            "flags": (body.get("flags") or 0) & ~EPHEMERAL,
            "author": {"id": BOT_USER_ID, "username": "trendbot", "bot": True},
            "nonce": body.get("nonce"),
        }

    def _callback(self, params: dict[str, str], body: Any, now: float) -> None:
        """The callback endpoint: an interaction answered once, within 3 seconds."""
        found = self.interactions.get(params["interaction_token"])
        if found is None or found.id != params["interaction_id"]:
            raise _ApiError(10062)
        if found.answered is not None:
            raise _ApiError(40060)
        if now - found.created > INTERACTION_ANSWER_SECONDS:
            raise _ApiError(10062)
        self._validate("POST /interactions/{interaction_id}/{interaction_token}/callback", body)
        kind = body.get("type")
        data = body.get("data")
        if kind in (4, 7) and isinstance(data, dict):
            check_message(data, interaction=True)
        found.answered = kind
        if kind == 4 and isinstance(data, dict):
            found.original = data
        found.event.set()
        return None

    def _webhook(self, route: str, params: dict[str, str], body: Any, now: float) -> dict[str, Any]:
        if params["webhook_id"] != self.application_id:
            raise _ApiError(10015)
        found = self.interactions.get(params["webhook_token"])
        if found is None or now - found.created > INTERACTION_TOKEN_SECONDS:
            raise _ApiError(10015)
        if found.answered is None:
            # A follow-up needs the interaction answered first (type 4, 5, 6 or 7).
            raise _ApiError(10015)
        self._validate(route, body)
        check_message(body, interaction=True)
        if route.startswith("PATCH"):
            found.original = {**(found.original or {}), **body}
            return {"id": snowflake(), **found.original}
        return {"id": snowflake(), "channel_id": "0", **body}


_UNREADABLE = object()

_ROUTES = (
    ("GET", ("users", "@me"), "GET /users/@me"),
    ("GET", ("applications", None, "commands"), "GET /applications/{application_id}/commands"),
    ("PUT", ("applications", None, "commands"), "PUT /applications/{application_id}/commands"),
    ("POST", ("channels", None, "messages"), "POST /channels/{channel_id}/messages"),
    (
        "POST",
        ("interactions", None, None, "callback"),
        "POST /interactions/{interaction_id}/{interaction_token}/callback",
    ),
    ("POST", ("webhooks", None, None), "POST /webhooks/{webhook_id}/{webhook_token}"),
    (
        "PATCH",
        ("webhooks", None, None, "messages", "@original"),
        "PATCH /webhooks/{webhook_id}/{webhook_token}/messages/@original",
    ),
)
_NAMES = {
    "applications": "application_id",
    "channels": "channel_id",
    "interactions": "interaction_id",
    "webhooks": "webhook_id",
}


def _route(method: str, path: str) -> tuple[str, dict[str, str]]:
    parts = tuple(p for p in path.split("/") if p)
    for want_method, shape, route in _ROUTES:
        if method != want_method or len(shape) != len(parts):
            continue
        if all(s is None or s == p for s, p in zip(shape, parts, strict=True)):
            names = [n.strip("{}") for n in route.split(" ", 1)[1].split("/") if n.startswith("{")]
            values = [p for s, p in zip(shape, parts, strict=True) if s is None]
            return route, dict(zip(names, values, strict=True))
    return f"{method} {path}", {}


async def _read_body(request: web.Request) -> tuple[Any, dict[str, bytes]]:
    """The JSON body, or a multipart form's ``payload_json`` and its files."""
    if request.method == "GET":
        return None, {}
    if request.content_type == "multipart/form-data":
        files: dict[str, bytes] = {}
        payload: Any = None
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, aiohttp.BodyPartReader):
                continue
            data = await part.read()
            if part.name == "payload_json":
                payload = json.loads(data)
            elif part.name:
                files[part.name] = bytes(data)
        return payload, files
    raw = await request.read()
    if not raw:
        return None, {}
    return json.loads(raw), {}


# ---------------------------------------------------------------------- signed requests


def sign_request(body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
    """The headers Discord sends with an interaction: ``X-Signature-Ed25519`` over the
    timestamp and the raw body (interactions/overview#setting-up-an-endpoint)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = TEST_SIGNING_KEY.sign(stamp.encode() + body).hex()
    return {
        "X-Signature-Ed25519": signature,
        "X-Signature-Timestamp": stamp,
        "Content-Type": "application/json",
    }


def _user(user_id: str, locale: str) -> dict[str, Any]:
    return {"id": user_id, "username": f"user{user_id[-4:]}", "global_name": None, "locale": locale}


def command_interaction(
    dc: FakeDiscord,
    name: str,
    argument: str | None = None,
    *,
    channel_id: str,
    user_id: str = "80351110224678912",
    guild_id: str | None = "41771983423143937",
    permissions: int = VIEW_CHANNEL | SEND_MESSAGES,
    locale: str = "en-US",
    channel_type: int = GUILD_TEXT,
) -> tuple[dict[str, Any], _Interaction]:
    """An APPLICATION_COMMAND interaction (type 2) of ``/name`` with its string option,
    from a guild member (``member.permissions``) or, without ``guild_id``, in a DM
    (interactions/receiving-and-responding#interaction-object)."""
    created = dc.new_interaction()
    data: dict[str, Any] = {"id": snowflake(), "name": name, "type": 1}
    if argument is not None:
        option = _option_name(dc, name)
        data["options"] = [{"name": option, "type": 3, "value": argument}]
    body: dict[str, Any] = {
        "id": created.id,
        "application_id": dc.application_id,
        "type": 2,
        "data": data,
        "token": created.token,
        "version": 1,
        "locale": locale,
        "channel_id": channel_id,
        "channel": {"id": channel_id, "type": channel_type},
        "app_permissions": str(VIEW_CHANNEL | SEND_MESSAGES),
        "entitlements": [],
        "authorizing_integration_owners": {"0": guild_id or ""},
        "context": 0 if guild_id else 1,
    }
    _place(body, guild_id=guild_id, user_id=user_id, permissions=permissions, locale=locale)
    return body, created


def component_interaction(
    dc: FakeDiscord,
    custom_id: str,
    *,
    channel_id: str,
    message: dict[str, Any] | None = None,
    user_id: str = "80351110224678912",
    guild_id: str | None = "41771983423143937",
    permissions: int = VIEW_CHANNEL | SEND_MESSAGES,
    locale: str = "en-US",
) -> tuple[dict[str, Any], _Interaction]:
    """A MESSAGE_COMPONENT interaction (type 3): a press of the button ``custom_id``."""
    created = dc.new_interaction()
    body: dict[str, Any] = {
        "id": created.id,
        "application_id": dc.application_id,
        "type": 3,
        "data": {"custom_id": custom_id, "component_type": 2},
        "token": created.token,
        "version": 1,
        "locale": locale,
        "channel_id": channel_id,
        "channel": {"id": channel_id, "type": GUILD_TEXT if guild_id else DM},
        "message": message or {"id": snowflake(), "channel_id": channel_id, "components": []},
        "app_permissions": str(VIEW_CHANNEL | SEND_MESSAGES),
    }
    _place(body, guild_id=guild_id, user_id=user_id, permissions=permissions, locale=locale)
    return body, created


def ping_interaction() -> dict[str, Any]:
    return {
        "id": snowflake(),
        "application_id": APPLICATION_ID,
        "type": 1,
        "token": "ping",
        "version": 1,
    }


def _place(
    body: dict[str, Any], *, guild_id: str | None, user_id: str, permissions: int, locale: str
) -> None:
    if guild_id is not None:
        body["guild_id"] = guild_id
        body["guild_locale"] = "en-US"
        body["member"] = {
            "user": _user(user_id, locale),
            "roles": [],
            "permissions": str(permissions),
            "joined_at": "2026-01-01T00:00:00+00:00",
        }
    else:
        body["user"] = _user(user_id, locale)


def _option_name(dc: FakeDiscord, name: str) -> str:
    for command in dc.commands:
        if command.get("name") == name:
            for option in command.get("options") or []:
                return str(option["name"])
    return "argument"


def body_bytes(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()
