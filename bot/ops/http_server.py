"""The HTTP server under :mod:`bot.ops.web`'s routes, bounded.

aiohttp's server bounds neither the connections it holds nor the time a client takes to
send a request, so a client that opens connections and sends nothing, or a header line
now and then, holds a descriptor each until the process runs out. The server here accepts
connections itself (:class:`HttpServer`): it holds at most :func:`connection_limit` of
them, closes one that has not sent a whole request head within ``HEAD_TIMEOUT_SECONDS`` or
has not been answered within ``REQUEST_TIMEOUT_SECONDS``, makes room for a new connection
by closing the one that has waited longest for a request, and stops within
``STOP_GRACE_SECONDS`` whatever its clients do.

Kept after measuring (``bench/http_server.py``): aiohttp 3.14 has size limits (headers,
``client_max_size``) and an idle ``keepalive_timeout`` that also closes a connection that
never finishes its first head, but no cap on connections and no way through a full
descriptor table; with 300 slow clients under 256 descriptors it answered 1 health probe of
3, this server 26 of 26. Caddy in front bounds what reaches it, but the bot also runs
without it (``make run``, a webhook sent straight to ``HTTP_PORT``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import resource
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.errors import ConfigError

log = logging.getLogger("bot.web")

# Connections held at once at most: Telegram opens up to 100 to a webhook (setWebhook
# max_connections), Slack and health probes a few; a reverse proxy reuses its own.
MAX_CONNECTIONS = 512
# Nor more than this share of the descriptor limit (RLIMIT_NOFILE): the rest is for the
# database pool, outgoing HTTP, git and the files of the process.
CONNECTION_SHARE_OF_DESCRIPTORS = 0.5
# And at least this many, whatever the limit: health probes and a webhook or two.
MIN_CONNECTIONS = 8
# A request's head (request line and headers) arrives within this of the connection's
# opening, or of the previous answer on a kept-alive connection (so idle ones close too).
HEAD_TIMEOUT_SECONDS = 10.0
# A request is read and answered within this of its head (the platforms wait 3-10 s).
REQUEST_TIMEOUT_SECONDS = 30.0
# On a stop, requests in flight get this long to be answered; then every connection closes.
STOP_GRACE_SECONDS = 4.0
# Out of descriptors, accepting pauses this long before it tries again...
ACCEPT_RETRY_SECONDS = 0.5
# ...and the log says so at most once in this interval, with the count since the last line.
EXHAUSTED_LOG_SECONDS = 60.0
# Connections the kernel queues while the server is not accepting (listen(2) backlog).
LISTEN_BACKLOG = 128
# accept(2) errors that mean the process or the system is out of a resource.
EXHAUSTION_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# The answer to a connection over the limit when none can be closed to make room.
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\n"
    b"Connection: close\r\n\r\n"
)


def connection_limit(descriptors: int) -> int:
    """The connections the server holds at once with ``descriptors`` files allowed to the
    process (its RLIMIT_NOFILE, ``resource.RLIM_INFINITY`` for none)."""
    if descriptors == resource.RLIM_INFINITY or descriptors < 0:
        return MAX_CONNECTIONS
    share = int(descriptors * CONNECTION_SHARE_OF_DESCRIPTORS)
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, share))


def descriptor_limit() -> int:
    """This process's limit on open files (the soft RLIMIT_NOFILE)."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class _Connection(web.RequestHandler):
    """aiohttp's handler of one connection, reporting to the guard that bounds it."""

    __slots__ = ("_guard",)

    def __init__(self, guard: _Guard, manager: web.Server, **kwargs: Any) -> None:
        super().__init__(manager, loop=asyncio.get_running_loop(), **kwargs)
        self._guard = guard

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._guard.waiting(self)

    def connection_lost(self, exc: BaseException | None) -> None:
        self._guard.forget(self)
        super().connection_lost(exc)

    def started(self) -> None:
        """Its request's head has arrived: the body and the answer are due now."""
        self._guard.busy(self)

    def answered(self) -> None:
        """Its request was answered: the next head is due now."""
        self._guard.answered(self)

    def abort(self) -> None:
        """Close the connection now, its descriptor with it, whatever is left to write."""
        transport = self.transport
        if transport is not None:
            transport.abort()


