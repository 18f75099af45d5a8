"""The benchmarks' folders: every script's imports resolve where it runs, and each frozen
AI names the commit it freezes."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from tests.benchmark_scripts import BENCHMARKS

SCRIPTS = sorted(BENCHMARKS.rglob("*.py"))
FROZEN = sorted((BENCHMARKS / "strength" / "frozen").glob("*.py"))


def imported(tree: ast.Module) -> list[str]:
    """Every absolute module name a script imports, at the top or inside a function."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def beside(script: Path, name: str) -> bool:
    """Whether the module is a file or folder in the script's own folder (its sys.path[0])."""
    path = script.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or path.is_dir()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_every_import_is_beside_the_script_or_installed(script: Path) -> None:
    """Run as `uv run python benchmarks/<folder>/<script>.py`, a script finds what it imports
    in its own folder, in the bot (down to the module, which may move) or among the
    installed packages."""
    for name in imported(ast.parse(script.read_text())):
        top = name.split(".")[0]
        if (script.parent / top).is_dir() or (script.parent / f"{top}.py").is_file():
            assert beside(script, name), f"{script.name} imports {name}, not found beside it"
        else:
            assert importlib.util.find_spec(name) is not None, f"{script.name} imports {name}"


def test_the_benchmarks_live_in_their_four_folders() -> None:
    """Nothing at the top of benchmarks/ but the README."""
    folders = {script.relative_to(BENCHMARKS).parts[0] for script in SCRIPTS}
    assert folders == {"engines", "strength", "table", "load"}


@pytest.mark.parametrize("frozen", FROZEN, ids=lambda p: p.name)
def test_each_frozen_ai_names_the_commit_it_freezes(frozen: Path) -> None:
    """The module docstring says which bot/ai file it copies and at which full commit."""
    docstring = ast.get_docstring(ast.parse(frozen.read_text())) or ""
    assert re.search(r"Freezes bot/ai/\w+\.py at commit [0-9a-f]{40}", docstring)
