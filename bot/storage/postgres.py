"""The PostgreSQL backend (`DATABASE_URL=postgresql://…`): asyncpg with a connection pool.

Every save is one transaction on a pooled connection; optimistic concurrency on the
table's revision (bot.storage.work.update_table) is what keeps two writers apart, so
several processes can share the database. Shards are claimed with advisory locks held by
one dedicated connection for the life of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from typing import Any, TypeVar

import asyncpg  # type: ignore[import-untyped]

from bot.records.results import GameResult
from bot.storage import work
from bot.storage.base import Storage, Work
from bot.storage.rows import (
    DatabaseUnavailable,
    Dialect,
    SchemaTooNew,
    ShardClaimed,
    ShardCountMismatch,
    StaleWrite,
    TableRecord,
)
from bot.storage.schema import MIGRATIONS, postgres_ddl

T = TypeVar("T")
log = logging.getLogger(__name__)

# The first key of every advisory lock the bot takes ("card" in ASCII); the second is a
# shard id, or MIGRATION_LOCK while a process migrates the schema.
LOCK_KEY = 0x63617264
MIGRATION_LOCK = -1
CLAIM_LOCK = -2  # held while a process checks the shard count and claims its shards
# The first key of the shared lock every process holds on its shard count ("carc").
COUNT_KEY = 0x63617263
CONNECT_TIMEOUT = 10.0
# Seconds before each attempt to claim the shards again after their connection died; the
# last is repeated for as long as it takes (a process never gives up on its database).
RECLAIM_DELAYS = (0.0, 0.5, 1.0, 2.0)
POOL_SIZE = 10
# How long a save waits for a pooled connection (a new one included) before it counts the
# database as out of reach. The click it answers has been deferred long before.
ACQUIRE_TIMEOUT = CONNECT_TIMEOUT
# How long a save's statement may take once sent. A click is deferred after 2 s and must
# have its final answer within about 10 s (Discord lets it be edited for much longer, but
# a player waits): a save that has not answered in 4 s is treated as an uncertain commit,
# so the session reads the row back (bounded too) and frees the table's lock, instead of
# waiting as long as the server hangs. A healthy save takes milliseconds.
SAVE_TIMEOUT = 4.0
# The same for the other writes, from getting a connection to the commit: a new table's
# row, a server's setting, a quarantine (each a statement or two, answered within
# Discord's 3 seconds without a deferral), and the long ones (forgetting a person in
# every record, a back-filled game), which no click waits for.
WRITE_TIMEOUT = 2.0
LONG_WRITE_TIMEOUT = 60.0
LONG_WRITES = frozenset({work.forget_user, work.record_game})
# Where a handed click is announced, as "shard:id" (NOTIFY is per database, like the
# claims; a listener of another schema finds no such row and claims nothing).
HANDED_CHANNEL = "cardtable_handed"
# A handoff's statements run inside the click's 3 seconds: each gets this long at most.
HAND_TIMEOUT = 0.8
# The errors of a server that is out of reach, shutting down or starting up.
UNREACHABLE: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.TooManyConnectionsError,
    asyncpg.InterfaceError,
)

POSTGRES = Dialect(
    name="postgres",
    unique_violation=(asyncpg.UniqueViolationError,),
    names_player="(meta::jsonb -> 'names' -> CAST(? AS TEXT)) IS NOT NULL",
    set_version="UPDATE cardtable_schema SET version = {version}",
    ddl=postgres_ddl,
)

# Made once, before the first migration: where the schema version is kept, and the two
# SQLite functions the records' queries use (bot.queries.players), so that their SQL stays one text.
BOOTSTRAP = """
CREATE TABLE cardtable_schema (version INTEGER NOT NULL);
INSERT INTO cardtable_schema (version) VALUES (0);
CREATE FUNCTION json_extract(document TEXT, path TEXT) RETURNS DOUBLE PRECISION
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT (document::jsonb #>> string_to_array(substr(path, 3), '.'))::double precision $$;
CREATE AGGREGATE total(DOUBLE PRECISION) (
    SFUNC = float8pl, STYPE = DOUBLE PRECISION, INITCOND = '0'
);
"""


@functools.lru_cache(maxsize=1024)
def numbered(sql: str) -> str:
    """SQL with `?` placeholders in PostgreSQL's `$1, $2, …` form (quoted text left alone)."""
    out: list[str] = []
    count = 0
    quoted = False
    for char in sql:
        if char == "'":
            quoted = not quoted
        elif char == "?" and not quoted:
            count += 1
            out.append(f"${count}")
            continue
        out.append(char)
    return "".join(out)


@functools.lru_cache(maxsize=64)
def save_with_move(columns: tuple[str, ...] = work.TABLE_COLUMNS) -> str:
    """A move and the state it produced in one statement: one round trip, atomic on its own.

    Data-modifying WITH parts always run to completion, so the move is logged exactly when
    the revision matched; the count says whether it did.
    """
    return numbered(
        f"WITH updated AS ({work.update_sql(columns)} RETURNING id),"
        " logged AS (INSERT INTO moves (table_id, move_number, player, action, at)"
        " SELECT id, CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS TEXT),"
        " CAST(? AS DOUBLE PRECISION) FROM updated RETURNING 1)"
        " SELECT COUNT(*) FROM updated"
    )


class _Transaction:
    """An open transaction on one pooled connection."""

    dialect = POSTGRES

    def __init__(self, connection: asyncpg.Connection) -> None:
        self._connection = connection

    async def execute(self, sql: str, *params: Any) -> int:
        """Run a statement; the number of rows it changed (from the command tag)."""
        if params:
            tag = await self._connection.execute(numbered(sql), *params)
        else:
            tag = await self._connection.execute(sql)
        last = str(tag).rsplit(" ", 1)[-1]
        return int(last) if last.isdigit() else 0

    async def fetch(self, sql: str, *params: Any) -> list[Any]:
        """The rows of a query."""
        return list(await self._connection.fetch(numbered(sql), *params))


async def schema_version_at(connection: asyncpg.Connection) -> int:
    """The schema version of the database a connection is on (0 if the bot never ran on it)."""
    if await connection.fetchval("SELECT to_regclass('cardtable_schema')") is None:
        return 0
    return int(await connection.fetchval("SELECT version FROM cardtable_schema"))


async def probe(url: str) -> int:
    """Connect once and read the schema version; the driver's error if that fails."""
    connection = await asyncpg.connect(url, timeout=CONNECT_TIMEOUT)
    try:
        return await schema_version_at(connection)
    finally:
        await connection.close()


class PostgresStorage(Storage):
    """The bot's database on a PostgreSQL server, shared by every process of the bot."""

    dialect = POSTGRES

    save_limit = SAVE_TIMEOUT

    def __init__(self, url: str, pool: asyncpg.Pool) -> None:
        self._url = url
        self._pool = pool
        self._claim: asyncpg.Connection | None = None
        self._claimed: list[int] = []
        self._count: int | None = None  # the shard count this process holds a lock on
        self._reclaiming: asyncio.Task[None] | None = None
        # The connection that LISTENs for handed clicks (outside the pool), its shards,
        # whom to tell, and the task listening again after the database came back.
        self._listener: asyncpg.Connection | None = None
        self._listen_shards: frozenset[int] = frozenset()
        self._on_handed: Callable[[int, int], None] | None = None
        self._relistening: asyncio.Task[None] | None = None

    hands_off = True

    @classmethod
    async def connect(cls, url: str, *, pool_size: int = POOL_SIZE) -> PostgresStorage:
        """Open a connection pool on the database and bring its schema up to date."""
        pool = await asyncpg.create_pool(
            url, min_size=1, max_size=pool_size, timeout=CONNECT_TIMEOUT
        )
        storage = cls(url, pool)
        try:
            await storage.migrate()
        except BaseException:
            await pool.close()
            raise
        return storage

    @property
    def url(self) -> str:
        """The database's URL (with its password: never log it)."""
        return self._url

    async def close(self) -> None:
        """Stop listening, give up the shards claimed, then close the pool (again is
        harmless)."""
        await self._stop_listening()
        if self._reclaiming is not None:
            self._reclaiming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reclaiming
            self._reclaiming = None
        if self._claim is not None:
            claim, self._claim = self._claim, None
            self._count = None  # its shared lock goes with the connection
            try:
                await claim.close()
            except (OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError):
                # The server dropped it first (its locks went with it): nothing to give up.
                claim.terminate()
        if not self._pool.is_closing():
            await self._pool.close()

    async def schema_version(self) -> int:
        """The schema version the database is at."""
        async with self._connection() as connection:
            return await schema_version_at(connection)

    async def probe(self) -> None:
        """One trivial query: DatabaseUnavailable if the server is out of reach."""
        async with self._connection() as connection:
            try:
                await connection.fetchval("SELECT 1", timeout=CONNECT_TIMEOUT)
            except UNREACHABLE as error:
                raise DatabaseUnavailable(f"the database does not answer: {error!r}") from error

    @contextlib.asynccontextmanager
    async def _connection(self, wait: float = ACQUIRE_TIMEOUT) -> AsyncIterator[asyncpg.Connection]:
        """A pooled connection; DatabaseUnavailable if none can be had within ``wait``
        seconds (nothing was sent).

        A connection that fails to reset on its way back to the pool (asyncpg can raise
        from release() after a commit) is the pool's to replace: the statement's answer is
        already in, so that failure is logged, not passed on as a failed save.

        A connection whose statement timed out or was cancelled is in an unknown state
        (a statement may still run on the server, and resetting it would wait on a server
        that does not answer): it is closed, and the pool opens a new one when needed.
        """
        try:
            connection = await self._pool.acquire(timeout=wait)
        except UNREACHABLE as error:
            raise DatabaseUnavailable(f"cannot reach the database: {error!r}") from error
        try:
            yield connection
        except BaseException as error:
            if _interrupted(error):
                connection.terminate()
            raise
        finally:
            try:
                await self._pool.release(connection)
            except Exception:
                log.warning("a database connection failed to go back to the pool", exc_info=True)

    async def migrate(self) -> None:
        """Apply every migration not yet applied, each in its own transaction.

        Processes starting together take turns (an advisory lock), so each step runs once.
        """
        async with self._pool.acquire() as connection:
            await connection.execute("SELECT pg_advisory_lock($1, $2)", LOCK_KEY, MIGRATION_LOCK)
            try:
                current = await schema_version_at(connection)
                if current > len(MIGRATIONS):
                    raise SchemaTooNew(
                        f"database schema v{current} is newer than this bot"
                        f" (v{len(MIGRATIONS)}); upgrade the bot or use another DATABASE_URL"
                    )
                if await connection.fetchval("SELECT to_regclass('cardtable_schema')") is None:
                    async with connection.transaction():
                        await connection.execute(BOOTSTRAP)
                for version, step in enumerate(MIGRATIONS[current:], start=current + 1):
                    async with connection.transaction():
                        await work.apply_step(_Transaction(connection), step, version)
            finally:
                await connection.execute(
                    "SELECT pg_advisory_unlock($1, $2)", LOCK_KEY, MIGRATION_LOCK
                )

    async def claim_shards(self, shard_ids: Sequence[int], shard_count: int | None = None) -> None:
        """Own these shards until close (or until the process dies and PostgreSQL notices).

        One session advisory lock per shard, on a connection of its own outside the pool;
        ShardClaimed naming every shard another process holds (and none is kept then).
        With a ``shard_count``, a shared lock on it too: ShardCountMismatch if another
        process holds one on another count (a process keeps one count). Claims take turns,
        so two processes starting together with different counts cannot both pass the check.
        """
        if shard_count is not None and self._count not in (None, shard_count):
            raise ShardCountMismatch(shard_count, [self._count])  # one count per process
        if self._claim is None:
            self._claim = await asyncpg.connect(self._url, timeout=CONNECT_TIMEOUT)
            self._claim.add_termination_listener(self._claim_lost)
        claim = self._claim
        await claim.execute("SELECT pg_advisory_lock($1, $2)", LOCK_KEY, CLAIM_LOCK)
        try:
            counted = False
            if shard_count is not None and self._count is None:
                await self._hold_count(claim, shard_count)
                counted = True
            taken: list[int] = []
            held: list[int] = []
            for shard in sorted(set(shard_ids)):
                got = await claim.fetchval("SELECT pg_try_advisory_lock($1, $2)", LOCK_KEY, shard)
                (taken if got else held).append(shard)
            if held:
                for shard in taken:
                    await claim.fetchval("SELECT pg_advisory_unlock($1, $2)", LOCK_KEY, shard)
                if counted:
                    await claim.fetchval(
                        "SELECT pg_advisory_unlock_shared($1, $2)", COUNT_KEY, self._count
                    )
                    self._count = None
                raise ShardClaimed(held)
        finally:
            await claim.execute("SELECT pg_advisory_unlock($1, $2)", LOCK_KEY, CLAIM_LOCK)
        self._claimed = sorted({*self._claimed, *taken})
        log.info("claimed shards %s", taken)

    async def _hold_count(self, claim: asyncpg.Connection, count: int) -> None:
        """Hold a shared lock on the shard count; ShardCountMismatch if others run another."""
        others = await claim.fetch(
            "SELECT DISTINCT objid::bigint AS count FROM pg_locks WHERE locktype = 'advisory'"
            " AND classid = $1::bigint::oid AND objsubid = 2 AND granted"
            " AND pid <> pg_backend_pid()"
            # Advisory locks are per database: another database's bots are not ours.
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            COUNT_KEY,
        )
        counts = {int(row["count"]) for row in others} - {count}
        if counts:
            raise ShardCountMismatch(count, counts)
        await claim.fetchval("SELECT pg_advisory_lock_shared($1, $2)", COUNT_KEY, count)
        self._count = count

    def _claim_lost(self, connection: object) -> None:
        """The claim's connection died (not closed by us): claim the shards again at once."""
        if self._claim is None:
            return  # closed on purpose
        self._claim = None
        count, self._count = self._count, None
        if self._reclaiming is not None and not self._reclaiming.done():
            return  # died during an attempt to claim again: that attempt's loop goes on
        shards, self._claimed = self._claimed, []
        # Until claimed again another process may take these shards; saves stay safe
        # (revisions), but timers could run twice, so the gap is kept short.
        log.error("lost the database connection holding shards %s; claiming them again", shards)
        self._reclaiming = asyncio.get_running_loop().create_task(self._reclaim(shards, count))

    async def _reclaim(self, shards: list[int], count: int | None) -> None:
        """Claim the shards again, for as long as the database stays away; the ones another
        process took meanwhile are given up (on_shards_lost), and the rest kept."""
        attempt = 0
        while True:
            await asyncio.sleep(RECLAIM_DELAYS[min(attempt, len(RECLAIM_DELAYS) - 1)])
            attempt += 1
            try:
                await self.claim_shards(shards, count)
            except ShardClaimed as error:
                kept = [shard for shard in shards if shard not in error.shards]
                self._shards_lost(list(error.shards), str(error))
                shards = kept
                if not shards:
                    return
                attempt = 0  # the free ones at once
                continue
            except ShardCountMismatch as error:
                self._shards_lost(shards, str(error))
                return
            except (*UNREACHABLE, asyncpg.PostgresError) as error:
                if attempt == 1 or attempt % 30 == 0:
                    log.warning(
                        "cannot claim shards %s again yet (attempt %d): %r", shards, attempt, error
                    )
                self.mark_down(DatabaseUnavailable(repr(error)))
                if self._claim is not None:
                    self._claim.terminate()  # half set up: the next attempt starts afresh
                    self._claim = None
                continue
            log.warning("claimed shards %s again after %d attempts", shards, attempt)
            # The database answered: say so now (the heartbeat is rewritten at once), not
            # at the next save or health probe, up to a beat later.
            self.mark_up()
            return

    def _shards_lost(self, shards: list[int], reason: str) -> None:
        """Some shards are another process's now: this one must stop running them."""
        log.critical(
            "shards %s were claimed by another process while the database connection was"
            " down (%s); this process stops running them",
            shards,
            reason,
        )
        if self.on_shards_lost is not None:
            self.on_shards_lost(shards, reason)

    # -- clicks handed between processes ------------------------------------------------

    async def _handoff(self, method: str, sql: str, *params: Any) -> Any:
        """One handoff statement on a pooled connection, within HAND_TIMEOUT from asking
        for the connection (DatabaseUnavailable or TimeoutError past it)."""
        deadline = asyncio.get_running_loop().time() + HAND_TIMEOUT
        async with self._connection(wait=HAND_TIMEOUT) as connection:
            async with asyncio.timeout_at(deadline):
                return await getattr(connection, method)(sql, *params)

    async def hand_click(self, shard: int, payload: str, now: float) -> int:
        """Hand an interaction's raw payload to the process of ``shard``: one statement
        inserts it and notifies the listeners (delivered when it commits)."""
        click_id = await self._handoff(
            "fetchval",
            "WITH handed AS (INSERT INTO handed_clicks (shard, payload, handed_at)"
            " VALUES ($1, $2, $3) RETURNING id)"
            " SELECT id, pg_notify($4, $1::text || ':' || id) FROM handed",
            shard,
            payload,
            now,
            HANDED_CHANNEL,
        )
        return int(click_id)

    async def claim_click(self, click_id: int, by: str, now: float) -> tuple[str, float] | None:
        """Take a handed click if nobody claimed or cancelled it: one atomic UPDATE."""
        row = await self._handoff(
            "fetchrow",
            "UPDATE handed_clicks SET claimed_at = $2, claimed_by = $3"
            " WHERE id = $1 AND claimed_at IS NULL AND cancelled = 0"
            " RETURNING payload, handed_at",
            click_id,
            now,
            by,
        )
        return None if row is None else (str(row["payload"]), float(row["handed_at"]))

    async def cancel_click(self, click_id: int) -> bool:
        """Withdraw a handed click nobody claimed: one atomic UPDATE, so a claim after it
        finds nothing and one before it makes it fail."""
        tag = await self._handoff(
            "execute",
            "UPDATE handed_clicks SET cancelled = 1"
            " WHERE id = $1 AND claimed_at IS NULL AND cancelled = 0",
            click_id,
        )
        return str(tag).rsplit(" ", 1)[-1] == "1"

    async def forget_clicks(self, click_id: int, before: float) -> None:
        """Delete a settled handed click, and any left behind older than ``before``."""
        await self._handoff(
            "execute",
            "DELETE FROM handed_clicks WHERE id = $1 OR handed_at < $2",
            click_id,
            before,
        )

    async def listen_for_clicks(
        self, shards: Collection[int], on_handed: Callable[[int, int], None]
    ) -> None:
        """LISTEN on a connection of its own; when it dies, listen again for as long as the
        database stays away, then offer every click handed meanwhile that is still
        unclaimed (a notification sent while nobody listened is lost)."""
        self._listen_shards = frozenset(shards)
        self._on_handed = on_handed
        await self._listen()

    async def _listen(self) -> None:
        connection = await asyncpg.connect(self._url, timeout=CONNECT_TIMEOUT)
        try:
            await connection.add_listener(HANDED_CHANNEL, self._notified)
            waiting = await connection.fetch(
                "SELECT id, shard FROM handed_clicks"
                " WHERE claimed_at IS NULL AND cancelled = 0 AND shard = ANY($1::integer[])",
                sorted(self._listen_shards),
                timeout=CONNECT_TIMEOUT,
            )
        except BaseException:
            connection.terminate()
            raise
        connection.add_termination_listener(self._listener_lost)
        self._listener = connection
        for row in waiting:
            self._offer(int(row["id"]), int(row["shard"]))

    def _notified(self, connection: object, pid: int, channel: str, payload: str) -> None:
        """A click was handed to some process: offer it if it is for one of our shards."""
        try:
            shard_text, id_text = payload.split(":", 1)
            shard, click_id = int(shard_text), int(id_text)
        except ValueError:
            log.warning("ignored a malformed handed-click notification %r", payload)
            return
        if shard in self._listen_shards:
            self._offer(click_id, shard)

    def _offer(self, click_id: int, shard: int) -> None:
        if self._on_handed is not None:
            self._on_handed(click_id, shard)

    def _listener_lost(self, connection: object) -> None:
        """The listening connection died (not closed by us): listen again at once."""
        if self._listener is None or self._on_handed is None:
            return  # closed on purpose
        self._listener = None
        if self._relistening is not None and not self._relistening.done():
            return
        log.error("lost the database connection listening for handed clicks; listening again")
        self._relistening = asyncio.get_running_loop().create_task(self._relisten())

    async def _relisten(self) -> None:
        attempt = 0
        while True:
            await asyncio.sleep(RECLAIM_DELAYS[min(attempt, len(RECLAIM_DELAYS) - 1)])
            attempt += 1
            try:
                await self._listen()
            except (*UNREACHABLE, asyncpg.PostgresError) as error:
                if attempt == 1 or attempt % 30 == 0:
                    log.warning(
                        "cannot listen for handed clicks again yet (attempt %d): %r",
                        attempt,
                        error,
                    )
                continue
            log.warning("listening for handed clicks again after %d attempts", attempt)
            return

    async def _stop_listening(self) -> None:
        self._on_handed = None
        if self._relistening is not None:
            self._relistening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._relistening
            self._relistening = None
        if self._listener is not None:
            listener, self._listener = self._listener, None
            try:
                await listener.close(timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError):
                listener.terminate()

    async def read(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of a read-only query (the records' history, stats and leaderboards)."""
        async with self._connection() as connection:
            return list(await connection.fetch(numbered(query), *params))

    async def _save(
        self,
        record: TableRecord,
        move: tuple[str, str] | None,
        expected: int,
        now: float,
        result: GameResult | None,
        columns: tuple[str, ...] = work.TABLE_COLUMNS,
    ) -> None:
        """A move (or a lobby change) is one statement and one round trip; the end of a
        game, with its records and ratings, is the shared multi-statement transaction."""
        params = (*work.values_of(record, columns), now, record.id, expected)
        # One limit from asking for a connection to the answer: a pool that must open a
        # new connection to a server that does not answer is given up within it too
        # (DatabaseUnavailable: nothing was sent).
        deadline = asyncio.get_running_loop().time() + SAVE_TIMEOUT
        async with self._connection(wait=SAVE_TIMEOUT) as connection:
            # Past SAVE_TIMEOUT: TimeoutError, the outcome unknown (the caller reads back);
            # the connection is closed on the way out (see _connection).
            async with asyncio.timeout_at(deadline):
                if result is not None:
                    await _in_transaction(
                        connection, work.update_table, record, move, expected, now, result, columns
                    )
                    return
                if move is None:
                    tag = await connection.execute(numbered(work.update_sql(columns)), *params)
                    changed = int(str(tag).rsplit(" ", 1)[-1])
                else:
                    changed = await connection.fetchval(
                        save_with_move(columns), *params, record.move_number, move[0], move[1], now
                    )
        if changed != 1:
            raise StaleWrite(f"table {record.id} is no longer at revision {expected}")

    async def _transaction(self, unit: Work[T], *args: Any) -> T:
        """Run the unit of work in one transaction on a pooled connection, within
        WRITE_TIMEOUT (LONG_WRITE_TIMEOUT for LONG_WRITES) from asking for the connection:
        DatabaseUnavailable if none came (nothing was sent), TimeoutError if the server did
        not answer in time (the outcome unknown; the connection is closed)."""
        limit = LONG_WRITE_TIMEOUT if unit in LONG_WRITES else WRITE_TIMEOUT
        deadline = asyncio.get_running_loop().time() + limit
        async with self._connection(wait=limit) as connection:
            async with asyncio.timeout_at(deadline):
                return await _in_transaction(connection, unit, *args)


async def _in_transaction(connection: asyncpg.Connection, unit: Work[T], *args: Any) -> T:
    """Run a unit of work in one transaction, for a caller that bounds it in time.

    Not asyncpg's transaction(): on a timeout it would send ROLLBACK to the server that
    does not answer and wait for it. A cut-off transaction is left to the connection's
    closing instead (the server rolls it back when it sees the connection gone).
    """
    await connection.execute("BEGIN")
    try:
        result = await unit(_Transaction(connection), *args)
    except BaseException as error:
        if not _interrupted(error) and not connection.is_closed():
            await connection.execute("ROLLBACK")
        raise
    await connection.execute("COMMIT")
    return result


def _interrupted(error: BaseException) -> bool:
    """Whether a statement was cut off mid-way (a timeout or a cancellation), directly or
    as the cause of the error raised: its connection's state is unknown."""
    cut = (TimeoutError, asyncio.CancelledError)
    return isinstance(error, cut) or isinstance(error.__cause__, cut)
