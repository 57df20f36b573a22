"""Wiki page files -> PageFile -> Page."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import ParseError
from bot.models import Page, PageText, normalize_lang
from bot.sources.bounds import (
    MAX_KEY_CHARS,
    MAX_PAGE_TAGS,
    MAX_TITLE_CHARS,
    MAX_TLDR_CHARS,
    MAX_TYPE_CHARS,
    MAX_URL_CHARS,
    bound_key,
    bound_page,
)
from bot.sources.pages import (
    MAX_PAGE_BYTES,
    PageFile,
    merge_translations,
    normalize_tags,
    parse_page_file,
    split_path,
    strip_inline_markdown,
)

WIKI = Path(__file__).parents[1] / "fixtures" / "wiki"
SEED_KEY = "papers/2026/2608.27351-evolution-strategies-reasoning"
SEED_TITLE = (
    "Understanding Evolution Strategies for LLM Reasoning: Broader Reasoning Coverage than GRPO"
)
SEED_TLDR_KO = (
    "Evolution Strategies — 파라미터 벡터 전체를 섭동하고, 집단을 채점하고, 점수가 좋았던 "
    "쪽으로 이동하는 방식 — 은 보통 GRPO 의 메모리 효율적이지만 더 약한 대안으로 분류된다. "
    "이 논문은 그 분류가 틀렸다고 주장한다. GRPO 는 entropy collapse 를 보이지만 ES 는 그렇지 "
    "않으며, ES 가 Pass@1 을 올리면서 동시에 더 높은 Pass@K 에 도달한다고 보고하고, 이론적 "
    "설명도 제시한다 — ES 집단 전반의 verifier-projected Jensen-Shannon diversity 가 더 높은 "
    "Pass@K 를 사들이는 요인이라는 것이다. 두 번째 발견은 점수가 아니라 메커니즘에 관한 것으로, "
    "모델 전체 파라미터가 크게 이동함에도 이득은 더 큰 크기의 업데이트로 이루어진 희소한 "
    "부분집합에서 나온다 (source)."
)
SEED_TLDR_EN = (
    "Evolution Strategies — perturbing the whole parameter vector, scoring the population, and "
    "moving toward whatever scored well — are usually classed as a memory-efficient but weaker "
    "alternative to GRPO. This paper argues that the classification is wrong. It reports that "
    "GRPO shows entropy collapse while ES does not, and that ES reaches a higher Pass@K while "
    "also raising Pass@1, and it offers a theoretical account — the verifier-projected "
    "Jensen-Shannon diversity across the ES population is what buys the higher Pass@K. The "
    "second finding is about mechanism rather than score: although the model's parameters move "
    "substantially overall, the gains come from a sparse subset of larger-magnitude updates "
    "(source)."
)
SEED_TAGS = ("rl", "reasoning", "post-training", "agentic-rl", "exploration")


def parse(text: str | bytes, path: str = "papers/2026/x-slug.md", lang: str = "en") -> PageFile:
    data = text.encode() if isinstance(text, str) else text
    return parse_page_file(data, path=path, default_lang=lang)


def page_file(key: str, lang: str, *, path: str | None = None, **fields: object) -> PageFile:
    values: dict[str, object] = {
        "title": f"{key} ({lang})",
        "tldr": f"tldr {lang}",
        "tags": (),
        "type": None,
        "arxiv": None,
        "created": None,
        "updated": None,
    }
    values.update(fields)
    return PageFile(key=key, lang=lang, path=path or f"{key}.{lang}.md", **values)  # type: ignore[arg-type]


# --- split_path -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("papers/2026/x-slug.ko.md", ("papers/2026/x-slug", "ko")),
        ("papers/2026/x-slug.en.md", ("papers/2026/x-slug", "en")),
        ("papers/2026/x.md", ("papers/2026/x", None)),
        ("papers/2026/2608.27351-evolution.md", ("papers/2026/2608.27351-evolution", None)),
        ("papers/2026/2608.27351-evolution.ko.md", ("papers/2026/2608.27351-evolution", "ko")),
        ("papers/2026/x.xx.md", ("papers/2026/x.xx", None)),  # not one of our languages
        ("papers/2026/x.KO.md", ("papers/2026/x.KO", None)),
        ("ko.md", ("ko", None)),
        ("papers/ko.md", ("papers/ko", None)),
        ("x.ko.md", ("x", "ko")),
    ],
)
def test_split_path(path: str, expected: tuple[str, str | None]) -> None:
    assert split_path(path) == expected


# --- the seed page, in both languages ---------------------------------------------------------


@pytest.mark.parametrize(("lang", "tldr"), [("ko", SEED_TLDR_KO), ("en", SEED_TLDR_EN)])
def test_seed_page(lang: str, tldr: str) -> None:
    path = f"{SEED_KEY}.{lang}.md"
    file = parse_page_file((WIKI / path).read_bytes(), path=path, default_lang="en")
    assert file == PageFile(
        key=SEED_KEY,
        lang=lang,
        title=SEED_TITLE,
        tldr=tldr,
        tags=SEED_TAGS,
        type="paper",
        arxiv="2608.27351",
        created=dt.date(2026, 8, 29),
        updated=dt.date(2026, 8, 29),
        path=path,
    )


def test_seed_translations_merge_into_one_page() -> None:
    files = [
        parse_page_file((WIKI / p).read_bytes(), path=p, default_lang="en")
        for p in (f"{SEED_KEY}.ko.md", f"{SEED_KEY}.en.md")
    ]
    [page] = merge_translations(files, source="examples/wiki", base_url="https://wiki.example.org/")
    assert page == Page(
        source="examples/wiki",
        key=SEED_KEY,
        texts=(
            PageText(lang="en", title=SEED_TITLE, tldr=SEED_TLDR_EN),
            PageText(lang="ko", title=SEED_TITLE, tldr=SEED_TLDR_KO),
        ),
        tags=SEED_TAGS,
        url=f"https://wiki.example.org/{SEED_KEY}",
        type="paper",
        arxiv="2608.27351",
        created=dt.date(2026, 8, 29),
        updated=dt.date(2026, 8, 29),
    )
    assert page.text("ko").tldr == SEED_TLDR_KO


# --- titles -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "title"),
    [
        ('---\ntitle: "From front matter"\n---\n# From heading\n', "a/x.md", "From front matter"),
        ("---\ntags: [rl]\n---\n# From *the* heading #\n\nText.\n", "a/x.md", "From the heading"),
        (
            '---\ntitle: ""\n---\n# Heading, as the title is empty\n',
            "a/x.md",
            "Heading, as the title is empty",
        ),
        ("No heading at all.\n", "papers/2026/2608.1-some-slug.md", "2608.1 some slug"),
        ("## Only a level-2 heading\n\nText.\n", "a/my_page.ko.md", "my page"),
        ('---\ntitle: "<b>Bold</b> &amp; co"\n---\n', "a/x.md", "<b>Bold</b> &amp; co"),
        ("# <i>Literal</i> HTML\n", "a/x.md", "<i>Literal</i> HTML"),
        ('---\ntitle: "  Two\\n   lines  "\n---\n', "a/x.md", "Two lines"),
        ("---\ntitle: >\n  Folded\n  title\n---\n", "a/x.md", "Folded title"),
        ("---\ntitle: 2026\n---\n", "a/x.md", "2026"),
        ("```\n# not a heading\n```\n# Real heading\n", "a/x.md", "Real heading"),
        ("#hashtag is not a heading\n\n# Heading\n", "a/x.md", "Heading"),
        ("   # Indented up to three spaces\n", "a/x.md", "Indented up to three spaces"),
        ("    # four spaces is code\n", "a/x.md", "x"),
    ],
)
def test_title(text: str, path: str, title: str) -> None:
    assert parse(text, path=path).title == title


# --- TL;DR ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "tldr"),
    [
        ("## TL;DR\n\nThe summary.\n\n## Method\n\nNot this.\n", "The summary."),
        ("Intro.\n\n## TLDR\nThe summary.\n", "The summary."),
        ("Intro.\n\n### Summary:\n\nThe summary.\n# Next\n", "The summary."),
        ("Intro.\n\n# 요약\n\n요약 문단.\n\n## 방법\n", "요약 문단."),
        ("Intro.\n\n###### tl;dr\n\nsmall.\n", "small."),
        ("Intro.\n\n## **TL;DR**\n\nbold heading.\n", "bold heading."),
        ("Intro.\n\n## TL;DR ##\n\nclosed heading.\n", "closed heading."),
        ("## Summary of results\n\nNot a TL;DR heading.\n", "Not a TL;DR heading."),
        # whitespace inside a paragraph collapses; paragraph breaks stay
        ("## TL;DR\n\n  One\n  paragraph,\twrapped.  \n\n\n Second   one.\n", None),
        # no TL;DR heading: the first paragraph that is not a heading
        ("# Title\n\nFirst paragraph\nwraps.\n\nSecond.\n", "First paragraph wraps."),
        ("```python\n# code\n```\n\nAfter the code.\n", "After the code."),
        # an empty TL;DR section falls back to the first paragraph
        ("Intro paragraph.\n\n## TL;DR\n\n## Method\n\nMore.\n", "Intro paragraph."),
        # a code block inside the TL;DR section is left out
        ("## TL;DR\n\nKept.\n\n```\nnot kept\n```\n", "Kept."),
        # inline Markdown becomes plain text
        (
            '## TL;DR\n\nSee [the paper](https://arxiv.org/abs/1 "t") and **bold**, *it*, '
            "`code`, ![img](x.png), __strong__ and _em_; snake_case and 2*3*4 stay.\n",
            "See the paper and bold, it, code, img, strong and em; snake_case and 2*3*4 stay.",
        ),
        (
            "## TL;DR\n\n[Wiki (disambiguation)](https://w.org/A_(b)) link.\n",
            "Wiki (disambiguation) link.",
        ),
        ("## TL;DR\n\n<b>HTML</b> stays & so does &amp;.\n", "<b>HTML</b> stays & so does &amp;."),
        ("# Only a heading\n", ""),
        ("", ""),
    ],
)
def test_tldr(body: str, tldr: str | None) -> None:
    expected = "One paragraph, wrapped.\n\nSecond one." if tldr is None else tldr
    assert parse("---\ntitle: T\n---\n" + body).tldr == expected


def test_tldr_stops_at_any_heading_level() -> None:
    text = "## TL;DR\n\nFirst.\n\n#### Deeper heading\n\nNot part of it.\n"
    assert parse(text).tldr == "First."


# --- front matter fields ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ("[rl, reasoning, post-training]", ("rl", "reasoning", "post-training")),
        ("[RL, Reasoning, rl, REASONING]", ("rl", "reasoning")),
        ('"rl, reasoning"', ("rl", "reasoning")),
        ('"rl reasoning,, post-training"', ("rl", "reasoning", "post-training")),
        ("rl", ("rl",)),
        ("[2026, v1.5, a_b, '#hash']", ("2026", "v1.5", "a_b", "hash")),
        ("[ok, 'not ok', '', bad/tag, {a: b}, [x], null, true, '-x']", ("ok",)),
        # letters of any script, folded as the filter side folds them (bot/tags.py)
        (
            "[강화학습, 'ünïcode', 'ＰＯＳＴ-Training', हिन्दी]",
            ("강화학습", "ünïcode", "post-training", "हिन्दी"),
        ),
        ('"강화학습, 추론"', ("강화학습", "추론")),
        (f"[{'a' * 64}, {'b' * 65}]", ("a" * 64,)),
        ("[\u212a, K]", ("k",)),  # the Kelvin sign folds to an ASCII 'k': one tag
        ("", ()),
        ("[]", ()),
    ],
)
def test_tags(tags: str, expected: tuple[str, ...]) -> None:
    assert parse(f"---\ntags: {tags}\n---\n").tags == expected


@pytest.mark.parametrize(
    ("front", "created", "updated"),
    [
        ("created: 2026-08-29\nupdated: 2026-08-30", dt.date(2026, 8, 29), dt.date(2026, 8, 30)),
        ('created: "2026-08-29"', dt.date(2026, 8, 29), None),
        ("created: 2026-08-29T10:30:00Z", dt.date(2026, 8, 29), None),
        ('updated: "2026-08-29T23:30:00+09:00"', None, dt.date(2026, 8, 29)),
        ("created:\nupdated: ''", None, None),
    ],
)
def test_dates(front: str, created: dt.date | None, updated: dt.date | None) -> None:
    file = parse(f"---\n{front}\n---\n")
    assert (file.created, file.updated) == (created, updated)


@pytest.mark.parametrize(
    ("front", "arxiv", "type_"),
    [
        ('arxiv: "2608.27351"\ntype: paper', "2608.27351", "paper"),
        ("arxiv: 2608.10100", "2608.10100", None),  # a YAML float: trailing zeros kept
        ("arxiv: 2608.27351v2", "2608.27351v2", None),
        ("arxiv:\ntype:", None, None),
    ],
)
def test_arxiv_and_type(front: str, arxiv: str | None, type_: str | None) -> None:
    file = parse(f"---\n{front}\n---\n")
    assert (file.arxiv, file.type) == (arxiv, type_)


@pytest.mark.parametrize(
    ("path", "front", "default", "lang"),
    [
        ("a/x.ko.md", "lang: en", "en", "ko"),  # the suffix wins
        ("a/x.en.md", "lang: ko", "ko", "en"),
        ("a/x.md", "lang: ko", "en", "ko"),
        ("a/x.md", "lang: ko-KR", "en", "ko"),
        ("a/x.md", "lang: EN", "ko", "en"),
        ("a/x.md", "lang: xx", "ko", "ko"),  # not ours: the default
        ("a/x.md", "lang: [ko]", "en", "en"),
        ("a/x.md", "title: T", "ko", "ko"),
    ],
)
def test_language(path: str, front: str, default: str, lang: str) -> None:
    assert parse(f"---\n{front}\n---\n", path=path, lang=default).lang == lang


def test_a_page_without_front_matter_uses_every_fallback() -> None:
    file = parse("# A heading\n\nThe first paragraph.\n", path="notes/2026/idea.md", lang="ko")
    assert file == PageFile(
        key="notes/2026/idea",
        lang="ko",
        title="A heading",
        tldr="The first paragraph.",
        tags=(),
        type=None,
        arxiv=None,
        created=None,
        updated=None,
        path="notes/2026/idea.md",
    )


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf---\ntitle: BOM\n---\nText.\n",
        b"---\r\ntitle: BOM\r\n---\r\nText.\r\n",
        b"---  \ntitle: BOM\n...\nText.\n",
    ],
)
def test_bom_crlf_and_yaml_document_end(data: bytes) -> None:
    file = parse(data)
    assert (file.title, file.tldr) == ("BOM", "Text.")


def test_a_thematic_break_is_not_front_matter() -> None:
    file = parse("----\ntitle: no\n----\nText.\n")
    assert file.title == "x slug"


# --- malformed files --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"---\ntitle: [unclosed\n---\n", "bad YAML in front matter (line 3)"),
        (b"---\ntitle: a: b: c\n---\n", "bad YAML in front matter (line 2)"),
        (b"---\n\tbad: tab\n---\n", "bad YAML in front matter"),
        (b"---\ntags: 5\n---\n", "tags must be a list or a comma-separated string"),
        (b"---\ntags: {rl: 1}\n---\n", "tags must be a list or a comma-separated string"),
        (b"---\ntitle: {a: 1}\n---\n", "title must be text"),
        (b"---\n- a\n- b\n---\n", "front matter is not a mapping"),
        (b"---\njust text\n---\n", "front matter is not a mapping"),
        (b"---\ntitle: x\n", "front matter has no closing '---' line"),
        (b"---", "front matter has no closing '---' line"),
        (b"---\ncreated: 2026-02-30\n---\n", "bad value in front matter: day is out of range"),
        (b"---\ncreated: 2026-13-45\n---\n", "bad value in front matter"),
        (b"---\ncreated: '29/08/2026'\n---\n", "created is not a date: '29/08/2026'"),
        (b"---\nupdated: 20260829\n---\n", "updated is not a date"),
        (b"---\nupdated: [2026-08-29]\n---\n", "updated is not a date"),
        (b"---\nt: " + b"[" * 5000 + b"\n---\n", "bad YAML in front matter"),
        (b"\xff\xfe# title\n", "not valid UTF-8 (byte 0)"),
        (b"# caf\xc3 \n", "not valid UTF-8 (byte 5)"),
        (b"", "empty file"),
        (b"  \n\t\r\n", "empty file"),
        (b"\xef\xbb\xbf\n", "empty file"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file (contains NUL bytes)"),
        (b"# UTF-16?\x00", "binary file (contains NUL bytes)"),
        (b"# big\n\n" + b"x" * (2 * 1024 * 1024), "file larger than 1 MB"),
        (b"a" * (MAX_PAGE_BYTES + 1), "file larger than 1 MB"),
    ],
)
def test_malformed_files_raise_parse_error(data: bytes, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(data)
    assert caught.value.reason.startswith(reason)
    assert len(caught.value.reason) <= 120


def test_a_page_just_under_the_cap_parses() -> None:
    data = b"# Big\n\n" + b"word " * ((MAX_PAGE_BYTES - 10) // 5)
    assert len(data) <= MAX_PAGE_BYTES
    assert parse(data).title == "Big"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048))
def test_any_bytes_raise_nothing_but_parse_error(data: bytes) -> None:
    try:
        file = parse(data)
    except ParseError as exc:
        assert exc.reason
    else:
        assert isinstance(file.title, str) and file.title
        assert all(tag == tag.lower() for tag in file.tags)


_YAML_TOKENS = [
    *"abc:-[]{}'\"#&*!|>%@`,? \n\t0129.T+Z\\",
    *("tags: ", "title: ", "created: ", "updated: ", "lang: ", "arxiv: ", "\n- ", "<<: "),
    *("2026-08-29", "2026-13-45", "1e999", "9" * 5000, "!!binary ", "!!python/object:os.system "),
    *("!!timestamp ", "!!int ", "!!float ", "!!set ", "!!omap ", "&a ", "*a", "null", "~", "yes"),
]
_yamlish = st.lists(st.sampled_from(_YAML_TOKENS), max_size=40).map("".join)


@settings(max_examples=500, deadline=None)
@given(front=_yamlish, body=st.text(max_size=300))
def test_any_front_matter_raises_nothing_but_parse_error(front: str, body: str) -> None:
    try:
        parse(f"---\n{front}\n---\n{body}")
    except ParseError as exc:
        assert exc.reason


# --- helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "lang"),
    [("ko", "ko"), ("ko-KR", "ko"), ("en_GB", "en"), (" EN-us ", "en"), ("xx", None), (1, None)],
)
def test_normalize_lang(value: object, lang: str | None) -> None:
    assert normalize_lang(value) == lang


def test_normalize_tags_keeps_first_occurrence_order() -> None:
    assert normalize_tags(["B", "a", "b", "A", "c"]) == ("b", "a", "c")


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("[a](b)", "a"),
        ("[a]", "[a]"),
        ("**a** and **", "a and **"),
        ("* a list marker", "* a list marker"),
        ("x * y * z", "x * y * z"),
        ("`a*b*c`", "a*b*c"),
    ],
)
def test_strip_inline_markdown(text: str, plain: str) -> None:
    assert strip_inline_markdown(text) == plain


@pytest.mark.parametrize(
    "unit", ["[a](", "[a](x ", "![", "**a", "*a ", "__a ", "_a ", "`a", "[" * 3 + "](" + "x" * 50]
)
def test_strip_inline_markdown_stays_fast_on_hostile_text(unit: str) -> None:
    text = unit * (200_000 // len(unit))
    started = time.perf_counter()
    strip_inline_markdown(text)
    assert time.perf_counter() - started < 2.0  # bounded patterns; a quadratic one takes minutes


# --- merge_translations -----------------------------------------------------------------------


def test_merge_orders_texts_en_then_ko_and_unions_tags() -> None:
    ko = page_file("p/x", "ko", tags=("rl", "rlhf"), type="paper", created=dt.date(2026, 1, 1))
    en = page_file(
        "p/x", "en", tags=("reasoning", "rl"), arxiv="2601.1", updated=dt.date(2026, 1, 2)
    )
    [page] = merge_translations([ko, en], source="s", base_url=None)
    assert page.languages == ("en", "ko")
    assert page.tags == ("reasoning", "rl", "rlhf")
    assert (page.type, page.arxiv) == ("paper", "2601.1")
    assert (page.created, page.updated) == (dt.date(2026, 1, 1), dt.date(2026, 1, 2))
    assert page.url is None


def test_merge_takes_fields_from_the_earlier_language() -> None:
    ko = page_file("p/x", "ko", type="ko-type", updated=dt.date(2026, 2, 2))
    en = page_file("p/x", "en", type="en-type", updated=dt.date(2026, 1, 1))
    [page] = merge_translations([ko, en], source="s", base_url=None)
    assert (page.type, page.updated) == ("en-type", dt.date(2026, 1, 1))


@pytest.mark.parametrize("reverse", [False, True])
def test_merge_prefers_the_file_with_the_language_suffix(reverse: bool) -> None:
    plain = page_file("p/x", "ko", path="p/x.md", title="plain")
    suffixed = page_file("p/x", "ko", path="p/x.ko.md", title="suffixed")
    files = [suffixed, plain] if reverse else [plain, suffixed]
    [page] = merge_translations(files, source="s", base_url=None)
    assert page.texts == (PageText(lang="ko", title="suffixed", tldr="tldr ko"),)


def test_merge_keeps_distinct_keys_apart_in_first_seen_order() -> None:
    files = [page_file("b", "en"), page_file("a", "ko"), page_file("b", "ko")]
    pages = merge_translations(files, source="s", base_url=None)
    assert [(p.key, p.languages) for p in pages] == [("b", ("en", "ko")), ("a", ("ko",))]


@pytest.mark.parametrize(
    ("base_url", "key", "url"),
    [
        (
            "https://wiki.example.org/",
            "papers/2026/x-slug",
            "https://wiki.example.org/papers/2026/x-slug",
        ),
        (
            "https://wiki.example.org",
            "papers/2026/x-slug",
            "https://wiki.example.org/papers/2026/x-slug",
        ),
        ("https://example.org/wiki/", "a/b", "https://example.org/wiki/a/b"),
        ("https://example.org/wiki", "a/b", "https://example.org/wiki/a/b"),
        (
            "https://example.org/",
            "notes/한글 노트",
            "https://example.org/notes/%ED%95%9C%EA%B8%80%20%EB%85%B8%ED%8A%B8",
        ),
        (None, "a/b", None),
    ],
)
def test_merge_builds_urls(base_url: str | None, key: str, url: str | None) -> None:
    [page] = merge_translations([page_file(key, "en")], source="s", base_url=base_url)
    assert page.url == url


# --- bounds: every field fits its column -----------------------------------------------------


def test_the_bounds_are_the_columns_sizes() -> None:
    from bot.sources import bounds
    from bot.store import schema

    assert schema.pages.c.key.type.length == bounds.MAX_KEY_CHARS
    assert schema.pages.c.url.type.length == bounds.MAX_URL_CHARS
    assert schema.pages.c.type.type.length == bounds.MAX_TYPE_CHARS
    assert schema.pages.c.arxiv.type.length == bounds.MAX_ARXIV_CHARS
    assert schema.page_tags.c.tag.type.length == bounds.MAX_TAG_CHARS
    assert schema.source_files.c.path.type.length == bounds.MAX_PATH_CHARS


def _page(**fields: object) -> Page:
    values: dict[str, object] = {
        "source": "wiki",
        "key": "papers/2026/x",
        "texts": (PageText(lang="en", title="T", tldr="S"),),
    }
    values.update(fields)
    return Page(**values)  # type: ignore[arg-type]


def test_a_page_within_bounds_is_unchanged() -> None:
    page = _page(tags=("rl",), url="https://w/x", type="paper", arxiv="2608.27351")
    assert bound_page(page) == (page, 0)


def test_a_long_id_becomes_a_stable_hash_that_fits() -> None:
    long_id = "urn:entry:" + "x" * 5000
    bounded, _ = bound_page(_page(key=long_id))
    assert len(bounded.key) == MAX_KEY_CHARS
    assert bounded.key.startswith("urn:entry:xxx")
    assert bound_key(long_id) == bounded.key  # the same id, the same key, every poll
    assert bound_key(long_id + "y") != bounded.key  # same prefix, another entry
    assert bound_key("k" * MAX_KEY_CHARS) == "k" * MAX_KEY_CHARS


def test_oversized_fields_are_cut_or_dropped() -> None:
    page = _page(
        texts=(PageText(lang="en", title="t" * 5000, tldr="s" * 50_000),),
        tags=tuple(f"tag{i}" for i in range(10_000)),
        url="https://w/" + "u" * 3000,
        type="p" * 65,
        arxiv="2608." + "9" * 100,
    )
    bounded, dropped = bound_page(page)
    assert dropped == 10_000 - MAX_PAGE_TAGS
    assert bounded.tags == tuple(f"tag{i}" for i in range(MAX_PAGE_TAGS))
    assert len(bounded.texts[0].title) == MAX_TITLE_CHARS
    assert len(bounded.texts[0].tldr) == MAX_TLDR_CHARS
    assert bounded.texts[0].title.endswith("…")
    assert bounded.url is None  # a cut link would be a broken one
    assert bounded.type == "p" * (MAX_TYPE_CHARS - 1) + "…"
    assert bounded.arxiv is None


@given(
    key=st.text(max_size=3000),
    title=st.text(max_size=3000),
    kind=st.none() | st.text(max_size=200),
    url=st.none() | st.text(max_size=2500),
)
@settings(max_examples=60, deadline=None)
def test_bound_page_always_fits_the_columns(
    key: str, title: str, kind: str | None, url: str | None
) -> None:
    bounded, _ = bound_page(
        _page(key=key, texts=(PageText(lang="en", title=title, tldr=title),), type=kind, url=url)
    )
    assert len(bounded.key) <= MAX_KEY_CHARS
    assert bounded.type is None or len(bounded.type) <= MAX_TYPE_CHARS
    assert bounded.url is None or len(bounded.url) <= MAX_URL_CHARS
    assert len(bounded.texts[0].title) <= MAX_TITLE_CHARS
