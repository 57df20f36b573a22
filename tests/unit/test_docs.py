"""The documentation's generated pages and the Grafana dashboard say what the code does."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import gen_docs  # noqa: E402

from bot import metrics  # noqa: E402

DASHBOARD = ROOT / "deploy" / "grafana" / "trendbot.json"
METRIC_NAME = re.compile(r"\btrendbot_[a-z_]+\b")
HISTOGRAM_SERIES = ("_bucket", "_sum", "_count")


def exported_series() -> set[str]:
    """Every series name ``/metrics`` can carry."""
    names: set[str] = set()
    for family in metrics.REGISTRY.collect():
        if family.type == "counter":
            names.add(family.name + "_total")
        elif family.type == "histogram":
            names.update(family.name + suffix for suffix in HISTOGRAM_SERIES)
        else:
            names.add(family.name)
    return names


def test_the_reference_pages_are_what_the_code_generates() -> None:
    assert gen_docs.stale_pages() == [], "run: python scripts/gen_docs.py"


def test_every_variable_of_the_settings_has_a_meaning_in_the_reference() -> None:
    page = gen_docs.environment_page()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert rows, page
    for row in rows:
        assert not row.rstrip().endswith("|  |"), f"no meaning in .env.example: {row}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# A.\n# NAME=1\n", {"NAME": "A."}),
        ("# Shared.\n# ONE=\n# TWO=\n", {"ONE": "Shared.", "TWO": "Shared."}),
        ("# First.\n# ONE=\n\n# Second.\n# TWO=x\n", {"ONE": "First.", "TWO": "Second."}),
        ("# Two\n# lines.\nNAME=\n", {"NAME": "Two lines."}),
    ],
)
def test_env_meanings_reads_the_comment_above_each_variable(
    text: str, expected: dict[str, str]
) -> None:
    assert gen_docs.env_meanings(text) == expected


def test_a_list_in_a_comment_is_a_list_in_the_reference() -> None:
    """WIKI_SOURCES' kinds of source: a Markdown list under the table, one item a kind with
    its example, nested where .env.example indents; the table cell points at it."""
    page = gen_docs.environment_page()
    [row] = [line for line in page.splitlines() if line.startswith("| `WIKI_SOURCES` |")]
    assert "[listed below](#wiki_sources)" in row and "/srv/wiki" not in row
    section = page.split("## `WIKI_SOURCES` {#wiki_sources}", 1)[1]
    items = [line for line in section.splitlines() if line.lstrip().startswith("- ")]
    assert "- a directory of pages: `/srv/wiki`" in items
    assert (
        "    - in a folder of it: `git+https://host/org/wiki.git@main#subdirectory=wiki`" in items
    )
    assert len(items) == 9


def test_the_commands_page_has_every_command_in_both_languages() -> None:
    from bot.commands import COMMAND_ORDER

    page = gen_docs.commands_page()
    for name in COMMAND_ORDER:
        section = page.split(f"## `{name}`", 1)[1].split("\n## ", 1)[0]
        assert "**English**" in section and "**한국어**" in section, name
        assert f"help.{name}" not in section, f"no help text for {name}"


def test_every_metric_the_dashboard_queries_is_one_the_bot_exports() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert exprs
    queried = {name for expr in exprs for name in METRIC_NAME.findall(expr)}
    assert queried - exported_series() == set()
    # What an operator needs at a glance is on it.
    for needed in (
        "trendbot_messages_sent_total",
        "trendbot_messages_retried_total",
        "trendbot_queue_depth",
        "trendbot_queue_oldest_age_seconds",
        "trendbot_messages_failed_total",
        "trendbot_source_last_success_timestamp_seconds",
        "trendbot_replicas_live",
        "trendbot_leader",
    ):
        assert needed in queried, needed


README = ROOT / "README.md"
README_MAX_BYTES = 15 * 1024  # a front door, not the manual: the rest is in docs/
MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_short_and_its_links_lead_somewhere() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) <= README_MAX_BYTES
    targets = [link for link in MARKDOWN_LINK.findall(text) if "://" not in link]
    assert targets
    for target in targets:
        assert (ROOT / target).exists(), target


COMMANDS_PAGES = (ROOT / "docs" / "commands.md", ROOT / "docs" / "ko" / "commands.md")
FIRST_CELL = re.compile(r"^\| (`[^|]+) \|", re.MULTILINE)


@pytest.mark.parametrize("page", COMMANDS_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_commands_pages_table_every_command_of_the_registry(page: Path) -> None:
    """The hand-written commands pages cannot drift from the registry: their table has a
    row for every command, and names no command the bot does not have."""
    from bot.commands import registry

    named = {
        item.strip("` ").split()[0]
        for cell in FIRST_CELL.findall(page.read_text(encoding="utf-8"))
        for item in cell.split(",")
        for item in item.split(" / ")
    }
    assert named == set(registry.NAMES)
