"""``stats``: the deployment's figures (chats, the most followed tags, pages, deliveries,
failure reasons, sources, broadcasts going out) as the chat reply says them, as a chart,
and as JSON (``trendbot stats --json``). A Slack workspace's installer sees that
workspace's chats, deliveries and broadcasts only.

Who else reads the answer decides too: in a group or channel whose members all see the
reply, ``stats`` shows that chat's own deliveries and says to ask in a private chat for
the rest; the whole deployment's figures (other chats' ids, the sources, the chart) are
answered only in a private chat or where the platform shows the answer to the asker
alone (``PlatformRules.private_replies``: Slack's ephemeral replies).

:class:`Statistics` is the admin module's part for it (:mod:`bot.commands.admin_parts`),
built from the store, who the admins are and the configured sources alone; ``trendbot
stats`` and the tests read its :meth:`Statistics.figures` through the admin module.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import platforms
from bot.commands import audit
from bot.commands.admin_parts import AdminCommand, Admins, Needs, Press, part
from bot.commands.base import Caller
from bot.i18n import t, tn
from bot.models import Chart, ChartPanel, ChatKind, Reply, Series
from bot.render import toggle
from bot.sources import SourceSet
from bot.store import admin as store
from bot.store import chats as chat_store
from bot.store import current, trends
from bot.store import pages as page_store
from bot.util import utcnow

__all__ = [
    "CHART_DAYS",
    "TOGGLE_DAYS",
    "TOP_TAGS",
    "TREND_DAYS",
    "TREND_TAGS",
    "SourceFigure",
    "Statistics",
    "Stats",
    "seen_alone",
    "statistics",
]

TOP_TAGS = 10
TOGGLE_DAYS = 7  # the language toggle's presses ``stats`` counts
CHART_DAYS = 14  # the stats chart's sends per day: two weeks, today included
TREND_DAYS = 30  # the stats chart's followers by day: a month, today included
TREND_TAGS = 5  # lines on that panel: more are not told apart


class Statistics:
    """The ``stats`` part of the admin module: the command, and the figures it reads.

    ``sources`` are the configured ones: a source no longer configured is not shown.
    """

    def __init__(self, *, engine: AsyncEngine, admins: Admins, sources: SourceSet) -> None:
        self._engine = engine
        self._admins = admins
        self._sources = sources
        self.commands: Mapping[str, AdminCommand] = {"stats": self.stats}
        self.presses: Mapping[str, Press] = {}

    async def stats(self, caller: Caller, *, args: str, lang: str, prefix: str = "/") -> Reply:
        """``stats`` for an admin (``args`` are ignored), audited: the figures where the
        answer is read by the asker alone, else the chat's own deliveries."""
        # A workspace's installer sees that workspace's chats and deliveries only: the
        # pages, the sources and other workspaces are the deployment admins'.
        workspace = self._admins.workspace_only(caller)
        async with self._engine.begin() as conn:
            if not seen_alone(caller):
                record = await chat_store.get(
                    conn, platform=caller.platform, chat_id=caller.chat_id
                )
                figures = await self.chat_figures(conn, chat_pk=record.pk if record else None)
                await audit.record(conn, caller, action="stats.viewed")
                return Reply(lang, figures.text(lang, prefix=prefix))
            figures = await self.figures(
                conn, workspace=workspace, created_by=audit.actor(caller) if workspace else None
            )
            await audit.record(conn, caller, action="stats.viewed")
        return Reply(lang, figures.text(lang), chart=figures.chart(lang))

    async def chat_figures(self, conn: AsyncConnection, *, chat_pk: int | None) -> Stats:
        """The figures of ``stats`` in a group whose members all read the answer: that
        chat's deliveries and failures of the last 24 hours, nothing of any other chat."""
        day_ago = utcnow() - dt.timedelta(hours=24)
        scope = [chat_pk] if chat_pk is not None else []
        deliveries = await store.counts_since(conn, since=day_ago, chat_pks=scope)
        failures = await store.top_failures(conn, since=day_ago, chat_pks=scope)
        return Stats(
            workspace=None,
            chats=[],
            tags=[],
            pages=None,
            new_today=None,
            deliveries={k: int(v) for k, v in deliveries.items()},
            failures=list(failures),
            sources=[],
            broadcasts=[],
            chat_only=True,
        )

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
        page_total = await current.paper_count(conn)
        new_today = await current.papers_new_since(
            conn, now.replace(hour=0, minute=0, second=0, microsecond=0), baseline=False
        )
        deliveries = await store.counts_since(conn, since=day_ago, chat_pks=scope)
        failures = await store.top_failures(conn, since=day_ago, chat_pks=scope)
        first_day = now.date() - dt.timedelta(days=CHART_DAYS - 1)
        per_day = await store.sent_per_day(
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
            for source in await page_store.all_sources(conn, configured=True):
                if source.name not in self._sources:
                    continue  # no longer configured: nothing is polled there any more
                sources.append(
                    SourceFigure(
                        name=self._sources.of(source.name).name,
                        last_poll_at=source.last_poll_at,
                        error=source.last_error,
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


@part
def statistics(needs: Needs) -> Statistics:
    """The stats part, as the admin module builds it."""
    return Statistics(
        engine=needs.engine, admins=needs.admins, sources=SourceSet(needs.settings.wiki_sources)
    )


def seen_alone(caller: Caller) -> bool:
    """Whether the answer to ``caller`` is read by them alone: a private chat, or a
    platform whose replies only the asker sees."""
    return caller.chat_kind == ChatKind.PRIVATE or platforms.rules(caller.platform).private_replies


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
    # The figures of the one chat ``stats`` was asked in (a group): its deliveries only.
    chat_only: bool = False

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

    def text(self, lang: str, *, prefix: str = "/") -> str:
        """The figures as the ``stats`` reply says them, in ``lang`` (commands spelt with
        ``prefix``)."""
        lines = [t(lang, "admin.stats.header")]
        if self.chat_only:
            lines.append(t(lang, "admin.stats.chat_only", p=prefix))
            lines.append(t(lang, "admin.stats.deliveries", **self.deliveries))
            if self.failures:
                reasons = ", ".join(f"{reason} ({n})" for reason, n in self.failures)
                lines.append(t(lang, "admin.stats.failures", reasons=reasons))
            return "\n".join(lines)
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
