"""A paper is one paper on every surface, and a source taken out of ``WIKI_SOURCES`` leaves
them all: the same papers through two sources of each kind (two directories, a directory and
a feed of it, a directory and its git mirror), read through the command core (``latest``,
``tags``, ``why``, ``stats``), the served private Atom feed, ``/healthz`` and the command line
(``poll --backfill``, ``stats --json``), on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import feedparser
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import Caller, CommandCore, Defaults
from bot.commands.operator import Admin
from bot.matching.planner import Planner
from bot.models import ChatKind, Page, PageText, Platform
from bot.ops.feed_server import FeedServer as AtomServer
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.sources import SourceSet
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store import current
from bot.store import pages as page_store
from bot.store.schema import pages
from bot.util import utcnow
from tests.cli import run_cli_async
from tests.conftest import Settings
from tests.fakes.feed_server import FeedServer, Served
from tests.fakes.git_server import git_commit_all

BASE = "https://bot.example.com/trend"
ADMIN = 4242
FEED_URL = re.compile(r"https://bot\.example\.com/trend/feeds/([A-Za-z0-9_-]{43})\.atom")
# The papers both sources carry: arXiv id, title, date.
SHARED = [
    ("2608.10001", "FP8 Rollouts for RL Fine-Tuning", "2026-11-03"),
    ("2608.10002", "Evolution Strategies for Reasoning", "2026-11-02"),
    ("2608.10003", "Process Rewards Without Labels", "2026-11-01"),
]
# A paper only the second source carries.
ONLY_SECOND = ("2608.10004", "Sparse Mixtures for Long Context", "2026-11-04")
KINDS = ["directory", "feed", "git"]


def wiki_page(arxiv: str, title: str, day: str) -> str:
    return (
        f'---\ntitle: "{title}"\narxiv: "{arxiv}"\ncreated: {day}\nupdated: {day}\n'
        f"tags: [rl, reasoning]\n---\n\n## TL;DR\n\nWhat {title} found.\n"
    )


def write_wiki(root: Path, papers: list[tuple[str, str, str]]) -> None:
    for arxiv, title, day in papers:
        slug = title.lower().replace(" ", "-")
        path = root / "papers" / "2026" / f"{arxiv}-{slug}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wiki_page(arxiv, title, day), encoding="utf-8")


def atom(papers: list[tuple[str, str, str]]) -> bytes:
    """An arXiv-like Atom feed: one entry a paper, linking to its abstract (a version)."""
    entries = "".join(
        f"<entry><id>http://arxiv.org/abs/{arxiv}v1</id><title>{title}</title>"
        f'<link href="http://arxiv.org/abs/{arxiv}v1"/><updated>{day}T00:00:00Z</updated>'
        f'<category term="rl"/><category term="reasoning"/>'
        f"<summary>The abstract of {title}.</summary></entry>"
        for arxiv, title, day in papers
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>arXiv</title><id>urn:feed</id>'
        f"<updated>2026-11-04T00:00:00Z</updated>{entries}</feed>"
    ).encode()


@dataclass
class World:
    """Two sources of the same papers (the second with one paper more), a command core, the
    bot's HTTP server, and the command line on the same database."""

    engine: AsyncEngine
    database_url: str
    first: str
    second: str
    core: CommandCore
    http: aiohttp.ClientSession
    base: str
    tmp_path: Path
    env: dict[str, str]

    def sources(self, *, second: bool = True) -> list[str]:
        return [self.first, self.second] if second else [self.first]

    async def poll(self, *, second: bool = True) -> None:
        async with make_feed_client() as http:
            poller = Poller(
                engine=self.engine,
                sources=self.sources(second=second),
                base_url=None,
                default_lang="en",
                http=http,
                data_dir=self.tmp_path / "data",
            )
            summary = await poller.poll()
        assert all(o.error is None for o in summary.outcomes), summary.outcomes

    async def say(self, text: str, *, user: int = ADMIN) -> str:
        return (await self.core.handle(caller(user), text)).text

    async def latest(self) -> list[str]:
        reply = await self.core.handle(caller(ADMIN), "/latest 20")
        return [item.page.text("en").title for item in reply.items]

    async def feed_titles(self, path: str) -> list[str]:
        async with self.http.get(f"{self.base}{path}") as response:
            assert response.status == 200
            parsed = feedparser.parse(await response.read())
        return [entry.title for entry in parsed.entries]

    async def healthz_sources(self) -> list[str]:
        async with self.http.get(f"{self.base}/healthz") as response:
            body = await response.json()
        return [source["name"] for source in body["sources"]]

    async def cli(self, *args: str, second: bool = True) -> str:
        env = dict(self.env, WIKI_SOURCES=",".join(self.sources(second=second)))
        done = await run_cli_async(*args, env=env, cwd=self.tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()[-1]


def caller(user: int) -> Caller:
    return Caller(
        platform=Platform.TELEGRAM,
        chat_id=str(user),
        user_id=str(user),
        chat_kind=ChatKind.PRIVATE,
    )


@asynccontextmanager
async def world(
    kind: str, engine: AsyncEngine, database_url: str, tmp_path: Path, env: dict[str, str]
) -> AsyncIterator[World]:
    first = tmp_path / "wiki"
    write_wiki(first, SHARED)
    async with FeedServer() as feeds:
        if kind == "directory":  # the sample wiki, then one's own with the same pages
            second = tmp_path / "own-wiki"
            shutil.copytree(first, second)
            write_wiki(second, [ONLY_SECOND])
            name = str(second)
        elif kind == "feed":
            name = feeds.serve(
                "/papers.atom", Served(atom([*SHARED, ONLY_SECOND]), "application/atom+xml")
            )
        else:  # the wiki's git mirror
            mirror = tmp_path / "mirror"
            shutil.copytree(first, mirror)
            write_wiki(mirror, [ONLY_SECOND])
            git_commit_all(mirror, tmp_path / "wiki.git", message="the wiki")
            name = f"git+file://{tmp_path / 'wiki.git'}@main"
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None,
            public_base_url=BASE,
            wiki_sources=(str(first), name),
            telegram_bot_token="123456789:AAHfakeTokenForTests_0123456789abcdef",
            telegram_admin_ids=(ADMIN,),
        )
        core = CommandCore(
            engine=engine,
            defaults=Defaults(),
            admin=Admin(engine=engine, settings=settings),
            public_base_url=BASE,
            digests=Planner(engine=engine, welcome=False),
        )
        hooks = WebHooks(
            feeds=AtomServer(engine=engine, public_base_url=BASE).handle,
            sources=SourceSet(settings.wiki_sources),
        )
        runner, port = await start_web(
            make_app(engine=engine, hooks=hooks), host="127.0.0.1", port=0
        )
        try:
            async with aiohttp.ClientSession() as http:
                yield World(
                    engine=engine,
                    database_url=database_url,
                    first=str(first),
                    second=name,
                    core=core,
                    http=http,
                    base=f"http://127.0.0.1:{port}",
                    tmp_path=tmp_path,
                    env=dict(env, DATABASE_URL=database_url),
                )
        finally:
            await runner.cleanup()


