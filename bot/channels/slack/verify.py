"""What an inbound request must be before anything acts on it: signed and fresh, seen once,
and of the shape Slack sends (fields of the right types, JSON not too deep)."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from slack_sdk.signature import Clock, SignatureVerifier

from bot.channels.slack.client import (
    MAX_JSON_DEPTH,
    SIGNATURE_MAX_AGE_SECONDS,
    SIGNATURE_VERSION,
    log,
)


class _At(Clock):
    """slack-sdk's clock, stopped at the moment the request was received."""

    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


class _RawBodyVerifier(SignatureVerifier):
    """slack-sdk's check (the timestamp's window, the signature, the constant-time
    comparison), also of a body that is not UTF-8: slack-sdk decodes the body before it
    signs it, and raises on one that is not, while Slack signs the bytes as sent (such a
    body, signed, is then refused as malformed, 400, not as unsigned)."""

    def generate_signature(self, *, timestamp: str, body: str | bytes) -> str | None:
        try:
            signature: str | None = super().generate_signature(timestamp=timestamp, body=body)
        except UnicodeDecodeError:
            raw = body if isinstance(body, bytes) else body.encode()
            base = f"{SIGNATURE_VERSION}:{timestamp}:".encode() + raw
            digest = hmac.new(self.signing_secret.encode(), base, hashlib.sha256).hexdigest()
            signature = f"{SIGNATURE_VERSION}={digest}"
        return signature


def verify_signature(
    secret: str, *, body: bytes, timestamp: str | None, signature: str | None, now: float
) -> str | None:
    """Why a request does not carry Slack's signature of ``body``; None when it does.

    Slack signs ``v0:{timestamp}:{raw body}`` with HMAC-SHA256 and refuses to be believed
    after five minutes (https://api.slack.com/authentication/verifying-requests-from-slack);
    slack-sdk's ``SignatureVerifier`` checks both. Checked on the raw bytes, before anything
    parses them. The checks here come first, for a reason to log, and so that any header
    value is answered: slack-sdk raises on a timestamp that is not a number and on a
    signature that is not ASCII.
    """
    if not timestamp or not signature:
        return "unsigned"
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        return "malformed timestamp"
    if abs(now - int(timestamp)) > SIGNATURE_MAX_AGE_SECONDS:
        return "stale timestamp"
    if not signature.isascii():
        return "bad signature"
    if not secret.strip():  # slack-sdk refuses a blank secret; so does this
        return "SLACK_SIGNING_SECRET is blank"
    verifier = _RawBodyVerifier(secret, clock=_At(now))
    if not verifier.is_valid(body=body, timestamp=timestamp, signature=signature):
        return "bad signature"
    return None


def malformed_body(body: bytes, content_type: str | None) -> str | None:
    """Why a signed body cannot be an event, a command or an interaction; None when it can.

    Mirrors how Bolt reads a body (JSON when sent as JSON or starting with ``{``; otherwise a
    form, whose ``payload`` field is JSON), so that what passes here Bolt reads without error:
    UTF-8, and JSON that is an object nested at most :data:`MAX_JSON_DEPTH` deep.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    if not text:
        return "empty body"
    document: str | None = None
    if (content_type or "").split(";")[0].strip().lower() == "application/json" or text.startswith(
        "{"
    ):
        document = text
    elif "payload" in text:
        document = dict(parse_qsl(text, keep_blank_values=True)).get("payload")
    if document is None:
        return _odd_form(dict(parse_qsl(text, keep_blank_values=True)))
    try:
        parsed = json.loads(document)
    except RecursionError:
        return "JSON nested too deeply"
    except ValueError:
        return "not valid JSON"
    if not isinstance(parsed, dict):
        return "JSON is not an object"
    if _depth(parsed) > MAX_JSON_DEPTH:
        return "JSON nested too deeply"
    if not isinstance(parsed.get("type"), str):
        return "no type"  # every event and interaction payload names its type
    return _odd_field(parsed)


# A slash command's form names the command, who typed it and where
# (https://api.slack.com/interactivity/slash-commands#app_command_handling); Slack's
# certificate check is a form of its own (ssl_check=1), which Bolt answers.
_COMMAND_FIELDS = ("command", "user_id", "channel_id")


def _odd_form(form: dict[str, str]) -> str | None:
    """Why a form without ``payload`` is neither a slash command nor Slack's ssl_check."""
    if form.get("ssl_check"):
        return None
    missing = [name for name in _COMMAND_FIELDS if not form.get(name)]
    return f"a command without {', '.join(missing)}" if missing else None


