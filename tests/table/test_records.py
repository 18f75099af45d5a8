"""The records: a game that ends is kept in the same transaction, and finished games rated."""

from __future__ import annotations

import json

import pytest
from openskill.models import PlackettLuce

from bot.table.spec import GameSpec
from cogs.nothanks import SPEC as NOTHANKS
from cogs.rage import decode_action as decode_rage
from cogs.rage import encode_action as encode_rage
from tests.table.harness import BEN, CID, HOST, SPECS, Harness, play_one, started


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
