"""Planning digests: who gets which page, once, at their time; on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path

from sqlalchemy import delete, event, func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import Delete

from bot.matching import planner as planner_module
from bot.matching.planner import Planner
from bot.models import ChatSettings, ChatState, Mode, Platform
from bot.rules import filters
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store import chats as chat_store
from bot.store.chats import ChatRecord
from bot.store.schema import chat_pages, chats, outbox, page_events, pages, sources
from tests.integration.test_poll import page, write

LATER = dt.timedelta(days=2)


async def queued_for(
    engine: AsyncEngine, *, platform: Platform, chat_id: str
) -> list[dict[str, object]]:
    """Every outbox message of a chat, oldest first: its kind and its payload's fields."""
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=platform, chat_id=chat_id)
        assert record is not None
        rows = await conn.execute(
            select(outbox.c.kind, outbox.c.payload)
            .where(outbox.c.chat_pk == record.pk)
            .order_by(outbox.c.id)
        )
        return [{"kind": kind, **json.loads(payload)} for kind, payload in rows]


class World:
    """A wiki directory, a poller and a planner on one database."""

    def __init__(
        self, engine: AsyncEngine, root: Path, *, batch: int = planner_module.BATCH
    ) -> None:
        self.engine = engine
        self.root = root
        self.poller = Poller(
            engine=engine,
            sources=[str(root)],
            base_url=None,
            default_lang="en",
            http=make_feed_client(),
        )
        # These tests follow page events; a chat's welcome digest has tests of its own.
        self.planner = Planner(engine=engine, welcome=False, batch=batch)
        self.days = 0

    async def publish(self, key: str, *, tags: str, tldr: str = "Finding.") -> None:
        write(self.root, *page(key, tags=tags, tldr=tldr))
        await self.poller.poll()

    async def chat(
        self, chat_id: str, filter_text: str, *, mode: Mode = Mode.DAILY, lang: str = "en"
    ) -> ChatRecord:
        settings = ChatSettings(
            platform=Platform.TELEGRAM,
            chat_id=chat_id,
            mode=mode,
            lang=lang,
            filter=filters.parse_filter(filter_text),
        )
        async with self.engine.begin() as conn:
            return await chat_store.ensure(conn, defaults=settings)

    async def update(self, record: ChatRecord, **changes: object) -> ChatRecord:
        async with self.engine.begin() as conn:
            current = await chat_store.get_by_pk(conn, record.pk)
            assert current is not None
            return await chat_store.save(
                conn,
                before=current,
                after=replace(current.chat, **changes),  # type: ignore[arg-type]
            )

    async def messages(self, chat_id: str) -> list[dict[str, object]]:
        return await queued_for(self.engine, platform=Platform.TELEGRAM, chat_id=chat_id)

    async def plan(self) -> int:
        """Plan as if a day had passed since the last call: every daily chat is due."""
        self.days += 1
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None) + self.days * LATER
        return await self.planner.plan_due(now=now)

    async def ledger_rows(self) -> int:
        async with self.engine.connect() as conn:
            count = await conn.execute(select(func.count()).select_from(chat_pages))
            return count.scalar_one()

    async def delete(self, statement: Delete) -> None:
        """Delete by hand, as an operator would."""
        async with self.engine.begin() as conn:
            await conn.execute(statement)


async def started(
    engine: AsyncEngine, tmp_path: Path, *, batch: int = planner_module.BATCH
) -> World:
    world = World(engine, tmp_path, batch=batch)
    await world.publish("p/old", tags="[rl]")  # the baseline scan
    return world


async def test_a_page_reaches_matching_chats_once(engine: AsyncEngine, tmp_path: Path) -> None:
    world = await started(engine, tmp_path)
    await world.chat("1", "rl")
    await world.chat("2", "vision")
    await world.chat("3", "rl -robotics")
    await world.publish("p/new", tags="[rl, robotics]")
    assert await world.plan() == 1
    messages = await world.messages("1")
    assert len(messages) == 1 and messages[0]["kind"] == "digest"
    assert messages[0]["pages"] == [[2, False]]
    assert await world.messages("2") == []
    assert await world.messages("3") == []
    # Planning again (any number of times) adds nothing.
    assert await world.plan() == 0
    assert await world.planner.plan_now() == 0
    assert len(await world.messages("1")) == 1