_TEXT = (str,)
_OBJECT = (dict,)
_TEXT_OR_OBJECT = (str, dict)


# The fields Bolt reads to route a request, as Slack sends them (JSON null too, for those
# that may be text); Bolt reads them without checking, so any other type fails inside it.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "type": _TEXT,
    "event": _OBJECT,
    "actions": (list,),
    "authorizations": (list,),
    "view": _OBJECT,
    "container": _OBJECT,
    "message": _OBJECT,
    "previous_message": _OBJECT,
    "item": _OBJECT,
    "function_data": _OBJECT,
    "assistant_thread": _OBJECT,
    "tokens": _OBJECT,
    "team": _TEXT_OR_OBJECT,
    "user": _TEXT_OR_OBJECT,
    "channel": _TEXT_OR_OBJECT,
    "enterprise": _TEXT_OR_OBJECT,
    "id": _TEXT,
    "event_id": _TEXT,
    "team_id": _TEXT,
    "user_id": _TEXT,
    "channel_id": _TEXT,
    "enterprise_id": _TEXT,
    "context_team_id": _TEXT,
    "context_enterprise_id": _TEXT,
    "api_app_id": _TEXT,
    "command": _TEXT,
    "callback_id": _TEXT,
    "action_id": _TEXT,
    "block_id": _TEXT,
    "value": _TEXT,
    "response_url": _TEXT,
    "trigger_id": _TEXT,
    "thread_ts": _TEXT,
    "bot_access_token": _TEXT,
    "function_execution_id": _TEXT,
    "is_enterprise_install": (bool,),
    "is_ext_shared_channel": (bool,),
}


# The objects whose fields Bolt reads, beside the body itself.
_ROUTED_OBJECTS = frozenset(
    {"event", "message", "previous_message", "item", "container", "view", "team", "user",
     "channel", "enterprise", "function_data", "assistant_thread"}
)  # fmt: skip


def _odd_field(body: dict[str, Any]) -> str | None:
    """The first routing field of a type Slack never sends, e.g. ``event`` a string."""
    actions = body.get("actions")
    if actions is not None and not (isinstance(actions, list) and actions):
        return "actions is not a list of actions"  # Bolt reads the first one
    if body.get("type") == "block_actions" and not all(
        isinstance(a, dict) and isinstance(a.get("action_id"), str) for a in actions or ()
    ):
        return "an action has no action_id"
    objects: list[dict[str, Any]] = [body]
    seen = 0
    while objects and seen < 1000:
        current = objects.pop()
        seen += 1
        for key, value in current.items():
            types = _FIELD_TYPES.get(key)
            if types is None or (value is None and str in types):  # null ids: none given
                continue
            if not isinstance(value, types):
                return f"{key} is not {' or '.join(t.__name__ for t in types)}"
            if isinstance(value, list):  # actions, authorizations
                if not all(isinstance(item, dict) for item in value):
                    return f"{key} is not a list of objects"
                objects.extend(value)
            elif key in _ROUTED_OBJECTS and isinstance(value, dict):
                objects.append(value)
    return None


def _depth(value: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def refuse_unreadable(what: str) -> web.Response:
    """The 400 for a signed request Bolt could not read (``what`` says why), logged."""
    log.warning(
        "slack: signed request refused (400): Bolt could not read it (%s)",
        what,
        extra={"platform": "slack"},
    )
    return web.Response(status=400, text="malformed request")


__all__ = [
    "malformed_body",
    "refuse_unreadable",
    "verify_signature",
]
