"""What an interaction must be before anything acts on it: signed by Discord and fresh,
seen once, and of the shape Discord sends (a JSON object, not too deep, its fields of the
right types)."""

from __future__ import annotations

import json
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

# Discord signs the timestamp it sends; an interaction older (or newer) than this is stale.
# Discord gives no window of its own: five minutes, as Slack's requests.
SIGNATURE_MAX_AGE_SECONDS = 300
# An interaction's body is a few KB (a button's message included); larger is no interaction.
MAX_BODY_BYTES = 256 * 1024
# Interactions nest a few levels (a message's components in a button press).
MAX_JSON_DEPTH = 32
SIGNATURE_HEX_CHARS = 128  # an Ed25519 signature: 64 bytes
# A snowflake (reference#snowflakes): up to 20 digits.
MAX_SNOWFLAKE_CHARS = 20


def public_key(hex_key: str) -> Ed25519PublicKey:
    """``DISCORD_PUBLIC_KEY`` (64 hex digits, checked by the settings) as a key."""
    return Ed25519PublicKey.from_public_bytes(bytes.fromhex(hex_key))


def verify_signature(
    key: Ed25519PublicKey,
    *,
    body: bytes,
    timestamp: str | None,
    signature: str | None,
    now: float,
) -> str | None:
    """Why a request does not carry Discord's signature of ``body``; None when it does.

    Discord signs ``timestamp + body`` with the application's Ed25519 key and sends the
    signature in ``X-Signature-Ed25519``, the timestamp in ``X-Signature-Timestamp``
    (https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-
    validating-security-request-headers). Checked on the raw bytes, before anything parses
    them; every header value is answered, whatever it holds.
    """
    if not timestamp or not signature:
        return "unsigned"
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        return "malformed timestamp"
    if abs(now - int(timestamp)) > SIGNATURE_MAX_AGE_SECONDS:
        return "stale timestamp"
    if len(signature) != SIGNATURE_HEX_CHARS or not signature.isascii():
        return "bad signature"
    try:
        raw = bytes.fromhex(signature)
    except ValueError:
        return "bad signature"
    try:
        key.verify(raw, timestamp.encode() + body)
    except InvalidSignature:
        return "bad signature"
    return None


def _depth(value: Any) -> int:
    """How deep ``value`` nests, without recursion (a hostile body cannot blow the stack)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def parse(body: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """``(interaction, None)``, or ``(None, why)`` for a signed body that is no interaction:
    not UTF-8 JSON, not an object, nested too deeply, or without a type, or of a type whose
    fields are not what Discord sends."""
    try:
        found = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, "not JSON"
    if not isinstance(found, dict):
        return None, "not a JSON object"
    if _depth(found) > MAX_JSON_DEPTH:
        return None, "nested too deeply"
    kind = found.get("type")
    if not isinstance(kind, int) or isinstance(kind, bool):
        return None, "no interaction type"
    if kind == 1:
        return found, None
    problem = _shape(found)
    return (None, problem) if problem else (found, None)


def _snowflake(value: Any) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_SNOWFLAKE_CHARS
        and value.isascii()
        and value.isdigit()
    )


def _shape(found: dict[str, Any]) -> str | None:
    """What is wrong with a command's or a button's interaction, None when nothing is."""
    for name in ("id", "application_id", "channel_id"):
        if not _snowflake(found.get(name)):
            return f"{name} is not a snowflake"
    if not isinstance(found.get("token"), str) or not found["token"]:
        return "no token"
    if "guild_id" in found and not _snowflake(found["guild_id"]):
        return "guild_id is not a snowflake"
    member = found.get("member")
    user = member.get("user") if isinstance(member, dict) else found.get("user")
    if not isinstance(user, dict) or not _snowflake(user.get("id")):
        return "no user"
    if isinstance(member, dict):
        permissions = member.get("permissions")
        if not isinstance(permissions, str) or not permissions.isdigit() or len(permissions) > 24:
            return "member.permissions is not a permission set"
    elif "guild_id" in found:
        return "a guild's interaction without its member"
    data = found.get("data")
    if not isinstance(data, dict):
        return "no data"
    if found["type"] == 2 and not isinstance(data.get("name"), str):
        return "a command without its name"
    if found["type"] == 3 and not isinstance(data.get("custom_id"), str):
        return "a component without its custom_id"
    locale = found.get("locale")
    if locale is not None and not isinstance(locale, str):
        return "locale is not a string"
    return None
