"""Choose functions that misbehave in a worker process, for the thinking pool's tests.

They are module-level, so a worker imports them by name. The memory they get is a folder
(as a string) where they leave files for the test: "started" when a search begins, and
the marker files that make them misbehave once.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path
from typing import Any


def in_worker() -> bool:
    """Whether this runs in a worker process (not in the test's own process)."""
    return multiprocessing.parent_process() is not None


def plays_highest(view: Any, level: str, rng: random.Random, memory: Any) -> tuple[int, str]:
    """The highest legal card, and which process chose it ("worker" or "here")."""
    return max(view.legal), "worker" if in_worker() else "here"


def dies_once(view: Any, level: str, rng: random.Random, memory: Any) -> tuple[int, str]:
    """Kills its own worker with SIGKILL while the "die" marker exists (removing it first)."""
    marker = Path(memory) / "die"
    if in_worker() and marker.exists():
        marker.unlink()
        os.kill(os.getpid(), signal.SIGKILL)
    return plays_highest(view, level, rng, memory)


def always_dies(view: Any, level: str, rng: random.Random, memory: Any) -> tuple[int, str]:
    """Kills every worker that runs it; plays normally only outside a worker."""
    if in_worker():
        os.kill(os.getpid(), signal.SIGKILL)
    return plays_highest(view, level, rng, memory)


def hangs_once(view: Any, level: str, rng: random.Random, memory: Any) -> tuple[int, str]:
    """Never answers while the "hang" marker exists (removing it first): a stuck search."""
    marker = Path(memory) / "hang"
    if in_worker() and marker.exists():
        marker.unlink()
        while True:
            time.sleep(1)
    return plays_highest(view, level, rng, memory)


def waits_to_be_killed(view: Any, level: str, rng: random.Random, memory: Any) -> tuple[int, str]:
    """Says it started, then thinks until the "release" marker appears (or 60 s pass)."""
    folder = Path(memory)
    # Written whole, then renamed: the test reads the pid as soon as the file exists.
    (folder / "started.part").write_text(str(os.getpid()))
    os.replace(folder / "started.part", folder / "started")
    deadline = time.monotonic() + 60
    while in_worker() and not (folder / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return plays_highest(view, level, rng, memory)


def counts_calls(view: Any, level: str, rng: random.Random, memory: Any) -> int:
    """A choose that updates its memory (a list of the moves it saw), as Rage's does."""
    memory.append(view.move_number)
    return max(view.legal)
