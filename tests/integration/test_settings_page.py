"""The settings page over HTTP: the link a ``settings`` reply carries, opening it once,
the page, its preview, saving through the command core, and the Telegram Mini App's
``initData``; the bot's own HTTP server and a real database on each backend."""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

import bot.channels.registry  # noqa: F401  (the platforms' rules: their command prefixes)
from bot import payloads, render
from bot.channels.console.chat import ConsoleChannel
from bot.channels.telegram import webapp
from bot.commands import Caller, CommandCore, Defaults
from bot.i18n import t
from bot.models import ChatKind, ChatState, Mode, Page, PageText, Platform
from bot.ops.settings_page import (
    COOKIE,
    INIT_DATA_FIELD,
    SESSION_HEADER,
    SettingsPage,
    mini_app_check,
)
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.render import charts, votes
from bot.rules.feeds import token_hash as feed_digest
from bot.store import chats as chat_store
from bot.store import pages as page_store
from bot.store import settings_links as link_store
from bot.store.schema import chat_feeds, outbox, settings_links
from bot.util import utcnow
from tests.conftest import Settings
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.integration import test_discord as discord_test
from tests.integration import test_slack as slack_test
from tests.integration import test_telegram as tg_test
from tests.integration.test_telegram import running, tg
from tests.waiting import wait_until

__all__ = ["running", "tg"]  # the Telegram fixtures

BASE = "https://bot.example.com/trend"
TG_TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
SOURCE = "wiki"
USER = "5151"
LINK = re.compile(r"^https://bot\.example\.com/trend/settings/open/([A-Za-z0-9_-]{43})$")


def page(key: str, tags: tuple[str, ...], *, days_ago: int) -> Page:
    return Page(
        source=SOURCE,
        key=key,
        texts=(
            PageText("en", f"Title {key}", f"TL;DR of {key}."),
            PageText("ko", f"제목 {key}", "요약."),
        ),
        tags=tags,
        url=f"https://wiki.example.com/{key}",
        updated=utcnow().date() - dt.timedelta(days=days_ago),
    )


async def publish(engine: AsyncEngine, *pages: Page) -> None:
    async with engine.begin() as conn:
        source = await page_store.source(conn, name=SOURCE, kind="feed")
        await page_store.record_pages(
            conn, source=source, found=pages, present_keys=None, now=utcnow()
        )


@dataclass
class Site:
    engine: AsyncEngine
    core: CommandCore
    http: aiohttp.ClientSession
    origin: str  # the bot's server; the public base's path (/trend) is the proxy's

    def url(self, link: str) -> str:
        """A public address as the reverse proxy forwards it: its path without the base."""
        return self.origin + link.removeprefix(BASE)


@pytest.fixture
async def site(engine: AsyncEngine) -> AsyncIterator[Site]:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, public_base_url=BASE, wiki_sources=(SOURCE,), telegram_bot_token=TG_TOKEN
    )
    core = CommandCore(engine=engine, defaults=Defaults(), public_base_url=BASE)
    server = SettingsPage(core=core, settings=settings, mini_app=mini_app_check(settings))
    app = make_app(engine=engine, hooks=WebHooks(settings_page=server.handle))
    runner, port = await start_web(app, host="127.0.0.1", port=0)
    await publish(
        engine,
        page("a", ("rl", "reasoning"), days_ago=1),
        page("b", ("rl",), days_ago=3),
        page("c", ("robotics",), days_ago=5),
        page("d", ("rl",), days_ago=90),  # older than the preview's 30 days
    )
    # Each test a browser of its own: the cookie jar takes the session as the page sets
    # it, under the public base's path (which the proxy strips before the bot sees it).
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        try:
            yield Site(engine, core, http, f"http://127.0.0.1:{port}")
        finally:
            await runner.cleanup()


