"""The command core straight on the store, on each backend: what no single channel shows."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import Caller, CommandCore, Defaults
from bot.models import Platform
from bot.store.schema import chats


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
