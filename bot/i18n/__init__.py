"""Message catalogues: one JSON file per language in ``bot/i18n/locales/``.

Every user-facing text lives there, never inline. A file is named after its language
(``en.json``, ``ko.json``); the languages the bot speaks are the files there, with the
source language (:data:`SOURCE`, English) first. A file maps dotted keys (``render.header``)
to messages with ``str.format`` placeholders (``{count}``); a message that counts something
is an object of its plural forms keyed by CLDR category (``{"one": ..., "other": ...}``,
Korean has ``other`` alone), and may add forms for exact values (``"=0"``, ``"=1"``).
``{langs}`` in any message is the languages the bot speaks, so no message lists them.
``t()`` falls back to English for a language without the key, and to the key itself when no
catalogue has it, so a missing text shows up in a test rather than crashing a chat.

Why JSON rather than gettext: the keys are already stable identifiers (gettext keys by the
English text), a plural object maps directly to CLDR's categories, there is no compile step
between editing a file and running the bot, and tests read the files with the standard
library. ``python scripts/i18n_export.py --check`` (and a unit test) holds every file to the
source language's keys, placeholders and the plural categories CLDR gives its language. A
catalogue may be partial: a language is one file, however few of the messages it has yet,
and ``python scripts/i18n_export.py --coverage`` lists what each one still lacks.

Korean glossary: one term per concept across every catalogue (a test holds every Korean
message to it, and to the particle rules: a particle attaches to the word before it, and a
variable is followed by a fixed noun rather than by a paired particle such as 을(를)).

======================  ==========  =====================================
concept                 term        not
======================  ==========  =====================================
digest                  요약        다이제스트
TL;DR                   TL;DR
filter                  필터        조건
subscribe / follow      구독        팔로우
delivery, to send       발송        전송
broadcast               공지        방송
time zone               시간대      타임존, 표준시간대
pause / resume          일시 중지 / 재개
tag / page / chat       태그 / 페이지 / 채팅
command                 명령어      커맨드
settings                설정
======================  ==========  =====================================
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, overload

from babel import Locale, UnknownLocaleError
from babel.dates import format_date as _babel_format_date

__all__ = [
    "CATALOGUE",
    "GLOSSARY_KO_AVOID",
    "LANGUAGES",
    "SOURCE",
    "Message",
    "add_language",
    "clean",
    "complete",
    "format_date",
    "has",
    "language_name",
    "match",
    "negotiate",
    "plural_category",
    "remove_language",
    "t",
    "tn",
]

SOURCE = "en"  # the language the messages are written in first; every other falls back to it
# A placeholder any message may use without its caller passing it: the languages the bot
# speaks (``en | ko``), so that no message lists them and a new file needs no edit of another.
LANGS_FIELD = "{langs}"

# Messages for the operator's terminal and logs, in the source language only.
OPERATOR_ONLY = ("cli.", "log.")

# A message: its text, or its plural forms by CLDR category ("one", "other") and exact
# value ("=1").
Message = str | dict[str, str]

# Korean words the glossary above replaces, with the term to use instead.
GLOSSARY_KO_AVOID: dict[str, str] = {
    "다이제스트": "요약",
    "전송": "발송",
    "방송": "공지",
    "타임존": "시간대",
    "표준시간대": "시간대",
    "커맨드": "명령어",
    "팔로우": "구독",
}


def read_catalogues(directory: Traversable) -> dict[str, dict[str, Message]]:
    """Every ``<language>.json`` of ``directory``, by language (the file's name)."""
    found: dict[str, dict[str, Message]] = {}
    for entry in sorted(directory.iterdir(), key=lambda e: e.name):
        if entry.is_file() and entry.name.endswith(".json"):
            lang = entry.name.removesuffix(".json")
            found[lang] = json.loads(entry.read_text(encoding="utf-8"))
    return found


LOCALES = resources.files(__name__) / "locales"
CATALOGUE: dict[str, dict[str, Message]] = read_catalogues(LOCALES)


class _Languages(Sequence[str]):
    """The languages of :data:`CATALOGUE`, the source language first, then by name; a view,
    so a language added with :func:`add_language` is one everywhere at once."""

    def _current(self) -> list[str]:
        return sorted(CATALOGUE, key=lambda lang: (lang != SOURCE, lang))

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._current()[index]

    def __len__(self) -> int:
        return len(CATALOGUE)

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __contains__(self, value: object) -> bool:
        return value in CATALOGUE

    def __repr__(self) -> str:
        return repr(tuple(self._current()))


LANGUAGES: Sequence[str] = _Languages()


def add_language(lang: str, messages: Mapping[str, Message]) -> None:
    """Speak ``lang`` with ``messages`` from now on (a catalogue not shipped in
    ``locales/``, such as a test's pseudo-language)."""
    CATALOGUE[lang] = dict(messages)
    _locale.cache_clear()


def remove_language(lang: str) -> None:
    """Stop speaking ``lang`` (a language added with :func:`add_language`); the source
    language always stays."""
    if lang != SOURCE:
        CATALOGUE.pop(lang, None)
        _locale.cache_clear()


def match(locale: object) -> str | None:
    """The language of the bot a locale names (``ko``, ``ko-KR``, ``ko_KR``, ``KO``), or
    None when it names none: the whole tag first, then its primary subtag."""
    if not isinstance(locale, str):
        return None
    tag = locale.strip().replace("_", "-").lower()
    by_tag = {lang.lower(): lang for lang in CATALOGUE}
    if tag in by_tag:
        return by_tag[tag]
    return by_tag.get(tag.split("-", 1)[0])


def negotiate(locale: str | None, *, default: str | None = None) -> str:
    """The language to speak to someone whose platform says ``locale`` (a Slack locale
    ``ko-KR``, a Telegram ``language_code`` ``ko``, an Accept-Language entry, or None).

    Args:
        locale: the platform's locale or language code, if it gave one.
        default: the language when ``locale`` names none of the bot's (the operator's
            ``DEFAULT_LANGUAGE``); the source language when not given.
    """
    found = match(locale)
    if found is not None:
        return found
    return default if default in CATALOGUE else SOURCE


@functools.lru_cache(maxsize=64)
def _locale(lang: str) -> Locale:
    """Babel's locale for ``lang``: CLDR's plural rules, month and language names. A
    language CLDR does not know borrows the source language's."""
    try:
        return Locale.parse(lang.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return Locale.parse(SOURCE)


# Characters that change how text around them is displayed without being seen: the bidi
# embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the bidi marks, and the
# zero-width characters other than ZWNJ (U+200C) and ZWJ (U+200D), which scripts such as
# Persian and emoji sequences need. A title "abc\u202egpj.exe" would otherwise show as
# "abcexe.jpg".
_INVISIBLE = re.compile(
    "[\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def clean(text: str) -> str:
    """``text`` without bidi controls and invisible zero-width characters (ZWJ and ZWNJ
    are kept). Used on page titles, tags and TL;DRs before rendering, and on every value
    a message substitutes, so a reply that echoes a user's input cannot be spoofed."""
    return _INVISIBLE.sub("", text)


def _message(lang: str, key: str) -> tuple[str, Message]:
    """``(language, message)``: ``key`` in ``lang``, else in the source language, else the
    key itself."""
    messages = CATALOGUE.get(lang)
    if messages is not None and key in messages:
        return lang, messages[key]
    return SOURCE, CATALOGUE[SOURCE].get(key, key)


def _format(template: str, params: Mapping[str, Any]) -> str:
    if LANGS_FIELD in template and "langs" not in params:
        params = {**params, "langs": " | ".join(LANGUAGES)}
    if not params:
        return template
    return template.format(**{k: clean(v) if isinstance(v, str) else v for k, v in params.items()})


def t(lang: str, key: str, /, **params: Any) -> str:
    """The message ``key`` in ``lang`` with ``params`` substituted (``str.format`` style).

    String values pass through :func:`clean` first.
    """
    _, message = _message(lang, key)
    if isinstance(message, dict):
        message = message.get("other", key)
    return _format(message, params)


def plural_category(lang: str, count: int) -> str:
    """CLDR's plural category of ``count`` in ``lang`` (``one``, ``few``, ``other``...)."""
    return str(_locale(lang).plural_form(count))


def tn(lang: str, key: str, count: int, /, **params: Any) -> str:
    """The form of ``key`` for ``count`` (an exact ``=N`` form, else the one of CLDR's
    plural category of ``count``), with ``count`` and ``params`` substituted."""
    found, message = _message(lang, key)
    if isinstance(message, dict):
        message = (
            message.get(f"={count}")
            or message.get(plural_category(found, count))
            or message.get("other", key)
        )
    return _format(message, {"count": count, **params})


def complete(lang: str) -> bool:
    """Whether ``lang`` has every message of the source language (the operator's own,
    ``cli.`` and ``log.``, aside): a partial catalogue is spoken with English for the rest."""
    messages = CATALOGUE.get(lang, {})
    return all(key in messages for key in CATALOGUE[SOURCE] if not key.startswith(OPERATOR_ONLY))


def has(key: str) -> bool:
    """Whether there is a message ``key``: the source language has it, and every other
    language either has it or falls back to it."""
    return key in CATALOGUE[SOURCE]


def language_name(code: str, lang: str) -> str:
    """The name of the language ``code`` in ``lang`` (``English``, ``영어``), from CLDR;
    ``code`` itself when CLDR has no name for it."""
    try:
        named = Locale.parse(code.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return code
    return named.get_display_name(_locale(lang)) or code


def format_date(lang: str, date: dt.date, key: str = "render.date_format") -> str:
    """``date`` in the CLDR pattern the message ``key`` gives (``d MMM y``: ``3 Dec 2026``;
    ``y년 M월 d일``), with the month names of the language whose pattern it is."""
    found, pattern = _message(lang, key)
    if not isinstance(pattern, str):
        raise TypeError(f"{key} is not a date pattern")
    return str(_babel_format_date(date, pattern, locale=_locale(found)))
