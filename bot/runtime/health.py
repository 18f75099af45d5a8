"""`python -m bot health`: judge the running bot by the heartbeat file it writes.

The bot (bot/client/bot.py) rewrites `<database>.heartbeat` every 30 s with the time, its
pid and beat interval, whether its gateway is connected and whether its database answered
(at once when the database goes away or comes back), and removes it when it stops. This
check runs in a separate process (Docker's HEALTHCHECK), so it reads that file instead of
touching Discord or the database; it also asks whether the beat's process still lives
(its pid, and its instance lock when it holds one).

Liveness is not readiness. A bot whose process runs and whose event loop beats is **alive**
(restarting it would only add a cold start); one that is also connected to Discord and whose
database answers is **ready** (it can serve clicks). Exit statuses of `python -m bot health`:
0 alive and ready, 3 alive but not ready (an outage the bot rides out by itself), 1 not
alive (gone, stuck, or no usable heartbeat). `health --live`, Docker's HEALTHCHECK, exits 0
for alive, ready or not, and 1 otherwise (Docker reserves 2).

This module is imported by the command without discord.py or the rest of the bot, so a
check costs milliseconds, not the second the whole bot takes to import.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.runtime.instance_lock import is_held
from bot.runtime.settings import ConfigError, database_path, load_dotenv

# Three missed beats make the bot stuck or gone; the beat names its interval.
STALE_BEATS = 3
DEFAULT_INTERVAL = 30.0
# The staleness of a beat that names no interval (an older bot's): three beats of 30 s.
STALE_AFTER = STALE_BEATS * DEFAULT_INTERVAL
HEALTHY = 0
UNHEALTHY = 1
# Alive (do not restart it) but not ready (do not send it work): the database or the
# gateway is away, and the bot waits for it by itself.
NOT_READY = 3


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a heartbeat says: whether the bot is alive, whether it is ready, and why not."""

    alive: bool
    ready: bool
    reason: str | None

    def status(self, *, live_only: bool = False) -> int:
        """The exit status: 0, 3 (alive, not ready) or 1; only 0 or 1 for a liveness probe."""
        if not self.alive:
            return UNHEALTHY
        if self.ready or live_only:
            return HEALTHY
        return NOT_READY


def heartbeat_path(database: Path) -> Path:
    """The heartbeat file beside the database: `<database>.heartbeat`."""
    return database.with_name(database.name + ".heartbeat")


def write_heartbeat(path: Path, beat: Mapping[str, object]) -> None:
    """Replace the heartbeat file atomically, so the health check never reads half a beat."""
    # A temporary file of its own for each write: two beats written at once (a periodic one
    # and one for an outage) never interleave their bytes in one file.
    # Imported here: the health command never writes, and tempfile costs it an import.
    import tempfile

    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(json.dumps(dict(beat)))
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def clear_heartbeat(database: Path) -> None:
    """Remove an earlier run's heartbeat, which must not vouch for a bot still logging in."""
    heartbeat_path(database).unlink(missing_ok=True)


def process_lives(pid: int) -> bool:
    """Whether a process with this pid exists (in this pid namespace)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    return True


def check_heartbeat(
    path: Path,
    *,
    now: float,
    lives: Callable[[int], bool] = process_lives,
    lock_held: Callable[[], bool | None] = lambda: None,
) -> str | None:
    """Why the heartbeat at ``path`` is not alive or not ready at ``now``, in one line; None
    if the bot is both (see `judge`)."""
    return judge(path, now=now, lives=lives, lock_held=lock_held).reason


def judge(
    path: Path,
    *,
    now: float,
    lives: Callable[[int], bool] = process_lives,
    lock_held: Callable[[], bool | None] = lambda: None,
) -> Verdict:
    """Whether the bot of the heartbeat at ``path`` is alive and ready at time ``now``.

    ``lives`` tells whether the beat's pid still runs; ``lock_held`` whether the database's
    instance lock is held (None: no lock file), asked only of a beat that says it holds it.
    """

    def dead(reason: str) -> Verdict:
        return Verdict(alive=False, ready=False, reason=reason)

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return dead(f"no heartbeat file {path} (the bot is not running, or not connected yet)")
    except OSError as exc:
        return dead(f"cannot read heartbeat file {path} ({exc.strerror})")
    try:
        beat = json.loads(text)
    except ValueError:
        return dead(f"heartbeat file {path} is not valid JSON")
    if not isinstance(beat, dict):
        return dead(f"heartbeat file {path} is not a heartbeat")
    stamp = beat.get("time")
    try:
        if isinstance(stamp, bool) or not isinstance(stamp, int | float):
            raise TypeError(stamp)
        age = now - float(stamp)
    except (TypeError, OverflowError):
        age = math.nan
    if not math.isfinite(age):
        return dead(f"heartbeat file {path} has no valid time")
    pid = beat.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and not lives(pid):
        return dead(f"the bot (pid {pid}) is not running: its last heartbeat is {age:.0f} s old")
    if beat.get("instance_lock") is True and lock_held() is False:
        return dead(f"the bot (pid {pid}) is not running: its database's instance lock is free")
    stale_after = STALE_BEATS * _interval(beat)
    # A beat from far in the future (a clock jump) proves nothing about the present.
    if not -stale_after <= age <= stale_after:
        return dead(
            f"last heartbeat {age:.0f} s ago (more than {stale_after:.0f} s): bot stuck or stopped"
        )
    # From here the bot lives and its loop beats: what is missing is only readiness.
    if beat.get("connected") is not True:
        return Verdict(True, False, "the bot's gateway connection to Discord is down")
    if beat.get("database") is not True:
        since = beat.get("database_down_since")
        if isinstance(since, int | float) and not isinstance(since, bool) and math.isfinite(since):
            return Verdict(True, False, f"database down (for {max(now - since, 0.0):.0f} s)")
        return Verdict(
            True, False, "database down (it did not answer, or was away since the last beat)"
        )
    return Verdict(alive=True, ready=True, reason=None)


def _interval(beat: Mapping[str, object]) -> float:
    """The beat interval a heartbeat names (the default for an older bot's)."""
    interval = beat.get("interval")
    if isinstance(interval, bool) or not isinstance(interval, int | float):
        return DEFAULT_INTERVAL
    if not math.isfinite(interval) or interval <= 0:
        return DEFAULT_INTERVAL
    return float(interval)


def run(*, live_only: bool = False) -> int:
    """The `health` command: one line on the outcome; status 0, 3 or 1 (0 or 1 with
    ``live_only``, the liveness probe)."""
    try:
        # Only the database path is needed: no token, no write test, no lock.
        load_dotenv(Path(".env"), os.environ)
        database = database_path(os.environ)
    except ConfigError as error:
        print(f"cardtable: unhealthy: {error}", file=sys.stderr)
        return UNHEALTHY
    verdict = judge(heartbeat_path(database), now=time.time(), lock_held=lambda: is_held(database))
    status = verdict.status(live_only=live_only)
    if not verdict.alive:
        print(f"cardtable: unhealthy: {verdict.reason}", file=sys.stderr)
    elif not verdict.ready:
        # To stdout when it passes (a liveness probe), to stderr when it fails.
        out = sys.stdout if live_only else sys.stderr
        print(f"cardtable: alive, not ready: {verdict.reason}", file=out)
    else:
        print("cardtable: healthy: gateway connected, database answering")
    return status
