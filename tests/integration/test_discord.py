"""Discord: interactions posted to ``POST /discord/interactions`` of the bot's own web server,
signed with a test Ed25519 key as Discord signs them, and messages sent through the delivery
engine to FakeDiscord, which validates every body against Discord's OpenAPI description;
with a real database on each backend."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import render
from bot.channels.discord.interactions import DiscordChannel
from bot.channels.discord.rest import RestClient
from bot.channels.discord.sender import DiscordSender
from bot.channels.discord.settings import DISCORD, DiscordSettings
from bot.channels.discord.spec import INSTALL, INTERACTIONS
from bot.channels.discord.verify import MAX_BODY_BYTES
from bot.commands import CommandCore, Defaults
from bot.delivery.engine import Delivery
from bot.errors import ChatGone, NotInChannel, PermanentError, RateLimited, TransientError
from bot.i18n import t
from bot.models import ChatKind, ChatSettings, ChatState, Filter, Page, PageText
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.rules import filters
from bot.rules.digest import build_digest
from bot.store import chats as chat_store
from bot.store.schema import votes
from tests.fakes.discord_api import (
    ADMINISTRATOR,
    APPLICATION_ID,
    DEFAULT_TOKEN,
    IS_COMPONENTS_V2,
    MANAGE_CHANNELS,
    MANAGE_GUILD,
    SEND_MESSAGES,
    TEST_PUBLIC_KEY,
    VIEW_CHANNEL,
    FakeDiscord,
    command_interaction,
    component_interaction,
    ping_interaction,
)
from tests.integration.test_planner import started
from tests.integration.test_slack import seed_pages
from tests.signing import SigningTimes
from tests.waiting import wait_until

CHANNEL = "1300000000000000001"
DM_CHANNEL = "1300000000000000002"
ADMIN = "80351110224678999"
VOTER = "80351110224678913"
ROUTE = "POST /channels/{channel_id}/messages"


def make_settings(dc: FakeDiscord, **overrides: Any) -> DiscordSettings:
    values: dict[str, Any] = {
        "discord_bot_token": DEFAULT_TOKEN,
        "discord_application_id": APPLICATION_ID,
        "discord_public_key": TEST_PUBLIC_KEY,
        "discord_api_base_url": dc.base_url,
        "discord_admin_ids": ADMIN,
    }
    values.update(overrides)
    return DiscordSettings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        server.add_channel(CHANNEL)
        server.add_channel(DM_CHANNEL, kind=1)
        yield server


@dataclass
class Bot:
    dc: FakeDiscord
    engine: AsyncEngine
    channel: DiscordChannel
    base: str
    http: aiohttp.ClientSession

    @property
    def url(self) -> str:
        return f"{self.base}/discord/interactions"

    async def command(self, name: str, argument: str | None = None, **where: Any) -> Any:
        """``/name argument`` as Discord posts it; the answer the caller saw (the edit of
        a deferred one included)."""
        where.setdefault("channel_id", CHANNEL)
        body, created = command_interaction(self.dc, name, argument, **where)
        status, answer = await self.dc.interact(self.http, self.url, body)
        assert status == 200, (status, answer)
        if answer["type"] == 5:
            calls = await self.dc.wait_for(
                lambda c: c.path.endswith(f"{created.token}/messages/@original")
            )
            return {"type": 5, "data": calls[0].body}
        return answer

    async def press(self, custom_id: str, **where: Any) -> Any:
        where.setdefault("channel_id", CHANNEL)
        body, _ = component_interaction(self.dc, custom_id, **where)
        status, answer = await self.dc.interact(self.http, self.url, body)
        assert status == 200, (status, answer)
        return answer


@asynccontextmanager
async def running(dc: FakeDiscord, engine: AsyncEngine, **overrides: Any) -> AsyncIterator[Bot]:
    settings = make_settings(dc, **overrides)
    from bot.commands.operator import Admin  # the admin commands, as the app builds them

    defaults = Defaults(lang="en")
    admin = Admin(engine=engine, settings=settings)
    core = CommandCore(
        engine=engine, defaults=defaults, admin=admin, public_base_url=settings.public_base_url
    )
    rest = RestClient(base_url=settings.discord_api_base_url, token=DEFAULT_TOKEN)
    channel = DiscordChannel(settings=settings, core=core, rest=rest)
    await channel.start()
    hooks = WebHooks(routes={INTERACTIONS: channel.handle_request, INSTALL: channel.handle_install})
    runner, port = await start_web(make_app(engine=engine, hooks=hooks), host="127.0.0.1", port=0)
    http = aiohttp.ClientSession()
    try:
        yield Bot(dc, engine, channel, f"http://127.0.0.1:{port}", http)
    finally:
        await http.close()
        await channel.stop()
        await rest.close()
        await runner.cleanup()


@pytest.fixture
async def bot(dc: FakeDiscord, engine: AsyncEngine) -> AsyncIterator[Bot]:
    async with running(dc, engine) as b:
        yield b


def texts(data: dict[str, Any]) -> str:
    """Every text a message shows: its content and its components' texts."""
    found = [str(data.get("content") or "")]
    stack = list(data.get("components") or [])
    while stack:
        item = stack.pop(0)
        found += [str(item.get(k) or "") for k in ("content", "label")]
        stack[:0] = item.get("components") or []
    return "\n".join(part for part in found if part)


