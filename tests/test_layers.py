"""Imports point one way, one package per layer, and no module imports itself in a circle.

engines ← ai ← table ← queries ← games ← render ← client ← cogs, with records and storage
under the table, i18n under render, and runtime beside the client (docs/architecture.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "cogs")

# Each layer (a package of bot/, or cogs/) and the first-party packages it may import;
# anything not listed is forbidden.
LAYERS: dict[str, tuple[str, ...]] = {
    "bot/engines": ("bot.engines",),
    "bot/ai": ("bot.engines", "bot.ai"),
    "bot/records": ("bot.records",),
    # Prometheus metrics: the families every layer records to, and their HTTP server.
    "bot/metrics": ("bot.metrics",),
    "bot/storage": ("bot.records", "bot.storage", "bot.metrics"),
    "bot/table": (
        "bot.engines",
        "bot.ai",
        "bot.records",
        "bot.storage",
        "bot.table",
        "bot.metrics",
    ),
    # Read-side queries of the records (stats, leaderboards, history): no Discord.
    "bot/queries": ("bot.records", "bot.storage", "bot.table", "bot.queries"),
    "bot/i18n": ("bot.i18n",),
    "bot/render": (
        "bot.engines",
        "bot.records",
        "bot.table",
        "bot.i18n",
        "bot.queries",
        "bot.render",
        "bot.metrics",
    ),
    # Each game's spec: its engine, renderer and computer player, tied for the table core.
    "bot/games": ("bot.engines", "bot.ai", "bot.table", "bot.render", "bot.games"),
    "bot/runtime": ("bot.runtime",),
    "bot/client": (
        "bot.engines",
        "bot.table",
        "bot.storage",
        "bot.queries",
        "bot.i18n",
        "bot.render",
        "bot.runtime",
        "bot.client",
        "bot.metrics",
    ),
    "cogs": ("bot", "cogs"),
    # `python -m bot demo`: the whole bot inside SimCord, shown in the browser.
    "bot/demo": (
        "bot.engines",
        "bot.ai",
        "bot.table",
        "bot.i18n",
        "bot.render",
        "bot.runtime",
        "bot.client",
        "bot.demo",
    ),
    "bot/__main__.py": ("bot.runtime", "bot.storage", "bot.client", "bot.demo"),
}
# The only layer that may load SimCord (an optional extra), and the only one that may
# import it: the running bot never does.
DEMO = "bot/demo"
# Layers that run without Discord (the thinking pool's workers import some of them).
PURE = ("bot/engines", "bot/ai", "bot/records", "bot/storage", "bot/table", "bot/queries")


def module_name(path: Path) -> str:
    """The dotted module name of a first-party file (a package is its __init__)."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    """Whether a file is a package's __init__."""
    return path.name == "__init__.py"


def all_modules() -> dict[str, Path]:
    """Every first-party module by dotted name."""
    return {
        module_name(path): path
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
    }


def modules_imported(path: Path, known: frozenset[str] = frozenset()) -> set[str]:
    """Every module a file imports, wherever the import stands (inside functions and
    under TYPE_CHECKING too); `from a import b` names a.b where that is a known module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path).split(".") if path.is_relative_to(REPO) else []
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # A relative import counts from the module's package.
                base = here if is_package(path) else here[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            submodules = {f"{origin}.{alias.name}" for alias in node.names}
            named = submodules & known
            found.update(named)
            if named != submodules or not named:
                found.add(origin)
    return found


def files_of(layer: str) -> list[Path]:
    """The Python files of a layer (a folder or one module)."""
    path = REPO / layer
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def first_party(module: str) -> bool:
    """Whether a module is the bot's own."""
    return module.split(".")[0] in PACKAGES


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module, or that import themselves."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                cycles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def import_graph() -> dict[str, set[str]]:
    """Which first-party modules each first-party module imports."""
    modules = all_modules()
    known = frozenset(modules)
    return {
        name: {m for m in modules_imported(path, known) if m in known}
        for name, path in modules.items()
    }


def test_every_package_is_a_layer() -> None:
    """bot/ holds only packages (each a layer listed here) besides __init__ and __main__."""
    loose = sorted(
        path.name
        for path in (REPO / "bot").glob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    )
    packages = sorted(
        f"bot/{path.name}"
        for path in (REPO / "bot").iterdir()
        if path.is_dir() and (path / "__init__.py").exists()
    )
    assert loose == []
    assert packages == sorted(
        layer for layer in LAYERS if layer.startswith("bot/") and "." not in layer
    )


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layer_imports_point_one_way(layer: str) -> None:
    """A layer imports only the layers below it (and never a cog)."""
    allowed = LAYERS[layer]
    known = frozenset(all_modules())
    wrong = [
        f"{path.relative_to(REPO)} imports {module}"
        for path in files_of(layer)
        for module in modules_imported(path, known)
        if first_party(module)
        and not any(module == a or module.startswith(a + ".") for a in allowed)
    ]
    assert wrong == []


@pytest.mark.parametrize("layer", PURE)
def test_pure_layers_never_touch_discord(layer: str) -> None:
    """Engines, computer players, the table core and its queries run without Discord."""
    wrong = [
        f"{path.relative_to(REPO)} imports {module}"
        for path in files_of(layer)
        for module in modules_imported(path)
        if module.split(".")[0] in ("discord", "aiohttp")
    ]
    assert wrong == []


def test_no_import_cycles() -> None:
    """No first-party module reaches itself through its imports, counting imports inside
    functions and under TYPE_CHECKING (a package's __init__ re-exporting is no cycle)."""
    assert import_cycles(import_graph()) == []


def test_cycle_finder_sees_a_cycle_through_a_function_import(tmp_path: Path) -> None:
    """The cycle test can fail: a lazy import inside a function closes a circle."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    lazy = tmp_path / "lazy.py"
    lazy.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from bot.table import spec\n"
        "def f():\n    from bot.storage.base import Storage\n"
    )
    assert {"bot.table.spec", "bot.storage.base"} <= modules_imported(
        lazy, frozenset({"bot.table.spec"})
    )


def test_client_imports_no_cog() -> None:
    """The bot loads cogs as extensions by name; the client imports none of them."""
    wrong = [
        f"{path.relative_to(REPO)} imports {m}"
        for path in files_of("bot/client")
        for m in modules_imported(path)
        if m.startswith("cogs")
    ]
    assert wrong == []


def test_only_the_cli_imports_the_demo() -> None:
    """Nothing but `python -m bot demo` reaches bot.demo, and only bot.demo loads SimCord."""
    known = frozenset(all_modules())
    others = [
        path
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if not path.is_relative_to(REPO / DEMO) and path != REPO / "bot/__main__.py"
    ]
    wrong = [
        f"{path.relative_to(REPO)} imports {module}"
        for path in [*others, REPO / "bot/__main__.py"]
        for module in modules_imported(path, known)
        if module.split(".")[0] == "simcord"
        or (path != REPO / "bot/__main__.py" and module.startswith("bot.demo"))
    ]
    assert wrong == []
