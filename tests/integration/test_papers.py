"""One delivery per paper: a wiki page and a feed entry of the same paper reach a chat once,
as the wiki page; on SQLite and PostgreSQL, through the real poll and planning."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import Caller, CommandCore, Defaults
from bot.matching.planner import Planner
from bot.models import ChatKind, ChatSettings, Mode, Platform
from bot.rules import filters
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store import chats as chat_store
from bot.store.schema import pages
from tests.fakes.feed_server import FeedServer, Served
from tests.integration.test_planner import LATER, queued_for
from tests.integration.test_poll import write

ARXIV = "2608.27351"


def wiki_page(*, tldr: str = "The wiki's own summary.", updated: str = "2026-11-01") -> str:
    return (
        "---\n"
        'title: "Evolution Strategies for LLM Reasoning"\n'
        f'arxiv: "{ARXIV}v2"\n'
        f"updated: {updated}\n"
        "tags: [rl, reasoning]\n"
        "---\n\n"
        f"## TL;DR\n\n{tldr}\n"
    )


def atom(*entries: tuple[str, str, str]) -> bytes:
    """An Atom feed of ``(id, link, summary)`` entries."""
    body = "".join(
        f"<entry><id>{entry_id}</id><title>ES for reasoning</title>"
        f'<link href="{link}"/><updated>2026-11-01T00:00:00Z</updated>'
        f'<category term="rl"/><summary>{summary}</summary></entry>'
        for entry_id, link, summary in entries
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>arXiv</title><id>urn:feed</id>'
        f"<updated>2026-11-01T00:00:00Z</updated>{body}</feed>"
    ).encode()


OTHER = ("urn:other", "https://blog.example.org/other", "Another paper.")


def arxiv_entry(version: int = 1, summary: str = "The abstract.") -> tuple[str, str, str]:
    link = f"http://arxiv.org/abs/{ARXIV}v{version}"
    return (link, link, summary)


class Papers:
    """A directory wiki and an arXiv-like feed polled together, and a planner."""

    def __init__(
        self, engine: AsyncEngine, root: Path, server: FeedServer, http: httpx.AsyncClient
    ) -> None:
        self.engine = engine
        self.root = root
        self.server = server
        self.feed_url = server.serve("/arxiv.atom", Served(atom(OTHER), "application/atom+xml"))
        self.poller = Poller(
            engine=engine,
            sources=[str(root), self.feed_url],
            base_url=None,
            default_lang="en",
            http=http,
        )
        self.planner = Planner(engine=engine, welcome=False)
        self.days = 0

    async def start(self) -> None:
        write(self.root, "topics/intro.md", "---\ntitle: Intro\ntags: [meta]\n---\n\nHello.\n")
        await self.poll()  # the baseline of both sources

    def feed(self, *entries: tuple[str, str, str]) -> None:
        self.server.serve("/arxiv.atom", Served(atom(OTHER, *entries), "application/atom+xml"))

    def wiki(self, path: str = f"papers/2026/{ARXIV}-es-reasoning.md", **kw: str) -> None:
        write(self.root, path, wiki_page(**kw))

    async def poll(self) -> None:
        summary = await self.poller.poll()
        assert all(o.error is None for o in summary.outcomes), summary.outcomes

    async def chat(self, chat_id: str, *, mode: Mode = Mode.DAILY) -> None:
        settings = ChatSettings(
            platform=Platform.TELEGRAM,
            chat_id=chat_id,
            mode=mode,
            filter=filters.parse_filter("rl"),
        )
        async with self.engine.begin() as conn:
            await chat_store.ensure(conn, defaults=settings)

    async def plan(self, planner: Planner | None = None) -> int:
        self.days += 1
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None) + self.days * LATER
        return await (planner or self.planner).plan_due(now=now)

    async def delivered(self, chat_id: str) -> list[tuple[int, bool]]:
        """Every page planned for the chat, with whether it came as updated, in order."""
        found = []
        for message in await queued_for(self.engine, platform=Platform.TELEGRAM, chat_id=chat_id):
            found += [(int(p), bool(u)) for p, u in message["pages"]]  # type: ignore[attr-defined]
        return found

    async def page_ids(self) -> dict[str, int]:
        """Page id by paper identity and source kind: ``"wiki"`` and ``"feed"``."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(pages.c.id, pages.c.source_id, pages.c.paper, pages.c.key)
                .where(pages.c.paper == f"arxiv:{ARXIV}")
                .order_by(pages.c.id)
            )
            return {("feed" if key.startswith("http") else "wiki"): i for i, _, _, key in rows}


@pytest.fixture
async def world(engine: AsyncEngine, tmp_path: Path) -> Papers:
    async with FeedServer() as server, make_feed_client() as http:
        papers = Papers(engine, tmp_path / "wiki", server, http)
        await papers.start()
        yield papers  # type: ignore[misc]


MODES = [Mode.DAILY, Mode.INSTANT]


@pytest.mark.parametrize("mode", MODES)
async def test_both_sources_in_one_poll_give_one_delivery_of_the_wiki_page(
    world: Papers, mode: Mode
) -> None:
    await world.chat("1", mode=mode)
    world.wiki()
    world.feed(arxiv_entry())
    await world.poll()
    await world.plan()
    ids = await world.page_ids()
    assert set(ids) == {"wiki", "feed"}
    assert await world.delivered("1") == [(ids["wiki"], False)]
    await world.poll()
    assert await world.plan() == 0
    assert await world.delivered("1") == [(ids["wiki"], False)]


