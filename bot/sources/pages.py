"""Wiki page files -> pages: YAML front matter and Markdown, parsed without any I/O.

A directory source hands each file's bytes to :func:`parse_page_file`; the files of one
page (its translations, ``x.en.md`` and ``x.ko.md``) are then merged into one
:class:`bot.models.Page` by :func:`merge_translations`. The helpers that normalise tags,
languages and text are shared with the feed source, so a tag or a TL;DR reads the same
whichever source it came from.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import yaml

from bot.errors import ParseError
from bot.models import LANGUAGES, Page, PageText, normalize_lang
from bot.sources.bounds import valid_text
from bot.tags import normalize_tag

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

MAX_PAGE_BYTES = 1_000_000  # a page is a few KB of text; a bigger file is not a page
TLDR_HEADINGS = frozenset({"tl;dr", "tldr", "summary", "요약"})

_TAG_SPLIT_RE = re.compile(r"[,\s]+")
_CLOSING_FENCE_RE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES_RE = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")
_PARAGRAPH_BREAK_RE = re.compile(r"\n[ \t]*\n\s*")
_ARXIV_LINE_RE = re.compile(r"^arxiv[ \t]*:[ \t]*([0-9]{4}\.[0-9]{4,5}(?:v[0-9]+)?)[ \t]*$", re.M)

# Inline Markdown -> plain text, each rule with the character it needs, to skip it cheaply.
# Every repetition is bounded so that no input, however hostile, makes a substitution
# quadratic in the length of a paragraph.
_INLINE_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "](",
        re.compile(
            r"!?\[([^\[\]\n]{0,1000})\]"
            r"\([ \t]*<?[^\s()<>]{0,2000}(?:\([^\s()]{0,2000}\)[^\s()<>]{0,2000})?>?"
            r"(?:[ \t]+\"[^\"\n]{0,500}\")?[ \t]*\)"
        ),
        r"\1",
    ),
    ("**", re.compile(r"\*\*(?=\S)([^*\n]{1,1000}?)(?<=\S)\*\*"), r"\1"),
    ("__", re.compile(r"(?<!\w)__(?=\S)([^_\n]{1,1000}?)(?<=\S)__(?!\w)"), r"\1"),
    ("*", re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]{1,1000}?)(?<=[^\s*])\*(?![\w*])"), r"\1"),
    ("_", re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]{1,1000}?)(?<=[^\s_])_(?![\w_])"), r"\1"),
    ("`", re.compile(r"`([^`\n]{1,1000})`"), r"\1"),
)


@dataclass(frozen=True, slots=True)
class PageFile:
    """One file of a page: one language version, before translations are merged.

    ``key`` is the page's identity in its source (the path without language suffix and
    extension); ``path`` the file's path relative to the source root.
    """

    key: str
    lang: str
    title: str
    tldr: str
    tags: tuple[str, ...]
    type: str | None
    arxiv: str | None
    created: dt.date | None
    updated: dt.date | None
    path: str
    doi: str | None = None


def split_path(rel_path: str) -> tuple[str, str | None]:
    """Split a page file's path into the page key and the language suffix.

    Args:
        rel_path: The path relative to the source root, ``/``-separated.

    Returns:
        ``(key, lang)``: ``papers/2026/x.ko.md`` gives ``("papers/2026/x", "ko")`` and
        ``papers/2026/x.md`` gives ``("papers/2026/x", None)``. Only the languages of
        :data:`bot.models.LANGUAGES` count as a suffix.
    """
    stem = rel_path.removesuffix(".md")
    base, dot, suffix = stem.rpartition(".")
    if dot and suffix in LANGUAGES and base and not base.endswith("/"):
        return base, suffix
    return stem, None


def normalize_tags(values: Iterable[object]) -> tuple[str, ...]:
    """Valid tags of ``values``, lowercased, first occurrence kept, invalid ones dropped."""
    seen: dict[str, None] = {}
    for value in values:
        tag = normalize_tag(value)
        if tag is not None:
            seen.setdefault(tag)
    return tuple(seen)


def strip_inline_markdown(text: str) -> str:
    """Reduce links, images, bold, italic and code spans to their text.

    Anything this does not recognise stays as it is; HTML is left as literal text.
    """
    for marker, pattern, replacement in _INLINE_RULES:
        if marker in text:
            text = pattern.sub(replacement, text)
    return text


def normalize_paragraphs(text: str) -> str:
    """Strip, collapse whitespace inside each paragraph, keep paragraph breaks as ``\\n\\n``."""
    paragraphs = (" ".join(p.split()) for p in _PARAGRAPH_BREAK_RE.split(text))
    return "\n\n".join(p for p in paragraphs if p)


def parse_page_file(data: bytes, *, path: str, default_lang: str) -> PageFile:
    """Parse one wiki page file.

    Args:
        data: The file's bytes.
        path: The file's path relative to the source root (``papers/2026/x.ko.md``).
        default_lang: The language of a file with neither a language suffix nor a
            ``lang`` in its front matter.

    Returns:
        The file's page data. The title falls back to the first ``# `` heading, then to
        the file name; the TL;DR to the first paragraph, and may be empty.

    Raises:
        ParseError: The file is too large, binary, not UTF-8, empty, or its front matter
            is malformed; ``reason`` says which, in a few words.
    """
    text = _decode(data)
    raw_front, body = _split_front_matter(text)
    meta = _load_front_matter(raw_front) if raw_front is not None else {}

    key, suffix_lang = split_path(path)
    lang = suffix_lang or normalize_lang(meta.get("lang")) or default_lang
    title = _front_matter_title(meta.get("title"))
    h1, tldr = _scan_body(body, want_h1=title is None)
    title = title or h1 or _title_from_key(key)
    return PageFile(
        key=key,
        lang=lang,
        title=title,
        tldr=tldr,
        tags=_tags(meta.get("tags")),
        type=_optional_text(meta.get("type")),
        arxiv=_arxiv(meta.get("arxiv"), raw_front or ""),
        created=_date(meta.get("created"), field="created"),
        updated=_date(meta.get("updated"), field="updated"),
        path=path,
        doi=_optional_text(meta.get("doi")),
    )


def merge_translations(
    files: Iterable[PageFile], *, source: str, base_url: str | None
) -> list[Page]:
    """Group page files by key into pages, one text per language.

    Args:
        files: Parsed files, in any order.
        source: The source name recorded on each page.
        base_url: The base of page links; the key is appended to it. None gives pages
            without a link.

    Returns:
        One page per key, in order of the keys' first appearance. Texts are ordered as
        :data:`bot.models.LANGUAGES`; tags are the union in that order; type, arXiv id
        and dates come from the first language that has them. Of two files with the same
        key and language (``x.md`` with ``lang: ko`` beside ``x.ko.md``) the one with the
        language suffix wins.
    """
    groups: dict[str, dict[str, PageFile]] = {}
    for file in files:
        by_lang = groups.setdefault(file.key, {})
        current = by_lang.get(file.lang)
        if current is None or (_has_suffix(file) and not _has_suffix(current)):
            by_lang[file.lang] = file
    return [
        _merge(key, by_lang, source=source, base_url=base_url) for key, by_lang in groups.items()
    ]


def page_url(base_url: str | None, key: str) -> str | None:
    """The link to page ``key`` under ``base_url`` (percent-encoded), or None."""
    if base_url is None:
        return None
    return base_url.rstrip("/") + "/" + quote(key, safe="/")


def _merge(key: str, by_lang: Mapping[str, PageFile], *, source: str, base_url: str | None) -> Page:
    ordered = sorted(by_lang.values(), key=lambda f: _lang_rank(f.lang))
    return Page(
        source=source,
        key=key,
        texts=tuple(PageText(lang=f.lang, title=f.title, tldr=f.tldr) for f in ordered),
        tags=normalize_tags(tag for f in ordered for tag in f.tags),
        url=page_url(base_url, key),
        type=next((f.type for f in ordered if f.type), None),
        arxiv=next((f.arxiv for f in ordered if f.arxiv), None),
        created=next((f.created for f in ordered if f.created), None),
        updated=next((f.updated for f in ordered if f.updated), None),
        doi=next((f.doi for f in ordered if f.doi), None),
    )


def _lang_rank(lang: str) -> int:
    return LANGUAGES.index(lang) if lang in LANGUAGES else len(LANGUAGES)


def _has_suffix(file: PageFile) -> bool:
    return split_path(file.path)[1] is not None


def _decode(data: bytes) -> str:
    if len(data) > MAX_PAGE_BYTES:
        raise ParseError(f"file larger than {MAX_PAGE_BYTES // 1_000_000} MB")
    if b"\0" in data:
        raise ParseError("binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not valid UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise ParseError("empty file")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split_front_matter(text: str) -> tuple[str | None, str]:
    """``(front matter, body)``; front matter is None when the file does not open with one."""
    first_line, newline, rest = text.partition("\n")
    if first_line.rstrip() != "---":
        return None, text
    closing = _CLOSING_FENCE_RE.search(rest) if newline else None
    if closing is None:
        raise ParseError("front matter has no closing '---' line")
    return rest[: closing.start()], rest[closing.end() + 1 :]


def _load_front_matter(raw: str) -> Mapping[Any, Any]:
    try:
        meta = yaml.load(raw, Loader=_SafeLoader)  # a safe loader: the C one when built
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 2 if exc.problem_mark else None  # + the opening '---'
        problem = exc.problem or exc.context or "malformed"
        where = f" (line {line})" if line else ""
        raise ParseError(f"bad YAML in front matter{where}: {problem}") from None
    except yaml.YAMLError:
        raise ParseError("bad YAML in front matter") from None
    except (ValueError, OverflowError) as exc:  # a date like 2026-13-45, a huge number
        raise ParseError(f"bad value in front matter: {_short(str(exc))}") from None
    except RecursionError:
        raise ParseError("bad YAML in front matter: nested too deeply") from None
    except Exception:
        # PyYAML's constructors fail in odd ways on explicit tags over malformed scalars
        # ("!!int ''" -> IndexError, "!!timestamp x" -> AttributeError): all bad values.
        raise ParseError("bad value in front matter") from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise ParseError("front matter is not a mapping")
    return meta


def _scan_body(body: str, *, want_h1: bool) -> tuple[str | None, str]:
    """The first level-1 heading (when ``want_h1``) and the TL;DR of a Markdown body.

    Fenced code blocks are neither headings nor paragraphs. The scan stops as soon as
    everything asked for is known, which for most pages is right after the TL;DR.
    """
    h1: str | None = None
    first_paragraph: list[str] | None = None
    paragraph: list[str] = []
    tldr: list[str] | None = None  # the TL;DR section's lines
    in_tldr = False
    tldr_done = False
    fence: str | None = None

    for line in body.split("\n"):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            continue
        first = line.lstrip(" ")[:1]
        if first in ("`", "~"):
            fence_match = _FENCE_RE.match(line)
            if fence_match:
                if paragraph and first_paragraph is None:
                    first_paragraph = paragraph
                paragraph = []
                fence = fence_match.group(1)
                continue
        elif first == "#":
            heading = _HEADING_RE.fullmatch(line)
            if heading:
                if paragraph and first_paragraph is None:
                    first_paragraph = paragraph
                paragraph = []
                text = _CLOSING_HASHES_RE.sub("", heading.group(2) or "").strip()
                if in_tldr:
                    in_tldr, tldr_done = False, True
                if want_h1 and h1 is None and len(heading.group(1)) == 1 and text:
                    h1 = text
                if tldr is None and _is_tldr_heading(text):
                    tldr, in_tldr = [], True
                if tldr_done and first_paragraph is not None and (h1 is not None or not want_h1):
                    break
                continue
        if in_tldr and tldr is not None:
            tldr.append(line)
        if line.strip():
            paragraph.append(line)
        elif paragraph:
            if first_paragraph is None:
                first_paragraph = paragraph
            paragraph = []
    if paragraph and first_paragraph is None:
        first_paragraph = paragraph

    summary = normalize_paragraphs("\n".join(tldr or ()))
    if not summary and first_paragraph:
        summary = normalize_paragraphs("\n".join(first_paragraph))
    title = _one_line(strip_inline_markdown(h1)) if h1 else None
    return title or None, strip_inline_markdown(summary)


def _is_tldr_heading(text: str) -> bool:
    if len(text) > 24:  # longer than any marked-up "**TL;DR**:"; spares the regexes
        return False
    name = strip_inline_markdown(text).strip().rstrip(":：").strip().casefold()
    return name in TLDR_HEADINGS


def _front_matter_title(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict | list):
        raise ParseError("title must be text")
    return _one_line(valid_text(str(value))) or None


def _title_from_key(key: str) -> str:
    stem = key.rpartition("/")[2]
    return _one_line(stem.replace("-", " ").replace("_", " ")) or stem


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _tags(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return normalize_tags(_TAG_SPLIT_RE.split(value))
    if isinstance(value, list | tuple):
        return normalize_tags(value)
    raise ParseError("tags must be a list or a comma-separated string")


def _optional_text(value: object) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    return _one_line(valid_text(str(value))) or None


def _arxiv(value: object, raw_front: str) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        # An unquoted id (arxiv: 2608.10100) is a YAML float that lost its trailing
        # zeros; read the id back from the text.
        match = _ARXIV_LINE_RE.search(raw_front)
        if match:
            return match.group(1)
    return _optional_text(value)


def _date(value: object, *, field: str) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
        try:
            return dt.datetime.fromisoformat(text).date()
        except ValueError:
            raise ParseError(f"{field} is not a date: {_short(repr(text))}") from None
    raise ParseError(f"{field} is not a date")


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
