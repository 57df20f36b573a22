"""The language toggle under a digest, through the real channels against the fakes, on each
backend: a digest queued as the planner queues it, delivered by the delivery engine, its
toggle pressed as Telegram and Slack send a press.

Telegram edits the digest in place (HTML, or rich with ``rich_message``), or sends the other
language as new messages when the digest is several; Slack posts it ephemerally to the one
who pressed. A forged or stale toggle gets a clear answer and changes nothing."""

from __future__ import annotations

import copy
import datetime as dt
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import payloads
from bot.channels.console.chat import ConsoleSender
from bot.channels.slack import oauth
from bot.channels.telegram.client import close_bot, make_bot
from bot.channels.telegram.sender import TelegramSender
from bot.commands.operator import Admin
from bot.delivery.engine import Delivery
from bot.i18n import LANGUAGES, t
from bot.models import Button, ChatSettings, Page, PageText, Platform
from bot.render import toggle
from bot.render.text import language_note
from bot.rules.filters import parse_filter
from bot.store import chats as chat_store
from bot.store import pages as page_store
from bot.store import queueing
from bot.store import teams as team_store
from bot.store.schema import audit_log, pages
from bot.store.schema import outbox as outbox_table
from bot.util import utcnow
from tests.conftest import Settings
from tests.fakes.slack_api import (
    DEFAULT_TEAM_ID,
    FakeSlack,
    block_actions_body,
    block_actions_payload,
)
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_slack import CHANNEL, USER, Bot, bot, sender, sl
from tests.integration.test_slack import record_of as slack_record
from tests.integration.test_telegram import (
    PRIVATE,
    Running,
    chat_record,
    make_settings,
    reply_to,
    running,
    tg,
)

__all__ = ["bot", "running", "sender", "sl", "tg"]  # the adapters' fixtures

OTHER = 1003  # another private chat, with digests of its own
SOURCE = "wiki"


def _page(key: str, *, en: bool = True, ko: bool = True, tldr: str = "") -> Page:
    texts = []
    if en:
        texts.append(PageText("en", f"Title {key}", tldr or f"Finding of {key}."))
    if ko:
        texts.append(PageText("ko", f"제목 {key}", tldr or f"{key}의 발견."))
    return Page(
        source=SOURCE,
        key=key,
        texts=tuple(texts),
        tags=("rl",),
        url=f"https://wiki.example.org/{key}",
        created=dt.date(2026, 8, 20),
    )


BOTH, EN_ONLY, KO_ONLY = "papers/both", "papers/en-only", "papers/ko-only"


async def seed(engine: AsyncEngine, *found: Page) -> dict[str, int]:
    """Record ``found`` (or the three pages: both languages, English only, Korean only);
    their store ids by key."""
    found = found or (_page(BOTH), _page(EN_ONLY, ko=False), _page(KO_ONLY, en=False))
    async with engine.begin() as conn:
        source = await page_store.source(conn, name=SOURCE, kind="directory")
        await page_store.record_pages(
            conn, source=source, found=list(found), present_keys=None, now=utcnow()
        )
        rows = await conn.execute(select(pages.c.key, pages.c.id))
        return {key: page_id for key, page_id in rows}


async def queue(
    engine: AsyncEngine, chat_pk: int, platform: Platform, payload: payloads.Payload
) -> int:
    """An outbox row as planning writes it; its id."""
    async with engine.begin() as conn:
        row = queueing.row_values(
            chat_pk=chat_pk,
            platform=platform.value,
            kind=payload.kind,
            payload=payload,
            now=utcnow(),
        )
        await queueing.enqueue(conn, [row])
        return int((await conn.execute(select(func.max(outbox_table.c.id)))).scalar_one())


def digest_of(ids: dict[str, int], *keys: str) -> payloads.Digest:
    return payloads.Digest(
        pages=tuple((ids[k], False) for k in keys or (BOTH, EN_ONLY, KO_ONLY)),
        date=dt.date(2026, 8, 21),
    )


async def presses(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(audit_log.c.detail).where(audit_log.c.action == toggle.AUDIT_ACTION)
        )
        return [str(detail) for (detail,) in rows]


# ---------------------------------------------------------------------------- Telegram


