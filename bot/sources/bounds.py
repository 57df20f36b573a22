"""A page's bounds: what the store can hold of a page from any source.

Every page passes :func:`bound_page` before it is recorded, and every text a source takes
from outside passes :func:`valid_text` where it is parsed, so that no page, however
hostile, costs more than itself.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace

from bot.models import Page, PageText
from bot.tags import MAX_TAG_LENGTH

# What the store can hold of a page: the column sizes of bot/store/schema.py (a test keeps
# them equal). Every page from any source passes :func:`bound_page` before it is recorded.
MAX_KEY_CHARS = 1000  # pages.key; a longer id is kept as a prefix and a hash of all of it
MAX_URL_CHARS = 2000  # pages.url; a longer link is dropped (a cut link is a broken link)
MAX_TYPE_CHARS = 64  # pages.type
MAX_ARXIV_CHARS = 64  # pages.arxiv; a longer value is no arXiv id and is dropped
MAX_DOI_CHARS = 900  # pages.paper holds ``doi:`` and the DOI; a longer one is dropped
MAX_PATH_CHARS = 1000  # source_files.path; a longer file path is skipped by the scanner
MAX_TAG_CHARS = MAX_TAG_LENGTH  # page_tags.tag; what a tag is: bot/tags.py
# page_texts.title and .tldr are TEXT: these bound what a hostile page can make us store
# and render (a digest shows one paragraph; a title is one line).
MAX_TITLE_CHARS = 1000
MAX_TLDR_CHARS = 10_000
MAX_PAGE_TAGS = 50  # issue 10: the rest of a page's tags are dropped, with a log line
_HASH_MARK = "#sha256:"
# What no column can hold: a lone surrogate is not Unicode that UTF-8 can encode, and
# PostgreSQL's text refuses NUL. Each becomes U+FFFD, as a decoder marks a bad byte.
_UNRECORDABLE_RE = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def valid_text(text: str) -> str:
    """``text`` as every store can hold it: NUL and lone surrogates become U+FFFD.

    JSON (``"\\ud800"``), XML character references and YAML escapes (``"\\0"``) can
    all produce them; a surrogate pair written as two escapes is one character already
    and stays. Every text a source takes from outside passes here where it is parsed.
    """
    return _UNRECORDABLE_RE.sub(REPLACEMENT, text)


def unrecordable(page: Page) -> bool:
    """True when some text of ``page`` still holds what no column can store.

    The last check before a page leaves its source: a text that escaped
    :func:`valid_text` costs that page alone, never the whole source.
    """
    texts = [page.key, page.url or "", page.type or "", page.arxiv or "", page.doi or ""]
    texts += page.tags
    texts += [part for text in page.texts for part in (text.lang, text.title, text.tldr)]
    return any(_UNRECORDABLE_RE.search(text) for text in texts)


def bound_key(key: str) -> str:
    """A page key that fits its column: itself, or a prefix and the SHA-256 of the whole.

    The same long key always gives the same bounded key, and two long keys that share the
    prefix still differ, so a feed entry with a 5,000-character id keeps one identity.
    """
    if len(key) <= MAX_KEY_CHARS:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return key[: MAX_KEY_CHARS - len(_HASH_MARK) - len(digest)] + _HASH_MARK + digest


def bound_page(page: Page) -> tuple[Page, int]:
    """``page`` cut to what the store holds; the one place every source's pages pass.

    Returns:
        ``(page, dropped)``: the bounded page and how many tags past
        :data:`MAX_PAGE_TAGS` were dropped (the caller logs it, naming the source).
    """
    texts = tuple(
        PageText(
            lang=t.lang,
            title=_cut(t.title, MAX_TITLE_CHARS),
            tldr=_cut(t.tldr, MAX_TLDR_CHARS),
        )
        for t in page.texts
    )
    bounded = replace(
        page,
        key=bound_key(page.key),
        texts=texts,
        tags=page.tags[:MAX_PAGE_TAGS],
        url=page.url if page.url is None or len(page.url) <= MAX_URL_CHARS else None,
        type=_cut(page.type, MAX_TYPE_CHARS) if page.type else page.type,
        arxiv=page.arxiv if page.arxiv is None or len(page.arxiv) <= MAX_ARXIV_CHARS else None,
        doi=page.doi if page.doi is None or len(page.doi) <= MAX_DOI_CHARS else None,
    )
    return bounded, max(0, len(page.tags) - MAX_PAGE_TAGS)


def too_many_tags(over: list[tuple[str, int]]) -> str | None:
    """The one log line for the pages of a scan that lost tags: ``(key, dropped)`` each."""
    if not over:
        return None
    first = over[0][0] if len(over[0][0]) <= 80 else over[0][0][:79] + "…"
    return (
        f"pages with more than {MAX_PAGE_TAGS} tags: {len(over)}, the first {MAX_PAGE_TAGS} of "
        f"each kept, {sum(n for _, n in over)} tags dropped (first page: {first})"
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
