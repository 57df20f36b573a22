"""The language toggle under a digest: ``English`` / ``한국어``. Pure.

A chat reads its digests in its language; the toggle re-renders one digest in the other
one, where its pages have both (a page in one language shows in it, with a note saying
so). The button's action names the target language and the outbox row the digest was
sent from (``lang:ko:123``), which holds its pages: Telegram's 64 bytes of callback data
could not hold a digest's page ids.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bot.i18n import LANGUAGES, SOURCE, t
from bot.models import Button, Outgoing, Page, Platform
from bot.render import slack, telegram_rich

TOGGLE = "lang:"
MAX_ROW_ID = 2**63 - 1  # outbox.id is a 64-bit integer column
AUDIT_ACTION = "digest.toggled"  # the audit log's entry of a press, which ``stats`` counts
ACTION_ID = "trend:lang"  # Slack: the toggle's action_id (bot/channels/slack.py)


def other(lang: str) -> str:
    """The language the toggle offers to a ``lang`` chat: the source language (English),
    and to a chat in it the first other language of the catalogues."""
    if lang != SOURCE:
        return SOURCE
    return next((other for other in LANGUAGES if other != SOURCE), SOURCE)


def action(to: str, row_id: int) -> str:
    """``lang:ko:123``: at most 28 bytes, within Telegram's 64 of callback data."""
    return f"{TOGGLE}{to}:{row_id}"


def parse(data: str) -> tuple[str, int] | None:
    """``(language, row id)`` of a toggle action, or None when ``data`` is not one."""
    if not data.startswith(TOGGLE):
        return None
    lang, _, rest = data.removeprefix(TOGGLE).partition(":")
    if lang not in LANGUAGES or not rest.isascii() or not rest.isdigit() or len(rest) > 19:
        return None
    row_id = int(rest)
    return (lang, row_id) if 0 < row_id <= MAX_ROW_ID else None


def offered(pages: Sequence[Page], lang: str) -> bool:
    """Whether a digest of ``pages`` for a ``lang`` chat gets a toggle: some page of it
    has a text in the other language."""
    to = other(lang)
    return any(to in page.languages for page in pages)


def button(to: str, row_id: int) -> Button:
    """The toggle to ``to``, labelled in that language (``한국어``)."""
    return Button(label=t(to, "render.toggle"), action=action(to, row_id))


def with_toggle(platform: Platform, parts: Sequence[Outgoing], toggle: Button) -> list[Outgoing]:
    """``parts`` with ``toggle`` under the digest: on Telegram a last keyboard row of the
    last message (and a last buttons block of the rich form), on Slack an actions block
    ending the first message (the one in the channel; its thread holds the rest)."""
    if not parts:
        return list(parts)
    out = list(parts)
    if platform == Platform.TELEGRAM:
        last = out[-1]
        out[-1] = replace(last, markup=_telegram_markup(last.markup, toggle))
        if out[0].rich is not None:
            out[0] = replace(out[0], rich=_rich_with(out[0].rich, toggle))
        return out
    if platform == Platform.SLACK:
        first = out[0]
        out[0] = replace(
            first,
            blocks=_slack_with(first.blocks, toggle),
            fallback_blocks=_slack_with(first.fallback_blocks, toggle),
        )
    return out


# https://core.telegram.org/bots/api#inlinekeyboardmarkup: rows of InlineKeyboardButton;
# the renderers keep a digest's vote rows under telegram.MAX_VOTE_ROWS, one row more is fine.
def _telegram_markup(markup: dict[str, object] | None, toggle: Button) -> dict[str, object]:
    rows = list(markup.get("inline_keyboard", ())) if markup else []  # type: ignore[call-overload]
    rows.append([{"text": toggle.label, "callback_data": toggle.action}])
    return {**(markup or {}), "inline_keyboard": rows}


def _rich_with(rich: str, toggle: Button) -> str:
    """The rich message with a buttons block at its end (InputRichBlockButtons, Bot API
    10.3), when it still fits the rich limits; else as it was."""
    message: dict[str, Any] = json.loads(rich)
    blocks = message.get("blocks")
    if not isinstance(blocks, list):
        return rich
    block = {"type": "buttons", "buttons": [{"text": toggle.label, "callback_data": toggle.action}]}
    if not telegram_rich.fits([*blocks, block]):
        return rich
    return json.dumps(
        {**message, "blocks": [*blocks, block]}, ensure_ascii=False, separators=(",", ":")
    )


def _slack_with(
    blocks: tuple[dict[str, object], ...], toggle: Button
) -> tuple[dict[str, object], ...]:
    if not blocks or len(blocks) >= slack.MAX_BLOCKS:
        return blocks
    element = {
        "type": "button",
        "action_id": ACTION_ID,
        "text": {"type": "plain_text", "text": toggle.label[: slack.MAX_BUTTON_TEXT]},
        "value": toggle.action,
    }
    return (*blocks, {"type": "actions", "elements": [element]})
