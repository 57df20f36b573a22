"""Discord as a platform (:mod:`bot.channels.platform`): its variables, its rules, and how
to open it.

Its variables are a section of their own (:class:`DiscordSettings`), read with the rest
by the CLI (:func:`bot.channels.registry.settings_class`); the REST client and the
interactions endpoint load only where ``DISCORD_BOT_TOKEN`` is set (:mod:`.connect`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode

from bot import platforms
from bot.channels.platform import Opening, PlatformSpec, Route
from bot.checks import check_http_url, split_csv
from bot.settings import Settings

if TYPE_CHECKING:
    from bot.channels.discord.connect import DiscordConnection

DISCORD = platforms.declare("discord")
# Discord posts every interaction here (the application's Interactions Endpoint URL).
INTERACTIONS = Route("POST", "/discord/interactions")
# A link that adds the bot to a server: a redirect to Discord's OAuth2 authorize page.
INSTALL = Route("GET", "/discord/install")
DEFAULT_API_BASE_URL = "https://discord.com/api/v10"
# A snowflake: a 64-bit id in decimal (https://discord.com/developers/docs/reference#snowflakes).
SNOWFLAKE_RE = re.compile(r"^[0-9]{1,20}$")
# The application's public key: 32 bytes of Ed25519, in hex (General Information page).
PUBLIC_KEY_RE = re.compile(r"^[0-9a-fA-F]{64}$")
# A bot token is three base64url parts joined by dots (the first the bot's id, encoded).
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{3,}\.[A-Za-z0-9_-]{10,}$")
# The same, wherever it turns up in a log line or an error.
TOKEN_IN_TEXT = re.compile(r"\b[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}\b")
# An interaction's token in a follow-up URL (/webhooks/APP/TOKEN), good for 15 minutes.
INTERACTION_TOKEN_IN_TEXT = re.compile(r"(?<=/webhooks/)([0-9]{1,20}/)[A-Za-z0-9_.-]{20,}")


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
        value = split_csv(value)
        if isinstance(value, tuple):
            for item in value:
                if not SNOWFLAKE_RE.match(str(item)):
                    raise ValueError(
                        f"{item!r} is not a Discord user id; list ids separated by commas, "
                        "e.g. 80351110224678912,80351110224678913"
                    )
        return value

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
    return isinstance(settings, DiscordSettings) and settings.discord_bot_token is not None


def _admin_ids(settings: Settings) -> tuple[str, ...]:
    return settings.discord_admin_ids if isinstance(settings, DiscordSettings) else ()


def _admins(settings: Settings) -> platforms.AdminCheck:
    """``DISCORD_ADMIN_IDS``: user ids (snowflakes); the entry is the id."""
    ids = set(_admin_ids(settings))
    return lambda user, _workspace: user if user in ids else None


def _admin_chat(_settings: Settings, entry: str) -> platforms.AdminChat:
    # A DM channel has an id of its own, not the user's: an admin's alerts reach the DM
    # in which they answered ``alerts on`` (its chat is then kept with their choice).
    return platforms.AdminChat(chat_id=entry, opened=False)


def _connect(opening: Opening) -> DiscordConnection:
    from bot.channels.discord.connect import connect

    return connect(opening)


RULES = platforms.PlatformRules(
    name=DISCORD,
    private_replies=True,  # every answer to a command or a press is ephemeral (flag 64)
    enabled=enabled,
    title="Discord",
    admin_ids=_admin_ids,
    admins=_admins,
    admin_chat=_admin_chat,
    redact=(TOKEN_IN_TEXT, INTERACTION_TOKEN_IN_TEXT),
)
PLATFORM = PlatformSpec(
    rules=RULES, connect=_connect, routes=(INTERACTIONS, INSTALL), settings=DiscordSettings
)

platforms.register(RULES)