@asynccontextmanager
async def telegram_sender(
    tg: FakeTelegram, database_url: str, *, rich: str = "off"
) -> AsyncIterator[TelegramSender]:
    bot = make_bot(make_settings(tg, database_url))
    try:
        yield TelegramSender(bot, rate_per_second=1000, rich=rich)  # type: ignore[arg-type]
    finally:
        await close_bot(bot)


async def deliver_telegram(
    engine: AsyncEngine, tg: FakeTelegram, database_url: str, *, rich: str = "off"
) -> None:
    async with telegram_sender(tg, database_url, rich=rich) as sender:
        await Delivery(engine=engine, senders={Platform.TELEGRAM: sender}).drain()


def last_row(message: dict[str, Any]) -> list[dict[str, Any]]:
    return list(message["reply_markup"]["inline_keyboard"][-1])


async def press_telegram(tg: FakeTelegram, chat: int, message_id: int, data: str) -> None:
    answered = len(tg.calls("answerCallbackQuery"))
    tg.callback(chat, message_id, data)
    await tg.wait_for(lambda c: c.method == "answerCallbackQuery", count=answered + 1)


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_telegram_a_press_edits_the_digest_into_the_other_language_and_back(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, database_url: str, lang: str
) -> None:
    ids = await seed(engine)
    other = {"en": "ko", "ko": "en"}[lang]
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        if lang == "ko":
            await reply_to(tg, PRIVATE, "/lang ko")
        record = await chat_record(engine, PRIVATE)
        row_id = await queue(engine, record.pk, Platform.TELEGRAM, digest_of(ids))
        await deliver_telegram(engine, tg, database_url)

        sent = tg.messages_to(PRIVATE)[-1]
        first_text = sent["text"]
        assert f"Title {BOTH}" in first_text if lang == "en" else f"제목 {BOTH}" in first_text
        assert last_row(sent) == [
            {"text": t(other, "render.toggle"), "callback_data": f"lang:{other}:{row_id}"}
        ]

        await press_telegram(tg, PRIVATE, sent["message_id"], f"lang:{other}:{row_id}")
        [edit] = await tg.wait_for(lambda c: c.method == "editMessageText")
        assert edit.ok and edit.params["message_id"] == sent["message_id"]
        toggled = tg.messages_to(PRIVATE)[-1]
        assert toggled["message_id"] == sent["message_id"]  # in place, nothing new sent
        text = toggled["text"]
        if other == "ko":
            assert f"제목 {BOTH}" in text and f"제목 {KO_ONLY}" in text
            # The English-only page, in English, saying it has no Korean text.
            assert f"Title {EN_ONLY} {language_note('ko', 'en', toggled=True)}" in text
        else:
            assert f"Title {BOTH}" in text and f"Title {EN_ONLY}" in text
            assert f"제목 {KO_ONLY} {language_note('en', 'ko', toggled=True)}" in text
        assert t(other, "render.header", date="", pages="").split("·")[0] in text
        # The toggle now offers the chat's own language back.
        assert last_row(toggled) == [
            {"text": t(lang, "render.toggle"), "callback_data": f"lang:{lang}:{row_id}"}
        ]
        # The 👍/👎 rows above the toggle stay.
        assert (
            toggled["reply_markup"]["inline_keyboard"][:-1]
            == (sent["reply_markup"]["inline_keyboard"][:-1])
        )

        await press_telegram(tg, PRIVATE, sent["message_id"], f"lang:{lang}:{row_id}")
        await tg.wait_for(lambda c: c.method == "editMessageText", count=2)
        back = tg.messages_to(PRIVATE)[-1]
        assert back["message_id"] == sent["message_id"]
        assert last_row(back) == last_row(sent)
        own, foreign = (BOTH, KO_ONLY) if lang == "en" else (BOTH, EN_ONLY)
        prefix = "Title" if lang == "en" else "제목"
        assert f"{prefix} {own}" in back["text"]
        note = language_note(lang, other, toggled=True)
        assert note in back["text"] and f"{foreign}" in back["text"]
    assert all(c.ok for c in tg.calls("editMessageText"))
    assert len(tg.calls("sendMessage", ok=True)) == len(tg.messages_to(PRIVATE))
    assert [json.loads(detail)["lang"] for detail in await presses(engine)] == [other, lang]
    # ``stats`` (and ``trendbot stats --json``) counts them, by chat and language.
    async with engine.connect() as conn:
        figures = await Admin(engine=engine, settings=make_settings(tg, database_url)).figures(conn)
    assert sorted(figures.as_json()["language_toggles"]["presses"], key=str) == sorted(
        [
            {"chat": f"telegram:{PRIVATE}", "lang": other, "presses": 1},
            {"chat": f"telegram:{PRIVATE}", "lang": lang, "presses": 1},
        ],
        key=str,
    )
    assert t("en", "render.toggle") in figures.text("en")


