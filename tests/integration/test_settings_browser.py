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
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

import bot.channels.registry  # noqa: F401  (the platforms' rules)
from bot import payloads
from bot.commands import Caller, CommandCore, Defaults
from bot.i18n import t
from bot.models import ChatKind, Mode, Platform
from bot.ops.settings_page import SettingsPage
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.store import chats as chat_store
from bot.store.schema import outbox
from tests.conftest import Settings
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
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, public_base_url=base, wiki_sources=(SOURCE,)
    )
    core = CommandCore(engine=engine, defaults=Defaults(), public_base_url=base)
    hooks.settings_page = SettingsPage(core=core, settings=settings).handle
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
    await tab.goto(await link(browsing))
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
    await (await first.new_page()).goto(url)
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
    await tab.goto(await link(browsing))
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
