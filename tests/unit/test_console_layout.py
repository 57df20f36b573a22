"""The console's layout: lines wrapped to the terminal's columns (Hangul takes two), the
TL;DR indented under its title, buttons numbered."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.channels.console.chat import columns, indent_entries, numbered, wrap
from bot.models import Button

WORDS = st.text(
    alphabet=st.sampled_from(["a", "b", "한", "글", "👍", "-"]), min_size=1, max_size=30
)


@given(
    st.lists(WORDS, max_size=40),
    st.integers(min_value=40, max_value=120),
    st.sampled_from(["", "   "]),
)
def test_wrapped_lines_fit_the_terminal_and_keep_every_word(
    words: list[str], width: int, indent: str
) -> None:
    line = indent + " ".join(words)
    wrapped = wrap(line, width).split("\n")
    assert all(columns(part) <= width for part in wrapped)
    assert all(part.startswith(indent) for part in wrapped)
    assert "".join("".join(part.split()) for part in wrapped) == "".join(line.split())


@pytest.mark.parametrize(("text", "width"), [("한글", 4), ("ab", 2), ("e\u0301", 1), ("👍", 2)])
def test_columns_count_wide_and_combining_characters(text: str, width: int) -> None:
    assert columns(text) == width


def test_entries_are_indented_under_their_title() -> None:
    digest = (
        "📚 AI trends · 3 Dec 2026 · 1 page\n\nTitle\n#rl · matched: rl\nThe TL;DR.\n3 Dec 2026"
    )
    assert indent_entries(digest).split("\n\n")[1] == (
        "Title\n   #rl · matched: rl\n   The TL;DR.\n   3 Dec 2026"
    )


def test_buttons_are_numbered_across_rows() -> None:
    assert numbered([Button("Send", "a"), Button("Cancel", "b")]) == "[1 Send] [2 Cancel]"
    assert numbered([Button("✅ rl (8)", "c")], start=3) == "[3 ✅ rl (8)]"


def test_headers_and_titles_are_bold_on_a_terminal() -> None:
    from bot.channels.console.chat import BOLD, NORMAL, embolden

    digest = "Header\n\nTitle\n   #rl\n   TL;DR\n\nOther\n   tldr"
    assert embolden(digest, header=True) == (
        f"{BOLD}Header{NORMAL}\n\n{BOLD}Title{NORMAL}\n   #rl\n   TL;DR\n\n"
        f"{BOLD}Other{NORMAL}\n   tldr"
    )
    reply = "The newest 1 page:\n\nTitle\n   tldr\n\n[1 Send] [2 Cancel]"
    assert embolden(reply, header=False) == (
        f"The newest 1 page:\n\n{BOLD}Title{NORMAL}\n   tldr\n\n[1 Send] [2 Cancel]"
    )


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("/subsc", ["/subscribe"]),
        ("sub", ["subscribe"]),
        ("/t", ["/tags", "/time", "/timezone"]),
        ("/subscribe r", ["rl", "reasoning", "robotics"]),
        ("/subscribe rl -rob", ["-robotics"]),
        ("/unsubscribe +r", ["+rl", "+reasoning", "+robotics"]),
        ("/help ti", ["time", "timezone"]),
        ("/help time x", []),
        ("/latest 3", []),
    ],
)
def test_completion_of_commands_and_tags(typed: str, expected: list[str]) -> None:
    from bot.channels.console.chat import complete

    assert complete(typed, ["rl", "reasoning", "robotics", "vision"]) == expected
