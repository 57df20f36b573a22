"""Admin commands: broadcast with preview and confirmation, stats, and the audit trail.

The deployment's admins are the user ids in ``TELEGRAM_ADMIN_IDS`` and ``SLACK_ADMIN_IDS``
(never user names; a Slack entry is ``TEAM:USER``, or a bare user id with one workspace);
the console's local user is the operator of its own database and counts as one. With Slack
installed by OAuth, the user who installed the app in a workspace is that workspace's admin:
their ``stats`` and ``broadcast`` reach their workspace's chats and deliveries only, never
the sources, the pages, the queue or another workspace.

A broadcast reaches every chat that follows something (a chat that never subscribed, or
unsubscribed from everything, asked for nothing), narrowed by ``--tag``, ``--platform`` and
``--lang``; paused and inactive chats are skipped and counted.

A broadcast is rows in the same outbox as digests, paced by the same limits. Fairness:
digests and instant pages are claimed before broadcast rows (a higher priority), and each
chat's messages go out in order at that chat's limit. A digest is therefore never held up
behind a large broadcast, and a broadcast is held up only by the digests already due,
which are finite: one a chat a day, plus instant pages.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import payloads, platforms
from bot.commands import Caller
from bot.i18n import clean, language_name, t, tn
from bot.models import LANGUAGES, Button, Chart, ChartPanel, Platform, Reply, Series
from bot.render import toggle
from bot.settings import Settings
from bot.sources import SourceSet
from bot.sources.urls import scrub
from bot.store import admin as store
from bot.store import chats as chat_store
from bot.store import outbox, trends
from bot.store import pages as page_store
from bot.store.admin import Audience
from bot.tags import normalize_tag
from bot.util import utcnow

log = logging.getLogger("bot.admin")

SEND = "bc:send:"
CANCEL = "bc:cancel:"
OPTION = re.compile(r"^\s*--(tag|platform|lang)(?:\s+|=)(\S+)")
TOP_TAGS = 10
TOGGLE_DAYS = 7  # the language toggle's presses ``stats`` counts
CHART_DAYS = 14  # the stats chart's sends per day: two weeks, today included
TREND_DAYS = 30  # the stats chart's followers by day: a month, today included
TREND_TAGS = 5  # lines on that panel: more are not told apart
# A broadcast is one message; longer texts are split by the renderers, but an
# announcement that long is almost certainly a paste error.
MAX_BROADCAST_CHARS = 4000


@dataclass(frozen=True, slots=True)
class Draft:
    text: str
    audience: Audience


class BadOption(ValueError):
    def __init__(self, option: str, accepted: str) -> None:
        super().__init__(option)
        self.option = option
        self.accepted = accepted


def parse_broadcast(args: str) -> Draft:
    """``--tag rl --lang ko The text…`` -> the text and its audience."""
    tags: list[str] = []
    platform = lang = None
    rest = args
    while match := OPTION.match(rest):
        name, value = match[1], match[2]
        rest = rest[match.end() :]
        if name == "tag":
            tag = normalize_tag(value)
            if not tag:
                raise BadOption("--tag", "a tag such as rl")
            tags.append(tag)
        elif name == "platform":
            if value.lower() not in platforms.broadcast_names():
                raise BadOption("--platform", ", ".join(platforms.broadcast_names()))
            platform = value.lower()
        else:
            if value.lower() not in LANGUAGES:
                raise BadOption("--lang", "en, ko")
            lang = value.lower()
    # Cleaned of bidi controls and invisible characters (``clean``): the preview shows
    # exactly what is sent, and neither can display as something it is not.
    return Draft(
        text=clean(rest).strip(),
        audience=Audience(tags=tuple(tags), platform=platform, lang=lang),
    )


def skipped_text(lang: str, skipped: int) -> str:
    """``3 paused or inactive chats are skipped``, or that there are none."""
    return tn(lang, "admin.broadcast.skipped", skipped)


def actor(caller: Caller) -> str:
    return f"{caller.platform.value}:{caller.user_id}"


def describe_audience(audience: Audience, lang: str) -> str:
    """Who a broadcast reaches, in words (``active chats following rl, on Telegram, in
    Korean``), never as the options that chose them."""
    parts = []
    if audience.tags:
        parts.append(t(lang, "admin.audience.tags", tags=", ".join(audience.tags)))
    if audience.platform:
        platform = platforms.title(audience.platform, lang)
        parts.append(t(lang, "admin.audience.platform", platform=platform))
    if audience.lang:
        language = language_name(audience.lang, lang)
        parts.append(t(lang, "admin.audience.lang", language=language))
    if not parts:
        return t(lang, "admin.broadcast.everyone")
    return t(lang, "admin.audience.some", parts=t(lang, "admin.audience.join").join(parts))


class Admin:
    """Implements the command core's ``AdminPort`` and the delivery's broadcast tracker."""

    def __init__(self, *, engine: AsyncEngine, settings: Settings) -> None:
        self._engine = engine
        self._sources = SourceSet(settings.wiki_sources)
        self._platforms = {rules.name: rules for rules in platforms.registered()}
        self._admins = {rules.name: rules.admins(settings) for rules in platforms.registered()}

    def is_admin(self, caller: Caller) -> bool:
        """An admin of the deployment or, on Slack, of the caller's workspace."""
        return self.is_deployment_admin(caller) or (
            self._workspace_admins(caller) and caller.workspace_admin
        )

    def _workspace_admins(self, caller: Caller) -> bool:
        rules = self._platforms.get(caller.platform)
        return rules is not None and rules.workspace_admins

    def is_deployment_admin(self, caller: Caller) -> bool:
        """One of ``TELEGRAM_ADMIN_IDS`` or ``SLACK_ADMIN_IDS``, or the console's operator."""
        rules = self._platforms.get(caller.platform)
        return rules is not None and (rules.operator or self.alert_admin_id(caller) is not None)

    def alert_admin_id(self, caller: Caller) -> str | None:
        """The ``TELEGRAM_ADMIN_IDS`` or ``SLACK_ADMIN_IDS`` entry ``caller`` is, under which
        their ``alerts on|off`` is kept and alerts are sent (:mod:`bot.ops.alert_service`); None
        for anyone else, the console's operator and a workspace's admin included: alerts
        are of the whole deployment, and go to its admins' private chats alone."""
        check = self._admins.get(caller.platform)
        return None if check is None else check(caller.user_id, caller.workspace)

    def _workspace_only(self, caller: Caller) -> str | None:
        """The workspace a Slack workspace's installer (not a deployment admin) is limited
        to; an installer whose workspace is unknown sees an empty one, never everything."""
        if self._workspace_admins(caller) and not self.is_deployment_admin(caller):
            return caller.workspace or "-"
        return None

    async def refused(self, caller: Caller, *, name: str) -> None:
        log.warning("refused %s for a non-admin", name, extra={"chat": _chat(caller)})
        async with self._engine.begin() as conn:
            await _audit(conn, caller, action=f"{name}.refused", allowed=False)

    async def handle(
        self, caller: Caller, *, name: str, args: str, lang: str, prefix: str = "/"
    ) -> Reply:
        if name == "stats":
            return await self.stats(caller, lang=lang)
        return await self.preview(caller, args=args, lang=lang, prefix=prefix)

    async def preview(self, caller: Caller, *, args: str, lang: str, prefix: str = "/") -> Reply:
        try:
            draft = parse_broadcast(args)
        except BadOption as exc:
            return Reply(
                lang,
                t(lang, "admin.broadcast.bad_option", option=exc.option, accepted=exc.accepted),
            )
        if not draft.text or len(draft.text) > MAX_BROADCAST_CHARS:
            return Reply(lang, t(lang, "admin.broadcast.usage", p=prefix))
        workspace = self._workspace_only(caller)
        if workspace:
            draft = replace(draft, audience=replace(draft.audience, workspace=workspace))
        async with self._engine.begin() as conn:
            size = await store.audience_size(conn, draft.audience)
            if size.reach == 0:
                return Reply(
                    lang,
                    t(
                        lang,
                        "admin.broadcast.no_audience",
                        audience=describe_audience(draft.audience, lang),
                        skipped=skipped_text(lang, size.skipped),
                    ),
                )
            broadcast_id = await store.create_broadcast(
                conn,
                text=draft.text,
                audience=draft.audience,
                size=size.reach,
                created_by=actor(caller),
                origin_chat=_chat(caller),
            )
            await _audit(
                conn,
                caller,
                action="broadcast.previewed",
                detail={"broadcast": broadcast_id, "reach": size.reach, "text": draft.text},
            )
        text = "\n\n".join(
            [
                tn(
                    lang,
                    "admin.broadcast.preview",
                    size.reach,
                    skipped=skipped_text(lang, size.skipped),
                ),
                draft.text,
                t(
                    lang,
                    "admin.broadcast.audience",
                    audience=describe_audience(draft.audience, lang),
                ),
            ]
        )
        buttons = (
            (
                Button(t(lang, "admin.broadcast.send"), f"{SEND}{broadcast_id}"),
                Button(t(lang, "admin.broadcast.cancel"), f"{CANCEL}{broadcast_id}"),
            ),
        )
        return Reply(lang, text, buttons=buttons)

    async def handle_action(self, caller: Caller, *, action: str, lang: str) -> Reply | None:
        if not action.startswith((SEND, CANCEL)):
            return None
        if not self.is_admin(caller):
            await self.refused(caller, name="broadcast")
            return Reply(lang, t(lang, "cmd.admins_only"))
        try:
            broadcast_id = int(action.rsplit(":", 1)[1])
        except ValueError:
            return Reply(lang, t(lang, "admin.broadcast.unknown"))
        if action.startswith(SEND):
            return await self.confirm(caller, broadcast_id=broadcast_id, lang=lang)
        return await self.cancel(caller, broadcast_id=broadcast_id, lang=lang)

    async def confirm(self, caller: Caller, *, broadcast_id: int, lang: str) -> Reply:
        async with self._engine.begin() as conn:
            broadcast = await self._decidable(conn, caller, broadcast_id)
            if broadcast is None:
                return Reply(lang, t(lang, "admin.broadcast.unknown"))
            queued = await store.confirm_broadcast(conn, broadcast_id)
            await _audit(
                conn,
                caller,
                action="broadcast.confirmed" if queued is not None else "broadcast.repeated",
                detail={"broadcast": broadcast_id, "queued": queued},
            )
        if queued is None:
            return _not_pending(lang, broadcast)
        return Reply(lang, tn(lang, "admin.broadcast.queued", queued, id=broadcast_id))

    async def cancel(self, caller: Caller, *, broadcast_id: int, lang: str) -> Reply:
        async with self._engine.begin() as conn:
            broadcast = await self._decidable(conn, caller, broadcast_id)
            if broadcast is None:
                return Reply(lang, t(lang, "admin.broadcast.unknown"))
            cancelled = await store.cancel_broadcast(conn, broadcast_id)
            await _audit(
                conn,
                caller,
                action="broadcast.cancelled",
                detail={"broadcast": broadcast_id, "changed": cancelled},
            )
        if not cancelled:
            return _not_pending(lang, broadcast)
        return Reply(lang, t(lang, "admin.broadcast.cancelled", id=broadcast_id))

    async def _decidable(
        self, conn: AsyncConnection, caller: Caller, broadcast_id: int
    ) -> store.Broadcast | None:
        """The broadcast, if there is one ``caller`` may send or cancel: a workspace's
        installer decides only on the broadcasts they previewed."""
        broadcast = await store.get_broadcast(conn, broadcast_id)
        if broadcast is None:
            return None
        if self._workspace_only(caller) is None or broadcast.created_by == actor(caller):
            return broadcast
        return None

    async def broadcast_row_done(self, broadcast_id: int) -> None:
        """Called by the delivery engine when a row of the broadcast was completed (sent or
        failed for good) and this process holds no more of its rows; once every row is
        done, the admin who confirmed it gets a report in that chat's language (once: the
        store marks the broadcast done in the same transaction)."""
        async with self._engine.begin() as conn:
            final = await store.finish_if_done(conn, broadcast_id)
            if final is None:
                return
            broadcast = await store.get_broadcast(conn, broadcast_id)
            if broadcast is None or not broadcast.origin_chat:
                return
            platform, _, chat_id = broadcast.origin_chat.partition(":")
            record = await chat_store.get(conn, platform=Platform(platform), chat_id=chat_id)
            if record is None:
                return
            lang = record.chat.lang
            skipped = (await store.audience_size(conn, broadcast.audience)).skipped
            lines = [
                t(
                    lang,
                    "admin.broadcast.report",
                    id=broadcast_id,
                    sent=final.sent,
                    failed=final.failed,
                    skipped=skipped,
                )
            ]
            if final.failures:
                reasons = ", ".join(f"{reason} ({n})" for reason, n in final.failures)
                lines.append(t(lang, "admin.broadcast.report_failures", reasons=reasons))
            await outbox.enqueue(
                conn,
                [
                    outbox.row_values(
                        chat_pk=record.pk,
                        platform=platform,
                        kind="notice",
                        payload=payloads.Notice(text="\n".join(lines)),
                        now=utcnow(),
                        priority=20,
                    )
                ],
            )

    async def stats(self, caller: Caller, *, lang: str) -> Reply:
        # A workspace's installer sees that workspace's chats and deliveries only: the
        # pages, the sources and other workspaces are the deployment admins'.
        workspace = self._workspace_only(caller)
        async with self._engine.begin() as conn:
            figures = await self.figures(
                conn, workspace=workspace, created_by=actor(caller) if workspace else None
            )
            await _audit(conn, caller, action="stats.viewed")
        return Reply(lang, figures.text(lang), chart=figures.chart(lang))

    async def figures(
        self,
        conn: AsyncConnection,
        *,
        workspace: str | None = None,
        created_by: str | None = None,
    ) -> Stats:
        """The figures of ``stats``: the whole deployment's, or one workspace's (its chats,
        tags, deliveries and ``created_by``'s broadcasts; no pages, no sources)."""
        now = utcnow()
        day_ago = now - dt.timedelta(hours=24)
        scope = chat_store.of_workspace(workspace) if workspace else None
        chat_rows = await store.chat_counts(conn, workspace=workspace)
        tags = await chat_store.subscriber_counts(conn, workspace=workspace)
        page_total = await page_store.page_count(conn)
        new_today = await store.pages_new_since(
            conn, now.replace(hour=0, minute=0, second=0, microsecond=0), baseline=False
        )
        deliveries = await outbox.counts_since(conn, since=day_ago, chat_pks=scope)
        failures = await outbox.top_failures(conn, since=day_ago, chat_pks=scope)
        first_day = now.date() - dt.timedelta(days=CHART_DAYS - 1)
        per_day = await outbox.sent_per_day(
            conn, since=dt.datetime.combine(first_day, dt.time()), chat_pks=scope
        )
        running = await store.in_progress(conn, created_by=created_by)
        toggles = []
        followers: dict[dt.date, dict[str, int]] = {}
        if not workspace:  # the deployment's, like its pages and sources
            followers = await trends.followers_by_day(
                conn, since=now.date() - dt.timedelta(days=TREND_DAYS - 1)
            )
            toggles = await store.action_counts(
                conn, action=toggle.AUDIT_ACTION, since=now - dt.timedelta(days=TOGGLE_DAYS)
            )
        sources: list[SourceFigure] = []
        if not workspace:  # the deployment's, not a workspace's
            for source in await page_store.all_sources(conn):
                if source.name not in self._sources:
                    continue  # no longer configured: nothing is polled there any more
                sources.append(
                    SourceFigure(
                        name=self._sources.of(source.name).name,
                        last_poll_at=source.last_poll_at,
                        error=scrub(source.last_error, source.name) if source.last_error else None,
                    )
                )
        return Stats(
            workspace=workspace,
            chats=[(platform, state, int(n)) for platform, state, n in chat_rows],
            tags=list(tags.items())[:TOP_TAGS],
            pages=None if workspace else page_total,
            new_today=None if workspace else new_today,
            deliveries={k: int(v) for k, v in deliveries.items()},
            failures=list(failures),
            sources=sources,
            broadcasts=list(running),
            toggles=toggles[:TOP_TAGS],
            sent_per_day=per_day,
            first_day=first_day,
            followers_by_day=followers,
        )


