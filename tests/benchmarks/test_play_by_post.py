"""The play-by-post rate-limit benchmark of issue 43 at a tiny size: the turn-based fill,
and a whole run of the real bot against the rate-limited fake Discord (so it does not rot)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from types import ModuleType

from bot.table.meta import PACES, Turn
from tests.benchmark_scripts import load


def play_by_post() -> ModuleType:
    """benchmarks/load/play_by_post.py as a module (it imports run.py and the fill)."""
    return load("load/play_by_post")


async def test_the_filler_writes_turn_based_tables_with_their_notices(tmp_path: Path) -> None:
    """Turn-based tables carry a turn-based pace in their metadata (their options are the
    default ones), the turn's deadline the planned one, and each person's remembered
    notice in their own DM channel: for this turn if awaited, else an earlier one."""
    fill = load("load/idle_fill")
    from bot.storage import open_storage

    path = tmp_path / "turns.db"
    storage = await open_storage(path)
    try:
        planned = fill.plan(12, guilds=[1], seed=5, due=fill.idle_due(time.time()), turn_based=True)
        written = await fill.fill(storage, planned, concurrency=4)
    finally:
        await storage.close()
    with sqlite3.connect(path) as db:
        rows = dict(db.execute("SELECT id, meta FROM tables").fetchall())
        options = dict(db.execute("SELECT id, options FROM tables").fetchall())
    for each in written:
        meta = json.loads(rows[each.table_id])
        assert meta["pace"] == each.planned.pace and meta["pace"] in PACES.values()
        assert "turn_seconds" not in json.loads(options[each.table_id])
        turn = Turn.from_dict(meta["turn"])
        assert turn.deadline == each.deadline == each.planned.due
        notices = meta["turn_notices"]
        assert sorted(notices) == sorted(str(p) for p in each.planned.people)
        for player, (channel, _, since) in notices.items():
            assert channel == fill.FIRST_DM_CHANNEL + int(player) - fill.FIRST_USER
            assert since == (turn.since if player in each.acting else 0)


async def test_a_tiny_run_sends_every_owed_notice_in_time(postgres_server: str) -> None:
    """Ten turns passing beside live tables: each owed notice is POSTed after its turn
    began and within the target, with no 429, and the live clicks are answered."""
    bench = play_by_post()
    args = bench.parse_args(
        [
            *("--tables", "30", "--turns", "10", "--minute", "3", "--guilds", "2"),
            *("--live-tables", "2", "--players", "3", "--live-rate", "6"),
            *("--lead", "15", "--grace", "20", "--pictures", "off"),
        ]
    )
    outcome = await bench.one_run(args, bench.run.Database(postgres_server))
    assert outcome.moved == 10
    assert outcome.owed >= 10 - outcome.ended and len(outcome.sent) == outcome.owed
    assert all(0 <= late <= bench.NOTICE_TARGET_S for late in outcome.sent)
    assert outcome.rejected == {}
    assert outcome.clicks > 0 and outcome.errors == 0
