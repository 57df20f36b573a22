"""Message catalogues in English and Korean.

Every user-facing text lives here, never inline. Each area of the bot keeps its own
catalogue module (``commands``, ``render``) with a ``MESSAGES = {"en": {...}, "ko": {...}}``
dict; keys are dotted (``render.header``). ``t()`` falls back to English for a language
without the key, and to the key itself when no catalogue has it, so a missing text shows
up in a test rather than crashing a chat.

A message that counts something has two keys, ``KEY.one`` and ``KEY.other``; :func:`tn`
picks the form for the count ("1 chat", "2 chats"). Korean needs no plural, so its two
forms are the same text.

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

import re
from collections.abc import Mapping
from typing import Any

from bot.i18n import admin, charts, commands, destinations, digestq, render, slack
from bot.models import LANGUAGES

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


def _merge(*catalogues: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
    for catalogue in catalogues:
        for lang, messages in catalogue.items():
            duplicated = merged[lang].keys() & messages.keys()
            if duplicated:
                raise ValueError(f"message keys defined twice: {sorted(duplicated)}")
            merged[lang].update(messages)
    return merged


CATALOGUE = _merge(
    commands.MESSAGES,
    render.MESSAGES,
    admin.MESSAGES,
    slack.MESSAGES,
    destinations.MESSAGES,
    digestq.MESSAGES,
    charts.MESSAGES,
)


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


def t(lang: str, key: str, /, **params: Any) -> str:
    """The message ``key`` in ``lang`` with ``params`` substituted (``str.format`` style).

    String values pass through :func:`clean` first.
    """
    messages = CATALOGUE.get(lang) or CATALOGUE["en"]
    template = messages.get(key) or CATALOGUE["en"].get(key) or key
    if not params:
        return template
    return template.format(
        **{k: clean(v) if isinstance(v, str) else v for k, v in params.items()}
    )


def tn(lang: str, key: str, count: int, /, **params: Any) -> str:
    """The plural form of ``key`` for ``count`` (``KEY.one`` or ``KEY.other``), with
    ``count`` and ``params`` substituted."""
    form = "one" if count == 1 else "other"
    return t(lang, f"{key}.{form}", count=count, **params)


def has(key: str) -> bool:
    return all(key in CATALOGUE[lang] for lang in LANGUAGES)
