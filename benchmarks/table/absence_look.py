"""The absences' look (`Tables.poll_absences`): what each process of several pays every
ABSENCE_SECONDS (15 s) to hold or release the tables of people who said /cardtable away
through another process.

``--people`` people with settings are written, each with an absence set or ended over
the last 15 days (a third still running), then a process of shard 1 of 2 takes its first
look and the steady look (nothing changed since) is timed ``--rounds`` times. Beside it:
the limit, one round trip to the database (``SELECT 1``), and the baseline a look without
the stamp's index would be, reading every person's absence. Prints medians and worsts in
milliseconds, and the share of a core one look every 15 s costs. PostgreSQL is the server
CARDTABLE_TEST_DATABASE_URL names (a schema of its own), else left out.

    uv run python benchmarks/table/absence_look.py [--people 5000] [--rounds 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import on_both_backends

from bot.storage import Storage, open_storage
from bot.table.shards import ShardSet
from bot.table.tables import ABSENCE_REACH, ABSENCE_SECONDS, Tables

NOW = 1_700_000_000.0
DAY = 86400.0


async def fill(storage: Storage, people: int) -> None:
    """``people`` absences stamped over the last ABSENCE_REACH, 8 writes at a time: every
    third still running, the others over or ended early."""

    async def one(index: int) -> None:
        stamp = NOW - ABSENCE_REACH * (index + 1) / (people + 1)
        until = stamp + 3 * DAY if index % 3 == 0 else None
        await storage.set_user_away(1_000_000 + index, until, 2023, 3, stamp)

    for start in range(0, people, 8):
        await asyncio.gather(*(one(i) for i in range(start, min(start + 8, people))))


async def timed(work: Callable[[], Awaitable[object]], rounds: int) -> list[float]:
    """The seconds each of ``rounds`` runs of ``work`` took."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await work()
        times.append(time.perf_counter() - started)
    return times


async def measure(target: Path | str, people: int, rounds: int) -> list[str]:
    """Fill one backend and time the look, its limit and its baseline; the report lines."""
    storage = await open_storage(target)
    lines = []
    try:
        await fill(storage, people)

        async def ready() -> None:
            await asyncio.Event().wait()

        tables = Tables(storage, clock=lambda: NOW, ready=ready, shards=ShardSet.of(2, [1]))
        started = time.perf_counter()
        await tables.poll_absences()  # the first look: every change of the last 15 days
        first = time.perf_counter() - started

        async def everyone() -> object:
            return await storage.read(
                "SELECT user_id, away_until, away_set_at FROM user_settings"
                " WHERE away_until IS NOT NULL OR away_set_at IS NOT NULL"
            )

        figures = {
            "look (nothing new)": await timed(tables.poll_absences, rounds),
            "limit: SELECT 1": await timed(lambda: storage.read("SELECT 1"), rounds),
            "baseline: read all": await timed(everyone, rounds),
        }
        look = statistics.median(figures["look (nothing new)"])
        for label, times in figures.items():
            median = statistics.median(times)
            lines.append(
                f"  {label:<20} median {1000 * median:8.3f} ms  worst {1000 * max(times):8.3f} ms"
                f"  x{median / look:6.2f} of the look"
                f"  every {ABSENCE_SECONDS:.0f} s: {100 * median / ABSENCE_SECONDS:.4f} % of a core"
            )
        lines.append(f"  first look (start-up, {people} people, no tables): {1000 * first:.0f} ms")
        tables.close()
    finally:
        await storage.close()
    return lines


async def main() -> None:
    """Measure both backends and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    title = f"{args.people} people with absences"
    await on_both_backends(title, lambda where: measure(where, args.people, args.rounds))


if __name__ == "__main__":
    asyncio.run(main())
