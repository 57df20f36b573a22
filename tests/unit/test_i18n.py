"""The message catalogues as a whole, read from their files (``bot/i18n/locales/*.json``), so
a message a translator adds is held to the same rules as the rest.

Korean: rendered with sample values for every placeholder, no message puts a space before
a particle (``/resume 을``, ``09:00 (UTC) 에``, ``1 부터``), none writes a paired particle
(``을(를)``, ``은(는)``, ``(으)로``), and every message keeps to the glossary's terms.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import string
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import i18n
from bot.i18n import GLOSSARY_KO_AVOID, clean, negotiate, t, tn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import i18n_export

LOCALES = Path(__file__).resolve().parents[2] / "bot" / "i18n" / "locales"


def read_catalogue(lang: str) -> dict[str, str]:
    """``LOCALES/<lang>.json`` with every form of a plural message as a message of its own
    (``render.pages[other]``)."""
    data = json.loads((LOCALES / f"{lang}.json").read_text(encoding="utf-8"))
    flat: dict[str, str] = {}
    for key, message in data.items():
        if isinstance(message, dict):
            flat.update({f"{key}[{form}]": text for form, text in message.items()})
        else:
            flat[key] = message
    return flat


CATALOGUE = {path.stem: read_catalogue(path.stem) for path in sorted(LOCALES.glob("*.json"))}

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
        if key in i18n_export.DATE_KEYS:
            continue
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        out[key] = template.format(**{name: SAMPLES.get(name, "rl") for name in names})
    return out


KOREAN = rendered_korean()


def test_every_message_exists_in_both_languages_with_the_same_placeholders() -> None:
    """The catalogue check (``scripts/i18n_export.py --check``): the same keys and
    placeholders in every language, the plural forms CLDR gives each."""
    english, korean = CATALOGUE["en"], CATALOGUE["ko"]
    only_english = {k for k in english.keys() - korean.keys() if not k.startswith(("cli.", "log."))}
    assert {k for k in only_english if "[" not in k} == set()
    assert {k for k in korean.keys() - english.keys() if "[" not in k} == set()
    assert i18n_export.problems(i18n_export.read(LOCALES)) == []


def test_the_languages_are_the_files() -> None:
    assert list(i18n.LANGUAGES) == [
        "en",
        *sorted(p.stem for p in LOCALES.glob("*.json") if p.stem != "en"),
    ]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda ko: ko.update({"cmd.nothing": "x"}), "ko.json: cmd.nothing is not in en.json"),
        (
            lambda ko: ko.update({"time.set": "{time}"}),
            "ko.json: time.set: placeholders ['time'], English has ['time', 'timezone']",
        ),
        (
            lambda ko: ko.update({"render.pages": {"one": "{count}", "other": "{count}"}}),
            "ko.json: render.pages: plural forms ['one', 'other'], CLDR has ['other']",
        ),
        (
            lambda ko: ko.update({"render.pages": {"other": "{pages}"}}),
            "ko.json: render.pages[other]: placeholders ['pages'], want ['count']",
        ),
        (lambda ko: ko.update({"cmd.help": "{"}), "ko.json: cmd.help: Single '{'"),
        (
            lambda ko: ko.update({"render.date_format": "{day}.{month}"}),
            "ko.json: render.date_format: not a date",
        ),
    ],
)
def test_the_check_catches_what_it_is_for(change: object, problem: str) -> None:
    catalogues = i18n_export.read(LOCALES)
    change(catalogues["ko"])  # type: ignore[operator]
    found = i18n_export.problems(catalogues)
    assert found and found[0].startswith(problem), found


def test_the_check_script_passes() -> None:
    assert i18n_export.main(["--check"]) == 0


def test_korean_is_complete() -> None:
    """Korean is a language the project maintains whole: every message of English's."""
    assert i18n_export.missing(i18n_export.read(LOCALES))["ko"] == []


