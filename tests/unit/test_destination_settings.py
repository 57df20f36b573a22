"""PUBLIC_BASE_URL and ALERT_SOURCE_FAILURES."""

from __future__ import annotations

import pytest

from bot.errors import ConfigError
from bot.settings import load_settings
from tests.conftest import Settings


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://bot.example.com", "https://bot.example.com"),
        ("https://bot.example.com/trend/", "https://bot.example.com/trend"),
        ("https://bot.example.com:8443", "https://bot.example.com:8443"),
        ("http://localhost:8080", "http://localhost:8080"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("", None),
    ],
)
def test_public_base_url(monkeypatch: pytest.MonkeyPatch, value: str, expected: str | None) -> None:
    monkeypatch.setenv("PUBLIC_BASE_URL", value)
    assert load_settings(Settings, _env_file=None).public_base_url == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("http://bot.example.com", "https://"),
        ("http://localhost.example.com", "https://"),
        ("ftp://bot.example.com", "https://"),
        ("bot.example.com", "https://"),
        ("https://", "https://"),
        ("https://bot.example.com/?token=1", "https://"),
        ("https://bot.example.com/#x", "https://"),
        ("https://user:pw@bot.example.com", "https://"),
        ("https://bot.example.com:port", "https://"),
        ("https://[::1", "https://"),
    ],
)
def test_bad_public_base_url_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    monkeypatch.setenv("PUBLIC_BASE_URL", value)
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == "PUBLIC_BASE_URL"
    assert expected in info.value.message
    assert "pw" not in info.value.message


@pytest.mark.parametrize(
    ("value", "expected"), [("0", "greater than or equal to 1"), ("x", "number")]
)
def test_alert_source_failures(monkeypatch: pytest.MonkeyPatch, value: str, expected: str) -> None:
    assert load_settings(Settings, _env_file=None).alert_source_failures == 3
    monkeypatch.setenv("ALERT_SOURCE_FAILURES", value)
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, _env_file=None)
    assert info.value.variable == "ALERT_SOURCE_FAILURES" and expected in info.value.message
