"""The imports of ``bot/`` run one way: down the layers, in no circle, to public names only.

``LAYERS`` is the contract, from the bottom up. A module belongs to the layer of the longest
prefix that names it, and may import its own layer and any layer below it. Three checks read
every ``import`` of every module (at its top, inside a function or under ``TYPE_CHECKING``,
since each is a dependency all the same):

- no import runs back up a layer;
- no two modules import each other, however long the way round (each circle is reported);
- no module imports another module's ``_private`` name.

None is allowed an exception: a rule that must bend is a layer drawn wrong, and the
table is what changes, with its why. Only the standard library here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.bot_modules import bot_modules

# (layer, its modules' prefixes, why it sits where it does), from the bottom up.
LAYERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "ground",
        (
            "bot",
            "bot.models",
            "bot.errors",
            "bot.i18n",
            "bot.papers",
            "bot.payloads",
            "bot.util",
            "bot.keyed",
            "bot.tags",
            "bot.checks",
            "bot.dberrors",
            "bot.metrics",
        ),
        "value objects, the error tree, the texts, the version: everything speaks them",
    ),
    (
        "rules",
        ("bot.rules",),
        "pure rules (filters, digest, ranking, schedule, alerts, sources, feeds): data out",
    ),
    (
        "store",
        ("bot.store",),
        "persists and queries what the rules decide; never plans, renders, polls or sends",
    ),
    (
        "config",
        ("bot.settings", "bot.platforms", "bot.logs"),
        "the validated environment and each platform's declared rules, read by all above",
    ),
    (
        "flow",
        ("bot.sources", "bot.matching", "bot.render", "bot.delivery"),
        "the work: polling sources, planning digests, rendering them, the outbox",
    ),
    (
        "commands",
        ("bot.commands",),
        "the command core, one for every platform, over the flow and the store",
    ),
    (
        "channels",
        ("bot.channels",),
        "one package a platform: updates into commands, outgoing messages through the flow",
    ),
    (
        "ops",
        ("bot.ops",),
        "the HTTP routes, leases and alerts; the routes mount the channels' endpoints",
    ),
    (
        "composition",
        ("bot.app", "bot.service", "bot.cli", "bot.__main__"),
        "builds every stage and runs it; nothing imports it",
    ),
)

MODULES = bot_modules()


@dataclass(frozen=True, slots=True)
class Import:
    """One name ``importer`` takes from ``module`` (``name`` is empty for a whole module)."""

    importer: str
    module: str
    name: str


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, *([base] if base else [])])
    return base


def _imports(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield Import(module, alias.name, "")
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path, node)
            for alias in node.names:
                # ``from bot import render`` imports the module bot.render.
                if f"{base}.{alias.name}" in MODULES:
                    yield Import(module, f"{base}.{alias.name}", "")
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif base in MODULES:
                    yield Import(module, base, alias.name)
    # ``module._name`` through a module imported whole.
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            yield Import(module, aliases[node.value.id], node.attr)


IMPORTS = [found for module, path in MODULES.items() for found in _imports(module, path)]
GRAPH: dict[str, set[str]] = {module: set() for module in MODULES}
for _found in IMPORTS:
    if _found.module != _found.importer:
        GRAPH[_found.importer].add(_found.module)


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer(module: str) -> int:
    """The index in ``LAYERS`` of the longest prefix naming ``module``."""
    best, length = -1, -1
    for index, (_, prefixes, _) in enumerate(LAYERS):
        for prefix in prefixes:
            if _within(module, prefix) and len(prefix) > length:
                best, length = index, len(prefix)
    assert best >= 0, f"{module} is in no layer"
    return best


def upward() -> set[tuple[str, str]]:
    """Every (importer, imported) pair running back up a layer."""
    return {
        (importer, imported)
        for importer, targets in GRAPH.items()
        for imported in targets
        if layer(imported) > layer(importer)
    }


def cycles() -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(GRAPH[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return sorted(found)


def _package_of(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def private_imports() -> set[tuple[str, str, str]]:
    """Every (importer, module, name) where a module takes another's ``_private`` name.

    A package's ``__init__`` re-exporting its own modules' names is its face, not a breach.
    """
    return {
        (found.importer, found.module, found.name)
        for found in IMPORTS
        if found.name.startswith("_")
        and not found.name.startswith("__")
        and found.module != found.importer
        and not (
            MODULES[found.importer].name == "__init__.py"
            and _package_of(found.module) == found.importer
        )
    }


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer(module)


def test_every_import_runs_down_the_layers() -> None:
    backwards = sorted(
        f"{importer} (layer {LAYERS[layer(importer)][0]}) imports {imported} "
        f"(layer {LAYERS[layer(imported)][0]})"
        for importer, imported in upward()
    )
    assert backwards == []


def circle_path(component: tuple[str, ...]) -> list[str]:
    """One way round ``component``: from its first module back to it, by imports."""
    start, inside = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(GRAPH[node] & inside):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    raise AssertionError(f"{component} is no circle")


def test_no_import_circle() -> None:
    circles = [
        " -> ".join(circle_path(found)) + f" (all of {', '.join(found)})" for found in cycles()
    ]
    assert circles == []


def test_no_module_imports_another_modules_private_name() -> None:
    found = sorted(
        f"{importer} imports {module}.{name}" for importer, module, name in private_imports()
    )
    assert found == []
