"""SQLite storage for tables (lobbies and games), with versioned schema migrations."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosqlite

OPEN_STATUSES = ("lobby", "running")

# Each entry moves the schema one version up; never edit a released step, add a new one.
MIGRATIONS: Sequence[str] = (
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
    extra: dict[str, Any] = field(default_factory=dict)
    id: int | None = None

    @property
    def is_open(self) -> bool:
        """Whether the table still occupies its channel (lobby or running)."""
        return self.status in OPEN_STATUSES


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
        extra=json.loads(row["extra"]),
    )


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class Storage:
    """The bot's database: one aiosqlite connection, writes serialised by a lock."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection
        self._write = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path | str) -> Storage:
        """Open (creating if needed) the database and bring its schema up to date."""
        connection = await aiosqlite.connect(str(path))
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

    async def migrate(self) -> None:
        """Apply every migration the database has not seen yet, each in its own transaction."""
        async with self._write:
            current = await self.schema_version()
            if current > len(MIGRATIONS):
                raise SchemaTooNew(
                    f"database schema v{current} is newer than this bot (v{len(MIGRATIONS)});"
                    " upgrade the bot or use another CARDTABLE_DATABASE"
                )
            for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
                await self._db.executescript(
                    f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;"
                )

    async def create_table(self, record: TableRecord) -> TableRecord:
        """Insert a new table and set its id; ChannelBusy if the channel has an open one."""
        now = time.time()
        async with self._write:
            try:
                cursor = await self._db.execute(
                    "INSERT INTO tables (game, guild_id, channel_id, message_id, host_id, status,"
                    " options, seats, state, move_number, extra, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        record.game,
                        record.guild_id,
                        record.channel_id,
                        record.message_id,
                        record.host_id,
                        record.status,
                        _dump(record.options),
                        _dump(record.seats),
                        None if record.state is None else _dump(record.state),
                        record.move_number,
                        _dump(record.extra),
                        now,
                        now,
                    ),
                )
                await self._db.commit()
            except aiosqlite.IntegrityError:
                await self._db.rollback()
                raise ChannelBusy(record.channel_id) from None
        record.id = cursor.lastrowid
        return record

    async def save_table(self, record: TableRecord, move: tuple[str, str] | None = None) -> None:
        """Write the table's current state, and the move that produced it, in one commit."""
        if record.id is None:
            raise ValueError("save_table needs a table that was created first")
        now = time.time()
        async with self._write:
            try:
                await self._db.execute(
                    "UPDATE tables SET message_id = ?, host_id = ?, status = ?, options = ?,"
                    " seats = ?, state = ?, move_number = ?, extra = ?, updated_at = ?"
                    " WHERE id = ?",
                    (
                        record.message_id,
                        record.host_id,
                        record.status,
                        _dump(record.options),
                        _dump(record.seats),
                        None if record.state is None else _dump(record.state),
                        record.move_number,
                        _dump(record.extra),
                        now,
                        record.id,
                    ),
                )
                if move is not None:
                    await self._db.execute(
                        "INSERT INTO moves (table_id, move_number, player, action, at)"
                        " VALUES (?, ?, ?, ?, ?)",
                        (record.id, record.move_number, move[0], move[1], now),
                    )
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise

    async def get_table(self, table_id: int) -> TableRecord | None:
        """The table with this id, or None."""
        async with self._db.execute("SELECT * FROM tables WHERE id = ?", (table_id,)) as cursor:
            row = await cursor.fetchone()
        return None if row is None else _row_to_record(row)

    async def open_tables(self, game: str | None = None) -> list[TableRecord]:
        """Every lobby and running game (of one game, if given), oldest first."""
        query = "SELECT * FROM tables WHERE status IN ('lobby', 'running')"
        params: tuple[Any, ...] = ()
        if game is not None:
            query += " AND game = ?"
            params = (game,)
        async with self._db.execute(query + " ORDER BY id", params) as cursor:
            rows = await cursor.fetchall()
        return [_row_to_record(row) for row in rows]

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
