"""pip's URL form of a git source, over the whole input space: whatever the text, the
parser refuses it with a ValueError or returns parts that git can only read as meant
(a branch or tag name, a plain folder path), and well-formed parts come back as written."""

from __future__ import annotations

import subprocess
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.rules.giturl import parse_git_url, valid_ref

NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
REF = st.lists(NAME, min_size=1, max_size=4).map("/".join).filter(lambda r: r[0] != "-")
FOLDER = st.lists(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), min_size=1)
    .filter(lambda p: p not in (".", "..") and "/" not in p and not set(p) & set("*?[\\"))
    .filter(lambda p: not p.startswith(":")),
    min_size=1,
    max_size=3,
).map("/".join)
ANY = st.one_of(
    st.text(max_size=80),
    st.builds(
        lambda scheme, rest: f"{scheme}://{rest}",
        st.sampled_from(["git+https", "git+ssh", "git+file", "GIT+HTTP", "git"]),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=80),
    ),
)


@given(ref=REF, folder=FOLDER)
def test_well_formed_parts_come_back_as_written(ref: str, folder: str) -> None:
    url = parse_git_url(
        f"git+https://token@host/org/wiki.git@{ref}#subdirectory={quote(folder, safe='/')}"
    )
    assert (url.remote, url.ref, url.subdirectory) == (
        "https://token@host/org/wiki.git",
        ref,
        folder,
    )


@given(source=ANY)
def test_any_text_is_refused_or_parsed_into_safe_parts(source: str) -> None:
    try:
        url = parse_git_url(source)
    except ValueError:
        return
    assert url.ref is None or valid_ref(url.ref)
    for text in (url.remote, url.subdirectory, url.ref or ""):
        assert not any(ord(c) < 0x20 or c == "\x7f" for c in text)
    assert not url.subdirectory.startswith((":", "/"))
    assert not set(url.subdirectory) & set("*?[\\")
    assert ".." not in url.subdirectory.split("/")


@settings(max_examples=150, deadline=None)
@given(ref=st.text(alphabet=st.characters(codec="ascii"), min_size=1, max_size=20))
def test_a_ref_taken_is_one_git_takes(ref: str) -> None:
    if not valid_ref(ref):
        return
    checked = subprocess.run(
        ["git", "check-ref-format", f"refs/heads/{ref}"], capture_output=True, check=False
    )
    assert checked.returncode == 0, ref
