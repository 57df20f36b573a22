"""A source's identity: a stable id and a shown name, neither holding a credential; and
``SLACK_ADMIN_IDS`` entries as ``TEAM:USER``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import ConfigError
from bot.rules.sources import parse_source
from bot.settings import load_settings
from bot.sources import SourceSet, identify, source_id
from tests.conftest import Settings

SECRET = st.text(
    alphabet="ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789", min_size=8, max_size=30
)


@pytest.mark.parametrize(
    ("configured", "name"),
    [
        (
            "https://user:pass@feeds.example.org/f.json?api_key=K",
            "https://feeds.example.org/f.json",
        ),
        (
            "https://ghp_0123456789abcdefABCDEF@git.example.org/org/wiki",
            "https://git.example.org/org/wiki",
        ),
        (
            "git+https://ghp_0123456789abcdefABCDEF@git.example.org/w.git@main",
            "git+https://git.example.org/w.git@main",
        ),
        ("examples/wiki", "examples/wiki"),
    ],
)
def test_the_name_is_the_url_without_credentials(configured: str, name: str) -> None:
    (source,) = identify([configured])
    assert source.name == name
    assert source.id.startswith("src-") and len(source.id) == 16
    assert configured == name or configured not in repr(source)


def test_sources_that_would_show_alike_are_told_apart_by_their_ids() -> None:
    one, two, other = identify(
        ["https://h.example/f?lang=en", "https://h.example/f?lang=ko", "https://h.example/g"]
    )
    assert one.id != two.id
    assert one.name == f"https://h.example/f ({one.id})"
    assert two.name == f"https://h.example/f ({two.id})"
    assert other.name == "https://h.example/g"


def test_sources_that_differ_only_in_their_credentials_are_one_source() -> None:
    with pytest.raises(ValueError, match="listed twice"):
        identify(["https://h.example/f?token=AAAAAAAA", "https://h.example/f?token=BBBBBBBB"])


def test_a_source_no_longer_configured_gets_an_identity_of_its_own() -> None:
    sources = SourceSet(["examples/wiki"])
    gone = sources.of("https://old.example/f")
    assert gone.name == "https://old.example/f" and gone.id == source_id("https://old.example/f")


def test_a_long_user_name_without_password_is_a_token() -> None:
    token = parse_source("https://ghp_0123456789abcdef@h.example/w").credentials
    assert "ghp_0123456789abcdef" in token.values()
    assert parse_source("https://git@h.example/w").credentials.values() == ()  # a user name


@given(
    user=SECRET,
    password=SECRET,
    key=SECRET,
    param=st.sampled_from(["api_key", "token", "key", "secret", "sig", "X-Amz-Signature"]),
    path=st.sampled_from(["/f.json", "/a/b.atom", ""]),
)
def test_no_credential_reaches_the_id_or_the_name(
    user: str, password: str, key: str, param: str, path: str
) -> None:
    configured = f"https://{user}:{password}@feeds.example.org{path}?{param}={key}&lang=en"
    (source,) = identify([configured])
    for secret in (password, key):
        assert secret not in source.name and secret not in source.id
    rotated = f"https://{user}:{password}x@feeds.example.org{path}?{param}={key}y&lang=en"
    assert source_id(rotated) == source.id  # a rotated credential keeps the id


@pytest.mark.parametrize("entries", ["T0123AB:U0456CD", "T0123AB:U0456CD,TB2:W789"])
def test_team_user_admins_are_read_with_oauth(entries: str) -> None:
    settings = load_settings(
        Settings,
        _env_file=None,
        slack_client_id="1111.2222",
        slack_client_secret="c",
        slack_signing_secret="s",
        slack_state_secret="state-secret-0123456789",
        slack_token_key="Wq3HNFSkbZoEyi8Kc3Ij1SMw1wMCOMFYQz8GkMzXFbA=",
        slack_admin_ids=entries,
    )
    assert settings.slack_admins[0] == ("T0123AB", "U0456CD")


def test_a_bare_user_id_with_oauth_names_the_variable() -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(
            Settings,
            _env_file=None,
            slack_client_id="1111.2222",
            slack_client_secret="c",
            slack_signing_secret="s",
            slack_state_secret="state-secret-0123456789",
            slack_token_key="Wq3HNFSkbZoEyi8Kc3Ij1SMw1wMCOMFYQz8GkMzXFbA=",
            slack_admin_ids="U0456CD",
        )
    assert raised.value.variable == "SLACK_ADMIN_IDS"
    assert "TEAM:USER" in str(raised.value)


def test_a_bare_user_id_with_a_bot_token_is_one_workspace_admin() -> None:
    settings = load_settings(
        Settings,
        _env_file=None,
        slack_bot_token="xoxb-1",
        slack_signing_secret="s",
        slack_admin_ids="U0456CD,T12:U0789",
    )
    assert settings.slack_admins == ((None, "U0456CD"), ("T12", "U0789"))
