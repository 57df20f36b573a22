"""Feed URLs: the redacted form shown everywhere, the credentials scrubbed from logs, and
which addresses count as internal for redirects."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.settings import Settings
from bot.sources.urls import is_internal_address, redact_url, scrub, url_secrets


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pass@feeds.example.org/wiki.atom", "https://feeds.example.org/wiki.atom"),
        ("https://feeds.example.org/f?api_key=s3cret&x=1", "https://feeds.example.org/f"),
        ("http://feeds.example.org:8080/f?token=abc#frag", "http://feeds.example.org:8080/f"),
        ("https://[::1]:8443/feed?key=k", "https://[::1]:8443/feed"),
        ("https://FEEDS.example.org", "https://feeds.example.org"),
        ("https://feeds.example.org:notaport/f", "https://[invalid URL]"),
        ("examples/wiki", "examples/wiki"),  # a directory is shown as configured
        ("/srv/wiki?token=x", "/srv/wiki?token=x"),
    ],
)
def test_redact_url_keeps_scheme_host_port_and_path(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("url", "secrets"),
    [
        ("https://user:pa55word@h/f", {"pa55word", "user:pa55word"}),
        ("https://h/f?api_key=K3Y1&page=2", {"K3Y1"}),
        ("https://h/f?token=T0K3N&access_token=A11", {"T0K3N", "A11"}),
        ("https://h/f?X-Amz-Signature=SIG99&X-Amz-Credential=CRED9", {"SIG99", "CRED9"}),
        ("https://h/f?myAppSecret=S3CR", {"S3CR"}),
        ("https://h/f?page=2&lang=en", set()),
        ("https://h/f?token=a%2Bb", {"a%2Bb", "a+b"}),
    ],
)
def test_url_secrets_finds_credentials(url: str, secrets: set[str]) -> None:
    found = set(url_secrets(url))
    assert secrets <= found
    if not secrets:
        assert found == set()


def test_basic_auth_encoding_of_the_user_info_is_a_secret_too() -> None:
    encoded = base64.b64encode(b"user:pa55word").decode()
    assert encoded in url_secrets("https://user:pa55word@h/f")


def test_scrub_removes_the_url_and_each_credential() -> None:
    url = "https://user:pa55word@h.example/f?token=T0K3N"
    text = f"GET {url} failed; retried with token=T0K3N (pa55word)"
    cleaned = scrub(text, url)
    assert "pa55word" not in cleaned and "T0K3N" not in cleaned
    assert "https://h.example/f" in cleaned


def test_settings_list_feed_credentials_among_the_secrets_the_logs_redact() -> None:
    settings = Settings(wiki_sources="examples/wiki,https://u:pa55word@h/f?api_key=K3Y1")
    assert {"pa55word", "K3Y1"} <= set(settings.secrets())


@pytest.mark.parametrize(
    ("host", "internal"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("10.1.2.3", True),
        ("172.16.0.1", True),
        ("192.168.1.1", True),
        ("169.254.169.254", True),  # cloud metadata: link-local
        ("fe80::1%eth0", True),
        ("fc00::1", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", True),
        ("100.64.0.1", True),  # carrier-grade NAT: shared, not public
        ("93.184.216.34", False),
        ("2606:4700::1111", False),
        ("feeds.example.org", False),  # a name is not an address
    ],
)
def test_internal_addresses(host: str, internal: bool) -> None:
    assert is_internal_address(host) is internal


@given(st.text(max_size=300))
def test_redaction_never_raises_and_never_shows_a_query(text: str) -> None:
    for url in (text, "https://" + text):
        shown = redact_url(url)
        url_secrets(url)
        if url.startswith("https://"):
            assert "?" not in shown and "#" not in shown and "@" not in shown.split("/", 3)[2]
