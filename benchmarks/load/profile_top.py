"""The top entries of a py-spy ``--format raw`` profile: self time and inclusive time.

Run: ``uv run python benchmarks/load/profile_top.py FILE [--top 10]``
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

# py-spy frames read "function (file:line)"; the line differs per call site, so drop it.
LINE = re.compile(r":\d+\)$")


# Frames every sample of the event loop passes through: left out of the inclusive list.
FRAMEWORK = (
    "<module>",
    "run (",
    "main (bot/__main__.py)",
    "Client.run",
    "Runner.run",
    "BaseEventLoop.",
    "Handle._run",
    "Thread.",
)


def frame_name(frame: str) -> str:
    """A frame without its line number, with the path shortened to the package."""
    frame = LINE.sub(")", frame)
    for marker in ("site-packages/", "wt-clickpath/", "python3.11/"):
        if marker in frame:
            head, _, tail = frame.partition("(")
            frame = head + "(" + tail.split(marker, 1)[1]
    return frame


def top(path: Path, count: int) -> tuple[list[tuple[str, float]], list[tuple[str, float]], int]:
    """Self and inclusive shares of the samples, highest first, and the sample count."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, number = line.rpartition(" ")
        if not stack or not number.isdigit():
            continue  # a line py-spy --nonblocking tore while the process ran on
        samples = int(number)
        frames = [frame_name(f) for f in stack.split(";")]
        if not frames:
            continue
        total += samples
        own[frames[-1]] += samples
        for frame in set(frames):
            if not frame.startswith(FRAMEWORK):
                inclusive[frame] += samples
    share = 100.0 / max(1, total)
    return (
        [(f, n * share) for f, n in own.most_common(count)],
        [(f, n * share) for f, n in inclusive.most_common(count)],
        total,
    )


def main() -> None:
    """Print both tables."""
    parser = argparse.ArgumentParser()
    parser.add_argument("file", type=Path)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    own, inclusive, total = top(args.file, args.top)
    print(f"{total} samples; self time:")
    for frame, percent in own:
        print(f"  {percent:5.1f}%  {frame}")
    print("inclusive time:")
    for frame, percent in inclusive:
        print(f"  {percent:5.1f}%  {frame}")


if __name__ == "__main__":
    main()
