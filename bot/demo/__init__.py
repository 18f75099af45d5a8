"""`python -m bot demo`: the real bot inside SimCord, shown in the browser, for trying the
games without a Discord application.

Only `bot/__main__.py` imports this package, and only for the `demo` command: the
production bot never loads SimCord. Its modules import SimCord and aiohttp (the `demo`
extra) at the top, so this file checks they are installed before loading them.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

# What `simcord[preview]` brings; without them the demo cannot serve a page.
NEEDED = ("simcord", "aiohttp", "markdown_it", "linkify_it", "regex")
EXIT_USAGE = 2
MISSING_EXTRA = (
    "cardtable: error: the demo needs the `demo` extra: "
    "run `uv run --extra demo python -m bot demo` (or `pip install 'cardtable[demo]'`)"
)


def missing_modules() -> list[str]:
    """The preview's modules that are not installed."""
    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


def main(argv: Sequence[str]) -> int:
    """Run the demo with these arguments (after `demo`); returns the exit status."""
    if missing_modules():
        print(MISSING_EXTRA, file=sys.stderr)
        return EXIT_USAGE
    from bot.demo.cli import run

    return run(argv)


__all__ = ["EXIT_USAGE", "MISSING_EXTRA", "main", "missing_modules"]
