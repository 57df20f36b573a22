"""The Telegram adapter, unchanged python-telegram-bot over real HTTP against FakeTelegram,
with a real database on each backend."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import itertools
import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Bot
from telegram.request import HTTPXRequest

from bot.channels.telegram.channel import TelegramChannel, menu_commands
from bot.channels.telegram.client import (
    GROUP_CHAT_INTERVAL,
    PRIVATE_CHAT_INTERVAL,
    close_bot,
    make_bot,
)
from bot.channels.telegram.payload import TelegramPayload
from bot.channels.telegram.sender import TelegramSender
from bot.commands import CommandCore, Defaults, registry
from bot.commands.operator import Admin
from bot.commands.registry import Audience, Menu
from bot.delivery.engine import Delivery
from bot.errors import (
    ChatGone,
    ChatMigrated,
    ConfigError,
    DeliveryError,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)
from bot.models import ChatKind, ChatSettings, ChatState, Outgoing, Page, PageText, Platform
from bot.settings import load_settings
from bot.store import chats as chat_store
from bot.store import pages as page_store
from bot.store.chats import ChatRecord
from bot.store.schema import chats as chats_table
from bot.store.schema import outbox as outbox_table
from tests.conftest import Settings
from tests.fakes.telegram_api import FakeTelegram, TelegramCall
from tests.integration.test_planner import started
from tests.strategies import MALFORMED_UPDATES
from tests.waiting import wait_until

# Token-shaped (Settings checks the shape) and long enough for any redaction rule to see.
TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
PRIVATE = 1001
KOREAN = 1002
GROUP = -1001234567890
FORUM = -1005550001  # a forum supergroup: each topic a chat of its own
BASIC = -4001  # a basic group, which becomes the supergroup SUPER
SUPER = -1004001
ADMIN = 2001
MEMBER = 2002
WEBHOOK_URL = "https://bot.example.org/telegram/webhook"
SECRET = "s3cret-Header_value"


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.2) as server:
        yield server


def make_settings(tg: FakeTelegram, database_url: str, **overrides: Any) -> Settings:
    return Settings(
        database_url=database_url,
        telegram_bot_token=TOKEN,
        telegram_api_base_url=tg.base_url,
        **overrides,
    )


Running = Callable[..., Any]


@pytest.fixture
def running(tg: FakeTelegram, engine: AsyncEngine, database_url: str) -> Running:
    """``async with running(**settings) as channel``: a started channel, stopped after."""

    @asynccontextmanager
    async def start(*, admin: bool = False, **overrides: Any) -> AsyncIterator[TelegramChannel]:
        settings = make_settings(tg, database_url, **overrides)
        admins = Admin(engine=engine, settings=settings) if admin else None
        core = CommandCore(
            engine=engine,
            defaults=Defaults(),
            admin=admins,
            public_base_url=settings.public_base_url,
        )
        channel = TelegramChannel(settings=settings, core=core, bot=make_bot(settings))
        await channel.start()
        try:
            yield channel
        finally:
            await channel.stop()

    return start


async def seed_pages(engine: AsyncEngine) -> None:
    pages = [
        Page(
            source="wiki",
            key=f"papers/2026/p{i}",
            texts=(PageText("en", f"Paper {i}", "tl;dr"),),
            tags=tags,
            created=dt.date(2026, 8, i + 1),
        )
        for i, tags in enumerate([("rl", "reasoning"), ("rl",), ("robotics",)])
    ]
    async with engine.begin() as conn:
        source = await page_store.source(conn, name="wiki", kind="directory")
        await page_store.record_pages(
            conn, source=source, found=pages, present_keys=None, now=page_store.utcnow()
        )


async def chat_record(engine: AsyncEngine, chat_id: int | str) -> ChatRecord:
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(chat_id))
    assert record is not None
    return record


def sent_to(chat_id: int) -> Callable[[TelegramCall], bool]:
    return lambda call: call.method == "sendMessage" and call.chat_id == chat_id and call.ok


async def reply_to(tg: FakeTelegram, chat_id: int, text: str, **kwargs: Any) -> TelegramCall:
    """Send ``text`` as a user and return the bot's (first) answer to it."""
    seen = sum(1 for call in tg.calls("sendMessage") if call.chat_id == chat_id)
    tg.message(chat_id, text, **kwargs)
    calls = await tg.wait_for(
        lambda call: call.method == "sendMessage" and call.chat_id == chat_id, count=seen + 1
    )
    return calls[seen]


# ---------------------------------------------------------------------- commands