def buttons(data: dict[str, Any]) -> dict[str, str]:
    """custom_id -> label of every button of a message."""
    found: dict[str, str] = {}
    stack = list(data.get("components") or [])
    while stack:
        item = stack.pop()
        if item.get("type") == 2:
            found[item["custom_id"]] = item["label"]
        stack += item.get("components") or []
    return found


async def record(engine: AsyncEngine, chat_id: str) -> chat_store.ChatRecord | None:
    async with engine.connect() as conn:
        return await chat_store.get(conn, platform=DISCORD, chat_id=chat_id)


# ---------------------------------------------------------------------- commands


async def test_start_registers_every_command_once(dc: FakeDiscord, engine: AsyncEngine) -> None:
    from bot.commands import registry

    async with running(dc, engine):
        pass
    assert dc.command_puts == 1
    names = [c["name"] for c in dc.commands]
    assert names == [c.name for c in registry.commands()]
    subscribe = next(c for c in dc.commands if c["name"] == "subscribe")
    assert subscribe["description_localizations"]["ko"]
    assert subscribe["options"][0]["name"] == "tags" and subscribe["options"][0]["type"] == 3
    async with running(dc, engine):  # the same set: not written again
        pass
    assert dc.command_puts == 1


async def test_ping_is_answered_pong(bot: Bot) -> None:
    status, answer = await bot.dc.interact(bot.http, bot.url, ping_interaction())
    assert (status, answer) == (200, {"type": 1})


async def test_subscribe_in_a_channel_by_a_member_who_manages_it(bot: Bot) -> None:
    answer = await bot.command(
        "subscribe", "rl reasoning", permissions=VIEW_CHANNEL | SEND_MESSAGES | MANAGE_CHANNELS
    )
    assert answer["type"] == 4
    data = answer["data"]
    assert data["flags"] & 64 and data["flags"] & IS_COMPONENTS_V2
    assert "rl" in texts(data) and "reasoning" in texts(data)
    found = await record(bot.engine, CHANNEL)
    assert found is not None and found.chat.kind == ChatKind.GROUP
    assert found.chat.filter.any_of == frozenset({"rl", "reasoning"})


async def test_a_member_who_may_not_manage_the_channel_is_refused(bot: Bot) -> None:
    answer = await bot.command("subscribe", "rl", permissions=VIEW_CHANNEL | SEND_MESSAGES)
    assert answer["data"]["flags"] & 64
    assert "Manage Channels" in texts(answer["data"])
    found = await record(bot.engine, CHANNEL)
    assert found is None or not found.chat.filter.any_of


@pytest.mark.parametrize(
    "permissions",
    [MANAGE_CHANNELS, MANAGE_GUILD, ADMINISTRATOR],
    ids=["channel", "server", "admin"],
)
async def test_each_permission_that_manages_the_channel_may_change_it(
    bot: Bot, permissions: int
) -> None:
    await bot.command("subscribe", "rl", permissions=VIEW_CHANNEL | permissions)
    found = await record(bot.engine, CHANNEL)
    assert found is not None and found.chat.filter.any_of == frozenset({"rl"})


