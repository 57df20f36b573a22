"""A chat's private feed, the rules below the store: its token, its address and what an entry
holds. :mod:`bot.store.feeds` keeps them, :mod:`bot.render.atom` writes the document."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from dataclasses import dataclass

from bot.models import DigestItem

MAX_ENTRIES = 50  # CONTRACT.md: the newest 50 pages the filter matches
# 32 random bytes, URL-safe base64 without padding: 43 characters, 256 bits.
TOKEN_BYTES = 32
TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{43}")
SUFFIX = ".atom"


def new_token() -> str:
    """A feed token: random, 256 bits, safe in a URL path."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    """What the store keeps of a token: its SHA-256 (a token is random, so no salt)."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_from_path(name: str) -> str | None:
    """``TOKEN.atom`` -> TOKEN; None for anything that cannot be a token."""
    if not name.endswith(SUFFIX):
        return None
    token = name[: -len(SUFFIX)]
    return token if TOKEN_RE.fullmatch(token) else None


def feed_url(base: str, token: str) -> str:
    return f"{base.rstrip('/')}/feeds/{token}{SUFFIX}"


@dataclass(frozen=True, slots=True)
class FeedEntry:
    item: DigestItem
    updated: dt.datetime  # naive UTC: the page's date, or when it was last seen to change
