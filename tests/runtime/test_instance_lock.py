"""One bot process per database: the lock module, and two real processes on one file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.runtime.instance_lock import DatabaseInUse, acquire, lock_path
from bot.runtime.settings import ConfigError
from tests.runtime.test_cli import EXIT_CONFIG, REPO, TOKEN, clean_environment, run_bot

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX-only")

# A stand-in for a running bot: it takes the same lock the bot takes, says so, and sleeps
# (the real bot would need the network to log in, and there is none here).
HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from bot.runtime.instance_lock import acquire
    lock = acquire(Path(sys.argv[1]))
    print("locked", flush=True)
    time.sleep(120)
    """
)


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A separate process holding the instance lock of tmp_path/cardtable.db until killed."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "cardtable.db")],
        cwd=REPO,
        env=clean_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "locked"
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


# -- the module ---------------------------------------------------------------------------


def test_lock_file_is_beside_the_database(tmp_path: Path) -> None:
    """The lock file is `<database>.lock` in the database's folder."""
    assert lock_path(tmp_path / "cardtable.db") == (tmp_path / "cardtable.db.lock").resolve()


def test_lock_follows_symlinks(tmp_path: Path) -> None:
    """Two names for one database share one lock."""
    (tmp_path / "real.db").touch()
    (tmp_path / "alias.db").symlink_to(tmp_path / "real.db")
    assert lock_path(tmp_path / "alias.db") == lock_path(tmp_path / "real.db")


def test_second_acquire_is_refused(tmp_path: Path) -> None:
    """While one holder has the lock, another is refused with a one-line config error."""
    database = tmp_path / "cardtable.db"
    with acquire(database), pytest.raises(DatabaseInUse) as caught:
        acquire(database)
    message = str(caught.value)
    assert isinstance(caught.value, ConfigError)
    assert str(database) in message
    assert f"pid {os.getpid()}" in message
    assert "\n" not in message


def test_released_lock_can_be_taken_again(tmp_path: Path) -> None:
    """After release, the next acquire succeeds; the lock file stays (deleting it races)."""
    database = tmp_path / "cardtable.db"
    first = acquire(database)
    first.release()
    first.release()  # releasing twice is harmless
    with acquire(database):
        assert lock_path(database).exists()


def test_other_databases_are_independent(tmp_path: Path) -> None:
    """A lock on one database does not block another database in the same folder."""
    with acquire(tmp_path / "a.db"), acquire(tmp_path / "b.db"):
        pass


def test_lock_records_the_holder(tmp_path: Path) -> None:
    """The lock file names the holding process, for the refusal message."""
    database = tmp_path / "cardtable.db"
    with acquire(database):
        assert lock_path(database).read_text(encoding="utf-8").strip() == str(os.getpid())


def test_lock_in_another_process_blocks_this_one(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    """The lock holds across processes, not only within one."""
    with pytest.raises(DatabaseInUse, match=f"pid {holder.pid}"):
        acquire(tmp_path / "cardtable.db")


def test_lock_is_freed_when_the_holder_dies(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    """A killed holder (no clean shutdown) frees the lock: the kernel drops it."""
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    with acquire(tmp_path / "cardtable.db"):
        pass


# -- two real processes -------------------------------------------------------------------


def test_second_bot_process_refuses_to_start(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    """`python -m bot` on a database another process runs on: one line, status 2; the first
    keeps running, and once it is gone a new process can take the database."""
    database = tmp_path / "cardtable.db"
    result = run_bot(tmp_path, DISCORD_TOKEN=TOKEN, CARDTABLE_DATABASE=str(database))
    assert result.returncode == EXIT_CONFIG, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cardtable: error:")
    assert str(database) in lines[0]
    assert f"pid {holder.pid}" in lines[0]
    assert TOKEN not in lines[0]
    assert result.stdout == ""
    assert holder.poll() is None  # the first process is untouched

    holder.kill()
    holder.wait(timeout=30)
    taker = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from bot.runtime.instance_lock import acquire; "
            "acquire(Path(sys.argv[1])); print('locked')",
            str(database),
        ],
        cwd=REPO,
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert taker.returncode == 0, taker.stderr
    assert taker.stdout.strip() == "locked"


def test_health_does_not_need_the_lock(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    """`python -m bot health` runs beside the bot: it reports, it is not refused."""
    result = run_bot(tmp_path, "health", CARDTABLE_DATABASE=str(tmp_path / "cardtable.db"))
    assert result.returncode == 1  # no heartbeat yet, but not the lock error (status 2)
    assert "in use" not in result.stderr
