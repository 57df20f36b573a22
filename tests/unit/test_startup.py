"""The one-shot commands load only the libraries they use (what makes them start fast)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory

from bot.store.engine import head_revision
from bot.store.migrations import MIGRATIONS
from bot.util import GC_THRESHOLDS

ROOT = Path(__file__).resolve().parents[2]
# The commands below run on SQLite: PostgreSQL's dialect (18 modules) is not for them either.
HEAVY = (
    "telegram",
    "slack_bolt",
    "slack_sdk",
    "alembic",
    "prometheus_client",
    "apscheduler",
    "sqlalchemy.dialects.postgresql",
)
PROBE = """
import runpy, sys
sys.argv = ["trendbot", *sys.argv[1:]]
try:
    runpy.run_module("bot", run_name="__main__")
except SystemExit:
    pass
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def _probed(probe: str, args: list[str], env: dict[str, str]) -> list[str]:
    """The words of the last line ``probe`` wrote to stderr after running ``trendbot``."""
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stderr.strip().splitlines()[-1].split()


def _imported(args: list[str], env: dict[str, str]) -> set[str]:
    return set(_probed(PROBE, args, env))


@pytest.mark.parametrize(
    ("args", "heavy"),
    [
        (["--help"], (*HEAVY, "sqlalchemy", "pydantic")),
        (["subscribers"], HEAVY),
        (["audit"], HEAVY),
        (["export"], HEAVY),
        (["db", "upgrade"], HEAVY),
    ],
)
def test_one_shot_commands_load_only_what_they_use(
    args: list[str], heavy: tuple[str, ...], clean_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**clean_env, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/trendbot.db"}
    # The first command creates the schema, which needs Alembic; the ones after it do not.
    subprocess.run(
        [sys.executable, "-m", "bot", "db", "upgrade"], env=env, cwd=ROOT, check=True, timeout=60
    )
    loaded = _imported(args, env)
    assert "bot" in loaded
    assert sorted(name for name in heavy if name in loaded) == []


def test_head_revision_is_alembics_head() -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert [head_revision()] == ScriptDirectory.from_config(config).get_heads()


GC_PROBE = """
import gc, runpy, sys
sys.argv = ["trendbot", *sys.argv[1:]]
try:
    runpy.run_module("bot", run_name="__main__")
except SystemExit:
    pass
print(gc.get_threshold()[0], gc.get_freeze_count() > 0, file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "settled"), [(["digest", "--now"], True), (["subscribers"], False)]
)
def test_commands_that_deliver_settle_the_heap_once_started(
    args: list[str], settled: bool, clean_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**clean_env, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/trendbot.db"}
    threshold, frozen = _probed(GC_PROBE, args, env)
    # What start-up loaded is frozen and young collections are rarer: at 1,000 messages a
    # second the defaults stopped the event loop for 60-120 ms several times a run.
    assert (int(threshold) == GC_THRESHOLDS[0], frozen == "True") == (settled, settled)
