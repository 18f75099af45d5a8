"""A server's game history from the records: recent games, and a stored game to replay.

Discord-free: reads through `Storage.read` and `Storage.moves`. History is per server:
nothing here returns a game of another server than the one asked about.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.storage import Storage
from bot.table.replay import GameSummary, StoredGame, StoredSeat

# The history list shows finished games, and turn-based ones the host ended after they
# stalled (said as such); abandoned ones count for nothing.
LISTED = ("finished", "stalled")
SEAT_COLUMNS = "table_id, seat, player, seat_player, name, level, score, rank, rating_change"


def _seat(row: Any) -> StoredSeat:
    return StoredSeat(
        seat=int(row["seat"]),
        player=str(row["player"]),
        seat_player=str(row["seat_player"]),
        name=str(row["name"]),
        level=row["level"],
        score=int(row["score"]),
        rank=int(row["rank"]),
        rating_change=row["rating_change"],
    )


async def recent_games(
    storage: Storage,
    guild_id: int,
    offset: int,
    limit: int,
    *,
    statuses: Sequence[str] = LISTED,
) -> list[GameSummary]:
    """A server's games, newest first: ``limit`` of them after skipping ``offset``.

    Two indexed reads whatever the page: the games (by server and end time), then the
    seats of just those games.
    """
    marks = ", ".join("?" for _ in statuses)
    games = await storage.read(
        "SELECT table_id, game, status, started_at, ended_at, options FROM games"
        f" WHERE guild_id = ? AND status IN ({marks})"
        " ORDER BY ended_at DESC, table_id DESC LIMIT ? OFFSET ?",
        (guild_id, *statuses, max(limit, 0), max(offset, 0)),
    )
    if not games:
        return []
    ids = [int(row["table_id"]) for row in games]
    seats: dict[int, list[StoredSeat]] = {table_id: [] for table_id in ids}
    rows = await storage.read(
        f"SELECT {SEAT_COLUMNS} FROM game_players"
        f" WHERE table_id IN ({', '.join('?' for _ in ids)}) ORDER BY table_id, seat",
        ids,
    )
    for row in rows:
        seats[int(row["table_id"])].append(_seat(row))
    return [
        GameSummary(
            table_id=int(row["table_id"]),
            game=str(row["game"]),
            status=str(row["status"]),
            ended_at=float(row["ended_at"]),
            seats=tuple(seats[int(row["table_id"])]),
            pace=_pace_of(row["options"]),
            started_at=float(row["started_at"]),
        )
        for row in games
    ]


def _pace_of(options: object) -> int:
    """A stored game's pace (seconds per move; 0: live) from its options' JSON."""
    try:
        return int(json.loads(str(options)).get("pace", 0))
    except (ValueError, TypeError, AttributeError):
        return 0  # an unreadable or non-object options column: listed as live


async def load_game(storage: Storage, guild_id: int | None, table_id: int) -> StoredGame | None:
    """Everything a replay of one game needs, or None if this server has no such game.

    A game of another server (or of none) is refused like an unknown one: a planted
    custom id must not reveal whether it exists.
    """
    if guild_id is None:
        return None
    found = await storage.read(
        "SELECT table_id, guild_id, game, status, seed, options, started_at, ended_at"
        " FROM games WHERE table_id = ? AND guild_id = ?",
        (table_id, guild_id),
    )
    if not found:
        return None
    game = found[0]
    rows = await storage.read(
        f"SELECT {SEAT_COLUMNS} FROM game_players WHERE table_id = ? ORDER BY seat",
        (table_id,),
    )
    moves = await storage.moves(table_id)
    return StoredGame(
        table_id=table_id,
        guild_id=game["guild_id"],
        game=str(game["game"]),
        status=str(game["status"]),
        seed=str(game["seed"]),
        options=json.loads(game["options"]),
        started_at=float(game["started_at"]),
        ended_at=float(game["ended_at"]),
        seats=tuple(_seat(row) for row in rows),
        moves=tuple((player, action) for _, player, action in moves),
    )


async def last_game_of(storage: Storage, guild_id: int, player: str, game: str) -> int | None:
    """The table id of a player's last finished game of one kind on a server, or None.

    An indexed read of the player's seats (by server, game and player), newest first.
    """
    found = await storage.read(
        "SELECT g.table_id FROM game_players p JOIN games g ON g.table_id = p.table_id"
        " WHERE p.guild_id = ? AND p.game = ? AND p.player = ? AND p.status = 'finished'"
        " ORDER BY g.ended_at DESC, g.table_id DESC LIMIT 1",
        (guild_id, game, player),
    )
    return int(found[0]["table_id"]) if found else None


async def listed_game(storage: Storage, guild_id: int, number: int) -> int | None:
    """The table id of the game numbered ``number`` (from 1) in a server's history list."""
    if number < 1:
        return None
    games = await recent_games(storage, guild_id, number - 1, 1)
    return games[0].table_id if games else None
