"""Every configuration variable of the contract, validated once at start-up.

Settings are built in ``bot.__main__`` (the only place that reads the environment) and
passed down. A bad value raises :class:`bot.errors.ConfigError` naming the variable as the
operator spells it, with what is accepted; secrets are ``SecretStr`` and never printed.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.engine import make_url

from bot.checks import LOCAL_HOSTS as LOCAL_HOSTS
from bot.checks import check_database_url, check_http_url, config_error, split_csv
from bot.checks import check_public_base_url as check_public_base_url
from bot.checks import parse_hhmm as parse_hhmm
from bot.i18n import LANGUAGES
from bot.matching import schedule
from bot.sources.git import is_git, parse_git_url
from bot.sources.spec import parse_source, parse_sources, public_identity

# The sample wiki shipped inside the package: the default source, from any directory.
SAMPLE_WIKI = Path(__file__).resolve().parent / "sample_wiki"
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
# Bot API FAQ: about 30 messages a second in all; more only with paid broadcasts
# (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this).
TELEGRAM_FREE_RATE_PER_SECOND = 30.0
# Bot API sendMessage allow_paid_broadcast: up to 1,000 messages a second, charged in Stars
# (https://core.telegram.org/bots/api#sendmessage).
TELEGRAM_PAID_RATE_PER_SECOND = 1000.0
# A deployment admin on Slack: ``TEAM:USER`` (a workspace's id, then a user's in it), or a
# bare user id where there is one workspace (SLACK_BOT_TOKEN).
SLACK_ADMIN_RE = re.compile(r"^(?:(T[A-Z0-9]{2,}):)?([UW][A-Z0-9]{2,})$")
SLACK_COMMAND_RE = re.compile(r"^/[a-z0-9_-]{1,31}$")
MAX_SOURCE_CHARS = 2000  # sources.name, String(2000) in bot/store/schema.py
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


def check_timezone(value: str) -> str:
    """A zone a chat may keep, such as ``Asia/Seoul``; raises ValueError otherwise: the
    ``timezone`` command's own check (:func:`bot.matching.schedule.check_zone`)."""
    return schedule.check_zone(value)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True
    )

    database_url: str = "sqlite+aiosqlite:///./data/trendbot.db"
    # As configured, credentials included: parsed into bot.sources.spec.SourceSpec (public
    # identity, credentials apart) wherever it is used, and never shown (repr=False).
    wiki_sources: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(str(SAMPLE_WIKI),), repr=False
    )
    wiki_base_url: str | None = None
    # Enables POST /hooks/refresh: a push to the wiki polls at once (bot.ops.refresh).
    refresh_webhook_secret: SecretStr | None = None
    poll_interval_seconds: int = Field(default=900, ge=1, le=7 * 86400)
    default_digest_time: str = "09:00"
    default_timezone: str = "UTC"
    default_language: str = "en"  # one of the languages of bot/i18n/locales/
    # A chat's first digest brings matching pages up to this many days old (at most 10, at
    # least the newest 5 whatever their age: bot/matching/offers.py).
    welcome_digest_days: int = Field(default=30, ge=0, le=3650)

    telegram_bot_token: SecretStr | None = None
    telegram_api_base_url: str = "https://api.telegram.org/bot"
    telegram_webhook_url: str | None = None
    telegram_webhook_secret: SecretStr | None = None
    telegram_admin_ids: Annotated[tuple[int, ...], NoDecode] = ()
    telegram_paid_broadcast: bool = False
    # Digests as one rich message (sendRichMessage, Bot API 10.1+) where the server takes it.
    telegram_rich_messages: Literal["auto", "on", "off"] = "auto"

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_base_url: str = "https://slack.com/api/"
    slack_command: str = "/trend"
    slack_admin_ids: Annotated[tuple[str, ...], NoDecode] = ()
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    slack_state_secret: SecretStr | None = None
    slack_token_key: Annotated[SecretStr | None, NoDecode] = None

    telegram_rate_per_second: float = Field(default=30.0, gt=0, le=TELEGRAM_PAID_RATE_PER_SECOND)
    slack_rate_per_second: float = Field(default=1.0, gt=0, le=1_000)
    slack_workspace_rate_per_second: float = Field(
        default=SLACK_WORKSPACE_RATE_PER_SECOND, gt=0, le=1_000
    )

    public_base_url: str | None = None
    alert_source_failures: int = Field(default=3, ge=1, le=1000)
    feed_allow_cross_host_redirects: bool = False

    http_host: str = "127.0.0.1"
    http_port: int = Field(default=8080, ge=0, le=65535)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    log_format: Literal["text", "json"] = "text"

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        return check_database_url(value)

    @property
    def data_dir(self) -> Path:
        """Where the bot keeps files of its own (git sources' clones): beside a SQLite
        database, else ``./data``."""
        url = make_url(self.database_url)
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            return Path(url.database).parent
        return Path("data")

    @field_validator("wiki_sources", mode="before")
    @classmethod
    def _wiki_sources_split(cls, value: Any) -> Any:
        return split_csv(value)

    @field_validator("wiki_sources")
    @classmethod
    def _wiki_sources(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("needs at least one directory, http(s) feed URL or git repository")
        for source in value:
            if len(source) > MAX_SOURCE_CHARS:
                raise ValueError(f"a source is longer than {MAX_SOURCE_CHARS} characters")
            if is_git(source):
                try:
                    parse_git_url(source)
                except ValueError as exc:
                    raise ValueError(f"{public_identity(source)}: {exc}") from None
                if parse_source(source).credentials.query:
                    raise ValueError(
                        f"{public_identity(source)}: a repository's credentials go in its "
                        "user info (git+https://TOKEN@host/…), not in its query"
                    )
            elif "://" in source:
                try:
                    check_http_url(source)
                except ValueError:
                    raise ValueError(
                        f"{source.split('://', 1)[0]}://... is neither a directory nor an "
                        "http(s) feed URL, nor a git+https://, git+ssh:// or git+file:// "
                        "repository"
                    ) from None
        try:
            parse_sources(value)
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator(
        "wiki_base_url", "telegram_api_base_url", "telegram_webhook_url", "slack_api_base_url"
    )
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
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

    @field_validator("public_base_url")
    @classmethod
    def _public_base_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        return check_public_base_url(value or "")

    @field_validator("default_digest_time")
    @classmethod
    def _digest_time(cls, value: str) -> str:
        parse_hhmm(value)
        return value.strip()

    @field_validator("default_language")
    @classmethod
    def _language(cls, value: str) -> str:
        if value not in LANGUAGES:
            raise ValueError("Input should be " + " or ".join(repr(lang) for lang in LANGUAGES))
        return value

    @field_validator("default_timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        return check_timezone(value)

    @field_validator("default_language", "log_level", "log_format", mode="before")
    @classmethod
    def _fold_case(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        folded = value.strip()
        return (
            folded.upper()
            if folded.upper() in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
            else folded.lower()
        )

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
        value = split_csv(value)
        if isinstance(value, tuple):
            for item in value:
                if not re.fullmatch(r"-?\d{1,20}", str(item)):
                    raise ValueError(
                        f"{item!r} is not a numeric Telegram user id; "
                        "list ids separated by commas, e.g. 12345,67890"
                    )
        return value

    @field_validator("slack_admin_ids", mode="before")
    @classmethod
    def _slack_admins(cls, value: Any) -> Any:
        value = split_csv(value)
        if isinstance(value, tuple):
            for item in value:
                if not SLACK_ADMIN_RE.match(str(item)):
                    raise ValueError(
                        f"{item!r} is not a Slack user id; list TEAM:USER ids such as "
                        "T0123AB:U012AB3CD (or a bare U012AB3CD with SLACK_BOT_TOKEN), "
                        "separated by commas"
                    )
        return value

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
    def _pairs(self) -> Settings:
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

    # Derived values -----------------------------------------------------------------

    @property
    def digest_time(self) -> dt.time:
        return parse_hhmm(self.default_digest_time)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def telegram_enabled(self) -> bool:
        return self.telegram_bot_token is not None

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
        """Every secret value configured, for the log filter that redacts them: each
        ``SecretStr`` variable, a platform's own (:attr:`PlatformSpec.settings`) included."""
        values = [
            value
            for name in type(self).model_fields
            if isinstance(value := getattr(self, name), SecretStr)
        ]
        feed_credentials = [
            secret
            for source in self.wiki_sources
            for secret in parse_source(source).credentials.values()
        ]
        token_keys = (
            self.slack_token_key.get_secret_value().split(",") if self.slack_token_key else []
        )
        return (
            tuple(v.get_secret_value() for v in values if v is not None)
            + tuple(key.strip() for key in token_keys if key.strip())
            + tuple(feed_credentials)
        )


def load_settings(kind: type[Settings] = Settings, **overrides: Any) -> Settings:
    """Build settings from the environment and ``.env``; raise ConfigError on a bad value.

    ``kind`` is :class:`Settings` with the platforms' own sections, where they declare any
    (:func:`bot.channels.registry.settings_class`)."""
    try:
        return kind(**overrides)
    except ValidationError as exc:
        raise config_error(exc) from None
