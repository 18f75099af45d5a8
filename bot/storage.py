"""SQLite storage for tables (lobbies and games), with versioned schema migrations."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import aiosqlite

from bot.records.ratings import Rating, rate
from bot.records.results import GameResult, PlayerResult

OPEN_STATUSES = ("lobby", "running")


def _meta_from_extra(connection: sqlite3.Connection) -> None:
    """v3: the untyped `extra` bag becomes the typed table metadata (bot.table.meta)."""
    rows = connection.execute("SELECT id, meta FROM tables").fetchall()
    for table_id, text in rows:
        connection.execute(
            "UPDATE tables SET meta = ? WHERE id = ?",
            (_dump(upgrade_extra(json.loads(text or "{}"))), table_id),
        )


def upgrade_extra(extra: dict[str, Any]) -> dict[str, Any]:
    """Rename the v2 `extra` keys to the v3 metadata fields; unknown keys are dropped."""
    meta: dict[str, Any] = {
        key: extra[key]
        for key in (
            "names",
            "user_locales",
            "locale",
            "opened_at",
            "away",
            "timeouts",
            "turn",
            "dm_closed",
            "hint_pending",
            "rematch_of",
        )
        if key in extra
    }
    if "bots" in extra:
        meta["computers"] = extra["bots"]
    notice = extra.get("notice")
    if isinstance(notice, list) and len(notice) == 2:
        meta["notice"] = {"key": notice[0], "player": str(notice[1].get("player", ""))}
    if extra.get("expired"):
        meta["closed_reason"] = "expired"
    return meta


# A migration step is SQL, or a function run on the raw connection inside the step's
# transaction (for data that SQL alone cannot reshape, such as JSON columns).
Migration = str | Callable[[sqlite3.Connection], None]

# Each entry moves the schema one version up; never edit a released step, add a new one.
MIGRATIONS: Sequence[Migration] = (
    """
    CREATE TABLE tables (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        game TEXT NOT NULL,
        guild_id INTEGER,
        channel_id INTEGER NOT NULL,
        message_id INTEGER,
        host_id INTEGER NOT NULL,
        status TEXT NOT NULL,
        options TEXT NOT NULL,
        seats TEXT NOT NULL,
        state TEXT,
        move_number INTEGER NOT NULL DEFAULT 0,
        extra TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE UNIQUE INDEX one_open_table_per_channel
        ON tables (channel_id) WHERE status IN ('lobby', 'running');
    CREATE INDEX tables_by_status ON tables (status);
    CREATE TABLE moves (
        table_id INTEGER NOT NULL REFERENCES tables (id),
        move_number INTEGER NOT NULL,
        player TEXT NOT NULL,
        action TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (table_id, move_number)
    );
    """,
    # v2: per-server settings; language is the catalogue code of public table messages,
    # NULL for "follow the server's Discord language".
    """
    CREATE TABLE guild_settings (
        guild_id INTEGER PRIMARY KEY,
        language TEXT
    );
    """,
    # v3: optimistic concurrency (every save names the revision it replaces) and the
    # typed metadata column, converted from the old `extra` bag.
    """
    ALTER TABLE tables ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables RENAME COLUMN extra TO meta;
    """,
    _meta_from_extra,
    # v4: the records. Every game that ends is kept (players in seat order, scores, ranks,
    # game-specific figures); ratings are maintained per server, game and player, so stats
    # and leaderboards are indexed reads, never replays.
    """
    CREATE TABLE games (
        table_id INTEGER PRIMARY KEY REFERENCES tables (id),
        guild_id INTEGER,
        channel_id INTEGER NOT NULL,
        game TEXT NOT NULL,
        status TEXT NOT NULL,
        seed TEXT NOT NULL,
        options TEXT NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL NOT NULL,
        moves INTEGER NOT NULL
    );
    CREATE INDEX games_by_guild ON games (guild_id, ended_at);
    CREATE TABLE game_players (
        table_id INTEGER NOT NULL REFERENCES games (table_id),
        seat INTEGER NOT NULL,
        guild_id INTEGER,
        game TEXT NOT NULL,
        status TEXT NOT NULL,
        player TEXT NOT NULL,
        seat_player TEXT NOT NULL,
        name TEXT NOT NULL,
        level TEXT,
        score INTEGER NOT NULL,
        rank INTEGER NOT NULL,
        won INTEGER NOT NULL,
        stats TEXT NOT NULL,
        rating_change REAL,
        PRIMARY KEY (table_id, seat)
    );
    CREATE INDEX game_players_by_player ON game_players (guild_id, game, player, status);
    CREATE TABLE ratings (
        guild_id INTEGER NOT NULL,
        game TEXT NOT NULL,
        player TEXT NOT NULL,
        name TEXT NOT NULL,
        is_computer INTEGER NOT NULL,
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        games INTEGER NOT NULL,
        PRIMARY KEY (guild_id, game, player)
    );
    CREATE INDEX ratings_board ON ratings (guild_id, game, is_computer, games);
    """,
    # v5: whether a server's table messages carry a picture of the table; NULL is the
    # default (on), 0 is off (/cardtable images).
    "ALTER TABLE guild_settings ADD COLUMN images INTEGER",
)


def schema_version_of(path: Path | str) -> int:
    """The schema version of a database file, read synchronously (for start-up checks)."""
    connection = sqlite3.connect(str(path))
    try:
        return int(connection.execute("PRAGMA user_version").fetchone()[0])
    finally:
        connection.close()


class SchemaTooNew(RuntimeError):
    """The database was written by a newer version of the bot."""


class ChannelBusy(Exception):
    """The channel already has an open lobby or a running game."""


class StaleWrite(Exception):
    """A save named a revision the database no longer holds: someone wrote newer state."""


@dataclass(slots=True)
class TableRecord:
    """One table as stored: a lobby, a running game, or a finished one."""

    game: str
    channel_id: int
    host_id: int
    guild_id: int | None = None
    status: str = "lobby"
    options: dict[str, Any] = field(default_factory=dict)
    seats: list[int] = field(default_factory=list)
    state: dict[str, Any] | None = None
    move_number: int = 0
    message_id: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
    # Bumped by every save; a save names the revision it replaces (optimistic concurrency).
    revision: int = 0

    @property
    def is_open(self) -> bool:
        """Whether the table still occupies its channel (lobby or running)."""
        return self.status in OPEN_STATUSES


@dataclass(frozen=True, slots=True)
class BrokenRow:
    """A stored open table that no longer loads: enough to free its channel and say so."""

    id: int
    game: str
    channel_id: int
    guild_id: int | None
    message_id: int | None
    reason: str


def _row_to_record(row: aiosqlite.Row) -> TableRecord:
    return TableRecord(
        id=row["id"],
        game=row["game"],
        guild_id=row["guild_id"],
        channel_id=row["channel_id"],
        message_id=row["message_id"],
        host_id=row["host_id"],
        status=row["status"],
        options=json.loads(row["options"]),
        seats=json.loads(row["seats"]),
        state=json.loads(row["state"]) if row["state"] else None,
        move_number=row["move_number"],
        meta=json.loads(row["meta"]),
        revision=row["revision"],
    )


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class Storage:
    """The bot's database: one aiosqlite connection, writes serialised by a lock."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection
        self._write = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path | str, *, busy_timeout: float = 5.0) -> Storage:
        """Open (creating if needed) the database and bring its schema up to date.

        ``busy_timeout`` is how long a write waits for another connection's lock before it
        fails; the table layer defers a click whose save takes longer than Discord allows.
        """
        connection = await aiosqlite.connect(str(path), timeout=busy_timeout)
        connection.row_factory = aiosqlite.Row
        storage = cls(connection)
        try:
            await storage.migrate()
            # NORMAL in WAL mode survives a process crash; only power loss may drop a commit.
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON"):
                async with connection.execute(f"PRAGMA {pragma}") as cursor:
                    await cursor.fetchall()
        except BaseException:
            await connection.close()
            raise
        return storage

    async def close(self) -> None:
        """Close the connection."""
        await self._db.close()

    async def schema_version(self) -> int:
        """The schema version the database is at."""
        async with self._db.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def claim_shards(self, shard_ids: Sequence[int]) -> None:
        """Claim the Discord shards this process runs, before any table is restored.

        SQLite needs no claim: the instance lock (bot/instance_lock.py) already refuses a
        second bot process on the same database file, so one process owns every shard of
        it. A database shared by several processes claims each shard for one of them.
        """

    async def migrate(self) -> None:
        """Apply every migration the database has not seen yet, each in its own transaction."""
        async with self._write:
            current = await self.schema_version()
            if current > len(MIGRATIONS):
                raise SchemaTooNew(
                    f"database schema v{current} is newer than this bot (v{len(MIGRATIONS)});"
                    " upgrade the bot or use another CARDTABLE_DATABASE"
                )
            for version, step in enumerate(MIGRATIONS[current:], start=current + 1):
                await self._in_thread(_migrate_step, step, version)

    async def _in_thread(self, work: Callable[..., Any], *args: Any) -> Any:
        """Run ``work(connection, *args)`` on the database thread: one round trip in all.

        aiosqlite runs each call on its own thread; a whole transaction in one call saves
        the two extra hops a statement-by-statement save would make under load.
        """
        db = self._db
        # aiosqlite has no public "run this function on the database thread" call.
        execute = cast(Callable[[Callable[[], Any]], Awaitable[Any]], db._execute)
        return await execute(lambda: work(db._conn, *args))

    async def create_table(self, record: TableRecord) -> TableRecord:
        """Insert a new table and set its id; ChannelBusy if the channel has an open one."""
        async with self._write:
            record.id = await self._in_thread(_insert_table, record, time.time())
        record.revision = 0
        return record

    async def save_table(
        self,
        record: TableRecord,
        move: tuple[str, str] | None = None,
        *,
        expect_revision: int | None = None,
        result: GameResult | None = None,
    ) -> None:
        """Write the table and the move that produced it in one transaction and one trip.

        The save replaces ``expect_revision`` (default: the record's own revision) and
        bumps it; StaleWrite if the database holds another revision, so a stale writer
        never overwrites newer state. The record's revision is updated only on success.

        With a ``result`` (a game that ends), the records are written in the same
        transaction: the game, its players and, for a finished game, the new ratings,
        whose changes are also put into ``record.meta["rating_changes"]``.
        """
        if record.id is None:
            raise ValueError("save_table needs a table that was created first")
        expected = record.revision if expect_revision is None else expect_revision
        async with self._write:
            await self._in_thread(_update_table, record, move, expected, time.time(), result)
        record.revision = expected + 1

    async def read(self, query: str, params: Sequence[Any] = ()) -> list[aiosqlite.Row]:
        """Rows of a read-only query (the records' history, stats and leaderboards)."""
        async with self._db.execute(query, tuple(params)) as cursor:
            return list(await cursor.fetchall())

    async def record_game(self, result: GameResult) -> dict[str, float]:
        """Keep a game that ended outside a table save (back-fills); its rating changes."""
        async with self._write:
            changes: dict[str, float] = await self._in_thread(_record_and_commit, result)
        return changes

    async def unrecorded_games(self) -> list[tuple[TableRecord, float, float]]:
        """Games that ended before the records existed: (table, created, updated), in order."""
        rows = await self.read(
            "SELECT t.* FROM tables AS t LEFT JOIN games AS g ON g.table_id = t.id"
            " WHERE g.table_id IS NULL AND t.status IN ('finished', 'abandoned')"
            " AND t.state IS NOT NULL ORDER BY t.updated_at, t.id"
        )
        found = []
        for row in rows:
            try:
                found.append((_row_to_record(row), row["created_at"], row["updated_at"]))
            except (ValueError, TypeError):
                continue  # an unreadable old row is simply not back-filled
        return found

    async def quarantine(self, table_id: int) -> None:
        """Close a table that no longer loads (status `broken`), freeing its channel."""
        async with self._write:
            await self._in_thread(_quarantine, table_id, time.time())

    async def rematch_opened(self, table_id: int) -> bool:
        """Whether a rematch of this table was ever opened (a table is rematched once)."""
        async with self._db.execute(
            "SELECT 1 FROM tables WHERE json_extract(meta, '$.rematch_of') = ? LIMIT 1",
            (table_id,),
        ) as cursor:
            return await cursor.fetchone() is not None

    async def discard_table(self, table_id: int) -> None:
        """Delete a table that never reached its channel (its lobby message failed)."""
        async with self._write:
            await self._in_thread(_discard_table, table_id)

    async def get_table(self, table_id: int) -> TableRecord | None:
        """The table with this id, or None."""
        async with self._db.execute("SELECT * FROM tables WHERE id = ?", (table_id,)) as cursor:
            row = await cursor.fetchone()
        return None if row is None else _row_to_record(row)

    async def open_tables(self, game: str | None = None) -> list[TableRecord | BrokenRow]:
        """Every lobby and running game (of one game, if given), oldest first.

        A row that cannot be decoded comes back as a BrokenRow, never as an exception.
        """
        query = "SELECT * FROM tables WHERE status IN ('lobby', 'running')"
        params: tuple[Any, ...] = ()
        if game is not None:
            query += " AND game = ?"
            params = (game,)
        async with self._db.execute(query + " ORDER BY id", params) as cursor:
            rows = await cursor.fetchall()
        records: list[TableRecord | BrokenRow] = []
        for row in rows:
            try:
                records.append(_row_to_record(row))
            except (ValueError, TypeError) as error:
                # One unreadable row (a hand edit, another version) must not keep every
                # other table from starting: the caller quarantines it.
                records.append(broken_row(row, f"unreadable row: {error}"))
        return records

    async def moves(self, table_id: int) -> list[tuple[int, str, str]]:
        """The move log of one table: (move number, player, action)."""
        async with self._db.execute(
            "SELECT move_number, player, action FROM moves WHERE table_id = ? ORDER BY move_number",
            (table_id,),
        ) as cursor:
            rows = await cursor.fetchall()
        return [(row[0], row[1], row[2]) for row in rows]

    async def get_guild_language(self, guild_id: int) -> str | None:
        """The language a server chose for public table messages, or None for its default."""
        async with self._db.execute(
            "SELECT language FROM guild_settings WHERE guild_id = ?", (guild_id,)
        ) as cursor:
            row = await cursor.fetchone()
        return None if row is None else row["language"]

    async def set_guild_language(self, guild_id: int, language: str | None) -> None:
        """Store a server's language for public table messages; None clears it."""
        async with self._write:
            try:
                # An upsert keeps the row (and any future settings columns) when clearing.
                await self._db.execute(
                    "INSERT INTO guild_settings (guild_id, language) VALUES (?, ?)"
                    " ON CONFLICT (guild_id) DO UPDATE SET language = excluded.language",
                    (guild_id, language),
                )
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise

    async def get_guild_images(self, guild_id: int) -> bool | None:
        """Whether a server's table messages show pictures; None if it never chose."""
        async with self._db.execute(
            "SELECT images FROM guild_settings WHERE guild_id = ?", (guild_id,)
        ) as cursor:
            row = await cursor.fetchone()
        return None if row is None or row["images"] is None else bool(row["images"])

    async def set_guild_images(self, guild_id: int, images: bool) -> None:
        """Store whether a server's table messages show pictures of the table."""
        async with self._write:
            try:
                # An upsert keeps the server's other settings (its language) as they are.
                await self._db.execute(
                    "INSERT INTO guild_settings (guild_id, images) VALUES (?, ?)"
                    " ON CONFLICT (guild_id) DO UPDATE SET images = excluded.images",
                    (guild_id, int(images)),
                )
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise

    async def forget_user(self, user_id: int, anonymous: str, name: str = "former player") -> int:
        """Forget a person in every server's records, in one transaction; rows changed.

        Their seats in stored games take ``anonymous`` as id (in the move log too, so the
        games still replay for the others) and ``name``; their names in closed tables'
        metadata become ``name``; their ratings are deleted. Open tables are left alone:
        the caller refuses while the person sits at one.
        """
        async with self._write:
            changed: int = await self._in_thread(_forget_user, str(user_id), anonymous, name)
        return changed


