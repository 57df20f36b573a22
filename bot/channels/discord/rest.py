"""Discord's REST API v10 over aiohttp: the bot's token, the rate limits, and its errors.

aiohttp, the transport of the bot's Telegram requests too: each connection's writes say
when a request is written, which the pacing counts a send from (on httpx a 1,000-channel
fan-out reached 0.53-0.84 of Discord's global limit on a loaded machine, on aiohttp
0.88-0.95: ``bench/discord_fanout.py``). Why not discord.py's ``HTTPClient`` or hikari's
REST client (both on aiohttp too): both wait out 429s and retry 5xx answers themselves,
inside the call, so the delivery engine could neither
count an attempt nor move on to another chat while one waits; both come with a Gateway
client, models and caches the bot has no use for (it answers interactions over HTTP). What
they would carry is small: a bucket per route read from the headers, the global limit,
and the error codes, which this module keeps in a hundred lines, with every decision left
to the engine (:mod:`bot.delivery.failures`).

Rate limits (https://discord.com/developers/docs/topics/rate-limits): every answer names
the route's bucket and what is left of it (``X-RateLimit-Remaining``,
``X-RateLimit-Reset-After``); a bucket used up holds its channel until it resets
(:attr:`RestClient.bucket_reset`). A 429 says how long to wait (``retry_after``) and
whether the limit is the global one (``global``): then no request of this process leaves
before that time. Invalid requests (401, 403, and 429 not of a ``shared`` bucket) are
counted: 10,000 in 10 minutes get the IP banned for an hour, so past
``INVALID_BACKOFF`` of them the client waits before each request until the window
has room again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
from aiohttp.client_proto import ResponseHandler

from bot import __version__, metrics
from bot.delivery import pacing

log = logging.getLogger("bot.channels.discord")

# Invalid Request Limit: 10,000 invalid requests (401, 403, 429) in 10 minutes ban the IP.
INVALID_LIMIT = 10_000
INVALID_WINDOW_SECONDS = 600.0
# Past half of that, every request waits until the window has room again.
INVALID_BACKOFF = INVALID_LIMIT // 2
# A request that has not been answered in this long failed (a transient error).
REQUEST_TIMEOUT_SECONDS = 15.0
CONNECT_TIMEOUT_SECONDS = 5.0
# Connections to Discord at once: what 50 requests a second need at up to 4 s each.
MAX_CONNECTIONS = 200
# The error codes the bot acts on (topics/opcodes-and-status-codes#json).
UNKNOWN_CHANNEL = 10003
MISSING_ACCESS = 50001
CANNOT_DM = 50007
MISSING_PERMISSIONS = 50013
ARCHIVED_THREAD = 50083  # "Operation cannot be performed on an archived thread"
INVALID_FORM_BODY = 50035


class _Token:
    """The bot token, sent as ``Authorization: Bot TOKEN``; in no URL, repr or log."""

    __slots__ = ("_header",)

    def __init__(self, token: str) -> None:
        self._header = f"Bot {token}"

    def header(self) -> str:
        return self._header

    def __repr__(self) -> str:
        return "_Token(***)"


@dataclass(frozen=True, slots=True)
class DiscordError(Exception):
    """An answer that is not a success: its HTTP ``status``, Discord's JSON error ``code``
    (0 where there is none), its ``message``, and for 50035 the ``errors`` object; for a
    429, ``retry_after`` and whether the limit is the ``global`` one. ``status`` 0: no
    answer (a timeout or a lost connection; ``sent`` when the request may have arrived)."""

    status: int
    code: int = 0
    message: str = ""
    errors: Any = None
    retry_after: float = 0.0
    is_global: bool = False
    sent: bool = False

    def __str__(self) -> str:
        detail = f": {describe_errors(self.errors)}" if self.errors else ""
        return f"{self.status} {self.code} {self.message}{detail}".strip()


def describe_errors(errors: Any, path: str = "") -> str:
    """Discord's nested ``errors`` object as ``components.0.content: Must be ...``."""
    found: list[str] = []
    if isinstance(errors, dict):
        for key, value in errors.items():
            if key == "_errors" and isinstance(value, list):
                messages = [str(e.get("message", "")) for e in value if isinstance(e, dict)]
                found.append(f"{path or 'body'}: {'; '.join(messages)}")
            else:
                found.append(describe_errors(value, f"{path}.{key}" if path else str(key)))
    return "; ".join(part for part in found if part)[:500]


