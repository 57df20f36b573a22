"""Check the message catalogues of ``bot/i18n/locales/`` against each other and CLDR.

``python scripts/i18n_export.py --check`` exits 1 naming every problem (``make test`` runs
the same check through ``tests/unit/test_i18n.py``):

- every language has only keys of the source language (English); keys under ``cli.`` and
  ``log.`` are the operator's, in English only, and asked of no other. A language may lack
  keys (a translation under way): the bot shows those in English, ``--coverage`` lists them;
- a message has the same ``{placeholders}`` in every language (each plural form those of
  the source language's ``other`` form, less ``count`` where a form spells the number out);
- a plural message has exactly the categories CLDR gives its language (Babel's
  ``Locale.plural_form``: English ``one``/``other``, Korean ``other``), plus any exact-value
  forms (``"=0"``, ``"=1"``); a date pattern names a year, a month and a day.

The files were exported once from the dict modules that held the messages before; a
translator now edits the JSON directly.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
from collections.abc import Mapping
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.dates import tokenize_pattern

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "bot" / "i18n" / "locales"
SOURCE = "en"
OPERATOR_ONLY = ("cli.", "log.")  # messages for the operator's terminal and logs: English
DATE_KEYS = ("render.date_format",)  # CLDR date patterns rather than str.format templates
DATE_FIELDS = set("GyYuUrQqMLdDFgEec")  # CLDR's date fields (no times in a date)
CATEGORIES = ("zero", "one", "two", "few", "many", "other")
_EXACT = re.compile(r"=\d+")

Message = str | dict[str, str]


def read(directory: Path = LOCALES) -> dict[str, dict[str, Message]]:
    """Every ``<language>.json`` of ``directory``, by language."""
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(directory.glob("*.json"))
    }


def plural_categories(lang: str) -> set[str]:
    """The CLDR plural categories of ``lang`` (``other`` always among them)."""
    try:
        locale = Locale.parse(lang.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        locale = Locale.parse(SOURCE)
    return set(locale.plural_form.tags) | {"other"}


def fields(text: str) -> set[str]:
    """The names of the ``{placeholders}`` of ``text``."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _problems_of(
    lang: str, key: str, message: Message, source: Message, categories: set[str]
) -> list[str]:
    where = f"{lang}.json: {key}"
    if isinstance(source, str) != isinstance(message, str):
        return [f"{where}: a plural message in one language and a text in the other"]
    if isinstance(message, str):
        assert isinstance(source, str)
        if key in DATE_KEYS:
            letters = {token[1][0] for token in tokenize_pattern(message) if token[0] == "field"}
            if not ({"y", "d"} <= letters and letters & {"M", "L"}) or letters - DATE_FIELDS:
                return [f"{where}: not a date pattern with a year, month and day: {message!r}"]
            return []
        try:
            found = fields(message)
        except ValueError as exc:
            return [f"{where}: {exc}"]
        if found != fields(source):
            return [f"{where}: placeholders {sorted(found)}, English has {sorted(fields(source))}"]
        return []
    assert isinstance(source, dict)
    out: list[str] = []
    named = {form for form in message if not _EXACT.fullmatch(form)}
    if named != categories:
        out.append(f"{where}: plural forms {sorted(named)}, CLDR has {sorted(categories)}")
    wanted = fields(source.get("other", ""))
    for form, text in message.items():
        try:
            found = fields(text)
        except ValueError as exc:
            out.append(f"{where}[{form}]: {exc}")
            continue
        # "one" and "=1" may spell the number out ("a reply", "1 chat").
        allowed = [wanted, wanted - {"count"}] if form != "other" else [wanted]
        if found not in allowed:
            out.append(f"{where}[{form}]: placeholders {sorted(found)}, want {sorted(wanted)}")
    return out


def problems(catalogues: Mapping[str, Mapping[str, Message]]) -> list[str]:
    """Every way the catalogues disagree with the source language's and with CLDR."""
    if SOURCE not in catalogues:
        return [f"no {SOURCE}.json: the source language's catalogue is missing"]
    source = catalogues[SOURCE]
    out: list[str] = []
    for lang, messages in catalogues.items():
        categories = plural_categories(lang)
        if lang != SOURCE:
            for key in sorted(messages.keys() - source.keys()):
                out.append(f"{lang}.json: {key} is not in {SOURCE}.json")
        for key, message in messages.items():
            if key in source:
                out += _problems_of(lang, key, message, source[key], categories)
    return out


def missing(catalogues: Mapping[str, Mapping[str, Message]]) -> dict[str, list[str]]:
    """The keys of the source language each other language does not have yet (shown in
    English until it does), by language; the operator's keys are not asked of any."""
    source = catalogues.get(SOURCE, {})
    shared = {key for key in source if not key.startswith(OPERATOR_ONLY)}
    return {
        lang: sorted(shared - messages.keys())
        for lang, messages in catalogues.items()
        if lang != SOURCE
    }


def coverage_lines(catalogues: Mapping[str, Mapping[str, Message]], *, keys: bool) -> list[str]:
    """One line a language: how many of the source language's messages it has, then (with
    ``keys``) the missing keys, one an indented line."""
    source = catalogues.get(SOURCE, {})
    total = sum(1 for key in source if not key.startswith(OPERATOR_ONLY))
    out: list[str] = []
    for lang, lacking in missing(catalogues).items():
        out.append(f"{lang}: {total - len(lacking)} of {total} messages")
        if keys:
            out += [f"  {key}" for key in lacking]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="check the catalogues (default)")
    parser.add_argument(
        "--coverage", action="store_true", help="list the messages each language lacks"
    )
    args = parser.parse_args(argv)
    catalogues = read()
    found = problems(catalogues)
    for problem in found:
        print(problem, file=sys.stderr)
    if not found:
        print(f"{len(catalogues)} catalogues agree: {', '.join(catalogues)}")
        for line in coverage_lines(catalogues, keys=args.coverage):
            print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
