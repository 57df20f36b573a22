"""Every configuration variable of the contract, validated once at start-up.

Settings are built in ``bot.__main__`` (the only place that reads the environment) and
passed down. A bad value raises :class:`bot.errors.ConfigError` naming the variable as the
operator spells it, with what is accepted; secrets are ``SecretStr`` and never printed.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.engine import make_url

from bot.checks import LOCAL_HOSTS as LOCAL_HOSTS
from bot.checks import check_database_url, check_http_url, config_error, split_csv
from bot.checks import check_public_base_url as check_public_base_url
from bot.checks import parse_hhmm as parse_hhmm
from bot.i18n import LANGUAGES
from bot.rules import schedule
from bot.rules.giturl import is_git, parse_git_url
from bot.rules.sources import parse_source, parse_sources, public_identity

# The sample wiki shipped inside the package: the default source, from any directory.
SAMPLE_WIKI = Path(__file__).resolve().parent / "sample_wiki"
MAX_SOURCE_CHARS = 2000  # sources.name, String(2000) in bot/store/schema.py


def check_timezone(value: str) -> str:
    """A zone a chat may keep, such as ``Asia/Seoul``; raises ValueError otherwise: the
    ``timezone`` command's own check (:func:`bot.rules.schedule.check_zone`)."""
    return schedule.check_zone(value)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True
    )

    database_url: str = "sqlite+aiosqlite:///./data/trendbot.db"
    # As configured, credentials included: parsed into bot.rules.sources.SourceSpec (public
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

    @field_validator("wiki_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return None if value in (None, "") else check_http_url(value or "")

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

    # Derived values -----------------------------------------------------------------

    @property
    def digest_time(self) -> dt.time:
        return parse_hhmm(self.default_digest_time)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    def secrets(self) -> tuple[str, ...]:
        """Every secret value configured, for the log filter that redacts them: each
        ``SecretStr`` variable, a platform's own (:attr:`PlatformSpec.settings`) included; a
        platform's section adds any secret a variable holds more than one of."""
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
        return tuple(v.get_secret_value() for v in values if v is not None) + tuple(
            feed_credentials
        )


def load_settings(kind: type[Settings] = Settings, **overrides: Any) -> Settings:
    """Build settings from the environment and ``.env``; raise ConfigError on a bad value.

    ``kind`` is :class:`Settings` with the platforms' own sections, where they declare any
    (:func:`bot.channels.registry.settings_class`)."""
    try:
        return kind(**overrides)
    except ValidationError as exc:
        raise config_error(exc) from None
