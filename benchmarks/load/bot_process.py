"""The real cardtable bot (``python -m bot``), pointed at the fake Discord.

Run by ``run.py`` as a subprocess: the settings come from the environment as in
production (a temporary SQLite database), and the bot loads its real cogs. With
``--profile FILE`` it runs under cProfile and writes the profile when it stops; with
``--tracemalloc FILE`` it traces Python allocations and, on SIGUSR1, writes the memory in
use after a full collection (and where it was allocated) to FILE.
"""

from __future__ import annotations

import argparse
import cProfile
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from heap import trace_on_signal
from wire import point_at

from bot.__main__ import main


def run() -> int:
    """Patch the URLs, then run the bot's own entry point."""
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("--profile", default=None)
    parser.add_argument("--tracemalloc", default=None)
    args = parser.parse_args()
    point_at(args.base_url)
    if args.tracemalloc is not None:
        trace_on_signal(Path(args.tracemalloc))
    if args.profile is None:
        return main(["run"])
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        return main(["run"])
    finally:
        profiler.disable()
        profiler.dump_stats(args.profile)


if __name__ == "__main__":
    sys.exit(run())
