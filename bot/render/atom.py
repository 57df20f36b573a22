"""A chat's private feed as Atom 1.0 (RFC 4287), and the conditional GET rules (RFC 9110).

Pure: the store gives the entries, this module writes the document and decides between
200 and 304. The document is a function of its input only (no clock), so the same pages
give the same bytes and the same ETag. A feed reader is one more chat: its text gets the
chats' rules (bidi and zero-width characters removed, :func:`bot.i18n.clean`) and its
links theirs (absolute http(s) only, :func:`bot.render.text.link_url`), so a
``javascript:`` or ``tg://`` link from a hostile source never becomes an ``href``.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import re
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from bot.i18n import clean
from bot.render.text import link_url
from bot.rules.feeds import FeedEntry

ATOM_NS = "http://www.w3.org/2005/Atom"
# XML 1.0 forbids these characters anywhere in a document (section 2.2, "Char").
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_ENTRY_NS = uuid.UUID("6f1f1b52-7a3e-4d0e-9a55-2f0c3e0f5a10")

ET.register_namespace("", ATOM_NS)


@dataclass(frozen=True, slots=True)
class Feed:
    """What the document says; ``feed_id`` is stable for one token."""

    feed_id: str
    title: str
    author: str
    self_url: str
    lang: str
    updated: dt.datetime  # naive UTC, the newest change the feed reflects
    entries: tuple[FeedEntry, ...]


def _clean(text: str) -> str:
    """``text`` as a chat would show it, without what XML 1.0 cannot hold."""
    return _NOT_XML.sub("", clean(text))


def _stamp(moment: dt.datetime) -> str:
    """RFC 3339 date-time in UTC, as Atom's date constructs require (RFC 4287 3.3)."""
    return moment.replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def entry_id(source: str, key: str) -> str:
    """A page's permanent Atom id: the same page has it in every chat's feed."""
    return uuid.uuid5(_ENTRY_NS, f"{source}\0{key}").urn


def feed_id(hashed_token: str) -> str:
    return uuid.uuid5(_ENTRY_NS, f"feed\0{hashed_token}").urn


def render(feed: Feed) -> bytes:
    """The Atom document, UTF-8, with its XML declaration."""

    def sub(parent: ET.Element, name: str, text: str | None = None, **attrs: str) -> ET.Element:
        element = ET.SubElement(parent, f"{{{ATOM_NS}}}{name}", attrs)
        if text is not None:
            element.text = _clean(text)
        return element

    root = ET.Element(f"{{{ATOM_NS}}}feed", {"xml:lang": feed.lang})
    sub(root, "id", feed.feed_id)
    sub(root, "title", feed.title, type="text")
    sub(root, "updated", _stamp(feed.updated))
    sub(sub(root, "author"), "name", feed.author)
    sub(root, "link", rel="self", type="application/atom+xml", href=feed.self_url)
    for entry in feed.entries:
        page = entry.item.page
        text = page.text(feed.lang)
        element = sub(root, "entry", **{"xml:lang": text.lang})
        sub(element, "id", entry_id(page.source, page.key))
        sub(element, "title", text.title, type="text")
        sub(element, "updated", _stamp(entry.updated))
        url = link_url(page.url)
        if url:
            sub(element, "link", rel="alternate", type="text/html", href=url)
        for tag in entry.item.matched:
            sub(element, "category", term=_clean(tag))
        sub(element, "summary", text.tldr, type="text")
        if not url:
            # RFC 4287 4.1.2: an entry without an alternate link must have content.
            sub(element, "content", text.tldr, type="text")
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


def etag(body: bytes) -> str:
    """A strong entity tag of the document."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def http_date(moment: dt.datetime) -> str:
    return email.utils.format_datetime(moment.replace(microsecond=0, tzinfo=dt.UTC), usegmt=True)


def not_modified(
    *,
    tag: str,
    last_modified: dt.datetime,
    if_none_match: str | None,
    if_modified_since: str | None,
) -> bool:
    """Whether a GET with these headers gets 304 (RFC 9110 13.1.2, 13.1.3, 13.2.2).

    ``If-None-Match`` wins when present (weak comparison, ``*`` matches); otherwise
    ``If-Modified-Since``, when it parses, against ``last_modified`` to the second.
    """
    if if_none_match is not None:
        wanted = {part.strip().removeprefix("W/") for part in if_none_match.split(",")}
        return "*" in wanted or tag in wanted
    if not if_modified_since:
        return False
    try:
        since = email.utils.parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError, IndexError):
        return False
    if since.tzinfo is None:
        since = since.replace(tzinfo=dt.UTC)
    return last_modified.replace(microsecond=0, tzinfo=dt.UTC) <= since
