"""One poll: scan every source, record new and changed pages, queue their notifications."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.errors import SourceError
from bot.sources.directory import scan_directory
from bot.sources.feed import fetch_feed
from bot.store import pages as store
from bot.store.engine import reader

log = logging.getLogger("bot.poll")


def is_feed(source: str) -> bool:
    return source.startswith(("http://", "https://"))


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What one source's scan found; ``error`` is set when the whole source failed."""

    name: str
    new: int = 0
    updated: int = 0
    skipped: int = 0
    queued: int = 0
    baseline: bool = False
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class PollSummary:
    outcomes: tuple[SourceOutcome, ...]
    backfilled: int | None = None  # notifications queued by --backfill

    @property
    def new(self) -> int:
        return sum(o.new for o in self.outcomes)

    @property
    def updated(self) -> int:
        return sum(o.updated for o in self.outcomes)

    @property
    def skipped(self) -> int:
        return sum(o.skipped for o in self.outcomes)

    @property
    def queued(self) -> int:
        return sum(o.queued for o in self.outcomes) + (self.backfilled or 0)

    @property
    def all_failed(self) -> bool:
        return bool(self.outcomes) and all(o.error is not None for o in self.outcomes)

    def line(self) -> str:
        """The contract's summary: ``N new, M updated, K skipped`` and how much was queued."""
        text = f"{self.new} new, {self.updated} updated, {self.skipped} skipped"
        if self.backfilled is not None:
            return f"{text} (backfill: {self.queued} notifications queued)"
        if any(o.baseline for o in self.outcomes):
            return f"{text} (baseline: nothing queued)"
        return text


class Poller:
    """Scans the configured sources into the store.

    Each source is recorded in one transaction, so a failure half-way through a source
    leaves the store as it was before that source; the other sources go on.
    """

    def __init__(
        self,
        *,
        engine: AsyncEngine,
        sources: Sequence[str],
        base_url: str | None,
        default_lang: str,
        http: httpx.AsyncClient,
    ) -> None:
        self._engine = engine
        self._sources = tuple(sources)
        self._base_url = base_url
        self._default_lang = default_lang
        self._http = http
        self._lock = asyncio.Lock()

    async def poll(
        self, *, backfill_days: int | None = None, today: dt.date | None = None
    ) -> PollSummary:
        async with self._lock:
            outcomes = []
            for name in self._sources:
                started = time.perf_counter()
                outcome = await self._poll_one(name)
                seconds = time.perf_counter() - started
                outcomes.append(replace(outcome, seconds=seconds))
            backfilled = None
            if backfill_days is not None:
                since = (today or dt.date.today()) - dt.timedelta(days=backfill_days)
                async with self._engine.begin() as conn:
                    backfilled = await store.queue_backfill(conn, since=since, now=store.utcnow())
            summary = PollSummary(tuple(outcomes), backfilled)
            log.info("poll finished: %s", summary.line())
            return summary

    async def _poll_one(self, name: str) -> SourceOutcome:
        kind = "feed" if is_feed(name) else "directory"
        async with self._engine.begin() as conn:
            source = await store.source(conn, name=name, kind=kind)
        try:
            if kind == "feed":
                return await self._poll_feed(source)
            return await self._poll_directory(source)
        except SourceError as exc:
            log.warning("source failed: %s: %s", name, exc.reason)
            async with self._engine.begin() as conn:
                await store.record_failure(
                    conn, source_id=source.id, error=exc.reason, now=store.utcnow()
                )
            return SourceOutcome(name=name, error=exc.reason)

    async def _poll_directory(self, source: store.SourceRow) -> SourceOutcome:
        async with reader(self._engine).connect() as conn:
            known = await store.stamps(conn, source.id)
        scan = await asyncio.to_thread(
            scan_directory,
            Path(source.name),
            source=source.name,
            base_url=self._base_url,
            default_lang=self._default_lang,
            known=known,
        )
        async with self._engine.begin() as conn:
            recorded = await store.record_pages(
                conn,
                source=source,
                found=scan.pages,
                present_keys=scan.present_keys,
                now=store.utcnow(),
            )
            await store.save_stamps(conn, source_id=source.id, old=known, new=scan.stamps)
        return SourceOutcome(
            name=source.name,
            new=recorded.new,
            updated=recorded.updated,
            skipped=len(scan.skipped),
            queued=recorded.queued,
            baseline=source.baseline_at is None,
        )

    async def _poll_feed(self, source: store.SourceRow) -> SourceOutcome:
        result = await fetch_feed(
            self._http,
            source.name,
            etag=source.etag,
            last_modified=source.last_modified,
            default_lang=self._default_lang,
        )
        async with self._engine.begin() as conn:
            recorded = await store.record_pages(
                conn,
                source=source,
                found=() if result.not_modified else result.pages,
                present_keys=None,
                now=store.utcnow(),
            )
            await store.save_validators(
                conn, source_id=source.id, etag=result.etag, last_modified=result.last_modified
            )
        for skipped in result.skipped:
            log.warning("entry skipped: %s: %s: %s", source.name, skipped.path, skipped.reason)
        return SourceOutcome(
            name=source.name,
            new=recorded.new,
            updated=recorded.updated,
            skipped=len(result.skipped),
            queued=recorded.queued,
            baseline=source.baseline_at is None,
        )
