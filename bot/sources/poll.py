"""One poll: scan every source, record new and changed pages, queue their notifications.

Sources are polled concurrently, at most :data:`POLL_CONCURRENCY` at once, and each within
:data:`SOURCE_DEADLINE_SECONDS` (fetch or scan, parse and record), so one slow or hanging
feed delays neither the others nor the next poll by more than that. Whatever goes wrong
with one source, an unexpected error included, fails that source alone: it is logged with
the source's name, recorded on the source (``/healthz`` shows it) and counted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import dberrors
from bot.errors import SourceError
from bot.rules.urls import is_feed_url
from bot.sources import Source, SourceSet
from bot.sources.clones import forget_earlier_clones
from bot.sources.directory import scan_directory
from bot.sources.feed import fetch_feed
from bot.sources.git import GitRepository, clone_directory
from bot.store import current, planning
from bot.store import pages as store
from bot.store.engine import reader

log = logging.getLogger("bot.poll")

POLL_CONCURRENCY = 4  # sources fetched at once: enough to hide a slow one, polite to hosts
SOURCE_DEADLINE_SECONDS = 60.0  # one source's whole poll; past it the source fails this time


def is_feed(source: str) -> bool:
    return is_feed_url(source)


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What one source's scan found; ``error`` is set when the whole source failed."""

    source: Source
    new: int = 0
    updated: int = 0
    skipped: int = 0
    queued: int = 0
    baseline: bool = False
    error: str | None = None
    seconds: float = 0.0
    database_failed: bool = False  # the error was the database's (away, full): not the source's

    @property
    def name(self) -> str:
        """The source's public identity (its ``sources.name``)."""
        return self.source.key

    @property
    def shown(self) -> str:
        """The source's name as logs, metrics and replies show it (no credentials)."""
        return self.source.name


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
    def database_failed(self) -> bool:
        """Some source could not be recorded for the database's error: what it read waits
        for the next poll."""
        return any(o.database_failed for o in self.outcomes)

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
        allow_cross_host_redirects: bool = False,
        source_deadline: float = SOURCE_DEADLINE_SECONDS,
        data_dir: Path = Path("data"),
    ) -> None:
        self._data_dir = data_dir
        self._engine = engine
        self._source_deadline = source_deadline
        self.sources = SourceSet(sources)
        self._base_url = base_url
        self._default_lang = default_lang
        self._http = http
        self._allow_cross_host = allow_cross_host_redirects
        self._lock = asyncio.Lock()
        self._limit = asyncio.Semaphore(POLL_CONCURRENCY)
        # Failed polls of each source since this process started, by source id (/healthz).
        self.failures: dict[str, int] = {}
        self._clones_checked: set[str] = set()

    async def poll(
        self,
        *,
        backfill_days: int | None = None,
        today: dt.date | None = None,
        log_summary: bool = True,
    ) -> PollSummary:
        """Scan every source once. ``log_summary`` false: the caller shows the summary
        itself (``trendbot poll`` prints it), so it is not said twice."""
        async with self._lock:
            await self.record_configured()
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._timed(source)) for source in self.sources]
            outcomes = [task.result() for task in tasks]
            backfilled = None
            if backfill_days is not None:
                since = (today or dt.date.today()) - dt.timedelta(days=backfill_days)
                async with self._engine.begin() as conn:
                    backfilled = await planning.queue_backfill(
                        conn, since=since, now=store.utcnow()
                    )
            summary = PollSummary(tuple(outcomes), backfilled)
            if log_summary:
                log.info("poll finished: %s", summary.line())
            return summary

    async def record_configured(self) -> None:
        """Record which sources are configured: the pages of any other source the store
        holds leave every surface (``bot.store.current``) until it is configured again.
        Done at the start of ``run`` and of every poll; a database error is logged (each
        source's poll then says it too)."""
        try:
            async with self._engine.begin() as conn:
                rows = [await self._row(conn, source) for source in self.sources]
                await current.configure(conn, [row.id for row in rows], now=store.utcnow())
        except Exception as exc:
            reason = dberrors.reason(exc) if dberrors.is_outage(exc) else type(exc).__name__
            log.warning("could not record the configured sources: %s", reason)

    @staticmethod
    async def _row(conn: AsyncConnection, identity: Source) -> store.SourceRow:
        """The store's row of a configured source, created on first use."""
        return await store.source(conn, name=identity.key, kind=identity.spec.kind)

    async def _timed(self, source: Source) -> SourceOutcome:
        async with self._limit:
            started = time.perf_counter()
            outcome = await self._poll_one(source)
            outcome = replace(outcome, seconds=time.perf_counter() - started)
        if outcome.error is not None:
            self.failures[source.id] = self.failures.get(source.id, 0) + 1
        return outcome

    async def _poll_one(self, identity: Source) -> SourceOutcome:
        kind = identity.spec.kind
        shown = identity.name
        source_id: int | None = None
        database_failed = False
        try:
            async with asyncio.timeout(self._source_deadline):
                async with self._engine.begin() as conn:
                    source = await self._row(conn, identity)
                source_id = source.id
                if kind == "feed":
                    return await self._poll_feed(source, identity)
                if kind == "git":
                    return await self._poll_git(source, identity)
                return await self._poll_directory(source, identity)
        except SourceError as exc:
            # Public: /healthz shows it. A library's text may quote the request it made:
            # credentials out, whatever it says. The outside's own words (git's) go to the
            # log alone: they may name hosts and addresses that /healthz would show anyone.
            credentials = identity.spec.credentials
            reason = credentials.scrub(exc.reason)
            said = f"{reason} ({credentials.scrub(exc.detail)})" if exc.detail else reason
            log.warning("source failed: %s: %s", shown, said)
        except TimeoutError:
            reason = f"took longer than {self._source_deadline:g} s"
            log.warning("source failed: %s: %s", shown, reason)
        except Exception as exc:  # a bug or a database error: this source fails, not the poll
            if dberrors.is_outage(exc):  # "database or disk is full", a refused connect...
                reason = f"database error: {dberrors.reason(exc)}"
                database_failed = True
                log.error("source failed: %s: %s", shown, reason)
            else:
                reason = f"unexpected error: {type(exc).__name__}"
                log.error("source failed: %s: %s", shown, reason, exc_info=True)
        if source_id is not None:
            try:
                async with self._engine.begin() as conn:
                    await store.record_failure(
                        conn, source_id=source_id, error=reason, now=store.utcnow()
                    )
            except Exception:
                log.error("source failed: %s: its failure could not be recorded", shown)
        return SourceOutcome(source=identity, error=reason, database_failed=database_failed)

    async def _poll_directory(self, source: store.SourceRow, identity: Source) -> SourceOutcome:
        async with reader(self._engine).connect() as conn:
            known = await store.stamps(conn, source.id)
        # A cancelled or timed-out poll tells its scan to stop, so no thread of it outlives
        # the poll by more than one file's read (shutdown waits for the threads).
        stop = threading.Event()
        try:
            scan = await asyncio.to_thread(
                scan_directory,
                Path(source.name),
                source=source.name,
                base_url=self._base_url,
                default_lang=self._default_lang,
                known=known,
                stop=stop,
            )
        finally:
            stop.set()
        async with self._engine.begin() as conn:
            recorded = await store.record_pages(
                conn,
                source=source,
                found=scan.pages,
                present_keys=scan.present_keys,
                now=store.utcnow(),
            )
            await store.save_stamps(conn, source_id=source.id, old=known, new=scan.stamps)
        return _outcome(source, identity=identity, recorded=recorded, skipped=len(scan.skipped))

    async def _poll_git(self, source: store.SourceRow, identity: Source) -> SourceOutcome:
        """Fetch the repository; record the pages that changed since the commit the last
        scan recorded. A new page is first seen when its commit was made, where that is
        after the last poll (a page pushed a minute ago is a minute old, not older)."""
        # A cancelled or timed-out poll ends the git command under way, with every helper
        # it started (its process group), and the scan stops: no thread or process of it
        # outlives the poll (shutdown waits for the threads).
        stop = threading.Event()
        try:
            return await self._scan_git(source, identity, stop)
        finally:
            stop.set()

    async def _scan_git(
        self, source: store.SourceRow, identity: Source, stop: threading.Event
    ) -> SourceOutcome:
        repository = GitRepository(
            identity.spec,
            directory=clone_directory(self._data_dir, identity.key),
            stop=stop,
            allow_cross_host=self._allow_cross_host,
        )
        if identity.id not in self._clones_checked:  # once a process and source
            self._clones_checked.add(identity.id)
            await asyncio.to_thread(
                forget_earlier_clones,
                repository.directory.parent,
                remote=repository.url.remote,
                keep=repository.directory,
            )
        scan = await asyncio.to_thread(
            repository.scan, base_url=self._base_url, default_lang=self._default_lang
        )
        now = store.utcnow()
        if scan.unchanged:
            async with self._engine.begin() as conn:
                recorded = await store.record_pages(
                    conn, source=source, found=(), present_keys=None, now=now
                )
            return _outcome(source, identity=identity, recorded=recorded, skipped=0)
        commit_time = scan.commit_time.replace(tzinfo=None)
        last = source.last_poll_at
        seen = commit_time if last is not None and last < commit_time < now else now
        async with self._engine.begin() as conn:
            await store.rename_pages(conn, source_id=source.id, renames=scan.renames)
            recorded = await store.record_pages(
                conn,
                source=source,
                found=scan.pages,
                present_keys=scan.present_keys,
                now=now,
                seen_at=seen,
            )
        await asyncio.to_thread(repository.mark_scanned, scan.commit)
        for skipped in scan.skipped:
            log.warning("file skipped: %s: %s: %s", identity.name, skipped.path, skipped.reason)
        return _outcome(source, identity=identity, recorded=recorded, skipped=len(scan.skipped))

    async def _poll_feed(self, source: store.SourceRow, identity: Source) -> SourceOutcome:
        result = await fetch_feed(
            self._http,
            identity.spec,
            etag=source.etag,
            last_modified=source.last_modified,
            default_lang=self._default_lang,
            allow_cross_host=self._allow_cross_host,
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
            log.warning("entry skipped: %s: %s: %s", identity.name, skipped.path, skipped.reason)
        return _outcome(source, identity=identity, recorded=recorded, skipped=len(result.skipped))


def _outcome(
    source: store.SourceRow, *, identity: Source, recorded: store.Recorded, skipped: int
) -> SourceOutcome:
    """A scan recorded: its counts, and whether it was the source's first (its baseline)."""
    return SourceOutcome(
        source=identity,
        new=recorded.new,
        updated=recorded.updated,
        skipped=skipped,
        queued=recorded.queued,
        baseline=source.baseline_at is None,
    )