async def test_new_chat_does_not_get_history(engine: AsyncEngine, tmp_path: Path) -> None:
    world = await started(engine, tmp_path)
    await world.publish("p/a", tags="[rl]")
    await world.chat("1", "rl")
    assert await world.plan() == 0
    await world.publish("p/b", tags="[rl]")
    assert await world.plan() == 1
    assert (await world.messages("1"))[0]["pages"] == [[3, False]]


async def test_updated_page_only_for_chats_that_had_it(engine: AsyncEngine, tmp_path: Path) -> None:
    world = await started(engine, tmp_path)
    await world.chat("1", "rl")
    await world.publish("p/a", tags="[rl]")
    await world.plan()
    await world.chat("2", "rl")  # joins after p/a was planned for chat 1
    await world.publish("p/a", tags="[rl]", tldr="A revised finding.")
    await world.plan()
    assert [m["pages"] for m in await world.messages("1")] == [[[2, False]], [[2, True]]]
    assert await world.messages("2") == []
    # An unchanged version is never offered again.
    await world.publish("p/a", tags="[rl]", tldr="A revised finding.")
    assert await world.plan() == 0


async def test_instant_mode_one_message_per_page(engine: AsyncEngine, tmp_path: Path) -> None:
    world = await started(engine, tmp_path)
    await world.chat("1", "*", mode=Mode.INSTANT)
    write(tmp_path, *page("p/a", tags="[rl]"))
    write(tmp_path, *page("p/b", tags="[vision]"))
    await world.poller.poll()
    # Instant chats are planned whenever there is news, whatever the time.
    assert await world.planner.plan_due() == 2
    kinds = [(m["kind"], m["pages"]) for m in await world.messages("1")]
    assert sorted(kinds) == [("page", [[2, False]]), ("page", [[3, False]])]


async def test_daily_chat_waits_for_its_time(engine: AsyncEngine, tmp_path: Path) -> None:
    world = await started(engine, tmp_path)
    record = await world.chat("1", "rl")
    assert record.next_digest_at is not None
    await world.publish("p/a", tags="[rl]")
    before = record.next_digest_at - dt.timedelta(minutes=1)
    assert await world.planner.plan_due(now=before) == 0
    assert await world.planner.plan_due(now=record.next_digest_at) == 1
    async with engine.connect() as conn:
        after = await chat_store.get_by_pk(conn, record.pk)
    assert after is not None and after.next_digest_at == record.next_digest_at + dt.timedelta(
        days=1
    )


async def test_a_daily_chat_planned_is_written_once(engine: AsyncEngine, tmp_path: Path) -> None:
    # Its cursor and its next digest go in one statement: on PostgreSQL each update of a
    # chat's row is a new version of it and of its entries in every index of the table.
    world = await started(engine, tmp_path)
    records = [await world.chat(str(n), "rl") for n in range(3)]
    await world.publish("p/a", tags="[rl]")
    updates: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if statement.lstrip().upper().startswith("UPDATE CHATS"):
            updates.append(statement)

    due = max(r.next_digest_at for r in records if r.next_digest_at is not None)
    event.listen(engine.sync_engine, "before_cursor_execute", seen)
    try:
        assert await world.planner.plan_due(now=due) == 3
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", seen)
    assert len(updates) == 1, updates
    async with engine.connect() as conn:
        latest = (await conn.execute(select(func.max(page_events.c.id)))).scalar_one()
        for record in records:
            after = await chat_store.get_by_pk(conn, record.pk)
            assert after is not None and record.next_digest_at is not None
            assert after.cursor == latest
            assert after.next_digest_at == record.next_digest_at + dt.timedelta(days=1)
    assert await world.planner.plan_due(now=due) == 0  # nothing planned twice


async def test_after_downtime_one_digest_not_one_per_day(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path)
    record = await world.chat("1", "rl")
    assert record.next_digest_at is not None
    await world.publish("p/a", tags="[rl]")
    await world.publish("p/b", tags="[rl]")
    five_days_later = record.next_digest_at + dt.timedelta(days=5, hours=3)
    assert await world.planner.plan_due(now=five_days_later) == 1
    assert await world.planner.plan_due(now=five_days_later) == 0
    assert len((await world.messages("1"))[0]["pages"]) == 2  # type: ignore[arg-type]


