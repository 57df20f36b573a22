"""Slack's own variables (CONTRACT.md): a section of the settings
(:attr:`bot.channels.platform.PlatformSpec.settings`), read with the rest by the CLI
(:func:`bot.channels.registry.settings_class`). Slack's code finds them with
``isinstance(settings, SlackSettings)``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode

from bot.checks import check_http_url, split_user_ids
from bot.settings import Settings

# A deployment admin on Slack: ``TEAM:USER`` (a workspace's id, then a user's in it), or a
# bare user id where there is one workspace (SLACK_BOT_TOKEN).
SLACK_ADMIN_RE = re.compile(r"^(?:(T[A-Z0-9]{2,}):)?([UW][A-Z0-9]{2,})$")
SLACK_COMMAND_RE = re.compile(r"^/[a-z0-9_-]{1,31}$")
DEFAULT_COMMAND = "/trend"
# chat.postMessage: "limiting posting to several hundred messages per minute" in a workspace
# (https://api.slack.com/methods/chat.postMessage, Rate limiting): 300 a minute.
SLACK_WORKSPACE_RATE_PER_SECOND = 5.0
# A Slack app's Client ID is two numbers joined by a dot (Basic Information, App Credentials).
SLACK_CLIENT_ID_RE = re.compile(r"^\d{1,20}\.\d{1,20}$")
# The OAuth state's HMAC key: at least 128 bits of a random string.
MIN_STATE_SECRET_CHARS = 16
KEY_COMMAND_HINT = (
    "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'"
)


class SlackSettings(Settings):
    """Slack's own variables (CONTRACT.md)."""

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_base_url: str = "https://slack.com/api/"
    slack_command: str = DEFAULT_COMMAND
    slack_admin_ids: Annotated[tuple[str, ...], NoDecode] = ()
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    slack_state_secret: SecretStr | None = None
    slack_token_key: Annotated[SecretStr | None, NoDecode] = None
    slack_rate_per_second: float = Field(default=1.0, gt=0, le=1_000)
    slack_workspace_rate_per_second: float = Field(
        default=SLACK_WORKSPACE_RATE_PER_SECOND, gt=0, le=1_000
    )

    @field_validator("slack_api_base_url")
    @classmethod
    def _slack_url(cls, value: str | None) -> str | None:
        return None if value in (None, "") else check_http_url(value or "")

    @field_validator("slack_signing_secret")
    @classmethod
    def _signing_secret(cls, value: SecretStr | None) -> SecretStr | None:
        # Every request would be refused: no signature of Slack's is made with a blank key.
        if value is not None and not value.get_secret_value().strip():
            raise ValueError(
                "is blank; copy the Signing Secret from the app's Basic Information page, "
                "or leave it unset"
            )
        return value

    @field_validator("slack_admin_ids", mode="before")
    @classmethod
    def _slack_admins(cls, value: Any) -> Any:
        return split_user_ids(
            value,
            pattern=SLACK_ADMIN_RE,
            refusal="a Slack user id; list TEAM:USER ids such as T0123AB:U012AB3CD "
            "(or a bare U012AB3CD with SLACK_BOT_TOKEN), separated by commas",
        )

    @field_validator("slack_bot_token")
    @classmethod
    def _slack_bot_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xoxb-"):
            raise ValueError("must be a bot token starting with xoxb-")
        return value

    @field_validator("slack_app_token")
    @classmethod
    def _slack_app_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xapp-"):
            raise ValueError("must be an app-level token starting with xapp-")
        return value

    @field_validator("slack_client_id")
    @classmethod
    def _slack_client_id(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not SLACK_CLIENT_ID_RE.match(value or ""):
            raise ValueError("must be the app's Client ID, such as 1234567890.1234567890")
        return value

    @field_validator("slack_state_secret")
    @classmethod
    def _slack_state_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_STATE_SECRET_CHARS:
            raise ValueError(
                f"must be at least {MIN_STATE_SECRET_CHARS} random characters, e.g. from "
                "openssl rand -hex 32"
            )
        return value

    @field_validator("slack_token_key")
    @classmethod
    def _slack_token_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        from cryptography.fernet import Fernet

        keys = [k.strip() for k in value.get_secret_value().split(",") if k.strip()]
        if not keys:
            raise ValueError("is empty; generate a key with " + KEY_COMMAND_HINT)
        for key in keys:
            try:
                Fernet(key)
            except ValueError:
                raise ValueError(
                    "is not a Fernet key (32 url-safe base64-encoded bytes); generate one with "
                    + KEY_COMMAND_HINT
                ) from None
        return value

    @field_validator("slack_command")
    @classmethod
    def _slack_command(cls, value: str) -> str:
        if not SLACK_COMMAND_RE.match(value):
            raise ValueError("must be a slash command such as /trend (lowercase, 1-31 chars)")
        return value

    @model_validator(mode="after")
    def _slack_pairs(self) -> Self:
        self._slack_oauth_pairs()
        if (
            self.slack_bot_token is not None
            and self.slack_app_token is None
            and self.slack_signing_secret is None
        ):
            raise ValueError(
                "SLACK_SIGNING_SECRET: required with SLACK_BOT_TOKEN in HTTP mode "
                "(or set SLACK_APP_TOKEN for Socket Mode)"
            )
        if (
            self.slack_bot_token is None
            and not self.slack_oauth
            and (self.slack_app_token or self.slack_signing_secret)
        ):
            raise ValueError(
                "SLACK_BOT_TOKEN: required when SLACK_SIGNING_SECRET or SLACK_APP_TOKEN is set"
            )
        return self

    def _slack_oauth_pairs(self) -> None:
        """One Slack setup or the other: a bot token, or OAuth install with its settings."""
        if self.slack_client_id is not None:
            for team, user in self.slack_admins:
                if team is None:
                    # With many workspaces a user id alone does not say whose user it is.
                    raise ValueError(
                        f"SLACK_ADMIN_IDS: {user} names no workspace; with SLACK_CLIENT_ID "
                        f"write TEAM:USER, e.g. T0123AB:{user}"
                    )
        if self.slack_client_id is None:
            for name in ("slack_client_secret", "slack_state_secret", "slack_token_key"):
                if getattr(self, name) is not None:
                    raise ValueError(f"SLACK_CLIENT_ID: required when {name.upper()} is set")
            return
        if self.slack_bot_token is not None:
            raise ValueError(
                "SLACK_BOT_TOKEN: set either SLACK_BOT_TOKEN (one workspace) or "
                "SLACK_CLIENT_ID (install by OAuth to many workspaces), not both"
            )
        if self.slack_app_token is not None:
            raise ValueError(
                "SLACK_APP_TOKEN: OAuth install (SLACK_CLIENT_ID) serves Slack over HTTP; "
                "unset SLACK_APP_TOKEN and set SLACK_SIGNING_SECRET"
            )
        for name in (
            "slack_client_secret",
            "slack_signing_secret",
            "slack_state_secret",
            "slack_token_key",
        ):
            if getattr(self, name) is None:
                raise ValueError(f"{name.upper()}: required when SLACK_CLIENT_ID is set")

    @property
    def slack_enabled(self) -> bool:
        return self.slack_bot_token is not None or self.slack_oauth

    @property
    def slack_admins(self) -> tuple[tuple[str | None, str], ...]:
        """``SLACK_ADMIN_IDS`` as ``(team, user)`` pairs; ``team`` None for a bare user id
        (one workspace, ``SLACK_BOT_TOKEN``)."""
        found: list[tuple[str | None, str]] = []
        for entry in self.slack_admin_ids:
            match = SLACK_ADMIN_RE.match(entry)
            if match is not None:
                found.append((match[1], match[2]))
        return tuple(found)

    @property
    def slack_oauth(self) -> bool:
        """Slack is installed by OAuth to many workspaces (``SLACK_CLIENT_ID``)."""
        return self.slack_client_id is not None

    def secrets(self) -> tuple[str, ...]:
        """The core's secrets and each key of ``SLACK_TOKEN_KEY`` alone (a list of keys:
        any one of them may turn up in a line)."""
        keys = self.slack_token_key.get_secret_value().split(",") if self.slack_token_key else []
        return super().secrets() + tuple(key.strip() for key in keys if key.strip())


def slack_settings(settings: Settings) -> SlackSettings | None:
    """Slack's section of ``settings``, None where they have none (built without it)."""
    return settings if isinstance(settings, SlackSettings) else None


def enabled(settings: Settings) -> bool:
    found = slack_settings(settings)
    return found is not None and found.slack_enabled


__all__ = [
    "SlackSettings",
    "enabled",
    "slack_settings",
]
