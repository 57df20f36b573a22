"""Slack for many workspaces: the OAuth install, each workspace's token, uninstall, rotation.

The whole deployment is the real one (``open_app``: store, planner, delivery, the Slack
sender and channel with Bolt's OAuth flow), on each database, against FakeSlack as every
workspace's Web API and as Slack's side of the install (``authorize`` gives the code Slack
would put in the redirect). The browser is an aiohttp session with a cookie jar.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from cryptography.fernet import Fernet
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.app import App, open_app
from bot.channels.platform import RequestHook, Route
from bot.channels.slack.channel import SlackChannel
from bot.channels.slack.connect import SlackConnection
from bot.channels.slack.oauth import UNINSTALL_CODES, Workspaces
from bot.channels.slack.spec import EVENTS, INSTALL, REDIRECT
from bot.commands import Caller
from bot.i18n import t
from bot.models import ChatKind, ChatSettings, ChatState, Platform
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.rules.filters import parse_filter
from bot.store import chats as chat_store
from bot.store import teams as team_store
from bot.store.chats import ChatRecord
from bot.store.installations import TokenCipher
from bot.store.schema import broadcasts, chats, slack_installations
from tests.conftest import Settings
from tests.fakes.slack_api import (
    FakeSlack,
    event_body,
    shown_for_command,
    signed_headers,
    slash_command_body,
)
from tests.integration.test_planner import LATER
from tests.integration.test_poll import page, write
from tests.integration.test_slack import served
from tests.waiting import wait_until

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
STATE_SECRET = "state-secret-0123456789abcdef0123"
TOKEN_KEY = Fernet.generate_key().decode()
TEAM_A, TEAM_B = "TA1", "TB2"
CHANNEL_A, CHANNEL_B = "CA1", "CB2"
INSTALLER_A, INSTALLER_B = "UADMINA", "UADMINB"


def slack_of(app: App) -> SlackConnection:
    """The app's Slack: its client, its installed workspaces and its OAuth states."""
    slack = app.connected(SlackConnection)
    assert slack is not None
    return slack


def slack_routes(channel: SlackChannel) -> dict[Route, RequestHook]:
    """The channel's events and installation, on Slack's routes."""
    return {
        EVENTS: channel.handle_request,
        INSTALL: channel.handle_install,
        REDIRECT: channel.handle_install,
    }


def oauth_settings(sl: FakeSlack, database_url: str, wiki: Path, **extra: Any) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None,
        database_url=database_url,
        wiki_sources=(str(wiki),),
        slack_client_id=sl.client_id,
        slack_client_secret=sl.client_secret,
        slack_signing_secret=SIGNING_SECRET,
        slack_state_secret=STATE_SECRET,
        slack_token_key=TOKEN_KEY,
        slack_api_base_url=sl.base_url,
        **extra,
    )


