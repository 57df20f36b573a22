"""Telegram: the Bot API's messages, and the channel that sends and receives them.

``html`` renders digests and replies as HTML messages within 4096 characters, ``rich`` as
one rich message (Bot API 10.3); loading this package registers them with
:mod:`bot.render`. The channel itself (python-telegram-bot) is in the modules beside it,
loaded only where Telegram is configured: ``channel`` (updates -> the command core),
``sender`` (messages -> the Bot API, for the delivery engine), ``request`` (the HTTP
transport).
"""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from typing import Any, Literal

from bot import render
from bot.channels.telegram import html, rich
from bot.channels.telegram.payload import TelegramPayload, payload
from bot.channels.telegram.spec import PLATFORM as PLATFORM
from bot.models import Button, Digest, Outgoing, Reply
from bot.render import text

__all__ = ["PLATFORM"]  # what bot.channels.registry loads


def _digest(digest: Digest) -> list[Outgoing]:
    parts = [
        Outgoing(text=h, payload=TelegramPayload(markup=m))
        for h, m in html.render_digest_parts(digest)
    ]
    return _with_rich(parts, rich.render_digest(digest))


def _with_rich(parts: list[Outgoing], rich: str | None) -> list[Outgoing]:
    """``parts`` with the rich message that says all of them: on the first, and the others
    marked as covered by it (see :class:`TelegramPayload`)."""
    if rich is None or not parts:
        return parts
    first, *rest = parts
    return [
        replace(first, payload=replace(payload(first), rich=rich)),
        *(replace(p, payload=replace(payload(p), rich_covered=True)) for p in rest),
    ]


def _reply(reply: Reply) -> list[Outgoing]:
    return [
        Outgoing(text=h, payload=TelegramPayload(markup=m))
        for h, m in html.render_reply_parts(reply)
    ]


def _text(body: str) -> list[Outgoing]:
    pieces = text.split_text(body, html.MAX_MESSAGE_CHARS, cost=html.escaped_cost)
    return [Outgoing(text=piece, plain=True) for piece in pieces]


def _toggle(out: list[Outgoing], toggle: Button) -> list[Outgoing]:
    last = payload(out[-1])
    out[-1] = replace(out[-1], payload=replace(last, markup=_telegram_markup(last.markup, toggle)))
    first = payload(out[0])
    if first.rich is not None:
        out[0] = replace(out[0], payload=replace(first, rich=_rich_with(first.rich, toggle)))
    return out


# https://core.telegram.org/bots/api#inlinekeyboardmarkup: rows of InlineKeyboardButton;
# the renderers keep a digest's vote rows under html.MAX_VOTE_ROWS, one row more is fine.
def _telegram_markup(markup: dict[str, object] | None, toggle: Button) -> dict[str, object]:
    rows = list(markup.get("inline_keyboard", ())) if markup else []  # type: ignore[call-overload]
    rows.append([{"text": toggle.label, "callback_data": toggle.action}])
    return {**(markup or {}), "inline_keyboard": rows}


def _rich_with(message_json: str, toggle: Button) -> str:
    """The rich message with a buttons block at its end (InputRichBlockButtons, Bot API
    10.3), when it still fits the rich limits; else as it was. Every row of a shared digest
    gets its own toggle (the action names the row): whether one fits is worked out once
    per digest and label, and the block is added to the text without parsing it again."""
    way = _toggle_room(message_json, toggle.label)
    if way is None:
        return message_json
    block = {"type": "buttons", "buttons": [{"text": toggle.label, "callback_data": toggle.action}]}
    if way == "append":
        added = json.dumps(block, ensure_ascii=False, separators=_SEPARATORS)
        return f"{message_json[: -len(_BLOCKS_END)]},{added}{_BLOCKS_END}"
    message = json.loads(message_json)
    return json.dumps(
        {**message, "blocks": [*message["blocks"], block]},
        ensure_ascii=False,
        separators=_SEPARATORS,
    )


_SEPARATORS = (",", ":")
_BLOCKS_END = "]}"  # of ``{"blocks":[...]}``, as rich.render_digest writes it


@functools.lru_cache(maxsize=256)
def _toggle_room(message_json: str, label: str) -> Literal["append", "rebuild"] | None:
    """Whether a toggle labelled ``label`` fits under this rich message (only its label
    counts towards the limits, not its action): None if not; ``append`` when the message
    is just ``{"blocks": [...]}`` and the block can be added to its text, else
    ``rebuild``."""
    message: Any = json.loads(message_json)
    blocks = message.get("blocks") if isinstance(message, dict) else None
    if not isinstance(blocks, list):
        return None
    block = {"type": "buttons", "buttons": [{"text": label, "callback_data": ""}]}
    if not rich.fits([*blocks, block]):
        return None
    if blocks and list(message) == ["blocks"] and message_json.endswith(_BLOCKS_END):
        return "append"
    return "rebuild"


render.register(
    PLATFORM.rules.name,
    render.PlatformRenderer(digest=_digest, reply=_reply, text=_text, toggle=_toggle),
)