@pytest.mark.parametrize("mode", MODES)
async def test_a_feed_entry_after_the_wiki_page_sends_nothing(world: Papers, mode: Mode) -> None:
    await world.chat("1", mode=mode)
    world.wiki()
    await world.poll()
    await world.plan()
    world.feed(arxiv_entry())
    await world.poll()
    assert await world.plan() == 0
    ids = await world.page_ids()
    assert await world.delivered("1") == [(ids["wiki"], False)]


@pytest.mark.parametrize("mode", MODES)
async def test_the_wiki_text_wins_when_the_feed_came_first_but_was_not_sent_yet(
    world: Papers, mode: Mode
) -> None:
    await world.chat("1", mode=mode)
    world.feed(arxiv_entry())
    await world.poll()
    world.wiki()
    await world.poll()
    await world.plan()
    ids = await world.page_ids()
    assert await world.delivered("1") == [(ids["wiki"], False)]


@pytest.mark.parametrize("mode", MODES)
async def test_a_wiki_page_after_its_feed_entry_was_sent_comes_as_updated(
    world: Papers, mode: Mode
) -> None:
    await world.chat("1", mode=mode)
    world.feed(arxiv_entry())
    await world.poll()
    await world.plan()
    ids = await world.page_ids()
    assert await world.delivered("1") == [(ids["feed"], False)]
    world.wiki()
    await world.poll()
    await world.plan()
    ids = await world.page_ids()
    # Never a second "new": the wiki's text follows as an update of the paper.
    assert await world.delivered("1") == [(ids["feed"], False), (ids["wiki"], True)]
    await world.poll()
    assert await world.plan() == 0
    # A later version of the feed entry (v2) changes nothing the chat is shown.
    world.feed(arxiv_entry(version=2, summary="The revised abstract."))
    await world.poll()
    assert await world.plan() == 0
    # The wiki page's own update follows the usual rules.
    world.wiki(tldr="A revised wiki summary.", updated="2026-11-05")
    await world.poll()
    await world.plan()
    delivered = await world.delivered("1")
    assert delivered[2:] == [(ids["wiki"], True)] and len(delivered) == 3


async def test_a_wiki_page_moved_with_its_arxiv_id_is_not_new_again(world: Papers) -> None:
    await world.chat("1", mode=Mode.INSTANT)
    world.wiki()
    await world.poll()
    await world.plan()
    first = await world.delivered("1")
    assert len(first) == 1
    old = world.root / f"papers/2026/{ARXIV}-es-reasoning.md"
    old.unlink()
    world.wiki(path=f"papers/2027/{ARXIV}-evolution-strategies.md")
    await world.poll()
    assert await world.plan() == 0
    assert await world.delivered("1") == first


async def test_two_planners_at_once_deliver_the_paper_once(
    world: Papers, engine: AsyncEngine
) -> None:
    for n in range(1, 41):
        await world.chat(str(n), mode=Mode.INSTANT)
    world.wiki()
    world.feed(arxiv_entry())
    await world.poll()
    replica = Planner(engine=engine, welcome=False, batch=7)
    world.planner = Planner(engine=engine, welcome=False, batch=5)
    await asyncio.gather(world.plan(), world.plan(replica))
    await world.plan()
    ids = await world.page_ids()
    for n in range(1, 41):
        assert await world.delivered(str(n)) == [(ids["wiki"], False)], n


def _caller(chat_id: str) -> Caller:
    return Caller(
        platform=Platform.TELEGRAM, chat_id=chat_id, user_id="7", chat_kind=ChatKind.PRIVATE
    )


async def test_why_names_the_source_and_why_the_other_copy_was_not_sent(
    world: Papers, engine: AsyncEngine
) -> None:
    core = CommandCore(engine=engine, defaults=Defaults(), digests=world.planner)
    await world.chat("1", mode=Mode.INSTANT)
    world.wiki()
    world.feed(arxiv_entry())
    await world.poll()
    await world.plan()
    wiki_name = world.root.name  # a directory by its name: the server's paths are not shown
    feed_name = world.feed_url

    # The feed's copy: asked by its link, answered for the page that was sent.
    text = (await core.handle(_caller("1"), f"/why http://arxiv.org/abs/{ARXIV}v1")).text
    assert f"From {feed_name}." in text
    assert f"The same paper is also in {wiki_name}: a chat gets a paper once" in text
    assert "Your filter matches it: it carries rl, which you follow." in text
    assert "Queued: due " in text
    assert "Pages that match this" not in text  # two copies of one paper are one page

    # The wiki page, by its path: the feed's copy is named as not sent again.
    text = (await core.handle(_caller("1"), f"/why papers/2026/{ARXIV}-es-reasoning")).text
    assert text.startswith("“Evolution Strategies for LLM Reasoning”")
    assert f"From {wiki_name}." in text
    assert f"The same paper is also in {feed_name}: a chat gets a paper once, so that copy" in text

    await core.handle(_caller("1"), "/lang ko")
    text = (await core.handle(_caller("1"), f"/why {ARXIV}v2")).text
    assert f"출처: {wiki_name}" in text
    assert f"같은 논문이 {feed_name}에도 있습니다." in text
