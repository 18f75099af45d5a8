"""The metrics' count of open tables: `Storage.open_table_counts`, one grouped query by game
and status, as the bot runs it every 30 s in the background (bot/client/watching.py).

``--open`` open tables (lobbies and running games over 64 guilds) and as many finished
ones are written, then the count is timed ``--rounds`` times for every shard (no filter)
and for one shard of four. Prints the median and the worst in milliseconds, and the share
of a core that one count every 30 s costs. PostgreSQL is the server
CARDTABLE_TEST_DATABASE_URL names (a schema of its own), else left out.

    uv run python benchmarks/table/open_counts.py [--open 5000] [--rounds 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import on_both_backends

from bot.storage import Storage, TableRecord, open_storage

EVERY = 30.0  # seconds between two counts (bot.client.watching.COUNT_EVERY)


async def fill(storage: Storage, count: int) -> None:
    """``count`` open tables and as many finished ones, over 64 guilds, 8 at a time."""
    statuses = ("lobby", "running", "finished", "finished")

    async def one(index: int) -> None:
        await storage.create_table(
            TableRecord(
                game="nothanks" if index % 3 else "rage",
                guild_id=(index % 64) << 22,
                channel_id=10_000 + index,
                host_id=11,
                status=statuses[index % 4],
                seats=[11, 22, 33],
                state={"n": index},
            )
        )

    for start in range(0, 2 * count, 8):
        await asyncio.gather(*(one(i) for i in range(start, min(start + 8, 2 * count))))


async def measure(target: Path | str, count: int, rounds: int) -> list[str]:
    """Fill one backend and time its counts; the report lines."""
    storage = await open_storage(target)
    lines = []
    try:
        await fill(storage, count)
        for label, shards in (("every shard", None), ("one shard of 4", (4, [1]))):
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                if shards is None:
                    counted = await storage.open_table_counts()
                else:
                    counted = await storage.open_table_counts(*shards)
                times.append(time.perf_counter() - started)
            median = statistics.median(times)
            lines.append(
                f"  {label:<15} {sum(counted.values()):>6} open  median {1000 * median:7.3f} ms"
                f"  worst {1000 * max(times):7.3f} ms  every {EVERY:.0f} s:"
                f" {100 * median / EVERY:.4f} % of a core"
            )
    finally:
        await storage.close()
    return lines


async def main() -> None:
    """Measure both backends and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--open", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    title = f"{args.open} open and {args.open} finished tables"
    await on_both_backends(title, lambda where: measure(where, args.open, args.rounds))


if __name__ == "__main__":
    asyncio.run(main())
