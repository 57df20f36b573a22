"""A fetched feed's entries -> pages: Atom and RSS 2.0 by feedparser, JSON Feed 1.1 by hand.

XML is parsed by feedparser from the bytes :mod:`bot.sources.feed` fetched (feedparser never
fetches anything itself). Each entry becomes a one-language :class:`bot.models.Page` keyed
by its id (or link), bounded by :func:`bot.sources.bounds.bound_page`; a feed keeps at most
:data:`MAX_FEED_ENTRIES` entries.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import re
import time
from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import feedparser

from bot import papers
from bot.errors import SourceError
from bot.models import Page, PageText, Skipped, normalize_lang
from bot.rules.sources import without_userinfo
from bot.sources.bounds import bound_page, too_many_tags, unrecordable, valid_text
from bot.sources.pages import normalize_paragraphs, normalize_tags

log = logging.getLogger("bot.sources")

MAX_FEED_ENTRIES = 2000  # a wiki feed is a window of recent pages; the rest is dropped
UNRECORDABLE = "entry has text that cannot be recorded"

_JSON_TYPES = frozenset({"application/feed+json", "application/json"})
_BLOCK_TAGS = frozenset(
    {"p", "div", "li", "ul", "ol", "blockquote", "pre", "tr", "table", "section", "article"}
    | {f"h{n}" for n in range(1, 7)}
)
_INVISIBLE_TAGS = frozenset({"script", "style", "template"})
# A numeric character reference in XML (``&#xD800;``, ``&#55296;``): feedparser turns one
# that names no encodable character (a surrogate, NUL, past U+10FFFF) into an exception
# that loses the whole feed, so such references become U+FFFD before it parses.
_CHAR_REF_RE = re.compile(rb"&#(?:[xX]([0-9a-fA-F]{1,32})|([0-9]{1,32}));")
_LARGEST_CODE_POINT = 0x10FFFF


def parse_feed(
    body: bytes, *, source: str, content_type: str, location: str, default_lang: str
) -> tuple[list[Page], list[Skipped]]:
    """Parse a fetched feed body into pages; blocking, run it off the event loop.

    Args:
        body: The response body.
        source: The source name (the feed's public identity).
        content_type: The response's ``Content-Type``.
        location: The final URL, without credentials (its public identity), against which
            relative links and ids resolve.
        default_lang: The language of entries whose feed names none of the bot's.

    Returns:
        ``(pages, skipped)``; of two entries with one id the first is kept.

    Raises:
        SourceError: The body is not a readable Atom, RSS or JSON feed.
    """
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type in _JSON_TYPES or body.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        entries = _json_entries(body, source=source, location=location, default_lang=default_lang)
    else:
        entries = _xml_entries(
            body,
            source=source,
            content_type=content_type,
            location=location,
            default_lang=default_lang,
        )
    if len(entries) > MAX_FEED_ENTRIES:
        log.warning(
            "%s: %d entries dropped, the first %d kept",
            source,
            len(entries) - MAX_FEED_ENTRIES,
            MAX_FEED_ENTRIES,
        )
        del entries[MAX_FEED_ENTRIES:]
    pages: dict[str, Page] = {}
    skipped: list[Skipped] = []
    over: list[tuple[str, int]] = []
    for entry in entries:
        if isinstance(entry, Skipped):
            skipped.append(entry)
            continue
        if unrecordable(entry):  # never expected: every text passed valid_text
            skipped.append(Skipped(source=source, path=entry.key[:80], reason=UNRECORDABLE))
            continue
        page, dropped = bound_page(entry)
        if dropped:
            over.append((page.key, dropped))
        pages.setdefault(page.key, page)
    if (line := too_many_tags(over)) is not None:
        log.warning("%s: %s", source, line)
    return list(pages.values()), skipped


def html_to_text(markup: str) -> str:
    """Visible text of an HTML fragment: tags dropped, entities decoded, whitespace collapsed.

    Block elements (``<p>``, ``<li>``, headings) become paragraph breaks.
    """
    extractor = _TextExtractor()
    extractor.feed(markup)
    extractor.close()
    return normalize_paragraphs("".join(extractor.parts))


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _INVISIBLE_TAGS:
            self._hidden += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")
        elif tag == "br":
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _INVISIBLE_TAGS:
            self._hidden = max(0, self._hidden - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def _xml_entries(
    body: bytes, *, source: str, content_type: str, location: str, default_lang: str
) -> list[Page | Skipped]:
    headers = {"content-location": location}
    if content_type:
        headers["content-type"] = content_type
    body = _CHAR_REF_RE.sub(_valid_char_ref, body)
    # A stream, never a str: feedparser would fetch a str that looks like a URL or a path.
    parsed: object = feedparser.parse(io.BytesIO(body), response_headers=headers)
    entries = _list(_field(parsed, "entries"))
    if not entries:
        if _field(parsed, "bozo"):
            problem = str(_field(parsed, "bozo_exception") or "") or "malformed XML"
            raise SourceError(source, f"invalid feed: {short(problem)}")
        if not _field(parsed, "version"):
            raise SourceError(source, "not an Atom, RSS or JSON feed")
    feed_lang = normalize_lang(_mapping(_field(parsed, "feed")).get("language"))
    return [
        _xml_entry(
            entry, index, source=source, location=location, default_lang=feed_lang or default_lang
        )
        for index, entry in enumerate(entries, 1)
    ]


def _valid_char_ref(match: re.Match[bytes]) -> bytes:
    hexadecimal, decimal = match.groups()
    code = int(hexadecimal, 16) if hexadecimal else int(decimal)
    if code == 0 or 0xD800 <= code <= 0xDFFF or code > _LARGEST_CODE_POINT:
        return b"&#xFFFD;"
    return match.group()


def _xml_entry(
    entry: object, index: int, *, source: str, location: str, default_lang: str
) -> Page | Skipped:
    # feedparser has resolved relative links and ids against ``location``.
    link = _entry_url(_text(_field(entry, "link")), location)
    key = _entry_url(_text(_field(entry, "id")), location) or link
    if not key:
        return Skipped(source=source, path=f"entry {index}", reason="entry has no id or link")
    title_detail = _mapping(_field(entry, "title_detail"))
    summary_detail = _mapping(_field(entry, "summary_detail"))
    title = _detail_text(_field(entry, "title"), title_detail.get("type"))
    # An entry with content only (Atom 0.3 ``content``, RSS ``xhtml:body``) has its content
    # copied into ``summary`` by feedparser, without the ``summary_detail`` that says it is
    # markup: the content is read from ``content``, with its type, instead.
    tldr = (
        _detail_text(_field(entry, "summary"), summary_detail.get("type"), paragraphs=True)
        if summary_detail
        else ""
    )
    text_detail = summary_detail
    if not tldr:
        for content in _list(_field(entry, "content")):
            detail = _mapping(content)
            text = _detail_text(detail.get("value"), detail.get("type"), paragraphs=True)
            tldr = _first_paragraph(text)
            if tldr:
                text_detail = detail
                break
    lang = (
        normalize_lang(text_detail.get("language"))
        or normalize_lang(title_detail.get("language"))
        or default_lang
    )
    terms = [_mapping(tag).get("term") for tag in _list(_field(entry, "tags"))]
    links = [link or "", key] + [
        _entry_url(_text(_mapping(item).get("href")), location) or ""
        for item in _list(_field(entry, "links"))
    ]
    arxiv, doi = papers.from_links(links)
    doi = _entry_doi(entry) or doi
    return Page(
        source=source,
        key=key,
        texts=(PageText(lang=lang, title=title or link or key, tldr=tldr),),
        tags=_feed_tags(terms),
        url=link or (key if key.startswith(("http://", "https://")) else None),
        created=_struct_date(_field(entry, "published_parsed")),
        updated=_struct_date(_field(entry, "updated_parsed")),
        arxiv=arxiv,
        doi=doi,
    )


def _json_entries(
    body: bytes, *, source: str, location: str, default_lang: str
) -> list[Page | Skipped]:
    try:
        document = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise SourceError(source, f"invalid JSON: {short(str(exc))}") from None
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise SourceError(source, "not a JSON Feed: no items list")
    feed_lang = normalize_lang(document.get("language")) or default_lang
    return [
        _json_entry(item, index, source=source, location=location, default_lang=feed_lang)
        for index, item in enumerate(document["items"], 1)
    ]


def _json_entry(
    item: object, index: int, *, source: str, location: str, default_lang: str
) -> Page | Skipped:
    if not isinstance(item, dict):
        return Skipped(source=source, path=f"entry {index}", reason="entry is not an object")
    raw_id = item.get("id")
    link = _entry_url(_joined(location, _text(item.get("url"))), location)
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)  # JSON Feed 1.0 allowed numbers
    key = _text(raw_id) or link
    if not key:
        return Skipped(source=source, path=f"entry {index}", reason="entry has no id or url")
    title = _text(item.get("title"))
    tldr = normalize_paragraphs(_text(item.get("summary")) or "")
    if not tldr:
        tldr = _first_paragraph(normalize_paragraphs(_text(item.get("content_text")) or ""))
    if not tldr:
        tldr = _first_paragraph(html_to_text(_text(item.get("content_html")) or ""))
    tags = item.get("tags")
    arxiv, doi = papers.from_links([link or "", key, _text(item.get("external_url")) or ""])
    doi = papers.doi(_text(item.get("doi"))) or doi
    return Page(
        source=source,
        key=key,
        texts=(
            PageText(
                lang=normalize_lang(item.get("language")) or default_lang,
                title=" ".join(title.split()) if title else link or key,
                tldr=tldr,
            ),
        ),
        tags=_feed_tags(tags if isinstance(tags, list) else []),
        url=link or (key if key.startswith(("http://", "https://")) else None),
        created=_iso_date(item.get("date_published")),
        updated=_iso_date(item.get("date_modified")),
        arxiv=arxiv,
        doi=doi,
    )


def _entry_url(value: str | None, location: str) -> str | None:
    """An entry's link or id as it may be kept: a URL loses its user info; one that is the
    feed itself (``<link href=""/>`` resolves to it) names no page and is dropped."""
    if value is None:
        return None
    cleaned = without_userinfo(value)
    if cleaned.split("#", 1)[0] == location.split("#", 1)[0]:
        return None
    return cleaned


def _joined(location: str, value: str | None) -> str | None:
    """A JSON Feed item's ``url`` resolved against the feed's public URL (the spec asks
    for absolute URLs; a relative one is read as a browser would)."""
    if value is None or "://" in value:
        return value
    try:
        return urljoin(location, value)
    except ValueError:
        return None


# Where feeds carry an entry's DOI: arXiv's API (``<arxiv:doi>``), PRISM (``<prism:doi>``),
# Dublin Core (``<dc:identifier>``), or a plain ``<doi>`` element.
_DOI_FIELDS = ("arxiv_doi", "prism_doi", "dc_identifier", "doi")


def _entry_doi(entry: object) -> str | None:
    """The DOI an entry's own fields name, lowercased, or None."""
    for name in _DOI_FIELDS:
        found = papers.doi(_text(_field(entry, name)))
        if found:
            return found
    return None


def _field(entry: object, key: str) -> object:
    """``entry[key]`` as parsed. ``dict.get`` skips feedparser's aliases, which would
    present an RSS ``pubDate`` as ``updated`` too (with a DeprecationWarning)."""
    return dict.get(entry, key) if isinstance(entry, dict) else None


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _feed_tags(terms: list[Any]) -> tuple[str, ...]:
    """Categories -> tags: ``Machine Learning`` is ``machine-learning``; ``a, b`` is two."""
    candidates: list[str] = []
    for term in terms:
        if isinstance(term, str):
            candidates.extend("-".join(part.split()) for part in term.split(","))
    return normalize_tags(candidates)


def _detail_text(value: object, media_type: object, *, paragraphs: bool = False) -> str:
    """The text of a feed's text construct: markup (HTML or XHTML, as feedparser names
    either) made text; plain text as it is."""
    text = _text(value) or ""
    if isinstance(media_type, str) and "html" in media_type.lower():
        text = html_to_text(text)
    text = normalize_paragraphs(text)
    return text if paragraphs else " ".join(text.split())


def _first_paragraph(text: str) -> str:
    return text.split("\n\n", 1)[0]


def _text(value: object) -> str | None:
    """A non-blank string of the feed, stripped and made valid (:func:`valid_text`)."""
    if isinstance(value, str) and value.strip():
        return valid_text(value.strip())
    return None


def _struct_date(value: object) -> dt.date | None:
    if not isinstance(value, time.struct_time):
        return None
    try:
        return dt.date(value.tm_year, value.tm_mon, value.tm_mday)
    except ValueError:
        return None


def _iso_date(value: object) -> dt.date | None:
    """An RFC 3339 date or timestamp as a UTC date; a malformed one is left out."""
    if not isinstance(value, str):
        return None
    try:
        moment = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    return moment.date()


def short(text: str, limit: int = 120) -> str:
    """A reason's detail, cut to ``limit`` and storable (a parser may quote the input)."""
    text = valid_text(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
