"""Digests and replies as Discord messages: Components V2, within Discord's limits. Pure.

A page is a container (type 17) holding one text display (type 10: the numbered title as a
link, the "updated" mark, the tags and "matched", the TL;DR, and the date, arXiv id and
host as small print) and an action row with its 👍 and 👎 buttons. A message holds at most
``MAX_COMPONENTS`` components, nested ones counted, and ``MAX_TEXT_CHARS`` characters of
text in all (https://discord.com/developers/docs/components/reference); a digest that needs
more is split into several messages, each labelled with its part.

Every text from a page or a user is markdown-escaped (:func:`escape`), so the only markup
in a message is ours; the sender posts each message with no mentions allowed, so no
``@everyone`` in a title ever pings anyone. Lengths are counted in UTF-16 code units after
escaping, which is never less than what Discord counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.i18n import t
from bot.models import Button, Digest, DigestItem, Reply
from bot.render import text, votes
from bot.rules import digest

IS_COMPONENTS_V2 = 1 << 15  # Message Flags: the message is its components
EPHEMERAL = 1 << 6  # Message Flags: only the user who invoked the interaction sees it
MAX_COMPONENTS = 40  # components of a V2 message in all, nested ones counted
MAX_TEXT_CHARS = 4000  # characters of text of a V2 message in all
MAX_CONTENT_CHARS = 2000  # a message's content (Create Message)
MAX_BUTTON_LABEL = 80  # Button: label "max 80 characters"
MAX_CUSTOM_ID = 100  # Button: custom_id "max 100 characters"
MAX_ROW_BUTTONS = 5  # Action Row: "up to 5 contextually grouped buttons"
# One page's text display may hold this much, so that a page always fits a message with
# the header, a part label and the toggle beside it.
MAX_PAGE_TEXT = 3000
# Room a digest message keeps for what is added after it is split: a part label (a text
# display) and the language toggle (an action row and its button).
PART_RESERVE_COMPONENTS = 1
PART_RESERVE_TEXT = 200
TOGGLE_RESERVE_COMPONENTS = 2
TOGGLE_RESERVE_TEXT = 40
TEXT_DISPLAY, CONTAINER, ACTION_ROW, BUTTON = 10, 17, 1, 2
SECONDARY = 2  # Button style: grey
LINK = 5  # Button style: opens its url, sends no interaction
MAX_LINK_URL = 512  # Button: url "max 512 characters"
# Characters Discord's markdown gives a meaning to anywhere in a line, escaped with "\\";
# "<" starts a mention, a channel or a timestamp (<@123>, <t:...>), "@" an @everyone.
_MARKDOWN = re.compile(r"([\\*_~`|<\[\]@])")
# ... and at a line's start only: a heading, a list item, a quote, a subtext line.
_LINE_START = re.compile(r"^([#>\-+])", re.MULTILINE)
_ORDERED = re.compile(r"^(\d+)\.", re.MULTILINE)  # "1." starts a numbered list
_PAREN = {"(": "%28", ")": "%29"}


def escape(s: str) -> str:
    """``s`` shown as written: every markdown character escaped with a backslash."""
    escaped = _LINE_START.sub(r"\\\1", _MARKDOWN.sub(r"\\\1", s))
    return _ORDERED.sub(r"\1\\.", escaped)


def _u16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def escaped_cost(ch: str) -> int:
    """The room one character takes once escaped, in UTF-16 code units (a character that
    is escaped only at a line's start counted as escaped anywhere)."""
    return (2 if ord(ch) > 0xFFFF else 1) + (1 if ch in _ESCAPED else 0)


_ESCAPED = frozenset("\\*_~`|<[]@#>-+.")


def link(url: str, label: str) -> str:
    """``[label](url)``: ``url`` from ``text.link_url``, its parentheses encoded."""
    target = "".join(_PAREN.get(ch, ch) for ch in url)
    return f"[{escape(label)}]({target})"


def _text(content: str) -> dict[str, Any]:
    return {"type": TEXT_DISPLAY, "content": content or digest.ELLIPSIS}


def _button(button: Button) -> dict[str, Any]:
    """https://discord.com/developers/docs/components/reference#button: a link button
    (the settings page's) has a ``url`` and no ``custom_id``; the others the action."""
    label = digest.truncate(button.label, MAX_BUTTON_LABEL, cost=_cost) or digest.ELLIPSIS
    if button.url is not None and len(button.url) <= MAX_LINK_URL:
        return {"type": BUTTON, "style": LINK, "label": label, "url": button.url}
    return {
        "type": BUTTON,
        "style": SECONDARY,
        "label": label,
        "custom_id": button.action[:MAX_CUSTOM_ID],
    }


def _cost(ch: str) -> int:
    return 2 if ord(ch) > 0xFFFF else 1


def rows(buttons: Sequence[Sequence[Button]]) -> list[dict[str, Any]]:
    """Buttons as action rows of at most ``MAX_ROW_BUTTONS``; a custom id used twice in a
    message keeps its first button (Discord refuses duplicates)."""
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for row in buttons:
        kept = [b for b in row if b.action[:MAX_CUSTOM_ID] not in seen]
        seen.update(b.action[:MAX_CUSTOM_ID] for b in kept)
        for start in range(0, len(kept), MAX_ROW_BUTTONS):
            chunk = kept[start : start + MAX_ROW_BUTTONS]
            found.append({"type": ACTION_ROW, "components": [_button(b) for b in chunk]})
    return found


def count(components: Sequence[dict[str, Any]]) -> int:
    """Components in all, nested ones counted."""
    return sum(1 + count(c.get("components") or ()) for c in components)


def text_chars(components: Sequence[dict[str, Any]]) -> int:
    """Characters of text in all: text displays' content and buttons' labels."""
    total = 0
    for c in components:
        total += _u16(str(c.get("content") or "")) + _u16(str(c.get("label") or ""))
        total += text_chars(c.get("components") or ())
    return total


def _entry_markdown(e: text.Entry, number: int | None) -> str:
    title = link(e.url, e.title) if e.url else escape(e.title)
    head = f"### {number}. {title}" if number is not None else f"### {title}"
    for label in (e.updated, e.language_note):
        if label:
            head += f" · {escape(label)}"
    lines = [head]
    tags = " · ".join(part for part in (e.tags, e.matched) if part)
    if tags:
        lines.append(f"-# {escape(tags)}")
    if e.tldr:
        lines.append(escape(e.tldr))
    if e.context:
        lines.append(f"-# {escape(' · '.join(e.context))}")
    return "\n".join(lines)


def page(item: DigestItem, lang: str, number: int) -> dict[str, Any]:
    """One page as a container: its text, and its 👍/👎 where it can be voted on."""
    buttons = votes.buttons(number, item)
    shown = number if buttons else None
    body = ""
    for detail in text.DETAIL_LEVELS:
        body = _entry_markdown(text.entry(item, lang=lang, detail=detail), shown)
        if _u16(body) <= MAX_PAGE_TEXT:
            break
    inner: list[dict[str, Any]] = [_text(body)]
    if buttons:
        inner += rows([buttons])
    return {"type": CONTAINER, "components": inner}


@dataclass(slots=True)
class _Message:
    components: list[dict[str, Any]] = field(default_factory=list)
    size: int = 0
    chars: int = 0

    def fits(self, more: Sequence[dict[str, Any]], *, reserve: int, reserve_text: int) -> bool:
        return (
            self.size + count(more) <= MAX_COMPONENTS - reserve
            and self.chars + text_chars(more) <= MAX_TEXT_CHARS - reserve_text
        )

    def add(self, more: Sequence[dict[str, Any]]) -> None:
        self.components += more
        self.size += count(more)
        self.chars += text_chars(more)


def pack(
    groups: Sequence[Sequence[dict[str, Any]]], *, reserve: int = 0, reserve_text: int = 0
) -> list[list[dict[str, Any]]]:
    """Groups of components (a page, a paragraph) into as few messages as their order
    allows, each within the limits less what is reserved; a group is never split."""
    messages = [_Message()]
    for group in groups:
        if messages[-1].components and not messages[-1].fits(
            group, reserve=reserve, reserve_text=reserve_text
        ):
            messages.append(_Message())
        messages[-1].add(group)
    return [m.components for m in messages if m.components]


def _plain(lines: Sequence[str]) -> str:
    """The message's plain text (logs, notifications): its lines, within content's limit."""
    joined = "\n".join(line for line in lines if line)
    return digest.truncate(joined, MAX_CONTENT_CHARS) or digest.ELLIPSIS


def render_digest(d: Digest) -> list[tuple[str, tuple[dict[str, Any], ...]]]:
    """``d`` as messages of ``(plain text, components)``: the header (and the welcome note)
    first, a container per page, the "more" line last; a digest beyond one message's
    limits goes on in further messages, each starting with the header and its part
    (``(2/3)``). Every message keeps room for the language toggle."""
    head = text.header(d)
    lines = [f"## {escape(head)}"]
    if d.welcome:
        lines.append(f"-# {escape(text.welcome_note(d))}")
    groups: list[list[dict[str, Any]]] = [[_text("\n".join(lines))]]
    titles: list[str] = [head]
    for number, item in enumerate(d.items, start=1):
        groups.append([page(item, d.lang, number)])
        titles.append(text.entry(item, lang=d.lang, detail=text.DETAIL_LEVELS[-1]).title)
    if d.more:
        groups.append([_text(f"-# {escape(t(d.lang, 'digestq.more', count=d.more, p='/'))}")])
    messages = pack(
        groups,
        reserve=PART_RESERVE_COMPONENTS + TOGGLE_RESERVE_COMPONENTS,
        reserve_text=PART_RESERVE_TEXT + TOGGLE_RESERVE_TEXT,
    )
    if len(messages) == 1:
        return [(_plain(titles), tuple(messages[0]))]
    found = []
    for index, components in enumerate(messages, start=1):
        part = text.part_label(d.lang, index=index, total=len(messages))
        label = digest.truncate(f"{head} {part}", PART_RESERVE_TEXT - 10)
        if index > 1:
            components = [_text(f"-# {escape(label)}"), *components]
        found.append((_plain([label]), tuple(components)))
    return found


def render_reply(r: Reply) -> list[tuple[str, tuple[dict[str, Any], ...]]]:
    """``r`` as messages of ``(plain text, components)``: its paragraphs as text displays,
    its pages as containers, its buttons as action rows in the last message (as many
    rows as fit; the rest are left out)."""
    groups: list[list[dict[str, Any]]] = []
    for paragraph in text.paragraphs(r.text):
        for piece in text.split_text(paragraph, MAX_PAGE_TEXT, cost=escaped_cost):
            groups.append([_text(escape(piece))])
    for number, item in enumerate(r.items, start=1):
        groups.append([page(item, r.lang, number)])
    button_rows = rows(r.buttons)
    messages = pack(groups) or [[]]
    last = _Message()
    last.add(messages[-1])
    for row in button_rows:
        if not last.fits([row], reserve=0, reserve_text=0):
            break
        last.add([row])
    messages[-1] = last.components
    if not messages[-1]:
        messages[-1] = [_text(digest.ELLIPSIS)]
    plain = _plain([r.text.strip()])
    return [(plain, tuple(components)) for components in messages]


def with_toggle(
    components: Sequence[dict[str, Any]], toggle: Button
) -> tuple[dict[str, Any], ...] | None:
    """``components`` with the toggle's row after them; None when it does not fit."""
    row = rows([[toggle]])
    message = _Message()
    message.add(components)
    if not message.fits(row, reserve=0, reserve_text=0):
        return None
    return (*components, *row)


def plain_pieces(body: str) -> list[str]:
    """A plain text (a broadcast) as message contents of at most ``MAX_CONTENT_CHARS``,
    escaped, so no markup in it is interpreted."""
    pieces = text.split_text(body, MAX_CONTENT_CHARS, cost=escaped_cost)
    return [escape(piece) for piece in pieces] or [digest.ELLIPSIS]
