"""A vote counts only for a page the chat received, on every platform at once.

Each platform through its real entry point: Telegram's callback query through
python-telegram-bot against FakeTelegram, a signed Slack ``block_actions`` request through
Bolt, and the console's ``+N`` at its prompt. A page the chat was shown takes the vote; a
page it never received, one shown to another chat only, or no page at all gets the same
answer and changes nothing.
"""

from __future__ import annotations

import asyncio
import io
import queue
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.console.chat import LOCAL_CHAT, PROMPT, ConsoleChannel
from bot.commands import Caller, CommandCore, Defaults
from bot.i18n import t
from bot.models import Button, Platform
from bot.render import votes
from bot.store import chats as chat_store
from bot.store import feedback as feedback_store
from bot.store.schema import pages
from tests.fakes.telegram_api import FakeTelegram
from tests.integration import test_slack, test_telegram
from tests.waiting import wait_until

PLATFORMS = ("telegram", "slack", "console")
SEEDED = {"papers/2026/p0": ("rl", "reasoning"), "papers/2026/p1": ("rl",)}


@dataclass
class Surface:
    """One chat on one platform: what a user there can do, and what they are told."""

    platform: Platform
    chat_id: str
    say: Callable[[str], Awaitable[str]]  # a command, typed in the chat; the answer
    vote: Callable[[int, bool], Awaitable[str]]  # a press naming a page id; the answer


class ScriptedInput(io.TextIOBase):
    """Standard input a test types into line by line (``readline`` waits for a line)."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()

    def readline(self, size: int | None = -1) -> str:
        try:
            return self.lines.get(timeout=30)
        except queue.Empty:  # nothing typed for long: the end of input
            return ""


async def _console(engine: AsyncEngine) -> AsyncIterator[Surface]:
    core = CommandCore(engine=engine, defaults=Defaults())
    stdin, out = ScriptedInput(), io.StringIO()
    channel = ConsoleChannel(core=core, stdin=stdin, out=out, interactive=False)  # type: ignore[arg-type]
    running = asyncio.create_task(channel.run())

    async def typed(line: str) -> str:
        """The bot's lines answering ``line``, once the prompt is back."""
        before = out.getvalue().count(PROMPT)
        start = len(out.getvalue())
        stdin.lines.put(line + "\n")
        await wait_until(
            lambda: out.getvalue().count(PROMPT) > before,
            what=lambda: f"an answer to {line!r}: {out.getvalue()[start:]!r}",
        )
        return out.getvalue()[start:]

    async def say(text: str) -> str:
        return await typed(text)

    async def vote(page_id: int, up: bool) -> str:
        # The console votes with +N / -N on the buttons of the pages printed last (its
        # printer hands them to the prompt, as here): a forged one is a button it printed
        # for a page this chat was never sent.
        sign = votes.UP_MARK if up else votes.DOWN_MARK
        channel.offer_votes([Button(f"1 {sign}", votes.action(page_id, up=up))])
        answer = await typed("+1" if up else "-1")
        return answer.removeprefix("bot> ").split("\n", 1)[0]

    try:
        # The greeting ends with the first prompt: a line typed before it is answered after
        # it, so counting prompts from there would take the greeting for the answer.
        await wait_until(lambda: PROMPT in out.getvalue(), what="the console's first prompt")
        await typed("/start")
        yield Surface(Platform.CONSOLE, LOCAL_CHAT, say, vote)
    finally:
        stdin.lines.put("")  # the end of input: the console returns
        await asyncio.wait_for(running, 10)


async def _telegram(tg: FakeTelegram, running: Any) -> AsyncIterator[Surface]:
    chat = test_telegram.PRIVATE
    async with running():

        async def say(text: str) -> str:
            return str((await test_telegram.reply_to(tg, chat, text)).params["text"])

        async def vote(page_id: int, up: bool) -> str:
            message = tg.messages_to(chat)[-1]  # the bot's message the button is under
            asked = len(tg.calls("answerCallbackQuery"))
            update = tg.callback(chat, message["message_id"], votes.action(page_id, up=up))
            await tg.wait_for(lambda c: c.method == "answerCallbackQuery", count=asked + 1)
            return str(tg.callback_answers[update["callback_query"]["id"]]["text"])

        yield Surface(Platform.TELEGRAM, str(chat), say, vote)


async def _slack(bot: test_slack.Bot) -> AsyncIterator[Surface]:
    async def say(text: str) -> str:
        return (await bot.command(text)).text

    async def vote(page_id: int, up: bool) -> str:
        button = {
            "action_id": f"trend:vote-1-{'up' if up else 'down'}",
            "value": votes.action(page_id, up=up),
            "text": {"type": "plain_text", "text": "1 👍" if up else "1 👎"},
        }
        return str((await bot.press(button))["text"])

    yield Surface(Platform.SLACK, test_slack.CHANNEL, say, vote)


@pytest.fixture(params=PLATFORMS)
def surface(
    request: pytest.FixtureRequest, engine: AsyncEngine
) -> Callable[[], AbstractAsyncContextManager[Surface]]:
    """``async with surface() as chat``: a chat on each platform, its fakes running."""
    if request.param == "telegram":
        tg, running = request.getfixturevalue("tg"), request.getfixturevalue("running")
        return lambda: asynccontextmanager(_telegram)(tg, running)
    if request.param == "slack":
        slack_bot = request.getfixturevalue("bot")
        return lambda: asynccontextmanager(_slack)(slack_bot)
    return lambda: asynccontextmanager(_console)(engine)


# The platforms' fixtures, requested by name above.
tg = test_telegram.tg
running = test_telegram.running
sl = test_slack.sl
bot = test_slack.bot


async def page_ids(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as conn:
        return {key: pk for pk, key in await conn.execute(select(pages.c.id, pages.c.key))}


async def weights(engine: AsyncEngine, surface: Surface) -> dict[str, float]:
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=surface.platform, chat_id=surface.chat_id)
        assert record is not None
        return await feedback_store.weights_of(conn, chat_pk=record.pk)


async def test_a_vote_counts_only_for_a_page_the_chat_was_shown(
    surface: Callable[[], AbstractAsyncContextManager[Surface]], engine: AsyncEngine
) -> None:
    await test_telegram.seed_pages(engine)  # p0 (rl, reasoning), p1 (rl), p2 (robotics)
    async with surface() as chat:
        await _only_what_was_shown(chat, engine)


async def _only_what_was_shown(surface: Surface, engine: AsyncEngine) -> None:
    ids = await page_ids(engine)
    unseen, shown, robotics = (ids[f"papers/2026/p{i}"] for i in range(3))
    refused = t("en", "digestq.vote.invalid")
    await surface.say("/subscribe rl")
    await surface.say("/latest 1")  # the newest rl page: p1
    # Another chat was shown p0: that gives this one no vote on it.
    other = Caller(platform=surface.platform, chat_id="elsewhere", user_id="u9")
    core = CommandCore(engine=engine, defaults=Defaults())
    await core.handle(other, "/subscribe rl")
    await core.handle(other, "/latest 2")

    for page_id in (unseen, robotics, 999_999):
        assert await surface.vote(page_id, True) == refused
        assert await surface.vote(page_id, False) == refused
    assert await weights(engine, surface) == {}

    assert await surface.vote(shown, True) == t("en", "digestq.vote.up")
    assert await weights(engine, surface) == pytest.approx({"rl": 1.0})
    assert await surface.vote(unseen, True) == refused
    assert await weights(engine, surface) == pytest.approx({"rl": 1.0})
