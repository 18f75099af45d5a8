"""Every write the bot makes, each one transaction, written once for both backends.

Each function takes an open Transaction and awaits only its statements. On PostgreSQL
they run on a pooled connection; on SQLite the whole function runs on the database thread
(see bot.storage.sqlite), so a save is still one hop there.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection
from typing import Any

from bot.records.ratings import Rating, rate
from bot.records.results import GameResult, PlayerResult
from bot.storage.rows import ChannelBusy, StaleWrite, TableRecord, Transaction
from bot.storage.schema import Migration, Rewrite, dump, statements


def columns_of(record: TableRecord) -> tuple[Any, ...]:
    """The columns a save writes, in the order both the INSERT and the UPDATE name them."""
    return (
        record.message_id,
        record.host_id,
        record.status,
        dump(record.options),
        dump(record.seats),
        None if record.state is None else dump(record.state),
        record.move_number,
        dump(record.meta),
        record.due_at,
    )


async def apply_step(tx: Transaction, step: Migration, version: int) -> None:
    """Move the schema one version up: the step, then the recorded version."""
    if isinstance(step, Rewrite):
        for row in await tx.fetch(step.select):
            await tx.execute(step.update, *step.convert(tuple(row)))
    else:
        for statement in statements(tx.dialect.ddl(step)):
            await tx.execute(statement)
    await tx.execute(tx.dialect.set_version.format(version=int(version)))


async def insert_table(tx: Transaction, record: TableRecord, now: float) -> int:
    """Insert a new table; its id. ChannelBusy if the channel already has an open one."""
    try:
        rows = await tx.fetch(
            "INSERT INTO tables (game, guild_id, channel_id, message_id, host_id, status,"
            " options, seats, state, move_number, meta, due_at, created_at, updated_at,"
            " revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0) RETURNING id",
            record.game,
            record.guild_id,
            record.channel_id,
            *columns_of(record),
            now,
            now,
        )
    except tx.dialect.unique_violation:
        raise ChannelBusy(record.channel_id) from None
    return int(rows[0][0])


# The columns a save may write, in the order columns_of gives them.
TABLE_COLUMNS = (
    "message_id",
    "host_id",
    "status",
    "options",
    "seats",
    "state",
    "move_number",
    "meta",
    "due_at",
)


@functools.lru_cache(maxsize=64)
def update_sql(columns: tuple[str, ...] = TABLE_COLUMNS) -> str:
    """The save of these columns: their values (values_of), the time, then the id and
    the revision it replaces."""
    assigned = "".join(f"{column} = ?, " for column in columns)
    return (
        f"UPDATE tables SET {assigned}updated_at = ?,"
        " revision = revision + 1 WHERE id = ? AND revision = ?"
    )


# A save of every column (columns_of), the time, then the id and the revision it replaces.
UPDATE_TABLE = update_sql()


def values_of(record: TableRecord, columns: tuple[str, ...]) -> tuple[Any, ...]:
    """The values a save of these columns writes, in their order."""
    if columns == TABLE_COLUMNS:
        return columns_of(record)
    return tuple(_column_value(record, column) for column in columns)


def _column_value(record: TableRecord, column: str) -> Any:
    if column == "options":
        return dump(record.options)
    if column == "seats":
        return dump(record.seats)
    if column == "state":
        return None if record.state is None else dump(record.state)
    if column == "meta":
        return dump(record.meta)
    return getattr(record, column)


def saved_columns(columns: Collection[str] | None) -> tuple[str, ...]:
    """The columns to write, in the save's order (every column for None); ValueError for
    a name that is not one."""
    if columns is None:
        return TABLE_COLUMNS
    unknown = set(columns) - set(TABLE_COLUMNS)
    if unknown:
        raise ValueError(f"not table columns: {sorted(unknown)}")
    return tuple(column for column in TABLE_COLUMNS if column in columns)


async def update_table(
    tx: Transaction,
    record: TableRecord,
    move: tuple[str, str] | None,
    expected: int,
    now: float,
    result: GameResult | None = None,
    columns: tuple[str, ...] = TABLE_COLUMNS,
) -> None:
    """Save a table at revision ``expected`` (these columns of it), its move and, for a
    game that ends, its records."""
    if result is not None:
        changes = await record_game(tx, result)
        if changes:
            record.meta = {**record.meta, "rating_changes": changes}
            if "meta" not in columns:
                columns = saved_columns({*columns, "meta"})
    changed = await tx.execute(
        update_sql(columns),
        *values_of(record, columns),
        now,
        record.id,
        expected,
    )
    if changed != 1:
        raise StaleWrite(f"table {record.id} is no longer at revision {expected}")
    if move is not None:
        await tx.execute(
            "INSERT INTO moves (table_id, move_number, player, action, at) VALUES (?, ?, ?, ?, ?)",
            record.id,
            record.move_number,
            move[0],
            move[1],
            now,
        )


def _upsert(table: str, columns: tuple[str, ...], key: tuple[str, ...]) -> str:
    """An INSERT that replaces the row with the same key (the same SQL on both backends)."""
    updated = ", ".join(f"{column} = excluded.{column}" for column in columns if column not in key)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updated}"
    )


GAME_COLUMNS = (
    "table_id",
    "guild_id",
    "channel_id",
    "game",
    "status",
    "seed",
    "options",
    "started_at",
    "ended_at",
    "moves",
)
SEAT_COLUMNS = (
    "table_id",
    "seat",
    "guild_id",
    "game",
    "status",
    "player",
    "seat_player",
    "name",
    "level",
    "score",
    "rank",
    "won",
    "stats",
    "rating_change",
)
UPSERT_GAME = _upsert("games", GAME_COLUMNS, ("table_id",))
UPSERT_SEAT = _upsert("game_players", SEAT_COLUMNS, ("table_id", "seat"))


async def record_game(tx: Transaction, result: GameResult) -> dict[str, float]:
    """Keep a game that ended; rate a finished one. Returns each player's rating change."""
    await tx.execute(
        UPSERT_GAME,
        result.table_id,
        result.guild_id,
        result.channel_id,
        result.game,
        result.status,
        result.seed,
        dump(result.options),
        result.started_at,
        result.ended_at,
        result.moves,
    )
    changes: dict[str, float] = {}
    if result.rated and result.guild_id is not None:
        changes = await _rate(tx, result)
    for row in result.players:
        await tx.execute(
            UPSERT_SEAT,
            result.table_id,
            row.seat,
            result.guild_id,
            result.game,
            result.status,
            row.player,
            row.seat_player or row.player,
            row.name,
            row.level,
            row.score,
            row.rank,
            int(row.won and result.rated),
            dump(row.stats),
            changes.get(row.player),
        )
    return changes