@dataclass
class Deployment:
    sl: FakeSlack
    app: App
    channel: SlackChannel
    base: str
    browser: aiohttp.ClientSession
    wiki: Path
    days: int = 0
    cookie: str | None = None  # the state cookie the browser holds

    async def install_page(self) -> tuple[int, str, dict[str, list[str]]]:
        """Open ``/slack/install``: status, page, and the query of its Add to Slack link.

        The state cookie is ``Secure``: a browser keeps it for the bot's https address; this
        test server is plain http, so the test keeps it as the browser would.
        """
        async with self.browser.get(f"{self.base}/slack/install") as response:
            text = await response.text()
            cookies = response.headers.getall("Set-Cookie", [])
        for cookie in cookies:
            assert "Secure" in cookie and "HttpOnly" in cookie
            self.cookie = cookie.split(";", 1)[0]
        links = re.findall(r'href="([^"]+)"', text)
        query = parse_qs(urlsplit(html.unescape(links[0])).query) if links else {}
        return response.status, text, query

    async def redirect(self, *, cookie: str | None = None, **query: str) -> tuple[int, str]:
        """Slack sends the browser back to ``/slack/oauth_redirect`` with ``query``."""
        cookie = cookie or self.cookie
        headers = {"Cookie": cookie} if cookie else {}
        async with self.browser.get(
            f"{self.base}/slack/oauth_redirect", params=query, headers=headers
        ) as response:
            for set_cookie in response.headers.getall("Set-Cookie", []):
                if "deleted" in set_cookie:
                    self.cookie = None
            return response.status, await response.text()

    async def install(self, team: str, *, installer: str) -> tuple[int, str]:
        """The whole install: the page, Slack's approval, the redirect back."""
        status, _, query = await self.install_page()
        assert status == 200
        code = self.sl.authorize(team, user_id=installer)
        return await self.redirect(code=code, state=query["state"][0])

    async def post(self, body: bytes) -> tuple[int, str]:
        headers = signed_headers(SIGNING_SECRET, body)
        async with self.browser.post(f"{self.base}/slack/events", data=body, headers=headers) as r:
            return r.status, await r.text()

    async def command(self, text: str, *, team: str, channel: str, user: str) -> str:
        """``/trend text`` in a workspace's channel; the text the user was shown."""
        _, shown = await shown_for_command(
            self.sl,
            self.post,
            text,
            response_name=f"r{len(self.sl.responses)}",
            user_id=user,
            channel_id=channel,
            team_id=team,
        )
        return str(shown["text"])

    async def event(self, event: dict[str, Any], *, team: str, event_id: str) -> int:
        status, _ = await self.post(event_body(event, team_id=team, event_id=event_id))
        return status

    async def publish(self, key: str, *, tags: str) -> None:
        write(self.wiki, *page(key, tags=tags))
        await self.app.poller.poll()

    async def deliver(self) -> None:
        """Plan as if a day had passed (every daily digest due), then send everything."""
        self.days += 1
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None) + self.days * LATER
        await self.app.planner.plan_due(now=now)
        await self.app.delivery().drain()

    async def state_becomes(self, chat_id: str, state: ChatState) -> ChatRecord:
        """Wait (polling, with a deadline) until the chat is in ``state``: events are acted
        on after Slack's acknowledgement."""
        last: ChatRecord | None = None

        async def in_state() -> ChatRecord | None:
            nonlocal last
            last = await self.chat(chat_id)
            return last if last is not None and last.chat.state == state else None

        return await wait_until(
            in_state, what=lambda: f"{chat_id} in {state}; it is {last and last.chat.state}"
        )

    async def chat(self, chat_id: str) -> ChatRecord | None:
        async with self.app.engine.connect() as conn:
            return await chat_store.get(conn, platform=Platform.SLACK, chat_id=chat_id)


@asynccontextmanager
async def deployment(
    sl: FakeSlack, database_url: str, tmp_path: Path, **extra: Any
) -> AsyncIterator[Deployment]:
    wiki = tmp_path / "wiki"
    write(wiki, *page("p/baseline", tags="[rl]"))
    settings = oauth_settings(sl, database_url, wiki, **extra)
    async with open_app(settings) as app:
        slack = slack_of(app)
        channel = SlackChannel(
            settings=settings,
            core=app.core,
            client=slack.client,
            workspaces=slack.workspaces,
            state_store=slack.states,
        )
        hooks = WebHooks(routes=slack_routes(channel))
        jar = aiohttp.DummyCookieJar()
        async with served(channel, app.engine, hooks, cookie_jar=jar) as (base, browser):
            await app.poller.poll()  # the baseline scan
            yield Deployment(sl, app, channel, base, browser, wiki)


@pytest.fixture
async def sl() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.add_workspace(TEAM_A, name="Team A")
        server.add_workspace(TEAM_B, name="Team B")
        server.add_channel(CHANNEL_A, name="research", team_id=TEAM_A)
        server.add_channel(CHANNEL_B, name="papers", team_id=TEAM_B)
        yield server


@pytest.fixture
async def two(sl: FakeSlack, database_url: str, tmp_path: Path) -> AsyncIterator[Deployment]:
    """Both workspaces installed; A's channel follows rl, B's robotics."""
    async with deployment(sl, database_url, tmp_path) as d:
        assert (await d.install(TEAM_A, installer=INSTALLER_A))[0] == 200
        assert (await d.install(TEAM_B, installer=INSTALLER_B))[0] == 200
        await d.command("subscribe rl", team=TEAM_A, channel=CHANNEL_A, user="UA1")
        await d.command("subscribe robotics", team=TEAM_B, channel=CHANNEL_B, user="UB1")
        yield d


