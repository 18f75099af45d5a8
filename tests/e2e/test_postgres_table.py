"""The bot on PostgreSQL through SimCord: a whole game, across a restart, with its records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from simcord import Env

from bot.client.bot import CardtableBot
from bot.queries.history import load_game, recent_games
from bot.queries.players import player_stats
from bot.runtime.settings import Settings
from bot.storage.postgres import PostgresStorage
from tests.conftest import TEST_TOKEN
from tests.e2e.helpers import choose, open_table


@pytest.fixture
def settings(tmp_path: Path, postgres_url: str) -> Settings:
    """Settings on a fresh PostgreSQL schema (DATABASE_URL) instead of the SQLite file."""
    return Settings(token=TEST_TOKEN, database=tmp_path / "cardtable.db", database_url=postgres_url)


async def test_game_survives_a_restart_on_postgres(
    simcord_env: Env, make_bot: Callable[[], CardtableBot], tmp_path: Path
) -> None:
    """Half a game, a restart, the rest of the game: all on PostgreSQL, never the file."""
    assert isinstance(simcord_env.bot.storage, PostgresStorage)
    table = await open_table(simcord_env, 3)
    for _ in range(5):
        await table.click(table.active(), choose(table.game))
    before = table.game.to_dict()
    # The old process ends: its connections close and its shard is free for the new one.
    await simcord_env.bot.storage.close()
    await simcord_env.restart_bot(make_bot())
    assert isinstance(simcord_env.bot.storage, PostgresStorage)
    assert table.game.to_dict() == before
    result = await table.click(table.active(), "No thanks!")
    assert result.acknowledged and not result.ephemeral
    assert table.game.move_number == 6
    while table.running:
        await table.click(table.active(), choose(table.game))
    assert table.embed.title == "No Thanks! — final scores"
    storage = simcord_env.bot.storage
    moves = await storage.moves(table.table_id)
    assert [number for number, _, _ in moves] == list(range(1, table.game.move_number + 1))
    first = table.players[0]
    stats = await player_stats(storage, table.guild.id, "nothanks", str(first.id))
    assert stats.games == 1
    history = await recent_games(storage, table.guild.id, 0, 10)
    assert [game.table_id for game in history] == [table.table_id]
    stored = await load_game(storage, table.guild.id, table.table_id)
    assert stored is not None and len(stored.moves) == len(moves)
    assert stored.seats == history[0].seats
    assert not (tmp_path / "cardtable.db").exists()
