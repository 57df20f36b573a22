"""The command core straight on the store, on each backend: what no single channel shows."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import STOPPED, Caller, ChatStatus, CommandCore, Defaults
from bot.errors import NotInChannel
from bot.models import ChatState, Platform
from bot.store import chats as chat_store
from bot.store import outbox, queueing
from bot.store.schema import chats
from bot.store.schema import outbox as outbox_table
from bot.util import utcnow


async def test_a_new_chats_first_commands_at_once_make_one_chat(engine: AsyncEngine) -> None:
    """A new user taps twice, or two people of a new group type at once: both commands
    create the chat, one wins, and the other runs on the chat it made (no error)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    callers = [
        Caller(platform=Platform.TELEGRAM, chat_id=str(500 + n), user_id="7") for n in range(20)
    ]
    replies = await asyncio.gather(
        *(
            core.handle(caller, text)
            for caller in callers
            for text in ("/subscribe rl", "/settings")
        )
    )
    for reply in replies[0::2]:
        assert "any of rl" in reply.text
    for reply in replies[1::2]:
        assert "Digest time" in reply.text
    async with engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(chats))).scalar_one() == 20


def slack(chat_id: str) -> Caller:
    return Caller(platform=Platform.SLACK, chat_id=chat_id, user_id="U1")


async def stored(engine: AsyncEngine, chat_id: str) -> chat_store.ChatRecord:
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=Platform.SLACK, chat_id=chat_id)
    assert record is not None
    return record


async def queue_one(engine: AsyncEngine, record: chat_store.ChatRecord) -> None:
    async with engine.begin() as conn:
        await queueing.enqueue(
            conn,
            [
                queueing.row_values(
                    chat_pk=record.pk,
                    platform=Platform.SLACK.value,
                    kind="broadcast",
                    payload="{}",
                    now=utcnow(),
                )
            ],
        )


async def test_the_status_a_channel_reads_around_a_command(engine: AsyncEngine) -> None:
    """A chat never seen has none (and is not created); a chat paused because the bot is
    not in its channel waits for an invite, one its members paused does not; a chat used
    from a workspace records it once."""
    core = CommandCore(engine=engine, defaults=Defaults())
    assert await core.chat_status(platform=Platform.SLACK, chat_id="C1") is None
    async with engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(chats))).scalar_one() == 0

    await core.handle(slack("C1"), "lang ko")
    await core.handle(slack("C2"), "pause")
    record = await stored(engine, "C1")
    async with engine.begin() as conn:  # what the delivery engine does with NotInChannel
        await chat_store.deactivate(
            conn,
            pk=record.pk,
            reason="not_in_channel",
            code=NotInChannel.CODE,
            state=ChatState.PAUSED,
        )

    invite = ChatStatus(lang="ko", state=ChatState.PAUSED, waits_for_invite=True)
    assert await core.chat_status(platform=Platform.SLACK, chat_id="C1") == invite
    paused = await core.chat_status(platform=Platform.SLACK, chat_id="C2")
    assert paused == ChatStatus(lang="en", state=ChatState.PAUSED, waits_for_invite=False)
    assert (await stored(engine, "C2")).team_id is None

    await core.chat_status(platform=Platform.SLACK, chat_id="C2", team_id="T1", enterprise_id="E1")
    async with engine.connect() as conn:
        rows = await conn.execute(select(chats.c.chat_id, chats.c.team_id, chats.c.enterprise_id))
        workspaces = {chat_id: (team, org) for chat_id, team, org in rows}
    assert workspaces == {"C1": (None, None), "C2": ("T1", "E1")}

    await core.handle(slack("C1"), "resume")
    assert await core.chat_status(platform=Platform.SLACK, chat_id="C1") == ChatStatus(
        lang="ko", state=ChatState.ACTIVE, waits_for_invite=False
    )
    assert (await stored(engine, "C1")).inactive_code is None