async def test_every_refusal_to_a_member_who_may_not_manage_names_discords_permissions(
    bot: Bot,
) -> None:
    """Commands and buttons alike: Discord's words (who may manage the channel), never
    "this group's administrators", which Discord has not."""
    await seed_pages(bot.engine)
    await bot.command("subscribe", "rl", permissions=MANAGE_CHANNELS)  # the chat exists
    member = VIEW_CHANNEL | SEND_MESSAGES
    general = t("en", "cmd.discord_manage_only")
    answers = {
        "subscribe": await bot.command("subscribe", "agents", permissions=member),
        "digest": await bot.command("digest", permissions=member),
        "tag picker": await bot.press("tog:agents", permissions=member),
        "feedback reset": await bot.press("fbreset:yes", permissions=member),
    }
    expected = {
        "subscribe": general,
        "digest": t("en", "cmd.discord_manage_only_digest", p="/"),
        "tag picker": general,
        "feedback reset": general,
    }
    for what, answer in answers.items():
        shown = texts(answer["data"])
        assert shown == expected[what], (what, shown)
        assert "administrators" not in shown
    found = await record(bot.engine, CHANNEL)
    assert found is not None and found.chat.filter.any_of == frozenset({"rl"})


async def test_a_dm_is_its_users_own_and_follows_the_callers_locale(bot: Bot) -> None:
    answer = await bot.command("subscribe", "rl", channel_id=DM_CHANNEL, guild_id=None, locale="ko")
    assert "rl" in texts(answer["data"])
    found = await record(bot.engine, DM_CHANNEL)
    assert found is not None and found.chat.kind == ChatKind.PRIVATE and found.chat.lang == "ko"


async def test_a_slow_command_is_deferred_then_edited(bot: Bot) -> None:
    answer = await bot.command("tags")
    assert answer["type"] == 5
    assert answer["data"]["flags"] & IS_COMPONENTS_V2


async def test_stats_is_for_the_admins_alone(bot: Bot) -> None:
    refused = await bot.command("stats", user_id="80351110224678912")
    assert "admins" in texts(refused["data"])
    allowed = await bot.command("stats", user_id=ADMIN, guild_id=None, channel_id=DM_CHANNEL)
    assert "admins only" not in texts(allowed["data"])


async def test_the_install_link_redirects_to_discords_authorize_page(bot: Bot) -> None:
    async with bot.http.get(f"{bot.base}/discord/install", allow_redirects=False) as response:
        assert response.status == 302
        location = response.headers["Location"]
    assert location.startswith("https://discord.com/oauth2/authorize?")
    assert f"client_id={APPLICATION_ID}" in location
    assert "scope=bot+applications.commands" in location and "permissions=" in location


# ---------------------------------------------------------------------- attacks


async def test_forged_unsigned_stale_and_replayed_interactions_are_401(bot: Bot) -> None:
    body, _ = command_interaction(
        bot.dc, "subscribe", "rl", channel_id=CHANNEL, permissions=MANAGE_CHANNELS
    )
    raw = json.dumps(body).encode()
    from tests.fakes.discord_api import sign_request

    good = sign_request(raw)
    forged = {**good, "X-Signature-Ed25519": "0" * 128}
    stale = sign_request(raw, timestamp=1_000_000)
    unsigned = {"Content-Type": "application/json"}
    other_body = sign_request(raw + b" ")
    for headers in (forged, stale, unsigned, {**other_body}):
        async with bot.http.post(bot.url, data=raw, headers=headers) as response:
            assert response.status == 401
    assert await record(bot.engine, CHANNEL) is None
    async with bot.http.post(bot.url, data=raw, headers=good) as response:
        assert response.status == 200
    async with bot.http.post(bot.url, data=raw, headers=good) as response:  # the replay
        assert response.status == 401


async def test_a_flood_of_refused_interactions_is_one_log_line(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    """50 forged requests and 50 over the size bound: one line each kind, with the reason
    and the count, then at most one a minute (``bot.logs.Refusals``)."""
    caplog.set_level(logging.WARNING, logger="bot")
    forged = {"Content-Type": "application/json", "X-Signature-Ed25519": "0" * 128}
    for _ in range(50):
        async with bot.http.post(bot.url, data=b"{}", headers=forged) as response:
            assert response.status == 401
        async with bot.http.post(bot.url, data=b"x" * (MAX_BODY_BYTES + 1)) as response:
            assert response.status == 400
    lines = [r.getMessage() for r in caplog.records if "interactions refused" in r.getMessage()]
    assert len(lines) == 2, lines
    assert lines[0].startswith("discord: interactions refused (401): ")
    assert lines[1] == "discord: interactions refused (400): too large (1 since the last such line)"


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[1, 2]",
        b"\xff\xfe",
        json.dumps({"type": 2, "data": {"name": 1}}).encode(),
        (b'{"type": 2, "x": ' + b"[" * 200 + b"]" * 200 + b"}"),
        json.dumps({"type": "2"}).encode(),
    ],
)
async def test_signed_malformed_bodies_are_400(bot: Bot, raw: bytes) -> None:
    from tests.fakes.discord_api import sign_request

    async with bot.http.post(bot.url, data=raw, headers=sign_request(raw)) as response:
        assert response.status == 400


