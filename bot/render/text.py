"""Plain-text rendering for the console channel, and the plain parts every renderer marks up.

Pure. :func:`entry` decides what a page entry says (title, labels, tags, TL;DR) in the
digest's language; ``telegram`` and ``slack`` only add their markup and enforce their
limits. :func:`split_text` and :func:`pack` are the layout helpers they share.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from bot import i18n
from bot.i18n import clean, t, tn
from bot.models import Digest, DigestItem, Reply
from bot.render import votes
from bot.rules import digest

TITLE_LIMIT = 256  # characters of a title; arXiv titles run to ~200
SHORT_TITLE_LIMIT = 100  # the last resort for an entry that does not fit a message
TAGS_LIMIT = 200  # characters of the tags line, and of the "matched:" label
MAX_URL_LENGTH = 2048  # longer links are shown as plain titles; browsers and clients balk

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_TOKENS = re.compile(r"\s+|\S+")
# characters that would end a link in Slack (``|``, ``>``), a quoted attribute (``"``) or
# the URL itself in plain text (whitespace); percent-encoding them keeps the same target
_URL_UNSAFE = {ch: f"%{ord(ch):02X}" for ch in ' "<>|\\^`{}'}


@dataclass(frozen=True, slots=True)
class Detail:
    """How much of a page an entry shows; renderers step down until the entry fits."""

    title_limit: int
    tldr_limit: int
    tags_limit: int
    link: bool


DETAIL_LEVELS: tuple[Detail, ...] = (
    Detail(TITLE_LIMIT, digest.TLDR_LIMIT, TAGS_LIMIT, link=True),
    Detail(TITLE_LIMIT, digest.TLDR_LIMIT, TAGS_LIMIT, link=False),
    Detail(TITLE_LIMIT, digest.TLDR_LIMIT // 4, TAGS_LIMIT // 2, link=False),
    Detail(SHORT_TITLE_LIMIT, 0, 0, link=False),  # bounded: fits any platform's message
)


@dataclass(frozen=True, slots=True)
class Entry:
    """The plain-text parts of one page entry; empty strings are left out by renderers.

    ``title`` and ``tldr`` are in the page's text for the digest language (or its first
    language, then ``language_note`` says which), whitespace collapsed and truncated.
    """

    title: str
    url: str | None
    updated: str
    language_note: str
    tags: str  # "#rl #reasoning"
    matched: str  # "matched: rl, reasoning"
    tldr: str
    context: tuple[str, ...]  # page date, arXiv id, feed host: small print


def collapse(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) made one space."""
    return " ".join(text.split())


# A page's URL is checked once for all the digests that show it (Slack's page lists call
# this directly; entries, through :func:`entry`, are cached themselves).
@functools.lru_cache(maxsize=4096)
def link_url(url: str | None) -> str | None:
    """``url`` when it is an absolute http(s) URL a chat can link to, else ``None``.

    Characters that would break out of a link's markup are percent-encoded (the target is
    unchanged); control characters or an over-long URL mean no link.
    """
    if not url or len(url) > MAX_URL_LENGTH:
        return None
    url = url.strip()
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    return "".join(_URL_UNSAFE.get(ch) or (quote(ch) if ch.isspace() else ch) for ch in url)


def source_host(source: str) -> str:
    """The host of a feed source (``arxiv.org``); ``""`` for a directory source.

    A directory's path means nothing to a chat, a feed's host says where the page is from.
    """
    try:
        parts = urlsplit(source.strip())
        host = parts.hostname or ""
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https"):
        return ""
    return digest.truncate(host.removeprefix("www."), 100)


def format_date(lang: str, date: dt.date) -> str:
    """``3 Dec 2026`` in English, ``2026년 12월 3일`` in Korean."""
    return i18n.format_date(lang, date)


def page_count(lang: str, count: int) -> str:
    """``1 page`` / ``5 pages`` in the chat's language."""
    return tn(lang, "render.pages", count)


def header(d: Digest) -> str:
    """The first line of a digest: ``📚 AI trends · 3 Dec 2026 · 5 pages``."""
    if d.instant:
        # The header says what is in it: an updated page is not news.
        updated = [item.updated for item in d.items]
        if updated and all(updated):
            return t(d.lang, "render.instant_header_updated")
        if any(updated):
            return t(d.lang, "render.instant_header_mixed")
        return t(d.lang, "render.instant_header")
    return t(
        d.lang,
        "render.header",
        date=format_date(d.lang, d.date),
        pages=page_count(d.lang, len(d.items)),
    )


def welcome_note(d: Digest) -> str:
    """The line under a welcome digest's header ("To get you started: …"); else ``""``."""
    return t(d.lang, "render.welcome") if d.welcome else ""


def part_label(lang: str, *, index: int, total: int) -> str:
    """``(1/3)``: which of several messages this is."""
    return t(lang, "render.part", index=index, total=total)


def language_note(lang: str, page_lang: str, *, toggled: bool = False) -> str:
    """``(in Korean)`` when a page is shown in ``page_lang`` to a ``lang`` chat, else ``""``.
    ``toggled``: the digest in the language its toggle asked for, where a page without that
    language says it has only its own (``(only in Korean)``)."""
    if page_lang == lang:
        return ""
    key = "render.only_in" if toggled else "render.lang_note"
    if page_lang in i18n.LANGUAGES:
        return t(lang, key, lang=i18n.language_name(page_lang, lang))
    return t(lang, key, lang=digest.truncate(page_lang, 16))


