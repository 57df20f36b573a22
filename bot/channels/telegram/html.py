"""Digests and replies as Telegram Bot API messages (``parse_mode="HTML"``).

Pure. Only the tags the Bot API accepts are produced (``b``, ``i``, ``a href``,
``blockquote expandable``); every text from a page or a user is escaped, so a page cannot
inject markup. A page's TL;DR and small print sit in an expandable block quotation (Bot API
7.4, https://core.telegram.org/bots/api#html-style), under its title and tags: a digest
reads as a list of titles until a page is opened. A message that would be
too long is split at entry boundaries into several, each ending in ``(1/3)``; an entry too
long for a message on its own is shown with less detail (see ``text.DETAIL_LEVELS``).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from bot.i18n import t
from bot.models import Button, Digest, DigestItem, Reply
from bot.render import text, votes

# Bot API sendMessage text limit, counted after entity parsing. We count the HTML source in
# UTF-16 code units instead: never less than what Telegram counts, so always accepted.
MAX_MESSAGE_CHARS = 4096
# room kept in every message for the "(12/34)" part label and its line break
_LABEL_ROOM = 32
_BLOCK_LIMIT = MAX_MESSAGE_CHARS - _LABEL_ROOM
_SEPARATOR = "\n\n"
# Pages with 👍/👎 rows in one message: the Bot API documents no cap on an inline keyboard,
# but clients show a long one as a wall; 20 rows (40 buttons) still reads as a list.
MAX_VOTE_ROWS = 20


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
    folded = [_esc(e.tldr)] if e.tldr else []
    if e.context:
        folded.append(f"<i>{_esc(' · '.join(e.context))}</i>")
    if folded:
        # Collapsed to its first lines until opened; quotations cannot nest, and nothing
        # else here is one.
        quoted = "\n".join(folded)
        lines.append(f"<blockquote expandable>{quoted}</blockquote>")
    return "\n".join(lines)


def _item_block(item: DigestItem, lang: str, number: int | None = None) -> str:
    block = ""
    prefix = f"{votes.numbered(number, '')}" if number is not None else ""
    for detail in text.DETAIL_LEVELS:
        block = prefix + _entry_html(text.entry(item, lang=lang, detail=detail))
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


def _voted_messages(
    head: Sequence[str], items: Sequence[DigestItem], tail: Sequence[str], lang: str
) -> list[tuple[str, list[list[Button]]]]:
    """``head`` blocks, a block per page (numbered, when it can be voted on), ``tail``
    blocks, packed into messages; each message with a 👍/👎 row per page it holds."""
    blocks: list[tuple[str, list[Button]]] = [(b, []) for b in head]
    for number, item in enumerate(items, start=1):
        row = list(votes.buttons(number, item))
        blocks.append((_item_block(item, lang, number if row else None), row))
    blocks += [(b, []) for b in tail]
    whole = _SEPARATOR.join(b for b, _ in blocks)
    vote_rows = sum(1 for _, r in blocks if r)
    if utf16_len(whole) <= MAX_MESSAGE_CHARS and vote_rows <= MAX_VOTE_ROWS:
        return [(whole, [r for _, r in blocks if r])] if whole else []
    # as ``text.pack``, and a new message once one holds MAX_VOTE_ROWS pages
    groups: list[tuple[str, list[list[Button]]]] = []
    for block, row in blocks:
        if groups:
            current, rows = groups[-1]
            candidate = f"{current}{_SEPARATOR}{block}"
            if utf16_len(candidate) <= _BLOCK_LIMIT and len(rows) + bool(row) <= MAX_VOTE_ROWS:
                groups[-1] = (candidate, [*rows, row] if row else rows)
                continue
        groups.append((block, [row] if row else []))
    total = len(groups)
    return [
        (f"{chunk}{_SEPARATOR}{_esc(text.part_label(lang, index=i, total=total))}", rows)
        for i, (chunk, rows) in enumerate(groups, start=1)
    ]


def _keyboard(rows: Sequence[Sequence[Button]]) -> dict[str, Any] | None:
    """An ``inline_keyboard`` reply markup, one row per row; ``None`` when there is none.

    ``callback_data`` is the button's ``action`` as is (at most 64 bytes, the callers' duty).
    """
    keyboard = [[_inline_button(button) for button in row] for row in rows if row]
    return {"inline_keyboard": keyboard} if keyboard else None


def _inline_button(button: Button) -> dict[str, Any]:
    """An InlineKeyboardButton (https://core.telegram.org/bots/api#inlinekeyboardbutton):
    a callback, a link, or a Mini App (``web_app``, "only in private chats between a user
    and the bot")."""
    if button.app is not None:
        return {"text": button.label, "web_app": {"url": button.app}}
    if button.url is not None:
        return {"text": button.label, "url": button.url}
    return {"text": button.label, "callback_data": button.action}


def more_line(lang: str, more: int) -> list[str]:
    """The last line of a digest cut by the chat's limit: ``…and 7 more: /latest``."""
    return [_esc(t(lang, "digestq.more", count=more, p="/"))] if more else []


def _head(d: Digest) -> str:
    """The header, and a welcome digest's "to get you started" line under it."""
    head = f"<b>{_esc(text.header(d))}</b>"
    if d.welcome:
        head += f"\n<i>{_esc(text.welcome_note(d))}</i>"
    return head


def render_digest_parts(d: Digest) -> list[tuple[str, dict[str, Any] | None]]:
    """``(html, reply_markup)`` of each message that carries ``d``: as
    :func:`render_digest`, with its pages numbered and a 👍/👎 row per page."""
    head = [_head(d)]
    parts = _voted_messages(head, d.items, more_line(d.lang, d.more), d.lang)
    return [(body, _keyboard(rows)) for body, rows in parts]


def render_reply_parts(r: Reply) -> list[tuple[str, dict[str, Any] | None]]:
    """``(html, reply_markup)`` of each message that carries ``r``: each with the 👍/👎
    rows of its pages; the reply's own buttons go with the last."""
    if not any(item.page_id is not None for item in r.items):
        parts = render_reply(r)
        markup = reply_markup(r)
        return [(html, markup if i == len(parts) - 1 else None) for i, html in enumerate(parts)]
    parts_rows = _voted_messages(_text_blocks(r.text), r.items, (), r.lang)
    last = len(parts_rows) - 1
    return [
        (body, _keyboard([*rows, *(r.buttons if i == last else ())]))
        for i, (body, rows) in enumerate(parts_rows)
    ]


def render_digest(d: Digest) -> list[str]:
    """The messages that carry ``d``, in order; one unless it is over the length limit.

    The header goes first (``📚 AI trends · 3 Dec 2026 · 5 pages``, or a short "new"
    line in instant mode), then one entry per page: the title in bold, linked when the page
    has an http(s) URL, the "updated" mark, the tags with those that matched, the TL;DR
    (at most ``digest.TLDR_LIMIT`` characters), and the page's date.
    """
    blocks = [_head(d), *_items(d.items, d.lang)]
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
    return _keyboard(r.buttons)