async def test_an_oversized_body_is_400_before_anything_is_read(bot: Bot) -> None:
    raw = b"{" + b" " * (300 * 1024) + b"}"
    from tests.fakes.discord_api import sign_request

    async with bot.http.post(bot.url, data=raw, headers=sign_request(raw)) as response:
        assert response.status == 400


# ---------------------------------------------------------------------- buttons


async def delivered_digest(
    dc: FakeDiscord,
    engine: AsyncEngine,
    tmp_path: Path,
    *,
    pages: int = 1,
    tldr: str = "A finding.",
) -> list[dict[str, Any]]:
    """A channel following rl, a digest of ``pages`` pages in both languages delivered to
    it: its messages as Discord keeps them."""
    from tests.integration.test_poll import page, write

    world = await started(engine, tmp_path)
    async with engine.begin() as conn:
        await chat_store.ensure(
            conn,
            defaults=ChatSettings(
                platform=DISCORD,
                chat_id=CHANNEL,
                kind=ChatKind.GROUP,
                filter=filters.parse_filter("rl"),
            ),
        )
    for i in range(pages):
        write(tmp_path, *page(f"p/{i}", lang="en", title=f"Paper {i}", tldr=tldr))
        write(tmp_path, *page(f"p/{i}", lang="ko", title=f"논문 {i}", tldr=tldr))
    await world.poller.poll()
    assert await world.plan() == 1
    rest = RestClient(base_url=dc.base_url, token=DEFAULT_TOKEN)
    dc.route_limit = 100
    try:
        await Delivery(engine=engine, senders={DISCORD: DiscordSender(rest)}).drain()
    finally:
        await rest.close()
    return dc.messages_to(CHANNEL)


async def test_a_vote_answers_its_toast_to_the_presser_alone(
    dc: FakeDiscord, engine: AsyncEngine, tmp_path: Path
) -> None:
    """A 👍 of a delivered digest: counted for the presser, and answered with the vote's
    toast seen by them alone; a forged page id is answered the same way, counting nothing."""
    (sent,) = await delivered_digest(dc, engine, tmp_path)
    (up,) = [c for c in buttons(sent) if c.startswith("vote:+")]
    async with running(dc, engine) as bot:
        answer = await bot.press(up, message=sent, permissions=VIEW_CHANNEL, user_id=VOTER)
        forged = await bot.press("vote:+:999999", permissions=VIEW_CHANNEL)
    assert answer["type"] == 4 and answer["data"]["flags"] & 64
    assert texts(answer["data"]) == t("en", "digestq.vote.up")
    assert forged["type"] == 4 and forged["data"]["flags"] & 64
    assert texts(forged["data"]) == t("en", "digestq.vote.invalid")
    async with engine.connect() as conn:
        stored = (await conn.execute(select(votes.c.user_id, votes.c.value))).all()
    assert [(user, value) for user, value in stored] == [(VOTER, 1)]


async def test_the_tag_picker_updates_the_message_in_place(bot: Bot) -> None:
    await seed_pages(bot.engine)
    shown = await bot.command("subscribe", permissions=MANAGE_CHANNELS)  # the picker
    picker = buttons(shown["data"])
    assert "tog:rl" in picker, texts(shown["data"])
    answer = await bot.press("tog:rl", permissions=MANAGE_CHANNELS)
    assert answer["type"] == 7
    assert "✅" in buttons(answer["data"])["tog:rl"] or "rl" in texts(answer["data"])
    found = await record(bot.engine, CHANNEL)
    assert found is not None and "rl" in found.chat.filter.any_of
    refused = await bot.press("tog:reasoning", permissions=VIEW_CHANNEL)
    assert "reasoning" not in (await record(bot.engine, CHANNEL)).chat.filter.any_of  # type: ignore[union-attr]
    assert refused["type"] in (4, 7)


# ---------------------------------------------------------------------- delivery


