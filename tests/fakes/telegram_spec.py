"""Each Bot API call checked against the Bot API's machine-readable description.

``tests/data/telegram_bot_api/api.json`` is the part of the description FakeTelegram needs
(its methods and every type their parameters name), cut by ``cut.py`` beside it from
https://github.com/PaulSonOfLars/telegram-bot-api-spec (MIT, its LICENSE beside it), which
is scraped from https://core.telegram.org/bots/api. :func:`check_call` names what a call
does that the description does not allow: a method or parameter (or a field of an object
parameter, at any depth) that does not exist, a required one missing, a value of another
type. A misspelt parameter is the first of these: Telegram ignores a parameter it does not
know, so the call "works" and the option is silently lost.

Values are read as Telegram reads a form: ``"42"`` is an Integer, ``"true"`` a Boolean, a
JSON text an object or an Array.

What the description does not have yet is checked where the project models it: the rich
messages' ``blocks`` (Bot API 10.2) and button rows (10.3) of an ``InputRichMessage`` are
checked by ``check_rich_message`` of the fake, as https://core.telegram.org/bots/api#inputrichmessage
and the changelog (https://core.telegram.org/bots/api-changelog) describe them.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SPEC = Path(__file__).resolve().parents[1] / "data" / "telegram_bot_api" / "api.json"
# Newer than the description (Bot API 10.1): checked by the fake's own rich-message checks.
CHECKED_BY_THE_FAKE = frozenset({"InputRichMessage"})
_INTEGER = re.compile(r"-?\d+")
_FLOAT = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


@dataclass(frozen=True, slots=True)
class Problem:
    """What a call does that the description does not allow. ``refused``: Telegram answers
    it with 400 (a value of the wrong type, a required parameter missing); otherwise it
    ignores what it does not know (an unknown parameter or field)."""

    where: str  # "sendMessage.reply_markup.inline_keyboard[0][0].callback_dat"
    text: str
    refused: bool

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


@functools.cache
def spec() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SPEC.read_text(encoding="utf-8"))
    return data


def check_call(method: str, params: dict[str, Any]) -> list[Problem]:
    """What ``method`` called with ``params`` does that the Bot API does not allow."""
    described = spec()["methods"].get(method)
    if described is None:
        return [Problem(method, "no such method in the Bot API", refused=True)]
    return _fields(method, described["fields"], params)


def _fields(where: str, fields: list[dict[str, Any]], given: dict[str, Any]) -> list[Problem]:
    problems = []
    known = {field["name"]: field for field in fields}
    for name, value in given.items():
        field = known.get(name)
        if field is None:
            problems.append(Problem(f"{where}.{name}", "no such parameter or field", False))
        else:
            problems += _value(f"{where}.{name}", field["types"], value)
    for name, field in known.items():
        if field["required"] and name not in given:
            problems.append(Problem(f"{where}.{name}", "required, and missing", True))
    return problems


def _value(where: str, types: list[str], value: Any) -> list[Problem]:
    """The problems of ``value`` read as the first of ``types`` it fits (none if one fits
    exactly; else those of the closest)."""
    best: list[Problem] | None = None
    for name in types:
        found = _one(where, name, value)
        if not found:
            return []
        if best is None or len(found) < len(best):
            best = found
    return best or []


def _one(where: str, name: str, value: Any) -> list[Problem]:
    if name.startswith("Array of "):
        items = _decoded(value, list)
        if items is None:
            return [Problem(where, f"must be an {name}", True)]
        element = name.removeprefix("Array of ")
        return [p for i, item in enumerate(items) for p in _one(f"{where}[{i}]", element, item)]
    if name == "Integer":
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and _INTEGER.fullmatch(value) is not None
        )
        return [] if ok else [Problem(where, "must be an Integer", True)]
    if name == "Float":
        ok = (isinstance(value, int | float) and not isinstance(value, bool)) or (
            isinstance(value, str) and _FLOAT.fullmatch(value) is not None
        )
        return [] if ok else [Problem(where, "must be a Float", True)]
    if name == "String":
        return [] if isinstance(value, str) else [Problem(where, "must be a String", True)]
    if name == "Boolean":
        ok = isinstance(value, bool) or value in ("true", "false", "True", "False")
        return [] if ok else [Problem(where, "must be a Boolean", True)]
    if name == "InputFile":  # an upload; a file_id, a URL or attach://name is a String
        ok = isinstance(value, str) or hasattr(value, "data")
        return [] if ok else [Problem(where, "must be an InputFile or a String", True)]
    described = spec()["types"].get(name)
    if described is None or name in CHECKED_BY_THE_FAKE:
        return []
    given = _decoded(value, dict)
    if given is None:
        return [Problem(where, f"must be a {name} object", True)]
    if described["subtypes"]:  # one of them, e.g. BotCommandScope
        return _value(where, described["subtypes"], given)
    return _fields(where, described["fields"], given)


def _decoded(value: Any, kind: type) -> Any:
    """``value`` as a ``kind`` (list or dict), also from the JSON text a form carries."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, kind) else None
