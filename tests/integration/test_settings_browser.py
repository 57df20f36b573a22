"""The settings page as a person uses it: headless Chromium, driven by Playwright, opens the
link a ``settings`` reply carries, ticks tags, watches the preview change, saves, and the
chat's confirmation is queued; a reused or forged link shows a page that says why; a Korean
chat gets a Korean page.

Skips, saying so, where Playwright or the distribution's Chromium is missing (``.ci/run``
installs both). ``SETTINGS_SCREENSHOTS=DIR`` keeps a screenshot of the page in each
language there (the documentation's pictures are made so).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

import bot.channels.registry  # noqa: F401  (the platforms' rules)
from bot import payloads
from bot.channels.registry import settings_class
from bot.channels.telegram import webapp
from bot.commands import Caller, CommandCore, Defaults
from bot.i18n import t
from bot.models import ChatKind, Mode, Platform
from bot.ops.settings_page import TELEGRAM_SCRIPT, SettingsPage, mini_app_check
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.store import chats as chat_store
from bot.store.schema import outbox
from tests.integration.test_settings_page import SOURCE, page, publish

playwright = pytest.importorskip(
    "playwright.async_api", reason="Playwright is not installed: pip install playwright"
)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="no Chromium: apt-get install chromium (as .ci/run does)",
    ),
]
# As the machine's own probe starts it: no sandbox as root, nothing fetched in the background.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
USER = "5151"
TG_TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"


@dataclass
class Browsing:
    engine: AsyncEngine
    core: CommandCore
    browser: Any


@pytest.fixture
async def browsing(engine: AsyncEngine) -> AsyncIterator[Browsing]:
    hooks = WebHooks()
    runner, port = await start_web(make_app(engine=engine, hooks=hooks), host="127.0.0.1", port=0)
    base = f"http://127.0.0.1:{port}"
    settings = settings_class()(  # type: ignore[call-arg]
        _env_file=None, public_base_url=base, wiki_sources=(SOURCE,), telegram_bot_token=TG_TOKEN
    )
    core = CommandCore(engine=engine, defaults=Defaults(), public_base_url=base)
    hooks.settings_page = SettingsPage(
        core=core, settings=settings, mini_app=mini_app_check(settings)
    ).handle
    await publish(
        engine,
        page("a", ("rl", "reasoning"), days_ago=1),
        page("b", ("rl",), days_ago=3),
        page("c", ("robotics",), days_ago=5),
        page("d", ("agents",), days_ago=6),
    )
    async with playwright.async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield Browsing(engine, core, browser)
        finally:
            await browser.close()
            await runner.cleanup()


def caller() -> Caller:
    return Caller(
        platform=Platform.TELEGRAM, chat_id=USER, user_id=USER, chat_kind=ChatKind.PRIVATE
    )


async def open_link(tab: Any, url: str) -> Any:
    """Follow a settings link as its person does: its page, then the button that opens it."""
    await tab.goto(url)
    await playwright.expect(tab.locator("#open")).to_be_visible()
    async with tab.expect_navigation():
        await tab.click("#open")
    return tab


async def link(b: Browsing) -> str:
    [[button]] = (await b.core.handle(caller(), "/settings")).buttons
    assert button.url is not None
    return button.url


async def confirmations(b: Browsing) -> list[str]:
    async with b.engine.connect() as conn:
        rows = await conn.execute(select(outbox.c.payload).where(outbox.c.kind == payloads.NOTICE))
        return [json.loads(p)["text"] for (p,) in rows]


def screenshot(name: str) -> Path | None:
    folder = os.environ.get("SETTINGS_SCREENSHOTS")
    return Path(folder) / name if folder else None


@pytest.mark.slow
async def test_from_the_link_to_a_changed_filter_and_schedule_with_clicks(
    browsing: Browsing,
) -> None:
    context = await browsing.browser.new_context(locale="en-US")
    tab = await context.new_page()
    await open_link(tab, await link(browsing))
    assert tab.url.endswith("/settings/")  # the link's token is out of the address
    preview = tab.locator("#preview-text")
    assert (await preview.inner_text()).startswith("No page")
    await tab.fill("#tag-search", "rob")  # the search hides the other tags
    assert await tab.locator("tr[data-tag='rl']").is_hidden()
    await tab.fill("#tag-search", "")
    await tab.select_option("select[name='tag:rl']", "any")
    await playwright.expect(preview).to_contain_text("2 pages")
    await tab.select_option("select[name='tag:reasoning']", "excluded")
    await playwright.expect(preview).to_contain_text("1 page of")
    assert await tab.locator("#preview-titles li").all_inner_texts() == ["Title b"]
    await tab.select_option("#mode", "weekly")
    assert await tab.locator("#day-row").is_visible()
    await tab.select_option("#day", "fri")
    await tab.fill("#time", "07:30")
    await tab.fill("#tz", "Seoul")
    if (path := screenshot("settings-page-en.png")) is not None:
        await tab.screenshot(path=str(path), full_page=True)
    await tab.click("#save")
    await tab.wait_for_selector("#message.ok")
    assert await tab.locator("#message").inner_text() == t("en", "page.saved")
    record = await chat_store.read(browsing.engine, platform=Platform.TELEGRAM, chat_id=USER)
    assert record is not None
    chat = record.chat
    assert chat.filter.any_of == {"rl"} and chat.filter.excluded == {"reasoning"}
    assert chat.mode == Mode.WEEKLY and chat.weekday == 4 and chat.timezone == "Asia/Seoul"
    [notice] = await confirmations(browsing)
    assert notice.startswith(t("en", "page.saved_notice")) and "+rl" not in notice
    await context.close()


@pytest.mark.slow
async def test_a_reused_or_forged_link_shows_why(browsing: Browsing) -> None:
    url = await link(browsing)
    first = await browsing.browser.new_context()
    await open_link(await first.new_page(), url)
    other = await browsing.browser.new_context()
    tab = await other.new_page()
    answer = await tab.goto(url)
    assert answer is not None and answer.status == 403
    assert await tab.locator("#refused").inner_text() == t("en", "page.refused.used.title")
    answer = await tab.goto(url[:-2] + "xx")
    assert answer is not None and answer.status == 403
    assert await tab.locator("#refused").inner_text() == t("en", "page.refused.unknown.title")
    await first.close()
    await other.close()


@pytest.mark.slow
async def test_a_korean_chat_gets_a_korean_page(browsing: Browsing) -> None:
    await browsing.core.handle(caller(), "/lang ko")
    context = await browsing.browser.new_context(locale="ko-KR")
    tab = await context.new_page()
    await open_link(tab, await link(browsing))
    assert await tab.get_attribute("html", "lang") == "ko"
    assert await tab.locator("h2").first.inner_text() == t("ko", "page.tags")
    await tab.select_option("select[name='tag:rl']", "required")
    await playwright.expect(tab.locator("#preview-text")).to_contain_text("2개")
    if (path := screenshot("settings-page-ko.png")) is not None:
        await tab.screenshot(path=str(path), full_page=True)
    await tab.click("#save")
    await tab.wait_for_selector("#message.ok")
    assert await tab.locator("#message").inner_text() == t("ko", "page.saved")
    await context.close()


def init_data(user_id: int) -> str:
    fields = {
        "auth_date": str(int(time.time())),
        "query_id": "AAH",
        "user": json.dumps({"id": user_id, "first_name": "A"}),
    }
    return urlencode({**fields, "hash": webapp.sign(fields, bot_token=TG_TOKEN)})


@pytest.mark.slow
async def test_a_telegram_mini_app_opens_the_private_chat_s_page(browsing: Browsing) -> None:
    """Telegram's script hands the Mini App its signed ``initData``; here a stand-in of that
    script (https://core.telegram.org/bots/webapps#initializing-mini-apps: window.Telegram.
    WebApp.initData) is served at its address, as the page's CSP allows."""
    await browsing.core.handle(caller(), "/start")  # the user's private chat with the bot
    context = await browsing.browser.new_context()
    tab = await context.new_page()
    stand_in = f"window.Telegram = {{WebApp: {{initData: {json.dumps(init_data(int(USER)))}}}}};"
    await tab.route(
        TELEGRAM_SCRIPT,
        lambda route: route.fulfill(status=200, content_type="text/javascript", body=stand_in),
    )
    base = (await link(browsing)).split("/settings/")[0]
    await tab.goto(f"{base}/settings/app")
    await playwright.expect(tab.locator("h1")).to_contain_text("telegram:5151")
    # Where the webview keeps cookies (a first party here), the session outlives the page.
    await tab.goto(f"{base}/settings/")
    assert "telegram:5151" in await tab.locator("h1").inner_text()
    # A forged initData opens nothing: the page says why.
    other = await browsing.browser.new_context()
    forged = await other.new_page()
    await forged.route(
        TELEGRAM_SCRIPT,
        lambda route: route.fulfill(
            status=200,
            content_type="text/javascript",
            body="window.Telegram = {WebApp: {initData: 'user=%7B%22id%22%3A5151%7D&hash=00'}};",
        ),
    )
    await forged.goto(f"{base}/settings/app")
    await playwright.expect(forged.locator("#reason")).to_have_text(t("en", "page.refused.unknown"))
    await context.close()
    await other.close()


