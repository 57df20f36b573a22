"""Settings: every contract variable, its default, and a clear line for every bad value."""

from __future__ import annotations

import datetime as dt
import io
import re
import tokenize
from pathlib import Path

import pytest

import bot.settings
from bot.channels.registry import PLATFORMS
from bot.errors import ConfigError
from bot.i18n import LANGUAGES
from bot.settings import SAMPLE_WIKI, load_settings
from tests.cli import refusal, run_cli
from tests.conftest import Settings

TOKEN = "123456789:AAEhBP0av28pGHs_k3GfT-4VmWjR0uYsQpA"


def test_the_core_settings_name_no_platform() -> None:
    """A platform's variables, rules and checks are its package's (``PlatformSpec.settings``):
    outside comments, ``bot/settings.py`` names none of the platforms."""
    source = Path(bot.settings.__file__).read_text(encoding="utf-8")
    code = " ".join(
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type != tokenize.COMMENT
    ).lower()
    names = {spec.rules.name.value for spec in PLATFORMS} | {"telegram", "slack", "discord"}
    assert [name for name in sorted(names) if name in code] == []


def test_defaults_are_the_contract_defaults() -> None:
    s = load_settings(Settings, _env_file=None)
    assert s.database_url == "sqlite+aiosqlite:///./data/trendbot.db"
    assert s.wiki_sources == (str(SAMPLE_WIKI),)
    assert (SAMPLE_WIKI / "papers").is_dir()
    assert s.poll_interval_seconds == 900
    assert s.digest_time == dt.time(9, 0)
    assert s.default_timezone == "UTC"
    assert s.default_language == "en"
    assert s.telegram_api_base_url == "https://api.telegram.org/bot"
    assert s.slack_api_base_url == "https://slack.com/api/"
    assert s.slack_command == "/trend"
    assert s.telegram_rate_per_second == 30
    assert s.slack_rate_per_second == 1
    assert (s.http_host, s.http_port) == ("127.0.0.1", 8080)
    assert (s.log_level, s.log_format) == ("INFO", "text")
    assert not s.telegram_enabled and not s.slack_enabled


def test_environment_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKI_SOURCES", "wiki/a, https://example.org/feed.xml ,wiki/b")
    monkeypatch.setenv("TELEGRAM_ADMIN_IDS", "1001, 1002")
    monkeypatch.setenv("SLACK_ADMIN_IDS", "U012AB3CD")
    monkeypatch.setenv("DEFAULT_LANGUAGE", "KO")
    monkeypatch.setenv("LOG_LEVEL", "debug")
    s = load_settings(Settings, _env_file=None)
    assert s.wiki_sources == ("wiki/a", "https://example.org/feed.xml", "wiki/b")
    assert s.telegram_admin_ids == (1001, 1002)
    assert s.slack_admin_ids == ("U012AB3CD",)
    assert s.default_language == "ko"
    assert s.log_level == "DEBUG"


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("DATABASE_URL", "mysql://root@localhost/db", "not supported"),
        ("DATABASE_URL", "not a url", "not a database URL"),
        ("WIKI_SOURCES", "ftp://example.org/feed", "neither a directory nor an http(s) feed"),
        # A git entry that is no URL (a slash short): refused, not taken for a directory.
        ("WIKI_SOURCES", "git+https:/host/org/wiki.git", "must be a URL such as git+https://"),
        ("WIKI_SOURCES", "GIT+", "must be a URL such as git+https://"),
        ("WIKI_SOURCES", " , ", "at least one"),
        ("WIKI_BASE_URL", "wiki.example.org", "http:// or https:// URL"),
        ("POLL_INTERVAL_SECONDS", "soon", "must be a number"),
        ("POLL_INTERVAL_SECONDS", "0", "greater than or equal to 1"),
        ("DEFAULT_DIGEST_TIME", "25:00", "HH:MM"),
        ("DEFAULT_DIGEST_TIME", "9am", "HH:MM"),
        ("DEFAULT_TIMEZONE", "Mars/Olympus", "IANA time zone"),
        ("DEFAULT_TIMEZONE", "../../etc/passwd", "IANA time zone"),
        # zones the ``timezone`` command refuses too: not places
        ("DEFAULT_TIMEZONE", "Factory", "IANA time zone of a place"),
        ("DEFAULT_TIMEZONE", "localtime", "IANA time zone of a place"),
        ("DEFAULT_TIMEZONE", "posix/Asia/Seoul", "IANA time zone of a place"),
        ("DEFAULT_TIMEZONE", "EST5EDT", "IANA time zone of a place"),
        ("DEFAULT_TIMEZONE", "GMT", "did you mean UTC?"),
        ("DEFAULT_LANGUAGE", "xx", " or ".join(repr(lang) for lang in LANGUAGES)),
        ("TELEGRAM_BOT_TOKEN", "not-a-token", "bot token"),
        ("TELEGRAM_API_BASE_URL", "api.telegram.org", "http:// or https:// URL"),
        ("TELEGRAM_WEBHOOK_SECRET", "has spaces in it", "A-Z, a-z, 0-9"),
        ("TELEGRAM_ADMIN_IDS", "1001,alice", "'alice' is not a numeric Telegram user id"),
        ("SLACK_BOT_TOKEN", "xoxp-user-token", "xoxb-"),
        ("SLACK_ADMIN_IDS", "alice", "not a Slack user id"),
        ("SLACK_ADMIN_IDS", "T0123AB:U012AB3CD,bob", "'bob' is not a Slack user id"),
        ("DISCORD_ADMIN_IDS", "80351110224678912,carol", "'carol' is not a Discord user id"),
        ("SLACK_COMMAND", "trend", "slash command"),
        ("SLACK_SIGNING_SECRET", "  ", "is blank"),
        ("SLACK_API_BASE_URL", "slack", "http:// or https:// URL"),
        ("TELEGRAM_RATE_PER_SECOND", "-1", "greater than 0"),
        ("SLACK_RATE_PER_SECOND", "fast", "must be a number"),
        ("HTTP_PORT", "70000", "less than or equal to 65535"),
        ("LOG_LEVEL", "LOUD", "must be"),
        ("LOG_FORMAT", "xml", "'text' or 'json'"),
    ],
)
def test_bad_value_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == variable
    assert expected in info.value.message


