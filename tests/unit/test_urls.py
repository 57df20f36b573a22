"""Feed URLs: the short form a source is shown by, and which addresses count as internal
for redirects (credentials: tests/unit/test_source_spec.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.rules.urls import is_internal_address, redact_url


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
        if url.startswith("https://"):
            assert "?" not in shown and "#" not in shown and "@" not in shown.split("/", 3)[2]
