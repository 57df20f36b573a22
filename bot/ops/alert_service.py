"""Operator alerts: the checks of :mod:`bot.rules.alerts` run against the store, and their
messages queued for the admins.

Recipients are the deployment's admins alone: each configured platform's admin entries
(:class:`bot.platforms.PlatformRules`), in their private chat with the bot (one the bot
may open, as Slack's app DM, or one the admin opened, as Telegram's), unless they said
``alerts off``. A workspace's
admin (its installer) is told none: ``alerts on`` is refused to them with that reason.
Alerts are ordinary outbox rows, so the platforms' rate limits apply, with a priority above
digests: an alert is the next message its chat gets.

Only the leader runs the checks. An incident and its alerts are written in one
transaction, so each incident is announced once when it starts and once when it ends.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import payloads, platforms
from bot.i18n import t
from bot.models import ChatKind, ChatSettings, ChatState, Platform
from bot.platforms import PlatformRules
from bot.rules import alerts
from bot.rules.urls import redact_url
from bot.settings import Settings
from bot.sources import SourceSet
from bot.store import alerts as store
from bot.store import chats as chat_store
from bot.store import queueing
from bot.store.chats import ChatRecord
from bot.store.engine import reader
from bot.util import utcnow

log = logging.getLogger("bot.alerts")

# Above digests (10) and broadcast reports (20): an alert goes before anything else queued.
ALERT_PRIORITY = 30
# How often ``run`` checks for incidents (the checks read a few aggregates).
CHECK_EVERY_SECONDS = 60


class AlertService:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        settings: Settings,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self._engine = engine
        self._settings = settings
        self._clock = clock
        self._sources = SourceSet(settings.wiki_sources)
        self._adopted = False

    async def after_poll(self, outcomes: Sequence[tuple[str, str | None]]) -> None:
        """A poll's sources: ``(source as configured, error)``, error None when the source
        was read. Each is recorded under its id (:mod:`bot.sources`)."""
        await self._adopt_source_keys()
        by_id = [(self._sources.of(configured).id, error) for configured, error in outcomes]
        async with self._engine.begin() as conn:
            await store.record_poll(conn, by_id, now=self._clock())

    async def _adopt_source_keys(self) -> None:
        """Once a process: streaks and open incidents of a former release, which keyed a
        source by its redacted name, move to the source's id (see
        :func:`bot.store.alerts.adopt_source_keys`)."""
        if self._adopted:
            return
        renames: dict[str, str] = {}
        for source in self._sources:
            for former in (redact_url(source.key), source.key):
                renames.setdefault(former, source.id)
        async with self._engine.begin() as conn:
            moved = await store.adopt_source_keys(conn, renames)
        if moved:
            log.info("alerts: %d source streaks and incidents now keyed by source id", moved)
        self._adopted = True

    async def auth_failed(self, platform: Platform, reason: str) -> None:
        """The hook for a platform that rejected the bot's credentials (a revoked token):
        the next check opens an ``auth:PLATFORM`` incident, which ends at the next
        successful send to that platform. ``reason`` must hold no secret."""
        log.error("%s rejected the bot's credentials: %s", platform.value, reason)
        async with self._engine.begin() as conn:
            await store.record_auth_failure(
                conn, platform=platform.value, reason=reason, now=self._clock()
            )

    async def check(self) -> list[alerts.Transition]:
        """Look once; store what started or ended and queue its alerts. Returns the changes."""
        now = self._clock()
        await self._adopt_source_keys()
        sources = {source.id: source.name for source in self._sources}
        failures = self._settings.alert_source_failures
        async with reader(self._engine).connect() as conn:
            observed = await store.observe(
                conn, sources=sources, now=now, window=alerts.SEND_WINDOW
            )
            opened = await store.open_incidents(conn)
        if not alerts.transitions(observed, open_keys=set(opened), source_failures=failures):
            return []
        await self._open_admin_chats()
        async with self._engine.begin() as conn:
            # Again in the transaction that writes, which checks take one at a time: another
            # replica's check may have run meanwhile (while the leadership moved).
            await store.lock_incidents(conn)
            opened = await store.open_incidents(conn)
            changes = alerts.transitions(observed, open_keys=set(opened), source_failures=failures)
            recipients = await self._recipients(conn)
            for change in changes:
                if change.started:
                    await store.start_incident(conn, key=change.key, detail=change.params, now=now)
                else:
                    await store.clear_incident(conn, incident_id=opened[change.key], now=now)
                await queueing.enqueue(
                    conn,
                    [
                        queueing.row_values(
                            chat_pk=record.pk,
                            platform=record.chat.platform.value,
                            kind="alert",
                            payload=payloads.Alert(
                                text=t(record.chat.lang, change.message, **change.params)
                            ),
                            now=now,
                            priority=ALERT_PRIORITY,
                        )
                        for record in recipients
                    ],
                )
                log.warning(
                    "incident %s: %s (%d admins told)",
                    "started" if change.started else "ended",
                    change.key,
                    len(recipients),
                )
        return changes

    def _admins(self) -> list[tuple[PlatformRules, str]]:
        """Each configured platform's admin entries (``TELEGRAM_ADMIN_IDS``...), as written."""
        return [
            (rules, entry)
            for rules in platforms.registered()
            if rules.enabled(self._settings)
            for entry in rules.admin_ids(self._settings)
        ]

    async def _recipients(self, conn: AsyncConnection) -> list[ChatRecord]:
        choices = await store.admin_choices(conn)
        found: list[ChatRecord] = []
        for rules, entry in self._admins():
            choice = choices.get((rules.name.value, entry))
            if choice is not None and not choice.enabled:
                continue
            record = None
            if choice is not None and choice.chat_pk is not None:
                record = await chat_store.get_by_pk(conn, choice.chat_pk)
            elif (chat := rules.admin_chat(self._settings, entry)) is not None and not chat.opened:
                record = await chat_store.get(conn, platform=rules.name, chat_id=chat.chat_id)
            if (
                record is not None
                and record.chat.kind == ChatKind.PRIVATE
                and record.chat.state != ChatState.INACTIVE
            ):
                found.append(record)
        return found

    async def _open_admin_chats(self) -> None:
        """Admins whose private chat the bot may open (Slack's app DM, see
        :class:`bot.platforms.AdminChat`) and whose chat is not known yet get one."""
        opened = [
            (rules, entry, chat)
            for rules, entry in self._admins()
            if (chat := rules.admin_chat(self._settings, entry)) is not None and chat.opened
        ]
        if not opened:
            return
        async with self._engine.begin() as conn:
            choices = await store.admin_choices(conn)
        for rules, entry, chat in opened:
            choice = choices.get((rules.name.value, entry))
            if choice is not None and (choice.chat_pk is not None or not choice.enabled):
                continue
            async with self._engine.begin() as conn:
                record = await chat_store.ensure(
                    conn,
                    defaults=ChatSettings(
                        platform=rules.name,
                        chat_id=chat.chat_id,
                        kind=ChatKind.PRIVATE,
                        digest_time=self._settings.digest_time,
                        timezone=self._settings.default_timezone,
                        lang=self._settings.default_language,
                    ),
                )
                await store.choose(
                    conn,
                    platform=rules.name.value,
                    user_id=entry,
                    chat_pk=record.pk,
                    enabled=True,
                    now=self._clock(),
                )