# -- work done on the database thread (one transaction each) ---------------------------


def _migrate_step(connection: sqlite3.Connection, step: Migration, version: int) -> None:
    try:
        connection.execute("BEGIN")
        if isinstance(step, str):
            for statement in step.split(";"):
                if statement.strip():
                    connection.execute(statement)
        else:
            step(connection)
        connection.execute(f"PRAGMA user_version = {version}")
        connection.commit()
    except BaseException:
        connection.rollback()
        raise


def _columns(record: TableRecord) -> tuple[Any, ...]:
    """The columns a save writes, in the order both the INSERT and the UPDATE name them."""
    return (
        record.message_id,
        record.host_id,
        record.status,
        _dump(record.options),
        _dump(record.seats),
        None if record.state is None else _dump(record.state),
        record.move_number,
        _dump(record.meta),
    )


def _insert_table(connection: sqlite3.Connection, record: TableRecord, now: float) -> int:
    try:
        cursor = connection.execute(
            "INSERT INTO tables (game, guild_id, channel_id, message_id, host_id, status,"
            " options, seats, state, move_number, meta, created_at, updated_at, revision)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
            (record.game, record.guild_id, record.channel_id, *_columns(record), now, now),
        )
        connection.commit()
    except sqlite3.IntegrityError:
        connection.rollback()
        raise ChannelBusy(record.channel_id) from None
    except BaseException:
        connection.rollback()
        raise
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _update_table(
    connection: sqlite3.Connection,
    record: TableRecord,
    move: tuple[str, str] | None,
    expected: int,
    now: float,
    result: GameResult | None = None,
) -> None:
    try:
        if result is not None:
            changes = _record_game(connection, result)
            if changes:
                record.meta = {**record.meta, "rating_changes": changes}
        cursor = connection.execute(
            "UPDATE tables SET message_id = ?, host_id = ?, status = ?, options = ?,"
            " seats = ?, state = ?, move_number = ?, meta = ?, updated_at = ?,"
            " revision = revision + 1 WHERE id = ? AND revision = ?",
            (*_columns(record), now, record.id, expected),
        )
        if cursor.rowcount != 1:
            raise StaleWrite(f"table {record.id} is no longer at revision {expected}")
        if move is not None:
            connection.execute(
                "INSERT INTO moves (table_id, move_number, player, action, at)"
                " VALUES (?, ?, ?, ?, ?)",
                (record.id, record.move_number, move[0], move[1], now),
            )
        connection.commit()
    except BaseException:
        connection.rollback()
        raise


