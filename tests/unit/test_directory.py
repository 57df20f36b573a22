"""Directory scans: what is parsed, what is reused, what is reported."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.errors import SourceError
from bot.models import FileStamp, Skipped
from bot.sources import directory
from bot.sources.bounds import MAX_PAGE_TAGS, MAX_PATH_CHARS, MAX_TYPE_CHARS
from bot.sources.directory import DirectoryScan, scan_directory

WIKI = Path(__file__).parents[1] / "fixtures" / "wiki"
SEED_KEY = "papers/2026/2608.27351-evolution-strategies-reasoning"


def page(title: str, tldr: str = "The summary.", *, lang: str | None = None, **front: str) -> str:
    lines = [f'title: "{title}"', *(f"{k}: {v}" for k, v in front.items())]
    if lang:
        lines.append(f"lang: {lang}")
    return "---\n" + "\n".join(lines) + f"\n---\n\n## TL;DR\n\n{tldr}\n"


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def scan(
    root: Path,
    known: Mapping[str, FileStamp] | None = None,
    *,
    base_url: str | None = None,
    threads_from: int = directory.READ_THREADS_FROM,
) -> DirectoryScan:
    return scan_directory(
        root,
        source="wiki",
        base_url=base_url,
        default_lang="en",
        known=known or {},
        threads_from=threads_from,
    )


def bump_mtime(path: Path) -> None:
    """Move the modification time forward, so the change is seen on any file system."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_the_fixture_wiki_is_one_page_in_two_languages() -> None:
    result = scan(WIKI, base_url="https://wiki.example.org")
    assert [p.key for p in result.pages] == [SEED_KEY]
    assert result.pages[0].languages == ("en", "ko")
    assert result.pages[0].url == f"https://wiki.example.org/{SEED_KEY}"
    assert result.present_keys == {SEED_KEY}
    assert set(result.stamps) == {f"{SEED_KEY}.en.md", f"{SEED_KEY}.ko.md"}
    assert result.skipped == []


def test_translations_group_into_one_page(tmp_path: Path) -> None:
    write(tmp_path, "papers/2026/a.en.md", page("A", tags="[rl]"))
    write(tmp_path, "papers/2026/a.ko.md", page("에이", tags="[rl, 강화]"))
    write(tmp_path, "papers/2026/b.md", page("B (ko)", lang="ko"))
    write(tmp_path, "papers/2026/b.en.md", page("B (en)"))
    result = scan(tmp_path)
    assert [(p.key, p.languages) for p in result.pages] == [
        ("papers/2026/a", ("en", "ko")),
        ("papers/2026/b", ("en", "ko")),
    ]
    assert result.pages[0].tags == ("rl", "강화")  # the union, Korean tags kept (bot/tags.py)
    assert result.present_keys == {"papers/2026/a", "papers/2026/b"}
    assert len(result.stamps) == 4


def test_unchanged_rescan_returns_no_pages(tmp_path: Path) -> None:
    write(tmp_path, "a.md", page("A"))
    write(tmp_path, "sub/b.ko.md", page("B"))
    first = scan(tmp_path)
    again = scan(tmp_path, first.stamps)
    assert again.pages == []
    assert again.stamps == first.stamps
    assert again.present_keys == {"a", "sub/b"}


def test_unchanged_rescan_reads_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "a.md", page("A"))
    first = scan(tmp_path)

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged file was parsed")

    monkeypatch.setattr(directory, "parse_page_file", fail)
    assert scan(tmp_path, first.stamps).pages == []


