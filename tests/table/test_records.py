"""The records: a game that ends is kept in the same transaction, and finished games rated."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

from bot.engines.nothanks import TAKE, NoThanksGame
from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import decode_action as decode_rage
from bot.games.rage import encode_action as encode_rage
from bot.storage import MIGRATIONS, open_storage
from bot.storage.sqlite import migrate_step
from bot.table.spec import GameSpec
from tests.table.harness import (
    BEN,
    CID,
    HOST,
    SPECS,
    Clock,
    Harness,
    RecordingPublisher,
    make_tables,
    play_one,
    started,
)


async def play_to_end(h: Harness, spec: GameSpec) -> int:
    """Play a started game of ana, ben and cid to its end; return its table id."""
    session = await started(h, spec)
    while session.status == "running":
        await play_one(h, session)
    return session.id


@SPECS
async def test_finished_game_is_recorded_and_rated(h: Harness, spec: GameSpec) -> None:
    """The finishing save keeps the game, its seats and ranks, and rates every player."""
    table_id = await play_to_end(h, spec)
    games = await h.storage.read("SELECT * FROM games WHERE table_id = ?", (table_id,))
    assert len(games) == 1 and games[0]["status"] == "finished" and games[0]["game"] == spec.name
    seats = await h.storage.read(
        "SELECT * FROM game_players WHERE table_id = ? ORDER BY seat", (table_id,)
    )
    assert sorted(int(row["player"]) for row in seats) == sorted([HOST, BEN, CID])
    assert any(row["won"] for row in seats)
    assert all(row["rank"] >= 1 for row in seats)
    ratings = await h.storage.read("SELECT * FROM ratings WHERE game = ?", (spec.name,))
    assert len(ratings) == 3 and all(row["games"] == 1 for row in ratings)
    # The ratings are OpenSkill's own, for these ranks.
    model = PlackettLuce()
    ranks = [row["rank"] for row in seats]
    expected = model.rate([[model.rating()] for _ in seats], ranks=ranks)
    by_player = {row["player"]: row for row in ratings}
    for row, team in zip(seats, expected, strict=True):
        assert by_player[row["player"]]["mu"] == pytest.approx(team[0].mu)
        assert by_player[row["player"]]["sigma"] == pytest.approx(team[0].sigma)
    stored = await h.storage.get_table(table_id)
    assert stored is not None
    changes = stored.meta["rating_changes"]
    assert set(changes) == {row["player"] for row in seats}
    assert {row["player"]: row["rating_change"] for row in seats} == changes


async def test_abandoned_game_counts_for_nothing(h: Harness) -> None:
    """A stopped game is kept as abandoned, with no ranks, wins or ratings."""
    session = await started(h, NOTHANKS)
    await play_one(h, session)
    await session.change(lambda d: d.stop(HOST, False))
    games = await h.storage.read("SELECT status FROM games WHERE table_id = ?", (session.id,))
    assert [row["status"] for row in games] == ["abandoned"]
    seats = await h.storage.read(
        "SELECT won, rating_change FROM game_players WHERE table_id = ?", (session.id,)
    )
    assert len(seats) == 3 and not any(row["won"] for row in seats)
    assert await h.storage.read("SELECT * FROM ratings") == []


@SPECS
async def test_move_log_replays_the_game(h: Harness, spec: GameSpec) -> None:
    """The seed and the logged moves rebuild exactly the final state."""
    table_id = await play_to_end(h, spec)
    game = (await h.storage.read("SELECT * FROM games WHERE table_id = ?", (table_id,)))[0]
    seats = await h.storage.read(
        "SELECT seat_player FROM game_players WHERE table_id = ? ORDER BY seat", (table_id,)
    )
    engine = spec.new_engine(
        [row["seat_player"] for row in seats], int(game["seed"]), json.loads(game["options"])
    )
    for _, player, action in await h.storage.moves(table_id):
        engine.apply(player, spec.decode_action(action))
    stored = await h.storage.get_table(table_id)
    assert stored is not None and engine.to_dict() == stored.state


def test_rage_moves_read_back_in_both_forms() -> None:
    """Rage moves read back from the log's form and from the older readable one."""
    for new, old in [("bid 3", "bid 3"), ("play R7", "play red 7")]:
        assert decode_rage(new) == decode_rage(old)
        assert encode_rage(decode_rage(old)) == new
    assert decode_rage("play Joker as red") == decode_rage("play JOKER red")


def v3_database(path: Path) -> None:
    """A database as the previous version left it: schema v3, with tables of every kind."""
    connection = sqlite3.connect(path)
    try:
        for version, step in enumerate(MIGRATIONS[:3], start=1):
            migrate_step(connection, step, version)
        finished = NoThanksGame.new(["11", "22", "33"], seed=5)
        while not finished.is_over:
            finished.apply(finished.players[finished.active], TAKE)
        running = NoThanksGame.new(["44", "55", "66"], seed=6)
        rows = [
            (1, "finished", finished.to_dict(), [11, 22, 33], 100.0, 200.0),
            (2, "running", running.to_dict(), [44, 55, 66], 150.0, 160.0),
            (3, "abandoned", running.to_dict(), [44, 55, 66], 10.0, 20.0),
        ]
        for table_id, status, state, seats, created, updated in rows:
            names = {str(seat): f"p{seat}" for seat in seats}
            connection.execute(
                "INSERT INTO tables (id, game, guild_id, channel_id, host_id, status, options,"
                " seats, state, move_number, meta, created_at, updated_at)"
                " VALUES (?, 'nothanks', 9, ?, ?, ?, '{}', ?, ?, 0, ?, ?, ?)",
                (
                    table_id,
                    1000 + table_id,
                    seats[0],
                    status,
                    json.dumps(seats),
                    json.dumps(state),
                    json.dumps({"names": names}),
                    created,
                    updated,
                ),
            )
        connection.commit()
    finally:
        connection.close()


async def test_games_of_the_previous_version_are_back_filled(tmp_path: Path) -> None:
    """After the upgrade, earlier finished games are recorded and rated, abandoned ones kept
    as abandoned, and a running game restores untouched."""
    path = tmp_path / "old.db"
    v3_database(path)
    storage = await open_storage(path)
    tables = make_tables(storage, Clock(), asyncio.Event())
    tables.publisher = RecordingPublisher()
    try:
        restored = await tables.restore()
        assert [session.id for session in restored] == [2]
        games = await storage.read("SELECT table_id, status FROM games ORDER BY table_id")
        assert [(row["table_id"], row["status"]) for row in games] == [
            (1, "finished"),
            (3, "abandoned"),
        ]
        ratings = await storage.read("SELECT player FROM ratings ORDER BY player")
        assert [row["player"] for row in ratings] == ["11", "22", "33"]
        names = await storage.read("SELECT name FROM game_players WHERE table_id = 1")
        assert sorted(row["name"] for row in names) == ["p11", "p22", "p33"]
        assert await tables.backfill_records() == 0  # done once
    finally:
        tables.close()
        await storage.close()
