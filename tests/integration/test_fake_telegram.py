"""The fake Telegram server speaks the Bot API as python-telegram-bot expects it."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeAllGroupChats,
    ChatMemberAdministrator,
    ChatMemberBanned,
    ChatMemberMember,
    ChatMemberOwner,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    MessageEntity,
    Update,
)
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)
from telegram.ext import Application, CommandHandler, ContextTypes

from tests.fakes import fixtures
from tests.fakes.telegram_api import FakeTelegram

TOKEN = "123:ABC"
PRIVATE = 1001
GROUP = -1001234567890

fake_telegram = fixtures.fake_telegram


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.3) as server:
        yield server


@pytest.fixture
async def bot(tg: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, base_url=tg.base_url, base_file_url=tg.base_file_url) as client:
        yield client


def keyboard(*data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d.title(), callback_data=d) for d in data]])


async def test_fixture_serves_get_me(fake_telegram: FakeTelegram) -> None:
    async with Bot(fake_telegram.token, base_url=fake_telegram.base_url) as client:
        assert client.username == "TrendBot"
    assert fake_telegram.request_count["getMe"] == 1


async def test_send_message_returns_a_realistic_message(tg: FakeTelegram, bot: Bot) -> None:
    first = await bot.send_message(
        PRIVATE,
        "<b>New: ES</b> &amp; GRPO 🎉 <a href='https://example.org/p'>read</a>",
        parse_mode="HTML",
        reply_markup=keyboard("send", "cancel"),
        link_preview_options=LinkPreviewOptions(is_disabled=True),
    )
    second = await bot.send_message(PRIVATE, "plain")
    elsewhere = await bot.send_message(GROUP, "hello group")

    assert (first.message_id, second.message_id, elsewhere.message_id) == (1, 2, 1)
    assert first.text == "New: ES & GRPO 🎉 read"
    assert first.entities == (
        MessageEntity(MessageEntity.BOLD, 0, 7),
        MessageEntity(MessageEntity.TEXT_LINK, 18, 4, url="https://example.org/p"),
    )
    assert first.chat.id == PRIVATE and first.chat.type == "private"
    assert elsewhere.chat.type == "supergroup"
    assert first.from_user is not None and first.from_user.is_bot
    assert abs(first.date.timestamp() - time.time()) < 5
    assert first.reply_markup == keyboard("send", "cancel")
    assert first.link_preview_options == LinkPreviewOptions(is_disabled=True)

    call = tg.calls("sendMessage")[0]
    assert call.chat_id == PRIVATE and call.params["parse_mode"] == "HTML"
    assert call.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "send"
    assert [m["text"] for m in tg.messages_to(PRIVATE)] == ["New: ES & GRPO 🎉 read", "plain"]
    assert tg.delivered == 3 and tg.request_count["sendMessage"] == 3


async def test_html_code_blocks_and_spoilers(bot: Bot) -> None:
    sent = await bot.send_message(
        PRIVATE,
        '<pre><code class="language-python">x = 1</code></pre>\n<tg-spoiler>s</tg-spoiler> &lt;3',
        parse_mode="HTML",
    )
    assert sent.text == "x = 1\ns <3"
    assert sent.entities == (
        MessageEntity(MessageEntity.PRE, 0, 5, language="python"),
        MessageEntity(MessageEntity.SPOILER, 6, 1),
    )


@pytest.mark.parametrize(
    ("text", "reply_markup", "description"),
    [
        ("<b>open", None, 'Can\'t find end tag corresponding to start tag "b"'),
        ("a<br/>b", None, 'Unsupported start tag "br" at byte offset 1'),
        ("<b>x</i>", None, 'expected "</b>", found "</i>"'),
        ("<p>x</p>", None, 'Unsupported start tag "p"'),
        ("<b></b>", None, "message text is empty"),
        ("x" * 4097, None, "message is too long"),
        ("ok", keyboard("x" * 65), "BUTTON_DATA_INVALID"),
    ],
)
async def test_send_message_refuses_what_telegram_refuses(
    tg: FakeTelegram,
    bot: Bot,
    text: str,
    reply_markup: InlineKeyboardMarkup | None,
    description: str,
) -> None:
    with pytest.raises(BadRequest) as raised:
        await bot.send_message(PRIVATE, text, parse_mode="HTML", reply_markup=reply_markup)
    assert description.lower() in str(raised.value).lower()  # PTB re-capitalises it
    assert tg.messages_to(PRIVATE) == []


async def test_edits_change_the_stored_message(tg: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(PRIVATE, "Preview: 3 chats", reply_markup=keyboard("send"))

    edited = await bot.edit_message_text("Sent to 3 chats", chat_id=PRIVATE, message_id=1)
    assert edited.text == "Sent to 3 chats" and edited.edit_date is not None
    assert edited.reply_markup is None
    await bot.edit_message_reply_markup(PRIVATE, sent.message_id, reply_markup=keyboard("undo"))

    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await bot.edit_message_text("Sent to 3 chats", PRIVATE, 1, reply_markup=keyboard("undo"))
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await bot.edit_message_text("x", chat_id=PRIVATE, message_id=99)
    (stored,) = tg.messages_to(PRIVATE)
    assert stored["text"] == "Sent to 3 chats"
    assert stored["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "undo"


async def test_commands_are_kept_per_scope_and_language(tg: FakeTelegram, bot: Bot) -> None:
    english = [BotCommand("subscribe", "Add tags"), BotCommand("latest", "Newest pages")]
    korean = [BotCommand("subscribe", "태그 추가")]
    assert await bot.set_my_commands(english)
    assert await bot.set_my_commands(korean, language_code="ko")
    assert await bot.set_my_commands(english[:1], scope=BotCommandScopeAllGroupChats())

    assert await bot.get_my_commands(language_code="ko") == tuple(korean)
    assert await bot.get_my_commands() == tuple(english)
    assert await bot.get_my_commands(language_code="de") == ()
    assert tg.commands_for(language_code="ko") == [
        {"command": "subscribe", "description": "태그 추가"}
    ]
    assert tg.commands_for(scope={"type": "all_group_chats"}) == [
        {"command": "subscribe", "description": "Add tags"}
    ]
    assert await bot.delete_my_commands(language_code="ko")
    assert tg.commands_for(language_code="ko") is None

    with pytest.raises(BadRequest, match=r"(?i)bot_command_invalid"):
        await bot.set_my_commands([BotCommand("Bad-Name", "x")])
    tg.fail_set_my_commands = True
    with pytest.raises(BadRequest):
        await bot.set_my_commands(english)


async def test_chat_member_status_follows_the_configured_admins(tg: FakeTelegram, bot: Bot) -> None:
    tg.chat_creators[GROUP] = 7
    tg.chat_admins[GROUP] = {8}

    assert isinstance(await bot.get_chat_member(GROUP, 7), ChatMemberOwner)
    admin = await bot.get_chat_member(GROUP, 8)
    assert isinstance(admin, ChatMemberAdministrator) and admin.can_change_info
    assert isinstance(await bot.get_chat_member(GROUP, 9), ChatMemberMember)

    tg.message(GROUP, "hi", user_id=9, chat_title="RL readers")
    chat = await bot.get_chat(GROUP)
    assert (chat.type, chat.title) == ("supergroup", "RL readers")
    assert (await bot.get_chat(PRIVATE)).type == "private"


async def test_get_updates_confirms_by_offset_and_parses(tg: FakeTelegram, bot: Bot) -> None:
    tg.message(PRIVATE, "/subscribe rl reasoning", language_code="ko", username="kim")
    tg.message(GROUP, "/latest@TrendBot 3", user_id=42, chat_title="Lab")

    updates = await bot.get_updates(timeout=0)
    assert len(updates) == 2
    first, second = updates
    assert first.message is not None and first.message.from_user is not None
    assert first.message.text == "/subscribe rl reasoning"
    assert first.message.entities == (MessageEntity(MessageEntity.BOT_COMMAND, 0, 10),)
    assert first.message.from_user.language_code == "ko"
    assert first.message.chat.type == "private"
    assert second.message is not None and second.message.chat.title == "Lab"
    assert second.message.parse_entities([MessageEntity.BOT_COMMAND]) != {}

    again = await bot.get_updates(offset=first.update_id + 1, timeout=0)
    assert [u.update_id for u in again] == [second.update_id]
    assert await bot.get_updates(offset=second.update_id + 1, timeout=0) == ()
    assert tg.pending_updates == []


async def test_long_poll_is_held_no_longer_than_the_cap(tg: FakeTelegram, bot: Bot) -> None:
    started = time.monotonic()
    assert await bot.get_updates(timeout=10) == ()
    assert 0.25 <= time.monotonic() - started < 2.0  # held for long_poll_cap=0.3, not 10 s


async def test_long_poll_wakes_for_an_injected_update() -> None:
    async with (
        FakeTelegram(token=TOKEN, long_poll_cap=5.0) as tg,
        Bot(TOKEN, base_url=tg.base_url) as bot,
    ):
        started = time.monotonic()
        poll = asyncio.create_task(bot.get_updates(timeout=10))
        await tg.wait_for_poll(timeout=2)
        tg.message(PRIVATE, "/start")
        (update,) = await poll
        assert time.monotonic() - started < 2.0  # woken, well before the 5 s cap
        assert update.message is not None and update.message.text == "/start"


async def test_allowed_updates_filter_what_is_delivered(tg: FakeTelegram, bot: Bot) -> None:
    tg.callback(PRIVATE, 1, "noop")
    tg.message(PRIVATE, "hello")
    (update,) = await bot.get_updates(timeout=0, allowed_updates=[Update.MESSAGE])
    assert update.message is not None and tg.allowed_updates == ["message"]


async def test_a_second_poller_terminates_the_first() -> None:
    async with (
        FakeTelegram(token=TOKEN, long_poll_cap=5.0) as tg,
        Bot(TOKEN, base_url=tg.base_url) as first_instance,
        Bot(TOKEN, base_url=tg.base_url) as second_instance,
    ):
        first = asyncio.create_task(first_instance.get_updates(timeout=10))
        await tg.wait_for_poll(timeout=2)
        assert await second_instance.get_updates(timeout=0) == ()
        with pytest.raises(Conflict, match=r"(?i)terminated by other getUpdates request"):
            await first


async def test_button_press_round_trip(tg: FakeTelegram, bot: Bot) -> None:
    preview = await bot.send_message(
        PRIVATE, "Broadcast to 12 chats?", reply_markup=keyboard("send")
    )
    tg.callback(PRIVATE, preview.message_id, "send")

    (update,) = await bot.get_updates(timeout=0)
    query = update.callback_query
    assert query is not None and query.data == "send" and query.from_user.id == PRIVATE
    assert query.message is not None and query.message.message_id == preview.message_id
    assert await query.answer("Sending…")
    assert tg.callback_answers[query.id]["text"] == "Sending…"
    with pytest.raises(BadRequest, match=r"(?i)query id is invalid"):
        await bot.answer_callback_query("404")


async def test_webhook_set_info_and_delete(tg: FakeTelegram, bot: Bot) -> None:
    tg.message(PRIVATE, "queued")
    assert await bot.set_webhook(
        "https://bot.example.org/telegram/webhook", secret_token="s3cret", max_connections=10
    )
    info = await bot.get_webhook_info()
    assert (info.url, info.pending_update_count, info.max_connections) == (
        "https://bot.example.org/telegram/webhook",
        1,
        10,
    )
    assert tg.webhook is not None and tg.webhook["secret_token"] == "s3cret"
    with pytest.raises(Conflict, match="webhook is active"):
        await bot.get_updates(timeout=0)

    assert await bot.delete_webhook(drop_pending_updates=True)
    assert (await bot.get_webhook_info()).url == ""
    assert await bot.get_updates(timeout=0) == ()


async def test_blocked_chat_raises_forbidden(tg: FakeTelegram, bot: Bot) -> None:
    tg.blocked_chats.add(PRIVATE)
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(PRIVATE, "digest")
    (call,) = tg.sent[-1:]
    assert (call.method, call.status, call.chat_id) == ("sendMessage", 403, PRIVATE)


async def test_missing_chat_raises_bad_request(tg: FakeTelegram, bot: Bot) -> None:
    tg.missing_chats.add(GROUP)
    with pytest.raises(BadRequest, match=r"(?i)chat not found"):
        await bot.send_message(GROUP, "digest")


async def test_migrated_group_raises_chat_migrated(tg: FakeTelegram, bot: Bot) -> None:
    tg.migrated_chats[-4242] = GROUP
    with pytest.raises(ChatMigrated) as raised:
        await bot.send_message(-4242, "digest")
    assert raised.value.new_chat_id == GROUP
    assert (await bot.send_message(GROUP, "digest")).chat.id == GROUP


async def test_my_chat_member_kicked_blocks_later_sends(tg: FakeTelegram, bot: Bot) -> None:
    tg.my_chat_member(PRIVATE, new_status="kicked")
    tg.my_chat_member(GROUP, new_status="left", chat_title="Lab")

    kicked, left = await bot.get_updates(timeout=0)
    assert kicked.my_chat_member is not None and left.my_chat_member is not None
    assert isinstance(kicked.my_chat_member.new_chat_member, ChatMemberBanned)
    assert kicked.my_chat_member.new_chat_member.user.id == bot.id
    assert left.my_chat_member.new_chat_member.status == "left"
    with pytest.raises(Forbidden, match="blocked by the user"):
        await bot.send_message(PRIVATE, "x")
    with pytest.raises(Forbidden, match="kicked from the supergroup chat"):
        await bot.send_message(GROUP, "x")

    tg.my_chat_member(PRIVATE, new_status="member")
    assert (await bot.send_message(PRIVATE, "welcome back")).text == "welcome back"


async def test_fail_next_429_raises_retry_after(tg: FakeTelegram, bot: Bot) -> None:
    tg.fail_next("sendMessage", 429, retry_after=5, chat_id=PRIVATE)
    await bot.send_message(GROUP, "other chats are not affected")
    with pytest.raises(RetryAfter) as raised:
        await bot.send_message(PRIVATE, "x")
    assert raised.value.retry_after == dtm.timedelta(seconds=5)
    assert tg.sent[-1].response == {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 5",
        "parameters": {"retry_after": 5},
    }
    assert (await bot.send_message(PRIVATE, "x")).message_id == 1


@pytest.mark.parametrize("status", [500, 502])
async def test_fail_next_server_errors_raise_network_error(
    tg: FakeTelegram, bot: Bot, status: int
) -> None:
    tg.fail_next("sendmessage", status, times=2)  # method names are case-insensitive
    for _ in range(2):
        with pytest.raises(NetworkError) as raised:
            await bot.send_message(PRIVATE, "x")
        assert type(raised.value) is NetworkError
    assert (await bot.send_message(PRIVATE, "x")).text == "x"
    assert [c.status for c in tg.calls("sendMessage")] == [status, status, 200]


async def test_dropped_connection_raises_network_error(tg: FakeTelegram, bot: Bot) -> None:
    tg.drop_next("sendMessage")
    with pytest.raises(NetworkError, match="disconnected"):
        await bot.send_message(PRIVATE, "x")
    assert tg.messages_to(PRIVATE) == [] and tg.sent[-1].status == 0
    assert (await bot.send_message(PRIVATE, "x")).message_id == 1


async def test_latency_beyond_read_timeout_raises_timed_out(tg: FakeTelegram, bot: Bot) -> None:
    tg.latency = 0.3
    with pytest.raises(TimedOut):
        await bot.send_message(PRIVATE, "x", read_timeout=0.05)


async def test_wrong_token_and_unknown_method(tg: FakeTelegram) -> None:
    async with httpx.AsyncClient() as client:
        wrong = await client.post(f"{tg.base_url}999:WRONG/getMe")
        unknown = await client.post(f"{tg.base_url}{TOKEN}/sendTelepathy")
    assert wrong.status_code == 401
    assert wrong.json() == {"ok": False, "error_code": 401, "description": "Unauthorized"}
    assert unknown.status_code == 404
    assert unknown.json() == {"ok": False, "error_code": 404, "description": "Not Found"}

    wrong_bot = Bot("999:WRONG", base_url=tg.base_url)
    try:
        with pytest.raises(InvalidToken):
            await wrong_bot.initialize()
    finally:
        await wrong_bot.shutdown()
    async with Bot(TOKEN, base_url=tg.base_url) as client_bot:
        with pytest.raises(EndPointNotFound):
            await client_bot.do_api_request("sendTelepathy")


async def test_json_query_and_multipart_bodies_are_accepted(tg: FakeTelegram) -> None:
    url = f"{tg.base_url}{TOKEN}/sendMessage"
    markup = {"inline_keyboard": [[{"text": "Go", "url": "https://example.org"}]]}
    async with httpx.AsyncClient() as client:
        as_json = await client.post(
            url, json={"chat_id": str(PRIVATE), "text": "j", "reply_markup": markup}
        )
        as_query = await client.get(url, params={"chat_id": str(PRIVATE), "text": "q"})
        as_multipart = await client.post(
            url, data={"chat_id": str(PRIVATE), "text": "m"}, files={"x": ("a.txt", b"abc")}
        )
    assert [r.json()["result"]["message_id"] for r in (as_json, as_query, as_multipart)] == [
        1,
        2,
        3,
    ]
    assert as_json.json()["result"]["reply_markup"] == markup
    assert tg.sent[0].chat_id == PRIVATE  # "1001" is read as the number, as Telegram does
    assert tg.sent[-1].params["x"] == {"filename": "a.txt", "size": 3}
    # A file sendMessage has no parameter for: Telegram ignores it, the spec check names it.
    assert [str(p) for p in tg.spec_violations] == ["sendMessage.x: no such parameter or field"]
    tg.spec_violations.clear()


async def test_every_call_is_checked_against_the_bot_api_description(tg: FakeTelegram) -> None:
    """A misspelt parameter (which Telegram ignores: the option is silently lost), a
    misspelt field of an object at any depth, a value of another type and a missing
    required parameter are each named; the wrong type and the missing one are a 400, as
    Telegram answers them. Leaving ``async with`` with any of them fails the test."""
    url = f"{tg.base_url}{TOKEN}/"
    button = {"text": "Go", "callback_dat": "x"}
    async with httpx.AsyncClient() as client:
        misspelt = await client.post(
            url + "sendMessage", json={"chat_id": PRIVATE, "text": "a", "parse_mod": "HTML"}
        )
        nested = await client.post(
            url + "sendMessage",
            json={"chat_id": PRIVATE, "text": "b", "reply_markup": {"inline_keyboard": [[button]]}},
        )
        wrong_type = await client.post(
            url + "answerCallbackQuery", json={"callback_query_id": "1", "show_alert": "maybe"}
        )
        missing = await client.post(url + "sendMessage", json={"chat_id": PRIVATE})
    assert misspelt.status_code == 200  # as Telegram: the unknown parameter is ignored
    assert nested.status_code == 400, nested.json()  # a button with no action
    assert wrong_type.status_code == 400 and missing.status_code == 400
    assert "answerCallbackQuery.show_alert: must be a Boolean" in wrong_type.json()["description"]
    assert [str(p) for p in tg.spec_violations] == [
        "sendMessage.parse_mod: no such parameter or field",
        "sendMessage.reply_markup.inline_keyboard[0][0].callback_dat: no such parameter or field",
        "answerCallbackQuery.show_alert: must be a Boolean",
        "sendMessage.text: required, and missing",
    ]
    with pytest.raises(AssertionError, match="parse_mod: no such parameter"):
        await tg.__aexit__(None, None, None)
    tg.spec_violations.clear()


async def test_wait_for_counts_and_predicates(tg: FakeTelegram, bot: Bot) -> None:
    async def send_later() -> None:
        await asyncio.sleep(0.05)
        for text in ("one", "two", "three"):
            await bot.send_message(PRIVATE, text)

    task = asyncio.create_task(send_later())
    calls = await tg.wait_for(3, timeout=2)
    await task
    assert [c.params["text"] for c in calls] == ["one", "two", "three"]
    (two,) = await tg.wait_for(lambda c: c.params.get("text") == "two", timeout=0.1)
    assert two.result["message_id"] == 2
    with pytest.raises(TimeoutError, match="1 of 2 expected calls"):
        await tg.wait_for(lambda c: c.params.get("text") == "two", count=2, timeout=0.1)


async def test_limits_private_chat_one_per_second(tg: FakeTelegram, bot: Bot) -> None:
    tg.enforce_limits = True
    await bot.send_message(PRIVATE, "a")
    with pytest.raises(RetryAfter) as raised:
        await bot.send_message(PRIVATE, "b")
    assert raised.value.retry_after == dtm.timedelta(seconds=1)
    await bot.send_message(PRIVATE + 1, "another chat is fine")
    assert [(v.rule, v.chat_id) for v in tg.limit_violations] == [("chat", PRIVATE)]


async def test_limits_group_twenty_per_minute(tg: FakeTelegram, bot: Bot) -> None:
    tg.enforce_limits = True
    tg.chat_interval = 0.0  # isolate the per-group window from the per-chat gap
    for i in range(20):
        await bot.send_message(GROUP, f"m{i}")
    with pytest.raises(RetryAfter) as raised:
        await bot.send_message(GROUP, "one too many")
    assert dtm.timedelta(seconds=59) <= raised.value.retry_after <= dtm.timedelta(seconds=60)
    assert [v.rule for v in tg.limit_violations] == ["group"]
    assert len(tg.messages_to(GROUP)) == 20


async def test_limits_global_rate(tg: FakeTelegram, bot: Bot) -> None:
    tg.enforce_limits = True
    tg.global_rate = 3
    for chat in range(1, 4):
        await bot.send_message(chat, "x")
    with pytest.raises(RetryAfter):
        await bot.send_message(4, "x")
    assert [(v.rule, v.chat_id) for v in tg.limit_violations] == [("global", 4)]
    assert tg.messages_to(4) == []


async def test_stats_are_served_for_a_fake_in_another_process(tg: FakeTelegram, bot: Bot) -> None:
    tg.enforce_limits = True
    tg.global_rate = 2
    tg.fail_next("sendMessage", 500)
    for chat in (1, 2, 3, 4):
        with contextlib.suppress(NetworkError, RetryAfter):  # the 500, then the cap's 429
            await bot.send_message(chat, "x")
    async with httpx.AsyncClient() as client:
        answer = await client.get(f"http://127.0.0.1:{tg.port}/_stats")
    assert answer.status_code == 200
    assert (
        answer.json()
        == tg.stats()
        == {
            "requests": {"getMe": 1, "sendMessage": 4},
            "answers": {"200": 3, "429": 1, "500": 1},  # getMe and two messages
            "delivered": 2,
            "rate_limited": 1,
            "limit_violations": 1,
            "violations_by_rule": {"global": 1},
            "densest_second": 3,  # the two messages and the send the cap refused
            "spec_violations": [],
        }
    )


async def test_application_long_polling_answers_start(tg: FakeTelegram) -> None:
    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        name = update.effective_user.first_name if update.effective_user else "?"
        await update.effective_message.reply_text(f"Hello, {name}!", do_quote=True)

    app = Application.builder().token(TOKEN).base_url(tg.base_url).build()
    app.add_handler(CommandHandler("start", start))
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0.0, timeout=dtm.timedelta(seconds=5))
        tg.message(PRIVATE, "/start", first_name="Mina")
        (reply,) = await tg.wait_for(1, timeout=2)
        await app.updater.stop()
        await app.stop()

    assert reply.result["text"] == "Hello, Mina!"
    assert reply.result["reply_to_message"]["text"] == "/start"
    assert tg.pending_updates == []  # the updater confirmed what it handled
    assert tg.request_count["deleteWebhook"] == 1


# ---------------------------------------------------------------------- forums, migration, paid


async def test_forum_topics_take_messages_until_closed_or_deleted(
    tg: FakeTelegram, bot: Bot
) -> None:
    rl = tg.create_topic(GROUP, "RL")
    robotics = tg.create_topic(GROUP, "Robotics")
    sent = await bot.send_message(GROUP, "to rl", message_thread_id=rl)
    assert sent.message_thread_id == rl and sent.is_topic_message
    general = await bot.send_message(GROUP, "to general")
    assert general.message_thread_id is None and not general.is_topic_message
    assert [m["text"] for m in tg.messages_to(GROUP, thread_id=rl)] == ["to rl"]
    assert [m["text"] for m in tg.messages_to(GROUP, general=True)] == ["to general"]

    tg.close_topic(GROUP, robotics)
    with pytest.raises(BadRequest, match="Topic_closed"):
        await bot.send_message(GROUP, "x", message_thread_id=robotics)
    tg.delete_topic(GROUP, rl)
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_message(GROUP, "x", message_thread_id=rl)
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_message(PRIVATE, "x", message_thread_id=99)


async def test_a_message_in_a_topic_says_so(tg: FakeTelegram, bot: Bot) -> None:
    topic = tg.create_topic(GROUP, "RL")
    tg.message(GROUP, "/settings", thread_id=topic)
    (update,) = await bot.get_updates()
    message = update.message
    assert message is not None and message.chat.is_forum
    assert message.is_topic_message and message.message_thread_id == topic
    with pytest.raises(ValueError, match="no topic"):
        tg.message(GROUP, "/settings", thread_id=topic + 100)


async def test_migration_posts_both_service_messages_and_refuses_the_old_id(
    tg: FakeTelegram, bot: Bot
) -> None:
    tg.migrate_group(-4001, -1004001)
    updates = await bot.get_updates()
    old, new = (u.message for u in updates)
    assert old is not None and new is not None
    assert old.chat.id == -4001 and old.migrate_to_chat_id == -1004001
    assert new.chat.id == -1004001 and new.migrate_from_chat_id == -4001
    with pytest.raises(ChatMigrated) as caught:
        await bot.send_message(-4001, "x")
    assert caught.value.new_chat_id == -1004001


async def test_paid_broadcasts_pass_the_free_global_rate(tg: FakeTelegram, bot: Bot) -> None:
    tg.enforce_limits = True
    tg.global_rate = 5
    for chat_id in range(1, 11):  # ten chats at once, twice the free rate
        await bot.send_message(chat_id, "paid", allow_paid_broadcast=True)
    assert tg.limit_violations == [] and tg.paid_broadcasts == 10
    for chat_id in range(11, 16):
        await bot.send_message(chat_id, "free")
    with pytest.raises(RetryAfter):
        await bot.send_message(16, "free")
    assert [v.rule for v in tg.limit_violations] == ["global"]


async def test_a_callback_query_is_answered_once(tg: FakeTelegram, bot: Bot) -> None:
    update = tg.callback(PRIVATE, 1, "x")
    query_id = update["callback_query"]["id"]
    assert await bot.answer_callback_query(query_id)
    with pytest.raises(BadRequest, match="Query is too old"):
        await bot.answer_callback_query(query_id, text="again")


async def test_webhooks_need_https(tg: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match="https url must be provided"):
        await bot.set_webhook("http://bot.example.org/telegram/webhook")
    assert tg.webhook is None


def _png(width: int, height: int) -> bytes:
    """The signature and IHDR chunk of a PNG of that size: what the fake reads of it."""
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x06\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + len(ihdr).to_bytes(4, "big") + b"IHDR" + ihdr + b"\0" * 4


async def test_send_photo_takes_an_upload_and_answers_a_photo_message(
    tg: FakeTelegram, bot: Bot
) -> None:
    sent = await bot.send_photo(
        PRIVATE,
        photo=_png(640, 480),
        caption="a <b>chart</b>",
        parse_mode="HTML",
        filename="chart.png",
    )
    assert sent.photo[-1].width == 640 and sent.photo[-1].height == 480
    assert sent.caption == "a chart" and sent.caption_entities[0].type == "bold"
    assert tg.messages_to(PRIVATE)[-1]["message_id"] == sent.message_id


@pytest.mark.parametrize(
    ("photo", "caption", "description"),
    [
        (_png(640, 480), "x" * 1025, "message caption is too long"),
        (_png(9000, 1001), None, "PHOTO_INVALID_DIMENSIONS"),
        (_png(2100, 100), None, "PHOTO_INVALID_DIMENSIONS"),
        (b"GIF89a not a photo", None, "IMAGE_PROCESS_FAILED"),
        ("AgAC-unknown-file-id", None, "wrong file identifier/HTTP URL specified"),
    ],
)
async def test_send_photo_refuses_what_the_bot_api_refuses(
    tg: FakeTelegram, bot: Bot, photo: bytes | str, caption: str | None, description: str
) -> None:
    with pytest.raises(BadRequest, match=f"(?i){description}"):
        await bot.send_photo(PRIVATE, photo=photo, caption=caption, filename="chart.png")
    assert tg.photos == []
