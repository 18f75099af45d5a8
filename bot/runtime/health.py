"""`python -m bot health`: judge the running bot by the heartbeat file it writes.

The bot (bot/client/bot.py) rewrites `<database>.heartbeat` every 30 s with the time, its
pid and beat interval, whether its gateway is connected and whether its database answered
(at once when the database goes away or comes back), and removes it when it stops. This
check runs in a separate process (Docker's HEALTHCHECK), so it reads that file instead of
touching Discord or the database; it also asks whether the beat's process still lives
(its pid, and its instance lock when it holds one). Exit statuses: 0 healthy, 1 not
(Docker reserves 2).
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
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


def heartbeat_path(database: Path) -> Path:
    """The heartbeat file beside the database: `<database>.heartbeat`."""
    return database.with_name(database.name + ".heartbeat")


def write_heartbeat(path: Path, beat: Mapping[str, object]) -> None:
    """Replace the heartbeat file atomically, so the health check never reads half a beat."""
    # A temporary file of its own for each write: two beats written at once (a periodic one
    # and one for an outage) never interleave their bytes in one file.
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
    """Why the heartbeat at ``path`` is unhealthy at time ``now``, in one line; None if well.

    ``lives`` tells whether the beat's pid still runs; ``lock_held`` whether the database's
    instance lock is held (None: no lock file), asked only of a beat that says it holds it.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"no heartbeat file {path} (the bot is not running, or not connected yet)"
    except OSError as exc:
        return f"cannot read heartbeat file {path} ({exc.strerror})"
    try:
        beat = json.loads(text)
    except ValueError:
        return f"heartbeat file {path} is not valid JSON"
    if not isinstance(beat, dict):
        return f"heartbeat file {path} is not a heartbeat"
    stamp = beat.get("time")
    try:
        if isinstance(stamp, bool) or not isinstance(stamp, int | float):
            raise TypeError(stamp)
        age = now - float(stamp)
    except (TypeError, OverflowError):
        age = math.nan
    if not math.isfinite(age):
        return f"heartbeat file {path} has no valid time"
    pid = beat.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and not lives(pid):
        return f"the bot (pid {pid}) is not running: its last heartbeat is {age:.0f} s old"
    if beat.get("instance_lock") is True and lock_held() is False:
        return f"the bot (pid {pid}) is not running: its database's instance lock is free"
    stale_after = STALE_BEATS * _interval(beat)
    # A beat from far in the future (a clock jump) proves nothing about the present.
    if not -stale_after <= age <= stale_after:
        return (
            f"last heartbeat {age:.0f} s ago (more than {stale_after:.0f} s): bot stuck or stopped"
        )
    if beat.get("connected") is not True:
        return "the bot's gateway connection to Discord is down"
    if beat.get("database") is not True:
        since = beat.get("database_down_since")
        if isinstance(since, int | float) and not isinstance(since, bool) and math.isfinite(since):
            return f"database down (for {max(now - since, 0.0):.0f} s)"
        return "database down (it did not answer, or was away since the last beat)"
    return None


def _interval(beat: Mapping[str, object]) -> float:
    """The beat interval a heartbeat names (the default for an older bot's)."""
    interval = beat.get("interval")
    if isinstance(interval, bool) or not isinstance(interval, int | float):
        return DEFAULT_INTERVAL
    if not math.isfinite(interval) or interval <= 0:
        return DEFAULT_INTERVAL
    return float(interval)


def run() -> int:
    """The `health` command: one line on the outcome, status 0 or 1."""
    try:
        # Only the database path is needed: no token, no write test, no lock.
        load_dotenv(Path(".env"), os.environ)
        database = database_path(os.environ)
    except ConfigError as error:
        print(f"cardtable: unhealthy: {error}", file=sys.stderr)
        return UNHEALTHY
    reason = check_heartbeat(
        heartbeat_path(database), now=time.time(), lock_held=lambda: is_held(database)
    )
    if reason is not None:
        print(f"cardtable: unhealthy: {reason}", file=sys.stderr)
        return UNHEALTHY
    print("cardtable: healthy: gateway connected, database answering")
    return HEALTHY