@pytest.mark.parametrize(
    "token", ["123456:ABCdef", "123456:ABC...", "12345:" + "a" * 19, "x:" + "a" * 35]
)
def test_a_refused_telegram_token_is_told_the_rule_with_an_example_that_passes(
    monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", token)
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    message = info.value.message
    assert info.value.variable == "TELEGRAM_BOT_TOKEN" and token not in str(info.value)
    assert "20 or more" in message and "colon" in message
    [example] = re.findall(r"e\.g\. (\S+?)\)", message)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", example)  # the example passes its own check
    assert load_settings(Settings, _env_file=None).telegram_bot_token is not None


def test_slack_token_without_signing_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-2-secretvalue")
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == "SLACK_SIGNING_SECRET"
    assert "secretvalue" not in str(info.value)
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-socket")
    assert load_settings(
        Settings, _env_file=None
    ).slack_enabled  # Socket Mode needs no signing secret


def test_secrets_are_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    s = load_settings(Settings, _env_file=None)
    assert TOKEN not in repr(s) and TOKEN not in str(s)
    assert s.secrets() == (TOKEN,)


def test_dotenv_file_is_read(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    env_file = tmp_path / ".env"
    env_file.write_text("DEFAULT_TIMEZONE=Asia/Seoul\n# comment\nPOLL_INTERVAL_SECONDS=60\n")
    s = load_settings(Settings, _env_file=env_file)
    assert (s.default_timezone, s.poll_interval_seconds) == ("Asia/Seoul", 60)


def test_cli_exits_2_with_one_line_and_no_secret(clean_env: dict[str, str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = dict(clean_env, SLACK_BOT_TOKEN="xoxb-very-secret-value", DEFAULT_TIMEZONE="Nowhere/City")
    result = run_cli("poll", env=env, cwd=tmp_path, timeout=60)
    line = refusal(result)
    assert "DEFAULT_TIMEZONE" in line or "SLACK_SIGNING_SECRET" in line
    assert "Traceback" not in result.stderr
    assert "very-secret" not in result.stderr + result.stdout


def test_cli_refuses_a_zone_that_is_no_place_in_one_line(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    # The tz database has a "Factory" zone, but no chat may use it: the settings refuse it
    # as the ``timezone`` command does, before anything starts.
    env = dict(clean_env, DEFAULT_TIMEZONE="Factory")
    line = refusal(run_cli("poll", env=env, cwd=tmp_path, timeout=60))
    assert line.endswith(
        "DEFAULT_TIMEZONE: must be an IANA time zone of a place, such as UTC or Asia/Seoul"
    )
