"""Digests and replies as Slack Block Kit messages.

Pure. Every text from a page or a user is mrkdwn-escaped (``&``, ``<``, ``>``: the only
characters Slack parses specially), so the only ``<...>`` sequences in a message are our
own ``<url|title>`` links. Lengths are counted in UTF-16 code units after escaping, which
is never less than what Slack counts, so every limit below holds as Slack checks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.i18n import t, tn
from bot.models import Button, Digest, DigestItem, Reply
from bot.render import text, votes
from bot.rules import digest

MAX_BLOCKS = 50  # blocks per message; chat.postMessage rejects more
MAX_SECTION_TEXT = 3000  # characters of a section block's text
MAX_HEADER_TEXT = 150  # characters of a header block's plain_text
MAX_CONTEXT_TEXT = 3000  # characters of a context element's text
MAX_FALLBACK_TEXT = 4000  # top-level text: Slack cuts long ones; a notification needs little
MAX_BUTTON_TEXT = 75  # characters of a button's label
MAX_ACTION_ID = 255  # characters of an action_id
MAX_BUTTON_URL = 3000  # characters of a button's url (Block Kit button element)
LINK_ACTION_ID = "trend:link"  # a link button's presses, which change nothing
MAX_BUTTON_VALUE = 2000  # characters of a button's value
MAX_ACTIONS_ELEMENTS = 25  # elements of one actions block
# The container block (https://docs.slack.dev/reference/block-kit/blocks/container-block):
MAX_CONTAINER_TITLE = 150  # characters of its plain_text title
MAX_CONTAINER_CHILDREN = 10  # blocks in its child_blocks
# The context_actions block holds at most 5 elements; one feedback_buttons element per page
# here (https://docs.slack.dev/reference/block-kit/blocks/context-actions-block).
MAX_FEEDBACK_TEXT = 75  # characters of a feedback button's text (feedback-buttons-element)
EXPANDED_PAGES = 3  # pages of a digest shown open; the containers of the rest start collapsed

THREAD_THRESHOLD = 5  # pages: a longer digest posts a summary and the pages in its thread
REPLY_BLOCKS = 20  # blocks per thread reply, so each reply stays a screenful
SUMMARY_TOP = 3  # titles the summary of a threaded digest shows
_SEPARATOR = "\n\n"
# Slack has no escape for "|" inside a link label; it would end the URL part
_LINK_BAR = "\u2223"  # DIVIDES, looks like "|"


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """One ``chat.postMessage``: ``text`` is the plain fallback (notifications, old clients).

    ``fallback_blocks``, when given, carry the same content in the blocks every workspace
    takes (sections, context and actions blocks): the sender posts them where Slack refuses
    ``blocks`` (``invalid_blocks``)."""

    text: str
    blocks: tuple[dict[str, Any], ...]
    fallback_blocks: tuple[dict[str, Any], ...] = ()


def block_count(blocks: Sequence[dict[str, Any]]) -> int:
    """The blocks of a message, a container's children included.

    Slack's reference does not say whether a container's children count towards the 50
    blocks of a message; counting them keeps every message within the limit either way.
    """
    return sum(1 + len(b.get("child_blocks") or ()) for b in blocks)


def escape(s: str) -> str:
    """``s`` with Slack's control characters ``&``, ``<``, ``>`` escaped (mrkdwn and text)."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escaped_cost(ch: str) -> int:
    """The room one character takes once escaped, in UTF-16 code units."""
    if ch == "&":
        return 5
    if ch in "<>":
        return 4
    return 2 if ord(ch) > 0xFFFF else 1


def _u16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _u16_cost(ch: str) -> int:
    return 2 if ord(ch) > 0xFFFF else 1


def _fit(s: str, limit: int) -> str:
    """``s`` truncated so that, escaped, it takes at most ``limit``; then escaped."""
    return escape(digest.truncate(s, limit, cost=escaped_cost))


def link(url: str, label: str) -> str:
    """``<url|label>``; ``url`` comes from ``text.link_url`` (no ``|``, ``<``, ``>`` left)."""
    return f"<{escape(url)}|{escape(label).replace('|', _LINK_BAR)}>"


def _section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def _context(mrkdwn: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn}]}


def _header(plain: str) -> dict[str, Any]:
    return {
        "type": "header",
        "text": {
            "type": "plain_text",
            "text": digest.truncate(plain, MAX_HEADER_TEXT, cost=_u16_cost),
            "emoji": True,
        },
    }