async def test_telegram_a_rich_digest_is_edited_in_place_with_rich_message(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, database_url: str
) -> None:
    ids = await seed(engine)
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        record = await chat_record(engine, PRIVATE)
        row_id = await queue(engine, record.pk, Platform.TELEGRAM, digest_of(ids))
        await deliver_telegram(engine, tg, database_url, rich="on")

        sent = tg.messages_to(PRIVATE)[-1]
        assert "text" not in sent and "rich_message" in sent
        blocks = sent["rich_message"]["blocks"]
        assert blocks[-1] == {
            "type": "buttons",
            "buttons": [{"text": "한국어", "callback_data": f"lang:ko:{row_id}"}],
        }
        count = len(tg.messages_to(PRIVATE))
        await press_telegram(tg, PRIVATE, sent["message_id"], f"lang:ko:{row_id}")
        [edit] = await tg.wait_for(lambda c: c.method == "editMessageText")
        assert edit.ok and "text" not in edit.params and "rich_message" in edit.params
        edited = tg.messages_to(PRIVATE)[-1]
        assert edited["message_id"] == sent["message_id"] and "text" not in edited
        shown = str(edited["rich_message"])
        assert f"제목 {BOTH}" in shown and language_note("ko", "en", toggled=True) in shown
        assert edited["rich_message"]["blocks"][-1]["buttons"] == [
            {"text": "English", "callback_data": f"lang:en:{row_id}"}
        ]
    assert len(tg.messages_to(PRIVATE)) == count  # nothing new sent


async def test_telegram_a_digest_of_several_messages_comes_as_new_messages(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, database_url: str
) -> None:
    long = "Long finding. " * 60
    keys = [f"papers/long-{n}" for n in range(12)]
    ids = await seed(engine, *(_page(k, tldr=long) for k in keys))
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        record = await chat_record(engine, PRIVATE)
        row_id = await queue(engine, record.pk, Platform.TELEGRAM, digest_of(ids, *keys))
        before = len(tg.messages_to(PRIVATE))
        await deliver_telegram(engine, tg, database_url)
        parts = tg.messages_to(PRIVATE)[before:]
        assert len(parts) > 1
        # The toggle is under the last message only.
        assert last_row(parts[-1])[0]["callback_data"] == f"lang:ko:{row_id}"
        assert all("lang:" not in str(p.get("reply_markup", {})) for p in parts[:-1])

        await press_telegram(tg, PRIVATE, parts[-1]["message_id"], f"lang:ko:{row_id}")
        await tg.wait_for(
            lambda c: c.method == "sendMessage" and c.chat_id == PRIVATE,
            count=before + len(parts) + 2,
        )
        new = tg.messages_to(PRIVATE)[before + len(parts) :]
        assert len(new) >= 2 and all("제목 papers/long-" in m["text"] for m in new[:1])
        assert last_row(new[-1]) == [{"text": "English", "callback_data": f"lang:en:{row_id}"}]
    assert tg.calls("editMessageText") == []
    # The digest sent first is as it was.
    assert tg.messages_to(PRIVATE)[before : before + len(parts)] == parts


