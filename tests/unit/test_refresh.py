"""The push hook's signature and replay rules (bot.ops.refresh), as a table."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import create_async_engine

from bot.ops.refresh import Refresh, signature_ok

SECRET = "s3cret"


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        (sign(b"{}"), True),
        (sign(b"{}").upper().replace("SHA256=", "sha256="), True),  # hex in any case
        (sign(b"{}", "other"), False),
        (sign(b"{ }"), False),
        (sign(b"{}").replace("sha256=", "sha1="), False),
        (sign(b"{}")[:-1], False),
        ("", False),
        (None, False),
        ("sha256=", False),
    ],
)
def test_signature(header: str | None, ok: bool) -> None:
    assert signature_ok(SECRET, b"{}", header) is ok


@given(body=st.binary(max_size=200), header=st.text(max_size=80))
def test_only_the_right_hmac_is_taken(body: bytes, header: str) -> None:
    right = sign(body)
    expected = header.startswith("sha256=") and header.strip().lower() == right
    assert signature_ok(SECRET, body, header) is expected or header.strip() != header


def test_a_replayed_body_is_answered_but_not_acted_on_again() -> None:
    refresh = Refresh(
        engine=create_async_engine("sqlite+aiosqlite://"), secret=SECRET, holder="test"
    )
    assert refresh.verify(b"push 1", sign(b"push 1")) is True
    assert refresh.verify(b"push 1", sign(b"push 1")) is None
    assert refresh.verify(b"push 2", sign(b"push 2")) is True
    assert refresh.verify(b"push 2", "sha256=0") is False