@dataclass(frozen=True, slots=True)
class SourceFigure:
    """A configured source in ``stats``: its shown name, last poll (UTC) and last error."""

    name: str
    last_poll_at: dt.datetime | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Stats:
    """The figures of the ``stats`` command (and of ``trendbot stats``)."""

    workspace: str | None
    chats: list[tuple[str, str, int]]  # (platform, state, chats)
    tags: list[tuple[str, int]]  # the most followed tags, with their chats
    pages: int | None  # None for a workspace's installer
    new_today: int | None
    deliveries: dict[str, int]  # sent, failed (last 24 h), queued (now)
    failures: list[tuple[str, int]]  # the top failure reasons of the last 24 h
    sources: list[SourceFigure]
    broadcasts: list[store.Progress]  # confirmed broadcasts still going out
    # (chat, language asked for, presses) of the language toggle, last TOGGLE_DAYS days
    toggles: list[tuple[str, str, int]] = field(default_factory=list)
    # Messages sent on each UTC day of the CHART_DAYS from first_day (a day with none absent).
    sent_per_day: dict[dt.date, int] = field(default_factory=dict)
    first_day: dt.date | None = None
    # Active chats following each tag on the recorded days of the last TREND_DAYS, oldest
    # first (``bot.store.trends``); none for a workspace's installer.
    followers_by_day: dict[dt.date, dict[str, int]] = field(default_factory=dict)

    def followers_trend(self) -> tuple[list[dt.date], list[tuple[str, list[int]]]]:
        """The recorded days, and the chats of each of the :data:`TREND_TAGS` tags most
        followed on the last of them on each day (0 where a day has none)."""
        days = sorted(self.followers_by_day)
        if not days:
            return [], []
        last = self.followers_by_day[days[-1]]
        top = sorted(last, key=lambda tag: (-last[tag], tag))[:TREND_TAGS]
        return days, [(tag, [self.followers_by_day[d].get(tag, 0) for d in days]) for tag in top]

    def chart(self, lang: str) -> Chart:
        """The picture of ``stats``: messages sent on each of :data:`CHART_DAYS` days (none
        on a day is 0), the most followed tags, and with two recorded days or more, the
        followers of the top tags on each (:meth:`followers_trend`)."""
        first = self.first_day or utcnow().date() - dt.timedelta(days=CHART_DAYS - 1)
        days = [first + dt.timedelta(days=i) for i in range(CHART_DAYS)]
        panels = [
            ChartPanel(
                kind="line",
                title=t(lang, "charts.stats.sends"),
                fallback_title=t("en", "charts.stats.sends"),
                labels=tuple(day.strftime("%m-%d") for day in days),
                values=tuple(float(self.sent_per_day.get(day, 0)) for day in days),
            )
        ]
        if self.tags:
            panels.append(
                ChartPanel(
                    kind="bars",
                    title=t(lang, "charts.stats.tags"),
                    fallback_title=t("en", "charts.stats.tags"),
                    labels=tuple(tag for tag, _ in self.tags),
                    values=tuple(float(n) for _, n in self.tags),
                )
            )
        trend_days, trend = self.followers_trend()
        if len(trend_days) < 2 or not trend:  # one point is no trend
            return Chart(alt=t(lang, "charts.stats.alt", days=CHART_DAYS), panels=tuple(panels))
        panels.append(
            ChartPanel(
                kind="lines",
                title=t(lang, "charts.stats.followers"),
                fallback_title=t("en", "charts.stats.followers"),
                labels=tuple(day.strftime("%m-%d") for day in trend_days),
                series=tuple(Series(tag, tuple(map(float, values))) for tag, values in trend),
            )
        )
        alt = t(lang, "charts.stats.alt_followers", days=CHART_DAYS, trend_days=TREND_DAYS)
        return Chart(alt=alt, panels=tuple(panels))

    def text(self, lang: str) -> str:
        """The figures as the ``stats`` reply says them, in ``lang``."""
        lines = [t(lang, "admin.stats.header")]
        if self.workspace:
            lines.append(t(lang, "admin.stats.workspace_only", workspace=self.workspace))
        if self.chats:
            by_platform: dict[str, list[str]] = {}
            for platform, chat_state, n in self.chats:
                by_platform.setdefault(platform, []).append(
                    t(
                        lang,
                        "admin.stats.state_count",
                        state=t(lang, f"admin.stats.state.{chat_state}"),
                        count=n,
                    )
                )
            summary = "; ".join(
                f"{platforms.title(platform, lang)} {', '.join(states)}"
                for platform, states in by_platform.items()
            )
            lines.append(t(lang, "admin.stats.chats", summary=summary))
        else:
            lines.append(t(lang, "admin.stats.no_chats"))
        top = ", ".join(f"{tag} ({n})" for tag, n in self.tags)
        lines.append(t(lang, "admin.stats.tags", tags=top or t(lang, "admin.none")))
        if self.pages is not None:
            lines.append(tn(lang, "admin.stats.pages", self.pages, new=self.new_today))
        lines.append(t(lang, "admin.stats.deliveries", **self.deliveries))
        if self.failures:
            reasons = ", ".join(f"{reason} ({n})" for reason, n in self.failures)
            lines.append(t(lang, "admin.stats.failures", reasons=reasons))
        for source in self.sources:
            when = (
                source.last_poll_at.strftime("%Y-%m-%d %H:%M UTC")
                if source.last_poll_at
                else t(lang, "admin.stats.never")
            )
            error = t(lang, "admin.stats.source_error", error=source.error) if source.error else ""
            lines.append(t(lang, "admin.stats.source", name=source.name, when=when, error=error))
        trend_days, trend = self.followers_trend()
        if len(trend_days) >= 2 and trend:  # what the chart's panel draws, first and last
            changes = ", ".join(f"{tag} {values[0]} → {values[-1]}" for tag, values in trend)
            first, last = (day.strftime("%m-%d") for day in (trend_days[0], trend_days[-1]))
            lines.append(t(lang, "admin.stats.followers", first=first, last=last, changes=changes))
        if self.toggles:
            presses = ", ".join(
                f"{chat} → {t(to, 'render.toggle')} ({n})" for chat, to, n in self.toggles
            )
            lines.append(t(lang, "admin.stats.toggles", days=TOGGLE_DAYS, presses=presses))
        for state in self.broadcasts:
            lines.append(
                t(
                    lang,
                    "admin.stats.broadcast",
                    id=state.broadcast_id,
                    sent=state.sent,
                    failed=state.failed,
                    pending=state.pending,
                    total=state.total,
                )
            )
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        """The figures as one JSON object (``trendbot stats --json``)."""
        chats: dict[str, dict[str, int]] = {}
        for platform, chat_state, n in self.chats:
            chats.setdefault(platform, {})[chat_state] = n
        trend_days, trend = self.followers_trend()
        return {
            "chats": chats,
            "top_tags": [{"tag": tag, "chats": n} for tag, n in self.tags],
            "pages": self.pages,
            "pages_new_today": self.new_today,
            "last_24h": {"sent": self.deliveries["sent"], "failed": self.deliveries["failed"]},
            "queued": self.deliveries["queued"],
            "failure_reasons": [{"reason": r, "count": n} for r, n in self.failures],
            "sources": [
                {
                    "name": s.name,
                    "last_poll_at": (
                        s.last_poll_at.isoformat(timespec="seconds") + "Z"
                        if s.last_poll_at
                        else None
                    ),
                    "error": s.error,
                }
                for s in self.sources
            ],
            "broadcasts": [
                {
                    "id": b.broadcast_id,
                    "total": b.total,
                    "sent": b.sent,
                    "failed": b.failed,
                    "pending": b.pending,
                }
                for b in self.broadcasts
            ],
            "followers_by_day": {
                "days": [day.isoformat() for day in trend_days],
                "tags": dict(trend),
            },
            "language_toggles": {
                "days": TOGGLE_DAYS,
                "presses": [
                    {"chat": chat, "lang": lang, "presses": n} for chat, lang, n in self.toggles
                ],
            },
        }


def _chat(caller: Caller) -> str:
    return f"{caller.platform.value}:{caller.chat_id}"


async def _audit(
    conn: AsyncConnection,
    caller: Caller,
    *,
    action: str,
    allowed: bool = True,
    detail: dict[str, Any] | None = None,
) -> None:
    """An entry of the audit log for what ``caller`` did (or was refused) in its chat."""
    await store.audit(
        conn, actor=actor(caller), chat=_chat(caller), action=action, allowed=allowed, detail=detail
    )


def _not_pending(lang: str, broadcast: store.Broadcast) -> Reply:
    """The reply to a decision on a broadcast already sent or cancelled."""
    return Reply(
        lang, t(lang, "admin.broadcast.not_pending", id=broadcast.id, status=broadcast.status)
    )
