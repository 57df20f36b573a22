"""The sample wiki a newcomer sees first (``examples/wiki``): each page's English and Korean
files carry the same sections, and every TL;DR fits a digest whole, never cut mid-sentence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.rules import digest
from bot.sources.directory import scan_directory
from tests.conftest import ROOT

WIKI = ROOT / "bot" / "sample_wiki"
PAIRS = sorted(WIKI.rglob("*.en.md"))
SCAN = scan_directory(WIKI, source=str(WIKI), base_url=None, default_lang="en", known={})


def test_the_sample_wiki_reads_cleanly() -> None:
    assert SCAN.pages and not SCAN.skipped
    assert all({text.lang for text in page.texts} == {"en", "ko"} for page in SCAN.pages)


@pytest.mark.parametrize("english", PAIRS, ids=lambda p: p.stem)
def test_both_languages_carry_the_same_sections(english: Path) -> None:
    korean = english.with_name(english.name.replace(".en.md", ".ko.md"))

    def headings(path: Path) -> list[str]:
        return re.findall(r"^(#+) ", path.read_text(encoding="utf-8"), flags=re.M)

    assert korean.exists()
    assert headings(english) == headings(korean)
    assert len(headings(english)) >= 4  # TL;DR and the sections under it


@pytest.mark.parametrize(
    ("key", "lang"),
    [(page.key, text.lang) for page in SCAN.pages for text in page.texts],
)
def test_every_tldr_fits_a_digest_whole(key: str, lang: str) -> None:
    [page] = [p for p in SCAN.pages if p.key == key]
    tldr = page.text(lang).tldr
    assert len(tldr) <= digest.TLDR_LIMIT
    assert digest.truncate(" ".join(tldr.split()), digest.TLDR_LIMIT) == " ".join(tldr.split())
    assert tldr.rstrip()[-1] in ".!?。다", "a TL;DR ends with a whole sentence"
