"""Digests as one Telegram rich message (``sendRichMessage``, Bot API 10.1-10.3). Pure.

A digest is a section heading, then one details block per page: the page's title as the
always-shown summary; inside, its tags and what matched, the TL;DR, a link to the page, the
small print as a footer, and the page's 👍/👎 as a row of buttons. The content is sent as
explicit blocks (``InputRichMessage.blocks``), so no text from a page is ever parsed as
markup. The shapes are those of the Bot API's type pages:

* https://core.telegram.org/bots/api#inputrichmessage (exactly one of ``html``,
  ``markdown`` or ``blocks``; ``blocks`` since Bot API 10.2)
* https://core.telegram.org/bots/api#inputrichblocksectionheading (``heading``, ``size`` 1-6)
* https://core.telegram.org/bots/api#inputrichblockdetails (``details``: ``summary``,
  ``blocks``, ``is_open``)
* https://core.telegram.org/bots/api#inputrichblockparagraph / ``...footer``
* https://core.telegram.org/bots/api#inputrichblockbuttons (Bot API 10.3: 1-8
  ``RichMessageButton``, ``callback_data`` 1-64 bytes, text plain only)
* https://core.telegram.org/bots/api#richtext (a string, an array, or ``{"type": "bold"}``,
  ``{"type": "url", "text", "url"}``...)

A digest that cannot be said within the rich message limits, even with less detail, has no
rich form (:func:`render_digest` returns ``None``): the HTML messages carry it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.i18n import t
from bot.models import Digest, DigestItem
from bot.render import text, votes

# Rich message limits (https://core.telegram.org/bots/api#rich-message-limits): "Up to 32768
# UTF-8 characters in the rich message text", "up to 500 blocks, including nested blocks,
# list items, ... quotation blocks, and details blocks", "up to 16 levels of nested
# formatting and blocks". Text is counted here in UTF-16 code units, never fewer than the
# characters Telegram counts.
MAX_RICH_TEXT_CHARS = 32768
MAX_RICH_BLOCKS = 500
MAX_RICH_DEPTH = 16
# InputRichBlockButtons: "List of 1-8 buttons to send".
MAX_RICH_BUTTONS = 8
HEADING_SIZE = 2  # 1 is the largest of 1-6: a digest's title, not a document's


def _details(item: DigestItem, *, number: int, lang: str, detail: text.Detail) -> dict[str, Any]:
    """The details block of one page, or a paragraph of its title when there is nothing to
    fold under it."""
    e = text.entry(item, lang=lang, detail=detail)
    summary: list[Any] = [f"{number}. ", {"type": "bold", "text": e.title}]
    if e.updated:
        summary.append(f" · {e.updated}")
    if e.language_note:
        summary += [" ", {"type": "italic", "text": e.language_note}]
    inner: list[dict[str, Any]] = []
    tags: list[Any] = [e.tags] if e.tags else []
    if e.matched:
        tags += [" · "] if tags else []
        tags.append({"type": "italic", "text": e.matched})
    if tags:
        inner.append({"type": "paragraph", "text": tags})
    if e.tldr:
        inner.append({"type": "paragraph", "text": e.tldr})
    if e.url:
        link = {"type": "url", "text": t(lang, "render.open"), "url": e.url}
        inner.append({"type": "paragraph", "text": link})
    if e.context:
        inner.append({"type": "footer", "text": " · ".join(e.context)})
    row = votes.buttons(number, item)
    if row:
        # "1 👍" as in the HTML keyboard: the number says which page, if the block is open
        buttons = [{"text": b.label, "callback_data": b.action} for b in row]
        inner.append({"type": "buttons", "buttons": buttons[:MAX_RICH_BUTTONS]})
    if not inner:
        return {"type": "paragraph", "text": summary}
    return {"type": "details", "summary": summary, "blocks": inner}


def _head(d: Digest) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {"type": "heading", "text": text.header(d), "size": HEADING_SIZE}
    ]
    if d.welcome:
        note = {"type": "italic", "text": text.welcome_note(d)}
        blocks.append({"type": "paragraph", "text": note})
    return blocks


def _tail(d: Digest) -> list[dict[str, Any]]:
    if not d.more:
        return []
    return [{"type": "footer", "text": t(d.lang, "digestq.more", count=d.more, p="/")}]


def measure(blocks: Sequence[Any]) -> tuple[int, int, int]:
    """``(characters, blocks, depth)`` of a rich message's blocks, as the limits count them:
    every text (summaries and button labels too) in UTF-16 code units, every block at any
    depth, and the deepest nesting of blocks and formatting."""
    chars = count = deepest = 0
    # (value, depth of the value); a block counts one level, a formatting object one more
    stack: list[tuple[Any, int]] = [(block, 1) for block in blocks]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            chars += len(value.encode("utf-16-le", "surrogatepass")) // 2
            continue
        if isinstance(value, list):
            stack += [(part, depth) for part in value]
            continue
        if not isinstance(value, dict):
            continue
        deepest = max(deepest, depth)
        if "type" in value and value["type"] in _BLOCK_TYPES:
            count += 1
        for key in ("text", "summary"):
            if key in value:
                inner = value[key]
                stack.append((inner, depth + 1 if isinstance(inner, dict) else depth))
        for block in value.get("blocks", ()):
            stack.append((block, depth + 1))
        for button in value.get("buttons", ()):
            stack.append((button, depth + 1))
    return chars, count, deepest


_BLOCK_TYPES = frozenset({"heading", "paragraph", "footer", "details", "buttons"})


def fits(blocks: Sequence[Any]) -> bool:
    chars, count, depth = measure(blocks)
    return chars <= MAX_RICH_TEXT_CHARS and count <= MAX_RICH_BLOCKS and depth <= MAX_RICH_DEPTH


def digest_blocks(d: Digest) -> list[dict[str, Any]] | None:
    """The blocks of ``d``'s rich message, with as much of each page as the limits allow
    (the same steps down as the HTML entries, ``text.DETAIL_LEVELS``), or ``None``."""
    head, tail = _head(d), _tail(d)
    for detail in text.DETAIL_LEVELS:
        pages = [
            _details(item, number=number, lang=d.lang, detail=detail)
            for number, item in enumerate(d.items, start=1)
        ]
        blocks = [*head, *pages, *tail]
        if fits(blocks):
            return blocks
    return None


def render_digest(d: Digest) -> str | None:
    """The JSON text of ``d`` as an ``InputRichMessage``, or ``None`` when it has no rich
    form within the limits (or no pages)."""
    if not d.items:
        return None
    blocks = digest_blocks(d)
    if blocks is None:
        return None
    # Made once for all the chats that get the same digest (``bot.delivery.engine`` keeps it).
    return json.dumps({"blocks": blocks}, ensure_ascii=False, separators=(",", ":"))
