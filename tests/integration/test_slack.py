"""The Slack adapter: Bolt and slack-sdk unchanged, over real HTTP, against FakeSlack as the
Web API and the response_url receiver, with a real database on each backend.

Slash commands and button presses are posted to ``POST /slack/events`` of the bot's own web
server with real v0 signatures, as Slack would post them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import metrics, render
from bot.channels.slack import client as slack_channel
from bot.channels.slack.channel import SlackChannel
from bot.channels.slack.client import make_client
from bot.channels.slack.payload import SlackPayload
from bot.channels.slack.payload import payload as slack_payload
from bot.channels.slack.sender import SlackSender
from bot.channels.slack.spec import EVENTS
from bot.commands import CommandCore, Defaults, describe_filter
from bot.delivery.engine import Delivery
from bot.delivery.sender import Attempt
from bot.errors import (
    ChatGone,
    ConfigError,
    DeliveryError,
    NotInChannel,
    OutcomeUnknown,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)
from bot.i18n import t, tn
from bot.models import (
    ChatKind,
    ChatSettings,
    ChatState,
    Digest,
    Filter,
    Outgoing,
    Page,
    PageText,
    Platform,
    Reply,
)
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.rules.digest import build_digest
from bot.store import chats as chat_store
from bot.store import pages as page_store
from bot.store.chats import ChatRecord
from bot.store.schema import chats
from bot.store.schema import outbox as outbox_table
from bot.util import utcnow
from tests.cli import run_cli_async
from tests.conftest import Settings
from tests.fakes.slack_api import (
    DEFAULT_TOKEN,
    FakeSlack,
    block_actions_body,
    block_actions_payload,
    event_body,
    shown_for_command,
    signed_headers,
    slash_command_body,
    url_verification_body,
)
from tests.integration.test_planner import World, started
from tests.run_env import slack_env
from tests.signing import SigningTimes
from tests.waiting import wait_until

TOKEN = DEFAULT_TOKEN
APP_TOKEN = "xapp-1-A1-0123456789-abcdef"
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
COMMAND = "/trend"
P = f"{COMMAND} "  # how help texts spell commands on Slack
CHANNEL = "C1"
USER = "U1"
BOT_NAME = "trendbot"  # FakeSlack's auth.test user


@pytest.fixture
async def sl() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(token=TOKEN) as server:
        yield server


def make_settings(sl: FakeSlack, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": TOKEN,
        "slack_signing_secret": SECRET,
        "slack_api_base_url": sl.base_url,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


class Digests:
    """The planner's port: ``digest`` queues two pages."""

    def __init__(self) -> None:
        self.chats: list[int] = []

    async def send_now(self, chat_pk: int) -> int:
        self.chats.append(chat_pk)
        return 2


@dataclass
class Answer:
    """What the caller saw: the acknowledgement's body, or the post to the response_url."""

    via: str  # "ack" or "response_url"
    body: dict[str, Any]

    @property
    def text(self) -> str:
        return unescape(str(self.body["text"]))

    @property
    def blocks(self) -> list[dict[str, Any]]:
        return list(self.body.get("blocks") or [])


@dataclass
class Bot:
    sl: FakeSlack
    engine: AsyncEngine
    channel: SlackChannel
    url: str
    http: aiohttp.ClientSession
    digests: Digests
    names: itertools.count[int] = field(default_factory=itertools.count)

    def response_name(self) -> str:
        return f"r{next(self.names)}"

    async def post(self, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, str]:
        if headers is None:
            headers = signed_headers(SECRET, body)
        async with self.http.post(self.url, data=body, headers=headers) as response:
            return response.status, await response.text()

    async def command(
        self, text: str, *, channel: str = CHANNEL, user: str = USER, **fields: Any
    ) -> Answer:
        """``/trend text`` typed by ``user`` in ``channel``; what they were shown."""
        via, body = await shown_for_command(
            self.sl,
            self.post,
            text,
            response_name=self.response_name(),
            user_id=user,
            channel_id=channel,
            **fields,
        )
        return Answer(via, body)

    async def press(
        self, button: dict[str, Any], *, channel: str = CHANNEL, user: str = USER
    ) -> dict[str, Any]:
        """Press a button of an ephemeral reply; the body posted to the response_url."""
        name = self.response_name()
        payload = block_actions_payload(
            button["action_id"],
            value=button["value"],
            user_id=user,
            channel_id=channel,
            response_url=self.sl.response_url(name),
            button_text=button["text"]["text"],
        )
        status, ack = await self.post(block_actions_body(payload))
        assert (status, ack) == (200, "")
        return (await self.sl.wait_for_response(name))[-1]


@asynccontextmanager
async def running(
    sl: FakeSlack,
    engine: AsyncEngine,
    *,
    core: CommandCore | None = None,
    auth: slack_channel.SlackAuth | None = None,
    ack_budget: float = slack_channel.ACK_BUDGET_SECONDS,
    **overrides: Any,
) -> AsyncIterator[Bot]:
    settings = make_settings(sl, **overrides)
    digests = Digests()
    defaults = Defaults(
        digest_time=settings.digest_time,
        timezone=settings.default_timezone,
        lang=settings.default_language,
    )
    core = core or CommandCore(engine=engine, defaults=defaults, digests=digests)
    channel = SlackChannel(
        settings=settings,
        core=core,
        client=make_client(settings),
        auth=auth,
        ack_budget=ack_budget,
    )
    hooks = WebHooks(routes={EVENTS: channel.handle_request})
    async with served(channel, engine, hooks) as (base, http):
        assert channel.running
        yield Bot(sl, engine, channel, f"{base}/slack/events", http, digests)


@asynccontextmanager
async def served(
    channel: SlackChannel,
    engine: AsyncEngine,
    hooks: WebHooks,
    *,
    cookie_jar: aiohttp.abc.AbstractCookieJar | None = None,
) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    """``channel`` started and ``hooks`` served over HTTP on a free local port: the server's
    base URL and a client session; all three stopped afterwards."""
    await channel.start()
    app = make_app(engine=engine, hooks=hooks)
    runner, port = await start_web(app, host="127.0.0.1", port=0)
    http = aiohttp.ClientSession(cookie_jar=cookie_jar)
    try:
        yield f"http://127.0.0.1:{port}", http
    finally:
        await http.close()
        await channel.stop()
        await runner.cleanup()


@pytest.fixture
async def bot(sl: FakeSlack, engine: AsyncEngine) -> AsyncIterator[Bot]:
    async with running(sl, engine) as b:
        yield b


def unescape(s: str) -> str:
    return s.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def block_texts(blocks: list[dict[str, Any]]) -> list[str]:
    """The texts of blocks, a container's title and children included."""
    texts: list[str] = []
    for block in blocks:
        if isinstance(block.get("title"), dict):
            texts.append(block["title"]["text"])
        texts += block_texts(block.get("child_blocks") or [])
        if isinstance(block.get("text"), dict):
            texts.append(block["text"]["text"])
        for element in block.get("elements", []):
            inner = element.get("text")
            texts.append(inner["text"] if isinstance(inner, dict) else str(inner or ""))
    return texts