def test_a_partial_catalogue_is_a_language_with_its_gaps_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A language is one file, however few messages it has yet: the check passes, the
    coverage report lists what it lacks, and the bot speaks it with English for the rest."""
    catalogues = i18n_export.read(LOCALES)
    catalogues["xx"] = {"cmd.help": "XX:"}
    catalogues["ko"].pop("cmd.help")
    assert i18n_export.problems(catalogues) == []
    lacking = i18n_export.missing(catalogues)
    assert lacking["ko"] == ["cmd.help"]
    assert "cmd.help" not in lacking["xx"] and "cmd.greeting" in lacking["xx"]
    assert not any(key.startswith(("cli.", "log.")) for key in lacking["xx"])
    lines = i18n_export.coverage_lines(catalogues, keys=True)
    total = len(lacking["xx"]) + 1
    assert f"xx: 1 of {total} messages" in lines and "  cmd.greeting" in lines
    i18n.add_language("xx", {"cmd.help": "XX:"})
    try:
        assert t("xx", "cmd.help") == "XX:"
        assert t("xx", "cmd.greeting") == t("en", "cmd.greeting")
        assert i18n.has("cmd.greeting") and not i18n.has("cmd.nothing")
    finally:
        i18n.remove_language("xx")


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


def test_every_plural_message_has_the_forms_of_cldr() -> None:
    for lang, messages in CATALOGUE.items():
        for key in messages:
            stem, _, form = key.partition("[")
            if form:
                assert f"{stem}[other]" in messages, (lang, key)


@pytest.mark.parametrize(
    ("lang", "count", "category"),
    [
        ("en", 1, "one"),
        ("en", 0, "other"),
        ("en", 2, "other"),
        ("ko", 1, "other"),
        ("ru", 1, "one"),
        ("ru", 3, "few"),
        ("ru", 5, "many"),
        ("ar", 0, "zero"),
        ("zz", 1, "one"),
    ],  # a language CLDR does not know: the source language's rules
)
def test_plural_categories_are_cldr_s(lang: str, count: int, category: str) -> None:
    assert i18n.plural_category(lang, count) == category


def test_exact_forms_come_before_the_category() -> None:
    assert tn("en", "admin.broadcast.skipped", 0) == "no chat is paused or inactive"
    assert tn("en", "admin.broadcast.skipped", 1) == "1 paused or inactive chat is skipped"
    assert "하나 더" in tn("ko", "console.buttons_gone", 1, number=2)
    assert "2개 더" in tn("ko", "console.buttons_gone", 2, number=2)


@pytest.mark.parametrize(
    ("locale", "default", "lang"),
    [
        ("ko", None, "ko"),
        ("ko-KR", None, "ko"),  # Slack's locale
        ("ko_KR", None, "ko"),
        ("KO", None, "ko"),
        (" en-US ", "ko", "en"),  # Telegram's language_code may carry a region
        ("fr", "ko", "ko"),  # a language the bot does not speak: the operator's default
        ("kok", None, "en"),  # Konkani, not Korean
        ("", "ko", "ko"),
        (None, "ko", "ko"),
        (None, None, "en"),
        (None, "xx", "en"),  # a default the catalogues do not have: the source language
    ],
)
def test_negotiate(locale: str | None, default: str | None, lang: str) -> None:
    assert negotiate(locale, default=default) == lang


def test_a_language_added_is_spoken_everywhere_at_once() -> None:
    from bot.models import LANGUAGES

    before = " | ".join(i18n.LANGUAGES)  # en | ko, and any other catalogue shipped
    assert before.startswith("en | ") and "ko" in i18n.LANGUAGES
    i18n.add_language("xx-test", {"cmd.help": "XX:"})
    try:
        assert "xx-test" in LANGUAGES and "xx-test" in i18n.LANGUAGES
        assert negotiate("XX_test") == "xx-test"
        assert t("xx-test", "cmd.help") == "XX:"
        assert t("xx-test", "cmd.admins_only") == t("en", "cmd.admins_only")  # falls back
        assert f"/lang {before} | xx-test" in t("en", "lang.usage", value="q", p="/")
    finally:
        i18n.remove_language("xx-test")
    assert "xx-test" not in LANGUAGES
    assert t("en", "line.lang", p="/").startswith(f"/lang {before} — ")


@pytest.mark.parametrize(
    ("lang", "name"),
    [("en", "English"), ("ko", "Korean")],
)
def test_language_names_are_cldr_s(lang: str, name: str) -> None:
    assert i18n.language_name(lang, "en") == name
    assert i18n.language_name("en", "ko") == "영어"
    assert i18n.language_name("ko", "ko") == "한국어"


def test_dates_use_cldr_month_names() -> None:
    assert i18n.format_date("en", dt.date(2026, 3, 9)) == "9 Mar 2026"
    assert i18n.format_date("ko", dt.date(2026, 3, 9)) == "2026년 3월 9일"


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
