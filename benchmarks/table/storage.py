"""One save's latency on each backend: `Storage.save_table` with a move, as every click makes.

Two runs per backend: ``--saves`` saves one table after another (the latency a lone click
sees), then the same number spread over ``--tables`` tables saved concurrently (each table's
saves in order, as its lock makes them). Prints p50/p99 in milliseconds and saves per
second. PostgreSQL is the server CARDTABLE_TEST_DATABASE_URL names, else a temporary one
started from the local binaries with the default durability (fsync on, every commit
flushed); without either it is left out.

    uv run python benchmarks/table/storage.py [--saves 2000] [--tables 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.storage import Storage, TableRecord, open_storage
from tests.backends import (
    URL_VARIABLE,
    TemporaryServer,
    drop_schema,
    fresh_schema,
    postgres_binaries,
)

# A state the size of a running five-player No Thanks! game's JSON.
STATE = {"deck": list(range(3, 27)), "chips": [11] * 5, "cards": [[] for _ in range(5)], "n": 0}


def percentile(values: list[float], share: float) -> float:
    """The value below which ``share`` of the sorted values lie."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def one_table(storage: Storage, channel: int) -> TableRecord:
    """A running table to save moves on."""
    return await storage.create_table(
        TableRecord(
            game="nothanks",
            guild_id=1,
            channel_id=channel,
            host_id=11,
            status="running",
            seats=[11, 22, 33, 44, 55],
            state=dict(STATE),
            meta={"names": {"11": "ana"}},
        )
    )


async def save_moves(storage: Storage, record: TableRecord, count: int, out: list[float]) -> None:
    """Save ``count`` moves on one table, one after another, timing each."""
    for _ in range(count):
        record.move_number += 1
        assert record.state is not None
        record.state["n"] = record.move_number
        started = time.perf_counter()
        await storage.save_table(record, ("11", "take"))
        out.append(time.perf_counter() - started)


async def measure(target: Path | str, saves: int, tables: int) -> list[str]:
    """The two runs on one backend; their report lines."""
    storage = await open_storage(target)
    lines = []
    try:
        for label, count in (("one table", 1), (f"{tables} tables at once", tables)):
            records = [await one_table(storage, 1000 * count + i) for i in range(count)]
            times: list[float] = []
            started = time.perf_counter()
            await asyncio.gather(
                *(save_moves(storage, record, saves // count, times) for record in records)
            )
            wall = time.perf_counter() - started
            p50, p99 = statistics.median(times), percentile(times, 0.99)
            lines.append(
                f"  {label:<20} {len(times):>6} saves  p50 {1000 * p50:7.3f} ms"
                f"  p99 {1000 * p99:7.3f} ms  {len(times) / wall:8.0f} saves/s"
            )
    finally:
        await storage.close()
    return lines


@contextmanager
def postgres_server() -> Iterator[tuple[str, str] | None]:
    """The PostgreSQL server to measure on and how it was found, or None."""
    given = os.environ.get(URL_VARIABLE, "").strip()
    if given:
        yield given, f"the server {URL_VARIABLE} names"
        return
    binaries = postgres_binaries()
    if binaries is None:
        yield None
        return
    server = TemporaryServer(binaries, durable=True)
    try:
        yield server.start(), "a temporary local server, durable commits (fsync on)"
    finally:
        server.stop()


async def main() -> None:
    """Measure both backends and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=2000)
    parser.add_argument("--tables", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print("SQLite (WAL, synchronous=NORMAL), one aiosqlite connection:")
        for line in await measure(Path(folder) / "bench.db", args.saves, args.tables):
            print(line)
    with postgres_server() as found:
        if found is None:
            print("PostgreSQL: no server (set CARDTABLE_TEST_DATABASE_URL or install it)")
            return
        url, where = found
        name, scoped = await fresh_schema(url)
        try:
            print(f"PostgreSQL (asyncpg pool of 10; {where}):")
            for line in await measure(scoped, args.saves, args.tables):
                print(line)
        finally:
            await drop_schema(url, name)


if __name__ == "__main__":
    asyncio.run(main())
