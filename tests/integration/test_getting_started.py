"""The getting-started pages' console sessions, English and Korean, replayed against the
command core on the sample wiki: each quoted reply is what the bot answers."""

from __future__ import annotations

import re

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.cli import CREATED
from tests.conftest import ROOT
from tests.integration.test_first_run import newcomer

PAGES = ["docs/getting-started.md", "docs/ko/getting-started.md", "README.md"]
# What depends on the clock: the day and the hours until 09:00 UTC.
# What depends on the hour the test runs at: the day of the next digest, and the wait for
# it, with its hours ("in 3 h 20 min") or, in the hour before it, without ("in 51 min").
CLOCK = [
    (re.compile(r"\b(today|tomorrow)\b"), "DAY"),
    (re.compile(r"in (\d+ h )?\d+ min"), "in H"),
    (re.compile(r"(오늘|내일) "), "DAY "),
    (re.compile(r"(\d+시간 )?\d+분 후"), "H 후"),
]
# Log lines below WARNING go to data/trendbot.log while the console is open.
LOG_LINE = re.compile(r"\b(DEBUG|INFO)\s+bot\.")


def _session(page: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    [block] = [b for b in text.split("```")[1::2] if "you> /subscribe rl" in b]
    return block.splitlines()


def _exchanges(lines: list[str]) -> list[tuple[str, str]]:
    """(command, the reply quoted after it up to the next prompt or delivery) pairs."""
    found: list[tuple[str, str]] = []
    for n, line in enumerate(lines):
        if not line.startswith("you> /"):
            continue
        said: list[str] = []
        for after in lines[n + 1 :]:
            if after.startswith(("you>", "────")):
                break
            said.append(after.removeprefix("bot> "))
        found.append((line.removeprefix("you> "), " ".join(" ".join(said).split())))
    return found


def _unclocked(text: str) -> str:
    text = " ".join(text.split())
    for pattern, fixed in CLOCK:
        text = pattern.sub(fixed, text)
    return text


@pytest.mark.parametrize("page", PAGES)
async def test_the_quoted_replies_are_the_bots(engine: AsyncEngine, page: str) -> None:
    lines = _session(page)
    user = await newcomer(engine)
    exchanges = _exchanges(lines)
    commands = [command for command, _ in exchanges]
    assert commands.index("/subscribe rl") + 1 == commands.index("/digest")
    for command, quoted in exchanges:
        assert _unclocked(await user.say(command)) == _unclocked(quoted), command


@pytest.mark.parametrize("page", PAGES)
def test_the_console_session_shows_no_log_line(page: str) -> None:
    """Log lines below WARNING go to data/trendbot.log while the console is open."""
    assert [line for line in _session(page) if LOG_LINE.search(line)] == []


def test_the_first_start_warning_is_the_one_the_bot_writes() -> None:
    [warning] = [line for line in _session(PAGES[0]) if re.search(r" WARNING +bot\.", line)]
    assert re.split(r" WARNING +", warning, maxsplit=1)[1].startswith(f"bot.store: {CREATED}")
