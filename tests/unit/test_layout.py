"""The layout of ``bot/``: no module longer than a reader can hold.

Which module may import which is ``tests/unit/test_imports.py``'s (the layers).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot_modules import ROOT, bot_modules

# Modules over MAX_LINES, each with why it is not split yet.
MAX_LINES = 500
LONG_MODULES: dict[str, str] = {}


MODULES = bot_modules()


@pytest.mark.parametrize("path", sorted(MODULES.values()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_longer_than_max_lines(path: Path) -> None:
    name = path.relative_to(ROOT.parent).as_posix()
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if name in LONG_MODULES:
        assert lines > MAX_LINES, f"{name} is short enough now: drop it from LONG_MODULES"
    else:
        assert lines <= MAX_LINES, name
