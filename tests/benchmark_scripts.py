"""Benchmark scripts imported by the tests that check them (they are not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(script: str, name: str | None = None) -> ModuleType:
    """benchmarks/<script>.py (e.g. "strength/league") as a module named after its file, or
    ``name``, with its folder importable, as it is when the script runs."""
    path = BENCHMARKS / f"{script}.py"
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # a script imports the scripts beside it by name
    name = name or path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module
