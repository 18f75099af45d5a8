"""Python heap in use, on request: for memory per running table without allocator noise."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import tracemalloc
from pathlib import Path


def trace_on_signal(out: Path) -> None:
    """Trace allocations; on SIGUSR1 collect garbage and dump a snapshot to ``out``."""
    tracemalloc.start(1)

    def write(signum: int, frame: object) -> None:
        gc.collect()
        partial = out.with_suffix(".partial")
        tracemalloc.take_snapshot().dump(str(partial))
        partial.replace(out)  # whole, or not there

    signal.signal(signal.SIGUSR1, write)


async def snapshot_of(pid: int, out: Path) -> tracemalloc.Snapshot:
    """Ask the process for a snapshot and wait for it."""
    await asyncio.to_thread(out.unlink, missing_ok=True)
    os.kill(pid, signal.SIGUSR1)
    for _ in range(600):
        if await asyncio.to_thread(out.exists):
            return await asyncio.to_thread(tracemalloc.Snapshot.load, str(out))
        await asyncio.sleep(0.1)
    raise TimeoutError(f"no heap snapshot from {pid}")


def traced_bytes(snapshot: tracemalloc.Snapshot) -> int:
    """Bytes in use in a snapshot."""
    return sum(stat.size for stat in snapshot.statistics("filename"))


def growth(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, top: int) -> list[str]:
    """Where the heap grew most between two snapshots, by line."""
    lines = []
    for stat in after.compare_to(before, "lineno")[:top]:
        frame = stat.traceback[0]
        name = frame.filename.split("site-packages/")[-1].split("wt-clickpath/")[-1]
        lines.append(f"{stat.size_diff / 1024:9.1f} KB {stat.count_diff:7d}  {name}:{frame.lineno}")
    return lines