def _record_game(connection: sqlite3.Connection, result: GameResult) -> dict[str, float]:
    """Keep a game that ended; rate a finished one. Returns each player's rating change."""
    connection.execute(
        "INSERT OR REPLACE INTO games (table_id, guild_id, channel_id, game, status, seed,"
        " options, started_at, ended_at, moves) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            result.table_id,
            result.guild_id,
            result.channel_id,
            result.game,
            result.status,
            result.seed,
            _dump(result.options),
            result.started_at,
            result.ended_at,
            result.moves,
        ),
    )
    changes: dict[str, float] = {}
    if result.rated and result.guild_id is not None:
        changes = _rate(connection, result)
    for row in result.players:
        connection.execute(
            "INSERT OR REPLACE INTO game_players (table_id, seat, guild_id, game, status,"
            " player, seat_player, name, level, score, rank, won, stats, rating_change)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
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
                _dump(row.stats),
                changes.get(row.player),
            ),
        )
    return changes


def _record_and_commit(connection: sqlite3.Connection, result: GameResult) -> dict[str, float]:
    try:
        changes = _record_game(connection, result)
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
    return changes


def _rate(connection: sqlite3.Connection, result: GameResult) -> dict[str, float]:
    """Update every seat's rating from the game's ranks (OpenSkill); return the changes."""
    before = []
    for row in result.players:
        found = connection.execute(
            "SELECT mu, sigma FROM ratings WHERE guild_id IS ? AND game = ? AND player = ?",
            (result.guild_id, result.game, row.player),
        ).fetchone()
        before.append(Rating(found[0], found[1]) if found else Rating())
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
        connection.execute(
            "INSERT INTO ratings (guild_id, game, player, name, is_computer, mu, sigma, games)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 1) ON CONFLICT (guild_id, game, player) DO UPDATE"
            " SET name = excluded.name, mu = excluded.mu, sigma = excluded.sigma,"
            " games = games + 1",
            (
                result.guild_id,
                result.game,
                player,
                row.name,
                int(row.level is not None),
                new.mu,
                new.sigma,
            ),
        )
    return changes