async def test_telegram_a_forged_or_stale_toggle_is_answered_and_changes_nothing(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, database_url: str
) -> None:
    ids = await seed(engine)
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        await reply_to(tg, OTHER, "/subscribe rl")
        mine = await chat_record(engine, PRIVATE)
        theirs = await chat_record(engine, OTHER)
        row_id = await queue(engine, mine.pk, Platform.TELEGRAM, digest_of(ids))
        their_row = await queue(engine, theirs.pk, Platform.TELEGRAM, digest_of(ids))
        broadcast = await queue(engine, mine.pk, Platform.TELEGRAM, payloads.Broadcast("Hi"))
        await deliver_telegram(engine, tg, database_url)
        digest = next(m for m in tg.messages_to(PRIVATE) if "reply_markup" in m)
        assert last_row(digest)[0]["callback_data"] == f"lang:ko:{row_id}"
        kept = copy.deepcopy(tg.messages_to(PRIVATE))

        gone = t("en", "render.toggle_gone")
        forged = [
            f"lang:ko:{their_row}",  # another chat's digest
            f"lang:ko:{broadcast}",  # a row that is no digest
            "lang:ko:999999999",  # no such row
            "lang:xx:1",
            "lang:ko:",
            "lang:ko:-5",
            "lang:ko:1e3",
            "lang:ko:99999999999999999999999",
        ]
        for n, data in enumerate(forged, start=1):
            await press_telegram(tg, PRIVATE, digest["message_id"], data)
            await tg.wait_for(
                lambda c: c.method == "sendMessage" and c.chat_id == PRIVATE,
                count=len(kept) + n,
            )
            assert tg.messages_to(PRIVATE)[-1]["text"] == gone, data
    assert tg.calls("editMessageText") == []
    assert tg.messages_to(PRIVATE)[: len(kept)] == kept
    assert await presses(engine) == []


# ---------------------------------------------------------------------------- Slack


async def deliver_slack(engine: AsyncEngine, sender: Any) -> None:
    await Delivery(engine=engine, senders={Platform.SLACK: sender}).drain()