def _entry_mrkdwn(e: text.Entry) -> str:
    title = link(e.url, e.title) if e.url else escape(e.title)
    head = f"*{title}*"
    for label in (e.updated, e.language_note):
        if label:
            head += f"  {escape(label)}"
    lines = [head]
    tags = " · ".join(part for part in (e.tags, e.matched) if part)
    if tags:
        lines.append(escape(tags))
    if e.tldr:
        lines.append(escape(e.tldr))
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Rendered:
    """A page's parts, rendered once for both the sections and the container of a page."""

    number: int | None
    title: str  # plain text
    prefix: str  # "3. " for a page with buttons
    body: str  # mrkdwn: the linked title, marks, tags, TL;DR
    small_print: dict[str, Any] | None  # the context block
    row: tuple[Button, ...]


def _rendered(item: DigestItem, lang: str, number: int | None = None) -> _Rendered:
    row = votes.buttons(number, item) if number is not None else ()
    prefix = votes.numbered(number, "") if row and number is not None else ""
    e = text.entry(item, lang=lang)
    title = e.title
    body = _entry_mrkdwn(e)
    for detail in text.DETAIL_LEVELS[1:]:
        if _u16(prefix + body) <= MAX_SECTION_TEXT:
            break
        e = text.entry(item, lang=lang, detail=detail)
        body = _entry_mrkdwn(e)
    small_print = _context(_fit(" · ".join(e.context), MAX_CONTEXT_TEXT)) if e.context else None
    return _Rendered(number, title, prefix, body, small_print, row)


def _entry_blocks(
    item: DigestItem,
    lang: str,
    number: int | None = None,
    *,
    small_print: bool = True,
    rendered: _Rendered | None = None,
) -> list[dict[str, Any]]:
    """A page's section and context blocks (without ``small_print``, no context block);
    with ``number``, the page is numbered and its 👍/👎 buttons follow in an actions block
    of its own."""
    r = rendered or _rendered(item, lang, number)
    blocks = [_section(r.prefix + r.body)]
    if r.small_print is not None and small_print:
        blocks.append(r.small_print)
    if r.row:
        up, down = r.row
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    _button(up, f"vote-{r.number}-up"),
                    _button(down, f"vote-{r.number}-down"),
                ],
            }
        )
    return blocks


def _more(lang: str, more: int) -> list[dict[str, Any]]:
    """The last block of a digest cut by the chat's limit: ``…and 7 more: latest``."""
    return [_context(escape(t(lang, "digestq.more", count=more, p="")))] if more else []


def _fallback(lines: Sequence[str]) -> str:
    return _fit("\n".join(line for line in lines if line), MAX_FALLBACK_TEXT) or digest.ELLIPSIS


def _titles(items: Sequence[DigestItem], lang: str) -> list[str]:
    return [
        "• " + text.entry(item, lang=lang, detail=text.DETAIL_LEVELS[-1]).title for item in items
    ]


def _summary_section(items: Sequence[DigestItem], lang: str) -> dict[str, Any]:
    top = items[:SUMMARY_TOP]
    body = ""
    for with_links in (True, False):
        lines = [escape(t(lang, "render.top", count=len(top)))]
        for item in top:
            title = text.entry(item, lang=lang, detail=text.DETAIL_LEVELS[-1]).title
            url = text.link_url(item.page.url) if with_links else None
            lines.append(f"• *{link(url, title) if url else escape(title)}*")
        body = "\n".join(lines)
        if _u16(body) <= MAX_SECTION_TEXT:
            break
    return _section(body)


def _welcome(d: Digest) -> list[dict[str, Any]]:
    """The welcome digest's "to get you started" line, as a context block."""
    return [_context(escape(text.welcome_note(d)))] if d.welcome else []


def _feedback(r: _Rendered) -> list[dict[str, Any]]:
    """The page's 👍/👎 as Slack's own feedback control: a ``context_actions`` block with
    one ``feedback_buttons`` element (https://docs.slack.dev/reference/block-kit/
    block-elements/feedback-buttons-element). A press sends a ``block_actions`` payload
    whose action carries the pressed button's ``value``: the same vote action as a button's."""
    if not r.row:
        return []
    up, down = r.row
    return [
        {
            "type": "context_actions",
            "elements": [
                {
                    "type": "feedback_buttons",
                    "action_id": f"trend:vote-{r.number}"[:MAX_ACTION_ID],
                    "positive_button": _feedback_button(votes.UP_MARK, up),
                    "negative_button": _feedback_button(votes.DOWN_MARK, down),
                }
            ],
        }
    ]


