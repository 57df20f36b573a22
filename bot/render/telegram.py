"""Digests and replies as Telegram Bot API messages (``parse_mode="HTML"``).

Pure. Only the tags the Bot API accepts are produced (``b``, ``i``, ``a href``); every text
from a page or a user is escaped, so a page cannot inject markup. A message that would be
too long is split at entry boundaries into several, each ending in ``(1/3)``; an entry too
long for a message on its own is shown with less detail (see ``text.DETAIL_LEVELS``).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from bot.models import Digest, DigestItem, Reply
from bot.render import text

# Bot API sendMessage text limit, counted after entity parsing. We count the HTML source in
# UTF-16 code units instead: never less than what Telegram counts, so always accepted.
MAX_MESSAGE_CHARS = 4096
# room kept in every message for the "(12/34)" part label and its line break
_LABEL_ROOM = 32
_BLOCK_LIMIT = MAX_MESSAGE_CHARS - _LABEL_ROOM
_SEPARATOR = "\n\n"


def utf16_len(s: str) -> int:
    """Length in UTF-16 code units, the way Telegram counts (an emoji may take two)."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def escaped_cost(ch: str) -> int:
    """The room one character of text takes once escaped, in UTF-16 code units."""
    if ch == "&":
        return 5  # &amp;
    if ch in "<>":
        return 4  # &lt; &gt;
    return 2 if ord(ch) > 0xFFFF else 1


def _esc(s: str) -> str:
    return html.escape(s, quote=False)


def _entry_html(e: text.Entry) -> str:
    title = f"<b>{_esc(e.title)}</b>"
    if e.url:
        title = f'<a href="{html.escape(e.url, quote=True)}">{title}</a>'
    head = " · ".join([title, _esc(e.updated)] if e.updated else [title])
    if e.language_note:
        head += f" <i>{_esc(e.language_note)}</i>"
    lines = [head]
    tags = [_esc(e.tags)] if e.tags else []
    if e.matched:
        tags.append(f"<i>{_esc(e.matched)}</i>")
    if tags:
        lines.append(" · ".join(tags))
    if e.tldr:
        lines.append(_esc(e.tldr))
    if e.context:
        lines.append(f"<i>{_esc(' · '.join(e.context))}</i>")
    return "\n".join(lines)


def _item_block(item: DigestItem, lang: str) -> str:
    block = ""
    for detail in text.DETAIL_LEVELS:
        block = _entry_html(text.entry(item, lang=lang, detail=detail))
        if utf16_len(block) <= _BLOCK_LIMIT:
            break
    return block


def _text_blocks(s: str) -> list[str]:
    blocks: list[str] = []
    for paragraph in text.paragraphs(s):
        pieces = text.split_text(paragraph, _BLOCK_LIMIT, cost=escaped_cost)
        blocks += [_esc(piece) for piece in pieces]
    return blocks


def _messages(blocks: Sequence[str], lang: str) -> list[str]:
    whole = _SEPARATOR.join(blocks)
    if utf16_len(whole) <= MAX_MESSAGE_CHARS:
        return [whole] if whole else []
    chunks = text.pack(blocks, _BLOCK_LIMIT, separator=_SEPARATOR, measure=utf16_len)
    total = len(chunks)
    return [
        f"{chunk}{_SEPARATOR}{_esc(text.part_label(lang, index=index, total=total))}"
        for index, chunk in enumerate(chunks, start=1)
    ]


def _items(items: Iterable[DigestItem], lang: str) -> list[str]:
    return [_item_block(item, lang) for item in items]


def render_digest(d: Digest) -> list[str]:
    """The messages that carry ``d``, in order; one unless it is over the length limit.

    The header goes first (``📚 AI trends · 3 Dec 2026 · 5 pages``, or a short "new"
    line in instant mode), then one entry per page: the title in bold, linked when the page
    has an http(s) URL, the "updated" mark, the tags with those that matched, the TL;DR
    (at most ``digest.TLDR_LIMIT`` characters), and the page's date.
    """
    head = f"<b>{_esc(text.header(d))}</b>"
    if d.welcome:
        head += f"\n<i>{_esc(text.welcome_note(d))}</i>"
    blocks = [head, *_items(d.items, d.lang)]
    return _messages(blocks, d.lang)


def render_reply(r: Reply) -> list[str]:
    """The messages that carry ``r``: its text (paragraphs kept), then its pages.

    Empty when the reply has neither text nor pages. Buttons are not part of the text:
    send :func:`reply_markup` with the last message.
    """
    blocks = _text_blocks(r.text) + _items(r.items, r.lang)
    return _messages(blocks, r.lang)


def reply_markup(r: Reply) -> dict[str, Any] | None:
    """The ``reply_markup`` of ``r``'s inline keyboard, one row per row; ``None`` if none.

    ``callback_data`` is the button's ``action`` as is (at most 64 bytes, the callers' duty).
    """
    rows = [
        [{"text": button.label, "callback_data": button.action} for button in row]
        for row in r.buttons
        if row
    ]
    return {"inline_keyboard": rows} if rows else None