def telegram(chat_id: str = USER, *, kind: ChatKind = ChatKind.PRIVATE, **more: Any) -> Caller:
    return Caller(platform=Platform.TELEGRAM, chat_id=chat_id, user_id=USER, chat_kind=kind, **more)


async def link_for(site: Site, caller: Caller | None = None) -> str:
    reply = await site.core.handle(caller or telegram(), "/settings")
    [[button]] = reply.buttons
    assert button.url is not None and LINK.match(button.url), button
    return button.url


async def opened(site: Site, link: str) -> str:
    """Open ``link`` as a browser would, its person pressing the door's button: the session
    cookie it sets. The GET alone opens nothing."""
    async with site.http.get(site.url(link), allow_redirects=False) as door:
        assert door.status == 200, await door.text()
        assert 'id="open"' in await door.text() and COOKIE not in door.cookies
    async with site.http.post(site.url(link), allow_redirects=False) as answer:
        assert answer.status == 303, await answer.text()
        assert answer.headers["Location"] == "../"
        morsel = answer.cookies[COOKIE]
        assert morsel["httponly"] and morsel["samesite"] == "Lax" and morsel["secure"]
        assert morsel["path"] == "/trend/settings/"
        return morsel.value


def session(value: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={value}"}


async def csrf_of(site: Site, cookie: str) -> str:
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as answer:
        assert answer.status == 200
        found = re.search(r'name="csrf" value="([0-9a-f]{64})"', await answer.text())
        assert found
        return found[1]


def form(csrf: str, **fields: str) -> dict[str, str]:
    values = {
        "csrf": csrf,
        "mode": "daily",
        "time": "09:00",
        "tz": "UTC",
        "lang": "en",
        "day": "mon",
        "quiet": "",
        "limit": "",
    }
    values.update(fields)
    return values


async def chat(site: Site, chat_id: str = USER) -> chat_store.ChatRecord:
    record = await chat_store.read(site.engine, platform=Platform.TELEGRAM, chat_id=chat_id)
    assert record is not None
    return record


async def notices(site: Site) -> list[str]:
    async with site.engine.connect() as conn:
        rows = await conn.execute(select(outbox.c.payload).where(outbox.c.kind == payloads.NOTICE))
        return [json.loads(payload)["text"] for (payload,) in rows]


# ---------------------------------------------------------------------------- the link


async def test_settings_offers_a_link_that_opens_the_chat_s_page_once(site: Site) -> None:
    link = await link_for(site)
    cookie = await opened(site, link)
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as answer:
        assert answer.status == 200
        body = await answer.text()
        assert answer.headers["Cache-Control"] == "no-store"
        assert answer.headers["Referrer-Policy"] == "no-referrer"
        assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
        assert "frame-ancestors" in answer.headers["Content-Security-Policy"]
    assert '<html lang="en">' in body and "telegram:5151" in body
    assert 'name="tag:rl"' in body and "rl <" not in body
    # The same link in another browser: refused, with a page that says why.
    for method in ("GET", "POST"):
        async with site.http.request(method, site.url(link), allow_redirects=False) as again:
            assert again.status == 403
            text = html.unescape(await again.text())
            assert t("en", "page.refused.used.title") in text
            assert COOKIE not in again.cookies


async def test_fetching_a_link_opens_nothing_until_its_button_is_pressed(site: Site) -> None:
    """A link checker or a prefetch may GET the link before its person: that shows the
    chat's name and a button, in the chat's language, and uses nothing up."""
    await site.core.handle(telegram(), "/lang ko")
    link = await link_for(site)
    for _ in range(3):
        async with site.http.get(site.url(link), allow_redirects=False) as door:
            assert door.status == 200 and COOKIE not in door.cookies
            text = html.unescape(await door.text())
            assert door.headers["Cache-Control"] == "no-store"
            assert "default-src 'none'" in door.headers["Content-Security-Policy"]
    assert '<html lang="ko">' in text and t("ko", "page.title", chat="telegram:5151") in text
    assert t("ko", "page.door") in text and t("ko", "page.open") in text
    async with site.engine.connect() as conn:
        assert (await conn.execute(select(settings_links.c.session_hash))).scalar() is None
    cookie = await opened(site, link)  # the person's press still opens it
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as answer:
        assert answer.status == 200


async def test_the_link_is_a_button_of_the_reply_and_a_mini_app_in_a_private_chat(
    site: Site,
) -> None:
    reply = await site.core.handle(telegram(), "/settings")
    [[button]] = reply.buttons
    assert button.label == "Open settings"
    assert button.app == f"{BASE}/settings/app"
    assert "15 minutes" in reply.text
    group = telegram("-100200", kind=ChatKind.GROUP, can_manage=_yes)
    [[in_group]] = (await site.core.handle(group, "/settings")).buttons
    # A Telegram group reads the reply: no link in it, a button that sends one privately.
    assert in_group.url is None and in_group.app is None and in_group.action == "page:open"


async def test_the_console_prints_the_link(site: Site) -> None:
    out = io.StringIO()
    console = ConsoleChannel(
        core=site.core, stdin=io.StringIO("/settings\n/quit\n"), out=out, interactive=False
    )
    await console.run()
    printed = out.getvalue()
    found = re.search(r"^Open settings: (\S+)$", printed, re.MULTILINE)
    assert found and re.fullmatch(LINK.pattern.strip("^$"), found[1]), printed
    assert "[1 Open settings]" not in printed  # a link, not a button pressed by number


async def _yes() -> bool:
    return True


async def _no() -> bool:
    return False


async def test_only_who_may_change_the_chat_gets_a_link(site: Site) -> None:
    member = telegram("-100300", kind=ChatKind.GROUP, can_manage=_no)
    reply = await site.core.handle(member, "/settings")
    assert reply.buttons == ()
    assert "15 minutes" not in reply.text and "Filter" in reply.text
    async with site.engine.connect() as conn:
        assert (await conn.execute(select(settings_links))).first() is None


async def test_without_a_public_base_url_there_is_no_link(engine: AsyncEngine) -> None:
    core = CommandCore(engine=engine, defaults=Defaults())
    reply = await core.handle(telegram(), "/settings")
    assert reply.buttons == ()


async def test_forged_expired_and_malformed_links_are_refused_with_their_reason(
    site: Site,
) -> None:
    await site.core.handle(telegram(), "/settings")
    record_pk = (await chat(site)).pk
    async with site.engine.begin() as conn:
        old = await link_store.issue(
            conn, chat_pk=record_pk, now=utcnow() - dt.timedelta(minutes=16)
        )
    cases = {
        old: "expired",
        "A" * 43: "unknown",
        (await link_for(site))[:-1] + "x": "unknown",
        "%00": "unknown",
        "x" * 5000: "unknown",
    }
    for token, reason in cases.items():
        async with site.http.get(
            f"{site.origin}/settings/open/{token}", allow_redirects=False
        ) as answer:
            assert answer.status == 403, (token, reason)
            assert t("en", f"page.refused.{reason}.title") in html.unescape(await answer.text())
            assert COOKIE not in answer.cookies


async def test_no_session_no_page(site: Site) -> None:
    for headers in ({}, session("nope"), session("x" * 100)):
        async with site.http.get(site.origin + "/settings/", headers=headers) as answer:
            assert answer.status == 403
            assert t("en", "page.refused.session.title") in html.unescape(await answer.text())
        async with site.http.get(site.origin + "/settings/preview?filter=rl", headers=headers) as p:
            assert p.status == 403


async def test_only_hashes_are_stored(site: Site) -> None:
    link = await link_for(site)
    cookie = await opened(site, link)
    token = LINK.match(link)[1]  # type: ignore[index]
    async with site.engine.connect() as conn:
        rows = (await conn.execute(select(settings_links))).mappings().all()
    stored = json.dumps([dict(r) for r in rows], default=str)
    assert token not in stored and cookie not in stored
    assert link_store.digest(token) in stored and link_store.digest(cookie) in stored


# ---------------------------------------------------------------------------- the page


async def test_the_preview_counts_the_last_30_days_that_a_filter_lets_through(site: Site) -> None:
    cookie = await opened(site, await link_for(site))
    for wanted, count in (("rl", 2), ("rl -reasoning", 1), ("robotics", 1), ("*", 3), ("", 0)):
        query = urlencode({"filter": wanted})
        async with site.http.get(
            f"{site.origin}/settings/preview?{query}", headers=session(cookie)
        ) as answer:
            assert answer.status == 200
            found = await answer.json()
            assert found["count"] == count, wanted
            assert len(found["titles"]) == count
    async with site.http.get(
        f"{site.origin}/settings/preview?filter=%2B", headers=session(cookie)
    ) as bad:
        assert bad.status == 400


async def test_saving_applies_everything_through_the_core_and_tells_the_chat(site: Site) -> None:
    cookie = await opened(site, await link_for(site))
    csrf = await csrf_of(site, cookie)
    fields = form(
        csrf,
        **{"tag:rl": "required", "tag:reasoning": "any", "tag:robotics": "excluded"},
        mode="weekly",
        day="fri",
        time="07:30",
        tz="서울",
        quiet="22:00-07:00",
        limit="5",
        lang="ko",
        paused="on",
    )
    async with site.http.post(
        site.origin + "/settings/", data=fields, headers=session(cookie)
    ) as answer:
        assert answer.status == 200, await answer.text()
        body = await answer.text()
    body = html.unescape(body)
    assert t("ko", "page.saved") in body and '<html lang="ko">' in body
    record = await chat(site)
    settings = record.chat
    assert settings.filter.required == {"rl"} and settings.filter.any_of == {"reasoning"}
    assert settings.filter.excluded == {"robotics"}
    assert settings.mode == Mode.WEEKLY and settings.weekday == 4
    assert settings.digest_time == dt.time(7, 30) and settings.timezone == "Asia/Seoul"
    assert str(settings.quiet) == "22:00-07:00" and settings.limit == 5
    assert settings.lang == "ko" and settings.state == ChatState.PAUSED
    [notice] = await notices(site)
    assert notice.startswith(t("ko", "page.saved_notice"))


async def test_a_bad_value_is_named_and_nothing_is_applied(site: Site) -> None:
    cookie = await opened(site, await link_for(site))
    csrf = await csrf_of(site, cookie)
    before = (await chat(site)).chat
    cases = [
        ({"time": "25:00"}, "25:00"),
        ({"tz": "Mars/Olympus"}, "Mars/Olympus"),
        ({"limit": "99"}, "99"),
        ({"quiet": "22-7"}, "22-7"),
        ({"tag:r l": "any"}, "r l"),  # one tag's name, not two tags
        ({"tag:+x": "any"}, "+x"),
    ]
    for bad, named in cases:
        fields = form(csrf, **{"tag:rl": "any"}, lang="ko", **bad)
        async with site.http.post(
            site.origin + "/settings/", data=fields, headers=session(cookie)
        ) as answer:
            body = html.unescape(await answer.text())
            assert answer.status == 400, bad
            # In the chat's language (English: the language is not saved either).
            assert t("en", "dest.import.nothing_changed") in body, bad
            assert named in body, bad
        assert (await chat(site)).chat == before
    assert await notices(site) == []


async def test_a_form_without_its_csrf_token_changes_nothing(site: Site) -> None:
    cookie = await opened(site, await link_for(site))
    before = (await chat(site)).chat
    for token in ("", "0" * 64):
        fields = form(token, **{"tag:rl": "any"}, lang="ko")
        async with site.http.post(
            site.origin + "/settings/", data=fields, headers=session(cookie)
        ) as answer:
            assert answer.status == 403
    async with site.http.post(
        site.origin + "/settings/", data=b"x" * 70_000, headers=session(cookie)
    ) as big:
        assert big.status in (400, 413)
    assert (await chat(site)).chat == before
    assert await notices(site) == []


async def test_a_korean_chat_gets_a_korean_page(site: Site) -> None:
    await site.core.handle(telegram(), "/lang ko")
    cookie = await opened(site, await link_for(site))
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as answer:
        body = await answer.text()
    assert '<html lang="ko">' in body
    assert t("ko", "page.tags") in body and t("ko", "page.save") in body
    assert "서울" in body  # the zone picker knows Korean city names


async def test_the_page_shows_the_chart_of_the_chat_s_votes(site: Site) -> None:
    cookie = await opened(site, await link_for(site))
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as answer:
        assert 'id="votes"' not in await answer.text()  # no vote yet: no chart
    await site.core.handle(telegram(), "/subscribe rl")
    shown = await site.core.handle(telegram(), "/latest")
    up = next(b for b in render.vote_buttons(shown.items) if b.label.endswith(votes.UP_MARK))
    await site.core.handle_action(telegram(), up.action)
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as answer:
        body = await answer.text()
    if not charts.available():
        pytest.skip("matplotlib is not installed: no chart to show")
    assert re.search(r'<figure id="votes"><img src="data:image/png;base64,iVBOR', body)


# ---------------------------------------------------------------------------- Mini App


def app_form(data: str) -> str:
    """The body the Mini App's script posts: Telegram's ``initData`` as one form field."""
    return urlencode({INIT_DATA_FIELD: data})


def init_data(user_id: int, *, signed_at: float, token: str = TG_TOKEN) -> str:
    fields = {
        "auth_date": str(int(signed_at)),
        "query_id": "AAH",
        "user": json.dumps({"id": user_id, "first_name": "A"}),
    }
    return urlencode({**fields, "hash": webapp.sign(fields, bot_token=token)})


async def test_a_mini_app_signs_in_with_telegram_s_init_data(site: Site) -> None:
    await site.core.handle(telegram(), "/start")  # the user's private chat exists
    good = init_data(int(USER), signed_at=time.time())
    async with site.http.post(site.origin + "/settings/app", data=app_form(good)) as answer:
        assert answer.status == 200
        assert "telegram:5151" in await answer.text()  # the page itself
        cookie = answer.cookies[COOKIE].value
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as page_:
        assert page_.status == 200 and "telegram:5151" in await page_.text()
    refused = [
        init_data(int(USER), signed_at=time.time(), token="1:other"),  # forged
        init_data(int(USER), signed_at=time.time() - 3600),  # stale: replayed
        init_data(999, signed_at=time.time()),  # a user the bot never talked to
        good.replace("hash=", "hash=0"),
        "",
        "user=%7B%7D&hash=" + "0" * 64,
    ]
    for data in refused:
        async with site.http.post(site.origin + "/settings/app", data=app_form(data)) as answer:
            assert answer.status == 403, data
            assert COOKIE not in answer.cookies
    # Signed initData that is not the form's field (the body as it came) opens nothing.
    async with site.http.post(site.origin + "/settings/app", data=good) as answer:
        assert answer.status == 403
        assert COOKIE not in answer.cookies


CARRIED = re.compile(r'name="session" value="([A-Za-z0-9_-]{43})"')


async def test_a_mini_app_s_page_carries_its_session_where_no_cookie_goes(site: Site) -> None:
    """Telegram Web's cross-site frame keeps no cookie: the page answered to the Mini App
    carries its session in its forms and the preview's header, and works with that alone."""
    await site.core.handle(telegram(), "/start")
    await site.core.handle(telegram(), "/subscribe rl")
    good = app_form(init_data(int(USER), signed_at=time.time()))
    async with site.http.post(site.origin + "/settings/app", data=good) as answer:
        text = await answer.text()
    carried = CARRIED.findall(text)
    assert len(carried) == 2 and carried[0] == carried[1]  # the settings form, the feed's
    token = carried[0]
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', text)
    assert found
    preview = site.origin + "/settings/preview?filter=rl"
    async with site.http.get(preview, headers={SESSION_HEADER: token}) as answer:
        assert answer.status == 200 and (await answer.json())["count"] == 2  # a, b
    async with site.http.get(preview, headers={SESSION_HEADER: "x" * 43}) as answer:
        assert answer.status == 403
    saved = form(found[1], session=token, **{"tag:agents": "any"}, time="06:45")
    async with site.http.post(site.origin + "/settings/", data=saved) as answer:
        assert answer.status == 200, await answer.text()
        assert CARRIED.findall(await answer.text()) == [token, token]  # still carried
    record = await chat_store.read(site.engine, platform=Platform.TELEGRAM, chat_id=USER)
    assert record is not None
    assert record.chat.filter.any_of == {"agents"} and record.chat.digest_time == dt.time(6, 45)
    # Without its session, or with another's, the same form changes nothing.
    without = {name: value for name, value in saved.items() if name != "session"}
    for body in (without, {**saved, "session": "y" * 43}):
        async with site.http.post(site.origin + "/settings/", data={**body, "time": "03:00"}) as a:
            assert a.status == 403
    record = await chat_store.read(site.engine, platform=Platform.TELEGRAM, chat_id=USER)
    assert record is not None and record.chat.digest_time == dt.time(6, 45)


async def test_a_page_opened_by_a_link_keeps_its_session_in_the_cookie_alone(
    site: Site,
) -> None:
    cookie = await opened(site, await link_for(site))
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as answer:
        text = await answer.text()
    assert answer.status == 200 and 'name="csrf"' in text
    assert not CARRIED.search(text) and cookie not in text


# ---------------------------------------------------------------------------- Slack Home


async def test_slack_s_home_tab_shows_the_dm_s_settings_with_the_page_s_button(
    engine: AsyncEngine,
) -> None:
    async with FakeSlack(token=slack_test.TOKEN) as sl:
        sl.add_channel("D1", user="U7")  # the user's DM with the app: the event's channel
        core = CommandCore(engine=engine, defaults=Defaults(), public_base_url=BASE)
        async with slack_test.running(sl, engine, core=core) as bot_:
            # Fields as in https://api.slack.com/events/app_home_opened.
            opened_event = {"type": "app_home_opened", "user": "U7", "channel": "D1", "tab": "home"}
            assert await slack_test.post_event(bot_, opened_event, event_id="EvHome1") == 200
            await wait_until(lambda: "U7" in sl.home_views, what="U7's Home tab published")
            view = sl.home_views["U7"]
            # The Messages tab opening changes nothing.
            messages = dict(opened_event, tab="messages", user="U8")
            assert await slack_test.post_event(bot_, messages, event_id="EvHome2") == 200
    assert view["type"] == "home"
    texts = " ".join(slack_test.block_texts(view["blocks"]))
    assert "Settings for this chat" in texts
    [button] = [
        e for b in view["blocks"] if b["type"] == "actions" for e in b["elements"] if "url" in e
    ]
    assert LINK.match(button["url"]) and button["text"]["text"] == "Open settings"
    assert "U8" not in sl.home_views


# ---------------------------------------------------------------------------- Discord


def _link_buttons(data: dict[str, Any]) -> list[dict[str, Any]]:
    found, stack = [], list(data.get("components") or [])
    while stack:
        item = stack.pop()
        if item.get("type") == 2 and item.get("style") == 5:
            found.append(item)
        stack += item.get("components") or []
    return found


async def test_discord_offers_the_link_to_who_may_manage_the_channel_alone(
    engine: AsyncEngine,
) -> None:
    async with (
        discord_test.FakeDiscord() as dc,
        discord_test.running(dc, engine, public_base_url=BASE) as bot_,
    ):
        dc.add_channel(discord_test.CHANNEL)
        manager = discord_test.VIEW_CHANNEL | discord_test.MANAGE_CHANNELS
        answer = await bot_.command("settings", permissions=manager)
        assert answer["data"]["flags"] & 64  # ephemeral: the caller's alone
        [button] = _link_buttons(answer["data"])
        assert LINK.match(button["url"]) and "custom_id" not in button
        member = await bot_.command("settings", permissions=discord_test.VIEW_CHANNEL)
        assert _link_buttons(member["data"]) == []


# ---------------------------------------------------------------------------- Telegram groups


def _keyboard(call: Any) -> list[dict[str, Any]]:
    markup = call.params.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [b for row in markup.get("inline_keyboard", []) for b in row]


async def test_a_telegram_group_s_link_goes_to_the_admin_who_presses_alone(
    tg: FakeTelegram, running: tg_test.Running
) -> None:
    """A reply in a group is the group's message: its button carries no link, and the
    link goes to the pressing administrator's private chat with the bot."""
    group, admin, member = tg_test.GROUP, tg_test.ADMIN, tg_test.MEMBER
    tg.chat_admins[group] = {admin}
    async with running(public_base_url=BASE):
        shown = await tg_test.reply_to(tg, group, "/settings", user_id=admin)
        [button] = _keyboard(shown)
        assert button == {"text": "Open settings", "callback_data": "page:open"}
        message_id = shown.result["message_id"]

        async def press(user: int) -> Any:
            answered = len(tg.calls("answerCallbackQuery"))
            tg.callback(group, message_id, "page:open", user_id=user)
            calls = await tg.wait_for(
                lambda c: c.method == "answerCallbackQuery", count=answered + 1
            )
            return calls[answered].params

        assert (await press(member))["text"] == t("en", "cmd.group_admins_only")
        assert (await press(admin))["text"] == t("en", "page.start_privately")
        await tg_test.reply_to(tg, admin, "/start")
        before = len(tg.calls("sendMessage"))
        assert (await press(admin))["text"] == t("en", "page.link_sent")
        sent = [c for c in tg.calls("sendMessage")[before:] if c.chat_id == admin]
        assert len(sent) == 1
        [link] = _keyboard(sent[0])
        assert LINK.match(link["url"]) and "web_app" not in link
    in_group = [b for c in tg.calls("sendMessage") if c.chat_id == group for b in _keyboard(c)]
    assert not any("url" in b for b in in_group)  # no link was ever shown to the group


# ---------------------------------------------------------------------------- the feed


async def test_the_page_gives_a_new_private_feed_address_shown_once(site: Site) -> None:
    cookie = await opened(site, await link_for(site))
    csrf = await csrf_of(site, cookie)
    async with site.http.post(
        site.origin + "/settings/feed", data={"csrf": "0" * 64}, headers=session(cookie)
    ) as refused:
        assert refused.status == 403
    async with site.http.post(
        site.origin + "/settings/feed", data={"csrf": csrf}, headers=session(cookie)
    ) as answer:
        assert answer.status == 200
        body = html.unescape(await answer.text())
    found = re.search(rf"<code>({re.escape(BASE)}/feeds/([A-Za-z0-9_-]{{43}})\.atom)</code>", body)
    assert found, body
    token = found[2]
    async with site.engine.connect() as conn:
        rows = (await conn.execute(select(chat_feeds))).all()
    stored = json.dumps([list(r) for r in rows], default=str)
    assert token not in stored and feed_digest(token) in stored  # only its hash is kept
    [notice] = await notices(site)
    assert notice == t("en", "page.feed_moved_notice") and token not in notice
    async with site.http.get(site.origin + "/settings/", headers=session(cookie)) as again:
        assert token not in await again.text()  # shown once