def make_page(i: int, *, tldr: str = "A finding.") -> Page:
    return Page(
        source="wiki",
        key=f"papers/2026/p{i}",
        texts=(
            PageText("en", f"Paper {i} @everyone [x](y)", tldr),
            PageText("ko", f"논문 {i}", "요약"),
        ),
        tags=("rl", "reasoning"),
        url=f"https://wiki.example.org/p({i})",
        created=dt.date(2026, 8, 1),
    )


async def test_a_long_digest_is_split_within_discords_limits(dc: FakeDiscord) -> None:
    pages = [make_page(i, tldr="Long finding. " * 60) for i in range(30)]
    digest = build_digest(
        lang="en",
        filter=Filter(any_of=frozenset({"rl"})),
        candidates=[(page, False) for page in pages],
        today=dt.date(2026, 8, 30),
    )
    assert digest is not None
    messages = render.digest_messages(DISCORD, digest)
    assert len(messages) > 1
    rest = RestClient(base_url=dc.base_url, token=DEFAULT_TOKEN)
    dc.route_limit = 100
    sender = DiscordSender(rest)
    try:
        for message in messages:
            assert await sender.send(CHANNEL, message, thread=None)
    finally:
        await rest.close()
    sent = dc.messages_to(CHANNEL)
    assert len(sent) == len(messages)
    assert all(m["flags"] & IS_COMPONENTS_V2 for m in sent)
    assert all(c.body["allowed_mentions"] == {"parse": []} for c in dc.calls(ROUTE))


async def test_a_message_sent_again_is_not_a_duplicate(dc: FakeDiscord) -> None:
    rest = RestClient(base_url=dc.base_url, token=DEFAULT_TOKEN)
    sender = DiscordSender(rest)
    message = render.text_message(DISCORD, "hello *there*")[0]
    try:
        first = await sender.send(CHANNEL, message, thread=None)
        again = await sender.send(CHANNEL, message, thread=None)
    finally:
        await rest.close()
    assert first == again
    assert len(dc.messages_to(CHANNEL)) == 1
    assert dc.messages_to(CHANNEL)[0]["content"] == "hello \\*there\\*"


@pytest.mark.parametrize(
    ("code", "error", "reason"),
    [
        (10003, ChatGone, "unknown_channel"),
        (50007, ChatGone, "blocked"),
        (50001, NotInChannel, "missing_access"),
        (50013, NotInChannel, "missing_permissions"),
        (50083, NotInChannel, "thread_archived"),
    ],
)
async def test_discords_refusals_map_to_the_shared_vocabulary(
    dc: FakeDiscord, code: int, error: type[Exception], reason: str
) -> None:
    channel = CHANNEL if code != 10003 else "1399999999999999999"
    if code != 10003:
        dc.channel_errors[channel] = code
    rest = RestClient(base_url=dc.base_url, token=DEFAULT_TOKEN)
    try:
        with pytest.raises(error) as raised:
            await DiscordSender(rest).send(
                channel, render.text_message(DISCORD, "x")[0], thread=None
            )
    finally:
        await rest.close()
    assert getattr(raised.value, "code", None) == reason
    if code != 10003:  # Discord's invalid requests are its 401, 403 and 429 answers
        assert rest.invalid.count() == (0 if code == 50083 else 1)


async def test_server_errors_429s_and_bad_bodies(dc: FakeDiscord) -> None:
    rest = RestClient(base_url=dc.base_url, token=DEFAULT_TOKEN)
    sender = DiscordSender(rest)
    message = render.text_message(DISCORD, "x")[0]
    try:
        dc.fail_next(ROUTE, status=502)
        with pytest.raises(TransientError):
            await sender.send(CHANNEL, message, thread=None)
        dc.route_limit = 1
        await sender.send(CHANNEL, render.text_message(DISCORD, "y")[0], thread=None)
        assert sender.pacing.chats.free_in(CHANNEL) > 0  # the bucket is used up: held
        with pytest.raises(RateLimited) as limited:
            await sender.send(CHANNEL, render.text_message(DISCORD, "z")[0], thread=None)
        assert 0 < limited.value.retry_after <= 5
        from bot.models import Outgoing

        other = dc.add_channel("1300000000000000008")
        with pytest.raises(PermanentError) as bad:
            await sender.send(other, Outgoing(text=""), thread=None)
        assert bad.value.code in ("invalid_form_body", "50006")
    finally:
        await rest.close()


