"""The HTTP server of ``trendbot run``: health, metrics and the platforms' webhooks.

aiohttp's server bounds neither the connections it holds nor the time a client takes to
send a request, so a client that opens connections and sends nothing, or a header line
now and then, holds a descriptor each until the process runs out. The server here accepts
connections itself (:class:`HttpServer`): it holds at most :func:`connection_limit` of
them, closes one that has not sent a whole request head within ``HEAD_TIMEOUT_SECONDS`` or
has not been answered within ``REQUEST_TIMEOUT_SECONDS``, makes room for a new connection
by closing the one that has waited longest for a request, and stops within
``STOP_GRACE_SECONDS`` whatever its clients do.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import resource
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import metrics, version
from bot.channels.platform import RequestHook, Route
from bot.channels.registry import routes as platform_routes
from bot.errors import ConfigError
from bot.sources import SourceSet
from bot.sources.urls import scrub
from bot.store import health
from bot.store.engine import schema_mismatch
from bot.util import utcnow

log = logging.getLogger("bot.web")

# A webhook body larger than this is not a chat update (Telegram and Slack send a few KB).
MAX_BODY_BYTES = 1024 * 1024
# Workspaces named in /healthz at most; the count says how many there are in all.
MAX_LISTED_WORKSPACES = 20
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

FeedHook = RequestHook
RefreshHook = RequestHook


@dataclass(slots=True)
class WebHooks:
    """What the running service plugs into the server; unset hooks answer 404."""

    # The platforms' routes (bot.channels.registry) the running channels answer.
    routes: dict[Route, RequestHook] = field(default_factory=dict)
    channels: dict[str, Callable[[], bool]] = field(default_factory=dict)
    feeds: FeedHook | None = None
    refresh: RefreshHook | None = None  # POST /hooks/refresh, with REFRESH_WEBHOOK_SECRET
    # Failed polls of each source in this process, by source id (the poller's counters).
    source_failures: Mapping[str, int] = field(default_factory=dict)
    # The configured sources, by which /healthz names each source the store holds.
    sources: SourceSet = field(default_factory=lambda: SourceSet(()))
    # A platform's credentials error (Slack's ``invalid_auth``...), None while they work.
    auth_errors: dict[str, Callable[[], str | None]] = field(default_factory=dict)
    # A platform's workspaces that cannot be reached, each with why (Slack installed by
    # OAuth: a stored token that no key of SLACK_TOKEN_KEY opens); empty while all work.
    workspace_errors: dict[str, Callable[[], Mapping[str, str]]] = field(default_factory=dict)
    # Why the replica cannot make progress (the database's error of its last delivery,
    # planning or lease renewal), None while it can: /healthz answers 503 meanwhile.
    problem: Callable[[], str | None] = lambda: None


def _unavailable(*, database: str, reason: str, **more: str) -> web.Response:
    """``/healthz``'s 503: what the database did, anything ``more`` it knows, and why."""
    return web.json_response(
        {
            "status": "unavailable",
            "version": version(),
            "database": database,
            **more,
            "reason": reason,
        },
        status=503,
    )


def _route_hook(hooks: WebHooks, route: Route) -> Callable[[], RequestHook | None]:
    """What a platform's ``route`` forwards to: its hook, once the service plugged it in."""
    return lambda: hooks.routes.get(route)


def _forward(
    hook: Callable[[], RequestHook | None],
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A handler that passes the request to the hook ``hook()`` names when it comes (the
    service plugs some in after the server is made); 404 while that hook is unset."""

    async def handle(request: web.Request) -> web.StreamResponse:
        target = hook()
        if target is None:
            raise web.HTTPNotFound()
        return await target(request)

    return handle


def make_app(*, engine: AsyncEngine, hooks: WebHooks) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[_request_deadline])

    async def healthz(_request: web.Request) -> web.Response:
        body: dict[str, object] = {"status": "ok", "version": version()}
        try:
            found = await health.check(engine, now=utcnow())
        except Exception as exc:  # any database failure means unhealthy, never a crash
            log.warning("health check: database unavailable: %s", type(exc).__name__)
            reason = hooks.problem() or "the database does not answer"
            return _unavailable(database="unreachable", reason=reason)
        mismatch = schema_mismatch(found.revision)
        if mismatch is not None:  # another build migrated the database under this one
            return _unavailable(database="ok", schema=mismatch, reason=mismatch)
        problem = hooks.problem()
        if problem is not None:  # the database answers a read, yet work fails on it
            return _unavailable(database="failing", reason=problem)
        depth, oldest, sources = found.queue.depth, found.queue.oldest_age_seconds, found.sources
        metrics.QUEUE_DEPTH.set(depth)
        metrics.QUEUE_OLDEST_AGE.set(oldest)
        body.update(
            database="ok",
            queue={"depth": depth, "oldest_age_seconds": round(oldest, 1)},
            sources=[
                {
                    "id": (identity := hooks.sources.of(s.name)).id,
                    "name": identity.name,
                    "last_poll_at": s.last_poll_at.isoformat() + "Z" if s.last_poll_at else None,
                    "last_ok_at": s.last_ok_at.isoformat() + "Z" if s.last_ok_at else None,
                    "error": scrub(s.last_error, s.name) if s.last_error else None,
                    "failed_polls": hooks.source_failures.get(identity.id, 0),
                }
                for s in sources
            ],
            channels={name: connected() for name, connected in hooks.channels.items()},
        )
        platforms: dict[str, dict[str, object]] = {}
        for name, auth_error in hooks.auth_errors.items():
            error = auth_error()
            platforms[name] = (
                {"status": "down", "error": error} if error is not None else {"status": "ok"}
            )
        for name, workspace_errors in hooks.workspace_errors.items():
            unreachable = sorted(workspace_errors().items())
            if not unreachable:
                continue
            platform = platforms.setdefault(name, {"status": "ok"})
            if platform["status"] == "ok":
                platform["status"] = "degraded"
            platform["unreachable_workspaces"] = len(unreachable)
            platform["workspaces"] = [
                {"team": team, "error": reason}
                for team, reason in unreachable[:MAX_LISTED_WORKSPACES]
            ]
        if platforms:
            body["platforms"] = platforms
            if any(p["status"] != "ok" for p in platforms.values()):
                body["status"] = "degraded"
        return web.json_response(body)

    async def metrics_endpoint(_request: web.Request) -> web.Response:
        try:
            queue = await health.queue(engine, now=utcnow())
            metrics.QUEUE_DEPTH.set(queue.depth)
            metrics.QUEUE_OLDEST_AGE.set(queue.oldest_age_seconds)
        except Exception:  # metrics still render what the process knows
            log.warning("metrics: database unavailable")
        return web.Response(
            body=generate_latest(metrics.REGISTRY),
            headers={"Content-Type": CONTENT_TYPE_LATEST},
        )

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_endpoint)
    for route in platform_routes():
        app.router.add_route(route.method, route.path, _forward(_route_hook(hooks, route)))
    app.router.add_get("/feeds/{name}", _forward(lambda: hooks.feeds))
    app.router.add_post("/hooks/refresh", _forward(lambda: hooks.refresh))
    return app


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
async def _request_deadline(
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
