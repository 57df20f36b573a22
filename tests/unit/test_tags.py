"""The one vocabulary of tags (bot/tags.py), shared by pages and filters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.i18n import negotiate
from bot.models import normalize_lang
from bot.rules import filters
from bot.tags import MAX_TAG_LENGTH, normalize_tag


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        ("rl", "rl"),
        ("#RL", "rl"),
        ("강화학습", "강화학습"),
        ("#강화학습", "강화학습"),
        ("ＰＯＳＴ-Training", "post-training"),
        ("हिन्दी", "हिन्दी"),
        (2026, "2026"),
        ("a" * MAX_TAG_LENGTH, "a" * MAX_TAG_LENGTH),
        ("a" * (MAX_TAG_LENGTH + 1), None),
        ("-x", None),
        ("bad/tag", None),
        ("not ok", None),
        ("", None),
        ("#", None),
        (True, None),
        (None, None),
        (["rl"], None),
    ],
)
def test_normalize_tag(value: object, tag: str | None) -> None:
    assert normalize_tag(value) == tag


@given(st.text(max_size=70))
def test_a_page_tag_is_a_tag_a_chat_can_subscribe_to(text: str) -> None:
    """Whatever a page may carry, a filter accepts as the same tag, and the reverse."""
    tag = normalize_tag(text)
    if tag is not None:
        assert normalize_tag(tag) == tag
        assert filters.parse_items([tag]) == (filters.FilterItem("any", tag),)
        assert filters.matches(filters.parse_filter(tag), [tag])


@pytest.mark.parametrize(
    ("code", "korean", "lang"),
    [
        ("ko", True, "ko"),
        ("ko-KR", True, "ko"),
        ("ko_KR", True, "ko"),
        ("KO", True, "ko"),
        ("en-US", False, "en"),
        ("kok", False, None),  # Konkani, not Korean
        ("", False, None),
        (None, False, None),
    ],
)
def test_is_korean(code: str | None, korean: bool, lang: str | None) -> None:
    assert (negotiate(code) == "ko") is korean
    assert normalize_lang(code) == lang
