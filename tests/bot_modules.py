"""The modules of ``bot/``, by dotted name, as the checks of its layout read them (only the
standard library here)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "bot"


def bot_modules() -> dict[str, Path]:
    """Every module of ``bot/`` by its dotted name (a package by its own), in path order."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def bot_packages() -> list[str]:
    """The dotted names of the packages of ``bot/``, sorted."""
    return sorted(name for name, path in bot_modules().items() if path.name == "__init__.py")
