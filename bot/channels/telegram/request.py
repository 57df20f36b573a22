"""python-telegram-bot's HTTP transport over aiohttp (:class:`AiohttpRequest`).

PTB's default transport, ``HTTPXRequest``, spends over a millisecond of CPU per request in
httpx and httpcore (their pool scans every connection on each request), which kept one
process below 200 sendMessage calls a second with nothing left for the rest of delivery;
aiohttp does the same request for a fraction of that (``bench/fanout.py`` measures both).

Parameters go as ``application/json`` (``multipart/form-data`` when files are uploaded, as
``HTTPXRequest`` sends them). Errors are raised the way ``HTTPXRequest`` raises them:
``TimedOut`` for a timeout, ``NetworkError`` for any other failure of the transport, each
chained to aiohttp's exception, so :func:`bot.channels.telegram.client.translate_error` can tell a
request that was never sent (:class:`aiohttp.ConnectionTimeoutError`) from one that may
have reached Telegram.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
from aiohttp.client_proto import ResponseHandler
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.delivery import pacing

if TYPE_CHECKING:  # PTB's own typing of BaseRequest's signatures
    from telegram._utils.types import JSONDict, ODVInput

DEFAULT_POOL_SIZE = 256  # HTTPXRequest's default
DEFAULT_TIMEOUT = 5.0  # HTTPXRequest's default read, write and connect timeouts
DEFAULT_POOL_TIMEOUT = 1.0  # HTTPXRequest's default
DEFAULT_MEDIA_WRITE_TIMEOUT = 20.0  # HTTPXRequest's default, for uploads
_JSON = {"Content-Type": "application/json"}
# A run of 19 digits may be an integer past 64 bits. Found by mapping every digit to "0" and
# everything else to a space, then searching: a tenth of the time of a regular expression.
_DIGITS_ONLY = bytes(ord("0") if chr(i).isdigit() and i < 128 else ord(" ") for i in range(256))
_LONG_DIGITS = b"0" * 19


class AiohttpRequest(BaseRequest):
    """A :class:`telegram.request.BaseRequest` on one :class:`aiohttp.ClientSession`.

    The session is made on first use in the running event loop (so a :class:`telegram.Bot`
    can send before it is initialised, as with ``HTTPXRequest``), closed by
    :meth:`shutdown`, and made again by :meth:`initialize`. After :meth:`shutdown` and
    before :meth:`initialize`, a request raises ``RuntimeError("... not initialized")``.

    Timeouts map onto aiohttp's: ``pool_timeout + connect_timeout`` bounds getting a
    connection (waiting for a free one in the pool, then connecting: aiohttp's ``connect``),
    ``connect_timeout`` the TCP connect alone (``sock_connect``), ``read_timeout`` each wait
    for data from Telegram (``sock_read``). aiohttp has no write timeout: a request's whole
    time is bounded by the sum of the four (``total``) instead, so a stalled upload still
    ends. ``None`` for any of them means no limit.

    Args:
        connection_pool_size: at most this many connections to Telegram at once.
        read_timeout: default seconds to wait for data from Telegram.
        write_timeout: default seconds for sending a request (part of ``total``).
        connect_timeout: default seconds to connect.
        pool_timeout: default seconds to wait for a free connection.
        media_write_timeout: ``write_timeout`` for requests that upload files.
    """

    __slots__ = (
        "_closed",
        "_connect_timeout",
        "_media_write_timeout",
        "_pool_size",
        "_pool_timeout",
        "_read_timeout",
        "_session",
        "_write_timeout",
    )

    def __init__(
        self,
        *,
        connection_pool_size: int = DEFAULT_POOL_SIZE,
        read_timeout: float | None = DEFAULT_TIMEOUT,
        write_timeout: float | None = DEFAULT_TIMEOUT,
        connect_timeout: float | None = DEFAULT_TIMEOUT,
        pool_timeout: float | None = DEFAULT_POOL_TIMEOUT,
        media_write_timeout: float | None = DEFAULT_MEDIA_WRITE_TIMEOUT,
    ) -> None:
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None
        self._closed = False

    @property
    def read_timeout(self) -> float | None:
        """See :attr:`telegram.request.BaseRequest.read_timeout`."""
        return self._read_timeout

    async def initialize(self) -> None:
        """See :meth:`telegram.request.BaseRequest.initialize`."""
        self._closed = False
        self._open()

    async def shutdown(self) -> None:
        """See :meth:`telegram.request.BaseRequest.shutdown`. Idempotent."""
        self._closed = True
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    def _open(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size)
            # Each connection's protocol: aiohttp's own, whose writes stamp the pace.
            connector._factory = functools.partial(_StampingHandler, loop=connector._loop)  # type: ignore[assignment]
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers={"User-Agent": self.USER_AGENT},
                # PTB reads the body itself; aiohttp need not track cookies for the Bot API.
                cookie_jar=aiohttp.DummyCookieJar(),
                raise_for_status=False,
            )
        return self._session

    @staticmethod
    def parse_json_payload(payload: bytes) -> JSONDict:
        """See :meth:`telegram.request.BaseRequest.parse_json_payload`; parsed by orjson
        (in a fifth of the time ``json.loads`` takes for a sent message's answer). An answer
        orjson would read otherwise goes to PTB's own parser: one that is not valid UTF-8
        JSON (PTB replaces bytes that are not UTF-8, or raises its
        ``TelegramError("Invalid server response")``), and one with a run of 19 digits,
        which may be an integer past 64 bits (orjson makes a float of it)."""
        if _LONG_DIGITS not in payload.translate(_DIGITS_ONLY):  # orjson: floats of those
            try:
                parsed: JSONDict = orjson.loads(payload)
            except orjson.JSONDecodeError:
                pass
            else:
                return parsed
        return BaseRequest.parse_json_payload(payload)

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """See :meth:`telegram.request.BaseRequest.do_request`.

        Raises:
            telegram.error.TimedOut: a timeout; chained to
                :class:`aiohttp.ConnectionTimeoutError` when no connection was had (the
                request was not sent), to another timeout when it may have been.
            telegram.error.NetworkError: any other failure of the transport.
            RuntimeError: after :meth:`shutdown`, until :meth:`initialize`.
        """
        session = self._open()
        files = bool(request_data and request_data.contains_files)
        read = _given(read_timeout, self._read_timeout)
        write = _given(write_timeout, self._media_write_timeout if files else self._write_timeout)
        connect = _given(connect_timeout, self._connect_timeout)
        pool = _given(pool_timeout, self._pool_timeout)
        timeout = _timeout(pool, connect, write, read)
        body: aiohttp.FormData | bytes | None = None
        headers = None
        if request_data is not None:
            if files:
                body = _multipart(request_data)
            else:
                # The parameters as a JSON object of strings (nested values JSON-encoded, as
                # in a form), which the Bot API reads like a form. Percent-encoding the form
                # in Python cost about as much CPU as the rest of the request.
                body = _json_payload(request_data)
                headers = _JSON
        try:
            async with session.request(
                method, url, data=body, headers=headers, timeout=timeout
            ) as response:
                return response.status, await response.read()
        except aiohttp.ConnectionTimeoutError as exc:
            raise TimedOut(
                "Pool timeout: no connection to Telegram became free or could be made in "
                "time. The request was *not* sent."
            ) from exc
        except TimeoutError as exc:  # reading the answer, or the whole request, took too long
            raise TimedOut from exc
        except aiohttp.ClientError as exc:
            raise NetworkError(f"aiohttp.{type(exc).__name__}: {exc}") from exc


class _StampingHandler(ResponseHandler):
    """aiohttp's protocol of a connection, whose transport stamps each write for the pace
    once the bytes are handed to the kernel (:func:`bot.delivery.pacing.stamped_after`):
    a paced send counts from when its request is written, its last part included (aiohttp
    keeps the headers back to send them with the body, which a task of its own writes:
    before Python 3.12, on a later turn of the event loop, which a busy loop takes long to
    come round to). aiohttp's trace of a sent chunk comes right *before* the write, so a
    process that loses its core in between would stamp the send early."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if isinstance(transport, asyncio.WriteTransport):
            transport.write = pacing.stamped_after(transport.write)  # type: ignore[method-assign,assignment]
            transport.writelines = pacing.stamped_after(  # type: ignore[method-assign,assignment]
                transport.writelines
            )


def _given(value: ODVInput[float], default: float | None) -> float | None:
    """``value`` when the caller passed one (``None`` included), else ``default``."""
    if value is None or isinstance(value, int | float):
        return value
    return default


@functools.lru_cache(maxsize=64)
def _timeout(
    pool: float | None, connect: float | None, write: float | None, read: float | None
) -> aiohttp.ClientTimeout:
    """aiohttp's timeouts for PTB's four (see :class:`AiohttpRequest`); the few
    combinations in use are made once, not for every request."""
    parts = (pool, connect, write, read)
    return aiohttp.ClientTimeout(
        total=None if None in parts else sum(p for p in parts if p is not None),
        connect=None if pool is None or connect is None else pool + connect,
        sock_connect=connect,
        sock_read=read,
    )


def _json_payload(request_data: RequestData) -> bytes:
    """``request_data.json_payload``, with each value JSON-encoded once (PTB's property
    encodes every non-text value twice), by orjson: UTF-8 as it is, no spaces."""
    return orjson.dumps(
        {
            name: value if isinstance(value, str) else _json_text(value)
            for name, value in request_data.parameters.items()
        }
    )


def _json_text(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _multipart(request_data: RequestData) -> aiohttp.FormData:
    form = aiohttp.FormData(quote_fields=False)
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, (filename, content, mimetype) in request_data.multipart_data.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form


__all__ = ["AiohttpRequest"]
