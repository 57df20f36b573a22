"""The documentation site as ``make docs`` builds it: one site per language, the Korean
pages under ``/ko/`` with Korean navigation, search and labels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return out


def _page(site: Path, src: Path) -> str:
    relative = src.relative_to(DOCS).with_suffix("")
    built = (
        site / relative / "index.html"
        if relative.name != "index"
        else site / relative.parent / "index.html"
    )
    return built.read_text(encoding="utf-8")


@pytest.mark.timeout(300)
def test_every_korean_page_is_a_korean_page(site: Path) -> None:
    korean = sorted((DOCS / "ko").glob("*.md"))
    assert {p.stem for p in korean} >= {"index", "getting-started", "commands"}
    for src in korean:
        html = _page(site, src)
        assert '<html lang="ko"' in html, src
        assert 'placeholder="검색"' in html  # the search box
        assert 'aria-label="목차"' in html  # the table of contents
        assert (
            "시작하기" in html and "채팅 명령어" in html and "영어 문서" in html
        )  # the navigation
    # Pages not translated yet are part of the Korean site, in English, under Korean labels.
    telegram = (site / "ko" / "telegram" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="ko"' in telegram and 'placeholder="검색"' in telegram


@pytest.mark.timeout(300)
def test_the_english_site_stays_english_with_a_way_to_the_korean_one(site: Path) -> None:
    for src in sorted(DOCS.glob("*.md")):
        html = _page(site, src)
        assert '<html lang="en"' in html, src
        assert 'placeholder="Search"' in html
        assert 'hreflang="ko"' in html  # the language menu
    assert not (site / "ko" / "ko").exists()
