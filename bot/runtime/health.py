"""`python -m bot health`: judge the running bot by the heartbeat file it writes.

The bot (bot/client/bot.py) rewrites `<database>.heartbeat` every 30 s with the time, whether its
gateway is connected and whether its database answered. This check runs in a separate
process (Docker's HEALTHCHECK), so it reads that file instead of touching Discord or
taking the database's locks. Exit statuses: 0 healthy, 1 not (Docker reserves 2).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from bot.runtime.settings import ConfigError, database_path, load_dotenv

# Three missed beats (at 30 s each) make the bot stuck or gone.
STALE_AFTER = 90.0
HEALTHY = 0
UNHEALTHY = 1


def heartbeat_path(database: Path) -> Path:
    """The heartbeat file beside the database: `<database>.heartbeat`."""
    return database.with_name(database.name + ".heartbeat")


def write_heartbeat(path: Path, beat: Mapping[str, object]) -> None:
    """Replace the heartbeat file atomically, so the health check never reads half a beat."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(dict(beat)), encoding="utf-8")
    os.replace(temporary, path)


def clear_heartbeat(database: Path) -> None:
    """Remove an earlier run's heartbeat, which must not vouch for a bot still logging in."""
    heartbeat_path(database).unlink(missing_ok=True)


def check_heartbeat(path: Path, *, now: float) -> str | None:
    """Why the heartbeat at ``path`` is unhealthy at time ``now``, in one line; None if well."""
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
    # A beat from far in the future (a clock jump) proves nothing about the present.
    if not -STALE_AFTER <= age <= STALE_AFTER:
        return (
            f"last heartbeat {age:.0f} s ago (more than {STALE_AFTER:.0f} s): bot stuck or stopped"
        )
    if beat.get("connected") is not True:
        return "the bot's gateway connection to Discord is down"
    if beat.get("database") is not True:
        return "the bot's database did not answer"
    return None


def run() -> int:
    """The `health` command: one line on the outcome, status 0 or 1."""
    try:
        # Only the database path is needed: no token, no write test, no lock.
        load_dotenv(Path(".env"), os.environ)
        database = database_path(os.environ)
    except ConfigError as error:
        print(f"cardtable: unhealthy: {error}", file=sys.stderr)
        return UNHEALTHY
    reason = check_heartbeat(heartbeat_path(database), now=time.time())
    if reason is not None:
        print(f"cardtable: unhealthy: {reason}", file=sys.stderr)
        return UNHEALTHY
    print("cardtable: healthy: gateway connected, database answering")
    return HEALTHY
