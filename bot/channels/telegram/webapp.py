"""A Telegram Mini App's ``initData``: who opened the settings page from a private chat.

Telegram signs what it hands a Mini App (https://core.telegram.org/bots/webapps#validating-data-received-via-the-mini-app):
the fields of ``initData`` but ``hash``, sorted by name and joined as ``name=value`` lines,
are the data-check string; ``hash`` is its HMAC-SHA256, hex, under a key that is itself the
HMAC-SHA256 of the bot token with the key ``WebAppData``. ``auth_date`` (Unix seconds) says
when it was signed: older than :data:`MAX_AGE` is refused, as a replayed one would be.

Pure: the standard library only.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
from urllib.parse import parse_qsl

MAX_AGE = dt.timedelta(minutes=15)  # as long as a settings link lives
MAX_INIT_DATA = 4096  # bytes: Telegram's initData is a few hundred
CLOCK_SKEW = dt.timedelta(minutes=1)  # an auth_date this far ahead is still taken


def secret_key(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def sign(fields: dict[str, str], *, bot_token: str) -> str:
    """The ``hash`` Telegram gives ``fields`` (what tests sign with)."""
    check = "\n".join(f"{name}={value}" for name, value in sorted(fields.items()))
    return hmac.new(secret_key(bot_token), check.encode(), hashlib.sha256).hexdigest()


def user_of(init_data: str, *, bot_token: str, now: dt.datetime) -> str | None:
    """The Telegram user id ``init_data`` was signed for, or None when it is not Telegram's
    signature, is stale, or names no user. A private chat's id is its user's id."""
    if len(init_data.encode()) > MAX_INIT_DATA:
        return None
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        return None  # a name twice: not what Telegram writes
    given = fields.pop("hash", "")
    if not hmac.compare_digest(given.encode(), sign(fields, bot_token=bot_token).encode()):
        return None
    try:
        signed_at = dt.datetime.fromtimestamp(int(fields.get("auth_date", "")), dt.UTC)
        user = json.loads(fields.get("user", ""))
    except (ValueError, OverflowError, OSError):
        return None
    when = now.replace(tzinfo=dt.UTC) if now.tzinfo is None else now
    if not when - MAX_AGE <= signed_at <= when + CLOCK_SKEW:
        return None
    user_id = user.get("id") if isinstance(user, dict) else None
    if isinstance(user_id, bool) or not isinstance(user_id, int) or user_id <= 0:
        return None
    return str(user_id)
