"""One-off: write bot/i18n/locales/<lang>.json from the dict modules of bot/i18n."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from babel import Locale

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.i18n import admin, charts, commands, destinations, digestq, render, slack  # noqa: E402

MODULES = (commands, render, admin, slack, destinations, digestq, charts)
CATEGORIES = ("zero", "one", "two", "few", "many", "other")
DATE_PATTERNS = {"en": "d MMM y", "ko": "y년 M월 d일"}


def categories(lang: str) -> list[str]:
    tags = Locale.parse(lang).plural_form.tags
    return [c for c in CATEGORIES if c in tags or c == "other"]


def export(lang: str) -> dict[str, object]:
    flat: dict[str, str] = {}
    for module in MODULES:
        flat.update(module.MESSAGES.get(lang, {}))
    stems = {k.rpartition(".")[0] for k in flat if k.endswith(".one")}
    out: dict[str, object] = {}
    for key, text in flat.items():
        stem, _, suffix = key.rpartition(".")
        if key.startswith(("render.month.", "cmd.lang.")):
            continue  # Babel names months and languages
        if key == "render.date":
            out[key] = DATE_PATTERNS[lang]
            continue
        if stem in ("render.lang_note", "render.only_in"):
            if suffix == "other":
                out[stem] = text
            continue
        if stem in stems or key == "admin.broadcast.skipped.none":
            if key == "admin.broadcast.skipped.none":
                stem = "admin.broadcast.skipped"
            if stem in out:
                continue
            one, other = flat[f"{stem}.one"], flat[f"{stem}.other"]
            forms: dict[str, str] = {}
            if f"{stem}.none" in flat:
                forms["=0"] = flat[f"{stem}.none"]
            wanted = categories(lang)
            if "one" not in wanted and one.replace("{count}", "1") != other.replace("{count}", "1"):
                forms["=1"] = one
            for category in wanted:
                forms[category] = one if category == "one" else other
            out[stem] = forms
            continue
        out[key] = text
    return out


def main() -> None:
    target = ROOT / "bot" / "i18n" / "locales"
    target.mkdir(exist_ok=True)
    for lang in ("en", "ko"):
        data = export(lang)
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        (target / f"{lang}.json").write_text(text, encoding="utf-8")
        print(lang, len(data))


if __name__ == "__main__":
    main()
