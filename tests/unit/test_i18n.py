"""The message catalogues as a whole: every area's messages, merged (``bot.i18n.CATALOGUE``),
so messages added anywhere are held to the same rules.

Korean: rendered with sample values for every placeholder, no message puts a space before
a particle (``/resume 을``, ``09:00 (UTC) 에``, ``1 부터``), none writes a paired particle
(``을(를)``, ``은(는)``, ``(으)로``), and every message keeps to the glossary's terms.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.i18n import CATALOGUE, GLOSSARY_KO_AVOID, clean, t, tn

# Placeholder values that look like what the bot substitutes; a name not listed gets "rl".
SAMPLES: dict[str, object] = {
    "p": "/",
    "count": 3,
    "reach": 3,
    "skipped": "일시 중지되었거나 비활성인 채팅 1개는 건너뜁니다",
    "sent": 2,
    "failed": 1,
    "queued": 4,
    "pending": 1,
    "total": 5,
    "new": 2,
    "id": 7,
    "index": 1,
    "last": 5,
    "number": 9,
    "hours": 3,
    "minutes": 20,
    "time": "09:00",
    "timezone": "Asia/Seoul",
    "zone": "Mars/Olympus",
    "when": "오늘 09:00",
    "wait": "3시간 20분",
    "date": "2026년 12월 3일",
    "day": 3,
    "month": "12월",
    "year": 2026,
    "tags": "rl, reasoning",
    "filter": "다음 중 하나: rl",
    "command": "frobnicate",
    "suggestion": "subscribe",
    "item": "+",
    "value": "25:00",
    "path": "data/trendbot.log",
    "lang": "fr",
    "bot": "trendbot",
}
# A particle after a space, itself followed by a space, punctuation or the end: in Korean
# a particle is written onto the word before it. "이" alone is also the demonstrative
# ("이 채팅"), so it counts only where no word follows it.
_PARTICLES = (
    "을|를|은|는|가|에|에서|에게|께|로|으로|와|과|의|도|부터|까지|만|처럼|보다|이나|나|이라는|라는"
)
_SPACE_BEFORE_PARTICLE = re.compile(
    rf"(?<=[^\s(]) (?:{_PARTICLES})(?=[\s.,:;!?)]|$)|(?<=\S) 이(?=[.,:;!?)]|$)"
)
_PAIRED = re.compile(r"[을를은는이가와과]\s*\([을를은는이가와과]\)|\((?:으|이)\)[로가]?")


def rendered_korean() -> dict[str, str]:
    out: dict[str, str] = {}
    for key, template in CATALOGUE["ko"].items():
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        out[key] = template.format(**{name: SAMPLES.get(name, "rl") for name in names})
    return out


KOREAN = rendered_korean()


def test_every_message_exists_in_both_languages_with_the_same_placeholders() -> None:
    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    english, korean = CATALOGUE["en"], CATALOGUE["ko"]
    only_english = {k for k in english.keys() - korean.keys() if not k.startswith(("cli.", "log."))}
    assert only_english == set()
    assert korean.keys() - english.keys() == set()
    for key in korean:
        assert fields(korean[key]) == fields(english[key]), key


@pytest.mark.parametrize("key", sorted(KOREAN))
def test_no_space_before_a_particle(key: str) -> None:
    text = KOREAN[key]
    found = [m.group(0) for m in _SPACE_BEFORE_PARTICLE.finditer(text)]
    assert found == [], f"{key}: a space before a particle in {text!r}"


@pytest.mark.parametrize("key", sorted(KOREAN))
def test_no_paired_particle(key: str) -> None:
    text = KOREAN[key]
    assert not _PAIRED.search(text), f"{key}: a paired particle in {text!r}"


@pytest.mark.parametrize("key", sorted(KOREAN))
def test_one_term_per_concept(key: str) -> None:
    text = KOREAN[key]
    for avoid, use in GLOSSARY_KO_AVOID.items():
        assert avoid not in text, f"{key}: write {use!r}, not {avoid!r}: {text!r}"


@pytest.mark.parametrize(
    "text",
    [
        "/resume 을 입력하세요",
        "09:00 (UTC) 에 옵니다",
        "1 부터 20 사이",
        "“x” 은(는) 태그가 아닙니다",
        "Asia/Seoul(으)로 설정",
        "rl 이.",
    ],
)
def test_the_scan_catches_what_it_is_for(text: str) -> None:
    """The rules fail on the mistakes they are for (so a passing scan means something)."""
    assert _SPACE_BEFORE_PARTICLE.search(text) or _PAIRED.search(text)


@pytest.mark.parametrize(
    "text",
    ["/resume을 입력하세요", "09:00(UTC)에 옵니다", "1부터 20 사이", "이 채팅은 구독 중입니다"],
)
def test_the_scan_passes_good_korean(text: str) -> None:
    assert not _SPACE_BEFORE_PARTICLE.search(text) and not _PAIRED.search(text)


# ---------------------------------------------------------------- plurals


@pytest.mark.parametrize(
    ("key", "one", "two"),
    [
        ("render.pages", "1 page", "2 pages"),
        (
            "digest.queued",
            "Sending your digest now (1 page).",
            "Sending your digest now (2 pages).",
        ),
        ("tags.more", "…and 1 more tag.", "…and 2 more tags."),
        (
            "cli.broadcast.reach",
            "This broadcast reaches 1 chat (x).",
            "This broadcast reaches 2 chats (x).",
        ),
    ],
)
def test_english_counts_take_the_right_form(key: str, one: str, two: str) -> None:
    assert tn("en", key, 1, skipped="x") == one
    assert tn("en", key, 2, skipped="x") == two


def test_every_plural_message_has_both_forms() -> None:
    for lang, messages in CATALOGUE.items():
        for key in messages:
            stem, _, form = key.rpartition(".")
            if form == "one":
                assert f"{stem}.other" in messages, (lang, key)


# ---------------------------------------------------------------- display spoofing

_BIDI = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]]
_ZERO_WIDTH = ["\u200b", "\u2060", "\ufeff", "\u200e", "\u200f", "\u061c"]
_FORBIDDEN = set(_BIDI + _ZERO_WIDTH)


@given(
    st.text(
        alphabet=st.sampled_from([*_BIDI, *_ZERO_WIDTH, "\u200c", "\u200d", "a", "한", "👩", " "])
    )
)
def test_clean_removes_bidi_and_zero_width_and_keeps_zwj_and_zwnj(text: str) -> None:
    cleaned = clean(text)
    assert not _FORBIDDEN & set(cleaned)
    assert cleaned == "".join(ch for ch in text if ch not in _FORBIDDEN)


@given(st.text())
def test_echoed_values_never_carry_bidi_controls(value: str) -> None:
    for lang in ("en", "ko"):
        assert not _FORBIDDEN & set(t(lang, "cmd.unknown", command=value, p="/"))