def _feedback_button(label: str, button: Button) -> dict[str, Any]:
    return {
        "text": {"type": "plain_text", "text": label[:MAX_FEEDBACK_TEXT], "emoji": True},
        "value": button.action[:MAX_BUTTON_VALUE],
    }


def _container(r: _Rendered, number: int) -> list[dict[str, Any]]:
    """A page as a collapsible container (its title the container's title; its section and
    small print inside), then its feedback control.

    Only the changelog and the reference's field table of the container block
    (https://docs.slack.dev/reference/block-kit/blocks/container-block) are known here: the
    title is a ``plain_text`` object as in every typed Block Kit library, and the feedback
    control follows the container, since ``context_actions`` is not among the child blocks
    the reference lists.
    """
    children = [_section(r.body)]
    if r.small_print is not None:
        children.append(r.small_print)
    title = votes.numbered(number, r.title) if r.row else r.title
    container: dict[str, Any] = {
        "type": "container",
        "title": {
            "type": "plain_text",
            "text": digest.truncate(title, MAX_CONTAINER_TITLE, cost=_u16_cost) or digest.ELLIPSIS,
            "emoji": True,
        },
        "is_collapsible": True,
        "default_collapsed": number > EXPANDED_PAGES,
        "child_blocks": children[:MAX_CONTAINER_CHILDREN],
    }
    return [container, *_feedback(r)]


_Group = list[tuple[int, DigestItem, list[dict[str, Any]]]]


def _groups(d: Digest, rendered: Sequence[_Rendered]) -> list[_Group]:
    """The pages of each thread reply of a long digest: number, page and its blocks of
    sections, at most ``REPLY_BLOCKS`` blocks a reply."""
    groups: list[_Group] = []
    size = 0
    for number, item in enumerate(d.items, start=1):
        blocks = _entry_blocks(item, d.lang, number, rendered=rendered[number - 1])
        if groups and size + len(blocks) <= REPLY_BLOCKS:
            groups[-1].append((number, item, blocks))
            size += len(blocks)
        else:
            groups.append([(number, item, blocks)])
            size = len(blocks)
    return groups


def render_digest_containers(d: Digest) -> tuple[SlackMessage, tuple[SlackMessage, ...]]:
    """``(message, thread_replies)`` that carry ``d``, each page a collapsible container.

    The same messages as :func:`render_digest`, each of which it carries as its
    ``fallback_blocks``: the same header, summary and "more" line; per page a container
    (its numbered title; inside, the section with the linked title, tags and TL;DR, and the
    small print), open for the first ``EXPANDED_PAGES`` pages of the digest and collapsed
    after, followed by the page's 👍/👎 as ``feedback_buttons``.
    """
    plain_message, plain_replies, groups, rendered = _render_digest(d)
    if len(d.items) <= THREAD_THRESHOLD:
        blocks = [_header(text.header(d)), *_welcome(d)]
        for number in range(1, len(d.items) + 1):
            blocks += _container(rendered[number - 1], number)
        blocks += _more(d.lang, d.more)
        return SlackMessage(plain_message.text, tuple(blocks), plain_message.blocks), ()
    replies = []
    for group, plain in zip(groups, plain_replies, strict=True):
        blocks = []
        for number, _, _ in group:
            blocks += _container(rendered[number - 1], number)
        replies.append(SlackMessage(plain.text, tuple(blocks), plain.blocks))
    return plain_message, tuple(replies)


def render_digest(d: Digest) -> tuple[SlackMessage, tuple[SlackMessage, ...]]:
    """``(message, thread_replies)`` that carry ``d``.

    Up to ``THREAD_THRESHOLD`` pages: one message (a header block, then per page a section
    with the linked title, the "updated" mark, tags and matched tags, the TL;DR, and a
    context block with the page's date), and no replies. A longer digest: a summary (header,
    the top ``SUMMARY_TOP`` titles, a pointer to the thread) and the pages as thread
    replies of at most ``REPLY_BLOCKS`` blocks each.
    """
    summary, replies, _, _ = _render_digest(d)
    return summary, replies