async def test_a_global_429_holds_every_request_of_the_process(dc: FakeDiscord) -> None:
    dc.global_rate = 1
    other = dc.add_channel("1300000000000000009")
    rest = RestClient(base_url=dc.base_url, token=DEFAULT_TOKEN)
    sender = DiscordSender(rest)
    try:
        # Two sends at once, so both arrive within the same second however busy the machine
        # is: one goes, the other meets the global limit.
        outcomes = await asyncio.gather(
            sender.send(CHANNEL, render.text_message(DISCORD, "a")[0], thread=None),
            sender.send(other, render.text_message(DISCORD, "b")[0], thread=None),
            return_exceptions=True,
        )
        [limited] = [o for o in outcomes if isinstance(o, RateLimited)]
        assert [o for o in outcomes if isinstance(o, BaseException)] == [limited]
        assert limited.code == "global_rate_limited"
        assert rest.global_until > rest.now()
        # Until it ends, a message is refused at once, with no request: the engine sends
        # it again through the pace, so the sends held meanwhile do not all go at once.
        with pytest.raises(RateLimited) as held:
            await sender.send(other, render.text_message(DISCORD, "c")[0], thread=None)
        assert 0 < held.value.retry_after <= limited.retry_after
        assert len(dc.calls(ROUTE)) == 2
        # Other requests wait it out.
        assert (await rest.request("GET", "/users/@me"))["bot"] is True
        await asyncio.sleep(max(0.0, rest.global_until - rest.now()) + 1.0)
        await sender.send(other, render.text_message(DISCORD, "d")[0], thread=None)
    finally:
        await rest.close()
    assert len(dc.limit_violations) == 1


async def test_the_engine_delivers_a_digest_and_stops_a_gone_channel(
    dc: FakeDiscord, engine: AsyncEngine, tmp_path: Path
) -> None:
    world = await started(engine, tmp_path)
    gone = "1399999999999999999"
    async with engine.begin() as conn:
        for chat_id in (CHANNEL, gone):
            await chat_store.ensure(
                conn,
                defaults=ChatSettings(
                    platform=DISCORD,
                    chat_id=chat_id,
                    kind=ChatKind.GROUP,
                    filter=filters.parse_filter("rl"),
                ),
            )
    await world.publish("p/new", tags="[rl]")
    assert await world.plan() == 2
    rest = RestClient(base_url=dc.base_url, token=DEFAULT_TOKEN)
    try:
        await Delivery(engine=engine, senders={DISCORD: DiscordSender(rest)}).drain()
    finally:
        await rest.close()
    sent = dc.messages_to(CHANNEL)
    assert len(sent) == 1 and sent[0]["flags"] & IS_COMPONENTS_V2
    assert any(label.endswith("👍") for label in buttons(sent[0]).values())
    stopped = await record(engine, gone)
    assert stopped is not None and stopped.chat.state == ChatState.INACTIVE
    assert stopped.inactive_code == "unknown_channel"


SIGNED_AT = SigningTimes()
ROUTED_KEYS = st.sampled_from(
    ["type", "id", "application_id", "channel_id", "token", "guild_id", "member", "user",
     "data", "locale", "channel", "app_permissions", "message"]
)  # fmt: skip
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["id", "user", "permissions", "name", "custom_id", "options"])
            | st.text(max_size=5),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)


@hypothesis_settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.dictionaries(ROUTED_KEYS, JSON_VALUES, max_size=6),
    kind=st.sampled_from([1, 2, 3, 4, 5, None]),
)
async def test_any_signed_interaction_is_answered_without_500(
    bot: Bot, body: dict[str, Any], kind: int | None
) -> None:
    from tests.fakes.discord_api import sign_request

    if kind is not None:
        body = {**body, "type": kind}
    raw = json.dumps(body).encode()
    headers = sign_request(raw, timestamp=SIGNED_AT.fresh(raw))  # never a replay
    async with bot.http.post(bot.url, data=raw, headers=headers) as response:
        assert response.status in (200, 400), await response.text()


async def test_the_stats_chart_follows_as_an_attachment_the_caller_alone_sees(bot: Bot) -> None:
    pytest.importorskip("matplotlib", reason="charts need the charts extra (matplotlib)")
    answer = await bot.command("stats", user_id=ADMIN, guild_id=None, channel_id=DM_CHANNEL)
    assert answer["data"]["flags"] & 64
    (upload,) = await bot.dc.wait_for(
        lambda c: c.route == "POST /webhooks/{webhook_id}/{webhook_token}" and bool(c.files),
        timeout=30,
    )
    assert upload.ok and upload.files["files[0]"].startswith(b"\x89PNG")
    assert upload.body["flags"] & 64
    assert upload.body["attachments"][0]["description"] == t("en", "charts.stats.alt", days=14)


