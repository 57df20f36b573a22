"""``why PAGE``: whether a chat's filter matches a page, and what happened to it there.

:func:`parse_ref` (pure) reads what the user typed: an arXiv id, a wiki path or slug, or a
link. :func:`explain` (pure) turns the store's facts about the page and the chat into the
answer's lines; :func:`answer` joins the two with the store.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.i18n import t
from bot.models import ChatState, Filter, Mode, Page, Reply
from bot.rules import filters
from bot.rules.schedule import zone_label
from bot.rules.urls import public_name
from bot.store import chats as chat_store
from bot.store import current, history
from bot.store import pages as page_store

MAX_REF_CHARS = 500  # longer than any wiki path or link a chat would paste
_ARXIV = re.compile(r"(?:arxiv:)?(\d{4}\.\d{4,5})(?:v\d+)?", re.IGNORECASE)
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf|html)/(\d{4}\.\d{4,5})", re.IGNORECASE)
_LANG_SUFFIX = re.compile(r"\.(?:en|ko)$")
_SLUG = re.compile(r"[\w.\-]+")


@dataclass(frozen=True, slots=True)
class Ref:
    """What to look a page up by; any of the fields may be set."""

    arxiv: str | None = None
    key: str | None = None
    slug: str | None = None
    url: str | None = None


def parse_ref(text: str) -> Ref | None:
    """The page ``text`` names, or None when it cannot name one (empty, spaces, too long,
    control characters)."""
    text = text.strip()
    if not text or len(text) > MAX_REF_CHARS or any(c.isspace() for c in text):
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        return None
    whole = _ARXIV.fullmatch(text)
    if whole:
        return Ref(arxiv=whole.group(1))
    if text.lower().startswith(("http://", "https://")):
        found = _ARXIV_URL.search(text)
        if found:
            return Ref(arxiv=found.group(1), url=text)
        try:
            path = unquote(urlsplit(text).path)
        except ValueError:
            return Ref(url=text)
        key = _key_of(path)
        return Ref(url=text, key=key or None, arxiv=_arxiv_in(key))
    key = _key_of(text)
    if not key:
        return None
    if "/" in key:
        return Ref(key=key, arxiv=_arxiv_in(key))
    if not _SLUG.fullmatch(key):
        return None
    return Ref(key=key, slug=key, arxiv=_arxiv_in(key))


def _key_of(path: str) -> str:
    """A wiki path as a page key: no leading or trailing slash, extension or language."""
    path = path.strip("/")
    for ext in (".md", ".markdown", ".html"):
        path = path.removesuffix(ext)
    return _LANG_SUFFIX.sub("", path)


def _arxiv_in(key: str | None) -> str | None:
    """The arXiv id a file name starts with (``2608.27351-evolution-…``), if any."""
    if not key:
        return None
    found = _ARXIV.match(key.rsplit("/", 1)[-1])
    return found.group(1) if found else None


@dataclass(frozen=True, slots=True)
class ChatFacts:
    state: ChatState
    inactive_reason: str | None
    mode: Mode
    timezone: str
    cursor: int
    next_digest_at: dt.datetime | None
    held_until: dt.datetime | None


def _local(lang: str, moment: dt.datetime, timezone: str) -> str:
    aware = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment
    local = aware.astimezone(ZoneInfo(timezone))
    return t(lang, "why.when", when=local.strftime("%Y-%m-%d %H:%M"), timezone=zone_label(timezone))


def match_lines(lang: str, chat_filter: Filter, tags: tuple[str, ...]) -> list[str]:
    """Why the filter matches the page, or what leaves it out."""
    if chat_filter.is_empty:
        return [t(lang, "why.no_filter")]
    have = filters.normalized_tags(tags)
    excluded = sorted(chat_filter.excluded & have)
    missing = sorted(chat_filter.required - have)
    if filters.matches(chat_filter, tags):
        matched = filters.matched_tags(chat_filter, tags)
        if chat_filter.everything and not matched:
            return [t(lang, "why.match.everything")]
        return [t(lang, "why.match.tags", tags=", ".join(matched))]
    # One line that says every reason, never the same opening twice.
    if excluded and missing:
        both = t(
            lang, "why.nomatch.both", excluded=", ".join(excluded), required=", ".join(missing)
        )
        return [both]
    if excluded:
        return [t(lang, "why.nomatch.excluded", tags=", ".join(excluded))]
    if missing:
        return [t(lang, "why.nomatch.required", tags=", ".join(missing))]
    return [t(lang, "why.nomatch.none", tags=", ".join(sorted(chat_filter.any_of)))]


def source_lines(lang: str, *, asked: Page, sent_as: Page, others: list[Page]) -> list[str]:
    """Which source the page came from and, when another source has the same paper, why
    only one of them is sent: a chat gets a paper once, as its wiki page."""
    lines = [t(lang, "why.source", source=_source(asked))]
    if asked is not sent_as:
        lines.append(t(lang, "why.copy", source=_source(sent_as)))
    elif others:
        names = ", ".join(dict.fromkeys(_source(o) for o in others))
        lines.append(t(lang, "why.copies", sources=names))
    return lines


def _source(page: Page) -> str:
    """Any member may ask ``why``: a source by its public name, never a server path."""
    return public_name(page.source)[:200]


def outcome_lines(
    lang: str,
    *,
    facts: history.PageFacts,
    chat: ChatFacts,
    matches: bool,
    prefix: str,
) -> list[str]:
    """What happened to the page in this chat: sent, queued, failed, held or skipped."""
    zone = chat.timezone
    if facts.messages:
        last = facts.messages[-1]
        date = last.date.isoformat() if last.date else ""
        if last.left_out:
            key = "why.left_out.sent" if last.status == "sent" else "why.left_out.queued"
            return [t(lang, key, date=date, p=prefix)]
        if last.status == "sent":
            when = _local(lang, last.sent_at or last.created_at, zone)
            if last.kind == "digest":
                return [t(lang, "why.sent.digest", when=when, date=date)]
            return [t(lang, "why.sent.instant", when=when)]
        if last.status in ("queued", "sending"):
            return [t(lang, "why.queued", when=_local(lang, last.not_before, zone))]
        reason = (last.last_error or "").strip()[:200] or t(lang, "why.no_reason")
        return [t(lang, "why.failed", reason=reason)]
    if facts.planned_at is not None:
        return [t(lang, "why.planned", when=_local(lang, facts.planned_at, zone))]
    if not facts.events:
        return [t(lang, "why.skipped.baseline")]
    last_event = facts.events[-1]
    if last_event[2] < facts.chat_created_at:
        return [t(lang, "why.skipped.before_subscribing", p=prefix)]
    if not matches:
        return [t(lang, "why.skipped.filter")]
    if chat.state == ChatState.INACTIVE:
        reason = (chat.inactive_reason or "").strip()[:200] or t(lang, "why.no_reason")
        return [t(lang, "why.skipped.inactive", reason=reason, p=prefix)]
    if chat.state == ChatState.PAUSED:
        return [t(lang, "why.skipped.paused_now", p=prefix)]
    if last_event[0] > chat.cursor:  # not planned yet
        if chat.mode == Mode.INSTANT and chat.held_until is not None:
            return [t(lang, "why.held", when=_local(lang, chat.held_until, zone))]
        if chat.mode != Mode.INSTANT and chat.next_digest_at is not None:
            return [t(lang, "why.pending", when=_local(lang, chat.next_digest_at, zone))]
        return [t(lang, "why.pending_instant")]
    return [t(lang, "why.skipped.paused", p=prefix)]


def _title(page: Page, lang: str) -> str:
    title = " ".join(page.text(lang).title.split()) or page.key
    return title[:200]


async def answer(
    conn: AsyncConnection, record: chat_store.ChatRecord, text: str, *, prefix: str
) -> Reply:
    """The reply to ``why text`` in ``record``'s chat."""
    lang = record.chat.lang
    ref = parse_ref(text)
    if ref is None:
        return Reply(lang, t(lang, "why.usage", p=prefix))
    found = await history.find_pages(conn, arxiv=ref.arxiv, key=ref.key, slug=ref.slug, url=ref.url)
    if not found:
        shown = text.strip()[:80]
        return Reply(lang, t(lang, "why.unknown", page=shown, p=prefix))
    asked = found[0]
    # The paper goes to chats as one of its pages (its wiki page before a feed entry):
    # what happened to it in this chat is what happened to that page.
    paper = await current.papers_of(conn, [asked])
    page_id = paper.page_of.get(asked, asked)
    if ref.url is None and ref.key is None:  # an arXiv id names the paper, not a copy
        asked = page_id
    copies = [page_id, *paper.copies.get(page_id, ())]
    loaded = await page_store.load_pages(conn, copies)
    page, asked_page = loaded.get(page_id), loaded.get(asked)
    facts = await history.facts(conn, chat_pk=record.pk, page_id=page_id)
    if page is None or asked_page is None or facts is None:
        return Reply(lang, t(lang, "why.unknown", page=text.strip()[:80], p=prefix))
    chat = ChatFacts(
        state=record.chat.state,
        inactive_reason=record.inactive_reason,
        mode=record.chat.mode,
        timezone=record.chat.timezone,
        cursor=record.cursor,
        next_digest_at=record.next_digest_at,
        held_until=record.held_until,
    )
    matches = filters.matches(record.chat.filter, page.tags)
    lines = [t(lang, "why.page", title=_title(page, lang))]
    others = [i for i in found if i not in copies]  # copies of the paper are one page here
    if others:
        lines.append(t(lang, "why.several", count=len(others) + 1))
    if page_id in paper.taken_out:
        lines.append(t(lang, "why.taken_out"))
    elif facts.removed_at is not None:
        lines.append(t(lang, "why.removed"))
    lines += source_lines(
        lang,
        asked=asked_page,
        sent_as=page,
        others=[
            loaded[i]
            for i in copies
            if i not in (asked, page_id) and i in loaded and i not in paper.taken_out
        ],
    )
    lines += match_lines(lang, record.chat.filter, page.tags)
    lines += outcome_lines(lang, facts=facts, chat=chat, matches=matches, prefix=prefix)
    return Reply(lang, "\n".join(lines))