async def _rate(tx: Transaction, result: GameResult) -> dict[str, float]:
    """Update every seat's rating from the game's ranks (OpenSkill); return the changes."""
    before = []
    for row in result.players:
        found = await tx.fetch(
            "SELECT mu, sigma FROM ratings WHERE guild_id = ? AND game = ? AND player = ?",
            result.guild_id,
            result.game,
            row.player,
        )
        before.append(Rating(found[0][0], found[0][1]) if found else Rating())
    after = rate(before, [row.rank for row in result.players])
    # Two computers of one level at a table share one rating row: it moves by their
    # average, and the game counts once for it.
    merged: dict[str, list[tuple[PlayerResult, Rating, Rating]]] = {}
    for row, old, new in zip(result.players, before, after, strict=True):
        merged.setdefault(row.player, []).append((row, old, new))
    changes = {}
    for player, seats in merged.items():
        row, old = seats[0][0], seats[0][1]
        new = Rating(
            sum(seat[2].mu for seat in seats) / len(seats),
            sum(seat[2].sigma for seat in seats) / len(seats),
        )
        changes[player] = round(new.conservative - old.conservative, 2)
        await tx.execute(
            "INSERT INTO ratings (guild_id, game, player, name, is_computer, mu, sigma, games)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 1) ON CONFLICT (guild_id, game, player) DO UPDATE"
            " SET name = excluded.name, mu = excluded.mu, sigma = excluded.sigma,"
            " games = ratings.games + 1",
            result.guild_id,
            result.game,
            player,
            row.name,
            int(row.level is not None),
            new.mu,
            new.sigma,
        )
    return changes


async def quarantine(tx: Transaction, table_id: int, now: float) -> bool:
    """Close an open table that no longer loads (status `broken`); whether it was open."""
    changed = await tx.execute(
        "UPDATE tables SET status = 'broken', due_at = NULL, updated_at = ?,"
        " revision = revision + 1 WHERE id = ? AND status IN ('lobby', 'running')",
        now,
        table_id,
    )
    return changed == 1


async def set_due(tx: Transaction, table_id: int, revision: int, due_at: float | None) -> bool:
    """Store a table's next due time if it is still at ``revision``; whether it was."""
    changed = await tx.execute(
        "UPDATE tables SET due_at = ? WHERE id = ? AND revision = ?", due_at, table_id, revision
    )
    return changed == 1


async def discard_table(tx: Transaction, table_id: int) -> None:
    """Delete a table that never reached its channel, and its (empty) move log."""
    await tx.execute("DELETE FROM moves WHERE table_id = ?", table_id)
    await tx.execute("DELETE FROM tables WHERE id = ?", table_id)


