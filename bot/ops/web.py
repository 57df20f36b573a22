"""The HTTP server of ``trendbot run``: health, metrics, the feeds and the platforms'
routes (webhooks, OAuth: each platform's, from :mod:`bot.channels.registry`).

The server under them bounds its connections and their time (:mod:`bot.ops.http_server`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import metrics, version
from bot.channels.platform import RequestHook, Route
from bot.channels.registry import routes as platform_routes
from bot.ops.http_server import (
    HEAD_TIMEOUT_SECONDS,
    MAX_CONNECTIONS,
    MIN_CONNECTIONS,
    STOP_GRACE_SECONDS,
    HttpServer,
    connection_limit,
    listen,
    request_deadline,
    serve,
    start,
)
from bot.sources import SourceSet
from bot.store import health
from bot.store.engine import schema_mismatch
from bot.util import utcnow

log = logging.getLogger("bot.web")

# A webhook body larger than this is not a chat update (Telegram and Slack send a few KB).
MAX_BODY_BYTES = 1024 * 1024
# Workspaces named in /healthz at most; the count says how many there are in all.
MAX_LISTED_WORKSPACES = 20
FeedHook = RequestHook
RefreshHook = RequestHook


@dataclass(slots=True)
class WebHooks:
    """What the running service plugs into the server; unset hooks answer 404."""

    # The platforms' routes (bot.channels.registry) the running channels answer.
    routes: dict[Route, RequestHook] = field(default_factory=dict)
    channels: dict[str, Callable[[], bool]] = field(default_factory=dict)
    feeds: FeedHook | None = None
    settings_page: RequestHook | None = None  # /settings/..., with PUBLIC_BASE_URL
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
    # Platforms that left sends with no answer in time lately, each with what it did
    # (the delivery engine's ``slow``): /healthz says so, and answers 200 all the same.
    slow: Callable[[], Mapping[str, str]] = dict


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
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[request_deadline])

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
                    "error": s.last_error,
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
        for name, detail in hooks.slow().items():
            platform = platforms.setdefault(name, {"status": "ok"})
            if platform["status"] == "ok":
                platform["status"] = "slow"
            platform["slow"] = detail
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
    app.router.add_route("*", "/settings/{tail:.*}", _forward(lambda: hooks.settings_page))
    app.router.add_post("/hooks/refresh", _forward(lambda: hooks.refresh))
    return app


__all__ = [
    "HEAD_TIMEOUT_SECONDS",
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS",
    "MAX_LISTED_WORKSPACES",
    "MIN_CONNECTIONS",
    "STOP_GRACE_SECONDS",
    "HttpServer",
    "WebHooks",
    "connection_limit",
    "listen",
    "make_app",
    "serve",
    "start",
]
