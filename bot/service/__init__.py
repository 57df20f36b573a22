"""The long-running service (``trendbot run`` and ``trendbot console``).

Polls the sources on a schedule, plans due digests twice a minute (``PLAN_EVERY_SECONDS``)
and after every poll, delivers from the outbox, serves HTTP, and runs the chat channels.
SIGTERM or SIGINT stops it cleanly: no new work is taken, in-flight sends finish
(bounded), the rest stays queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import signal
import sys

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot import dberrors, metrics, version
from bot.app import App
from bot.channels.console.chat import ConsoleChannel, logs_to_file
from bot.channels.platform import Channel, PollingChannel
from bot.ops import alert_service, web
from bot.ops.feed_server import FeedServer
from bot.ops.leader import RENEW_SECONDS, Leases, one_shots_sending
from bot.ops.refresh import CHECK_SECONDS, Refresh
from bot.ops.settings_page import SettingsPage, mini_app_check
from bot.service.lock import AlreadyRunning, CannotLock, sqlite_run_lock
from bot.service.once import send_once
from bot.store import trends
from bot.util import utcnow

__all__ = [
    "AlreadyRunning",
    "CannotLock",
    "Service",
    "send_once",
    "sqlite_run_lock",
    "stdin_is_terminal",
]

log = logging.getLogger("bot.service")

# Daily digests are due on the minute; planning twice a minute keeps them within ~30 s.
PLAN_EVERY_SECONDS = 30
# A new replica on a shared database looks this often whether the others count it yet...
SHARE_POLL_SECONDS = 0.5
# ...and then waits this long for the sends they had scheduled at their former shares.
SHARE_SETTLE_SECONDS = 1.0
# Delivery that stopped on a bug is started again after this long.
RESTART_DELIVERY_SECONDS = 1.0


class Service:
    def __init__(self, app: App, *, console: bool, serve_http: bool, channels: bool) -> None:
        self._app = app
        self._console = console
        self._serve_http = serve_http
        self._channels = channels
        self._stop = asyncio.Event()
        self._delivery = app.delivery()
        self._leases = Leases(engine=app.engine, holder=self._delivery.worker_id)
        self._polling_channel: PollingChannel | None = None
        self._jobs = asyncio.Lock()  # a stop waits for a running plan to finish
        self._first_poll = asyncio.Event()  # set once the first poll has run (or was skipped)
        self._poll_idle = asyncio.Event()  # set while no poll runs
        self._poll_idle.set()
        # The database's error of the last lease renewal and of the last planning run, None
        # once they succeed again: what /healthz reports as not ready.
        self._lease_problem: str | None = None
        self._plan_problem: str | None = None
        self._replicas = 1  # live replicas at the last renewal
        self._followers_day: dt.date | None = None  # the last UTC day recorded (or found)
        secret = app.settings.refresh_webhook_secret
        self._refresh = (
            Refresh(
                engine=app.engine,
                secret=secret.get_secret_value(),
                holder=self._delivery.worker_id,
            )
            if secret is not None
            else None
        )
        self.http_port: int | None = None

    def problem(self) -> str | None:
        """Why this replica cannot make progress now, or None: lease renewal, planning or
        delivery failed on the database's error and has not succeeded since."""
        return self._lease_problem or self._plan_problem or self._delivery.problem

    def stop(self) -> None:
        self._stop.set()

    async def poll_and_plan(self) -> None:
        """Poll the sources (the leader only), then plan what they made due.

        A poll holds no lock that planning, delivery or lease renewal wait for: it runs
        beside them, and a stop cancels it (each source is recorded in one transaction,
        so a cancelled poll leaves every source as it was or as fully recorded).
        """
        if not self._leases.is_leader:
            return
        pushed = self._refresh is not None and self._refresh.polling()
        try:
            summary = await self._app.poller.poll()
        except Exception:
            log.exception("poll failed")
            summary = None
        if pushed and (summary is None or summary.database_failed):
            assert self._refresh is not None
            self._refresh.poll_failed()  # the push stands until a poll records it
        if summary is None:
            return
        for outcome in summary.outcomes:
            metrics.POLL_DURATION.labels(outcome.shown).observe(outcome.seconds)
            if outcome.error:
                metrics.POLL_ERRORS.labels(outcome.shown).inc()
            else:
                metrics.SOURCE_LAST_SUCCESS.labels(outcome.shown).set_to_current_time()
        try:
            # By the source as configured: the alerts key it by its id and name it by its
            # redacted name, like every other output.
            await self._app.alerts.after_poll([(o.name, o.error) for o in summary.outcomes])
        except Exception as exc:
            if not dberrors.is_outage(exc):
                log.exception("could not record the poll for alerts")
            else:
                log.warning("could not record the poll for alerts: %s", dberrors.reason(exc))
        await self.plan()
        await self.check_alerts()

    async def check_alerts(self) -> None:
        if not self._leases.is_leader:
            return
        async with self._jobs:
            await self._check_alerts()
            await self._record_followers()

    async def _check_alerts(self) -> None:
        try:
            changes = await self._app.alerts.check()
        except Exception:
            log.exception("incident check failed")
            return
        if changes:
            self._delivery.notify()

    async def _record_followers(self) -> None:
        """Record today's followers of each tag (``stats`` draws them by day), once a day:
        one query a day here, and the store keeps the first record of a day whoever
        records it again (another replica that led, a restart)."""
        today = utcnow().date()
        if self._followers_day == today:
            return
        try:
            async with self._app.engine.begin() as conn:
                await trends.record_day(conn, today=today)
        except Exception as exc:  # a chart's history: the next check tries again
            if dberrors.is_outage(exc):
                log.warning("could not record the tag followers: %s", dberrors.reason(exc))
            else:
                log.exception("could not record the tag followers")
            return
        self._followers_day = today

    async def poll(self) -> None:
        """The ``poll`` job: every ``POLL_INTERVAL_SECONDS``, from the start, and at once
        when a push asks (:meth:`_bring_polls_forward`). A stop cancels it."""
        self._poll_idle.clear()
        try:
            await self.poll_and_plan()
        except asyncio.CancelledError:
            if not self._stop.is_set():
                raise
            # The stop cancelled it: no error to report (the scheduler logs a job's
            # exceptions with their traceback, and this one is expected).
        finally:
            self._poll_idle.set()
            self._first_poll.set()

    async def _bring_polls_forward(self, scheduler: AsyncIOScheduler) -> None:
        """Run the ``poll`` job now when a push asks (``POST /hooks/refresh``) and this
        replica leads. A push that comes during a poll brings the next one forward once
        that poll is done: the pages pushed may have come after it read the source."""
        assert self._refresh is not None
        away: str | None = None  # the database's error while requests wait for it
        while not self._stop.is_set():
            leader = self._leases.is_leader
            try:
                if leader:
                    pushed = await self._refresh.wait(CHECK_SECONDS)
                else:  # a request the store refused is left for the leader once it answers
                    await self._refresh.resend()
                    pushed = False
            except Exception as exc:  # the request stays wanted: carried out once it answers
                if not dberrors.is_outage(exc):
                    log.exception("could not look for a refresh request")
                elif away is None:
                    log.warning("refresh requests wait for the database: %s", dberrors.reason(exc))
                away = dberrors.reason(exc)
                await asyncio.sleep(CHECK_SECONDS)
                continue
            if away is not None:
                log.info("refresh requests are taken again")
                away = None
            if pushed:
                await self._poll_idle.wait()
                scheduler.modify_job("poll", next_run_time=dt.datetime.now(dt.UTC))
            elif not leader:
                await asyncio.sleep(CHECK_SECONDS)

    async def plan(self) -> None:
        if not self._leases.is_leader:
            return
        async with self._jobs:
            await self._plan()

    async def lease(self) -> None:
        """Renew this replica's leases; the leader long-polls Telegram, and every replica
        takes its share of the platforms' caps."""
        try:
            leader = await self._leases.tick()
            replicas = await self._leases.live_replicas()
            if self._lease_problem is not None:
                # Back from an outage: the others' presence may have expired meanwhile and
                # they renew it within RENEW_SECONDS. Until then this replica keeps the
                # share it had, not the whole cap each (a 429 for every message over).
                replicas = max(replicas, self._replicas)
            self._replicas = replicas
            self._delivery.share_caps(replicas)
            metrics.LEADER.set(1 if leader else 0)
            metrics.REPLICAS_LIVE.set(replicas)
        except asyncio.CancelledError:
            if not self._stop.is_set():
                raise
            # The service is stopping and ended the renewal under way: its leases are
            # released by the stop; nothing failed (the scheduler would log a traceback).
            return
        except Exception as exc:  # the database may be briefly away: keep the role held
            if dberrors.is_outage(exc):
                if self._lease_problem is None:
                    log.warning("lease renewal failed: %s", dberrors.reason(exc))
                self._lease_problem = f"renewing leases: {dberrors.reason(exc)}"
            else:
                log.exception("lease renewal failed")
            self._leases.step_down_if_expired()
            return
        if self._lease_problem is not None:
            log.info("lease renewal works again")
            self._lease_problem = None
        channel = self._polling_channel
        if channel is None:
            return
        if leader and not channel.polling:
            await channel.start_polling()
        elif not leader and channel.polling:
            await channel.stop_polling()

    async def _deliver(self) -> None:
        """Send from the outbox, from the first message within this replica's share of the
        platforms' caps.

        Replicas already sending count a new one at their next renewal (every
        ``RENEW_SECONDS``); until then their shares leave it out, and a new replica sending
        at once would take the platforms over their caps (a 429 for every message over).
        So on a database that replicas share, a replica sends once every other live replica
        has renewed since it registered (:meth:`Leases.counted_by_all`), and the sends the
        others had already scheduled at their former shares are out (``SHARE_SETTLE``).
        """
        # A one-shot command that was sending from its own process when this service
        # started sees it within HANDOFF_POLL_SECONDS, stops, and lets go of its lease.
        while not self._stop.is_set():
            with contextlib.suppress(Exception):  # the database may be briefly away
                if not await one_shots_sending(self._app.engine):
                    break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=SHARE_POLL_SECONDS)
        if self._app.engine.dialect.name == "postgresql":
            while not self._stop.is_set():
                with contextlib.suppress(Exception):  # the database may be briefly away
                    if await self._leases.counted_by_all():
                        break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), timeout=SHARE_POLL_SECONDS)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=SHARE_SETTLE_SECONDS)
            with contextlib.suppress(Exception):  # else the next renewal shares them
                self._delivery.share_caps(await self._leases.live_replicas())
        # Supervised: the database being away stops nothing in it, and should a bug stop
        # it, it starts again (its claims are given back first, or left to expire).
        while not self._stop.is_set():
            try:
                await self._delivery.run(self._stop)
            except Exception:
                log.exception("delivery stopped; starting it again")
            if not self._stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), timeout=RESTART_DELIVERY_SECONDS)

    async def _plan(self) -> None:
        try:
            with metrics.DIGEST_BUILD.time():
                planned = await self._app.planner.plan_due()
        except Exception as exc:
            if dberrors.is_outage(exc):
                log.warning("planning failed: %s", dberrors.reason(exc))
                self._plan_problem = f"planning: {dberrors.reason(exc)}"
            else:
                log.exception("planning failed")
            return
        self._plan_problem = None
        if planned:
            self._delivery.notify()

    async def run(self) -> int:
        """Run until stopped. With the console on a terminal, log lines below WARNING go
        to its log file from the start, not only once the prompt opens: the README
        promises a screen free of them."""
        on_terminal = self._console and sys.stdin.isatty() and sys.stdout.isatty()
        with logs_to_file() if on_terminal else contextlib.nullcontext(False):
            return await self._run()

    async def _run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.stop)
        settings = self._app.settings
        scheduler = AsyncIOScheduler(timezone=dt.UTC)
        now = dt.datetime.now(dt.UTC)
        # Every periodic job, each every so many seconds from its first run. Polls run
        # beside the rest: a slow source delays neither planning nor delivery nor lease
        # renewal. A job is never run twice at once, and a late one still runs, once (the
        # loop may have been busy).
        periodic = (
            ("lease", self.lease, RENEW_SECONDS, now + dt.timedelta(seconds=RENEW_SECONDS)),
            ("plan", self.plan, PLAN_EVERY_SECONDS, now + dt.timedelta(seconds=PLAN_EVERY_SECONDS)),
            ("poll", self.poll, settings.poll_interval_seconds, now),
            (
                "alerts",
                self.check_alerts,
                alert_service.CHECK_EVERY_SECONDS,
                now + dt.timedelta(seconds=alert_service.CHECK_EVERY_SECONDS),
            ),
        )
        for name, job, seconds, first in periodic:
            scheduler.add_job(
                job,
                "interval",
                seconds=seconds,
                next_run_time=first,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,
                id=name,
            )
        # The port first: one taken is a configuration error, said before anything starts.
        sockets = (
            await web.listen(settings.http_host, settings.http_port) if self._serve_http else []
        )
        # The first line of a start that can no longer fail with a one-line error.
        logging.getLogger("bot").info("trendbot %s starting", version())
        if self._app.migrated is not None:
            log.info("database schema migrated by this process: %s", self._app.migrated)
        # Presence first: a one-shot command on this database sees this service before
        # it sends anything, and leaves its messages to it (see send_once).
        try:
            await self.lease()
        except BaseException:
            for sock in sockets:
                sock.close()
            raise
        # The sources configured now are the ones shown, before the first poll is done.
        await self._app.poller.record_configured()
        delivery = asyncio.create_task(self._deliver())
        server: web.HttpServer | None = None
        http_stopped: asyncio.Task[None] | None = None
        tasks: list[asyncio.Task[None]] = []
        channels: list[Channel] = []
        try:
            hooks = web.WebHooks(
                source_failures=self._app.poller.failures,
                sources=self._app.poller.sources,
                problem=self.problem,
                slow=self._delivery.slow,
            )
            if self._refresh is not None:
                hooks.refresh = self._refresh.hook
            hooks.feeds = FeedServer(
                engine=self._app.engine, public_base_url=settings.public_base_url
            ).handle
            if settings.public_base_url is not None:
                hooks.settings_page = SettingsPage(
                    core=self._app.core, settings=settings, mini_app=mini_app_check(settings)
                ).handle
            for channel in self._make_channels(hooks):
                if channel is self._polling_channel:
                    await self._polling_channel.start(poll=self._leases.is_leader)
                else:
                    await channel.start()
                channels.append(channel)
            if sockets:
                app = web.make_app(engine=self._app.engine, hooks=hooks)
                server = await web.serve(app, sockets)
                sockets = []  # the server closes them
                self.http_port = server.port
                log.info(
                    "HTTP server on %s:%s (at most %d connections)",
                    settings.http_host,
                    self.http_port,
                    server.limit,
                )
            # The console opens after the first poll, so its first command sees the wiki.
            scheduler.start()
            if self._refresh is not None:
                tasks.append(asyncio.create_task(self._bring_polls_forward(scheduler)))
            if self._console:
                console = self._app.console_channel(on_command=self._delivery.notify)
                tasks.append(asyncio.create_task(self._run_console(console)))
            await self._stop.wait()
        finally:
            log.info("stopping")
            for sock in sockets:
                sock.close()
            if server is not None:
                # Beside the rest of the stop: requests in flight get web.STOP_GRACE_SECONDS,
                # within the delivery's grace, whatever their clients do.
                http_stopped = asyncio.create_task(server.cleanup())
            if scheduler.running:
                scheduler.pause()
                async with self._jobs:
                    scheduler.shutdown(wait=False)  # cancels a running poll
                await self._poll_idle.wait()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._stop.set()  # the delivery engine stops claiming, finishes its sends
            if self._polling_channel is not None:
                # No more updates taken: the next leader fetches what is left.
                with contextlib.suppress(Exception):
                    await self._polling_channel.stop_polling()
            try:
                await delivery
            except Exception:  # its claims expire; the stop goes on
                log.exception("delivery failed while stopping")
            for channel in reversed(channels):
                with contextlib.suppress(Exception):
                    await channel.stop()
            if http_stopped is not None:
                await http_stopped
            with contextlib.suppress(Exception):
                await self._leases.release()
        return 0

    def _make_channels(self, hooks: web.WebHooks) -> list[Channel]:
        """The chat platforms configured, wired into the HTTP server's hooks."""
        channels: list[Channel] = []
        if not self._channels:
            return channels
        for name, connection in self._app.platforms.items():
            inbound = connection.inbound(self._app.core)
            if inbound is None:
                continue
            hooks.routes.update(inbound.routes)
            if inbound.polling is not None:
                self._polling_channel = inbound.polling
            hooks.channels[name.value] = inbound.running
            if inbound.auth_error is not None:
                hooks.auth_errors[name.value] = inbound.auth_error
            if inbound.workspace_errors is not None:
                hooks.workspace_errors[name.value] = inbound.workspace_errors
            channels.append(inbound.channel)
        return channels

    async def _run_console(self, console: ConsoleChannel) -> None:
        try:
            await self._first_poll.wait()
            await console.run()
        finally:
            self.stop()


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()