def texts_to(sl: FakeSlack, channel: str) -> str:
    return "\n".join(json.dumps(m) for m in sl.messages_to(channel))


# ---------------------------------------------------------------------- install


async def test_two_workspaces_each_get_only_their_pages_with_their_own_token(
    two: Deployment,
) -> None:
    sl = two.sl
    await two.publish("papers/2026/2611.00001-rl-paper", tags="[rl]")
    await two.publish("papers/2026/2611.00002-robot-paper", tags="[robotics]")
    await two.deliver()

    assert "rl-paper" in texts_to(sl, CHANNEL_A) and "robot-paper" not in texts_to(sl, CHANNEL_A)
    assert "robot-paper" in texts_to(sl, CHANNEL_B) and "rl-paper" not in texts_to(sl, CHANNEL_B)
    posts = sl.calls("chat.postMessage", ok=True)
    assert {call.channel for call in posts} == {CHANNEL_A, CHANNEL_B}
    for call in posts:
        team = TEAM_A if call.channel == CHANNEL_A else TEAM_B
        assert call.team == team and call.token in sl.tokens_of(team)
    assert sl.calls("chat.postMessage", ok=False) == []
    async with two.app.engine.connect() as conn:
        listed = {chat_store.describe(r)["chat"] for r in await chat_store.listing(conn)}
    assert listed == {f"slack:{TEAM_A}/{CHANNEL_A}", f"slack:{TEAM_B}/{CHANNEL_B}"}


async def test_tokens_are_encrypted_at_rest(two: Deployment) -> None:
    async with two.app.engine.connect() as conn:
        rows = (await conn.execute(select(slack_installations))).mappings().all()
    assert {row["team_id"] for row in rows} == {TEAM_A, TEAM_B}
    issued = set(two.sl.tokens_of(TEAM_A) + two.sl.tokens_of(TEAM_B))
    cipher = TokenCipher(TOKEN_KEY)
    for row in rows:
        assert not row["bot_token"].startswith("xox")
        assert all(token not in row["bot_token"] for token in issued)
        assert cipher.decrypt(row["bot_token"]) in two.sl.tokens_of(row["team_id"])
        assert row["installer_user_id"] == (
            INSTALLER_A if row["team_id"] == TEAM_A else INSTALLER_B
        )
    wrong = TokenCipher(Fernet.generate_key().decode())
    with pytest.raises(Exception, match="SLACK_TOKEN_KEY"):
        wrong.decrypt(rows[0]["bot_token"])


async def test_install_page_links_to_slack_with_the_app_and_its_scopes(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    async with deployment(
        sl, database_url, tmp_path, public_base_url="https://bot.example.org"
    ) as d:
        status, page_html, query = await d.install_page()
    assert status == 200
    assert 'lang="en"' in page_html and "Add to Slack" in page_html
    assert query["client_id"] == [sl.client_id]
    assert set(query["scope"][0].split(",")) == {
        "commands", "chat:write", "chat:write.public", "channels:read", "groups:read",
        "im:read", "users:read", "files:write",  # files:write: the charts of stats and feedback
    }  # fmt: skip
    assert query["redirect_uri"] == ["https://bot.example.org/slack/oauth_redirect"]
    assert len(query["state"][0]) >= 32


async def test_a_state_works_once(sl: FakeSlack, database_url: str, tmp_path: Path) -> None:
    async with deployment(sl, database_url, tmp_path) as d:
        _, _, query = await d.install_page()
        state, cookie = query["state"][0], d.cookie
        first = await d.redirect(code=sl.authorize(TEAM_A, user_id=INSTALLER_A), state=state)
        assert d.cookie is None  # the browser was told to forget it
        # Replayed with the cookie and state captured from the first install:
        replay = await d.redirect(
            code=sl.authorize(TEAM_B, user_id=INSTALLER_B), state=state, cookie=cookie
        )
        async with d.app.engine.connect() as conn:
            teams = {r[0] for r in await conn.execute(select(slack_installations.c.team_id))}
    assert first[0] == 200
    assert replay[0] == 401 and "already used" in replay[1]
    assert teams == {TEAM_A}


async def test_an_expired_state_is_refused(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    async with deployment(sl, database_url, tmp_path) as d:
        _, _, query = await d.install_page()
        states = slack_of(d.app).states
        assert states is not None
        later = time.time() + 11 * 60
        states.clock = lambda: later  # eleven minutes later
        status, text = await d.redirect(
            code=sl.authorize(TEAM_A, user_id=INSTALLER_A), state=query["state"][0]
        )
        async with d.app.engine.connect() as conn:
            rows = (await conn.execute(select(slack_installations))).all()
    assert status == 401 and "expired" in text
    assert rows == []
    assert sl.calls("oauth.v2.access") == []  # the code was never exchanged


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ({}, 400),  # no state, no code
        ({"code": "1.2.3"}, 400),  # no state
        ({"state": "x" * 40, "code": "1.2.3"}, 400),  # not the state of this browser
        ({"state": "", "code": ""}, 400),
        ({"error": "access_denied", "state": "s"}, 200),  # cancelled on Slack's page
        ({"state": "s" * 3000}, 400),  # longer than anything Slack sends
    ],
    ids=["empty", "no-state", "foreign-state", "blank", "cancelled", "too-long"],
)
async def test_a_malformed_redirect_is_answered_and_installs_nothing(
    sl: FakeSlack, database_url: str, tmp_path: Path, query: dict[str, str], status: int
) -> None:
    async with deployment(sl, database_url, tmp_path) as d:
        got, text = await d.redirect(**query)
        async with d.app.engine.connect() as conn:
            rows = (await conn.execute(select(slack_installations))).all()
    assert got == status
    assert "Traceback" not in text
    assert rows == []


