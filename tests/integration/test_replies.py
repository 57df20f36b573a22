"""Every reply true: what a command answers is what the chat then has, in both languages.

Driven through the command core on each backend; the core is what Telegram, Slack and the
console share, so a reply checked here is the reply on all three.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import Caller, CommandCore, Defaults
from bot.models import Platform


def console(chat_id: str = "c1") -> Caller:
    return Caller(platform=Platform.CONSOLE, chat_id=chat_id, user_id="u1")


def line_of(text: str, start: str) -> str:
    """The line of ``text`` that starts with ``start``, without its wait (``, in 5 h``),
    which moves with the clock."""
    found = [line for line in text.splitlines() if line.startswith(start)]
    assert found, f"no line starting {start!r} in {text!r}"
    return found[0].rsplit(",", 1)[0]


NEXT = {"en": "Next digest:", "ko": "다음 요약:"}


async def test_import_shows_the_imported_schedule(engine: AsyncEngine) -> None:
    """The next digest `import` shows is the one of the imported schedule, the one
    `settings` shows right after (item 1)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    for lang, chat_id in (("en", "c-en"), ("ko", "c-ko")):
        line = (
            'trendbot:1 filter="rl" mode=weekly day=tue time=10:00 tz=Europe/Berlin '
            f"lang={lang}"
        )
        await core.handle(console(chat_id), "/subscribe rl")
        imported = (await core.handle(console(chat_id), f"/import {line}")).text
        settings = (await core.handle(console(chat_id), "/settings")).text
        assert line_of(imported, NEXT[lang]) == line_of(settings, NEXT[lang])
        assert "10:00" in line_of(imported, NEXT[lang])