@web.middleware
async def request_deadline(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """A request whose head has arrived: its body and answer are due within
    ``REQUEST_TIMEOUT_SECONDS``; after it, the next head within ``HEAD_TIMEOUT_SECONDS``."""
    connection = request.protocol
    if not isinstance(connection, _Connection):  # served by another runner (tests)
        return await handler(request)
    connection.started()
    try:
        return await handler(request)
    finally:
        connection.answered()


class _Guard:
    """The connections of one server: how many, and each one's deadline.

    A connection is *waiting* (for a request head: new, or kept alive after an answer) or
    *busy* (a request being read and answered). Waiting ones are kept in the order they
    began to wait, so the one that has waited longest is the first to close for room.
    """

    def __init__(self, *, limit: int, head_seconds: float, request_seconds: float) -> None:
        self.limit = limit
        self._head_seconds = head_seconds
        self._request_seconds = request_seconds
        self._waiting: dict[_Connection, asyncio.TimerHandle] = {}
        self._busy: dict[_Connection, asyncio.TimerHandle] = {}
        self.timed_out = 0
        self.evicted = 0
        self.refused = 0

    def __len__(self) -> int:
        return len(self._waiting) + len(self._busy)

    def waiting(self, connection: _Connection) -> None:
        self._forget_timer(connection)
        self._waiting[connection] = self._deadline(connection, self._head_seconds)

    def busy(self, connection: _Connection) -> None:
        if connection in self._waiting or connection in self._busy:
            self._forget_timer(connection)
            self._busy[connection] = self._deadline(connection, self._request_seconds)

    def answered(self, connection: _Connection) -> None:
        if connection in self._busy:  # not when it was closed meanwhile
            self.waiting(connection)

    def forget(self, connection: _Connection) -> None:
        self._forget_timer(connection)

    def make_room(self) -> bool:
        """Room for one more connection: True at once under the limit; over it, the
        connection that has waited longest for a request is closed. False when every
        connection is busy with a request (each is bounded by its own deadline)."""
        if len(self) < self.limit:
            return True
        return self.close_longest_waiting()

    def close_longest_waiting(self) -> bool:
        """Close the connection that has waited longest for a request; False for none."""
        oldest = next(iter(self._waiting), None)
        if oldest is None:
            return False
        self._forget_timer(oldest)
        self.evicted += 1
        oldest.abort()
        return True

    def abort_all(self) -> None:
        for connection in [*self._waiting, *self._busy]:
            self._forget_timer(connection)
            connection.abort()

    def _deadline(self, connection: _Connection, seconds: float) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(seconds, self._expire, connection)

    def _expire(self, connection: _Connection) -> None:
        self._forget_timer(connection)
        self.timed_out += 1
        connection.abort()

    def _forget_timer(self, connection: _Connection) -> None:
        timer = self._waiting.pop(connection, None) or self._busy.pop(connection, None)
        if timer is not None:
            timer.cancel()


class HttpServer:
    """The listening sockets, their accept loops and the connections of ``trendbot run``.

    Accepting here instead of in asyncio's server: asyncio's accept loop answers a full
    descriptor table with a logged traceback for each try, up to 100 a wake-up and a
    growing number of retries, and it cannot hold a connection back or close one for room.
    """

    def __init__(self, runner: web.AppRunner, sockets: list[socket.socket], *, limit: int) -> None:
        self._runner = runner
        self._sockets = sockets
        self._guard = _Guard(
            limit=limit, head_seconds=HEAD_TIMEOUT_SECONDS, request_seconds=REQUEST_TIMEOUT_SECONDS
        )
        self._accepting: list[asyncio.Task[None]] = []
        self._exhausted = 0  # accept(2) failures since the last log line about them
        self._exhausted_logged_at: float | None = None

    @property
    def port(self) -> int:
        return int(self._sockets[0].getsockname()[1])

    @property
    def limit(self) -> int:
        return self._guard.limit

    @property
    def open_connections(self) -> int:
        return len(self._guard)

    def start(self) -> None:
        server = self._runner.server
        assert server is not None, "the runner is set up"
        for sock in self._sockets:
            self._accepting.append(asyncio.create_task(self._accept(sock, server)))

    async def _accept(self, sock: socket.socket, server: web.Server) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _address = await loop.sock_accept(sock)
            except ConnectionAbortedError:  # the client left before it was accepted
                continue
            except OSError as exc:
                self._cannot_accept(exc)
                if exc.errno not in EXHAUSTION_ERRNOS:
                    await asyncio.sleep(ACCEPT_RETRY_SECONDS)
                    continue
                # A descriptor of ours that waits for a request is worth less than a new
                # connection (a health probe, a webhook): free one (it closes when the loop
                # next turns), then try again; with none to free, wait.
                if self._guard.close_longest_waiting():
                    await asyncio.sleep(0)
                else:
                    await asyncio.sleep(ACCEPT_RETRY_SECONDS)
                continue
            if not self._guard.make_room():
                self._guard.refused += 1
                with contextlib.suppress(OSError):
                    conn.send(BUSY_RESPONSE)
                conn.close()
                continue
            try:
                await loop.connect_accepted_socket(lambda: self._connection(server), conn)
            except OSError:
                conn.close()
            # Let the loop turn before the next accept: a burst of pending connections must
            # not be accepted (each pushing out the longest waiting) before the requests
            # already on their way are read, or a fresh probe is pushed out unread.
            await asyncio.sleep(0)

    def _connection(self, server: web.Server) -> _Connection:
        return _Connection(self._guard, server, access_log=None)

    def _cannot_accept(self, exc: OSError) -> None:
        """One log line for the first failure, then at most one per EXHAUSTED_LOG_SECONDS
        with the count since the previous line; never a traceback."""
        self._exhausted += 1
        now = time.monotonic()
        last = self._exhausted_logged_at
        if last is not None and now - last < EXHAUSTED_LOG_SECONDS:
            return
        hint = "; raise LimitNOFILE (README, Security)" if exc.errno in EXHAUSTION_ERRNOS else ""
        log.error(
            "HTTP: cannot accept connections: %s (%d failures since the last report; "
            "%d connections open, descriptor limit %d)%s",
            errno.errorcode.get(exc.errno or 0, "error"),
            self._exhausted,
            len(self._guard),
            descriptor_limit(),
            hint,
        )
        self._exhausted = 0
        self._exhausted_logged_at = now

    async def cleanup(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Stop accepting, answer the requests in flight within ``grace``, close the rest."""
        for task in self._accepting:
            task.cancel()
        await asyncio.gather(*self._accepting, return_exceptions=True)
        self._accepting.clear()
        for sock in self._sockets:
            sock.close()
        try:
            # aiohttp waits up to its shutdown timeout for a handler, then as long again
            # for it to finish once cancelled: half the grace each.
            await asyncio.wait_for(self._runner.cleanup(), timeout=grace + 1)
        except TimeoutError:
            log.warning("HTTP: requests still open after %.0f s; closing them", grace)
        self._guard.abort_all()


async def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets listening on ``host``:``port`` (each address the name has).

    Raises ConfigError naming ``HTTP_PORT`` or ``HTTP_HOST`` when that cannot be done: the
    port is taken or needs privileges, or the host is not an address of this machine.
    """
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise ConfigError(
            "HTTP_HOST", f"{host!r} is not a host name or address of this machine ({exc.strerror})"
        ) from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            try:
                sock = socket.socket(family, kind, proto)
            except OSError:  # no IPv6 here, say: the other addresses still serve
                continue
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                raise _bind_error(host, port, exc) from None
            sock.listen(LISTEN_BACKLOG)
            sock.setblocking(False)
        if not sockets:
            raise ConfigError("HTTP_HOST", f"{host!r} has no address this machine can listen on")
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _bind_error(host: str, port: int, exc: OSError) -> ConfigError:
    where = f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return ConfigError("HTTP_PORT", f"{where} is already in use by another process")
    if exc.errno == errno.EACCES:
        return ConfigError(
            "HTTP_PORT", f"{where} needs privileges this user does not have (use 1024 or above)"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return ConfigError("HTTP_HOST", f"{host!r} is not an address of this machine")
    return ConfigError("HTTP_HOST", f"cannot listen on {where}: {exc.strerror}")


async def serve(
    app: web.Application, sockets: list[socket.socket], *, limit: int | None = None
) -> HttpServer:
    """Serve ``app`` on ``sockets`` (from :func:`listen`), holding at most ``limit``
    connections (:func:`connection_limit` of this process's descriptors by default)."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=STOP_GRACE_SECONDS / 2)
    await runner.setup()
    server = HttpServer(
        runner, sockets, limit=connection_limit(descriptor_limit()) if limit is None else limit
    )
    server.start()
    return server


async def start(
    app: web.Application, *, host: str, port: int, limit: int | None = None
) -> tuple[HttpServer, int]:
    """Serve ``app`` on ``host``:``port``; returns the server (``cleanup()`` stops it) and
    the port actually bound."""
    sockets = await listen(host, port)
    try:
        server = await serve(app, sockets, limit=limit)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return server, server.port
