"""Two real bot processes on one PostgreSQL database, each running its own shard of two.

Each process is tests/e2e/shard_process.py: the real bot on SimCord, in an OS process
of its own. They play at once, restart mid-game, and never see each other's table; a
third process asking for a shard already run refuses to start, and so does one that
splits the guilds into another number of shards; a process killed mid-game
is replaced by one that takes its shard over and finishes its game.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg

from bot.storage import open_storage
from bot.storage.postgres import LOCK_KEY
from tests.runtime.test_cli import clean_environment

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 240


def start(url: str, shard: int, phase: str = "play", count: int = 2) -> subprocess.Popen[str]:
    """A bot process for one shard of ``count``, talking JSON lines on stdout."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.shard_process", url, str(shard), phase, str(count)],
        cwd=REPO,
        env=clean_environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def next_event(process: subprocess.Popen[str], event: str) -> dict[str, Any]:
    """The next line the process prints; it must be ``event``."""
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        _, errors = process.communicate(timeout=TIMEOUT)
        raise AssertionError(f"process ended before {event!r}: {errors[-3000:]}")
    said: dict[str, Any] = json.loads(line)
    assert said["event"] == event, said
    return said


def go(process: subprocess.Popen[str]) -> None:
    """Let a process go on past its first three moves."""
    assert process.stdin is not None
    process.stdin.write("go\n")
    process.stdin.flush()


def ended(process: subprocess.Popen[str]) -> int:
    """Wait for a process to exit; its status."""
    return process.wait(timeout=TIMEOUT)


def stored_game(url: str, table_id: int) -> tuple[str, int, list[int]]:
    """A table's status, move number and logged move numbers, read from the database."""

    async def read() -> tuple[str, int, list[int]]:
        storage = await open_storage(url)
        try:
            record = await storage.get_table(table_id)
            assert record is not None
            moves = [number for number, _, _ in await storage.moves(table_id)]
            return record.status, record.move_number, moves
        finally:
            await storage.close()

    return asyncio.run(read())


def wait_for_release(url: str, shard: int) -> None:
    """Wait until the server has noticed a killed process and dropped its shard's lock."""

    async def wait() -> None:
        connection = await asyncpg.connect(url)
        try:
            for _ in range(200):
                held = await connection.fetchval(
                    "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory'"
                    " AND classid = $1 AND objid = $2",
                    LOCK_KEY,
                    shard,
                )
                if held == 0:
                    return
                await asyncio.sleep(0.05)
            raise AssertionError(f"shard {shard} is still claimed after its process died")
        finally:
            await connection.close()

    asyncio.run(wait())


def finished_cleanly(url: str, said: dict[str, Any]) -> None:
    """The game a process reported as finished is finished in the database, every move
    logged once and in order."""
    status, moves, logged = stored_game(url, said["table"])
    assert (status, moves) == ("finished", said["moves"])
    assert logged == list(range(1, moves + 1))


def test_two_processes_play_their_own_shards_at_once(postgres_url: str) -> None:
    """Shards 0 and 1 in two processes: both play, restart and finish; neither restores,
        times or refreshes the other's table; a second claimant of a shard cannot start, nor can
    a process with another shard count."""
    processes = [start(postgres_url, 0), start(postgres_url, 1)]
    try:
        opened = [next_event(process, "opened") for process in processes]
        assert opened[0]["table"] != opened[1]["table"]

        third = start(postgres_url, 1)
        assert ended(third) == 2
        assert third.stderr is not None
        assert "shard 1 already claimed" in third.stderr.read()
        # Shard 3 of 4 is claimed by nobody, but its guilds are in shard 1 of 2.
        other_count = start(postgres_url, 3, count=4)
        assert ended(other_count) == 2
        assert other_count.stderr is not None
        assert "another cardtable process on this database runs SHARD_COUNT=2" in (
            other_count.stderr.read()
        )

        for process in processes:
            go(process)
        restored = [next_event(process, "restored") for process in processes]
        # Each restarted bot took back its own table only, though both were open.
        assert [said["tables"] for said in restored] == [[said["table"]] for said in opened]
        finished = [next_event(process, "finished") for process in processes]
        for said, before in zip(finished, opened, strict=True):
            assert said["table"] == before["table"]
            assert said["title"] == "No Thanks! — final scores"
            assert said["registry"] == []
            finished_cleanly(postgres_url, said)
        assert [ended(process) for process in processes] == [0, 0]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.communicate()


def test_a_killed_process_is_replaced_mid_game(postgres_url: str) -> None:
    """Process 1 dies mid-game (SIGKILL: no goodbye to the database); its replacement
    claims shard 1 at once, restores only shard 1's game and finishes it, while process 0
    plays its own game to the end."""
    survivor, victim = start(postgres_url, 0), start(postgres_url, 1)
    replacement: subprocess.Popen[str] | None = None
    try:
        kept = next_event(survivor, "opened")
        lost = next_event(victim, "opened")
        os.kill(victim.pid, signal.SIGKILL)
        assert ended(victim) == -signal.SIGKILL
        go(survivor)
        wait_for_release(postgres_url, 1)
        replacement = start(postgres_url, 1, "resume")
        assert next_event(replacement, "restored")["tables"] == [lost["table"]]
        taken_over = next_event(replacement, "finished")
        assert taken_over["table"] == lost["table"] and taken_over["moves"] > lost["moves"]
        finished_cleanly(postgres_url, taken_over)
        assert next_event(survivor, "restored")["tables"] == [kept["table"]]
        finished_cleanly(postgres_url, next_event(survivor, "finished"))
        assert [ended(survivor), ended(replacement)] == [0, 0]
    finally:
        for process in (survivor, victim, replacement):
            if process is not None:
                if process.poll() is None:
                    process.kill()
                process.communicate()
