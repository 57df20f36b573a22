"""Every option of ``trendbot`` refuses a value out of its bounds with one line naming the
option and what it accepts, exit 2, no traceback, and nothing done."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.cli.parser import MAX_AGE_DAYS, MAX_BACKFILL_DAYS
from tests.cli import refusal, run_cli


@pytest.mark.parametrize(
    ("args", "option", "accepted"),
    [
        (["poll", "--backfill", "99999999"], "--backfill", f"from 0 to {MAX_BACKFILL_DAYS}"),
        (["poll", "--backfill", "-1"], "--backfill", f"from 0 to {MAX_BACKFILL_DAYS}"),
        (["poll", "--backfill", "1e9"], "--backfill", "whole number of days"),
        (["audit", "--since", "99999999999d"], "--since", f"at most {MAX_AGE_DAYS} days"),
        (["audit", "--since", "9" * 40 + "m"], "--since", "an age such as 24h"),
        (["audit", "--since", "9999-12-31T23:59:59-05:00"], "--since", "an ISO date"),
        (["audit", "--since", "0001-01-01T00:00:00+05:00"], "--since", "an ISO date"),
        (["audit", "--since", "\u0663d"], "--since", "an ISO date"),  # an Arabic-Indic digit
        (["broadcast", "--tag", "!!!", "--text", "hi", "--yes"], "--tag", "a tag is 1-64"),
        (["broadcast", "--tag", "rl,cv", "--text", "hi", "--yes"], "--tag", "a tag is 1-64"),
        (["broadcast", "--tag", "x" * 65, "--text", "hi", "--yes"], "--tag", "a tag is 1-64"),
        (["broadcast", "--platform", "irc", "--text", "hi"], "--platform", "'telegram', 'slack'"),
        (["digest", "--now", "--chat", "nope"], "--chat", "PLATFORM:CHAT_ID"),
        (["digest", "--now", "--chat", "telegram:"], "--chat", "PLATFORM:CHAT_ID"),
        (["broadcast", "--text", b"hi\xff", "--yes"], "--text", "valid UTF-8"),
        (["digest", "--now", "--chat", b"telegram:\xff"], "--chat", "valid UTF-8"),
    ],
)
def test_an_option_out_of_bounds_is_one_line_and_exit_2(
    args: list[str | bytes],
    option: str,
    accepted: str,
    clean_env: dict[str, str],
    tmp_path: Path,
) -> None:
    database = tmp_path / "trendbot.db"
    env = dict(clean_env, DATABASE_URL=f"sqlite+aiosqlite:///{database}")
    argv = [os.fsdecode(a) if isinstance(a, bytes) else a for a in args]
    result = run_cli(*argv, env=env, cwd=tmp_path, errors="replace")
    line = refusal(result)
    assert option in line and accepted in line
    assert "Traceback" not in result.stderr + result.stdout
    assert not database.exists()  # refused before anything was opened


def test_the_largest_accepted_values_work(clean_env: dict[str, str], tmp_path: Path) -> None:
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
        WIKI_SOURCES=str(tmp_path),
    )
    backfill = run_cli("poll", "--backfill", str(MAX_BACKFILL_DAYS), env=env, cwd=tmp_path)
    assert backfill.returncode == 0, backfill.stderr
    audit = run_cli("audit", "--since", f"{MAX_AGE_DAYS}d", env=env, cwd=tmp_path)
    assert audit.returncode == 0, audit.stderr
