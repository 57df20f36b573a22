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
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import render
from bot.channels import slack as slack_channel
from bot.channels.slack import SlackChannel, SlackSender, make_client
from bot.commands import CommandCore, Defaults, describe_filter
from bot.digest import build_digest
from bot.errors import (
    ChatGone,
    ConfigError,
    DeliveryError,
    NotInChannel,
    PermanentError,
    RateLimited,
    TransientError,
)
from bot.i18n import t, tn
from bot.models import (
    ChatKind,
    ChatSettings,
    ChatState,
    Filter,
    Outgoing,
    Page,
    PageText,
    Platform,
    Reply,
)
from bot.settings import Settings
from bot.store import chats as chat_store
from bot.store import pages as page_store
from bot.store.chats import ChatRecord
from bot.web import WebHooks, make_app
from bot.web import start as start_web
from tests.fakes.slack_api import (
    DEFAULT_TOKEN,
    FakeSlack,
    block_actions_body,
    block_actions_payload,
    signed_headers,
    slash_command_body,
)

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
        name = self.response_name()
        body = slash_command_body(
            COMMAND,
            text,
            user_id=user,
            channel_id=channel,
            response_url=self.sl.response_url(name),
            **fields,
        )
        status, ack = await self.post(body)
        assert status == 200, ack
        if ack:
            return Answer("ack", json.loads(ack))
        responses = await self.sl.wait_for_response(name)
        return Answer("response_url", responses[-1])

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
    sl: FakeSlack, engine: AsyncEngine, *, core: CommandCore | None = None, **overrides: Any
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
        settings=settings, core=core, engine=engine, client=make_client(settings)
    )
    await channel.start()
    assert channel.running
    app = make_app(engine=engine, hooks=WebHooks(slack=channel.handle_request))
    runner, port = await start_web(app, host="127.0.0.1", port=0)
    http = aiohttp.ClientSession()
    try:
        yield Bot(sl, engine, channel, f"http://127.0.0.1:{port}/slack/events", http, digests)
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
    texts: list[str] = []
    for block in blocks:
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

    channel, direct = await record_of(engine, "C1"), await record_of(engine, dm)
    assert channel is not None and direct is not None
    assert channel.chat.kind == ChatKind.GROUP
    assert channel.chat.filter.any_of == {"rl", "reasoning"}
    assert direct.chat.kind == ChatKind.PRIVATE
    assert direct.chat.filter.any_of == {"robotics"}
    assert len(await all_chats(engine)) == 2


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
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slack_channel, "ACK_BUDGET_SECONDS", 0.0)
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


async def test_socket_mode_serves_no_http_and_a_rejected_app_token_stops_start(
    sl: FakeSlack, engine: AsyncEngine
) -> None:
    settings = make_settings(sl, slack_signing_secret=None, slack_app_token=APP_TOKEN)
    core = CommandCore(engine=engine, defaults=Defaults())
    channel = SlackChannel(
        settings=settings, core=core, engine=engine, client=make_client(settings)
    )
    with pytest.raises(ConfigError) as raised:
        await channel.start()
    assert raised.value.variable == "SLACK_APP_TOKEN"
    assert APP_TOKEN not in str(raised.value)

    app = make_app(engine=engine, hooks=WebHooks(slack=channel.handle_request))
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


async def test_start_logs_the_identity_and_survives_a_failed_auth_test(
    sl: FakeSlack, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(sl)
    core = CommandCore(engine=engine, defaults=Defaults())
    with caplog.at_level(logging.INFO, logger="bot.channels.slack"):
        channel = SlackChannel(
            settings=settings, core=core, engine=engine, client=make_client(settings)
        )
        await channel.start()
        assert channel.bot_name == BOT_NAME
        sl.token_errors[TOKEN] = "invalid_auth"
        again = SlackChannel(
            settings=settings, core=core, engine=engine, client=make_client(settings)
        )
        await again.start()  # logged, not raised
        assert again.bot_name is None
        await channel.stop()
        await again.stop()

    lines = [r.getMessage() for r in caplog.records]
    assert any("connected as @trendbot" in line for line in lines)
    assert any("could not check the bot token (invalid_auth" in line for line in lines)
    assert not any(TOKEN in line for line in lines)


# ---------------------------------------------------------------------- not in channel


async def test_a_chat_paused_for_not_in_channel_gets_the_invite_hint(
    bot: Bot, engine: AsyncEngine, sl: FakeSlack
) -> None:
    await bot.command("subscribe rl", channel="C5")
    sl.add_channel("C5", is_member=False)
    sender = SlackSender(make_client(make_settings(sl)), per_channel_rate=1.0)
    with pytest.raises(NotInChannel) as raised:
        await sender.send("C5", Outgoing(text="hello"), thread=None)
    record = await record_of(engine, "C5")
    assert record is not None
    async with engine.begin() as conn:  # what the delivery engine does with NotInChannel
        await chat_store.deactivate(
            conn, pk=record.pk, reason=raised.value.reason, state=ChatState.PAUSED
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
    ts = await sender.send("C1", Outgoing(text="hi", blocks=blocks), thread=None)
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
    digest = build_digest(
        lang="en",
        filter=Filter(any_of=frozenset({"rl"})),
        candidates=[(page, False) for page in pages],
        today=dt.date(2026, 8, 30),
    )
    assert digest is not None
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
    assert raised.value.reason == code


@pytest.mark.parametrize("code", ["invalid_auth", "token_revoked", "account_inactive"])
async def test_a_token_the_workspace_no_longer_accepts_is_chat_gone(
    sender: SlackSender, sl: FakeSlack, code: str
) -> None:
    sl.token_errors[TOKEN] = code
    with pytest.raises(ChatGone) as raised:
        await send_one(sender)
    assert raised.value.reason.startswith(f"{code}:")
    assert TOKEN not in raised.value.reason


async def test_an_archived_channel_and_a_channel_without_the_bot(
    sender: SlackSender, sl: FakeSlack
) -> None:
    sl.add_channel("C2", is_archived=True)
    sl.add_channel("C3", is_member=False)
    with pytest.raises(ChatGone):
        await send_one(sender, "C2")
    with pytest.raises(NotInChannel) as raised:
        await send_one(sender, "C3")
    assert raised.value.reason == "not_in_channel"


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


async def test_a_timeout_is_ambiguous_and_a_refused_connection_is_not(
    sl: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slack_channel, "REQUEST_TIMEOUT_SECONDS", 1)
    sender = SlackSender(make_client(make_settings(sl)), per_channel_rate=1.0)
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


async def test_a_message_slack_refuses_is_a_permanent_error(
    sender: SlackSender, sl: FakeSlack
) -> None:
    blocks = tuple({"type": "divider"} for _ in range(51))
    with pytest.raises(PermanentError) as raised:
        await sender.send("C1", Outgoing(text="too many", blocks=blocks), thread=None)
    assert raised.value.reason == "invalid_blocks"
    assert not isinstance(raised.value, TransientError | ChatGone)


def test_every_failure_is_a_delivery_error() -> None:
    for cls in (RateLimited, ChatGone, NotInChannel, TransientError, PermanentError):
        assert issubclass(cls, DeliveryError)