def _render_digest(
    d: Digest,
) -> tuple[SlackMessage, tuple[SlackMessage, ...], list[_Group], list[_Rendered]]:
    head = text.header(d)
    rendered = [_rendered(item, d.lang, n) for n, item in enumerate(d.items, start=1)]
    if len(d.items) <= THREAD_THRESHOLD:
        blocks = [_header(head), *_welcome(d)]
        for number, item in enumerate(d.items, start=1):
            blocks += _entry_blocks(item, d.lang, number, rendered=rendered[number - 1])
        blocks += _more(d.lang, d.more)
        message = SlackMessage(_fallback([head, *_titles(d.items, d.lang)]), tuple(blocks))
        return message, (), [], rendered

    summary = SlackMessage(
        _fallback([head, *_titles(d.items[:SUMMARY_TOP], d.lang)]),
        (
            _header(head),
            *_welcome(d),
            _summary_section(d.items, d.lang),
            _context(escape(tn(d.lang, "render.thread_hint", len(d.items)))),
            *_more(d.lang, d.more),
        ),
    )
    groups = _groups(d, rendered)
    replies = tuple(
        SlackMessage(
            _fallback(
                [
                    f"{head} {text.part_label(d.lang, index=i, total=len(groups))}",
                    *_titles([item for _, item, _ in group], d.lang),
                ]
            ),
            tuple(b for _, _, blocks in group for b in blocks),
        )
        for i, group in enumerate(groups, start=1)
    )
    return summary, replies, groups, rendered


def _button(button: Button, index: int | str) -> dict[str, Any]:
    label = digest.truncate(button.label, MAX_BUTTON_TEXT, cost=_u16_cost) or digest.ELLIPSIS
    element: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "action_id": f"trend:{index}"[:MAX_ACTION_ID],
    }
    if button.url is not None and len(button.url) <= MAX_BUTTON_URL:
        # A link button opens its url; Slack still sends the press, which the channel
        # acknowledges and leaves (https://api.slack.com/reference/block-kit/block-elements#button).
        element["url"] = button.url
        element["action_id"] = LINK_ACTION_ID
    else:
        element["value"] = button.action[:MAX_BUTTON_VALUE]
    return element


def _actions(rows: Sequence[Sequence[Button]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    index = 0
    for row in rows:
        for start in range(0, len(row), MAX_ACTIONS_ELEMENTS):
            elements = []
            for button in row[start : start + MAX_ACTIONS_ELEMENTS]:
                elements.append(_button(button, index))
                index += 1
            blocks.append({"type": "actions", "elements": elements})
    return blocks[: MAX_BLOCKS - 1]


def _text_sections(s: str) -> list[dict[str, Any]]:
    pieces: list[str] = []
    for paragraph in text.paragraphs(s):
        pieces += [
            escape(p) for p in text.split_text(paragraph, MAX_SECTION_TEXT, cost=escaped_cost)
        ]
    packed = text.pack(pieces, MAX_SECTION_TEXT, separator=_SEPARATOR, measure=_u16)
    return [_section(p) for p in packed]


def render_reply(r: Reply) -> SlackMessage:
    """``r`` as one message: its text in sections, its pages as digest entries, its buttons.

    Each row of buttons becomes an ``actions`` block (split at ``MAX_ACTIONS_ELEMENTS``);
    a button's ``action_id`` is ``trend:<n>``, unique in the message, and its ``value`` the
    button's ``action``. When everything would exceed ``MAX_BLOCKS``, the text and pages
    that do not fit are left out and a context block says how many pages were.
    """
    actions = _actions(r.buttons)
    room = MAX_BLOCKS - len(actions)
    groups: list[list[dict[str, Any]]] = [[section] for section in _text_sections(r.text)]
    first_item = len(groups)
    entries = [_entry_blocks(item, r.lang, n) for n, item in enumerate(r.items, start=1)]
    voted = any(item.page_id is not None for item in r.items)
    if voted and len(groups) + sum(len(g) for g in entries) > room:
        # Pages with their buttons before their small print (date, arXiv id, host).
        entries = [
            _entry_blocks(item, r.lang, n, small_print=False)
            for n, item in enumerate(r.items, start=1)
        ]
    groups += entries

    body: list[dict[str, Any]] = []
    if sum(len(g) for g in groups) <= room:
        for g in groups:
            body += g
    else:
        kept = 0
        for g in groups:
            if len(body) + len(g) > room - 1:
                break
            body += g
            kept += 1
        omitted = len(groups) - max(kept, first_item)
        note = tn(r.lang, "render.more", omitted) if omitted else digest.ELLIPSIS
        body.append(_context(escape(note)))

    fallback = [r.text.strip()] if r.text.strip() else [*_titles(r.items, r.lang)]
    if not any(line.strip() for line in fallback):
        fallback = [" ".join(b.label for row in r.buttons for b in row)]
    text = _fallback(fallback)
    # Slack needs a non-empty fallback, whatever the reply held (e.g. blank button labels).
    return SlackMessage(text if text.strip() else digest.ELLIPSIS, tuple(body + actions))
