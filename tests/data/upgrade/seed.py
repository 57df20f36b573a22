"""Fill a database the way users of an earlier build did, with that build's own code.

Run with the earlier build's checkout first on ``PYTHONPATH`` (``make_dumps.sh`` does):
it subscribes chats through that build's command core (Telegram chats, a Korean one, a
paused one, one in instant mode), polls the build's sample wiki with a backfill so pages and
notifications are recorded, and, where the build has votes, presses 👍 and 👎 on pages.
``DATABASE_URL`` and ``WIKI_SOURCES`` come from the environment, as for ``trendbot``.
"""

from __future__ import annotations

import asyncio
import importlib.util

from sqlalchemy import select, text

from bot.app import open_app
from bot.commands import Caller
from bot.models import Platform
from bot.settings import load_settings

CHATS = [
    ("1001", ["/subscribe rl reasoning +post-training -robotics"]),
    ("1002", ["/subscribe *", "/mode instant"]),
    ("1003", ["/subscribe agents", "/lang ko", "/timezone Asia/Seoul", "/time 08:30"]),
    ("1004", ["/subscribe rl", "/pause"]),
    ("1005", ["/subscribe reasoning exploration"]),
]


async def main() -> None:
    async with open_app(load_settings()) as app:
        await app.poller.poll(backfill_days=None)
        for chat_id, commands in CHATS:
            caller = Caller(platform=Platform.TELEGRAM, chat_id=chat_id, user_id=chat_id)
            for command in commands:
                await app.core.handle(caller, command)
        if importlib.util.find_spec("bot.store.feedback") is not None:
            from bot.store import feedback

            async with app.engine.begin() as conn:
                chat_pks = (await conn.execute(text("SELECT id FROM chats ORDER BY id"))).all()
                page_ids = (await conn.execute(text("SELECT id FROM pages ORDER BY id"))).all()
                for index, (chat_pk,) in enumerate(chat_pks[:3]):
                    for offset, (page_id,) in enumerate(page_ids[:4]):
                        value = 1 if (index + offset) % 2 == 0 else -1
                        await feedback.press(
                            conn, chat_pk=chat_pk, page_id=page_id, user_id="u1", value=value
                        )
        async with app.engine.connect() as conn:
            count = (await conn.execute(select(text("count(*)")).select_from(text("chats")))).one()
            print(f"seeded: {count[0]} chats")


if __name__ == "__main__":
    asyncio.run(main())
