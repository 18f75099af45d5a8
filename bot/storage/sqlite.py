"""The SQLite backend (the default): one aiosqlite connection, writes serialised by a lock."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import aiosqlite

from bot.storage import work
from bot.storage.base import Storage, Work
from bot.storage.rows import DatabaseUnavailable, Dialect, SchemaTooNew
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


# SQLite's primary result codes of a file that cannot be written now: busy or locked by
# another connection, read-only, an I/O error, full, cannot be opened. Rolled back, each
# leaves the database as it was.
UNAVAILABLE_CODES = frozenset(
    {
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
    }
)


def unavailable(error: BaseException) -> bool:
    """Whether a SQLite error means the file cannot be written now (not a bad statement)."""
    code = getattr(error, "sqlite_errorcode", None)
    return (
        isinstance(error, sqlite3.Error) and code is not None and code & 0xFF in UNAVAILABLE_CODES
    )


def _in_transaction(connection: sqlite3.Connection, unit: Work[T], args: tuple[Any, ...]) -> T:
    try:
        connection.execute("BEGIN")
        value = run_to_end(unit(_Transaction(connection), *args))
        connection.commit()
    except BaseException as error:
        if connection.in_transaction:
            connection.rollback()
        if unavailable(error):
            raise DatabaseUnavailable(f"the database file cannot be written: {error}") from error
        raise
    return value


def _in_transactions(connection: sqlite3.Connection, batch: list[_Job]) -> list[tuple[bool, Any]]:
    """Run each job in its own transaction, in order: (ok, value or error) per job.

    Once the file proves unwritable the rest of the batch is refused at once: each would
    otherwise wait out the busy timeout in turn, long after its click needed an answer.
    """
    outcomes: list[tuple[bool, Any]] = []
    down: DatabaseUnavailable | None = None
    for unit, args, _ in batch:
        if down is not None:
            outcomes.append((False, DatabaseUnavailable(str(down))))
            continue
        try:
            outcomes.append((True, _in_transaction(connection, unit, args)))
        except DatabaseUnavailable as error:
            down = error
            outcomes.append((False, error))
        except Exception as error:
            outcomes.append((False, error))
    return outcomes


async def _probe_write(transaction: Any) -> None:
    """A write that changes nothing: it needs the file's write lock and a writable file."""
    await transaction.execute("DELETE FROM guild_settings WHERE 0")


# A unit of work for the database thread: the unit, its arguments, its future (None for
# a unit its caller awaits directly).
_Job = tuple[Work[Any], tuple[Any, ...], "asyncio.Future[Any] | None"]


class SqliteStorage(Storage):
    """The bot's database in one SQLite file.

    Writes are group-committed: the units of work that arrive while the database thread is
    busy go to it together, in one hop, each still in its own transaction. Under load a hop
    (a wake-up of the thread and one of the event loop, and the GIL handed back and forth)
    costs more than the small transaction it carries.
    """

    dialect = SQLITE

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection
        self._write = asyncio.Lock()
        self._waiting: list[_Job] = []
        self._writer: asyncio.Task[None] | None = None

    @classmethod
    async def connect(cls, path: Path | str, *, busy_timeout: float = 5.0) -> SqliteStorage:
        """Open (creating if needed) the database file and bring its schema up to date."""
        connection = await aiosqlite.connect(str(path), timeout=busy_timeout)
        connection.row_factory = aiosqlite.Row
        storage = cls(connection)
        # A save waits at most the busy timeout for another process's lock, then fails
        # for certain (DatabaseUnavailable): that is its limit.
        storage.save_limit = busy_timeout
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
        """Close the connection, once the writes already handed over are committed."""
        if self._writer is not None:
            await self._writer
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

    async def probe(self) -> None:
        """A write that changes nothing: DatabaseUnavailable while the file is locked by
        another connection, read-only or otherwise unwritable (reads may still work)."""
        await self._transaction(_probe_write)

    async def claim_shards(self, shard_ids: Sequence[int], shard_count: int | None = None) -> None:
        """Nothing to do: the instance lock (bot.runtime.instance_lock) keeps a file to one
        process."""

    async def read(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of a read-only query (the records' history, stats and leaderboards)."""
        async with self._db.execute(query, tuple(params)) as cursor:
            return list(await cursor.fetchall())

    async def _transaction(self, unit: Work[T], *args: Any) -> T:
        """Run the unit of work on the database thread, in its own transaction.

        It joins the next batch (see the class): in order with every other write, and one
        failing unit rolls back only itself.
        """
        if self._writer is None and not self._write.locked():
            # The database thread is idle: this unit goes over at once, from this task (a
            # writer task would cost a task and a wake-up more); units that arrive
            # meanwhile wait for the writer that follows it.
            return await self._write_now(unit, args)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._waiting.append((unit, args, future))
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write_batches())
        return await future

    async def _write_now(self, unit: Work[T], args: tuple[Any, ...]) -> T:
        """One unit on the idle database thread; then the writer takes what came meanwhile."""
        try:
            async with self._write:
                outcomes = await self._in_thread(_in_transactions, [(unit, args, None)])
        finally:
            if self._waiting and self._writer is None:
                self._writer = asyncio.get_running_loop().create_task(self._write_batches())
        ok, value = outcomes[0]
        if not ok:
            raise value
        return cast(T, value)

    async def _write_batches(self) -> None:
        """Hand the waiting units to the database thread, a batch per hop, until none wait."""
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                try:
                    async with self._write:
                        outcomes = await self._in_thread(_in_transactions, batch)
                except BaseException as error:
                    # The thread itself failed (closed connection): every unit of the batch.
                    for _, _, future in batch:
                        if future is not None and not future.done():
                            future.set_exception(
                                error if isinstance(error, Exception) else RuntimeError(error)
                            )
                    if not isinstance(error, Exception):
                        raise
                    continue
                for (_, _, future), (ok, value) in zip(batch, outcomes, strict=True):
                    if future is None or future.done():
                        continue  # its caller was cancelled; the unit ran all the same
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)
        finally:
            self._writer = None
            # Cancelled (the loop shutting down): whoever still waits must hear of it.
            for _, _, future in self._waiting:
                if future is not None and not future.done():
                    future.set_exception(RuntimeError("the database writer stopped"))
            self._waiting = []

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
