"""Settings of Slack installed by OAuth: one setup or the other, each with what it needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from bot.errors import ConfigError
from bot.settings import load_settings
from tests.cli import refusal, run_cli
from tests.conftest import ROOT, Settings

CLIENT_ID = "1234567890.1234567890"
CLIENT_SECRET = "client-secret-value-0123456789"
SIGNING_SECRET = "signing-secret-value-0123456789"
STATE_SECRET = "state-secret-value-0123456789"
KEY = Fernet.generate_key().decode()
OAUTH = {
    "SLACK_CLIENT_ID": CLIENT_ID,
    "SLACK_CLIENT_SECRET": CLIENT_SECRET,
    "SLACK_SIGNING_SECRET": SIGNING_SECRET,
    "SLACK_STATE_SECRET": STATE_SECRET,
    "SLACK_TOKEN_KEY": KEY,
}


def _set(monkeypatch: pytest.MonkeyPatch, values: dict[str, str]) -> None:
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def test_a_client_id_needs_no_bot_token(monkeypatch: pytest.MonkeyPatch) -> None:
    _set(monkeypatch, OAUTH)
    s = load_settings(Settings, _env_file=None)
    assert s.slack_enabled and s.slack_oauth and s.slack_bot_token is None
    for secret in (CLIENT_SECRET, SIGNING_SECRET, STATE_SECRET, KEY):
        assert secret in s.secrets()
        assert secret not in repr(s)


def test_both_setups_at_once_is_refused_naming_the_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    _set(monkeypatch, {**OAUTH, "SLACK_BOT_TOKEN": "xoxb-1-2-secretvalue"})
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == "SLACK_BOT_TOKEN"
    assert "SLACK_CLIENT_ID" in info.value.message and "not both" in info.value.message
    assert "secretvalue" not in str(info.value)


@pytest.mark.parametrize(
    "missing",
    ["SLACK_CLIENT_SECRET", "SLACK_SIGNING_SECRET", "SLACK_STATE_SECRET", "SLACK_TOKEN_KEY"],
)
def test_a_client_id_needs_each_oauth_setting(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    _set(monkeypatch, {k: v for k, v in OAUTH.items() if k != missing})
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == missing
    assert "SLACK_CLIENT_ID" in info.value.message


@pytest.mark.parametrize(
    "variable", ["SLACK_CLIENT_SECRET", "SLACK_STATE_SECRET", "SLACK_TOKEN_KEY"]
)
def test_an_oauth_setting_without_a_client_id_is_refused(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    _set(monkeypatch, {variable: OAUTH[variable]})
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == "SLACK_CLIENT_ID"
    assert variable in info.value.message


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("SLACK_CLIENT_ID", "my-app", "Client ID"),
        ("SLACK_CLIENT_ID", "123.", "Client ID"),
        ("SLACK_STATE_SECRET", "short", "at least 16"),
        ("SLACK_TOKEN_KEY", "not-a-fernet-key", "Fernet key"),
        ("SLACK_TOKEN_KEY", " , ", "empty"),
        ("SLACK_TOKEN_KEY", f"{KEY},also-not-a-key", "Fernet key"),
    ],
)
def test_a_bad_oauth_value_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    _set(monkeypatch, {**OAUTH, variable: value})
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == variable
    assert expected in info.value.message
    secret = variable != "SLACK_CLIENT_ID" and value.strip(" ,")
    assert not secret or value not in str(info.value)


def test_a_socket_mode_token_does_not_go_with_oauth(monkeypatch: pytest.MonkeyPatch) -> None:
    _set(monkeypatch, {**OAUTH, "SLACK_APP_TOKEN": "xapp-1-socket"})
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == "SLACK_APP_TOKEN"


def test_two_token_keys_while_the_key_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    old = Fernet.generate_key().decode()
    _set(monkeypatch, {**OAUTH, "SLACK_TOKEN_KEY": f"{KEY},{old}"})
    s = load_settings(Settings, _env_file=None)
    assert KEY in s.secrets() and old in s.secrets()  # each redacted on its own


def test_cli_says_which_setup_to_choose_in_one_line_exit_2(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    env = dict(clean_env, **OAUTH, SLACK_BOT_TOKEN="xoxb-very-secret-value")
    result = run_cli("subscribers", env=env, cwd=tmp_path, timeout=60)
    line = refusal(result)
    assert "SLACK_BOT_TOKEN" in line and "SLACK_CLIENT_ID" in line
    output = result.stderr + result.stdout
    for secret in ("very-secret", CLIENT_SECRET, SIGNING_SECRET, STATE_SECRET, KEY):
        assert secret not in output


def _slack_page_oauth_steps() -> str:
    text = (ROOT / "docs" / "slack.md").read_text(encoding="utf-8")
    return " ".join(text.split("Moving from one workspace's token to OAuth", 1)[1].split())


def test_the_slack_page_says_what_moving_to_oauth_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OAuth steps name the two changes start-up asks for, with an admin entry that passes."""
    steps = _slack_page_oauth_steps()
    assert "take `SLACK_BOT_TOKEN`" in steps
    [example] = re.findall(r"`(T\w+:U\w+)`", steps)[:1]
    _set(monkeypatch, {**OAUTH, "SLACK_ADMIN_IDS": example})
    assert load_settings(Settings, _env_file=None).slack_admins == (tuple(example.split(":")),)
    bare = example.split(":")[1]
    monkeypatch.setenv("SLACK_ADMIN_IDS", bare)
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == "SLACK_ADMIN_IDS" and "TEAM:USER" in info.value.message
    monkeypatch.setenv("SLACK_ADMIN_IDS", example)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-2-secretvalue")
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == "SLACK_BOT_TOKEN"


@pytest.mark.parametrize("page", [".env.example", "docs/reference/environment.md"])
def test_the_admin_ids_entry_says_team_user(page: str) -> None:
    text = " ".join((ROOT / page).read_text(encoding="utf-8").replace("# ", " ").split())
    entry = text.split("SLACK_ADMIN_IDS", 1)[0] if page == ".env.example" else text
    assert "TEAM:USER" in entry and "refuses" in entry
    assert "Slack user ids (U...) allowed" not in text
    # The install states are signed, never kept (bot/channels/slack/oauth.py).
    assert "kept in the database" not in text and "signed, not stored" in text