@pytest.mark.slow
async def test_a_new_feed_address_is_a_click_away(browsing: Browsing) -> None:
    context = await browsing.browser.new_context()
    tab = await context.new_page()
    await open_link(tab, await link(browsing))
    await tab.click("#new-feed")
    await playwright.expect(tab.locator("#feed-url code")).to_contain_text("/feeds/")
    await context.close()


TELEGRAM_WEB = "https://web.telegram.org/k/"
BOT_SITE = "https://trendbot.example"


@pytest.mark.slow
async def test_a_mini_app_in_telegram_web_s_cross_site_frame_opens_and_saves(
    browsing: Browsing,
) -> None:
    """Telegram Web shows a Mini App in an iframe of web.telegram.org, so the page is a
    third party there (https://core.telegram.org/bots/webapps#initializing-mini-apps): the
    browser neither keeps nor sends a SameSite=Lax cookie of it. The page must open, preview
    and save without one. Both sites are served over https here through the browser's own
    request routing, the bot's answers coming from the local server unchanged."""
    await browsing.core.handle(caller(), "/start")
    context = await browsing.browser.new_context(locale="en-US")
    base = (await link(browsing)).split("/settings/")[0]
    stand_in = f"window.Telegram = {{WebApp: {{initData: {json.dumps(init_data(int(USER)))}}}}};"
    await context.route(
        TELEGRAM_SCRIPT,
        lambda route: route.fulfill(status=200, content_type="text/javascript", body=stand_in),
    )
    await context.route(
        TELEGRAM_WEB,
        lambda route: route.fulfill(
            status=200,
            content_type="text/html",
            body=f'<!doctype html><iframe id="app" src="{BOT_SITE}/settings/app"'
            ' style="width:900px;height:2400px"></iframe>',
        ),
    )

    async def bot_site(route: Any) -> None:
        # Forwarded by a client of its own, with no cookie jar: the browser alone decides
        # which cookies go (Playwright's ``route.fetch`` would add its context's).
        request = route.request
        headers = {k: v for k, v in (await request.all_headers()).items() if not k.startswith(":")}
        async with httpx.AsyncClient() as http:
            answer = await http.request(
                request.method,
                request.url.replace(BOT_SITE, base, 1),
                headers=headers,
                content=request.post_data_buffer,
            )
        await route.fulfill(
            status=answer.status_code,
            headers={
                k: v
                for k, v in answer.headers.multi_items()
                if k not in ("content-length", "content-encoding")
            },
            body=answer.content,
        )

    await context.route(f"{BOT_SITE}/**", bot_site)
    tab = await context.new_page()
    await tab.goto(TELEGRAM_WEB)
    app = tab.frame_locator("#app")
    await playwright.expect(app.locator("h1")).to_contain_text("telegram:5151")
    await app.locator("select[name='tag:rl']").select_option("any")
    await playwright.expect(app.locator("#preview-text")).to_contain_text("2 pages")
    await app.locator("#time").fill("06:15")
    await app.locator("#save").click()
    await playwright.expect(app.locator("#message.ok")).to_have_text(t("en", "page.saved"))
    record = await chat_store.read(browsing.engine, platform=Platform.TELEGRAM, chat_id=USER)
    assert record is not None
    assert record.chat.filter.any_of == {"rl"} and record.chat.digest_time.isoformat() == "06:15:00"
    await context.close()
