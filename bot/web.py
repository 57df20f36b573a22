"""The HTTP server of ``trendbot run``: health, metrics and the platforms' webhooks."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import metrics
from bot.sources.urls import redact_url, scrub
from bot.store import health
from bot.util import utcnow

log = logging.getLogger("bot.web")

# A webhook body larger than this is not a chat update (Telegram and Slack send a few KB).
MAX_BODY_BYTES = 1024 * 1024

TelegramHook = Callable[[bytes, str | None], Awaitable[int]]
SlackHook = Callable[[web.Request], Awaitable[web.StreamResponse]]
FeedHook = Callable[[web.Request], Awaitable[web.StreamResponse]]
RefreshHook = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(slots=True)
class WebHooks:
    """What the running service plugs into the server; unset hooks answer 404."""

    telegram: TelegramHook | None = None
    slack: SlackHook | None = None
    slack_install: SlackHook | None = None  # GET /slack/install and /slack/oauth_redirect
    channels: dict[str, Callable[[], bool]] = field(default_factory=dict)
    feeds: FeedHook | None = None
    refresh: RefreshHook | None = None  # POST /hooks/refresh, with REFRESH_WEBHOOK_SECRET
    # Failed polls of each source in this process, by shown name (the poller's counters).
    source_failures: Mapping[str, int] = field(default_factory=dict)
    # A platform's credentials error (Slack's ``invalid_auth``...), None while they work.
    auth_errors: dict[str, Callable[[], str | None]] = field(default_factory=dict)


def make_app(*, engine: AsyncEngine, hooks: WebHooks) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES)

    async def healthz(_request: web.Request) -> web.Response:
        body: dict[str, object] = {"status": "ok"}
        try:
            found = await health.check(engine, now=utcnow())
        except Exception as exc:  # any database failure means unhealthy, never a crash
            log.warning("health check: database unavailable: %s", type(exc).__name__)
            return web.json_response(
                {"status": "unavailable", "database": "unreachable"}, status=503
            )
        depth, oldest, sources = found.queue.depth, found.queue.oldest_age_seconds, found.sources
        metrics.QUEUE_DEPTH.set(depth)
        metrics.QUEUE_OLDEST_AGE.set(oldest)
        body.update(
            database="ok",
            queue={"depth": depth, "oldest_age_seconds": round(oldest, 1)},
            sources=[
                {
                    "name": redact_url(s.name),
                    "last_poll_at": s.last_poll_at.isoformat() + "Z" if s.last_poll_at else None,
                    "last_ok_at": s.last_ok_at.isoformat() + "Z" if s.last_ok_at else None,
                    "error": scrub(s.last_error, s.name) if s.last_error else None,
                    "failed_polls": hooks.source_failures.get(redact_url(s.name), 0),
                }
                for s in sources
            ],
            channels={name: connected() for name, connected in hooks.channels.items()},
        )
        platforms: dict[str, dict[str, str]] = {}
        for name, auth_error in hooks.auth_errors.items():
            error = auth_error()
            down = {"status": "down", "error": error} if error is not None else None
            platforms[name] = down or {"status": "ok"}
        if platforms:
            body["platforms"] = platforms
            if any(p["status"] == "down" for p in platforms.values()):
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

    async def telegram_webhook(request: web.Request) -> web.Response:
        if hooks.telegram is None:
            raise web.HTTPNotFound()
        body = await request.read()
        status = await hooks.telegram(body, request.headers.get("X-Telegram-Bot-Api-Secret-Token"))
        return web.Response(status=status)

    async def slack_events(request: web.Request) -> web.StreamResponse:
        if hooks.slack is None:
            raise web.HTTPNotFound()
        return await hooks.slack(request)

    async def slack_install(request: web.Request) -> web.StreamResponse:
        if hooks.slack_install is None:
            raise web.HTTPNotFound()
        return await hooks.slack_install(request)

    async def feed(request: web.Request) -> web.StreamResponse:
        if hooks.feeds is None:
            raise web.HTTPNotFound()
        return await hooks.feeds(request)

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_endpoint)
    app.router.add_post("/telegram/webhook", telegram_webhook)
    app.router.add_post("/slack/events", slack_events)
    app.router.add_get("/slack/install", slack_install)
    app.router.add_get("/slack/oauth_redirect", slack_install)
    async def refresh(request: web.Request) -> web.StreamResponse:
        if hooks.refresh is None:
            raise web.HTTPNotFound()
        return await hooks.refresh(request)

    app.router.add_get("/feeds/{name}", feed)
    app.router.add_post("/hooks/refresh", refresh)
    return app


async def start(app: web.Application, *, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Serve ``app``; returns the runner (for cleanup) and the port actually bound."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    return runner, int(bound)
