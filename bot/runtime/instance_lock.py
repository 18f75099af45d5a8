"""One bot process per database: an exclusive lock on `<database>.lock`, held for life.

Two processes on one SQLite file (say, two containers on one volume) would both run the
table timers and overwrite each other's moves. The kernel drops a `flock` when its holder
exits, however it exits, so a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from bot.runtime.settings import ConfigError


class DatabaseInUse(ConfigError):
    """Another process holds the database's instance lock."""

    def __init__(self, database: Path, holder: str) -> None:
        by = f"another cardtable process (pid {holder})" if holder else "another cardtable process"
        super().__init__(
            f"CARDTABLE_DATABASE {database} is in use by {by}; "
            "run one bot per database, or stop the other one first"
        )


def lock_path(database: Path) -> Path:
    """The lock file beside the database, symlinks resolved so every name shares one lock."""
    real = Path(os.path.realpath(database))
    return real.with_name(real.name + ".lock")


class InstanceLock:
    """A held instance lock; release it, or let the process exit."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Give the lock up (again is harmless). The file stays: unlinking it would let a
        newcomer lock a fresh file while a waiter still locks the old one."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> InstanceLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _holder(fd: int) -> str:
    """The pid the holder wrote into the lock file, or "" if it has not yet."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""


# `python -m bot health` holds a shared lock for an instant to probe (is_held): a bot
# starting just then tries again for this long before it calls the database in use.
PROBE_GRACE = 1.0


def is_held(database: Path) -> bool | None:
    """Whether a process holds the database's instance lock; None if there is no lock file.

    A shared lock taken and given back at once: it never keeps the bot from starting, which
    tries again for PROBE_GRACE seconds.
    """
    path = lock_path(database)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return None  # unreadable: nothing can be said
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)  # closing gives back a lock just taken
    return False


def acquire(database: Path) -> InstanceLock:
    """Take the database's instance lock without waiting; raise DatabaseInUse if it is held."""
    path = lock_path(database)
    try:
        # O_CLOEXEC: a child process must never inherit (and so prolong) the lock.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise ConfigError(
            f"CARDTABLE_DATABASE {database}: cannot create lock file {path} ({exc.strerror})"
        ) from None
    give_up_at = time.monotonic() + PROBE_GRACE
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() < give_up_at:
                # Perhaps a health check's probe, which lets go at once.
                time.sleep(0.05)
                continue
            holder = _holder(fd)
            os.close(fd)
            raise DatabaseInUse(database, holder) from None
        except OSError as exc:
            os.close(fd)
            raise ConfigError(
                f"CARDTABLE_DATABASE {database}: cannot lock {path} ({exc.strerror})"
            ) from None
    # Our pid, for the message the next process prints; only the holder ever writes it.
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return InstanceLock(path, fd)