ALL = [title for _, title, _ in [ONLY_SECOND, *SHARED]]  # newest first
FIRST_ONLY = [title for _, title, _ in SHARED]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.timeout(240)  # a dozen real CLI runs and a served feed, each a process
async def test_a_paper_through_two_sources_is_one_paper_on_every_surface(
    kind: str, engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    async with world(kind, engine, database_url, tmp_path, clean_env) as w:
        await w.poll()  # the baseline of both sources
        assert "any of rl" in await w.say("/subscribe rl")
        assert await w.latest() == ALL
        tags = await w.say("/tags")
        assert "rl (4)" in tags and "reasoning (4)" in tags, tags
        assert "Pages in the wiki: 4 pages" in await w.say("/stats")
        path = "/feeds/" + FEED_URL.search(await w.say("/feed"))[1] + ".atom"  # type: ignore[index]
        assert await w.feed_titles(path) == ALL
        why = await w.say(f"/why {SHARED[0][0]}")
        assert "Pages that match this" not in why  # the two copies are one paper
        assert "The same paper is also in" in why
        stats = json.loads(await w.cli("stats", "--json"))
        assert stats["pages"] == 4

        # A backfill queues one notification a paper, and a second one none.
        assert await w.cli("poll", "--backfill", "40") == (
            "0 new, 0 updated, 0 skipped (backfill: 4 notifications queued)"
        )
        planned = await Planner(engine=engine, welcome=False).plan_due(
            now=dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(days=8)
        )
        assert planned == 1  # one digest
        assert await w.cli("poll", "--backfill", "40") == (
            "0 new, 0 updated, 0 skipped (backfill: 0 notifications queued)"
        )

        # The second source taken out: its paper leaves every surface, and /healthz.
        assert await w.cli("poll", second=False) == "0 new, 0 updated, 0 skipped"
        assert await w.latest() == FIRST_ONLY
        tags = await w.say("/tags")
        assert "rl (3)" in tags and "reasoning (3)" in tags, tags
        assert "Pages in the wiki: 3 pages" in await w.say("/stats")
        assert await w.feed_titles(path) == FIRST_ONLY
        assert json.loads(await w.cli("stats", "--json", second=False))["pages"] == 3
        assert len(await w.healthz_sources()) == 1
        why = await w.say(f"/why {ONLY_SECOND[0]}")
        assert "Its source is no longer in WIKI_SOURCES" in why, why
        assert "Sent " in why or "Queued" in why  # what was delivered stays in the history
        why = await w.say(f"/why {SHARED[0][0]}")
        assert "The same paper is also in" not in why  # a source taken out is no copy
        await w.say("/lang ko")
        why = await w.say(f"/why {ONLY_SECOND[0]}")
        assert "출처가 더 이상 WIKI_SOURCES에 없어서 보여 주지도 보내지도 않습니다." in why, why
        await w.say("/lang en")

        # Put back: its paper is shown again, and nothing it had is sent again.
        assert await w.cli("poll", "--backfill", "40") == (
            "0 new, 0 updated, 0 skipped (backfill: 0 notifications queued)"
        )
        assert await w.latest() == ALL
        assert await w.feed_titles(path) == ALL
        assert len(await w.healthz_sources()) == 2


async def test_a_page_new_in_a_source_taken_out_before_planning_is_not_delivered(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    async with world("directory", engine, database_url, tmp_path, clean_env) as w:
        await w.poll()
        await w.say("/subscribe rl")
        await w.say("/mode instant")
        write_wiki(Path(w.second), [("2608.10005", "Found While Configured", "2026-11-05")])
        await w.poll()  # its "new" event is queued
        await w.poll(second=False)  # then its source is taken out
        planner = Planner(engine=engine, welcome=False)
        assert await planner.plan_due(now=dt.datetime.now(dt.UTC).replace(tzinfo=None)) == 0
        assert "Found While Configured" not in await w.latest()
        # Put back, the page is shown again; it was never sent, and no new event says so.
        await w.poll()
        assert (await w.latest())[0] == "Found While Configured"


async def record(engine: AsyncEngine, name: str, kind: str, found: list[Page]) -> None:
    async with engine.begin() as conn:
        source = await page_store.source(conn, name=name, kind=kind)
        await page_store.record_pages(
            conn, source=source, found=found, present_keys=None, now=utcnow()
        )


def paper(source: str, n: int, *, day: int, tags: tuple[str, ...]) -> Page:
    return Page(
        source=source,
        key=f"papers/{n}" if source == "wiki" else f"http://arxiv.org/abs/2608.{n:05d}v1",
        texts=(PageText("en", f"Paper {n}", "A finding."),),
        tags=tags,
        arxiv=f"2608.{n:05d}",
        updated=dt.date(2026, 1, 1) + dt.timedelta(days=day),
    )


async def test_the_newest_papers_and_known_tags_when_the_newest_pages_are_all_copies(
    engine: AsyncEngine,
) -> None:
    """Newer feed copies of every wiki page: the shortcuts of ``newest_page_ids`` (the
    newest pages ranked first) and of ``known_tags`` (a few pages of a tag looked at first)
    still give what ranking every page gives."""
    count = current.KNOWN_SAMPLE * 5
    await record(
        engine, "wiki", "directory", [paper("wiki", n, day=n, tags=("rl",)) for n in range(count)]
    )
    await record(
        engine,
        "feed",
        "feed",
        [paper("feed", n, day=n + 200, tags=("rl", "copy-only", "late")) for n in range(count)],
    )
    # A wiki paper recorded after them, the one current page that carries "late".
    await record(engine, "wiki", "directory", [paper("wiki", count, day=0, tags=("late",))])
    async with engine.connect() as conn:
        everything = current.newest_first(
            select(pages.c.id).where(pages.c.id.in_(current.current_ids()))
        )
        expected = list((await conn.execute(everything)).scalars())
        assert len(expected) == count + 1
        for limit, offset in [(5, 0), (20, 0), (20, 40), (50, 60), (count + 1, 0)]:
            found = await current.newest_page_ids(conn, limit=limit, offset=offset)
            assert found == expected[offset : offset + limit], (limit, offset)
        tags = ["rl", "copy-only", "late", "unknown"]
        assert await current.known_tags(conn, tags) == {"rl", "late"}
        assert dict(await current.tag_counts(conn)) == {"rl": count, "late": 1}
