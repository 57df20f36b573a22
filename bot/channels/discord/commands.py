"""The chat commands as Discord application commands: one each, read from the registry.

Each command of :mod:`bot.commands.registry` is a CHAT_INPUT command of its own
(``/subscribe``), its description the catalogues' ``line.NAME`` in English with the Korean
as ``description_localizations``; a command whose line shows arguments takes them as one
optional string option named after them (``/subscribe tags: rl reasoning``). ``run``
registers them at start with a bulk overwrite, only when Discord's set differs
(https://discord.com/developers/docs/interactions/application-commands#bulk-overwrite-
global-application-commands).
"""

from __future__ import annotations

import re
from typing import Any

from bot.commands import registry
from bot.i18n import LANGUAGES, SOURCE, t

MAX_DESCRIPTION = 100  # Application Command: description, 1-100 characters
MAX_NAME = 32  # Application Command and its options: name, 1-32 characters
CHAT_INPUT, STRING = 1, 3  # application command type; option type
GUILD, BOT_DM = 0, 1  # Interaction Context Types: in servers and in the bot's DM
GUILD_INSTALL = 0  # Application Integration Types
DEFAULT_OPTION = "argument"
# Discord's locales for the bot's languages where they differ from the catalogue's tag
# (reference#locales: "ko", "en-US", "zh-CN"...).
DISCORD_LOCALES = {"en": "en-US"}
_OPTION_NAME = re.compile(r"^[\w-]{1,32}$")
_WORD = re.compile(r"^\[?([A-Za-z]+|[^\W\d_A-Za-z]+)\]?$")


def _line(lang: str, name: str) -> tuple[str, str]:
    """``(usage, description)`` of a command's line in ``lang``: ``TAGS`` and what it does."""
    line = t(lang, f"line.{name}", p="/")
    head, _, description = line.partition(" — ")
    usage = head.removeprefix(f"/{name}").strip()
    return usage, description.strip()


def _option_name(usage: str) -> str | None:
    """The option's name from the usage's first word: ``TAGS`` -> ``tags``; None where the
    usage is no word (``HH:MM``, ``daily``...)."""
    first = usage.split()[0] if usage.split() else ""
    match = _WORD.match(first)
    if match is None or (not match[1].isupper() and match[1].isascii()):
        return None
    name = match[1].lower()
    return name if _OPTION_NAME.match(name) else None


def _cut(s: str) -> str:
    return s[:MAX_DESCRIPTION].strip() or "…"


def definition(command: registry.Command) -> dict[str, Any]:
    """One command as the JSON of an application command."""
    usage, description = _line(SOURCE, command.name)
    found: dict[str, Any] = {
        "name": command.name,
        "type": CHAT_INPUT,
        "description": _cut(description or command.name),
        "description_localizations": {},
        "contexts": [GUILD, BOT_DM],
        "integration_types": [GUILD_INSTALL],
    }
    for lang in LANGUAGES:
        if lang == SOURCE:
            continue
        _, translated = _line(lang, command.name)
        if translated:
            found["description_localizations"][DISCORD_LOCALES.get(lang, lang)] = _cut(translated)
    if usage:
        option: dict[str, Any] = {
            "type": STRING,
            "name": _option_name(usage) or DEFAULT_OPTION,
            "description": _cut(usage),
            "required": False,
            "description_localizations": {},
            "name_localizations": {},
        }
        for lang in LANGUAGES:
            if lang == SOURCE:
                continue
            translated_usage, _ = _line(lang, command.name)
            locale = DISCORD_LOCALES.get(lang, lang)
            if translated_usage:
                option["description_localizations"][locale] = _cut(translated_usage)
            local_name = _option_name(translated_usage)
            if local_name and local_name != option["name"]:
                option["name_localizations"][locale] = local_name
        found["options"] = [option]
    return found


def definitions() -> list[dict[str, Any]]:
    """Every command of the registry, in its order."""
    return [definition(command) for command in registry.commands()]


_COMPARED = ("name", "type", "description", "description_localizations", "options", "contexts")


def _normal(command: dict[str, Any]) -> dict[str, Any]:
    kept = {key: command.get(key) for key in _COMPARED}
    kept["description_localizations"] = kept["description_localizations"] or {}
    options = []
    for option in kept["options"] or []:
        options.append(
            {
                "type": option.get("type"),
                "name": option.get("name"),
                "description": option.get("description"),
                "required": bool(option.get("required")),
                "description_localizations": option.get("description_localizations") or {},
                "name_localizations": option.get("name_localizations") or {},
            }
        )
    kept["options"] = options
    kept["contexts"] = sorted(kept["contexts"] or [])
    return kept


def same(registered: list[dict[str, Any]], wanted: list[dict[str, Any]]) -> bool:
    """Whether Discord's commands (fetched with their localizations) are the ones wanted."""
    by_name = {c.get("name"): _normal(c) for c in registered if isinstance(c, dict)}
    return len(by_name) == len(wanted) and all(by_name.get(c["name"]) == _normal(c) for c in wanted)


def split_invocation(data: dict[str, Any]) -> str:
    """An APPLICATION_COMMAND interaction's data as the command core's text:
    ``subscribe rl reasoning`` (the name, then its string option's value)."""
    name = str(data.get("name") or "")
    argument = ""
    for option in data.get("options") or []:
        if isinstance(option, dict) and isinstance(option.get("value"), str):
            argument = option["value"]
            break
    return f"{name} {argument}".strip()