async def test_start_in_private_chat_sets_the_menu_and_greets(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    async with running():
        call = await reply_to(tg, PRIVATE, "/start")
        assert tg.allowed_updates == ["message", "callback_query", "my_chat_member"]

    assert call.params["parse_mode"] == "HTML"
    assert call.params["link_preview_options"] == {"is_disabled": True}
    text = tg.messages_to(PRIVATE)[0]["text"]
    assert "Hi!" in text and "/subscribe" in text
    record = await chat_record(engine, PRIVATE)
    assert record.chat.kind == ChatKind.PRIVATE and record.chat.lang == "en"


@pytest.mark.parametrize(
    ("language_code", "expected"),
    [("en", "/help lists them all."), ("ko", "/help로 볼 수 있습니다.")],
)
async def test_plain_text_in_a_private_chat_gets_a_short_hint(
    tg: FakeTelegram, running: Running, language_code: str, expected: str
) -> None:
    """Plain text is answered with one line that names /help, not the 40-line help."""
    async with running():
        call = await reply_to(tg, PRIVATE, "hello there", language_code=language_code)
    text = str(call.params["text"])
    assert text.endswith(expected) and "\n" not in text


async def test_command_menus_per_scope_and_language(tg: FakeTelegram, running: Running) -> None:
    """Private chats and group administrators see every command, other members of a group
    only those that change nothing; in English, and in Korean for Korean clients."""
    async with running():
        pass

    menus: dict[tuple[str, str], list[str]] = {}
    descriptions: dict[str, list[str]] = {}
    for language_code in ("", "ko"):
        for scope in ("all_private_chats", "all_group_chats", "all_chat_administrators"):
            commands = tg.commands_for(scope={"type": scope}, language_code=language_code)
            assert commands is not None, (scope, language_code)
            menus[scope, language_code] = [c["command"] for c in commands]
            descriptions.setdefault(language_code, []).extend(c["description"] for c in commands)
    declared = registry.commands()
    # As the registry declares them: every command a chat may use but `start` (the
    # platform's own button), in help's order; a group's members, the ones that only read.
    full = [c.name for c in declared if c.audience != Audience.BOT_ADMINS and c.menu != Menu.NONE]
    readers = [c.name for c in declared if c.menu == Menu.GROUP]
    assert "start" not in full and "broadcast" not in full and {"help", "latest"} <= set(readers)
    for language_code in ("", "ko"):
        everything = menus["all_private_chats", language_code]
        assert everything == full
        assert menus["all_chat_administrators", language_code] == everything
        assert menus["all_group_chats", language_code] == readers
    assert menus["all_private_chats", ""] == menus["all_private_chats", "ko"]
    assert descriptions[""][0] == "every command, or one with examples"
    assert descriptions["ko"][0] == "모든 명령어, 또는 명령어 하나의 설명과 예"
    assert tg.commands_for() is None  # every chat falls under a narrower scope


async def test_subscribe_replies_with_the_whole_filter(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        await reply_to(tg, PRIVATE, "/subscribe reasoning -robotics")

    text = tg.messages_to(PRIVATE)[-1]["text"]
    assert "any of reasoning, rl" in text and "never robotics" in text
    record = await chat_record(engine, PRIVATE)
    assert record.chat.filter.any_of == {"rl", "reasoning"}
    assert record.chat.filter.excluded == {"robotics"}


async def test_subscribe_with_a_bad_tag_changes_nothing(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        await reply_to(tg, PRIVATE, "/subscribe reasoning bad!tag")

    text = tg.messages_to(PRIVATE)[-1]["text"]
    assert "“bad!tag” is not a tag" in text and "Nothing was changed." in text
    assert (await chat_record(engine, PRIVATE)).chat.filter.any_of == {"rl"}


async def test_reads_are_answered_while_another_process_writes(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    """Commands that only read wait for no writer (on SQLite: no write lock); a command that
    writes waits its turn and is answered once the writer commits."""
    await seed_pages(engine)
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        async with engine.begin() as writer:  # e.g. a poll of the wiki in another process
            await page_store.source(writer, name="other wiki", kind="directory")
            for command in ("/settings", "/tags", "/latest"):
                async with asyncio.timeout(2):
                    await reply_to(tg, PRIVATE, command)
            tg.message(PRIVATE, "/mode daily")
            await asyncio.sleep(0.2)  # the writer holds its lock while the command waits
        await tg.wait_for(sent_to(PRIVATE), count=5)

    texts = [m["text"] for m in tg.messages_to(PRIVATE)]
    assert "Filter: any of rl" in texts[1] and "rl (2)" in texts[2] and "Paper 1" in texts[3]
    assert (await chat_record(engine, PRIVATE)).chat.mode.value == "daily"


async def test_latest_reaches_past_the_newest_pages_for_a_rare_tag(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    pages = [
        Page(
            source="wiki",
            key=f"papers/2026/n{i:02d}",
            texts=(PageText("en", f"Note {i:02d}", "tl;dr"),),
            tags=("rare",) if i < 3 else ("common",),
            created=dt.date(2026, 1, 1) + dt.timedelta(days=i),
        )
        for i in range(50)
    ]
    async with engine.begin() as conn:
        source = await page_store.source(conn, name="wiki", kind="directory")
        await page_store.record_pages(
            conn, source=source, found=pages, present_keys=None, now=page_store.utcnow()
        )
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rare")
        await reply_to(tg, PRIVATE, "/latest 2")

    text = tg.messages_to(PRIVATE)[-1]["text"]
    assert text.index("Note 02") < text.index("Note 01")  # newest first
    assert "Note 00" not in text and "Note 49" not in text


async def test_korean_user_gets_korean_and_lang_switches(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    async with running():
        await reply_to(tg, KOREAN, "/start", language_code="ko")
        assert "안녕하세요" in tg.messages_to(KOREAN)[-1]["text"]
        await reply_to(tg, PRIVATE, "/start", language_code="en")
        await reply_to(tg, PRIVATE, "/lang ko")
        assert tg.messages_to(PRIVATE)[-1]["text"] == "이제 이 채팅에서는 한국어로 답합니다."
        await reply_to(tg, PRIVATE, "/settings")

    assert "이 채팅의 설정" in tg.messages_to(PRIVATE)[-1]["text"]
    assert (await chat_record(engine, KOREAN)).chat.lang == "ko"
    assert (await chat_record(engine, PRIVATE)).chat.lang == "ko"


async def test_group_admin_may_change_the_subscription_and_a_member_may_not(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    tg.chat_admins[GROUP] = {ADMIN}
    async with running():
        await reply_to(tg, GROUP, "/subscribe rl", user_id=ADMIN, chat_title="ML reading group")
        await reply_to(tg, GROUP, "/subscribe reasoning", user_id=ADMIN)
        refusal = await reply_to(tg, GROUP, "/unsubscribe all", user_id=MEMBER)
        await reply_to(tg, GROUP, "/settings", user_id=MEMBER)  # reading is for everyone

    assert tg.messages_to(GROUP)[2]["text"] == (
        "Only this group's administrators can change its subscription."
    )
    assert refusal.ok
    assert "Filter: any of reasoning, rl" in tg.messages_to(GROUP)[3]["text"]
    record = await chat_record(engine, GROUP)
    assert record.chat.kind == ChatKind.GROUP
    assert record.chat.filter.any_of == {"rl", "reasoning"}
    # Asked once per user within a minute, not once per command.
    members = tg.calls("getChatMember")
    assert sorted(c.params["user_id"] for c in members) == [ADMIN, MEMBER]


async def test_commands_for_another_bot_are_ignored(tg: FakeTelegram, running: Running) -> None:
    async with running():
        tg.message(GROUP, "/help@OtherBot")
        tg.message(GROUP, "/help@trendbot")  # usernames are case-insensitive
        await tg.wait_for(sent_to(GROUP))
        await reply_to(tg, PRIVATE, "/help@TrendBot")

    assert len(tg.messages_to(GROUP)) == 1
    assert "Commands:" in tg.messages_to(GROUP)[0]["text"]
    assert "Commands:" in tg.messages_to(PRIVATE)[0]["text"]


async def test_plain_text_gets_help_in_private_and_silence_in_groups(
    tg: FakeTelegram, running: Running
) -> None:
    async with running():
        tg.message(GROUP, "what a nice paper")
        await reply_to(tg, PRIVATE, "hello?")
        await reply_to(tg, GROUP, "/tags")

    assert "/help" in tg.messages_to(PRIVATE)[0]["text"]  # a hint that names /help
    assert len(tg.messages_to(GROUP)) == 1  # only the answer to /tags


async def test_other_bots_and_forwards_are_not_answered(tg: FakeTelegram, running: Running) -> None:
    bot_user = {"id": 777, "is_bot": True, "first_name": "Echo", "username": "EchoBot"}
    entities = [{"type": "bot_command", "offset": 0, "length": 5}]
    base = {
        "chat": {"id": GROUP, "type": "supergroup", "title": "G"},
        "date": 1_700_000_000,
        "text": "/help",
        "entities": entities,
    }
    async with running():
        tg.inject_update({"message": {**base, "message_id": 50, "from": bot_user}})
        tg.inject_update(
            {
                "message": {
                    **base,
                    "message_id": 51,
                    "from": {"id": MEMBER, "is_bot": False, "first_name": "M"},
                    "forward_origin": {
                        "type": "hidden_user",
                        "date": 1_700_000_000,
                        "sender_user_name": "Someone",
                    },
                }
            }
        )
        await reply_to(tg, GROUP, "/tags")

    assert [m["text"] for m in tg.messages_to(GROUP)] == ["The wiki has no pages yet."]


async def test_an_anonymous_group_administrator_may_manage(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    group = {"id": GROUP, "type": "supergroup", "title": "G"}
    anonymous = {"id": 1087968824, "is_bot": True, "first_name": "Group",
                 "username": "GroupAnonymousBot"}  # fmt: skip
    text = "/subscribe rl"
    async with running():
        tg.inject_update(
            {
                "message": {
                    "message_id": 60,
                    "from": anonymous,
                    "sender_chat": group,
                    "chat": group,
                    "date": 1_700_000_000,
                    "text": text,
                    "entities": [{"type": "bot_command", "offset": 0, "length": 10}],
                }
            }
        )
        await tg.wait_for(sent_to(GROUP))

    assert tg.calls("getChatMember") == []
    assert (await chat_record(engine, GROUP)).chat.filter.any_of == {"rl"}


async def test_user_text_is_escaped_in_html_replies(tg: FakeTelegram, running: Running) -> None:
    async with running():
        call = await reply_to(tg, PRIVATE, "/subscribe <b>&")

    raw = call.params["text"]
    assert "&lt;b&gt;&amp;" in raw and "<b>" not in raw
    assert call.ok and "“<b>&” is not a tag" in tg.messages_to(PRIVATE)[0]["text"]


async def test_tag_picker_buttons_toggle_tags_in_place(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe")
        picker = tg.messages_to(PRIVATE)[0]
        rows = picker["reply_markup"]["inline_keyboard"]
        labels = [b["text"] for row in rows for b in row]
        assert labels == ["rl (2)", "reasoning (1)", "robotics (1)"]

        update = tg.callback(PRIVATE, picker["message_id"], "tog:rl")
        query_id = update["callback_query"]["id"]
        await tg.wait_for(lambda c: c.method == "editMessageText")
        await tg.wait_for(lambda c: c.method == "answerCallbackQuery")
        assert query_id in tg.callback_answers
        assert (await chat_record(engine, PRIVATE)).chat.filter.any_of == {"rl"}
        edited = tg.messages_to(PRIVATE)[0]
        assert "✅ rl (2)" in [b["text"] for b in edited["reply_markup"]["inline_keyboard"][0]]
        assert "any of rl" in edited["text"]

        tg.callback(PRIVATE, picker["message_id"], "tog:rl")
        await tg.wait_for(lambda c: c.method == "answerCallbackQuery", count=2)

    assert len(tg.messages_to(PRIVATE)) == 1  # edited in place, never a new message
    assert (await chat_record(engine, PRIVATE)).chat.filter.is_empty


async def test_a_member_pressing_a_group_picker_gets_an_alert_and_nothing_changes(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    tg.chat_admins[GROUP] = {ADMIN}
    async with running():
        await reply_to(tg, GROUP, "/subscribe", user_id=ADMIN)
        picker = tg.messages_to(GROUP)[0]
        update = tg.callback(GROUP, picker["message_id"], "tog:rl", user_id=MEMBER)
        await tg.wait_for(lambda c: c.method == "answerCallbackQuery")

    answer = tg.callback_answers[update["callback_query"]["id"]]
    assert answer["show_alert"] is True
    assert answer["text"] == "Only this group's administrators can change its subscription."
    assert tg.calls("editMessageText") == []
    assert (await chat_record(engine, GROUP)).chat.filter.is_empty


async def test_removed_from_a_chat_makes_it_inactive(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        await reply_to(tg, GROUP, "/start")
        tg.my_chat_member(PRIVATE, new_status="kicked")
        tg.my_chat_member(GROUP, new_status="left")
        tg.my_chat_member(-1009, new_status="kicked")  # a chat the store never knew

        async def both_inactive() -> bool:
            states = [(await chat_record(engine, c)).chat.state for c in (PRIVATE, GROUP)]
            return states == [ChatState.INACTIVE, ChatState.INACTIVE]

        await wait_until(both_inactive)
        tg.my_chat_member(GROUP, new_status="member")  # re-added: stays inactive until resume
        await wait_until(lambda: _pending_empty(tg))

    record = await chat_record(engine, PRIVATE)
    assert record.inactive_reason == "removed from chat"
    assert record.chat.filter.any_of == {"rl"}  # settings kept
    assert (await chat_record(engine, GROUP)).chat.state == ChatState.INACTIVE


async def _pending_empty(tg: FakeTelegram) -> bool:
    return not tg.pending_updates


async def test_a_failing_command_answers_with_an_apology_and_the_bot_goes_on(
    tg: FakeTelegram, running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    async with running() as channel:
        original = channel._core.handle
        calls = 0

        async def broken(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise RuntimeError(f"database exploded near bot{TOKEN}")
            return await original(*args, **kwargs)

        channel._core.handle = broken  # type: ignore[method-assign]
        await reply_to(tg, KOREAN, "/tags", language_code="ko")
        await reply_to(tg, KOREAN, "/settings", language_code="ko")

    texts = [m["text"] for m in tg.messages_to(KOREAN)]
    assert texts[0] == "처리 중 문제가 생겨 아무것도 바뀌지 않았습니다. 다시 시도해 주세요."
    assert "이 채팅의 설정" in texts[1]
    failures = [r for r in caplog.records if "command failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].levelno == logging.ERROR
    assert "RuntimeError: database exploded" in failures[0].getMessage()
    assert "Traceback" in failures[0].error  # type: ignore[attr-defined]
    for record in caplog.records:
        assert TOKEN not in record.getMessage() and TOKEN not in str(record.__dict__)


async def test_admin_check_failure_is_an_error_reply_not_a_refusal(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    async with running():
        await reply_to(tg, GROUP, "/start", user_id=ADMIN)
        tg.chat_admins[GROUP] = {ADMIN}
        tg.fail_next("getChatMember", 500)
        call = await reply_to(tg, GROUP, "/subscribe rl", user_id=ADMIN)
        assert "Something went wrong" in tg.messages_to(GROUP)[-1]["text"]
        assert call.ok
        await reply_to(tg, GROUP, "/subscribe rl", user_id=ADMIN)  # a failure is not cached

    assert (await chat_record(engine, GROUP)).chat.filter.any_of == {"rl"}


async def test_set_my_commands_failure_is_logged_and_not_fatal(
    tg: FakeTelegram, running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail_set_my_commands = True
    caplog.set_level(logging.WARNING, logger="bot.channels.telegram")
    async with running():
        await reply_to(tg, PRIVATE, "/help")

    warnings = [
        r
        for r in caplog.records
        if r.name == "bot.channels.telegram" and r.levelno == logging.WARNING
    ]
    assert len(warnings) == 2 and "command menu" in warnings[0].getMessage()
    assert all(TOKEN not in r.getMessage() for r in caplog.records)
    assert tg.commands_for() is None


# ---------------------------------------------------------------------- webhook


async def test_webhook_mode_registers_and_checks_the_secret(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    async with running(telegram_webhook_url=WEBHOOK_URL, telegram_webhook_secret=SECRET) as ch:
        assert tg.webhook is not None
        assert tg.webhook["url"] == WEBHOOK_URL and tg.webhook["secret_token"] == SECRET
        assert tg.request_count["getUpdates"] == 0

        def body(chat_id: int, text: str) -> bytes:
            return json.dumps(tg.message(chat_id, text)).encode()

        assert await ch.process_webhook(body(PRIVATE, "/subscribe rl"), None) == 401
        assert await ch.process_webhook(body(PRIVATE, "/subscribe rl"), "wrong") == 401
        assert await ch.process_webhook(body(PRIVATE, "/subscribe rl"), SECRET[:-1]) == 401
        assert await ch.process_webhook(b"not json", SECRET) == 400
        assert await ch.process_webhook(b'{"no": "update_id"}', SECRET) == 400
        assert await ch.process_webhook(b"[1, 2]", SECRET) == 400
        await asyncio.sleep(0.1)  # nothing is sent meanwhile
        assert tg.calls("sendMessage") == []
        async with engine.connect() as conn:
            unknown = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(PRIVATE))
        assert unknown is None

        assert await ch.process_webhook(body(PRIVATE, "/subscribe rl"), SECRET) == 200
        await tg.wait_for(sent_to(PRIVATE))

    assert tg.request_count["getUpdates"] == 0
    assert "any of rl" in tg.messages_to(PRIVATE)[0]["text"]
    assert (await chat_record(engine, PRIVATE)).chat.filter.any_of == {"rl"}
    assert await ch.process_webhook(body(PRIVATE, "/help"), SECRET) == 503


@pytest.mark.parametrize(
    ("overrides", "variable"),
    [
        ({"telegram_webhook_url": WEBHOOK_URL}, "TELEGRAM_WEBHOOK_SECRET"),
        (
            {
                "telegram_webhook_url": "http://bot.example.org/hook",
                "telegram_webhook_secret": SECRET,
            },
            "TELEGRAM_WEBHOOK_URL",
        ),
        ({"telegram_rate_per_second": 31}, "TELEGRAM_RATE_PER_SECOND"),
        (
            {"telegram_rate_per_second": 1001, "telegram_paid_broadcast": True},
            "TELEGRAM_RATE_PER_SECOND",
        ),
    ],
)
def test_telegram_settings_that_are_configuration_errors(
    overrides: dict[str, Any], variable: str
) -> None:
    """A webhook anyone could post to, a webhook Telegram refuses (http), a cap over the
    free 30 a second without paid broadcasts, or over the paid 1,000."""
    with pytest.raises(ConfigError) as caught:
        load_settings(Settings, telegram_bot_token=TOKEN, **overrides)
    assert caught.value.variable == variable
    assert TOKEN not in str(caught.value)
    paid = load_settings(
        Settings,
        telegram_bot_token=TOKEN,
        telegram_rate_per_second=1000,
        telegram_paid_broadcast=True,
    )
    assert paid.telegram_paid_broadcast and paid.telegram_rate_per_second == 1000


async def test_a_webhook_update_sent_twice_is_acted_on_once(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    tg.chat_admins[GROUP] = {ADMIN}
    async with running(telegram_webhook_url=WEBHOOK_URL, telegram_webhook_secret=SECRET) as ch:
        toggle = json.dumps(tg.message(PRIVATE, "/subscribe rl")).encode()
        assert await ch.process_webhook(toggle, SECRET) == 200
        assert await ch.process_webhook(toggle, SECRET) == 200  # Telegram's retry
        later = json.dumps(tg.message(PRIVATE, "/settings")).encode()
        assert await ch.process_webhook(later, SECRET) == 200
        await tg.wait_for(sent_to(PRIVATE), count=2)

    texts = [m["text"] for m in tg.messages_to(PRIVATE)]
    assert len(texts) == 2 and "any of rl" in texts[0] and "Filter: any of rl" in texts[1]


@pytest.mark.parametrize(
    "body",
    MALFORMED_UPDATES,
    ids=lambda body: repr(body[:40]),
)
async def test_a_malformed_webhook_body_is_400_and_changes_nothing(
    tg: FakeTelegram,
    running: Running,
    engine: AsyncEngine,
    body: bytes,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running(telegram_webhook_url=WEBHOOK_URL, telegram_webhook_secret=SECRET) as ch:
        assert await ch.process_webhook(body, SECRET) == 400
        fine = json.dumps(tg.message(PRIVATE, "/help")).encode()
        assert await ch.process_webhook(fine, SECRET) == 200
        await tg.wait_for(sent_to(PRIVATE))

    assert len(tg.calls("sendMessage")) == 1
    assert all(r.exc_info is None and "Traceback" not in r.getMessage() for r in caplog.records)
    assert any("webhook body is not an update" in r.getMessage() for r in caplog.records)
    async with engine.connect() as conn:
        count = (await conn.execute(select(func.count()).select_from(chats_table))).scalar_one()
    assert count == 1  # the chat of /help only


# ---------------------------------------------------------------------- start-up


async def test_a_rejected_token_is_a_config_error_without_the_token(
    tg: FakeTelegram, engine: AsyncEngine, database_url: str
) -> None:
    other = "987654321:AAHsomeOtherTokenThatIsWrong_0123456"
    settings = Settings(
        database_url=database_url, telegram_bot_token=other, telegram_api_base_url=tg.base_url
    )
    core = CommandCore(engine=engine, defaults=Defaults())
    channel = TelegramChannel(settings=settings, core=core, bot=make_bot(settings))
    with pytest.raises(ConfigError) as caught:
        await channel.start()
    assert caught.value.variable == "TELEGRAM_BOT_TOKEN"
    assert other not in str(caught.value)


async def test_an_unreachable_api_is_a_transient_error(
    tg: FakeTelegram, engine: AsyncEngine, database_url: str
) -> None:
    port = tg.port
    await tg.close()
    settings = Settings(
        database_url=database_url,
        telegram_bot_token=TOKEN,
        telegram_api_base_url=f"http://127.0.0.1:{port}/bot",
    )
    core = CommandCore(engine=engine, defaults=Defaults())
    channel = TelegramChannel(settings=settings, core=core, bot=make_bot(settings))
    with pytest.raises(TransientError) as caught:
        await channel.start()
    assert TOKEN not in caught.value.reason


def test_menu_commands_follow_the_help_text() -> None:
    english = {c.command: c.description for c in menu_commands("en")}
    korean = {c.command: c.description for c in menu_commands("ko")}
    assert english.keys() == korean.keys()
    declared = registry.commands()
    assert list(english) == [
        c.name for c in declared if c.audience != Audience.BOT_ADMINS and c.menu != Menu.NONE
    ]
    assert english["pause"] == "stop deliveries; pages published meanwhile are skipped"
    assert english["resume"] == "start deliveries again"
    assert english["help"] == "every command, or one with examples"
    assert korean["help"] == "모든 명령어, 또는 명령어 하나의 설명과 예"


# ---------------------------------------------------------------------- sender


@pytest.fixture
async def sender(tg: FakeTelegram) -> AsyncIterator[TelegramSender]:
    settings = Settings(
        telegram_bot_token=TOKEN, telegram_api_base_url=tg.base_url, telegram_rate_per_second=25
    )
    bot = make_bot(settings)
    try:
        yield TelegramSender(bot, rate_per_second=settings.telegram_rate_per_second)
    finally:
        await close_bot(bot)


async def test_sender_sends_html_without_previews_and_returns_the_message_id(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    keyboard = {"inline_keyboard": [[{"text": "Send", "callback_data": "bc:1"}]]}
    first = await sender.send(
        str(PRIVATE),
        Outgoing(text="<b>New</b> &amp; <i>hot</i>", payload=TelegramPayload(markup=keyboard)),
        thread=None,
    )
    second = await sender.send(
        str(PRIVATE), Outgoing(text="<b>not markup</b>", plain=True), thread=None
    )

    assert (first, second) == ("1", "2")
    html, plain = tg.calls("sendMessage")
    assert html.params["parse_mode"] == "HTML" and "parse_mode" not in plain.params
    assert html.params["link_preview_options"] == {"is_disabled": True}
    assert html.params["reply_markup"] == keyboard and "reply_markup" not in plain.params
    assert [m["text"] for m in tg.messages_to(PRIVATE)] == ["New & hot", "<b>not markup</b>"]
    assert sender.platform == Platform.TELEGRAM and sender.rate_per_second == 25


def test_sender_spaces_messages_per_chat_kind() -> None:
    sender = TelegramSender(Bot(TOKEN), rate_per_second=30)
    private = ChatSettings(platform=Platform.TELEGRAM, chat_id="1", kind=ChatKind.PRIVATE)
    group = ChatSettings(platform=Platform.TELEGRAM, chat_id="-1", kind=ChatKind.GROUP)
    assert sender.interval(private) == PRIVATE_CHAT_INTERVAL == 1.0
    assert sender.interval(group) == GROUP_CHAT_INTERVAL == 3.0


async def _fails(sender: TelegramSender, chat_id: int, text: str = "hi") -> DeliveryError:
    with pytest.raises(DeliveryError) as caught:
        await sender.send(str(chat_id), Outgoing(text=text), thread=None)
    assert TOKEN not in caught.value.reason and TOKEN not in str(caught.value)
    assert TOKEN.split(":")[1] not in caught.value.reason
    return caught.value


async def test_sender_429_is_rate_limited_with_retry_after(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    tg.fail_next("sendMessage", 429, retry_after=7)
    error = await _fails(sender, PRIVATE)
    assert isinstance(error, RateLimited) and error.retry_after == 7.0


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_sender_429_without_ptb_timedelta(
    tg: FakeTelegram, sender: TelegramSender, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PTB_TIMEDELTA")
    tg.fail_next("sendMessage", 429, retry_after=4)
    error = await _fails(sender, PRIVATE)
    assert isinstance(error, RateLimited) and error.retry_after == 4.0


async def test_sender_blocked_and_missing_chats_are_gone(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    tg.blocked_chats.add(PRIVATE)
    tg.missing_chats.add(KOREAN)
    blocked = await _fails(sender, PRIVATE)
    missing = await _fails(sender, KOREAN)
    tg.fail_next("sendMessage", 400, description="Bad Request: user is deactivated")
    deactivated = await _fails(sender, MEMBER)
    assert isinstance(blocked, ChatGone) and "blocked by the user" in blocked.reason.lower()
    assert isinstance(missing, ChatGone) and "chat not found" in missing.reason.lower()
    assert isinstance(deactivated, ChatGone)


async def test_sender_migrated_group_gives_the_new_id(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    tg.migrated_chats[-4001] = -1004001
    error = await _fails(sender, -4001)
    assert isinstance(error, ChatMigrated) and error.new_chat_id == "-1004001"


async def test_sender_server_errors_and_dropped_connections_are_transient(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    tg.fail_next("sendMessage", 500)
    server = await _fails(sender, PRIVATE)
    tg.fail_next("sendMessage", 502)
    gateway = await _fails(sender, PRIVATE)
    tg.drop_next("sendMessage")
    dropped = await _fails(sender, PRIVATE)
    for error in (server, gateway, dropped):
        assert isinstance(error, TransientError) and not error.ambiguous, error
    assert tg.delivered == 0
    assert await sender.send(str(PRIVATE), Outgoing(text="again"), thread=None) == "1"


async def test_sender_timeout_is_ambiguous(tg: FakeTelegram) -> None:
    async with Bot(TOKEN, base_url=tg.base_url, request=HTTPXRequest(read_timeout=0.1)) as bot:
        tg.latency = 0.5
        sender = TelegramSender(bot, rate_per_second=30)
        error = await _fails(sender, PRIVATE)
    assert isinstance(error, TransientError) and error.ambiguous


async def test_sender_malformed_message_is_permanent(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    error = await _fails(sender, PRIVATE, text="<b>unclosed")
    assert isinstance(error, PermanentError) and not isinstance(error, ChatGone)
    assert error.reason.startswith("bad_request: ")


async def test_sender_reasons_never_carry_the_token(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    tg.fail_next("sendMessage", 400, description=f"Bad Request: see {tg.base_url}{TOKEN}/x")
    leaky = await _fails(sender, PRIVATE)
    assert "[token]" in leaky.reason
    wrong = Bot("555:AAHwrongTokenForThisFakeServer_9876543", base_url=tg.base_url)
    try:
        with pytest.raises(PlatformAuthFailed) as caught:
            await TelegramSender(wrong, rate_per_second=30).send(
                "1", Outgoing(text="x"), thread=None
            )
    finally:
        await close_bot(wrong)
    assert "AAHwrongToken" not in caught.value.reason


async def test_sender_posts_to_a_forum_topic_and_a_closed_or_deleted_one_is_gone(
    tg: FakeTelegram, sender: TelegramSender
) -> None:
    rl, closed, deleted = (tg.create_topic(FORUM, name) for name in ("RL", "Old", "Gone"))
    tg.close_topic(FORUM, closed)
    tg.delete_topic(FORUM, deleted)
    assert await sender.send(f"{FORUM}/{rl}", Outgoing(text="to rl"), thread=None)
    with pytest.raises(ChatGone) as was_closed:
        await sender.send(f"{FORUM}/{closed}", Outgoing(text="x"), thread=None)
    with pytest.raises(ChatGone) as was_deleted:
        await sender.send(f"{FORUM}/{deleted}", Outgoing(text="x"), thread=None)

    assert [m["text"] for m in tg.messages_to(FORUM, thread_id=rl)] == ["to rl"]
    assert tg.messages_to(FORUM, general=True) == []
    assert was_closed.value.reason.startswith("topic closed: ")
    assert was_deleted.value.reason.startswith("topic deleted: ")


async def test_paid_broadcasts_carry_allow_paid_broadcast_on_every_send(
    tg: FakeTelegram, running: Running
) -> None:
    settings = Settings(
        telegram_bot_token=TOKEN,
        telegram_api_base_url=tg.base_url,
        telegram_rate_per_second=300,
        telegram_paid_broadcast=True,
    )
    bot = make_bot(settings)
    try:
        paid = TelegramSender(bot, rate_per_second=300, paid_broadcast=True)
        free = TelegramSender(bot, rate_per_second=30)
        await paid.send(str(PRIVATE), Outgoing(text="paid"), thread=None)
        await free.send(str(PRIVATE), Outgoing(text="free"), thread=None)
    finally:
        await close_bot(bot)
    async with running(telegram_rate_per_second=300, telegram_paid_broadcast=True):
        await reply_to(tg, KOREAN, "/help")

    first, second, reply = tg.calls("sendMessage")
    assert first.params["allow_paid_broadcast"] is True
    assert "allow_paid_broadcast" not in second.params
    assert reply.params["allow_paid_broadcast"] is True  # replies to commands too
    assert tg.paid_broadcasts == 2


# ---------------------------------------------------------------------- buttons


async def test_a_button_is_answered_before_any_database_work(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    """Telegram shows a spinner until the answer and refuses a late one: while the chat's
    row is held by another writer, the press is answered all the same, then acted on."""
    await seed_pages(engine)
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe")
        picker = tg.messages_to(PRIVATE)[0]
        record = await chat_record(engine, PRIVATE)
        async with engine.begin() as writer:  # the row (PostgreSQL), the write lock (SQLite)
            await writer.execute(
                update(chats_table).where(chats_table.c.id == record.pk).values(title="held")
            )
            update_ = tg.callback(PRIVATE, picker["message_id"], "tog:rl")
            await tg.wait_for(lambda c: c.method == "answerCallbackQuery", timeout=10)
            assert tg.calls("editMessageText") == []
        await tg.wait_for(lambda c: c.method == "editMessageText", timeout=10)

    assert update_["callback_query"]["id"] in tg.callback_answers
    answer, edit = tg.calls("answerCallbackQuery")[0], tg.calls("editMessageText")[0]
    assert answer.ok and answer.at < edit.at
    assert (await chat_record(engine, PRIVATE)).chat.filter.any_of == {"rl"}


async def test_a_failing_button_is_answered_and_says_so_in_the_chat(
    tg: FakeTelegram, running: Running
) -> None:
    async with running() as channel:

        async def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the database went away")

        channel._core.handle_action = broken  # type: ignore[method-assign]
        update_ = tg.callback(PRIVATE, 1, "tog:rl")
        await tg.wait_for(sent_to(PRIVATE))

    assert tg.callback_answers[update_["callback_query"]["id"]].get("text") is None
    assert "Something went wrong" in tg.messages_to(PRIVATE)[0]["text"]


async def test_a_member_pressing_an_admins_broadcast_buttons_changes_nothing(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    """The refusal is an alert for the member alone; the preview keeps its text and its
    buttons, and the admin can still use them."""
    tg.chat_admins[GROUP] = {ADMIN, MEMBER}  # a group admin, but not a broadcast admin
    async with running(admin=True, telegram_admin_ids=str(ADMIN)):
        await reply_to(tg, GROUP, "/subscribe rl", user_id=ADMIN)
        await reply_to(tg, GROUP, "/broadcast Hello, readers", user_id=ADMIN)
        preview = copy.deepcopy(tg.messages_to(GROUP)[-1])
        send, cancel = (b["callback_data"] for b in preview["reply_markup"]["inline_keyboard"][0])
        presses = [
            tg.callback(GROUP, preview["message_id"], data, user_id=MEMBER)["callback_query"]["id"]
            for data in (send, cancel)
        ]
        await tg.wait_for(lambda c: c.method == "answerCallbackQuery", count=2)
        assert tg.messages_to(GROUP)[-1] == preview
        tg.callback(GROUP, preview["message_id"], cancel, user_id=ADMIN)
        await tg.wait_for(lambda c: c.method == "editMessageText")

    for query_id in presses:
        answer = tg.callback_answers[query_id]
        assert answer["show_alert"] is True
        assert answer["text"] == "This command is for the bot's admins only."
    assert len(tg.calls("editMessageText")) == 1  # the admin's cancel only
    async with engine.connect() as conn:
        queued = await conn.execute(select(func.count()).select_from(outbox_table))
        assert queued.scalar_one() == 0  # nothing was broadcast


# ---------------------------------------------------------------------- forum topics


async def test_each_forum_topic_is_a_chat_of_its_own(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    tg.chat_admins[FORUM] = {ADMIN}
    rl, robotics = tg.create_topic(FORUM, "RL"), tg.create_topic(FORUM, "Robotics")
    async with running():
        await reply_to(tg, FORUM, "/subscribe rl", user_id=ADMIN, thread_id=rl)
        await reply_to(tg, FORUM, "/subscribe robotics", user_id=ADMIN, thread_id=robotics)
        await reply_to(tg, FORUM, "/mode instant", user_id=ADMIN, thread_id=robotics)
        await reply_to(tg, FORUM, "/settings", user_id=MEMBER, thread_id=rl)
        refusal = await reply_to(tg, FORUM, "/pause", user_id=MEMBER, thread_id=rl)

    assert refusal.params["message_thread_id"] == rl
    in_rl = [m["text"] for m in tg.messages_to(FORUM, thread_id=rl)]
    in_robotics = [m["text"] for m in tg.messages_to(FORUM, thread_id=robotics)]
    assert len(in_rl) == 3 and len(in_robotics) == 2
    assert "Filter: any of rl" in in_rl[1] and "robotics" not in in_rl[1]
    assert "administrators" in in_rl[2]
    assert tg.messages_to(FORUM, general=True) == []  # nothing went to General
    first = await chat_record(engine, f"{FORUM}/{rl}")
    second = await chat_record(engine, f"{FORUM}/{robotics}")
    assert first.chat.filter.any_of == {"rl"} and first.chat.mode.value == "daily"
    assert first.chat.state == ChatState.ACTIVE
    assert second.chat.filter.any_of == {"robotics"} and second.chat.mode.value == "instant"
    assert first.chat.kind == second.chat.kind == ChatKind.GROUP
    async with engine.connect() as conn:
        assert await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(FORUM)) is None


async def test_two_topics_get_different_pages_and_a_closed_topic_stops_alone(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path / "wiki")
    tg.chat_admins[FORUM] = {ADMIN}
    rl, robotics, vision = (tg.create_topic(FORUM, n) for n in ("RL", "Robotics", "Vision"))
    async with running():
        for topic, tag in ((rl, "rl"), (robotics, "robotics"), (vision, "vision")):
            await reply_to(tg, FORUM, f"/subscribe {tag}", user_id=ADMIN, thread_id=topic)
    replies = len(tg.calls("sendMessage"))
    await world.publish("papers/2026/policy-gradients", tags="[rl]")
    await world.publish("papers/2026/robot-hands", tags="[robotics, vision]")
    assert await world.plan() == 3
    tg.close_topic(FORUM, vision)
    bot = make_bot(make_settings(tg, database_url))
    try:
        sender = TelegramSender(bot, rate_per_second=30)
        await Delivery(engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=4).drain()
    finally:
        await close_bot(bot)

    digests = tg.calls("sendMessage")[replies:]
    assert sorted(c.params.get("message_thread_id") for c in digests if c.ok) == [rl, robotics]
    to_rl = tg.messages_to(FORUM, thread_id=rl)[-1]["text"]
    to_robotics = tg.messages_to(FORUM, thread_id=robotics)[-1]["text"]
    assert "policy-gradients" in to_rl and "robot-hands" not in to_rl
    assert "robot-hands" in to_robotics and "policy-gradients" not in to_robotics
    assert tg.messages_to(FORUM, general=True) == []
    closed = await chat_record(engine, f"{FORUM}/{vision}")
    assert closed.chat.state == ChatState.INACTIVE
    assert closed.inactive_reason is not None and closed.inactive_reason.startswith("topic closed")
    for topic in (rl, robotics):
        assert (await chat_record(engine, f"{FORUM}/{topic}")).chat.state == ChatState.ACTIVE

    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "subscribers",
        env={"DATABASE_URL": database_url, "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0
    listing = out.decode().splitlines()
    assert any(line.startswith(f"telegram:{FORUM}/{rl} state=active ") for line in listing)
    assert any(line.startswith(f"telegram:{FORUM}/{vision} state=inactive ") for line in listing)


async def test_topics_of_one_forum_are_paced_as_the_one_group_telegram_counts(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path / "wiki")
    tg.chat_admins[FORUM] = {ADMIN}
    topics = [tg.create_topic(FORUM, name) for name in ("A", "B", "C", "D")]
    async with running():
        for topic in topics:
            await reply_to(tg, FORUM, "/subscribe rl", user_id=ADMIN, thread_id=topic)
    replies = len(tg.calls("sendMessage"))
    await world.publish("papers/2026/policy-gradients", tags="[rl]")
    assert await world.plan() == len(topics)
    tg.enforce_limits = True  # one message a second to a chat, 20 a minute to a group
    bot = make_bot(make_settings(tg, database_url))
    try:
        sender = TelegramSender(bot, rate_per_second=30)
        await Delivery(engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=8).drain()
    finally:
        await close_bot(bot)
    sent = [c for c in tg.calls("sendMessage")[replies:] if c.ok]
    assert sorted(c.params["message_thread_id"] for c in sent) == sorted(topics)
    assert tg.limit_violations == []  # each topic alone would have been sent at once
    times = sorted(c.at for c in sent)
    assert all(b - a >= GROUP_CHAT_INTERVAL * 0.95 for a, b in itertools.pairwise(times))


async def test_removed_from_a_forum_makes_every_topic_inactive(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    tg.chat_admins[FORUM] = {ADMIN}
    rl, robotics = tg.create_topic(FORUM, "RL"), tg.create_topic(FORUM, "Robotics")
    async with running():
        for topic in (rl, robotics):
            await reply_to(tg, FORUM, "/subscribe rl", user_id=ADMIN, thread_id=topic)
        await reply_to(tg, GROUP, "/subscribe rl", user_id=ADMIN)
        tg.my_chat_member(FORUM, new_status="left")

        async def both_inactive() -> bool:
            records = [await chat_record(engine, f"{FORUM}/{t}") for t in (rl, robotics)]
            return all(r.chat.state == ChatState.INACTIVE for r in records)

        await wait_until(both_inactive)
    assert (await chat_record(engine, GROUP)).chat.state == ChatState.ACTIVE


# ---------------------------------------------------------------------- migration


async def _telegram_chats(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as conn:
        return [record.chat.chat_id for record in await chat_store.listing(conn)]


async def test_a_group_that_becomes_a_supergroup_keeps_its_subscription(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    tg.chat_admins[BASIC] = {ADMIN}
    async with running():
        await reply_to(tg, BASIC, "/subscribe rl", user_id=ADMIN)
        before = await chat_record(engine, BASIC)
        tg.migrate_group(BASIC, SUPER)

        async def moved() -> bool:
            return await _telegram_chats(engine) == [str(SUPER)]

        await wait_until(moved)
        await reply_to(tg, SUPER, "/settings")

    after = await chat_record(engine, SUPER)
    assert after.pk == before.pk and after.chat.filter.any_of == {"rl"}
    assert "Filter: any of rl" in tg.messages_to(SUPER)[-1]["text"]


@pytest.mark.parametrize("changed", [False, True], ids=["untouched", "changed"])
async def test_a_supergroup_row_made_before_the_migration_is_merged(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, changed: bool
) -> None:
    """The older chat's settings win, unless the newer one was changed after the
    migration: then what was said in the supergroup is kept. One chat remains."""
    tg.chat_admins[BASIC] = tg.chat_admins[SUPER] = {ADMIN}
    async with running():
        await reply_to(tg, BASIC, "/subscribe rl", user_id=ADMIN)
        await reply_to(tg, BASIC, "/time 07:30", user_id=ADMIN)
        older = await chat_record(engine, BASIC)
        first = "/subscribe robotics" if changed else "/settings"
        await reply_to(tg, SUPER, first, user_id=ADMIN)
        tg.migrate_group(BASIC, SUPER)

        async def merged() -> bool:
            return await _telegram_chats(engine) == [str(SUPER)]

        await wait_until(merged)

    record = await chat_record(engine, SUPER)
    assert record.pk == older.pk
    if changed:
        assert record.chat.filter.any_of == {"robotics"}
        assert record.chat.digest_time == dt.time(9, 0)
    else:
        assert record.chat.filter.any_of == {"rl"}
        assert record.chat.digest_time == dt.time(7, 30)


async def test_a_send_refused_as_migrated_merges_into_a_supergroup_row(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    """Telegram answers the old id with migrate_to_chat_id while the supergroup already has
    a chat row: the message goes to the supergroup once, and one chat remains."""
    world = await started(engine, tmp_path / "wiki")
    older = await world.chat(str(BASIC), "rl")
    async with running():
        await reply_to(tg, SUPER, "/settings")
    tg.migrated_chats[BASIC] = SUPER
    await world.publish("papers/2026/policy-gradients", tags="[rl]")
    assert await world.plan() == 1
    bot = make_bot(make_settings(tg, database_url))
    try:
        sender = TelegramSender(bot, rate_per_second=30)
        await Delivery(engine=engine, senders={Platform.TELEGRAM: sender}, concurrency=4).drain()
    finally:
        await close_bot(bot)

    digests = [c for c in tg.calls("sendMessage", ok=True) if c.chat_id == SUPER][1:]
    assert len(digests) == 1 and "policy-gradients" in tg.messages_to(SUPER)[-1]["text"]
    assert await _telegram_chats(engine) == [str(SUPER)]
    assert (await chat_record(engine, SUPER)).pk == older.pk
    async with engine.connect() as conn:
        statuses = (await conn.execute(select(outbox_table.c.status))).scalars().all()
    assert statuses == ["sent"]
