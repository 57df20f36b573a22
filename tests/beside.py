"""A module written beside the bot, run in a fresh interpreter: how the tests show that a
new command area or admin part is taken up with no edit to the modules that dispatch it
(a fresh process, so nothing of the suite's own imports is reused)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_beside(tmp_path: Path, module: str, source: str, script: str, *args: str) -> Any:
    """``source`` written as ``module``.py in ``tmp_path``, importable beside the checkout,
    then ``script`` run with ``args``; the JSON its last line of output holds."""
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