async def test_paused_and_inactive_chats_skip_what_they_missed(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path)
    paused = await world.chat("1", "rl")
    gone = await world.chat("2", "rl")
    paused = await world.update(paused, state=ChatState.PAUSED)
    async with engine.begin() as conn:
        await chat_store.deactivate(conn, pk=gone.pk, reason="blocked", code="blocked")
    await world.publish("p/a", tags="[rl]")
    assert await world.plan() == 0
    await world.update(paused, state=ChatState.ACTIVE)
    await world.update(gone, state=ChatState.ACTIVE)
    assert await world.plan() == 0  # nothing replayed
    await world.publish("p/b", tags="[rl]")
    assert await world.plan() == 2


async def test_send_now_counts_pages_and_keeps_the_schedule(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path)
    record = await world.chat("1", "rl reasoning")
    await world.publish("p/a", tags="[rl]")
    await world.publish("p/b", tags="[reasoning]")
    assert await world.planner.send_now(record.pk) == 2
    assert await world.planner.send_now(record.pk) == 0
    async with engine.connect() as conn:
        after = await chat_store.get_by_pk(conn, record.pk)
    assert after is not None and after.next_digest_at == record.next_digest_at


async def test_filter_change_applies_to_what_comes_next(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path)
    record = await world.chat("1", "rl")
    await world.publish("p/a", tags="[vision]")
    await world.update(record, filter=filters.parse_filter("vision"))
    assert await world.plan() == 1  # p/a came after the cursor and now matches
    assert (await world.messages("1"))[0]["pages"] == [[2, False]]


async def test_many_batches_plan_every_chat_once(engine: AsyncEngine, tmp_path: Path) -> None:
    """Batches of 3 (several at once on PostgreSQL): every chat gets its one digest."""
    world = await started(engine, tmp_path, batch=3)
    for i in range(1, 11):
        await world.chat(str(i), "rl vision" if i % 2 else "rl")
    await world.publish("p/a", tags="[rl]")
    await world.publish("p/b", tags="[vision]")
    assert await world.plan() == 10
    for i in range(1, 11):
        (message,) = await world.messages(str(i))
        assert message["pages"] == ([[2, False], [3, False]] if i % 2 else [[2, False]])
    assert await world.plan() == 0


async def test_a_deleted_chat_takes_its_ledger_along(engine: AsyncEngine, tmp_path: Path) -> None:
    world = await started(engine, tmp_path)
    gone = await world.chat("1", "rl")
    await world.publish("p/a", tags="[rl]")
    assert await world.plan() == 1
    assert await world.ledger_rows() == 1
    await world.delete(delete(chats).where(chats.c.id == gone.pk))
    assert await world.ledger_rows() == 0
    # A chat that comes later (on SQLite it may get the same id) never had p/a: its update
    # is not for it.
    await world.chat("2", "rl")
    await world.publish("p/a", tags="[rl]", tldr="A revised finding.")
    assert await world.plan() == 0
    assert await world.messages("2") == []


async def test_a_deleted_page_takes_its_ledger_along(engine: AsyncEngine, tmp_path: Path) -> None:
    world = await started(engine, tmp_path)
    await world.chat("1", "rl")
    await world.publish("p/a", tags="[rl]")
    await world.publish("p/b", tags="[rl]")
    assert await world.plan() == 1
    # p/b is the latest page, but not the latest event: SQLite gives the next event a new id.
    await world.publish("p/a", tags="[rl]", tldr="A revised finding.")
    assert await world.plan() == 1
    assert await world.ledger_rows() == 2
    (tmp_path / "p" / "b.en.md").unlink()
    await world.delete(delete(pages).where(pages.c.id == 3))  # p/b
    assert await world.ledger_rows() == 1
    # A page that comes later (on SQLite it may get p/b's id) is new to the chat.
    await world.publish("p/c", tags="[rl]")
    assert await world.plan() == 1
    async with engine.connect() as conn:
        page_c = (await conn.execute(select(func.max(pages.c.id)))).scalar_one()
    assert (await world.messages("1"))[-1]["pages"] == [[page_c, False]]
    # Pages deleted with their source take their rows along too.
    await world.delete(delete(sources))
    assert await world.ledger_rows() == 0


async def test_a_page_after_the_newest_was_deleted_still_reaches_chats(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path)
    await world.chat("1", "rl")
    await world.publish("p/a", tags="[rl]")
    assert await world.plan() == 1  # the chat's cursor is past p/a's event now
    (tmp_path / "p" / "a.en.md").unlink()
    await world.delete(delete(pages).where(pages.c.id == 2))  # p/a, and its event with it
    # The next event must not take the deleted one's place behind the chat's cursor.
    await world.publish("p/b", tags="[rl]")
    assert await world.plan() == 1
    assert len(await world.messages("1")) == 2