async def test_the_language_toggle_edits_the_digest_in_place(
    dc: FakeDiscord, engine: AsyncEngine, tmp_path: Path
) -> None:
    (sent,) = await delivered_digest(dc, engine, tmp_path)
    (toggle_id,) = [c for c in buttons(sent) if c.startswith("lang:")]
    assert toggle_id.startswith("lang:ko:")
    async with running(dc, engine) as bot:
        answer = await bot.press(toggle_id, message=sent, permissions=MANAGE_CHANNELS)
    assert answer["type"] == 7
    assert "논문 0" in texts(answer["data"])
    assert any(c.startswith("lang:en:") for c in buttons(answer["data"]))


async def test_a_member_who_may_not_manage_gets_the_other_language_to_themselves(
    dc: FakeDiscord, engine: AsyncEngine, tmp_path: Path
) -> None:
    """Pressed by a member who may not manage the channel, the toggle changes nothing the
    others see: the digest in the other language comes to the presser alone."""
    (sent,) = await delivered_digest(dc, engine, tmp_path, pages=1, tldr="A finding.")
    (toggle_id,) = [c for c in buttons(sent) if c.startswith("lang:")]
    async with running(dc, engine) as bot:
        answer = await bot.press(toggle_id, message=sent, permissions=VIEW_CHANNEL)
    assert answer["type"] == 4 and answer["data"]["flags"] & 64
    assert "논문 0" in texts(answer["data"])
    assert dc.messages_to(CHANNEL) == [sent]  # the channel's message as it was


@pytest.mark.parametrize("manages", [True, False], ids=["manager", "member"])
async def test_a_digest_of_several_messages_toggled(
    dc: FakeDiscord, engine: AsyncEngine, tmp_path: Path, manages: bool
) -> None:
    """A digest too long for one message: who manages the channel gets the other
    language's messages posted there (as Telegram's administrators); anyone else gets them
    to themselves, ephemeral every one, so a member cannot fill the channel with copies."""
    sent = await delivered_digest(dc, engine, tmp_path, pages=30, tldr="Long finding. " * 60)
    assert len(sent) > 1
    (toggle_id,) = [c for c in buttons(sent[-1]) if c.startswith("lang:")]
    permissions = MANAGE_CHANNELS if manages else VIEW_CHANNEL
    async with running(dc, engine) as bot:
        answer = await bot.press(toggle_id, message=sent[-1], permissions=permissions)
        parts = [answer["data"]] if answer["type"] == 4 else []
        expected = len(sent) if manages else len(sent) - 1

        def followed() -> list[Any]:
            return [c.body for c in dc.followups() if c.route.startswith("POST")]

        await wait_until(lambda: len(followed()) >= expected, seconds=20)
        parts += followed()
    if manages:
        assert answer["type"] == 6 and not parts[0].get("flags", 0) & 64
    else:
        assert answer["type"] == 4
        assert all(part["flags"] & 64 for part in parts)  # the presser's alone
    assert len(parts) == len(sent)
    assert "논문 0" in texts(parts[0])
    assert dc.messages_to(CHANNEL) == sent  # nothing edited or added through the bot token


async def paused_by_discord(bot: Bot, *, reason: str, code: str) -> None:
    """The channel follows rl, and its chat is paused as a refusal of Discord's pauses it."""
    await bot.command("subscribe", "rl", permissions=MANAGE_CHANNELS)
    found = await record(bot.engine, CHANNEL)
    assert found is not None
    async with bot.engine.begin() as conn:
        await chat_store.deactivate(
            conn, pk=found.pk, reason=reason, code=code, state=ChatState.PAUSED
        )


async def test_a_chat_paused_for_permissions_resumes_when_an_interaction_shows_it_may_post(
    bot: Bot,
) -> None:
    await paused_by_discord(bot, reason="50013 Missing Permissions", code="missing_permissions")
    await bot.command("settings")  # app_permissions: VIEW_CHANNEL | SEND_MESSAGES
    found = await record(bot.engine, CHANNEL)
    assert found is not None and found.chat.state == ChatState.ACTIVE
    await bot.command("pause", permissions=MANAGE_CHANNELS)  # paused by its members: stays
    await bot.command("settings")
    found = await record(bot.engine, CHANNEL)
    assert found is not None and found.chat.state == ChatState.PAUSED


