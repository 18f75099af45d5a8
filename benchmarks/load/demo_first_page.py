"""How long `uv run --extra demo python -m bot demo` takes to serve its first page.

Starts the documented command (after `uv sync`) several times, waits for the address it
prints, fetches the front page, and reports the wall time from the command to the page
(target: 10 s on the shared 2-core machine) and the CPU time the command's processes
used by then. Run: uv run python benchmarks/load/demo_first_page.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMMAND = ["uv", "run", "--extra", "demo", "python", "-m", "bot", "demo", "--no-browser"]
ADDRESS = re.compile(r"http://127\.0\.0\.1:\d+/")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children still running (from /proc)."""
    children = subprocess.run(
        ["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False
    ).stdout.split()
    total = 0.0
    for each in [pid, *map(int, children)]:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def one_start() -> tuple[float, float]:
    """(seconds from the command to the front page, CPU seconds used by then)."""
    started = time.monotonic()
    process = subprocess.Popen(
        COMMAND,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            found = ADDRESS.search(line)
            if found:
                break
        else:
            raise SystemExit("the demo ended without printing its address")
        with urllib.request.urlopen(found.group(0), timeout=60) as answer:
            answer.read()
        return time.monotonic() - started, cpu_seconds(process.pid)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)


def main() -> None:
    """Measure and print each start, then the median and the worst."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    walls, cpus = [], []
    for number in range(1, runs + 1):
        wall, cpu = one_start()
        walls.append(wall)
        cpus.append(cpu)
        print(f"start {number}: front page after {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    print(
        f"median {statistics.median(walls):.1f} s wall (worst {max(walls):.1f} s; target 10 s), "
        f"{statistics.median(cpus):.1f} s CPU"
    )


if __name__ == "__main__":
    main()
