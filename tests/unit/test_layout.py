"""The layout of ``bot/``: each folder one stage of the flow, every import pointing down the
flow or to the shared ground, and no module longer than a reader can hold.

The stages, in the order of the flow (docs/development.md, "Layout"): the ground (the root
modules, ``bot/i18n/``, ``bot/store/``) < ``sources`` < ``matching`` < ``render`` <
``delivery`` < ``commands`` < ``channels`` < ``ops`` < the composition at the root
(``app``, ``service``, ``__main__``). A module may import its own stage and any stage
before it; an import of a later stage is an error unless it is allowed below, with why.

The ``cli`` package is the composition too: it holds ``__main__``'s parser and commands,
split out of it by what they do, and like ``__main__`` they open the app and run the
service. So its modules count as the root's (``TOP``, which ``stage`` reads).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "bot"
STAGES = ("ground", "sources", "matching", "render", "delivery", "commands", "channels", "ops")
TOP = ("app", "service", "__main__", "cli")

# (importer, imported, what): a module of the importer's name or below it may import the
# imported module or anything below it. Each is the ground (the settings, the store)
# reading a pure rule of a later stage rather than keeping a second copy of it.
ALLOWED_UPWARD = (
    # A WIKI_SOURCES entry is validated and redacted at start by the sources' own rules.
    ("bot.settings", "bot.sources.spec", "WIKI_SOURCES: parse_sources, public_identity"),
    ("bot.settings", "bot.sources.git", "WIKI_SOURCES: is_git, parse_git_url"),
    # DEFAULT_TIMEZONE is checked by the timezone command's rule (schedule.check_zone).
    ("bot.settings", "bot.matching.schedule", "DEFAULT_TIMEZONE: check_zone"),
    # A chat's stored filter is parsed, and pages matched by it, as the filters stage says
    # (chats, planning, feeds): one syntax, never a second copy of it in the store.
    ("bot.store", "bot.matching.filters", "parse_filter, matches, normalized_tags"),
    # A chat's quiet hours and next digest are stored as the schedule computes them.
    ("bot.store.chats", "bot.matching.schedule", "quiet_of, next_digest"),
    # A chat's tag weights are computed from its stored votes by the ranking's rule.
    ("bot.store.feedback", "bot.matching.ranking", "weights, Vote"),
    # A private feed's entries and token, in the form and number the Atom feed needs.
    ("bot.store.feeds", "bot.render.atom", "FeedEntry, MAX_ENTRIES, new_token, token_hash"),
    # What a scan remembers of a source file is the directory source's FileStamp.
    ("bot.store.pages", "bot.sources.directory", "FileStamp"),
    # Revision 0005 rewrites stored sources and page keys to the public identity the
    # running code derives: one derivation, never a second copy that could drift from it.
    ("bot.store.migrations", "bot.sources.spec", "parse_source, public_identity"),
    # The alerts' state is stored in the value objects the alert rules decide on.
    ("bot.store.alerts", "bot.ops.alerts", "AuthState, Observation, SendCounts"),
)

# Modules over MAX_LINES, each with why it is not split yet.
MAX_LINES = 500
LONG_MODULES: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def stage(module: str) -> int:
    """The index of ``module``'s stage; the composition is after every stage."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in TOP:
        return len(STAGES)
    if len(parts) > 1 and parts[1] in STAGES:
        return STAGES.index(parts[1])
    return 0


def imports(module: str, path: Path) -> set[str]:
    """The project's modules ``module`` imports, at its top or inside a function."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                # ``from bot import render`` imports the module bot.render.
                name = f"{base}.{alias.name}"
                found.add(name if name in MODULES else base)
    return {name for name in found if name == "bot" or name.startswith("bot.")}


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _allowed(importer: str, imported: str) -> bool:
    return any(
        _within(importer, low) and _within(imported, high) for low, high, _ in ALLOWED_UPWARD
    )


def test_every_import_points_down_the_flow() -> None:
    upward = [
        f"{module} imports {target}"
        for module, path in MODULES.items()
        for target in sorted(imports(module, path))
        if stage(target) > stage(module) and not _allowed(module, target)
    ]
    assert upward == []


def test_every_allowed_exception_is_still_needed() -> None:
    used = {
        (low, high)
        for module, path in MODULES.items()
        for target in imports(module, path)
        for low, high, _ in ALLOWED_UPWARD
        if stage(target) > stage(module) and _within(module, low) and _within(target, high)
    }
    assert [(low, high) for low, high, _ in ALLOWED_UPWARD if (low, high) not in used] == []


@pytest.mark.parametrize("path", sorted(MODULES.values()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_longer_than_max_lines(path: Path) -> None:
    name = path.relative_to(ROOT.parent).as_posix()
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if name in LONG_MODULES:
        assert lines > MAX_LINES, f"{name} is short enough now: drop it from LONG_MODULES"
    else:
        assert lines <= MAX_LINES, name