def test_a_touched_file_with_the_same_content_returns_its_page(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", page("A"))
    first = scan(tmp_path)
    bump_mtime(path)
    again = scan(tmp_path, first.stamps)
    assert [p.key for p in again.pages] == ["a"]
    assert again.pages == first.pages  # same fingerprint: the poll decides it is not updated


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", page("A", "Old summary."))
    first = scan(tmp_path)
    path.write_text(page("A", "A new, longer summary."), encoding="utf-8")
    bump_mtime(path)
    [changed] = scan(tmp_path, first.stamps).pages
    assert changed.texts[0].tldr == "A new, longer summary."
    assert changed.fingerprint != first.pages[0].fingerprint


def test_a_translation_added_later_brings_the_whole_page_back(tmp_path: Path) -> None:
    write(tmp_path, "p/x.ko.md", page("엑스", "한국어 요약.", updated="2026-08-29"))
    first = scan(tmp_path)
    assert first.pages[0].languages == ("ko",)
    write(tmp_path, "p/x.en.md", page("X", "English summary."))
    again = scan(tmp_path, first.stamps)
    [merged] = again.pages
    assert merged.languages == ("en", "ko")
    assert merged.text("ko").tldr == "한국어 요약."  # the unchanged sibling was read again
    assert merged.updated is not None


def test_a_deleted_file_drops_its_key(tmp_path: Path) -> None:
    write(tmp_path, "a.md", page("A"))
    gone = write(tmp_path, "b.md", page("B"))
    first = scan(tmp_path)
    gone.unlink()
    again = scan(tmp_path, first.stamps)
    assert again.present_keys == {"a"}
    assert set(again.stamps) == {"a.md"}
    assert again.pages == []


def test_a_deleted_translation_returns_the_rest_of_the_page(tmp_path: Path) -> None:
    write(tmp_path, "p/x.en.md", page("X"))
    gone = write(tmp_path, "p/x.ko.md", page("엑스"))
    first = scan(tmp_path)
    gone.unlink()
    [rest] = scan(tmp_path, first.stamps).pages
    assert rest.languages == ("en",)


def test_a_failing_file_is_skipped_and_the_scan_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path, "good.md", page("Good"))
    write(tmp_path, "bad/yaml.md", "---\ntitle: [unclosed\n---\n")
    write(tmp_path, "bad/empty.md", "")
    write(tmp_path, "bad/binary.md", b"\x00\x01\x02")
    write(tmp_path, "bad/latin1.md", "# café".encode("latin-1"))
    write(tmp_path, "bad/huge.md", b"# huge\n\n" + b"x" * (2 * 1024 * 1024))
    with caplog.at_level(logging.WARNING, logger="bot.sources"):
        result = scan(tmp_path)
    assert [p.key for p in result.pages] == ["good"]
    assert [(s.source, s.path, s.reason[:34]) for s in result.skipped] == [
        ("wiki", "bad/binary.md", "binary file (contains NUL bytes)"),
        ("wiki", "bad/empty.md", "empty file"),
        ("wiki", "bad/huge.md", "file larger than 1 MB"),
        ("wiki", "bad/latin1.md", "not valid UTF-8 (byte 5)"),
        ("wiki", "bad/yaml.md", "bad YAML in front matter (line 3):"),
    ]
    assert result.present_keys == {
        "good",
        "bad/yaml",
        "bad/empty",
        "bad/binary",
        "bad/latin1",
        "bad/huge",
    }
    assert result.stamps["bad/empty.md"].error == "empty file"
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.sources"]
    assert len(lines) == 5
    assert "wiki: skipped bad/empty.md: empty file" in lines
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_known_failures_are_reported_again_without_reparsing_or_logging(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "bad.md", "")
    write(tmp_path, "good.md", page("Good"))
    first = scan(tmp_path)

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged file was parsed")

    monkeypatch.setattr(directory, "parse_page_file", fail)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="bot.sources"):
        again = scan(tmp_path, first.stamps)
    assert again.skipped == [Skipped("wiki", "bad.md", "empty file")]
    assert again.pages == []
    assert caplog.records == []


def test_a_fixed_file_leaves_the_skipped_list(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "")
    first = scan(tmp_path)
    path.write_text(page("Fixed"), encoding="utf-8")
    bump_mtime(path)
    again = scan(tmp_path, first.stamps)
    assert again.skipped == []
    assert [p.key for p in again.pages] == ["a"]
    assert again.stamps["a.md"].error is None


def test_a_failing_sibling_re_read_with_its_page_is_not_logged_twice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    en = write(tmp_path, "x.en.md", page("X"))
    write(tmp_path, "x.ko.md", "")
    first = scan(tmp_path)
    bump_mtime(en)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="bot.sources"):
        again = scan(tmp_path, first.stamps)
    assert [p.languages for p in again.pages] == [("en",)]
    assert again.skipped == [Skipped("wiki", "x.ko.md", "empty file")]
    assert caplog.records == []


def test_only_visible_markdown_files_count(tmp_path: Path) -> None:
    write(tmp_path, "a.md", page("A"))
    write(tmp_path, ".hidden.md", page("Hidden"))
    write(tmp_path, ".git/objects/x.md", page("Git"))
    write(tmp_path, "sub/.draft/y.md", page("Draft"))
    write(tmp_path, "notes.txt", "not a page")
    write(tmp_path, "README.MD", page("upper-case extension"))
    (tmp_path / "dir.md").mkdir()
    result = scan(tmp_path)
    assert set(result.stamps) == {"a.md"}


