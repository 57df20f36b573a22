"""The variables that point a real ``trendbot run`` at the local platform servers."""

from __future__ import annotations

from tests.fakes.discord_api import TEST_PUBLIC_KEY, FakeDiscord
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

TELEGRAM_WEBHOOK_URL = "https://bot.example.org/telegram/webhook"  # told to Telegram; never called


def telegram_env(tg: FakeTelegram, *, webhook_secret: str | None = None) -> dict[str, str]:
    """A run that speaks to ``tg`` with the token it accepts: long polling, or webhook mode
    at TELEGRAM_WEBHOOK_URL where ``webhook_secret`` is given."""
    env = {"TELEGRAM_BOT_TOKEN": tg.token, "TELEGRAM_API_BASE_URL": tg.base_url}
    if webhook_secret is not None:
        env["TELEGRAM_WEBHOOK_URL"] = TELEGRAM_WEBHOOK_URL
        env["TELEGRAM_WEBHOOK_SECRET"] = webhook_secret
    return env


def slack_env(sl: FakeSlack, *, signing_secret: str) -> dict[str, str]:
    """A run in Slack HTTP mode that speaks to ``sl`` with the token it accepts."""
    return {
        "SLACK_BOT_TOKEN": sl.token,
        "SLACK_SIGNING_SECRET": signing_secret,
        "SLACK_API_BASE_URL": sl.base_url,
    }


def discord_env(dc: FakeDiscord) -> dict[str, str]:
    """A run with Discord that speaks to ``dc`` and verifies the test key's signatures."""
    return {
        "DISCORD_BOT_TOKEN": dc.token,
        "DISCORD_APPLICATION_ID": dc.application_id,
        "DISCORD_PUBLIC_KEY": TEST_PUBLIC_KEY,
        "DISCORD_API_BASE_URL": dc.base_url,
    }
