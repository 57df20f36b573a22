"""Discord's own variables (CONTRACT.md): a section of the settings
(:attr:`bot.channels.platform.PlatformSpec.settings`), read with the rest by the CLI
(:func:`bot.channels.registry.settings_class`). Discord's code finds them with
``isinstance(settings, DiscordSettings)``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode

from bot import platforms
from bot.checks import check_http_url, split_user_ids
from bot.settings import Settings

# The platform's name, declared by its package (declaring it again returns the same one).
DISCORD = platforms.declare("discord")
DEFAULT_API_BASE_URL = "https://discord.com/api/v10"
# A snowflake: a 64-bit id in decimal (https://discord.com/developers/docs/reference#snowflakes).
SNOWFLAKE_RE = re.compile(r"^[0-9]{1,20}$")
# The application's public key: 32 bytes of Ed25519, in hex (General Information page).
PUBLIC_KEY_RE = re.compile(r"^[0-9a-fA-F]{64}$")
# A bot token is three base64url parts joined by dots (the first the bot's id, encoded).
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{3,}\.[A-Za-z0-9_-]{10,}$")


class DiscordSettings(Settings):
    """Discord's own variables (CONTRACT.md)."""

    discord_bot_token: SecretStr | None = Field(
        default=None,
        description="enables Discord (sent as `Authorization: Bot TOKEN`)",
    )
    discord_application_id: str | None = Field(
        default=None,
        description="the application's id; required with `DISCORD_BOT_TOKEN`",
    )
    discord_public_key: str | None = Field(
        default=None,
        description=(
            "hex Ed25519 public key that verifies interactions on "
            "`POST /discord/interactions`; required with `DISCORD_BOT_TOKEN`"
        ),
    )
    discord_api_base_url: str = Field(
        default=DEFAULT_API_BASE_URL,
        description="Discord's REST API, version 10 (tests point it at a local server)",
    )
    discord_admin_ids: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="comma-separated Discord user ids of deployment admins",
    )

    @field_validator("discord_bot_token")
    @classmethod
    def _discord_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not TOKEN_RE.match(value.get_secret_value()):
            raise ValueError(
                "is not a bot token (the Bot page of the application: three parts joined by dots)"
            )
        return value

    @field_validator("discord_application_id")
    @classmethod
    def _application_id(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not SNOWFLAKE_RE.match(value or ""):
            raise ValueError("is not an application id (digits, the General Information page)")
        return value

    @field_validator("discord_public_key")
    @classmethod
    def _public_key(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not PUBLIC_KEY_RE.match(value or ""):
            raise ValueError("is not a public key (64 hex digits, the General Information page)")
        return (value or "").lower()

    @field_validator("discord_api_base_url")
    @classmethod
    def _api_base_url(cls, value: str) -> str:
        return check_http_url(value).rstrip("/")

    @field_validator("discord_admin_ids", mode="before")
    @classmethod
    def _discord_admins(cls, value: Any) -> Any:
        return split_user_ids(
            value,
            pattern=SNOWFLAKE_RE,
            refusal="a Discord user id; list ids separated by commas, "
            "e.g. 80351110224678912,80351110224678913",
        )

    @model_validator(mode="after")
    def _discord_pairs(self) -> Self:
        if self.discord_bot_token is None:
            for name in ("discord_application_id", "discord_public_key"):
                if getattr(self, name) is not None:
                    raise ValueError(f"DISCORD_BOT_TOKEN: required when {name.upper()} is set")
            return self
        for name in ("discord_application_id", "discord_public_key"):
            if getattr(self, name) is None:
                raise ValueError(f"{name.upper()}: required with DISCORD_BOT_TOKEN")
        return self


def enabled(settings: Settings) -> bool:
    """Whether Discord is configured (``DISCORD_BOT_TOKEN`` is set)."""
    return isinstance(settings, DiscordSettings) and settings.discord_bot_token is not None


__all__ = [
    "DISCORD",
    "DiscordSettings",
    "enabled",
]
