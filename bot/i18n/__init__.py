"""Message catalogues in English and Korean.

Every user-facing text lives here, never inline. Each area of the bot keeps its own
catalogue module (``commands``, ``render``) with a ``MESSAGES = {"en": {...}, "ko": {...}}``
dict; keys are dotted (``render.header``). ``t()`` falls back to English for a language
without the key, and to the key itself when no catalogue has it, so a missing text shows
up in a test rather than crashing a chat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.i18n import admin, commands, destinations, digestq, render, slack

LANGUAGES = ("en", "ko")


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
)


def t(lang: str, key: str, /, **params: Any) -> str:
    """The message ``key`` in ``lang`` with ``params`` substituted (``str.format`` style)."""
    messages = CATALOGUE.get(lang) or CATALOGUE["en"]
    template = messages.get(key) or CATALOGUE["en"].get(key) or key
    return template.format(**params) if params else template


def has(key: str) -> bool:
    return all(key in CATALOGUE[lang] for lang in LANGUAGES)