def test_symlinks_that_leave_the_root_are_ignored(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    outside = tmp_path / "outside"
    write(outside, "secret.md", page("Secret"))
    write(outside, "dir/inner.md", page("Inner"))
    write(root, "a.md", page("A"))
    (root / "escape.md").symlink_to(outside / "secret.md")
    (root / "linked-dir").symlink_to(outside / "dir", target_is_directory=True)
    (root / "alias.md").symlink_to(root / "a.md")
    (root / "dangling.md").symlink_to(tmp_path / "missing.md")
    (root / "loop").symlink_to(root, target_is_directory=True)
    result = scan(root)
    assert set(result.stamps) == {"a.md", "alias.md"}  # a link inside the root is a file
    assert result.present_keys == {"a", "alias"}


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_root_that_is_not_a_directory_fails_the_source(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "wiki"
    if kind == "file":
        root.write_text("x")
    with pytest.raises(SourceError) as caught:
        scan(root)
    assert caught.value.source == "wiki"
    assert caught.value.reason.startswith(
        "directory not found" if kind == "missing" else "not a directory"
    )


def test_an_unreadable_file_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "locked.md", page("Locked"))
    write(tmp_path, "open.md", page("Open"))
    real_open = os.open

    def guarded_open(path: str, flags: int, *args: int, **kwargs: int) -> int:
        if str(path).endswith("locked.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    # The tests run as root, whom file modes do not stop: the refusal comes from os.open.
    monkeypatch.setattr(os, "open", guarded_open)
    result = scan(tmp_path)
    assert result.skipped == [Skipped("wiki", "locked.md", "cannot read file: Permission denied")]
    assert [p.key for p in result.pages] == ["open"]
    assert result.present_keys == {"locked", "open"}


def test_many_changed_files_read_ahead_in_threads_give_the_same_scan(tmp_path: Path) -> None:
    count = directory.READ_THREADS_FROM + directory.READ_AHEAD + 10
    for n in range(count):
        write(tmp_path, f"p/{n:04d}.{'ko' if n % 2 else 'en'}.md", page(f"P{n}"))
    write(tmp_path, "p/0003.en.md", b"\x00")
    threaded = scan(tmp_path)
    serial = scan(tmp_path, threads_from=count * 10)
    assert threaded == serial
    assert len(threaded.pages) == count
    assert [s.path for s in threaded.skipped] == ["p/0003.en.md"]


_names = st.sampled_from(["a", "b", "a.en", "a.ko", "b.ko", ".h", "c.xx", "sub/a", "sub/.x/a"])
_files = st.dictionaries(
    _names.map(lambda n: n + ".md"),
    st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)),
    max_size=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=_files, second=_files)
def test_scanning_random_files_never_raises(
    first: dict[str, bytes], second: dict[str, bytes]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, data in first.items():
            write(root, rel, data)
        before = scan(root)
        for rel, data in second.items():
            write(root, rel, data)
            bump_mtime(root / rel)
        after = scan(root, before.stamps)
        assert set(after.stamps) == {
            r for r in first.keys() | second.keys() if "/." not in r and not r.startswith(".")
        }
        assert {s.path for s in after.skipped} == {
            r for r, s in after.stamps.items() if s.error is not None
        }
        assert {p.key for p in after.pages} <= after.present_keys


def test_pages_with_too_many_tags_keep_fifty_and_one_line_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tags = ", ".join(f"t{i}" for i in range(10_000))
    write(tmp_path, "many.md", page("Many", tags=f"[{tags}]"))
    write(tmp_path, "more.md", page("More", tags="[" + ", ".join(f"m{i}" for i in range(60)) + "]"))
    with caplog.at_level(logging.WARNING, logger="bot.sources"):
        result = scan(tmp_path)
    many = next(p for p in result.pages if p.key == "many")
    assert many.tags == tuple(f"t{i}" for i in range(MAX_PAGE_TAGS))
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.sources"]
    assert lines == [
        "wiki: pages with more than 50 tags: 2, the first 50 of each kept, 9960 tags dropped "
        "(first page: many)"
    ]


def test_a_long_type_is_cut_to_its_column(tmp_path: Path) -> None:
    write(tmp_path, "typed.md", page("Typed", type="x" * 65))
    (only,) = scan(tmp_path).pages
    assert only.type is not None and len(only.type) == MAX_TYPE_CHARS


def test_a_path_longer_than_its_column_is_skipped(tmp_path: Path) -> None:
    # Directory names of 200 characters, nested past 1,000 characters in all.
    deep = "/".join("d" * 200 for _ in range(5))
    write(tmp_path, f"{deep}/page.md", page("Deep"))
    write(tmp_path, "good.md", page("Good"))
    result = scan(tmp_path)
    assert [p.key for p in result.pages] == ["good"]
    (skipped,) = result.skipped
    assert skipped.reason == f"path longer than {MAX_PATH_CHARS} characters"
    assert all(len(path) <= MAX_PATH_CHARS for path in result.stamps)
