"""The SQLite backend (the default): one aiosqlite connection, writes serialised by a lock."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import aiosqlite

from bot.storage import work
from bot.storage.base import Dialect, SchemaTooNew
from bot.storage.interface import Storage, Work
from bot.storage.schema import MIGRATIONS, Migration

T = TypeVar("T")

SQLITE = Dialect(
    name="sqlite",
    unique_violation=(sqlite3.IntegrityError,),
    names_player="json_extract(meta, '$.names.\"' || ? || '\"') IS NOT NULL",
    set_version="PRAGMA user_version = {version}",
    ddl=lambda sql: sql,
)


def schema_version_of(path: Path | str) -> int:
    """The schema version of a database file, read synchronously (for start-up checks)."""
    connection = sqlite3.connect(str(path))
    try:
        return int(connection.execute("PRAGMA user_version").fetchone()[0])
    finally:
        connection.close()


class _Transaction:
    """A transaction on the raw sqlite3 connection, used on the database thread only.

    Its methods are coroutines that never suspend, so the shared work in bot.storage.work
    runs on this thread from start to end (see ``run_to_end``).
    """

    dialect = SQLITE

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    async def execute(self, sql: str, *params: Any) -> int:
        """Run a statement; the number of rows it changed."""
        return self._connection.execute(sql, params).rowcount

    async def fetch(self, sql: str, *params: Any) -> list[Any]:
        """The rows of a query."""
        return self._connection.execute(sql, params).fetchall()


def run_to_end(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never suspends, run synchronously on this thread."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return cast(T, finished.value)
    coroutine.close()
    raise RuntimeError("a SQLite unit of work awaited something other than its transaction")


def _in_transaction(connection: sqlite3.Connection, unit: Work[T], args: tuple[Any, ...]) -> T:
    try:
        connection.execute("BEGIN")
        value = run_to_end(unit(_Transaction(connection), *args))
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
    return value


class SqliteStorage(Storage):
    """The bot's database in one SQLite file."""

    dialect = SQLITE

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection
        self._write = asyncio.Lock()

    @classmethod
    async def connect(cls, path: Path | str, *, busy_timeout: float = 5.0) -> SqliteStorage:
        """Open (creating if needed) the database file and bring its schema up to date."""
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
                await self._in_thread(_in_transaction, work.apply_step, (step, version))

    async def claim_shards(self, shard_ids: Sequence[int]) -> None:
        """Nothing to do: the instance lock (bot.instance_lock) keeps a file to one process."""

    async def read(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of a read-only query (the records' history, stats and leaderboards)."""
        async with self._db.execute(query, tuple(params)) as cursor:
            return list(await cursor.fetchall())

    async def _transaction(self, unit: Work[T], *args: Any) -> T:
        """Run the unit of work on the database thread, in one transaction and one hop."""
        async with self._write:
            value: T = await self._in_thread(_in_transaction, unit, args)
        return value

    async def _in_thread(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run ``function(connection, *args)`` on the database thread: one round trip in all.

        aiosqlite runs each call on its own thread; a whole transaction in one call saves
        the two extra hops a statement-by-statement save would make under load.
        """
        db = self._db
        # aiosqlite has no public "run this function on the database thread" call.
        execute = cast(Callable[[Callable[[], Any]], Awaitable[Any]], db._execute)
        return await execute(lambda: function(db._conn, *args))


def migrate_step(connection: sqlite3.Connection, step: Migration, version: int) -> None:
    """Apply one migration step to a plain sqlite3 connection (to build old databases)."""
    _in_transaction(connection, work.apply_step, (step, version))