async def test_a_refused_members_command_resumes_a_chat_the_bot_may_post_in_again(
    bot: Bot,
) -> None:
    """The refusal is answered at once; the chat still learns the bot may post there."""
    await paused_by_discord(bot, reason="50083 Thread is archived", code="thread_archived")
    refused = await bot.command("subscribe", "agents", permissions=VIEW_CHANNEL | SEND_MESSAGES)
    assert texts(refused["data"]) == t("en", "cmd.discord_manage_only")

    async def resumed() -> bool:
        now = await record(bot.engine, CHANNEL)
        return now is not None and now.chat.state == ChatState.ACTIVE

    await wait_until(resumed, seconds=10, what="the chat to resume")
    now = await record(bot.engine, CHANNEL)
    assert now is not None and now.chat.filter.any_of == frozenset({"rl"})


async def test_a_broadcast_is_previewed_then_sent_by_its_button(bot: Bot) -> None:
    await bot.command("subscribe", "rl", permissions=MANAGE_CHANNELS)
    where = {"user_id": ADMIN, "guild_id": None, "channel_id": DM_CHANNEL}
    preview = await bot.command("broadcast", "Hello everyone", **where)
    shown = buttons(preview["data"])
    send = next(custom_id for custom_id, label in shown.items() if label == "Send")
    assert any(label == "Cancel" for label in shown.values())
    refused = await bot.press(send)  # a member who is no admin
    assert "admins" in texts(refused["data"])
    answer = await bot.press(send, **where)
    assert answer["type"] == 7
    assert "1" in texts(answer["data"])  # queued for the one chat that follows something


async def test_an_admin_turns_alerts_on_in_their_dm(bot: Bot) -> None:
    answer = await bot.command("alerts", "on", user_id=ADMIN, guild_id=None, channel_id=DM_CHANNEL)
    assert t("en", "dest.alerts.on") in texts(answer["data"])
    refused = await bot.command("alerts", "on", guild_id=None, channel_id=DM_CHANNEL)
    assert "admins" in texts(refused["data"])


async def test_a_refused_body_is_logged_with_discords_detail(
    dc: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    from bot.channels.discord.payload import DiscordPayload
    from bot.models import Outgoing

    too_long = DiscordPayload(components=({"type": 10, "content": "x" * 4001},))
    rest = RestClient(base_url=dc.base_url, token=DEFAULT_TOKEN)
    try:
        with pytest.raises(PermanentError) as refused:
            await DiscordSender(rest).send(
                CHANNEL, Outgoing(text="x", payload=too_long), thread=None
            )
    finally:
        await rest.close()
    assert refused.value.code == "invalid_form_body"
    logged = [r.getMessage() for r in caplog.records if "50035" in r.getMessage()]
    assert logged and "components.0" in logged[0]  # where Discord says the fault is


async def test_a_refused_token_is_the_platforms_auth_error_until_it_works(
    dc: FakeDiscord,
) -> None:
    rest = RestClient(base_url=dc.base_url, token="MTIz.wrong.token-that-discord-refuses")
    sender = DiscordSender(rest)
    try:
        from bot.errors import PlatformAuthFailed

        with pytest.raises(PlatformAuthFailed):
            await sender.send(CHANNEL, render.text_message(DISCORD, "x")[0], thread=None)
        assert rest.auth_error is not None and "DISCORD_BOT_TOKEN" in rest.auth_error
        assert "wrong" not in rest.auth_error
    finally:
        await rest.close()


async def test_a_subscription_made_in_a_thread_delivers_into_it(bot: Bot) -> None:
    thread = bot.dc.add_channel("1300000000000000077", kind=11)
    await bot.command(
        "subscribe", "rl", channel_id=thread, channel_type=11, permissions=MANAGE_CHANNELS
    )
    found = await record(bot.engine, thread)
    assert found is not None and found.chat.address == f"discord:{thread}"
    rest = RestClient(base_url=bot.dc.base_url, token=DEFAULT_TOKEN)
    try:
        await DiscordSender(rest).send(thread, render.text_message(DISCORD, "in")[0], thread=None)
    finally:
        await rest.close()
    assert bot.dc.messages_to(thread)[0]["content"] == "in"