# The same page goes to many chats in one language: its entry is made once (a page that
# changes is another item, with another entry).
@functools.lru_cache(maxsize=4096)
def entry(item: DigestItem, *, lang: str, detail: Detail = DETAIL_LEVELS[0]) -> Entry:
    """The plain-text parts of ``item`` for a ``lang`` chat, at ``detail``."""
    page = item.page
    text = page.text(lang)
    # Bidi controls and invisible characters go first: a title could otherwise display as
    # something it is not (``clean``).
    title = collapse(clean(text.title)) or collapse(clean(page.key)) or digest.ELLIPSIS
    shown_tags = [collapse(clean(tag)) for tag in page.tags]
    tags = " ".join("#" + "_".join(tag.split()) for tag in shown_tags if tag)
    matched_tags = [clean(tag) for tag in item.matched]
    matched = t(lang, "render.matched", tags=", ".join(matched_tags)) if item.matched else ""
    context: list[str] = []
    if page.date:
        context.append(format_date(lang, page.date))
    if page.arxiv:
        context.append(t(lang, "render.arxiv", id=digest.truncate(page.arxiv, 32)))
    host = source_host(page.source)
    if host:
        context.append(host)
    return Entry(
        title=digest.truncate(title, detail.title_limit),
        url=link_url(page.url) if detail.link else None,
        updated=t(lang, "render.updated") if item.updated else "",
        language_note=language_note(lang, text.lang, toggled=item.toggled),
        tags=digest.truncate(tags, detail.tags_limit),
        matched=digest.truncate(matched, detail.tags_limit),
        tldr=digest.truncate(collapse(clean(text.tldr)), detail.tldr_limit),
        context=tuple(context),
    )


def paragraphs(text: str) -> list[str]:
    """The paragraphs of a reply's text (separated by blank lines), trimmed, none empty."""
    return [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]


def split_text(text: str, limit: int, *, cost: Callable[[str], int]) -> list[str]:
    """``text`` in pieces of at most ``limit`` (as ``cost`` counts), split at whitespace.

    A word longer than ``limit`` is cut hard. Whitespace at the cuts is dropped; line
    breaks inside a piece are kept. ``limit`` must be at least the cost of any character.
    """
    pieces: list[str] = []
    buf: list[str] = []
    used = 0
    pending = ""
    for token in _TOKENS.findall(text):
        if token.isspace():
            pending = token if buf else ""
            continue
        token_cost = sum(cost(ch) for ch in token)
        pending_cost = sum(cost(ch) for ch in pending)
        if buf and used + pending_cost + token_cost <= limit:
            buf += [pending, token]
            used += pending_cost + token_cost
        else:
            if buf:
                pieces.append("".join(buf))
            buf, used = [], 0
            for ch in token:
                c = cost(ch)
                if buf and used + c > limit:
                    pieces.append("".join(buf))
                    buf, used = [], 0
                buf.append(ch)
                used += c
        pending = ""
    if buf:
        pieces.append("".join(buf))
    return pieces


def pack(
    blocks: Iterable[str], limit: int, *, separator: str, measure: Callable[[str], int]
) -> list[str]:
    """Join ``blocks`` greedily into as few chunks of at most ``limit`` as their order allows.

    A block is never split; one longer than ``limit`` makes a chunk of its own (callers
    make every block fit).
    """
    chunks: list[str] = []
    current = ""
    for block in blocks:
        candidate = f"{current}{separator}{block}" if current else block
        if current and measure(candidate) > limit:
            chunks.append(current)
            current = block
        else:
            current = candidate
    if current:
        chunks.append(current)
    return chunks


def _entry_text(e: Entry) -> str:
    title = f"{e.title} <{e.url}>" if e.url else e.title
    lines = [" · ".join(part for part in (title, e.updated) if part)]
    if e.language_note:
        lines[0] += f" {e.language_note}"
    tags_line = " · ".join(part for part in (e.tags, e.matched) if part)
    if tags_line:
        lines.append(tags_line)
    if e.tldr:
        lines.append(e.tldr)
    if e.context:
        lines.append(" · ".join(e.context))
    return "\n".join(lines)


def _items_text(items: Sequence[DigestItem], lang: str) -> list[str]:
    found = []
    for number, item in enumerate(items, start=1):
        body = _entry_text(entry(item, lang=lang))
        if votes.buttons(number, item):
            # The console votes by typing +N or -N (bot/channels/console/).
            up, down = votes.UP_MARK, votes.DOWN_MARK
            body = f"{votes.numbered(number, body)}\n[+{number} {up}] [-{number} {down}]"
        found.append(body)
    return found


def render_digest(d: Digest) -> str:
    """The digest as the console shows it: the Telegram message without markup; a page that
    can be voted on is numbered, with its ``[+1 👍] [-1 👎]`` buttons under it."""
    head = "\n".join(line for line in (header(d), welcome_note(d)) if line)
    more = [t(d.lang, "digestq.more", count=d.more, p="/")] if d.more else []
    return "\n\n".join([head, *_items_text(d.items, d.lang), *more])


def render_reply(r: Reply) -> str:
    """A command's reply as the console shows it; buttons as ``[Send] [Cancel]`` lines."""
    blocks = ["\n\n".join(paragraphs(r.text))] if r.text.strip() else []
    blocks += _items_text(r.items, r.lang)
    blocks += [" ".join(f"[{b.label}]" for b in row) for row in r.buttons if row]
    return "\n\n".join(blocks)