class InvalidRequests:
    """Invalid requests in the last 10 minutes, and the wait before the next request."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._at: deque[float] = deque()

    def count(self) -> int:
        self._trim(self._clock())
        return len(self._at)

    def add(self) -> None:
        self._at.append(self._clock())

    def wait(self) -> float:
        """Seconds until the window holds fewer than ``INVALID_BACKOFF`` (0: now)."""
        now = self._clock()
        self._trim(now)
        if len(self._at) < INVALID_BACKOFF:
            return 0.0
        return self._at[len(self._at) - INVALID_BACKOFF] + INVALID_WINDOW_SECONDS - now

    def _trim(self, now: float) -> None:
        while self._at and self._at[0] <= now - INVALID_WINDOW_SECONDS:
            self._at.popleft()


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    headers: Mapping[str, str]
    content: bytes
    reason: str


class RestClient:
    """The bot's requests to Discord (``DISCORD_API_BASE_URL``), with its token.

    The session is opened on the first request, in the loop that makes it."""

    def __init__(
        self,
        *,
        base_url: str,
        token: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._base = base_url.rstrip("/")
        self._token = _Token(token)
        self._session: aiohttp.ClientSession | None = None
        self.invalid = InvalidRequests(clock=clock)
        self.global_until = 0.0  # no request before this (a global 429)
        # A used-up bucket's reset, per key the caller names (a channel).
        self.bucket_reset: dict[str, float] = {}
        # Why Discord refused the bot token (a 401), until a request with it succeeds.
        self.auth_error: str | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS)
            # Each connection's protocol: aiohttp's own, whose writes stamp the pace.
            connector._factory = functools.partial(_StampingHandler, loop=connector._loop)  # type: ignore[assignment]
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(
                    total=REQUEST_TIMEOUT_SECONDS, sock_connect=CONNECT_TIMEOUT_SECONDS
                ),
                # https://discord.com/developers/docs/reference#user-agent
                headers={"User-Agent": f"DiscordBot (https://github.com/trendbot, {__version__})"},
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def now(self) -> float:
        """The client's clock (what ``global_until`` and ``bucket_reset`` are on)."""
        return self._clock()

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        files: dict[str, tuple[str, bytes, str]] | None = None,
        params: dict[str, str] | None = None,
        bucket: str | None = None,
        bot: bool = True,
        paced: bool = False,
    ) -> Any:
        """One request; its JSON answer (None for 204).

        Args:
            body: the JSON body (with ``files``, the form's ``payload_json``).
            files: form field -> (file name, content, content type).
            bucket: the key under which the route's bucket is kept (a channel's id).
            bot: send the bot token (interaction callbacks and their webhooks need none).
            paced: the caller went through the pacing (a message of the delivery engine):
                while a global 429 holds, it is refused at once, with no request, as a 429
                with the time left, and goes through the pacing again after it. Waiting here
                instead would let every send held meanwhile go at once when it ends, and
                draw more 429s; other requests wait.

        Raises:
            DiscordError: any answer but a success, or no answer at all.
        """
        if bot:  # interaction callbacks and their webhooks are outside the global limit
            await self._before(paced=paced)
        data: aiohttp.FormData | bytes | None = None
        headers: dict[str, str] = {}
        if bot:
            headers["Authorization"] = self._token.header()
        if files:
            form = aiohttp.FormData()
            form.add_field("payload_json", orjson.dumps(body).decode(),
                           content_type="application/json")  # fmt: skip
            for name, (filename, content, content_type) in files.items():
                form.add_field(name, content, filename=filename, content_type=content_type)
            data = form
        elif body is not None:
            data = orjson.dumps(body)
            headers["Content-Type"] = "application/json"
        try:
            async with self._open().request(
                method, self._base + path, data=data, params=params, headers=headers
            ) as response:
                answer = _Answer(
                    response.status, response.headers, await response.read(),
                    response.reason or "",
                )  # fmt: skip
        except aiohttp.ConnectionTimeoutError:  # no connection: the request was not sent
            raise DiscordError(0, message="connection timeout") from None
        except TimeoutError:  # the answer did not come: the message may have been made
            raise DiscordError(0, message="timeout", sent=True) from None
        except aiohttp.ClientConnectorError as exc:
            raise DiscordError(0, message=type(exc).__name__) from None
        except aiohttp.ClientError as exc:
            raise DiscordError(0, message=type(exc).__name__, sent=True) from None
        self._read_bucket(answer, bucket)
        if bot and answer.status != 401:
            self.auth_error = None
        if answer.status == 204:
            return None
        if 200 <= answer.status < 300:
            return orjson.loads(answer.content) if answer.content else None
        raise self._failure(answer)

    async def _before(self, *, paced: bool) -> None:
        held = self.global_until - self._clock()
        if paced and held > 0:
            raise DiscordError(429, message="global rate limit", retry_after=held, is_global=True)
        wait = max(held, self.invalid.wait())
        if wait > 0:
            await asyncio.sleep(wait)

    def _read_bucket(self, response: _Answer, bucket: str | None) -> None:
        if bucket is None:
            return
        remaining = response.headers.get("X-RateLimit-Remaining")
        reset_after = _seconds(response.headers.get("X-RateLimit-Reset-After"))
        if remaining == "0" and reset_after is not None:
            self.bucket_reset[bucket] = self._clock() + reset_after
        else:
            self.bucket_reset.pop(bucket, None)

    def _failure(self, response: _Answer) -> DiscordError:
        status = response.status
        try:
            body = orjson.loads(response.content) if response.content else {}
        except orjson.JSONDecodeError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        scope = response.headers.get("X-RateLimit-Scope", "")
        if status == 401:
            self.auth_error = "unauthorized: Discord refused DISCORD_BOT_TOKEN"
        if status in (401, 403) or (status == 429 and scope != "shared"):
            self.invalid.add()
            metrics.INVALID_REQUESTS.labels("discord", str(status)).inc()
        retry_after = 0.0
        is_global = False
        if status == 429:
            retry_after = _seconds(body.get("retry_after")) or (
                _seconds(response.headers.get("Retry-After")) or 1.0
            )
            is_global = bool(body.get("global")) or (
                response.headers.get("X-RateLimit-Global", "").lower() == "true"
            )
            if is_global:
                self.global_until = max(self.global_until, self._clock() + retry_after)
                log.warning(
                    "discord: the global rate limit was reached; nothing is sent for %.1fs",
                    retry_after,
                    extra={"platform": "discord"},
                )
        code = body.get("code")
        return DiscordError(
            status,
            code=code if isinstance(code, int) else 0,
            message=str(body.get("message") or response.reason)[:200],
            errors=body.get("errors"),
            retry_after=retry_after,
            is_global=is_global,
        )


def _seconds(value: Any) -> float | None:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if 0 <= seconds < 86_400 else None


class _StampingHandler(ResponseHandler):
    """aiohttp's protocol of a connection, whose transport tells the pacing when each part
    of a request has been handed to the kernel (:func:`bot.delivery.pacing.request_written`):
    a paced send counts from then, so one that waited for a connection, or for the core,
    after its turn does not land closer to the next second's sends than Discord's global
    limit allows. aiohttp's trace of a sent chunk comes right *before* the write, which
    a process that loses its core in between would count early (in a 1,000-channel
    fan-out on a loaded machine, a handful of global 429s in its first seconds)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if isinstance(transport, asyncio.WriteTransport):
            transport.write = _stamped_after(transport.write)  # type: ignore[method-assign]
            transport.writelines = _stamped_after(transport.writelines)  # type: ignore[method-assign]


def _stamped_after(write: Callable[..., None]) -> Callable[..., None]:
    def stamped(*args: Any) -> None:
        write(*args)
        pacing.request_written()

    return stamped
