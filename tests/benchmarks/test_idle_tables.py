"""The idle-table benchmarks of issue 42 at a tiny size: the filler, and each measurement
on the real bot process against the fake Discord (so the scripts do not rot)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from types import ModuleType

from tests.benchmark_scripts import load


def idle_fill() -> ModuleType:
    """benchmarks/load/idle_fill.py as a module."""
    return load("load/idle_fill")


def idle_tables() -> ModuleType:
    """benchmarks/load/idle_tables.py as a module (it imports run.py and the fill)."""
    return load("load/idle_tables")


async def test_the_filler_writes_waiting_mid_game_tables(tmp_path: Path) -> None:
    """Both games, every table running and awaiting only people, its stored deadline the
    planned one (hours to days away, past the slash command's 600 s cap), and the move
    log complete from move 1 to the table's move number."""
    fill = idle_fill()
    from bot.storage import open_storage

    path = tmp_path / "idle.db"
    storage = await open_storage(path)
    try:
        now = time.time()
        planned = fill.plan(40, guilds=[1, 2], seed=3, due=fill.idle_due(now))
        written = await fill.fill(storage, planned, concurrency=8)
    finally:
        await storage.close()
    assert [each.planned.index for each in written] == list(range(40))
    with sqlite3.connect(path) as db:
        rows = {
            row[0]: row[1:]
            for row in db.execute("SELECT id, game, status, move_number, options, meta FROM tables")
        }
        logged = dict(db.execute("SELECT table_id, COUNT(*) FROM moves GROUP BY table_id"))
        numbers = db.execute("SELECT table_id, MIN(move_number), MAX(move_number) FROM moves")
        assert all(low >= 1 for _, low, _ in numbers)
    assert {game for game, *_ in rows.values()} == {"nothanks", "rage"}
    for each in written:
        game, status, move_number, options, meta = rows[each.table_id]
        assert game == each.planned.game
        assert status == "running" and move_number == each.move_number >= 1
        assert logged[each.table_id] == move_number
        assert json.loads(options)["turn_seconds"] > 600
        turn = json.loads(meta)["turn"]
        assert turn["deadline"] == each.deadline == each.planned.due
        assert now + fill.HOUR <= turn["deadline"] <= now + 3 * fill.DAY
        assert each.acting and all(int(player) > 0 for player in each.acting)


async def test_startup_measures_the_real_bot() -> None:
    """A start on a few tables: ready after a positive time, with its resident memory."""
    bench = idle_tables()
    args = bench.parse_args(["startup", "--tables", "6", "--settle", "0", "--guilds", "2"])
    result = await bench.boot(args, bench.run.Database(), 6)
    assert result.tables == 6 and result.ready_seconds > 0
    assert result.rss_settled > 10 * 2**20


async def test_deadlines_fire_once_each() -> None:
    """Deadlines that fall due (some maybe before the bot is ready) each fire once: a
    timeout's move saved for every table, none twice."""
    bench = idle_tables()
    args = bench.parse_args(
        ["deadlines", "--idle", "3", "--lead", "2", "--grace", "20", "--guilds", "2"]
    )
    fired = await bench.deadline_run(args, bench.run.Database(), "tiny", 6, 1.0)
    assert fired.never == 0 and fired.twice == 0
    assert len(fired.late) == 6 and all(late >= 0 for late in fired.late)


async def test_clicks_on_idle_tables_are_answered() -> None:
    """Every click on a table untouched since start is answered with the moved table (no
    error, a latency each)."""
    bench = idle_tables()
    argv = ["clicks", "--tables", "30", "--clicks", "3", "--rate", "20", "--wait", "0"]
    args = bench.parse_args(
        [*argv, "--guilds", "2", "--burst-rate", "20", "--burst-seconds", "0.2"]
    )
    gentle, fast = await bench.click_run(args, bench.run.Database())
    assert gentle.errors == 0 and fast.errors == 0
    assert len(gentle.latencies) == 3 and len(fast.latencies) == 4
