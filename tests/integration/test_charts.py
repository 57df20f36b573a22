"""Charts beside the replies of ``stats`` and ``feedback``: python-telegram-bot, Bolt and
slack-sdk unchanged against the fakes; a picture after the text where the platform shows
one, the text alone where it cannot be drawn or sent."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.i18n import t
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_admin import ADMIN, audit_actions, subscribers
from tests.integration.test_admin import running as admin_running
from tests.integration.test_planner import started
from tests.integration.test_slack import USER, Bot, bot, buttons, seed_pages, sl
from tests.integration.test_slack import seed_pages as seed_slack_pages
from tests.integration.test_telegram import PRIVATE, Running, reply_to, running, tg
from tests.integration.test_telegram import seed_pages as seed_telegram_pages

pytest.importorskip("matplotlib", reason="charts need the charts extra (matplotlib)")

__all__ = ["bot", "running", "sl", "tg"]  # fixtures of the adapters' tests
PNG = b"\x89PNG\r\n\x1a\n"


async def liked_in_telegram(tg: FakeTelegram) -> None:
    """``/subscribe rl``, ``/latest 1`` and a 👍 on the page: the chat learns rl."""
    await reply_to(tg, PRIVATE, "/subscribe rl")
    await reply_to(tg, PRIVATE, "/latest 1")
    message = tg.messages_to(PRIVATE)[-1]
    tg.callback(
        PRIVATE,
        message["message_id"],
        message["reply_markup"]["inline_keyboard"][0][0]["callback_data"],
    )
    await tg.wait_for(lambda c: c.method == "answerCallbackQuery")


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_feedback_on_telegram_is_the_text_then_a_photo_captioned_in_the_chats_language(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, lang: str
) -> None:
    await seed_telegram_pages(engine)
    async with running():
        if lang == "ko":
            await reply_to(tg, PRIVATE, "/lang ko")
        await liked_in_telegram(tg)
        text = await reply_to(tg, PRIVATE, "/feedback")
        assert t(lang, "digestq.feedback.header") in text.params["text"]
        [photo] = await tg.wait_for(lambda c: c.method == "sendPhoto" and c.ok)
    assert photo.at > text.at  # the text first: it says it all
    assert photo.result["caption"] == t(lang, "charts.feedback.alt")
    assert tg.photos[-1]["data"].startswith(PNG)
    assert photo.result["photo"][0]["width"] == 640


async def test_feedback_with_nothing_learned_sends_no_picture(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    async with running():
        text = await reply_to(tg, PRIVATE, "/feedback")
        assert t("en", "digestq.feedback.none") in text.params["text"]
        await reply_to(tg, PRIVATE, "/settings")  # answered after anything /feedback sent
    assert tg.calls("sendPhoto") == []


async def test_a_refused_photo_is_logged_once_and_the_text_stands(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await seed_telegram_pages(engine)
    tg.fail_next("sendPhoto", 400, description="Bad Request: PHOTO_INVALID_DIMENSIONS")
    async with running():
        await liked_in_telegram(tg)
        with caplog.at_level(logging.INFO):
            text = await reply_to(tg, PRIVATE, "/feedback")
            await tg.wait_for(lambda c: c.method == "sendPhoto")
            await reply_to(tg, PRIVATE, "/settings")
    assert t("en", "digestq.feedback.header") in text.params["text"]
    refused = [r for r in caplog.records if "photo_invalid_dimensions" in r.getMessage().lower()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING
    assert refused[0].exc_info is None
    assert [c.ok for c in tg.calls("sendPhoto")] == [False]  # a 400 is not tried again


async def test_a_photo_refused_with_404_is_logged_as_what_failed_not_as_the_token(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """A Bot API server without ``sendPhoto`` answers 404 (python-telegram-bot raises it as
    an invalid token); the log names the method, and says the token was not refused."""
    await seed_telegram_pages(engine)
    tg.fail_next("sendPhoto", 404, description="Not Found")
    async with running():
        await liked_in_telegram(tg)
        with caplog.at_level(logging.INFO):
            text = await reply_to(tg, PRIVATE, "/feedback")
            await tg.wait_for(lambda c: c.method == "sendPhoto")
            await reply_to(tg, PRIVATE, "/settings")  # the text still goes: the token works
    assert t("en", "digestq.feedback.header") in text.params["text"]
    [refused] = [r for r in caplog.records if "reply not sent" in r.getMessage()]
    said = refused.getMessage()
    assert "not_found: sendPhoto answered 404 Not Found" in said
    assert "the bot token was not refused" in said and "token was rejected" not in said


async def test_a_chart_that_cannot_be_drawn_is_logged_once_and_the_text_stands(
    tg: FakeTelegram,
    running: Running,
    engine: AsyncEngine,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the renderer broke")

    monkeypatch.setattr(FigureCanvasAgg, "print_png", broken)
    await seed_telegram_pages(engine)
    async with running():
        await liked_in_telegram(tg)
        with caplog.at_level(logging.INFO):
            text = await reply_to(tg, PRIVATE, "/feedback")
            await reply_to(tg, PRIVATE, "/settings")
    assert t("en", "digestq.feedback.liked", tags="rl +1.0") in text.params["text"]
    failed = [r for r in caplog.records if r.name == "bot.charts"]
    assert [r.levelno for r in failed] == [logging.WARNING]
    assert "the renderer broke" in failed[0].getMessage()
    assert tg.calls("sendPhoto") == []


async def test_stats_on_telegram_sends_the_figures_then_their_chart(
    tg: FakeTelegram, engine: AsyncEngine, tmp_path: Path
) -> None:
    await started(engine, tmp_path)
    await subscribers(engine, 3)
    async with admin_running(tg, engine, sources=(str(tmp_path),)) as admin:
        stats = (await admin.say(ADMIN, "/stats"))["text"]
        [photo] = await tg.wait_for(lambda c: c.method == "sendPhoto" and c.chat_id == ADMIN)
    assert "rl (3)" in stats
    assert photo.ok and photo.result["caption"] == t("en", "charts.stats.alt", days=14)
    assert ("telegram:4242", "stats.viewed", True) in await audit_actions(engine)


# ---------------------------------------------------------------------- Slack


async def liked_in_slack(bot: Bot, channel: str) -> None:
    await bot.command("subscribe rl", channel=channel)
    latest = await bot.command("latest 1", channel=channel)
    up = next(b for value, b in buttons(latest).items() if value.startswith("vote:+:"))
    await bot.press(up, channel=channel)


async def test_feedback_in_the_dm_with_the_app_uploads_the_chart_there(
    bot: Bot, sl: FakeSlack, engine: AsyncEngine
) -> None:
    await seed_slack_pages(engine)
    dm = sl.im_channel(USER)
    await liked_in_slack(bot, dm)
    answer = await bot.command("feedback", channel=dm)
    assert answer.body["response_type"] == "ephemeral"
    assert t("en", "digestq.feedback.liked", tags="rl +1.0") in answer.text
    await sl.wait_for(lambda c: c.method == "files.completeUploadExternal" and c.ok)
    steps = [c.method for c in sl.calls() if c.method.startswith("files.") or c.method == "upload"]
    assert steps == ["files.getUploadURLExternal", "upload", "files.completeUploadExternal"]
    [upload] = sl.files.values()
    assert upload["data"].startswith(PNG) and upload["alt_txt"] == t("en", "charts.feedback.alt")
    [shared] = [m for m in sl.messages_to(dm) if m.get("files")]
    assert shared["files"][0]["id"] == upload["id"]
    assert shared["text"] == t("en", "charts.feedback.alt")


async def test_feedback_in_a_channel_is_text_alone(
    bot: Bot, sl: FakeSlack, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    await liked_in_slack(bot, "C1")
    answer = await bot.command("feedback", channel="C1")
    assert t("en", "digestq.feedback.liked", tags="rl +1.0") in answer.text
    await bot.command("settings", channel="C1")
    assert sl.files == {}  # nothing the channel could see
    assert sl.messages_to("C1") == []


async def test_without_files_write_the_chart_is_logged_once_and_the_text_stands(
    bot: Bot, sl: FakeSlack, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await seed_pages(engine)
    sl.scopes.discard("files:write")
    dm = sl.im_channel(USER)
    await liked_in_slack(bot, dm)
    with caplog.at_level(logging.INFO):
        answer = await bot.command("feedback", channel=dm)
        await sl.wait_for(lambda c: c.method == "files.getUploadURLExternal")
        await bot.command("settings", channel=dm)
    assert t("en", "digestq.feedback.liked", tags="rl +1.0") in answer.text
    refused = [r for r in caplog.records if "could not upload a chart" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING
    assert "missing_scope" in refused[0].getMessage()
    assert [m for m in sl.messages_to(dm) if m.get("files")] == []