# The settings rows, their key, and the columns an upsert may write (names are spliced
# into the SQL, so only these).
_SETTINGS = {
    "guild_settings": (
        "guild_id",
        frozenset({"language", "images", "turn_pings", "threads", "pace", "pace_pings"}),
    ),
    "user_settings": (
        "user_id",
        frozenset({"notify", "summary_at", "away_until", "away_year", "away_used", "away_set_at"}),
    ),
}


async def _set_settings(tx: Transaction, table: str, key: int, values: dict[str, Any]) -> None:
    """Upsert some columns of a settings row: the row (and its other settings) is kept,
    and a None clears a setting."""
    key_column, allowed = _SETTINGS[table]
    unknown = set(values) - allowed
    if unknown:
        raise ValueError(f"not a column of {table}: {sorted(unknown)!r}")
    await tx.execute(_upsert(table, (key_column, *values), (key_column,)), key, *values.values())


async def set_guild_language(tx: Transaction, guild_id: int, language: str | None) -> None:
    """Store a server's language; an upsert keeps the row (and any other setting) on clear."""
    await _set_settings(tx, "guild_settings", guild_id, {"language": language})


async def set_guild_images(tx: Transaction, guild_id: int, images: bool) -> None:
    """Store whether a server's table messages show pictures; the upsert keeps its language."""
    await _set_settings(tx, "guild_settings", guild_id, {"images": int(images)})


async def set_guild_turn_pings(tx: Transaction, guild_id: int, mode: str | None) -> None:
    """Store when a server's turns ping the player; the upsert keeps its other settings."""
    await _set_settings(tx, "guild_settings", guild_id, {"turn_pings": mode})


async def set_guild_threads(tx: Transaction, guild_id: int, threads: bool) -> None:
    """Store whether a server's tables open in a thread by default; keeps its other settings."""
    await _set_settings(tx, "guild_settings", guild_id, {"threads": int(threads)})


async def set_guild_text(tx: Transaction, guild_id: int, column: str, value: str | None) -> None:
    """Store one of a server's text settings (pace, pace_pings); keeps its other settings."""
    if column not in ("pace", "pace_pings"):
        raise ValueError(f"not a text setting: {column!r}")
    await _set_settings(tx, "guild_settings", guild_id, {column: value})


async def set_user_notify(tx: Transaction, user_id: int, mode: str | None) -> None:
    """Store a person's choice of turn notices (None clears it)."""
    await _set_settings(tx, "user_settings", user_id, {"notify": mode})


async def set_user_summary_at(tx: Transaction, user_id: int, at: float) -> None:
    """Store when a person's last daily summary went out."""
    await _set_settings(tx, "user_settings", user_id, {"summary_at": at})


async def set_user_away(
    tx: Transaction, user_id: int, until: float | None, year: int, used: int, set_at: float
) -> None:
    """Store a person's absence (None: back), the days of ``year`` they have taken and
    when it was set (other processes look for absences changed since their last look)."""
    await _set_settings(
        tx,
        "user_settings",
        user_id,
        {"away_until": until, "away_year": year, "away_used": used, "away_set_at": set_at},
    )


async def forget_user(tx: Transaction, player: str, anonymous: str, name: str) -> int:
    """Replace a person by an anonymous id and name in the records; drop their ratings."""
    changed = 0
    # The move log first, while game_players still says which tables were theirs.
    changed += await tx.execute(
        "UPDATE moves SET player = ? WHERE player = ? AND table_id IN"
        " (SELECT table_id FROM game_players WHERE seat_player = ?)",
        anonymous,
        player,
        player,
    )
    changed += await tx.execute(
        "UPDATE game_players SET seat_player = ? WHERE seat_player = ?", anonymous, player
    )
    changed += await tx.execute(
        "UPDATE game_players SET player = ?, name = ? WHERE player = ?", anonymous, name, player
    )
    changed += await tx.execute("DELETE FROM ratings WHERE player = ?", player)
    changed += await tx.execute("DELETE FROM user_settings WHERE user_id = ?", int(player))
    rows = await tx.fetch(
        "SELECT id, meta FROM tables WHERE status NOT IN ('lobby', 'running')"
        f" AND {tx.dialect.names_player}",
        player,
    )
    for table_id, text in rows:
        meta = json.loads(text)
        meta["names"][player] = name
        meta.get("user_locales", {}).pop(player, None)
        await tx.execute("UPDATE tables SET meta = ? WHERE id = ?", dump(meta), table_id)
        changed += 1
    return changed
