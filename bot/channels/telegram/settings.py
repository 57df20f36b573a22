"""Telegram's own variables (CONTRACT.md): a section of the settings
(:attr:`bot.channels.platform.PlatformSpec.settings`), read with the rest by the CLI
(:func:`bot.channels.registry.settings_class`). Telegram's code finds them with
``isinstance(settings, TelegramSettings)``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode

from bot.checks import check_http_url, split_user_ids
from bot.settings import Settings

# A bot token from @BotFather: the bot's numeric id, a colon, then its secret (35 characters
# today; 20 or more of A-Z, a-z, 0-9, _ and - accepted). The refusal says this rule, with an
# example that passes it: the Bot API page's own (https://core.telegram.org/bots/api,
# "Authorizing your bot"), no one's token.
TELEGRAM_TOKEN_RE = re.compile(r"^\d{1,20}:[A-Za-z0-9_-]{20,}$")
TELEGRAM_TOKEN_EXAMPLE = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"  # noqa: S105 - an example
TELEGRAM_TOKEN_RULE = (
    "is not a bot token from @BotFather: the bot's numeric id, a colon, then 20 or more "
    f"letters, digits, _ or - (e.g. {TELEGRAM_TOKEN_EXAMPLE})"
)
# Bot API setWebhook: secret_token is 1-256 characters of A-Z, a-z, 0-9, _ and -.
TELEGRAM_SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
# An id of TELEGRAM_ADMIN_IDS: a number, as the Bot API gives user ids.
TELEGRAM_USER_ID_RE = re.compile(r"-?\d{1,20}")
# Bot API FAQ: about 30 messages a second in all; more only with paid broadcasts
# (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this).
TELEGRAM_FREE_RATE_PER_SECOND = 30.0
# Bot API sendMessage allow_paid_broadcast: up to 1,000 messages a second, charged in Stars
# (https://core.telegram.org/bots/api#sendmessage).
TELEGRAM_PAID_RATE_PER_SECOND = 1000.0


class TelegramSettings(Settings):
    """Telegram's own variables (CONTRACT.md)."""

    telegram_bot_token: SecretStr | None = None
    telegram_api_base_url: str = "https://api.telegram.org/bot"
    telegram_webhook_url: str | None = None
    telegram_webhook_secret: SecretStr | None = None
    telegram_admin_ids: Annotated[tuple[int, ...], NoDecode] = ()
    telegram_paid_broadcast: bool = False
    # Digests as one rich message (sendRichMessage, Bot API 10.1+) where the server takes it.
    telegram_rich_messages: Literal["auto", "on", "off"] = "auto"
    telegram_rate_per_second: float = Field(default=30.0, gt=0, le=TELEGRAM_PAID_RATE_PER_SECOND)

    @field_validator("telegram_api_base_url", "telegram_webhook_url")
    @classmethod
    def _telegram_url(cls, value: str | None) -> str | None:
        return None if value in (None, "") else check_http_url(value or "")

    @field_validator("telegram_bot_token")
    @classmethod
    def _telegram_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not TELEGRAM_TOKEN_RE.match(value.get_secret_value()):
            raise ValueError(TELEGRAM_TOKEN_RULE)
        return value

    @field_validator("telegram_webhook_secret")
    @classmethod
    def _telegram_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not TELEGRAM_SECRET_RE.match(value.get_secret_value()):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return value

    @field_validator("telegram_admin_ids", mode="before")
    @classmethod
    def _telegram_admins(cls, value: Any) -> Any:
        return split_user_ids(
            value,
            pattern=TELEGRAM_USER_ID_RE,
            refusal="a numeric Telegram user id; list ids separated by commas, e.g. 12345,67890",
        )

    @model_validator(mode="after")
    def _telegram_pairs(self) -> Self:
        if self.telegram_webhook_url and self.telegram_bot_token is None:
            raise ValueError("TELEGRAM_BOT_TOKEN: required when TELEGRAM_WEBHOOK_URL is set")
        if self.telegram_webhook_url and self.telegram_webhook_secret is None:
            # Without it anyone who finds the URL can post updates posing as any user.
            raise ValueError(
                "TELEGRAM_WEBHOOK_SECRET: required when TELEGRAM_WEBHOOK_URL is set "
                "(1-256 characters of A-Z, a-z, 0-9, _ and -)"
            )
        if self.telegram_webhook_url and urlsplit(self.telegram_webhook_url).scheme != "https":
            # Bot API setWebhook takes HTTPS URLs only (https://core.telegram.org/bots/api#setwebhook).
            raise ValueError("TELEGRAM_WEBHOOK_URL: must be an https:// URL")
        if (
            self.telegram_rate_per_second > TELEGRAM_FREE_RATE_PER_SECOND
            and not self.telegram_paid_broadcast
        ):
            raise ValueError(
                f"TELEGRAM_RATE_PER_SECOND: above {TELEGRAM_FREE_RATE_PER_SECOND:g} needs "
                "TELEGRAM_PAID_BROADCAST=true (paid broadcasts, charged in Telegram Stars)"
            )
        return self

    @property
    def telegram_enabled(self) -> bool:
        return self.telegram_bot_token is not None


def telegram_settings(settings: Settings) -> TelegramSettings | None:
    """Telegram's section of ``settings``, None where they have none (built without it)."""
    return settings if isinstance(settings, TelegramSettings) else None


def enabled(settings: Settings) -> bool:
    found = telegram_settings(settings)
    return found is not None and found.telegram_enabled


def bot_token(settings: Settings) -> SecretStr | None:
    """``TELEGRAM_BOT_TOKEN``, None where Telegram is not configured."""
    found = telegram_settings(settings)
    return None if found is None else found.telegram_bot_token


__all__ = [
    "TelegramSettings",
    "bot_token",
    "enabled",
    "telegram_settings",
]
