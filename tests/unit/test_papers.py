"""A paper's identity: arXiv ids without version, DOIs case-insensitive, links, paths."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import papers
from bot.models import Page, PageText

new_ids = st.builds(
    lambda yymm, number, width: f"{yymm:04d}.{number:0{width}d}",
    st.integers(0, 9999),
    st.integers(0, 9999),
    st.sampled_from([4, 5]),
)
old_ids = st.builds(
    lambda archive, subject, number: f"{archive}{subject}/{number:07d}",
    st.sampled_from(["hep-th", "math", "cs", "astro-ph", "cond-mat", "quant-ph"]),
    st.sampled_from(["", ".CO", ".LG"]),
    st.integers(0, 9_999_999),
)
arxiv_ids = new_ids | old_ids
versions = st.one_of(st.just(""), st.integers(1, 99).map(lambda n: f"v{n}"))
doi_suffixes = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40
)
dois = st.builds(
    lambda registrant, suffix: f"10.{registrant}/{suffix}",
    st.integers(1000, 999_999_999),
    doi_suffixes,
)


def _case(text: str, flips: list[bool]) -> str:
    flips = (flips + [False] * len(text))[: len(text)]
    return "".join(c.upper() if f else c.lower() for c, f in zip(text, flips, strict=True))


@given(arxiv_ids, versions, versions)
def test_versions_of_one_arxiv_id_are_one_paper(found: str, one: str, other: str) -> None:
    expected = found.lower() if "/" in found else found
    assert papers.arxiv_id(found + one) == papers.arxiv_id(found + other) == expected
    assert papers.paper_id(arxiv=found + one, doi_value=None, key="k") == (
        papers.paper_id(arxiv=f"arXiv:{found}{other}", doi_value=None, key="other")
    )


@given(
    arxiv_ids, versions, st.sampled_from(["abs", "pdf", "html"]), st.sampled_from(["http", "https"])
)
def test_links_to_arxiv_give_the_id_without_version(
    found: str, version: str, kind: str, scheme: str
) -> None:
    link = f"{scheme}://arxiv.org/{kind}/{found}{version}"
    assert papers.arxiv_id(link) == papers.arxiv_id(found)
    assert papers.from_links(["https://blog.example.org/x", link]) == (papers.arxiv_id(found), None)


@given(
    dois, st.lists(st.booleans(), max_size=60), st.sampled_from(["", "doi:", "https://doi.org/"])
)
def test_dois_are_one_paper_whatever_their_case_or_form(
    doi: str, flips: list[bool], form: str
) -> None:
    cased = _case(doi, flips)
    # In a link the DOI is a path: percent-encoded as doi.org's own links are.
    written = form + (quote(cased, safe="/") if form.startswith("https") else cased)
    assert papers.doi(written) == doi.lower()
    assert papers.paper_id(arxiv=None, doi_value=written, key="k") == f"doi:{doi.lower()}"


@given(arxiv_ids, dois, st.text(min_size=1, max_size=50))
def test_an_arxiv_id_comes_before_a_doi_before_the_path(found: str, doi: str, key: str) -> None:
    assert papers.paper_id(arxiv=found, doi_value=doi, key=key).startswith("arxiv:")
    assert papers.paper_id(arxiv=None, doi_value=doi, key=key).startswith("doi:")
    assert papers.paper_id(arxiv=None, doi_value=None, key=key) == f"path:{key}"[:1000]


@given(st.text(max_size=80))
def test_any_text_gives_an_identity_or_none_and_never_fails(text: str) -> None:
    found = papers.arxiv_id(text)
    assert found is None or papers.arxiv_id(found) == found
    named = papers.doi(text)
    assert named is None or (named == named.lower() and named.startswith("10."))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2608.27351", "2608.27351"),
        ("2608.27351v2", "2608.27351"),
        ("arXiv:2608.27351v12", "2608.27351"),
        ("hep-th/9901001", "hep-th/9901001"),
        ("hep-th/9901001v3", "hep-th/9901001"),
        ("math.CO/0309136", "math.co/0309136"),
        ("https://arxiv.org/abs/2608.27351v2", "2608.27351"),
        ("https://arxiv.org/pdf/2608.27351v1.pdf", "2608.27351"),
        ("http://export.arxiv.org/abs/hep-th/9901001", "hep-th/9901001"),
        ("https://arxiv.org/abs/2608.27351?context=cs", "2608.27351"),
        ("https://example.org/abs/2608.27351", None),
        ("2608.273", None),
        ("", None),
        ("paper 2608.27351", None),
    ],
)
def test_arxiv_ids(text: str, expected: str | None) -> None:
    assert papers.arxiv_id(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10.1000/XYZ.123", "10.1000/xyz.123"),
        ("doi:10.1000/abc", "10.1000/abc"),
        ("https://doi.org/10.1000/ABC", "10.1000/abc"),
        ("https://dx.doi.org/10.1000/a%2Fb", "10.1000/a/b"),
        ("https://example.org/10.1000/abc", None),
        ("10.10/short", None),
        ("not a doi", None),
    ],
)
def test_dois(text: str, expected: str | None) -> None:
    assert papers.doi(text) == expected


def test_a_page_is_its_paper() -> None:
    text = (PageText(lang="en", title="T", tldr="x"),)
    wiki = Page(source="w", key="papers/2026/2608.27351-es", texts=text, arxiv="2608.27351v2")
    entry = Page(
        source="f", key="http://arxiv.org/abs/2608.27351v1", texts=text, arxiv="2608.27351"
    )
    assert wiki.paper == entry.paper == "arxiv:2608.27351"
    assert Page(source="w", key="p/x", texts=text, doi="10.1/ABCD").paper == "path:p/x"
    assert Page(source="w", key="p/x", texts=text, doi="10.1234/ABCD").paper == "doi:10.1234/abcd"