def _quarantine(connection: sqlite3.Connection, table_id: int, now: float) -> None:
    try:
        connection.execute(
            "UPDATE tables SET status = 'broken', updated_at = ?, revision = revision + 1"
            " WHERE id = ?",
            (now, table_id),
        )
        connection.commit()
    except BaseException:
        connection.rollback()
        raise


def broken_row(row: Any, reason: str) -> BrokenRow:
    """The parts of a stored row that locate its table, whatever else is wrong with it."""
    return BrokenRow(
        id=int(row["id"]),
        game=str(row["game"]),
        channel_id=int(row["channel_id"]),
        guild_id=row["guild_id"],
        message_id=row["message_id"],
        reason=reason,
    )


def _discard_table(connection: sqlite3.Connection, table_id: int) -> None:
    try:
        connection.execute("DELETE FROM moves WHERE table_id = ?", (table_id,))
        connection.execute("DELETE FROM tables WHERE id = ?", (table_id,))
        connection.commit()
    except BaseException:
        connection.rollback()
        raise


def _forget_user(connection: sqlite3.Connection, player: str, anonymous: str, name: str) -> int:
    """Replace a person by an anonymous id and name in the records; drop their ratings."""
    try:
        changed = 0
        # The move log first, while game_players still says which tables were theirs.
        changed += connection.execute(
            "UPDATE moves SET player = ? WHERE player = ? AND table_id IN"
            " (SELECT table_id FROM game_players WHERE seat_player = ?)",
            (anonymous, player, player),
        ).rowcount
        changed += connection.execute(
            "UPDATE game_players SET seat_player = ? WHERE seat_player = ?", (anonymous, player)
        ).rowcount
        changed += connection.execute(
            "UPDATE game_players SET player = ?, name = ? WHERE player = ?",
            (anonymous, name, player),
        ).rowcount
        changed += connection.execute("DELETE FROM ratings WHERE player = ?", (player,)).rowcount
        path = f'$.names."{player}"'
        rows = connection.execute(
            "SELECT id, meta FROM tables WHERE status NOT IN ('lobby', 'running')"
            " AND json_extract(meta, ?) IS NOT NULL",
            (path,),
        ).fetchall()
        for table_id, text in rows:
            meta = json.loads(text)
            meta["names"][player] = name
            meta.get("user_locales", {}).pop(player, None)
            connection.execute("UPDATE tables SET meta = ? WHERE id = ?", (_dump(meta), table_id))
            changed += 1
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
    return changed