async def test_a_code_slack_refuses_is_a_page_not_an_install(
    sl: FakeSlack, database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with deployment(sl, database_url, tmp_path) as d:
        _, _, query = await d.install_page()
        status, text = await d.redirect(code="9.9.not-a-code", state=query["state"][0])
    assert status == 401 and "did not confirm" in text
    assert [c.error for c in sl.calls("oauth.v2.access")] == ["invalid_code"]
    assert "oauth.v2.access" in caplog.text  # Bolt said why, without the code
    assert "9.9.not-a-code" not in caplog.text


async def test_the_pages_speak_korean_to_a_korean_browser(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    async with deployment(sl, database_url, tmp_path) as d:
        d.browser.headers["Accept-Language"] = "ko-KR,ko;q=0.9"
        _, page_html, _ = await d.install_page()
        status, done = await d.install(TEAM_A, installer=INSTALLER_A)
    assert 'lang="ko"' in page_html and "Slack에 추가" in page_html
    assert status == 200 and "설치 완료" in done


# ---------------------------------------------------------------------- uninstall


async def test_uninstall_of_one_workspace_leaves_the_other_working(two: Deployment) -> None:
    sl = two.sl
    sl.uninstall(TEAM_A)
    assert await two.event({"type": "app_uninstalled"}, team=TEAM_A, event_id="Ev1") == 200

    a = await two.state_becomes(f"{TEAM_A}/{CHANNEL_A}", ChatState.INACTIVE)
    b = await two.chat(f"{TEAM_B}/{CHANNEL_B}")
    assert (a.inactive_reason or "").startswith("app_uninstalled")
    assert a.inactive_code == "app_uninstalled"
    assert b is not None and b.chat.state == ChatState.ACTIVE
    async with two.app.engine.connect() as conn:
        teams = {r[0] for r in await conn.execute(select(slack_installations.c.team_id))}
    assert teams == {TEAM_B}

    await two.publish("papers/2026/2611.00003-both", tags="[rl, robotics]")
    await two.deliver()
    assert "both" in texts_to(sl, CHANNEL_B)
    assert sl.messages_to(CHANNEL_A) == []
    assert all(call.team == TEAM_B for call in sl.calls("chat.postMessage"))


async def test_a_reinstall_makes_the_chats_active_without_replaying(two: Deployment) -> None:
    sl = two.sl
    sl.uninstall(TEAM_A)
    await two.event({"type": "app_uninstalled"}, team=TEAM_A, event_id="Ev1")
    await two.state_becomes(f"{TEAM_A}/{CHANNEL_A}", ChatState.INACTIVE)
    await two.publish("papers/2026/2611.00004-missed", tags="[rl]")
    await two.deliver()

    assert (await two.install(TEAM_A, installer=INSTALLER_A))[0] == 200
    a = await two.chat(f"{TEAM_A}/{CHANNEL_A}")
    assert a is not None and a.chat.state == ChatState.ACTIVE
    await two.publish("papers/2026/2611.00005-after", tags="[rl]")
    await two.deliver()

    received = texts_to(sl, CHANNEL_A)
    assert "after" in received and "missed" not in received
    posts = [c for c in sl.calls("chat.postMessage", ok=True) if c.channel == CHANNEL_A]
    assert posts and all(c.token == sl.tokens_of(TEAM_A)[-1] for c in posts)  # the new token


async def test_tokens_revoked_stops_that_workspace_only(two: Deployment) -> None:
    event = {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["U0BOT2"]}}
    assert await two.event(event, team=TEAM_A, event_id="Ev2") == 200
    await two.state_becomes(f"{TEAM_A}/{CHANNEL_A}", ChatState.INACTIVE)
    b = await two.chat(f"{TEAM_B}/{CHANNEL_B}")
    assert b is not None and b.chat.state == ChatState.ACTIVE


async def test_a_token_refused_without_an_event_stops_only_its_chats(two: Deployment) -> None:
    sl = two.sl
    sl.uninstall(TEAM_A)  # Slack revoked it; the event never arrived
    await two.publish("papers/2026/2611.00006-both", tags="[rl, robotics]")
    await two.deliver()

    a = await two.chat(f"{TEAM_A}/{CHANNEL_A}")
    assert a is not None and a.chat.state == ChatState.INACTIVE
    assert a.inactive_code in UNINSTALL_CODES  # a reinstall makes it active again
    assert "both" in texts_to(sl, CHANNEL_B)
    assert two.app.senders[Platform.SLACK].auth.error is None  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- token rotation


async def test_a_rotating_token_is_refreshed_before_it_expires(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    sl.token_rotation = True
    sl.token_lifetime_seconds = 3600  # within the two hours before expiry: refresh now
    async with deployment(sl, database_url, tmp_path) as d:
        assert (await d.install(TEAM_A, installer=INSTALLER_A))[0] == 200
        first = sl.tokens_of(TEAM_A)[0]
        sl.token_lifetime_seconds = 13 * 3600  # what the refresh gives lasts
        await d.command("subscribe rl", team=TEAM_A, channel=CHANNEL_A, user="UA1")
        await d.publish("papers/2026/2611.00007-rotated", tags="[rl]")
        await d.deliver()

        refreshes = [c for c in sl.calls("oauth.v2.access") if c.refreshed]
        posts = sl.calls("chat.postMessage")
        assert len(refreshes) == 1 and refreshes[0].ok
        new = sl.tokens_of(TEAM_A)[-1]
        assert new != first
        assert posts and all(c.ok and c.token == new for c in posts)
        assert sl.calls(ok=False) == []  # nothing was ever sent with an expired token

        # Another replica on the same database finds the token fresh: no second refresh.
        assert slack_of(d.app).workspaces is not None
        other = Workspaces(
            engine=d.app.engine,
            cipher=TokenCipher(TOKEN_KEY),
            client_id=sl.client_id,
            client_secret=sl.client_secret,
            client=slack_of(d.app).client,
        )
        assert await other.token(team_id=TEAM_A) == new
        assert len([c for c in sl.calls("oauth.v2.access") if c.refreshed]) == 1


async def test_a_long_lived_rotating_token_is_not_refreshed(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    sl.token_rotation = True  # 12 hours: more than two hours left
    async with deployment(sl, database_url, tmp_path) as d:
        await d.install(TEAM_A, installer=INSTALLER_A)
        await d.command("subscribe rl", team=TEAM_A, channel=CHANNEL_A, user="UA1")
        await d.publish("papers/2026/2611.00008-kept", tags="[rl]")
        await d.deliver()
    assert [c for c in sl.calls("oauth.v2.access") if c.refreshed] == []
    assert {c.token for c in sl.calls("chat.postMessage", ok=True)} == {sl.tokens_of(TEAM_A)[0]}


# ---------------------------------------------------------------------- admins


async def test_the_installer_is_that_workspaces_admin(two: Deployment) -> None:
    # A second channel in A: A's installer reaches A's 2 chats, never B's.
    two.sl.add_channel("CA9", name="more", team_id=TEAM_A)
    await two.command("subscribe rl", team=TEAM_A, channel="CA9", user="UA1")

    preview = await two.command(
        "broadcast Hello team", team=TEAM_A, channel=CHANNEL_A, user=INSTALLER_A
    )
    refused = await two.command("broadcast Hi", team=TEAM_A, channel=CHANNEL_A, user="UA1")
    elsewhere = await two.command("stats", team=TEAM_B, channel=CHANNEL_B, user=INSTALLER_A)
    stats = await two.command("stats", team=TEAM_A, channel=CHANNEL_A, user=INSTALLER_A)

    assert "Broadcast preview — this exact text goes to 2 chats (" in preview
    assert "Hello team" in preview
    assert refused == t("en", "cmd.admins_only")
    assert elsewhere == t("en", "cmd.admins_only")  # A's installer is nobody in B
    assert stats.startswith(t("en", "admin.stats.header"))


async def test_a_workspace_admins_stats_count_that_workspace_only(two: Deployment) -> None:
    two.sl.add_channel("CB9", team_id=TEAM_B)
    await two.command("subscribe robotics reasoning", team=TEAM_B, channel="CB9", user="UB1")

    mine = await two.command("stats", team=TEAM_A, channel=CHANNEL_A, user=INSTALLER_A)
    theirs = await two.command("stats", team=TEAM_B, channel=CHANNEL_B, user=INSTALLER_B)

    assert "Chats: Slack 1 active" in mine
    assert t("en", "admin.stats.tags", tags="rl (1)") in mine
    assert "robotics" not in mine and "reasoning" not in mine
    assert "Chats: Slack 2 active" in theirs
    assert "rl (" not in theirs


async def test_a_workspace_broadcast_reaches_that_workspace_only(two: Deployment) -> None:
    from bot.commands.broadcast import SEND

    async with two.app.engine.connect() as conn:
        assert await chat_store.get(conn, platform=Platform.SLACK, chat_id=f"{TEAM_A}/{CHANNEL_A}")
    text = await two.command("broadcast Only A", team=TEAM_A, channel=CHANNEL_A, user=INSTALLER_A)
    assert "Broadcast preview — this exact text goes to 1 chat (" in text
    broadcast_id = await _last_broadcast(two)
    reply = await two.app.admin.handle_action(
        _slack_caller(TEAM_A, CHANNEL_A, INSTALLER_A), action=f"{SEND}{broadcast_id}", lang="en"
    )
    assert reply is not None
    assert f"Broadcast #{broadcast_id} is on its way to 1 chat." in reply.text
    await two.app.delivery().drain()
    assert "Only A" in texts_to(two.sl, CHANNEL_A)
    assert "Only A" not in texts_to(two.sl, CHANNEL_B)


async def test_another_workspaces_installer_cannot_send_a_broadcast(two: Deployment) -> None:
    from bot.commands.broadcast import SEND

    await two.command("broadcast Only A", team=TEAM_A, channel=CHANNEL_A, user=INSTALLER_A)
    broadcast_id = await _last_broadcast(two)
    # B's installer is an admin (of B), but this broadcast is not theirs.
    reply = await two.app.admin.handle_action(
        _slack_caller(TEAM_B, CHANNEL_B, INSTALLER_B, admin=True),
        action=f"{SEND}{broadcast_id}",
        lang="en",
    )
    assert reply is not None and reply.text == t("en", "admin.broadcast.unknown")
    await two.app.delivery().drain()
    assert two.sl.calls("chat.postMessage") == []


def _slack_caller(team: str, channel: str, user: str, *, admin: bool = True) -> Caller:
    return Caller(
        platform=Platform.SLACK,
        chat_id=f"{team}/{channel}",
        user_id=user,
        chat_kind=ChatKind.GROUP,
        workspace=team,
        workspace_admin=admin,
    )


async def _last_broadcast(d: Deployment) -> int:
    async with d.app.engine.connect() as conn:
        return int((await conn.execute(select(func.max(broadcasts.c.id)))).scalar_one())


# ---------------------------------------------------------------------- edges


async def _from_elsewhere(d: Deployment, line: str, *, name: str) -> str:
    """``line`` typed in workspace TC3, which never installed the app: what it is shown."""
    body = slash_command_body(
        "/trend",
        line,
        user_id="UC1",
        channel_id="CC3",
        team_id="TC3",
        response_url=d.sl.response_url(name),
    )
    status, ack = await d.post(body)
    assert status == 200
    return ack or json.dumps(await d.sl.wait_for_response(name), ensure_ascii=False)


@pytest.mark.parametrize("base", [None, "https://bot.example.org"])
async def test_a_workspace_without_the_app_is_told_and_nothing_changes(
    sl: FakeSlack,
    database_url: str,
    tmp_path: Path,
    base: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Told in both languages that the app is not installed there (not "any more"), with
    the install page that preselects the workspace where there is one; logged at INFO once
    an hour for the workspace, never as an ERROR."""
    sl.add_workspace("TC3")
    sl.add_channel("CC3", team_id="TC3")
    async with deployment(sl, database_url, tmp_path, public_base_url=base) as d:
        assert (await d.install(TEAM_A, installer=INSTALLER_A))[0] == 200
        caplog.clear()
        with caplog.at_level(logging.INFO):
            shown = [
                await _from_elsewhere(d, line, name=f"elsewhere{n}")
                for n, line in enumerate(["subscribe rl", "settings", "help"])
            ]
        assert await d.chat("TC3/CC3") is None
    for said in shown:
        if base is None:
            expected = [t(lang, "slack.oauth.not_installed") for lang in ("en", "ko")]
        else:
            link = f"{base}/slack/install?team=TC3"
            expected = [
                t(lang, "slack.oauth.not_installed_link", url=link) for lang in ("en", "ko")
            ]
        assert all(text in said for text in expected), said
        assert "any more" not in said and "더 이상" not in said
    told = [r for r in caplog.records if "not installed" in r.getMessage()]
    assert [(r.levelname, r.name) for r in told] == [("INFO", "bot.channels.slack")]
    assert "TC3" in told[0].getMessage()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_each_workspace_is_paced_on_its_own(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    """``SLACK_WORKSPACE_RATE_PER_SECOND`` caps each workspace: Slack's per-workspace limit
    is never hit in either, and both workspaces' channels are served."""
    sl.workspace_rate = 3
    sl.enforce_limits = True
    channels = {TEAM_A: ["CA1", "CA2", "CA3"], TEAM_B: ["CB1", "CB2", "CB3"]}
    async with deployment(sl, database_url, tmp_path, slack_workspace_rate_per_second=3) as d:
        for team, ids in channels.items():
            await d.install(team, installer=INSTALLER_A if team == TEAM_A else INSTALLER_B)
            for channel in ids:
                sl.add_channel(channel, team_id=team)
                await d.command("subscribe rl", team=team, channel=channel, user="U1")
        await d.publish("papers/2026/2611.00009-paced", tags="[rl]")
        await d.deliver()
    posts = sl.calls("chat.postMessage", ok=True)
    every = sorted(channel for ids in channels.values() for channel in ids)
    assert sorted(c.channel or "" for c in posts) == every
    assert sl.limit_violations == []
    assert {c.team for c in posts} == {TEAM_A, TEAM_B}


async def test_chats_of_the_token_setup_move_to_their_workspace_on_install(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    """A deployment that had one workspace by token and moves to OAuth keeps its chats."""
    async with deployment(sl, database_url, tmp_path) as d:
        async with d.app.engine.begin() as conn:
            record = await chat_store.ensure(
                conn,
                defaults=ChatSettings(
                    platform=Platform.SLACK,
                    chat_id=CHANNEL_A,
                    kind=ChatKind.GROUP,
                    filter=parse_filter("rl"),
                ),
            )
            await team_store.set_workspace(conn, pk=record.pk, team_id=TEAM_A, enterprise_id=None)
        assert (await d.install(TEAM_A, installer=INSTALLER_A))[0] == 200
        moved = await d.chat(f"{TEAM_A}/{CHANNEL_A}")
        await d.publish("papers/2026/2611.00010-moved", tags="[rl]")
        await d.deliver()
    assert moved is not None and moved.pk == record.pk
    assert "moved" in texts_to(sl, CHANNEL_A)


@pytest.fixture
async def fresh(sl: FakeSlack, database_url: str, tmp_path: Path) -> AsyncIterator[Deployment]:
    async with deployment(sl, database_url, tmp_path) as d:
        yield d


QUERY_TEXT = st.text(max_size=80) | st.sampled_from(["", "deleted", "x" * 300])


@hypothesis_settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.dictionaries(
        st.sampled_from(["code", "state", "error", "team", "other"]), QUERY_TEXT, max_size=4
    ),
    cookie=st.none() | QUERY_TEXT,
)
async def test_any_redirect_query_is_answered_and_installs_nothing(
    fresh: Deployment, query: dict[str, str], cookie: str | None
) -> None:
    headers = {"Cookie": f"slack-app-oauth-state={cookie}"} if cookie is not None else {}
    try:
        async with fresh.browser.get(
            f"{fresh.base}/slack/oauth_redirect", params=query, headers=headers
        ) as response:
            status, text = response.status, await response.text()
    except ValueError:  # a header value the client itself refuses to send
        return
    assert status in (200, 400, 401), text
    assert "Traceback" not in text
    async with fresh.app.engine.connect() as conn:
        assert (await conn.execute(select(slack_installations))).first() is None


async def test_slack_not_answering_the_code_exchange_is_a_page_to_retry(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    async with deployment(sl, database_url, tmp_path) as d:
        _, _, query = await d.install_page()
        sl.drop_next("oauth.v2.access")
        status, text = await d.redirect(
            code=sl.authorize(TEAM_A, user_id=INSTALLER_A), state=query["state"][0]
        )
        async with d.app.engine.connect() as conn:
            rows = (await conn.execute(select(slack_installations))).all()
    assert status == 503
    assert t("en", "slack.oauth.failed") in text and "/slack/install" in text
    assert rows == []


async def test_without_a_client_id_the_install_routes_do_not_exist(
    engine: AsyncEngine,
) -> None:
    runner, port = await start_web(
        make_app(engine=engine, hooks=WebHooks()), host="127.0.0.1", port=0
    )
    try:
        async with aiohttp.ClientSession() as http:
            for path in ("/slack/install", "/slack/oauth_redirect?code=1&state=2"):
                async with http.get(f"http://127.0.0.1:{port}{path}") as response:
                    assert response.status == 404
    finally:
        await runner.cleanup()


async def test_an_org_wide_install_serves_each_workspace_of_the_organisation(
    sl: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    """Enterprise Grid: one install for the organisation; each workspace's chats carry the
    workspace and the organisation, and are sent to with the organisation's token."""
    for team, channel in (("T7", "C7"), ("T8", "C8")):
        sl.add_workspace(team, enterprise_id="E1")
        sl.add_channel(channel, team_id=team)
    async with deployment(sl, database_url, tmp_path) as d:
        _, _, query = await d.install_page()
        code = sl.authorize("T7", user_id="UORGADMIN", org_wide=True)
        assert (await d.redirect(code=code, state=query["state"][0]))[0] == 200
        for team, channel in (("T7", "C7"), ("T8", "C8")):
            name = f"org-{team}"
            body = slash_command_body(
                "/trend",
                "subscribe rl",
                user_id="U1",
                channel_id=channel,
                team_id=team,
                enterprise_id="E1",
                org_install=True,
                response_url=sl.response_url(name),
            )
            status, _ = await d.post(body)
            assert status == 200
        await d.publish("papers/2026/2611.00011-org", tags="[rl]")
        await d.deliver()
        async with d.app.engine.connect() as conn:
            rows = await conn.execute(
                select(chats.c.chat_id, chats.c.team_id, chats.c.enterprise_id).order_by(
                    chats.c.chat_id
                )
            )
            stored = [tuple(r) for r in rows]
            installs = (await conn.execute(select(slack_installations))).mappings().all()
    assert stored == [("T7/C7", "T7", "E1"), ("T8/C8", "T8", "E1")]
    assert [(r["enterprise_id"], r["team_id"], r["is_enterprise_install"]) for r in installs] == [
        ("E1", "", True)
    ]
    org_token = next(iter(sl.org_tokens))
    posts = sl.calls("chat.postMessage", ok=True)
    assert sorted(c.channel or "" for c in posts) == ["C7", "C8"]
    assert all(c.token == org_token for c in posts)