async def test_a_chat_gone_and_reachable_again_by_its_code(engine: AsyncEngine) -> None:
    """The platform says a channel is archived: its chat stops with the code and its queue
    fails, once. Only a revival naming that code (from a state allowed) makes it active,
    from the newest page event on; a chat its members paused stays paused."""
    core = CommandCore(engine=engine, defaults=Defaults())
    await core.handle(slack("C1"), "subscribe rl")
    await core.handle(slack("C2"), "pause")
    await queue_one(engine, await stored(engine, "C1"))

    def archived(chat_id: str) -> Awaitable[bool]:
        return core.chat_gone(
            platform=Platform.SLACK, chat_id=chat_id, reason="is_archived", code="is_archived"
        )

    assert await archived("C1")
    assert not await archived("C1")  # inactive already
    assert not await archived("C9")  # never seen
    record = await stored(engine, "C1")
    assert record.chat.state == ChatState.INACTIVE
    assert (record.inactive_reason, record.inactive_code) == ("is_archived", "is_archived")
    async with engine.connect() as conn:
        statuses = (await conn.execute(select(outbox_table.c.status))).scalars().all()
    assert statuses == [outbox.FAILED]

    inactive = frozenset({ChatState.INACTIVE})
    for codes, states in (
        (frozenset({"not_in_channel", "channel_not_found"}), STOPPED),
        (frozenset({"is_archived"}), frozenset({ChatState.PAUSED})),
    ):
        assert not await core.chat_reachable(
            platform=Platform.SLACK, chat_id="C1", codes=codes, states=states
        )
    assert (await stored(engine, "C1")).chat.state == ChatState.INACTIVE
    assert not await core.chat_reachable(
        platform=Platform.SLACK, chat_id="C2", codes=frozenset({"is_archived"})
    )
    assert (await stored(engine, "C2")).chat.state == ChatState.PAUSED

    assert await core.chat_reachable(
        platform=Platform.SLACK, chat_id="C1", codes=frozenset({"is_archived"}), states=inactive
    )
    record = await stored(engine, "C1")
    assert record.chat.state == ChatState.ACTIVE
    assert (record.inactive_reason, record.inactive_code) == (None, None)
    async with engine.connect() as conn:
        assert record.cursor == await chat_store.latest_event_id(conn)


async def test_a_chat_readdressed_moves_unless_the_new_id_is_taken(engine: AsyncEngine) -> None:
    core = CommandCore(engine=engine, defaults=Defaults())
    await core.handle(slack("D1"), "subscribe rl")
    await core.handle(slack("D2"), "subscribe rl")
    await core.handle(slack("U2"), "subscribe robotics")

    moved = await core.chat_readdressed(platform=Platform.SLACK, old_chat_id="D1", new_chat_id="U1")
    taken = await core.chat_readdressed(platform=Platform.SLACK, old_chat_id="D2", new_chat_id="U2")
    unknown = await core.chat_readdressed(
        platform=Platform.SLACK, old_chat_id="D9", new_chat_id="U9"
    )

    assert (moved, taken, unknown) == (True, False, False)
    async with engine.connect() as conn:
        ids = set((await conn.execute(select(chats.c.chat_id))).scalars())
    assert ids == {"U1", "D2", "U2"}
    assert "rl" in (await core.handle(slack("U1"), "settings")).text
    assert "robotics" in (await core.handle(slack("U2"), "settings")).text


async def test_a_chat_the_bot_was_removed_from_has_a_code(engine: AsyncEngine) -> None:
    core = CommandCore(engine=engine, defaults=Defaults())
    await core.handle(Caller(platform=Platform.TELEGRAM, chat_id="-100", user_id="7"), "help")
    assert await core.removed_from_chat(platform=Platform.TELEGRAM, chat_id="-100") == 1
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id="-100")
    assert record is not None and record.chat.state == ChatState.INACTIVE
    assert (record.inactive_reason, record.inactive_code) == (
        chat_store.REMOVED_REASON,
        chat_store.REMOVED,
    )