def toggle_button(message: dict[str, Any]) -> dict[str, Any]:
    [button] = [
        e
        for b in message["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e.get("action_id") == toggle.ACTION_ID
    ]
    return dict(button)


async def press_slack(
    bot: Bot, sl: FakeSlack, button: dict[str, Any], *, user: str, message: dict[str, Any] | None
) -> None:
    payload = block_actions_payload(
        button["action_id"],
        value=button["value"],
        user_id=user,
        channel_id=CHANNEL,
        response_url=sl.response_url(bot.response_name()),
        button_text=button["text"]["text"],
        message=message,
    )
    assert await bot.post(block_actions_body(payload)) == (200, "")


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_slack_a_press_shows_the_other_language_to_the_presser_only(
    bot: Bot, sender: Any, sl: FakeSlack, engine: AsyncEngine, lang: str
) -> None:
    ids = await seed(engine)
    other = {"en": "ko", "ko": "en"}[lang]
    await bot.command("subscribe rl")
    if lang == "ko":
        await bot.command("lang ko")
    record = await slack_record(engine, CHANNEL)
    assert record is not None
    row_id = await queue(engine, record.pk, Platform.SLACK, digest_of(ids))
    await deliver_slack(engine, sender)
    [posted] = sl.messages_to(CHANNEL)
    button = toggle_button(posted)
    assert button["value"] == f"lang:{other}:{row_id}"
    assert button["text"]["text"] == t(other, "render.toggle")
    before = copy.deepcopy(sl.messages_to(CHANNEL))

    sl.join(CHANNEL, USER, "U2")
    await press_slack(bot, sl, button, user="U2", message=posted)
    [shown] = await sl.wait_for(lambda c: c.method == "chat.postEphemeral")
    assert shown.ok
    [ephemeral] = sl.ephemerals_to("U2")
    assert ephemeral["channel"] == CHANNEL and sl.ephemerals_to(USER) == []
    text = str(ephemeral["blocks"])
    if other == "ko":
        assert f"제목 {BOTH}" in text and language_note("ko", "en", toggled=True) in text
    else:
        assert f"Title {BOTH}" in text and language_note("en", "ko", toggled=True) in text
    back = toggle_button(ephemeral)
    assert back["value"] == f"lang:{lang}:{row_id}"
    assert back["text"]["text"] == t(lang, "render.toggle")
    # Everyone else keeps the digest as it was posted.
    assert sl.messages_to(CHANNEL) == before
    assert sl.calls("chat.update") == []

    # The toggle back, pressed in the ephemeral copy: the chat's language again.
    await press_slack(bot, sl, back, user="U2", message=None)
    await sl.wait_for(lambda c: c.method == "chat.postEphemeral", count=2)
    again = sl.ephemerals_to("U2")[-1]
    assert toggle_button(again)["value"] == f"lang:{other}:{row_id}"
    assert sl.messages_to(CHANNEL) == before
    assert len(await presses(engine)) == 2


async def test_slack_presses_follow_a_channel_that_moves_to_its_workspaces_address(
    bot: Bot, sender: Any, sl: FakeSlack, engine: AsyncEngine
) -> None:
    """A channel of a single-token setup becomes ``TEAM/CHANNEL`` when its workspace
    installs the app: ``stats`` counts its toggle presses under the address it has now."""
    ids = await seed(engine)
    await bot.command("subscribe rl")
    record = await slack_record(engine, CHANNEL)
    assert record is not None
    await queue(engine, record.pk, Platform.SLACK, digest_of(ids))
    await deliver_slack(engine, sender)
    [posted] = sl.messages_to(CHANNEL)
    await press_slack(bot, sl, toggle_button(posted), user=USER, message=posted)
    await sl.wait_for(lambda c: c.method == "chat.postEphemeral")
    moved = await team_store.team_installed(
        engine,
        platform=Platform.SLACK,
        team_id=DEFAULT_TEAM_ID,
        enterprise_id=None,
        address=lambda conversation: oauth.address(DEFAULT_TEAM_ID, conversation),
        codes=frozenset(),
    )
    assert moved == 0  # the chat was active: it moved, and nothing was reactivated
    assert await slack_record(engine, f"{DEFAULT_TEAM_ID}/{CHANNEL}") is not None
    admin = Admin(engine=engine, settings=Settings(_env_file=None))  # type: ignore[call-arg]
    async with engine.connect() as conn:
        figures = await admin.figures(conn)
    assert figures.toggles == [(f"slack:{DEFAULT_TEAM_ID}/{CHANNEL}", "ko", 1)]


async def test_slack_a_forged_toggle_is_answered_to_the_presser_and_changes_nothing(
    bot: Bot, sender: Any, sl: FakeSlack, engine: AsyncEngine
) -> None:
    ids = await seed(engine)
    await bot.command("subscribe rl")
    await bot.command("subscribe rl", channel="C2")
    mine = await slack_record(engine, CHANNEL)
    theirs = await slack_record(engine, "C2")
    assert mine is not None and theirs is not None
    row_id = await queue(engine, mine.pk, Platform.SLACK, digest_of(ids))
    their_row = await queue(engine, theirs.pk, Platform.SLACK, digest_of(ids))
    await deliver_slack(engine, sender)
    [posted] = sl.messages_to(CHANNEL)
    button = toggle_button(posted)
    assert button["value"] == f"lang:ko:{row_id}"
    before = copy.deepcopy(sl.messages_to(CHANNEL))
    sl.join(CHANNEL, USER)

    for data in (f"lang:ko:{their_row}", "lang:ko:0", "lang:zz:1", "lang:ko:x"):
        name = bot.response_name()
        payload = block_actions_payload(
            toggle.ACTION_ID,
            value=data,
            user_id=USER,
            channel_id=CHANNEL,
            response_url=sl.response_url(name),
            button_text="한국어",
            message=posted,
        )
        assert await bot.post(block_actions_body(payload)) == (200, "")
        answer = (await sl.wait_for_response(name))[-1]
        assert answer["text"] == t("en", "render.toggle_gone"), data
        assert answer.get("replace_original") is not True
    assert sl.ephemerals == []
    assert sl.messages_to(CHANNEL) == before
    assert await presses(engine) == []


# ----------------------------------------------------------------------------- Console


async def test_console_a_digest_in_both_languages_carries_no_toggle(engine: AsyncEngine) -> None:
    """The console prints a digest once and edits nothing: its renderer puts no language
    toggle under a digest (the chat's ``/lang`` sets its language), so the digest has the
    vote buttons alone, where Telegram's has the toggle too (the tests above)."""
    ids = await seed(engine)
    async with engine.begin() as conn:
        record = await chat_store.ensure(
            conn,
            defaults=ChatSettings(
                platform=Platform.CONSOLE, chat_id="local", filter=parse_filter("rl")
            ),
        )
    await queue(engine, record.pk, Platform.CONSOLE, digest_of(ids))
    out = io.StringIO()
    sender = ConsoleSender(out=out)
    pressed: list[Button] = []
    sender.on_buttons = pressed.extend
    await Delivery(engine=engine, senders={Platform.CONSOLE: sender}).drain()
    assert f"Title {BOTH}" in out.getvalue()
    assert pressed  # the votes
    assert not [b for b in pressed if b.action.startswith("lang:")]
    assert not [b for b in pressed for lang in LANGUAGES if b.label == t(lang, "render.toggle")]