def buttons(answer: Answer | dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The buttons of a reply by value (``tog:rl``)."""
    blocks = answer.blocks if isinstance(answer, Answer) else answer.get("blocks") or []
    return {
        element["value"]: element
        for block in blocks
        if block["type"] == "actions"
        for element in block["elements"]
    }


def make_page(i: int, tags: tuple[str, ...], *, tldr: str = "tl;dr") -> Page:
    return Page(
        source="wiki",
        key=f"papers/2026/p{i}",
        texts=(PageText("en", f"Paper {i}", tldr), PageText("ko", f"논문 {i}", "요약")),
        tags=tags,
        url=f"https://wiki.example.org/p{i}",
        created=dt.date(2026, 8, 1) + dt.timedelta(days=i % 28),
    )


def rl_digest(pages: list[Page]) -> Digest:
    """The English digest of ``pages`` (all new) for a chat following rl, on 2026-08-30."""
    digest = build_digest(
        lang="en",
        filter=Filter(any_of=frozenset({"rl"})),
        candidates=[(page, False) for page in pages],
        today=dt.date(2026, 8, 30),
    )
    assert digest is not None
    return digest


async def seed_pages(engine: AsyncEngine) -> None:
    pages = [
        make_page(i, tags) for i, tags in enumerate([("rl", "reasoning"), ("rl",), ("robotics",)])
    ]
    async with engine.begin() as conn:
        source = await page_store.source(conn, name="wiki", kind="directory")
        await page_store.record_pages(
            conn, source=source, found=pages, present_keys=None, now=page_store.utcnow()
        )


async def record_of(engine: AsyncEngine, chat_id: str) -> ChatRecord | None:
    async with engine.connect() as conn:
        return await chat_store.get(conn, platform=Platform.SLACK, chat_id=chat_id)


async def all_chats(engine: AsyncEngine) -> list[ChatRecord]:
    async with engine.connect() as conn:
        return await chat_store.listing(conn)


# ---------------------------------------------------------------------- commands


async def test_no_text_is_help_answered_ephemerally_in_the_ack(bot: Bot) -> None:
    answer = await bot.command("")

    assert answer.via == "ack"
    assert answer.body["response_type"] == "ephemeral"
    assert t("en", "cmd.greeting") in answer.text
    assert "/trend subscribe TAGS" in answer.text
    assert any("/trend subscribe TAGS" in unescape(s) for s in block_texts(answer.blocks))
    assert bot.sl.calls("chat.postMessage") == []  # nothing in the channel for everyone


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_every_command_answers_in_the_chats_language(
    bot: Bot, engine: AsyncEngine, lang: str
) -> None:
    await seed_pages(engine)
    if lang == "ko":
        answer = await bot.command("lang ko")
        assert answer.text == t("ko", "lang.set")

    async def says(text: str, expected: str, *, via: str = "ack") -> Answer:
        answer = await bot.command(text)
        assert expected in answer.text, (text, answer.text)
        assert answer.via == via, text
        assert answer.body["response_type"] == "ephemeral"
        return answer

    await says("help", t(lang, "cmd.greeting"))
    await says("start", t(lang, "cmd.help", p=P).splitlines()[0])
    rl_only = Filter(any_of=frozenset({"rl"}), excluded=frozenset({"robotics"}))
    await says(
        "subscribe rl -robotics",
        t(lang, "filter.now", filter=describe_filter(rl_only, lang=lang, prefix=P)),
    )
    await says("tags", "rl (2)", via="response_url")
    await says("settings", t(lang, "cmd.mode.daily"))
    await says("mode instant", t(lang, "mode.set.instant", time="09:00", timezone="UTC"))
    await says("time 08:30", t(lang, "time.set", time="08:30", timezone="UTC"))
    await says("timezone asia/seoul", t(lang, "timezone.set", timezone="Asia/Seoul", time="08:30"))
    await says("pause", t(lang, "pause.done", p=P))
    await says("digest", t(lang, "digest.paused", p=P), via="response_url")
    await says("resume", t(lang, "resume.done"))
    latest = await says("latest 2", tn(lang, "latest.header", 2), via="response_url")
    assert any("Paper 1" in s or "논문 1" in s for s in block_texts(latest.blocks))
    await says("digest", tn(lang, "digest.queued", 2), via="response_url")
    rl = describe_filter(Filter(any_of=frozenset({"rl"})), lang=lang, prefix=P)
    await says("unsubscribe robotics", t(lang, "filter.now", filter=rl))
    await says("unsubscribe all", t(lang, "unsubscribe.all", p=P))
    await says("stats", t(lang, "cmd.admins_only"))
    await says("frobnicate", t(lang, "cmd.unknown", command="frobnicate", p=P))

    record = await record_of(engine, CHANNEL)
    assert record is not None
    assert (record.chat.lang, record.chat.timezone, record.chat.mode.value) == (
        lang, "Asia/Seoul", "instant",
    )  # fmt: skip
    assert record.chat.digest_time == dt.time(8, 30)
    assert bot.digests.chats == [record.pk]
    assert bot.sl.calls("chat.postMessage") == []


async def test_channel_and_direct_message_are_two_chats(bot: Bot, engine: AsyncEngine) -> None:
    await bot.command("subscribe rl", channel="C1", channel_name="research")
    dm = bot.sl.im_channel(USER)
    await bot.command("subscribe robotics", channel=dm)
    # Anyone in a channel may change its subscription.
    await bot.command("subscribe reasoning", channel="C1", user="U2", channel_name="research")

    # The DM with the app is the user's chat, delivered to the user's id (App Home).
    channel, direct = await record_of(engine, "C1"), await record_of(engine, USER)
    assert channel is not None and direct is not None
    assert channel.chat.kind == ChatKind.GROUP
    assert channel.chat.filter.any_of == {"rl", "reasoning"}
    assert direct.chat.kind == ChatKind.PRIVATE
    assert direct.chat.filter.any_of == {"robotics"}
    assert len(await all_chats(engine)) == 2
    sender = SlackSender(make_client(make_settings(bot.sl)), per_channel_rate=1.0)
    await sender.send(direct.chat.chat_id, Outgoing(text="digest"), thread=None)
    assert [m["text"] for m in bot.sl.messages_to(dm)] == ["digest"]


async def test_a_dm_chat_kept_under_its_conversation_id_moves_to_the_user(
    bot: Bot, engine: AsyncEngine
) -> None:
    dm = bot.sl.im_channel("U7")
    async with engine.begin() as conn:  # as an earlier version stored it
        await chat_store.ensure(
            conn, defaults=ChatSettings(platform=Platform.SLACK, chat_id=dm, kind=ChatKind.PRIVATE)
        )
    await bot.command("subscribe rl", channel=dm, user="U7")
    await bot.command("subscribe reasoning", channel=dm, user="U7")

    assert await record_of(engine, dm) is None
    moved = await record_of(engine, "U7")
    assert moved is not None and moved.chat.filter.any_of == {"rl", "reasoning"}
    assert len(await all_chats(engine)) == 1


@pytest.mark.parametrize(
    ("conversation", "name"),
    [
        ({"channel_id": "D5", "is_member": False}, "directmessage"),  # between two people
        ({"channel_id": "G7", "is_mpim": True, "is_member": False}, "mpdm-u1--u2--u3-1"),
    ],
)
async def test_a_dm_between_people_or_a_group_dm_is_refused_saying_where_it_works(
    bot: Bot, engine: AsyncEngine, conversation: dict[str, Any], name: str
) -> None:
    conversation = dict(conversation)
    channel_id = conversation.pop("channel_id")
    bot.sl.add_channel(channel_id, **conversation)

    answer = await bot.command("subscribe rl", channel=channel_id, channel_name=name)

    assert answer.via == "ack" and answer.body["response_type"] == "ephemeral"
    assert answer.text == t("en", "slack.where_subscriptions_work", p=P)
    assert await all_chats(engine) == []
    assert bot.sl.calls("chat.postMessage") == []


async def test_a_private_channel_without_the_bot_keeps_a_subscription_until_invited(
    bot: Bot, engine: AsyncEngine
) -> None:
    bot.sl.add_channel("G5", name="lab", is_private=True, is_member=False)
    bot.sl.user_locales["U9"] = "ko-KR"

    settings = await bot.command("settings", channel="G5", channel_name="privategroup")
    assert settings.text == t("en", "slack.invite_first", bot=BOT_NAME, p=P)
    assert await all_chats(engine) == []

    # A subscription asked for there is kept, said so, and waits for the invitation.
    answer = await bot.command("subscribe rl", channel="G5", channel_name="privategroup")
    assert t("en", "slack.starts_when_invited", bot=BOT_NAME, days=7) in answer.text
    assert answer.text.startswith(t("en", "filter.now", filter="")[:8])
    waiting = await state_of(engine, "G5", ChatState.INACTIVE)
    assert waiting.chat.filter.any_of == {"rl"} and waiting.inactive_code == "awaiting_invite"
    bot.sl.add_channel("G6", name="lab-ko", is_private=True, is_member=False)
    korean = await bot.command("subscribe rl", channel="G6", channel_name="privategroup", user="U9")
    assert t("ko", "slack.starts_when_invited", bot=BOT_NAME, days=7) in korean.text
    assert bot.sl.calls("chat.postMessage") == []

    # /invite: Slack sends member_joined_channel for the bot user (fields as in
    # https://api.slack.com/events/member_joined_channel); the subscription starts.
    bot.sl.channels["G5"]["is_member"] = True
    joined = {
        "type": "member_joined_channel",
        "user": bot.sl.bot_user_id,
        "channel": "G5",
        "channel_type": "G",
        "team": "T1",
        "inviter": "U1",
    }
    await post_event(bot, joined, event_id="EvJoin1")
    record = await state_of(engine, "G5", ChatState.ACTIVE)
    assert record.chat.kind == ChatKind.GROUP and record.chat.filter.any_of == {"rl"}

    # A request older than a week is not started by a late invitation.
    async with engine.begin() as conn:
        await conn.execute(
            update(chats)
            .where(chats.c.chat_id == "G6")
            .values(updated_at=utcnow() - dt.timedelta(days=8))
        )
    await post_event(bot, dict(joined, channel="G6"), event_id="EvJoin2")
    await asyncio.sleep(0.3)  # the event is acted on after its acknowledgement: nothing changes
    assert (await state_of(engine, "G6", ChatState.INACTIVE)).inactive_code == "awaiting_invite"


async def test_without_a_read_scope_the_conversation_id_decides_and_the_scope_is_named(
    bot: Bot, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    bot.sl.scopes -= {"channels:read", "im:read"}
    with caplog.at_level(logging.WARNING, logger="bot.channels.slack"):
        await bot.command("subscribe rl", channel="C8")
        await bot.command("subscribe rl", channel="C9")
        await bot.command("subscribe rl", channel=bot.sl.im_channel("U4"), user="U4")
    assert {r.chat.chat_id for r in await all_chats(engine)} == {"C8", "C9", "U4"}
    warnings = [r.getMessage() for r in caplog.records if "scope" in r.getMessage()]
    assert len(warnings) == 2  # once per scope
    assert any("channels:read" in w for w in warnings) and any("im:read" in w for w in warnings)


async def test_new_chat_takes_a_korean_users_locale(bot: Bot, engine: AsyncEngine) -> None:
    bot.sl.user_locales["U7"] = "ko-KR"
    dm = bot.sl.im_channel("U7")

    first = await bot.command("", channel=dm, user="U7")
    second = await bot.command("settings", channel=dm, user="U7")
    english = await bot.command("", channel=bot.sl.im_channel("U8"), user="U8")

    assert t("ko", "cmd.greeting") in first.text
    assert t("ko", "cmd.mode.daily") in second.text
    assert t("en", "cmd.greeting") in english.text
    # One lookup per new chat, none for a chat the bot knows.
    assert [c.params["user"] for c in bot.sl.calls("users.info")] == ["U7", "U8"]


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_new_chat_takes_the_users_time_zone_too(
    bot: Bot, engine: AsyncEngine, lang: str
) -> None:
    """Alice in Asia/Seoul gets her digest at 09:00 in Seoul, not 09:00 UTC: a new chat
    takes the zone users.info gives, as it takes the language; a zone a chat may not use
    (``Factory``) leaves the default."""
    bot.sl.user_locales["U7"] = "ko-KR" if lang == "ko" else "en-US"
    bot.sl.user_timezones["U7"] = "Asia/Seoul"
    bot.sl.user_timezones["U8"] = "Factory"
    await bot.command("settings", channel=bot.sl.im_channel("U7"), user="U7")
    await bot.command("settings", channel=bot.sl.im_channel("U8"), user="U8")
    alice, other = await record_of(engine, "U7"), await record_of(engine, "U8")
    assert alice is not None and alice.chat.timezone == "Asia/Seoul"
    assert alice.chat.lang == lang
    assert other is not None and other.chat.timezone == "UTC"


async def test_missing_users_read_scope_leaves_the_default_language(
    sl: FakeSlack, engine: AsyncEngine
) -> None:
    sl.user_errors["U7"] = "missing_scope"
    async with running(sl, engine, default_language="ko") as bot:
        answer = await bot.command("", channel="D7", user="U7")
    assert t("ko", "cmd.greeting") in answer.text


async def test_subscribe_without_tags_offers_toggle_buttons_that_update_in_place(
    bot: Bot, engine: AsyncEngine
) -> None:
    await seed_pages(engine)

    picker = await bot.command("subscribe")
    assert picker.via == "ack"
    assert t("en", "subscribe.pick") in picker.text
    offered = buttons(picker)
    assert set(offered) == {"tog:rl", "tog:reasoning", "tog:robotics"}
    assert all(b["action_id"].startswith("trend:") for b in offered.values())

    pressed = await bot.press(offered["tog:rl"])
    assert pressed["replace_original"] is True
    assert pressed["response_type"] == "ephemeral"
    assert buttons(pressed)["tog:rl"]["text"]["text"].startswith("✅ rl")
    record = await record_of(engine, CHANNEL)
    assert record is not None and record.chat.filter.any_of == {"rl"}

    again = await bot.press(buttons(pressed)["tog:rl"])
    assert not buttons(again)["tog:rl"]["text"]["text"].startswith("✅")
    record = await record_of(engine, CHANNEL)
    assert record is not None and record.chat.filter.is_empty


async def test_two_presses_at_once_both_apply(bot: Bot, engine: AsyncEngine) -> None:
    await seed_pages(engine)
    offered = buttons(await bot.command("subscribe"))

    await asyncio.gather(bot.press(offered["tog:rl"]), bot.press(offered["tog:reasoning"]))

    record = await record_of(engine, CHANNEL)
    assert record is not None and record.chat.filter.any_of == {"rl", "reasoning"}


async def test_latest_is_acknowledged_empty_and_answered_through_response_url(
    bot: Bot, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    await bot.command("subscribe rl")
    name = bot.response_name()
    body = slash_command_body(COMMAND, "latest", response_url=bot.sl.response_url(name))

    status, ack = await bot.post(body)
    [answer] = await bot.sl.wait_for_response(name)

    assert (status, ack) == (200, "")
    assert answer["response_type"] == "ephemeral"
    assert "replace_original" not in answer or answer["replace_original"] is False
    assert unescape(answer["text"]) == tn("en", "latest.header", 2)
    titles = " ".join(block_texts(answer["blocks"]))
    assert "Paper 0" in titles and "Paper 1" in titles and "Paper 2" not in titles


async def test_a_fast_command_over_the_ack_budget_goes_through_response_url(
    sl: FakeSlack, engine: AsyncEngine
) -> None:
    async with running(sl, engine, ack_budget=0.0) as bot:
        answer = await bot.command("settings")
    assert answer.via == "response_url"
    assert t("en", "cmd.mode.daily") in answer.text


async def test_user_text_is_escaped_for_mrkdwn(bot: Bot, engine: AsyncEngine) -> None:
    for typed in ("subscribe <b>&", "subscribe &lt;b&gt;&amp;"):  # raw, and as Slack escapes it
        answer = await bot.command(typed)
        assert "&lt;b&gt;&amp;" in answer.body["text"]
        assert "<b>" not in answer.body["text"]
        sections = [s for s in block_texts(answer.blocks) if "&lt;b&gt;&amp;" in s]
        assert sections and not any("<b>" in s for s in block_texts(answer.blocks))
    record = await record_of(engine, CHANNEL)
    assert record is not None and record.chat.filter.is_empty  # nothing was applied


class BrokenCore(CommandCore):
    async def handle(self, caller: Any, text: str, *, prefix: str = "/") -> Reply:
        raise RuntimeError(f"database exploded near {TOKEN}")


async def test_a_failing_command_is_logged_and_answered_with_the_error_text(
    sl: FakeSlack, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    core = BrokenCore(engine=engine, defaults=Defaults())
    with caplog.at_level(logging.ERROR, logger="bot.channels.slack"):
        async with running(sl, engine, core=core) as bot:
            answer = await bot.command("settings")

    assert answer.via == "ack"
    assert answer.text == t("en", "cmd.error")
    assert any("slack: command failed" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------- request verification


async def test_unsigned_badly_signed_and_stale_requests_get_401_and_change_nothing(
    bot: Bot, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    name = bot.response_name()
    body = slash_command_body(COMMAND, "subscribe rl", response_url=bot.sl.response_url(name))
    now = int(time.time())
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    press = block_actions_body(
        block_actions_payload("trend:0", value="tog:rl", response_url=bot.sl.response_url(name))
    )

    refused = [
        await bot.post(body, form),  # unsigned
        await bot.post(body, {**signed_headers(SECRET, body), "X-Slack-Signature": "v0=00"}),
        await bot.post(body, signed_headers("another-secret", body)),
        await bot.post(body + b"&x=1", signed_headers(SECRET, body)),  # tampered body
        await bot.post(body, signed_headers(SECRET, body, timestamp=now - 6 * 60)),  # stale
        await bot.post(body, signed_headers(SECRET, body, timestamp=now + 6 * 60)),
        await bot.post(press, signed_headers(SECRET, press, timestamp=now - 6 * 60)),
        await bot.post(press, form),
    ]

    assert [status for status, _ in refused] == [401] * len(refused)
    assert await all_chats(engine) == []
    assert bot.sl.calls("response_url") == []
    # The same request, properly signed, is served.
    assert (await bot.post(body))[0] == 200
    record = await record_of(engine, CHANNEL)
    assert record is not None and record.chat.filter.any_of == {"rl"}


async def test_refused_requests_fill_no_log(bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    """Anyone may post to /slack/events: forty refusals in a row are one WARNING line,
    with the count (the next line comes a minute later at the earliest)."""
    name = bot.response_name()
    body = slash_command_body(COMMAND, "subscribe rl", response_url=bot.sl.response_url(name))
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with caplog.at_level(logging.INFO):
        for n in range(40):
            headers = signed_headers("another-secret", body) if n % 2 else form
            assert (await bot.post(body, headers))[0] == 401
    refused = [r.getMessage() for r in caplog.records if "refused (401)" in r.getMessage()]
    assert len(refused) == 1, refused
    assert refused[0].startswith("slack: requests refused (401): ")
    assert refused[0].endswith("(1 since the last such line)")


MALFORMED_BODIES = {
    "broken payload JSON": (b"payload=%7Bnot", "application/x-www-form-urlencoded"),
    "payload JSON array": (b"payload=[1]", "application/x-www-form-urlencoded"),
    "JSON array": (b"[1, 2, 3]", "application/json"),
    "not UTF-8": (b"\xff\xfe\xfa payload=\xc3\x28", "application/x-www-form-urlencoded"),
    "not UTF-8 JSON": (b'{"type": "\xff"}', "application/json"),
    "deep JSON": (b"[" * 100_000 + b"]" * 100_000, "application/json"),
    "deep object": (b'{"a":' * 200 + b"1" + b"}" * 200, "application/json"),
    "deep payload": (
        b"payload=" + b"%5B" * 50_000 + b"%5D" * 50_000,
        "application/x-www-form-urlencoded",
    ),
    "huge number": (b'{"n": ' + b"9" * 5000 + b"}", "application/json"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_BODIES))
async def test_a_malformed_body_is_401_unsigned_and_400_signed_with_one_warning_and_no_change(
    bot: Bot, engine: AsyncEngine, caplog: pytest.LogCaptureFixture, case: str
) -> None:
    body, content_type = MALFORMED_BODIES[case]
    with caplog.at_level(logging.DEBUG):
        unsigned = await bot.post(body, {"Content-Type": content_type})
        signed = await bot.post(body, signed_headers(SECRET, body, content_type=content_type))

    assert (unsigned[0], signed[0]) == (401, 400)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage().split(":")[0] for r in warnings] == ["slack", "slack"], warnings
    assert all(r.exc_info is None and "Traceback" not in r.getMessage() for r in caplog.records)
    assert await all_chats(engine) == []
    assert bot.sl.calls("response_url") == [] and bot.sl.calls("chat.postMessage") == []


# Signed JSON objects of shapes Slack never sends: Bolt reads these fields unchecked.
ODD_SHAPES = [
    {"type": "event_callback", "event": "x", "event_id": "E1"},
    {"type": "event_callback", "event": [1], "event_id": ["E"]},
    {"type": "block_actions", "actions": "x"},
    {"type": "event_callback", "event": {"type": "channel_unarchive", "channel": 5}},
    {"type": "view_submission", "view": "x"},
    {"type": "block_actions", "actions": []},
    {"type": "block_actions", "actions": [{}], "container": {}},
]


@pytest.mark.parametrize("shape", range(len(ODD_SHAPES)))
async def test_a_signed_body_of_a_shape_slack_never_sends_is_400_without_a_traceback(
    bot: Bot, engine: AsyncEngine, caplog: pytest.LogCaptureFixture, shape: int
) -> None:
    body = json.dumps(ODD_SHAPES[shape]).encode()
    with caplog.at_level(logging.DEBUG):
        signed = await bot.post(body, signed_headers(SECRET, body, content_type="application/json"))
        unsigned = await bot.post(body, {"Content-Type": "application/json"})
    assert (signed[0], unsigned[0]) == (400, 401)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2 and all(r.name == "bot.channels.slack" for r in warnings), warnings
    assert all(r.exc_info is None for r in caplog.records)
    assert await all_chats(engine) == []


@pytest.mark.parametrize("timestamp", ["abc", "", "-1", "1e9", "１２３", "9" * 40, " 1700000000"])
async def test_a_malformed_timestamp_header_is_401(
    bot: Bot, engine: AsyncEngine, caplog: pytest.LogCaptureFixture, timestamp: str
) -> None:
    body = slash_command_body(COMMAND, "subscribe rl", response_url=bot.sl.response_url("r"))
    headers = {**signed_headers(SECRET, body), "X-Slack-Request-Timestamp": timestamp}
    with caplog.at_level(logging.WARNING):
        status, _ = await bot.post(body, headers)
    assert status == 401
    assert len(caplog.records) == 1 and caplog.records[0].exc_info is None
    assert await all_chats(engine) == []


async def test_a_replayed_request_is_answered_but_acted_on_once(
    bot: Bot, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    body = slash_command_body(COMMAND, "subscribe rl", response_url=bot.sl.response_url("r1"))
    now = int(time.time())
    headers = signed_headers(SECRET, body, timestamp=now)
    first = await bot.post(body, headers)
    async with engine.begin() as conn:  # someone changes the filter in between
        record = await chat_store.get(conn, platform=Platform.SLACK, chat_id=CHANNEL)
        assert record is not None
        await chat_store.save(
            conn, before=record, after=replace(record.chat, filter=Filter(any_of=frozenset()))
        )
    replays = [await bot.post(body, headers) for _ in range(3)]

    assert first[0] == 200 and "rl" in first[1]
    assert replays == [(200, "")] * 3
    record = await record_of(engine, CHANNEL)
    assert record is not None and record.chat.filter.is_empty  # the replays changed nothing
    # The same command typed again is a new request, with its own signature: served.
    later = signed_headers(SECRET, body, timestamp=now - 1)
    assert (await bot.post(body, later))[0] == 200
    record = await record_of(engine, CHANNEL)
    assert record is not None and record.chat.filter.any_of == {"rl"}


@hypothesis_settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.binary(max_size=300),
    content_type=st.sampled_from(
        ["application/json", "application/x-www-form-urlencoded", "text/plain", ""]
    ),
)
async def test_any_signed_body_gets_a_clear_answer_never_500(
    bot: Bot, body: bytes, content_type: str
) -> None:
    status, _ = await bot.post(body, signed_headers(SECRET, body, content_type=content_type))
    assert status in (200, 400, 404)


FIELD_NAMES = st.sampled_from(["action_id", "block_id", "value", "type", "id", "channel", "user"])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(FIELD_NAMES | st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
SIGNED_AT = SigningTimes()
ROUTED_KEYS = st.sampled_from(
    ["type", "event", "actions", "view", "team", "user", "channel", "enterprise", "command",
     "event_id", "authorizations", "container", "message", "callback_id", "team_id"]
)  # fmt: skip


@hypothesis_settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.dictionaries(ROUTED_KEYS, JSON_VALUES, max_size=4),
    kind=st.sampled_from(["event_callback", "block_actions", "view_submission", None]),
    as_form=st.booleans(),
)
async def test_any_signed_object_of_routing_fields_is_answered_without_500(
    bot: Bot,
    caplog: pytest.LogCaptureFixture,
    body: dict[str, Any],
    kind: str | None,
    as_form: bool,
) -> None:
    if kind is not None:
        body = {**body, "type": kind}
    raw = json.dumps(body).encode()
    content_type = "application/json"
    if as_form:
        raw, content_type = (
            urlencode({"payload": raw.decode()}).encode(),
            "application/x-www-form-urlencoded",
        )
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        at = SIGNED_AT.fresh(raw)  # never a replay
        headers = signed_headers(SECRET, raw, timestamp=at, content_type=content_type)
        status, _ = await bot.post(raw, headers)
    assert status in (200, 400, 404)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


# ---------------------------------------------------------------------- events


async def state_of(engine: AsyncEngine, chat_id: str, state: ChatState) -> ChatRecord:
    """The chat once it is in ``state``: Bolt acknowledges an event before its listener runs,
    so this polls the store, with a deadline."""
    last: ChatRecord | None = None

    async def in_state() -> ChatRecord | None:
        nonlocal last
        last = await record_of(engine, chat_id)
        return last if last is not None and last.chat.state == state else None

    return await wait_until(
        in_state, what=lambda: f"{chat_id} in {state}; it is {last and last.chat.state}"
    )


async def post_event(bot: Bot, event: dict[str, Any], *, event_id: str, retry: int = 0) -> int:
    body = event_body(event, event_id=event_id)
    headers = signed_headers(SECRET, body, content_type="application/json")
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    status, _ = await bot.post(body, headers)
    return status


async def test_url_verification_answers_the_challenge(bot: Bot) -> None:
    body = url_verification_body("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")
    status, answer = await bot.post(
        body, signed_headers(SECRET, body, content_type="application/json")
    )
    assert status == 200
    assert json.loads(answer) == {
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    }
    unsigned = await bot.post(body, {"Content-Type": "application/json"})
    assert unsigned[0] == 401


async def test_archive_unarchive_and_delete_change_the_chat_and_replay_nothing(
    bot: Bot, engine: AsyncEngine
) -> None:
    await bot.command("subscribe rl", channel="C1")
    await bot.command("subscribe rl", channel="G2", channel_name="privategroup")
    archive = {"type": "channel_archive", "channel": "C1", "user": "U1"}

    assert await post_event(bot, archive, event_id="Ev1") == 200
    record = await state_of(engine, "C1", ChatState.INACTIVE)
    assert (record.inactive_reason, record.inactive_code) == ("is_archived", "is_archived")

    unarchive = {"type": "channel_unarchive", "channel": "C1", "user": "U1"}
    await post_event(bot, unarchive, event_id="Ev2")
    record = await state_of(engine, "C1", ChatState.ACTIVE)
    assert record.inactive_reason is None and record.inactive_code is None
    async with engine.connect() as conn:
        assert record.cursor == await chat_store.latest_event_id(conn)  # nothing replayed

    await post_event(bot, {"type": "group_archive", "channel": "G2"}, event_id="Ev3")
    await post_event(bot, {"type": "channel_deleted", "channel": "C1"}, event_id="Ev4")
    await state_of(engine, "G2", ChatState.INACTIVE)
    deleted = await state_of(engine, "C1", ChatState.INACTIVE)
    assert deleted.inactive_reason == "channel_deleted"
    # A delete is not undone by an unarchive (G2's unarchive, after it, shows it was handled).
    await post_event(bot, {"type": "channel_unarchive", "channel": "C1"}, event_id="Ev5")
    await post_event(bot, {"type": "group_unarchive", "channel": "G2"}, event_id="Ev6")
    await state_of(engine, "G2", ChatState.ACTIVE)
    assert (await state_of(engine, "C1", ChatState.INACTIVE)).inactive_reason == "channel_deleted"


async def test_an_event_retried_by_slack_is_acted_on_once(bot: Bot, engine: AsyncEngine) -> None:
    await bot.command("subscribe rl", channel="C1")
    await bot.command("subscribe rl", channel="C2")
    archive = {"type": "channel_archive", "channel": "C1", "user": "U1"}
    assert await post_event(bot, archive, event_id="Ev9") == 200
    await state_of(engine, "C1", ChatState.INACTIVE)
    await post_event(bot, {"type": "channel_unarchive", "channel": "C1"}, event_id="Ev10")
    await state_of(engine, "C1", ChatState.ACTIVE)

    # Slack retries the archive (same event_id, new signature): answered, not acted on.
    for retry in (1, 2, 3):
        assert await post_event(bot, archive, event_id="Ev9", retry=retry) == 200
    await post_event(bot, {"type": "channel_archive", "channel": "C2"}, event_id="Ev11")
    await state_of(engine, "C2", ChatState.INACTIVE)
    await state_of(engine, "C1", ChatState.ACTIVE)


async def test_the_same_event_over_socket_mode_is_acted_on_once(
    bot: Bot, engine: AsyncEngine
) -> None:
    await bot.command("subscribe rl", channel="C1")
    await bot.command("subscribe rl", channel="C2")

    async def dispatch(event: dict[str, Any], event_id: str) -> None:
        payload = json.loads(event_body(event, event_id=event_id))
        # As Bolt's Socket Mode handler hands an envelope's payload to the app.
        response = await bot.channel.app.async_dispatch(
            AsyncBoltRequest(body=payload, mode="socket_mode")
        )
        assert response.status == 200

    await dispatch({"type": "channel_archive", "channel": "C1"}, "Ev7")
    await state_of(engine, "C1", ChatState.INACTIVE)
    await dispatch({"type": "channel_unarchive", "channel": "C1"}, "Ev8")
    await state_of(engine, "C1", ChatState.ACTIVE)
    await dispatch({"type": "channel_archive", "channel": "C1"}, "Ev7")
    await dispatch({"type": "channel_archive", "channel": "C2"}, "Ev12")
    await state_of(engine, "C2", ChatState.INACTIVE)
    await state_of(engine, "C1", ChatState.ACTIVE)


async def test_the_bot_invited_to_a_channel_waiting_for_it_resumes_deliveries(
    bot: Bot, engine: AsyncEngine
) -> None:
    for channel in ("G3", "G4", "G5"):
        await bot.command("subscribe rl", channel=channel, channel_name="privategroup")
    async with engine.begin() as conn:  # removed from G3 (its send failed); G4 paused by hand
        g3 = await chat_store.get(conn, platform=Platform.SLACK, chat_id="G3")
        g4 = await chat_store.get(conn, platform=Platform.SLACK, chat_id="G4")
        g5 = await chat_store.get(conn, platform=Platform.SLACK, chat_id="G5")
        assert g3 is not None and g4 is not None and g5 is not None
        await chat_store.deactivate(
            conn, pk=g3.pk, reason="channel_not_found", code="channel_not_found"
        )
        await chat_store.deactivate(
            conn, pk=g4.pk, reason="paused", code="paused", state=ChatState.PAUSED
        )
        await chat_store.deactivate(
            conn,
            pk=g5.pk,
            reason="not_in_channel",
            code="not_in_channel",
            state=ChatState.PAUSED,
        )

    def joined(user: str, channel: str) -> dict[str, Any]:
        return {
            "type": "member_joined_channel",
            "user": user,
            "channel": channel,
            "channel_type": "G",
            "inviter": "U1",
        }

    await post_event(bot, joined("U2", "G3"), event_id="Ev20")  # someone else joined
    await post_event(bot, joined(bot.sl.bot_user_id, "G4"), event_id="Ev21")
    await post_event(bot, joined(bot.sl.bot_user_id, "G5"), event_id="Ev22")
    assert (await state_of(engine, "G5", ChatState.ACTIVE)).inactive_reason is None
    await post_event(bot, joined(bot.sl.bot_user_id, "G3"), event_id="Ev23")
    assert (await state_of(engine, "G3", ChatState.ACTIVE)).inactive_reason is None
    await state_of(engine, "G4", ChatState.PAUSED)  # its members paused it


@pytest.mark.parametrize(
    "event",
    [
        {"type": "app_uninstalled"},
        {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["U0BOT"]}},
    ],
)
async def test_uninstall_or_revoked_tokens_stop_slack_until_auth_test_passes(
    sl: FakeSlack, engine: AsyncEngine, event: dict[str, Any]
) -> None:
    settings = make_settings(sl)
    auth = slack_channel.SlackAuth(make_client(settings), retry_seconds=0.05)
    core = CommandCore(engine=engine, defaults=Defaults())
    async with running(sl, engine, core=core, auth=auth) as bot:
        sl.token_errors[TOKEN] = "token_revoked"
        assert await post_event(bot, event, event_id="Ev30") == 200
        await wait_until(lambda: auth.error is not None, what="stopped")
        await sl.wait_for(lambda c: c.method == "auth.test" and not c.ok, count=2)
        assert auth.error == "token_revoked"  # what auth.test says now
        del sl.token_errors[TOKEN]  # reinstalled with the same token
        await asyncio.wait_for(auth.wait_accepted(), timeout=5)
        assert auth.error is None


async def test_revoked_user_tokens_alone_change_nothing(bot: Bot) -> None:
    event = {"type": "tokens_revoked", "tokens": {"oauth": ["U1"], "bot": []}}
    assert await post_event(bot, event, event_id="Ev31") == 200
    assert bot.channel.auth.error is None


async def test_socket_mode_serves_no_http_and_a_rejected_app_token_stops_start(
    sl: FakeSlack, engine: AsyncEngine
) -> None:
    settings = make_settings(sl, slack_signing_secret=None, slack_app_token=APP_TOKEN)
    core = CommandCore(engine=engine, defaults=Defaults())
    channel = SlackChannel(settings=settings, core=core, client=make_client(settings))
    with pytest.raises(ConfigError) as raised:
        await channel.start()
    assert raised.value.variable == "SLACK_APP_TOKEN"
    assert APP_TOKEN not in str(raised.value)

    app = make_app(engine=engine, hooks=WebHooks(routes={EVENTS: channel.handle_request}))
    runner, port = await start_web(app, host="127.0.0.1", port=0)
    try:
        body = slash_command_body(COMMAND, "help", response_url=sl.response_url("r"))
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"http://127.0.0.1:{port}/slack/events", data=body, headers=signed_headers("", body)
            ) as response,
        ):
            assert response.status == 404
    finally:
        await channel.stop()
        await runner.cleanup()


async def test_start_logs_the_identity_and_survives_slack_not_answering(
    sl: FakeSlack, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(sl)
    core = CommandCore(engine=engine, defaults=Defaults())
    with caplog.at_level(logging.INFO, logger="bot.channels.slack"):
        channel = SlackChannel(settings=settings, core=core, client=make_client(settings))
        await channel.start()
        assert channel.bot_name == BOT_NAME
        sl.fail_next("auth.test", status=503, error="service_unavailable")
        again = SlackChannel(settings=settings, core=core, client=make_client(settings))
        await again.start()  # logged, not raised
        assert again.bot_name is None
        await channel.stop()
        await again.stop()

    lines = [r.getMessage() for r in caplog.records]
    assert any("connected as @trendbot" in line for line in lines)
    assert any("could not check the bot token (service_unavailable" in line for line in lines)
    assert not any(TOKEN in line for line in lines)


@pytest.mark.parametrize("code", sorted(slack_channel.AUTH_ERRORS - {"missing_scope"}))
async def test_a_refused_token_at_start_is_a_configuration_error_naming_it(
    sl: FakeSlack, engine: AsyncEngine, code: str
) -> None:
    settings = make_settings(sl)
    sl.token_errors[TOKEN] = code
    channel = SlackChannel(
        settings=settings,
        core=CommandCore(engine=engine, defaults=Defaults()),
        client=make_client(settings),
    )
    with pytest.raises(ConfigError) as raised:
        await channel.start()
    assert raised.value.variable == "SLACK_BOT_TOKEN"
    assert code in raised.value.message and TOKEN not in str(raised.value)


# ---------------------------------------------------------------------- not in channel


async def test_a_chat_paused_for_not_in_channel_gets_the_invite_hint(
    bot: Bot, engine: AsyncEngine, sl: FakeSlack
) -> None:
    await bot.command("subscribe rl", channel="C5")
    # Only without chat:write.public does a public channel answer not_in_channel.
    sl.scopes.discard("chat:write.public")
    sl.add_channel("C5", is_member=False)
    sender = SlackSender(make_client(make_settings(sl)), per_channel_rate=1.0)
    with pytest.raises(NotInChannel) as raised:
        await sender.send("C5", Outgoing(text="hello"), thread=None)
    record = await record_of(engine, "C5")
    assert record is not None
    async with engine.begin() as conn:  # what the delivery engine does with NotInChannel
        await chat_store.deactivate(
            conn,
            pk=record.pk,
            reason=raised.value.reason,
            code=raised.value.code,
            state=ChatState.PAUSED,
        )

    hint = t("en", "slack.invite_hint", bot=BOT_NAME, p=P)
    settings = await bot.command("settings", channel="C5")
    latest = await bot.command("latest", channel="C5")
    korean = await bot.command("lang ko", channel="C5")
    other = await bot.command("settings", channel="C6")
    resumed = await bot.command("resume", channel="C5")

    assert settings.text.endswith(hint)
    assert "/invite @trendbot" in settings.text
    assert latest.via == "response_url" and latest.text.endswith(hint)
    assert korean.text.endswith(t("ko", "slack.invite_hint", bot=BOT_NAME, p=P))
    assert "/invite" not in other.text
    assert "/invite" not in resumed.text  # deliveries are on again


# ---------------------------------------------------------------------- sending


@pytest.fixture
def sender(sl: FakeSlack) -> SlackSender:
    return SlackSender(make_client(make_settings(sl)), per_channel_rate=2.0)


def test_the_client_leaves_rate_limits_and_retries_to_the_delivery_engine(sl: FakeSlack) -> None:
    client = make_client(make_settings(sl, slack_api_base_url=sl.base_url.rstrip("/")))
    assert client.base_url == sl.base_url
    assert client.retry_handlers == []
    assert not any(isinstance(h, AsyncRateLimitErrorRetryHandler) for h in client.retry_handlers)


def test_sender_paces_per_channel_only(sender: SlackSender) -> None:
    assert sender.platform == Platform.SLACK
    assert sender.rate_per_second is None
    chat = ChatSettings(platform=Platform.SLACK, chat_id="C1", kind=ChatKind.GROUP)
    assert sender.interval(chat) == 0.5


async def test_sender_posts_without_unfurling_and_plain_text_without_mrkdwn(
    sender: SlackSender, sl: FakeSlack
) -> None:
    blocks = ({"type": "section", "text": {"type": "mrkdwn", "text": "*hi*"}},)
    ts = await sender.send(
        "C1", Outgoing(text="hi", payload=SlackPayload(blocks=blocks)), thread=None
    )
    await sender.send("C1", Outgoing(text="a &lt;b&gt;", plain=True), thread=None)
    # in_thread is what makes a message a thread reply, not the thread alone.
    await sender.send("C1", Outgoing(text="top"), thread=ts)

    first, plain, top = sl.calls("chat.postMessage")
    assert first.response is not None and first.response["ts"] == ts
    assert first.params["blocks"] == list(blocks)
    assert str(first.params["unfurl_links"]).lower() in ("0", "false")
    assert str(first.params["unfurl_media"]).lower() in ("0", "false")
    assert str(first.params["mrkdwn"]).lower() in ("1", "true")
    assert str(plain.params["mrkdwn"]).lower() in ("0", "false")
    assert "blocks" not in plain.params
    assert "thread_ts" not in top.params


async def test_a_digest_of_60_pages_is_a_summary_and_thread_replies(
    sender: SlackSender, sl: FakeSlack
) -> None:
    pages = [
        make_page(i, ("rl", "reasoning"), tldr="Evolution strategies " * 40) for i in range(60)
    ]
    digest = rl_digest(pages)
    parts = render.digest_messages(Platform.SLACK, digest)
    assert len(parts) > 2 and not parts[0].in_thread and all(p.in_thread for p in parts[1:])

    thread: str | None = None
    for i, part in enumerate(parts):  # as the delivery engine sends one delivery
        ref = await sender.send("C1", part, thread=thread if part.in_thread else None)
        if i == 0:
            thread = ref

    summary, *replies = sl.messages_to("C1")
    assert thread == summary["ts"] and "thread_ts" not in summary
    assert len(replies) == len(parts) - 1
    assert all(reply["thread_ts"] == summary["ts"] for reply in replies)
    assert all(len(m["blocks"]) <= 50 for m in [summary, *replies])
    shown = " ".join(s for m in replies for s in block_texts(m["blocks"]))
    assert all(f"|Paper {i}>" in shown for i in range(60))
    assert all(call.ok for call in sl.calls("chat.postMessage"))


async def test_a_workspace_that_refuses_containers_gets_todays_sections_logged_once(
    sender: SlackSender, sl: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    sl.refuse_blocks("container")
    pages = [make_page(i, ("rl",), tldr="Evolution strategies " * 40) for i in range(30)]
    parts = render.digest_messages(Platform.SLACK, rl_digest(pages))
    assert any(b["type"] == "container" for p in parts for b in slack_payload(p).blocks)
    with caplog.at_level(logging.WARNING, logger="bot.channels.slack"):
        for _delivery in range(2):
            thread: str | None = None
            for part in parts:
                ref = await sender.send("C1", part, thread=thread if part.in_thread else None)
                thread = thread or ref

    posted = sl.messages_to("C1")
    assert len(posted) == 2 * len(parts)  # nothing lost
    assert not any(b["type"] == "container" for m in posted for b in m["blocks"])
    shown = " ".join(s for m in posted[: len(parts)] for s in block_texts(m["blocks"]))
    assert all(f"|Paper {i}>" in shown for i in range(30))
    # Refused once; from then on the workspace gets the sections at the first try.
    assert [c.error for c in sl.calls("chat.postMessage") if not c.ok] == ["invalid_blocks"]
    assert sender.fallback_workspaces == {""}
    warned = [r for r in caplog.records if "invalid_blocks" in r.getMessage()]
    assert len(warned) == 1 and "sections" in warned[0].getMessage()

    sl.unsupported_blocks.clear()  # remembered: still sections
    await sender.send("C1", parts[1], thread=None)
    assert sl.messages_to("C1")[-1]["blocks"] == list(slack_payload(parts[1]).fallback_blocks)


async def test_refused_blocks_without_fallback_or_with_refused_fallback_fail_for_good(
    sender: SlackSender, sl: FakeSlack
) -> None:
    container = {
        "type": "container",
        "title": {"type": "plain_text", "text": "T"},
        "child_blocks": [{"type": "divider"}],
    }
    sl.refuse_blocks("container")
    with pytest.raises(PermanentError, match="invalid_blocks"):
        await sender.send(
            "C1", Outgoing(text="x", payload=SlackPayload(blocks=(container,))), thread=None
        )
    assert len(sl.calls("chat.postMessage")) == 1
    too_long = {"type": "header", "text": {"type": "plain_text", "text": "H" * 151}}
    with pytest.raises(PermanentError, match="invalid_blocks"):
        await sender.send(
            "C1",
            Outgoing(
                text="x", payload=SlackPayload(blocks=(container,), fallback_blocks=(too_long,))
            ),
            thread=None,
        )
    assert len(sl.calls("chat.postMessage")) == 3
    assert sender.fallback_workspaces == set()  # the fallback did not help: not kept to it
    assert sl.messages_to("C1") == []


async def send_one(sender: SlackSender, channel: str = "C1") -> None:
    await sender.send(channel, Outgoing(text="hello"), thread=None)


async def test_429_is_rate_limited_for_retry_after_with_no_retry_of_its_own(
    sender: SlackSender, sl: FakeSlack
) -> None:
    sl.fail_next("chat.postMessage", status=429, retry_after=7)
    with pytest.raises(RateLimited) as raised:
        await send_one(sender)
    assert raised.value.retry_after == 7
    assert raised.value.reason.startswith("ratelimited")
    assert sl.request_count["chat.postMessage"] == 1


@pytest.mark.parametrize(
    "code", ["channel_not_found", "is_archived", "channel_is_archived", "user_not_found"]
)
async def test_a_conversation_that_is_gone_is_chat_gone(
    sender: SlackSender, sl: FakeSlack, code: str
) -> None:
    sl.channel_errors["C1"] = code
    with pytest.raises(ChatGone) as raised:
        await send_one(sender)
    assert raised.value.reason == code and raised.value.code == code


@pytest.mark.parametrize("code", sorted(slack_channel.AUTH_ERRORS))
async def test_a_refused_token_stops_every_send_until_auth_test_passes(
    sl: FakeSlack, code: str
) -> None:
    client = make_client(make_settings(sl))
    auth = slack_channel.SlackAuth(client, retry_seconds=0.05)
    sender = SlackSender(client, per_channel_rate=1.0, auth=auth)
    if code == "missing_scope":
        sl.scopes.discard("chat:write")
    else:
        sl.token_errors[TOKEN] = code
    with pytest.raises(PlatformAuthFailed) as raised:
        await send_one(sender, "C1")
    assert raised.value.code == code and TOKEN not in raised.value.reason
    assert auth.error == code
    with pytest.raises(PlatformAuthFailed):  # no call while refused: the next chat too
        await send_one(sender, "C2")
    assert sl.request_count["chat.postMessage"] == 1
    await sl.wait_for(lambda c: c.method == "auth.test", count=2)  # asked again, and again
    assert auth.error == code
    sl.token_errors.clear()
    sl.scopes.add("chat:write")
    await asyncio.wait_for(sender.wait_authorized(), timeout=5)
    assert auth.error is None
    await send_one(sender, "C2")
    await auth.close()


async def test_an_archived_channel_and_a_channel_without_the_bot(
    sender: SlackSender, sl: FakeSlack
) -> None:
    sl.add_channel("C2", is_archived=True)
    sl.add_channel("C3", is_member=False)  # public: chat:write.public posts there
    sl.add_channel("G4", is_private=True, is_member=False)
    with pytest.raises(ChatGone) as archived:
        await send_one(sender, "C2")
    assert archived.value.reason == "is_archived"
    await send_one(sender, "C3")
    with pytest.raises(ChatGone) as private:
        await send_one(sender, "G4")
    assert private.value.reason == "channel_not_found"


@pytest.mark.parametrize(
    ("status", "error", "ambiguous"),
    [
        (200, "fatal_error", True),
        (200, "internal_error", True),
        (200, "service_unavailable", False),
        (502, "bad_gateway", True),
        (503, "service_unavailable", False),
    ],
)
async def test_slack_side_failures_are_transient(
    sender: SlackSender, sl: FakeSlack, status: int, error: str, ambiguous: bool
) -> None:
    sl.fail_next("chat.postMessage", status=status, error=error)
    with pytest.raises(TransientError) as raised:
        await send_one(sender)
    assert raised.value.ambiguous is ambiguous
    assert sl.request_count["chat.postMessage"] == 1


async def test_a_dropped_connection_is_an_ambiguous_transient_error_not_retried(
    sender: SlackSender, sl: FakeSlack
) -> None:
    sl.drop_next("chat.postMessage")
    with pytest.raises(TransientError) as raised:
        await send_one(sender)
    assert raised.value.ambiguous is True
    assert sl.request_count["chat.postMessage"] == 1
    await send_one(sender)  # the next one goes through


async def test_a_timeout_is_ambiguous_and_a_refused_connection_is_not(sl: FakeSlack) -> None:
    sender = SlackSender(make_client(make_settings(sl), timeout=1), per_channel_rate=1.0)
    sl.latency = 1.5
    with pytest.raises(TransientError) as slow:
        await send_one(sender)
    assert slow.value.ambiguous is True
    assert slow.value.reason.startswith("timeout")

    refused = SlackSender(
        make_client(make_settings(sl, slack_api_base_url="http://127.0.0.1:9/api/")),
        per_channel_rate=1.0,
    )
    with pytest.raises(TransientError) as unreachable:
        await send_one(refused)
    assert unreachable.value.ambiguous is False


async def test_a_re_send_after_no_answer_waits_longer_for_slacks_answer(sl: FakeSlack) -> None:
    """A send with no answer in the client's timeout may have posted the message: its one
    re-send (``Attempt.resend``) waits ``resend_timeout`` instead, long enough here."""
    sender = SlackSender(
        make_client(make_settings(sl), timeout=1), per_channel_rate=1.0, resend_timeout=3
    )
    sl.latency = 1.5
    with pytest.raises(OutcomeUnknown):
        await sender.send("C1", Outgoing(text="slow"), thread=None, attempt=Attempt("1.0"))
    ts = await sender.send(
        "C1", Outgoing(text="slow"), thread=None, attempt=Attempt("1.0", resend=True)
    )
    assert ts is not None
    assert sl.request_count["chat.postMessage"] == 2


async def test_a_message_slack_refuses_is_a_permanent_error(
    sender: SlackSender, sl: FakeSlack
) -> None:
    blocks = tuple({"type": "divider"} for _ in range(51))
    with pytest.raises(PermanentError) as raised:
        await sender.send(
            "C1", Outgoing(text="too many", payload=SlackPayload(blocks=blocks)), thread=None
        )
    assert raised.value.reason == "invalid_blocks"
    assert not isinstance(raised.value, TransientError | ChatGone)


def test_every_failure_is_a_delivery_error() -> None:
    for cls in (RateLimited, ChatGone, NotInChannel, TransientError, PermanentError):
        assert issubclass(cls, DeliveryError)


# ---------------------------------------------------------------------- delivery


async def slack_digests(engine: AsyncEngine, root: Path, *channels: str) -> World:
    """A page and one Slack chat per channel that wants it, planned: a digest each."""
    world = await started(engine, root)
    async with engine.begin() as conn:
        for channel in channels:
            await chat_store.ensure(
                conn,
                defaults=ChatSettings(
                    platform=Platform.SLACK,
                    chat_id=channel,
                    kind=ChatKind.GROUP,
                    filter=Filter(any_of=frozenset({"rl"})),
                ),
            )
    await world.publish("papers/2026/a-finding", tags="[rl]")
    assert await world.plan() == len(channels)
    return world


async def outbox_rows(engine: AsyncEngine) -> list[tuple[str, int]]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(outbox_table.c.status, outbox_table.c.attempts).order_by(outbox_table.c.id)
        )
        return [(status, attempts) for status, attempts in rows]


def auth_failures(code: str) -> float:
    value = metrics.REGISTRY.get_sample_value(
        "trendbot_platform_auth_failures_total", {"platform": "slack", "code": code}
    )
    return value or 0.0


async def test_a_refused_token_keeps_every_message_queued_and_resumes_when_it_works(
    sl: FakeSlack, engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await slack_digests(engine, tmp_path, "C1", "C2", "C3")
    client = make_client(make_settings(sl))
    auth = slack_channel.SlackAuth(client, retry_seconds=0.1)
    sender = SlackSender(client, per_channel_rate=50.0, auth=auth)
    delivery = Delivery(engine=engine, senders={Platform.SLACK: sender}, concurrency=4)
    app = make_app(engine=engine, hooks=WebHooks(auth_errors={"slack": lambda: auth.error}))
    runner, port = await start_web(app, host="127.0.0.1", port=0)
    before = auth_failures("token_revoked")
    sl.token_errors[TOKEN] = "token_revoked"
    stop = asyncio.Event()
    with caplog.at_level(logging.INFO):
        task = asyncio.create_task(delivery.run(stop))
        try:
            await sl.wait_for(lambda c: c.method == "auth.test", count=2)  # probing, every 0.1 s
            async with (
                aiohttp.ClientSession() as http,
                http.get(f"http://127.0.0.1:{port}/healthz") as response,
            ):
                health = await response.json()
            assert response.status == 200 and health["status"] == "degraded"
            assert health["platforms"] == {"slack": {"status": "down", "error": "token_revoked"}}
            # The sends in flight when the first refusal came back, then none.
            assert 1 <= sl.request_count["chat.postMessage"] <= 3
            refused = sl.request_count["chat.postMessage"]
            await sl.wait_for(lambda c: c.method == "auth.test", count=4)
            assert sl.request_count["chat.postMessage"] == refused
            assert await outbox_rows(engine) == [("queued", 0)] * 3
            assert {r.chat.state for r in await all_chats(engine)} == {ChatState.ACTIVE}
            assert auth_failures("token_revoked") == before + 1

            del sl.token_errors[TOKEN]
            await sl.wait_for(3, timeout=10)
        finally:
            stop.set()
            await task
            await runner.cleanup()
            await auth.close()
    assert await outbox_rows(engine) == [("sent", 0)] * 3
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "SLACK_BOT_TOKEN" in errors[0].getMessage()
    assert not any(TOKEN in r.getMessage() for r in caplog.records)


async def test_digest_now_with_a_refused_token_returns_leaving_everything_queued(
    sl: FakeSlack, engine: AsyncEngine, tmp_path: Path
) -> None:
    await slack_digests(engine, tmp_path, "C1", "C2")
    client = make_client(make_settings(sl))
    sender = SlackSender(client, per_channel_rate=50.0)
    sl.token_errors[TOKEN] = "invalid_auth"
    try:
        await asyncio.wait_for(
            Delivery(engine=engine, senders={Platform.SLACK: sender}).drain(), timeout=10
        )
    finally:
        await sender.auth.close()
    assert await outbox_rows(engine) == [("queued", 0)] * 2
    assert {r.chat.state for r in await all_chats(engine)} == {ChatState.ACTIVE}


async def test_replicas_share_the_workspace_pace(
    sl: FakeSlack, engine: AsyncEngine, tmp_path: Path
) -> None:
    channels = [f"C{i}" for i in range(24)]
    await slack_digests(engine, tmp_path, *channels)
    sl.workspace_rate = 8
    sl.enforce_limits = True
    settings = make_settings(sl, slack_workspace_rate_per_second=8)
    replicas = []
    for _ in range(2):
        client = make_client(settings)
        sender = SlackSender(
            client,
            per_channel_rate=settings.slack_rate_per_second,
            workspace_rate=settings.slack_workspace_rate_per_second,
        )
        assert sender.rate_per_second == 8
        delivery = Delivery(engine=engine, senders={Platform.SLACK: sender}, concurrency=8)
        delivery.share_caps(2)  # as each replica does once it counts the other
        replicas.append(delivery)
    await asyncio.gather(*(d.drain() for d in replicas))

    assert sl.delivered == len(channels)
    assert sl.limit_violations == []
    arrivals = sorted(c.at for c in sl.calls("chat.postMessage", ok=True))
    assert arrivals[-1] - arrivals[0] >= (len(arrivals) - 1) / 8 * 0.9


def test_the_workspace_pace_defaults_to_slacks_published_figure() -> None:
    # chat.postMessage: "several hundred messages per minute" in a workspace.
    assert Settings(_env_file=None).slack_workspace_rate_per_second == 5.0  # type: ignore[call-arg]


# ---------------------------------------------------------------------- trendbot run


@pytest.mark.timeout(120)
@pytest.mark.parametrize("code", ["invalid_auth", "token_revoked"])
async def test_run_with_a_refused_token_stops_with_one_line_naming_slack_bot_token(
    sl: FakeSlack, tmp_path: Path, clean_env: dict[str, str], database_url: str, code: str
) -> None:
    sl.token_errors[TOKEN] = code
    env = dict(
        clean_env,
        DATABASE_URL=database_url,
        WIKI_SOURCES=str(tmp_path / "wiki"),
        **slack_env(sl, signing_secret=SECRET),
        HTTP_PORT="0",
    )
    result = await run_cli_async("run", env=env, cwd=tmp_path, seconds=90)

    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("configuration error: SLACK_BOT_TOKEN:") and code in lines[-1]
    assert "Traceback" not in result.stderr and TOKEN not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"is_archived": True}, "is_archived"),
        ({"is_private": True, "is_member": False}, "channel_not_found"),  # the bot was removed
    ],
)
async def test_a_chat_that_had_messages_becomes_inactive_with_the_reason(
    sl: FakeSlack, engine: AsyncEngine, tmp_path: Path, change: dict[str, Any], reason: str
) -> None:
    world = await slack_digests(engine, tmp_path, "G1", "C2")
    client = make_client(make_settings(sl))
    sender = SlackSender(client, per_channel_rate=50.0)
    senders = {Platform.SLACK: sender}
    await Delivery(engine=engine, senders=senders).drain()
    assert [m["channel"] for m in sl.messages_to("G1")] == ["G1"]
    sl.add_channel("G1", **change)
    await world.publish("papers/2026/another", tags="[rl]")
    assert await world.plan() == 2
    await Delivery(engine=engine, senders=senders).drain()
    await sender.auth.close()

    gone, other = await record_of(engine, "G1"), await record_of(engine, "C2")
    assert gone is not None and other is not None
    assert (gone.chat.state, gone.inactive_reason) == (ChatState.INACTIVE, reason)
    assert gone.inactive_code == reason
    assert other.chat.state == ChatState.ACTIVE and len(sl.messages_to("C2")) == 2
    assert sender.auth.error is None  # one channel's problem, not the workspace's


async def test_a_private_channel_the_bot_was_removed_from_says_to_invite_it_again(
    bot: Bot, engine: AsyncEngine, tmp_path: Path
) -> None:
    bot.sl.add_channel("G1", name="lab", is_private=True)
    await bot.command("subscribe rl", channel="G1", channel_name="privategroup")
    bot.sl.channels["G1"]["is_member"] = False  # removed; its next send fails
    async with engine.begin() as conn:
        record = await chat_store.get(conn, platform=Platform.SLACK, chat_id="G1")
        assert record is not None
        await chat_store.deactivate(
            conn, pk=record.pk, reason="channel_not_found", code="channel_not_found"
        )

    answer = await bot.command("resume", channel="G1", channel_name="privategroup")

    assert answer.text == t("en", "slack.invite_first", bot=BOT_NAME, p=P)
    record = await record_of(engine, "G1")
    assert record is not None and record.chat.state == ChatState.INACTIVE
