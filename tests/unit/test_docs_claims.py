"""What the pages of docs/ and the README say about the bot's output, read against the
renderers and settings that make it (the reference pages are checked in test_docs.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.commands.stats import TREND_DAYS
from bot.i18n import t
from bot.rules import schedule
from bot.store import trends

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _read(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def _console_digest() -> str:
    """The console's rendering of the reference digest (docs/reference/digests.md, English),
    which test_docs.py checks is what the renderers print."""
    english = _section(_read("docs/reference/digests.md"), "## English")
    console = english[english.index("### Console") :]
    return console.split("```text\n", 1)[1].split("```", 1)[0]


def test_the_commands_page_shows_the_console_votes_as_printed() -> None:
    said = " ".join(_read("docs/commands.md").split())
    shown = re.search(r"the console prints them as `([^`]+)`", said)
    assert shown is not None
    assert shown[1] == "[+1 👍] [-1 👎]"
    assert shown[1] in _console_digest().splitlines()
    # and it says how to vote there, as the console's prompt does
    assert "typing `+1` or `-1`" in said


def test_the_readme_digest_has_the_telegram_keyboard_rows() -> None:
    readme = _read("README.md")
    block = readme.split("A digest as a Telegram chat shows it", 1)[1].split("```", 2)[1]
    english = _section(_read("docs/reference/digests.md"), "## English")
    markup = english.split("`reply_markup`:", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    rows = [
        " ".join(f"[{button['text']}]" for button in row)
        for row in json.loads(markup)["inline_keyboard"]
    ]
    lines = block.splitlines()
    assert [line for line in lines if "👍" in line] == rows
    titles = [line for line in lines if re.match(r"\d+\. ", line)]
    assert [t.split(". ", 1)[0] for t in titles] == ["1", "2"]


CITIES = ("Seoul", "서울", "New York")


def _timezone_row(page: str) -> str:
    [row] = [line for line in _read(page).splitlines() if line.startswith("| `timezone ")]
    return row


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_help_timezone_names_cities_that_work(lang: str) -> None:
    text = t(lang, "help.timezone", p="/")
    for city in CITIES:
        assert f"/timezone {city}" in text
    # Every example of the list ("• /timezone Seoul, /timezone 서울 — a city") works.
    for typed in re.findall(r"/timezone ([^,\n—]+?)(?:,| —)", text.split("\n", 1)[1]):
        assert schedule.resolve_zone(typed.strip()) is not None, typed


@pytest.mark.parametrize("page", ["docs/commands.md", "docs/ko/commands.md"])
def test_the_commands_pages_name_cities_that_work(page: str) -> None:
    row = _timezone_row(page)
    for city in CITIES:
        assert f"`{city}`" in row
        assert schedule.resolve_zone(city) is not None


def test_the_korean_commands_page_has_the_followers_chart() -> None:
    """As the English page does: the stats chart's followers of the top tags by day."""
    english = " ".join(_read("docs/commands.md").split())
    korean = " ".join(_read("docs/ko/commands.md").split())
    assert f"the last {TREND_DAYS} days" in english
    assert f"최근 {TREND_DAYS}일" in korean and "상위 태그 다섯 개" in korean
    assert f"{trends.KEEP_DAYS}일" in korean and f"{trends.KEEP_DAYS} days" in english


# The widest code line the site shows whole on a laptop: Material's content column fits
# about 80 monospace characters at its default size; a margin for the copy button.
MAX_DIAGRAM_COLUMNS = 72


def test_the_home_page_diagram_fits_the_page() -> None:
    import unicodedata

    def columns(line: str) -> int:
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)

    for page in ("docs/index.md", "docs/ko/index.md"):
        blocks = _read(page).split("```")[1::2]
        for block in blocks:
            widest = max(block.splitlines(), key=columns)
            assert columns(widest) <= MAX_DIAGRAM_COLUMNS, (page, widest)


def test_the_configuration_table_has_every_variable() -> None:
    from bot.channels.registry import settings_class

    rows = [line for line in _read("docs/configuration.md").splitlines() if line.startswith("| `")]
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", " ".join(r.split("|")[1] for r in rows)))
    assert {name.upper() for name in settings_class().model_fields} - named == set()


def test_the_caddyfile_variables_are_documented_with_their_defaults() -> None:
    used = dict(re.findall(r"\{\$([A-Z_]+):([^}]+)\}", _read("deploy/Caddyfile")))
    assert set(used) == {"TRENDBOT_HOST", "TRENDBOT_PORT"}
    telegram = " ".join(_read("docs/telegram.md").split())
    for name, default in used.items():
        assert f"`{name}`" in telegram
        assert f"`{name}` (default `{default}`)" in telegram, name


def test_the_operating_page_shows_how_to_use_the_grafana_dashboard() -> None:
    dashboard = json.loads(_read("deploy/grafana/trendbot.json"))
    operating = " ".join(_read("docs/operating.md").split())
    assert "`deploy/grafana/trendbot.json`" in operating and "Import" in operating
    [variable] = dashboard["templating"]["list"]
    assert f"`{variable['name']}` variable" in operating
    for panel in dashboard["panels"]:
        first = panel["title"].split("(")[0].split(":")[0].strip().lower()
        assert first.split()[0] in operating.lower(), panel["title"]


def test_the_classes_and_functions_the_pages_name_exist() -> None:
    """`bot.errors.X`, `module.Class.method(...)`: every dotted name of the bot a page
    gives in code exists."""
    import importlib
    import importlib.util

    for page in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]:
        for dotted in re.findall(r"`(bot(?:\.[A-Za-z_]+)+)`", page.read_text(encoding="utf-8")):
            parts = dotted.split(".")
            if importlib.util.find_spec(f"bot.{parts[1]}") is None:
                continue  # not a name of the bot's (bot.example.org)
            for cut in range(len(parts), 0, -1):
                try:
                    found: object = importlib.import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                for attribute in parts[cut:]:
                    assert hasattr(found, attribute), (page.name, dotted)
                    found = getattr(found, attribute)
                break


PATH_IN_CODE = re.compile(r"`((?:bot|deploy|scripts|tests|bench|docs)/[A-Za-z0-9_./-]+)`")


def test_the_files_the_pages_name_exist() -> None:
    for page in [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]:
        for named in PATH_IN_CODE.findall(page.read_text(encoding="utf-8")):
            if any(mark in named for mark in ("*", "…", "LANG", "NAME", "PLATFORM", "ID")):
                continue
            path = ROOT / named.rstrip("/.")
            assert path.exists() or path.with_suffix(".py").exists(), (page.name, named)


@pytest.mark.parametrize(
    ("page", "lang"), [("docs/commands.md", "en"), ("docs/ko/commands.md", "ko")]
)
def test_the_limit_row_quotes_the_digests_last_line(page: str, lang: str) -> None:
    [row] = [line for line in _read(page).splitlines() if line.startswith("| `limit N`")]
    assert f"`{t(lang, 'digestq.more', count=7, p='/')}`" in row
