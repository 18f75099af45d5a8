"""The Storage interface, implemented once on the two primitives each backend provides.

`_transaction` runs one unit of work (bot.storage.work) in one transaction and `read`
returns the rows of a read-only query. SQL is written once, with `?` placeholders; the
PostgreSQL backend numbers them.
"""

from __future__ import annotations

import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Coroutine, Sequence
from typing import Any, TypeVar

from bot import metrics
from bot.records.results import GameResult
from bot.storage import work
from bot.storage.rows import (
    BrokenRow,
    DatabaseUnavailable,
    Dialect,
    TableRecord,
    broken_row,
    row_to_record,
)

T = TypeVar("T")
Work = Callable[..., Coroutine[Any, Any, T]]
log = logging.getLogger(__name__)

# While the database is down, one save per this many seconds is tried; the others fail at
# once (nothing changed), so that a click is answered at once and a dead server is not
# hammered. The first save tried after the database's return notices it.
RETRY_INTERVAL = 0.5


class Storage(ABC):
    """The bot's database, SQLite or PostgreSQL: tables, their move logs and the records.

    A backend (sqlite.py, postgres.py) subclasses this and imports nothing of the other;
    `bot.storage.open_storage` picks one.

    Usage::

        storage = await open_storage("postgresql://cardtable@db/cardtable")
        try:
            for record in await storage.open_tables(game="nothanks"):
                ...  # a TableRecord, or a BrokenRow to quarantine
        finally:
            await storage.close()
    """

    dialect: Dialect
    # Called (with the shards and the reason) when shards claimed were taken by another
    # process while their claim was lost: this one must stop running them. Only
    # PostgreSQL claims can be lost.
    on_shards_lost: Callable[[list[int], str], None] | None = None
    # Called with False when the database becomes unavailable, with True when it is back.
    on_availability: Callable[[bool], None] | None = None
    # When the current outage began (wall clock, for the heartbeat); None while it answers.
    down_since: float | None = None
    # How many outages began since the storage opened (a beat tells a short one happened).
    outages: int = 0
    _tried_at: float = 0.0
    # The longest a save may take before it raises (its outcome then certain, or unknown
    # and read back): what a click must have left of its time before its save is sent.
    save_limit: float = 5.0

    @abstractmethod
    async def close(self) -> None:
        """Close every connection (and give up any shard claimed)."""

    async def probe(self) -> None:
        """Check that the database answers; DatabaseUnavailable (or the driver's error) if not."""
        await self.schema_version()

    @property
    def available(self) -> bool:
        """Whether the database answered the last time it was used."""
        return self.down_since is None

    def mark_down(self, error: BaseException, *, since: float | None = None) -> None:
        """Note that the database is unavailable (said once per outage). Its return is
        noticed by the next save tried (see RETRY_INTERVAL) or the next health probe.

        ``since`` (wall clock) is when the failed operation began: the outage is counted
        from there, as the player waited from there, not from when it gave up.
        """
        if self.down_since is not None:
            return
        self.down_since = time.time() if since is None else since
        self.outages += 1
        # The driver's traceback once per outage (repr for an error without a message: a
        # save's TimeoutError said nothing); what is refused meanwhile logs a line.
        log.error("the database is unavailable: %s", str(error) or repr(error), exc_info=error)
        if self.on_availability is not None:
            self.on_availability(False)

    def mark_up(self) -> None:
        """Note that the database answers again."""
        if self.down_since is None:
            return
        log.warning("the database answers again after %.1f s", time.time() - self.down_since)
        self.down_since = None
        if self.on_availability is not None:
            self.on_availability(True)

    def may_try(self) -> bool:
        """Whether a save now would be tried: always while the database answers, else once
        per RETRY_INTERVAL (the others are refused at once)."""
        return self.down_since is None or time.monotonic() - self._tried_at >= RETRY_INTERVAL

    @abstractmethod
    async def schema_version(self) -> int:
        """The schema version the database is at."""

    @abstractmethod
    async def migrate(self) -> None:
        """Apply every migration the database has not seen yet, each in its own transaction."""

    @abstractmethod
    async def claim_shards(self, shard_ids: Sequence[int], shard_count: int | None = None) -> None:
        """Own these shards for the life of this storage; ShardClaimed if another has one.

        ``shard_count`` is the number of shards the guilds are split into (0: every shard,
        the count left to Discord); ShardCountMismatch if another process runs another
        count. None leaves the count unchecked.
        """

    @abstractmethod
    async def read(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of a read-only query (the records' history, stats and leaderboards)."""

    # -- clicks handed to the process that runs their table ---------------------------
    # Only PostgreSQL, where several processes share the database, hands clicks over;
    # on SQLite one process runs every table and these are never called.
    hands_off: bool = False

    async def hand_click(self, shard: int, payload: str, now: float) -> int:
        """Hand an interaction's raw payload to the process of ``shard`` (and wake it);
        the handed click's id."""
        raise NotImplementedError(f"{type(self).__name__} does not hand clicks over")

    async def claim_click(self, click_id: int, by: str, now: float) -> tuple[str, float] | None:
        """Take a handed click to answer it: its payload and when it was handed, or None if
        it was claimed already or cancelled (atomic: exactly one of claim and cancel wins)."""
        raise NotImplementedError(f"{type(self).__name__} does not hand clicks over")

    async def cancel_click(self, click_id: int) -> bool:
        """Withdraw a handed click nobody claimed; False if it was claimed first."""
        raise NotImplementedError(f"{type(self).__name__} does not hand clicks over")

    async def forget_clicks(self, click_id: int, before: float) -> None:
        """Delete a settled handed click, and any handed before ``before``."""
        raise NotImplementedError(f"{type(self).__name__} does not hand clicks over")

    async def listen_for_clicks(
        self, shards: Collection[int], on_handed: Callable[[int, int], None]
    ) -> None:
        """Call ``on_handed(click id, shard)`` for each click handed to one of ``shards``,
        from now until close, across database outages."""
        raise NotImplementedError(f"{type(self).__name__} does not hand clicks over")

    @abstractmethod
    async def _transaction(self, unit: Work[T], *args: Any) -> T:
        """Run ``unit(transaction, *args)`` in one transaction; roll back if it raises."""

    async def create_table(self, record: TableRecord) -> TableRecord:
        """Insert a new table and set its id; ChannelBusy if the channel has an open one."""
        record.id = await self._transaction(work.insert_table, record, time.time())
        record.revision = 0
        return record

    async def save_table(
        self,
        record: TableRecord,
        move: tuple[str, str] | None = None,
        *,
        expect_revision: int | None = None,
        result: GameResult | None = None,
        columns: Collection[str] | None = None,
    ) -> None:
        """Write the table and the move that produced it in one transaction.

        The save replaces ``expect_revision`` (default: the record's own revision) and
        bumps it; StaleWrite if the database holds another revision, so a stale writer
        never overwrites newer state. The record's revision is updated only on success.

        With a ``result`` (a game that ends), the records are written in the same
        transaction: the game, its players and, for a finished game, the new ratings,
        whose changes are also put into ``record.meta["rating_changes"]``.

        ``columns`` names the columns that changed (of ``work.TABLE_COLUMNS``); the others
        are left as stored. Every column is written when it is None.

        DatabaseUnavailable if the database is out of reach (or will not write): nothing
        was saved. Any other error leaves the outcome unknown: read the row back to know.
        A TimeoutError (a backend's save that did not answer in time) is one of those, and
        also marks the database down.
        """
        if record.id is None:
            raise ValueError("save_table needs a table that was created first")
        expected = record.revision if expect_revision is None else expect_revision
        written = work.saved_columns(columns)
        if self.down_since is not None:
            # Down: one save per interval goes through to find out whether it is back.
            if not self.may_try():
                raise DatabaseUnavailable("the database is unavailable; nothing was sent")
            self._tried_at = time.monotonic()
        started, began = time.time(), time.perf_counter()
        try:
            await self._save(record, move, expected, started, result, written)
        except (DatabaseUnavailable, TimeoutError) as error:
            self.mark_down(error, since=started)
            raise
        metrics.saved(time.perf_counter() - began)
        self.mark_up()
        record.revision = expected + 1

    async def _save(
        self,
        record: TableRecord,
        move: tuple[str, str] | None,
        expected: int,
        now: float,
        result: GameResult | None,
        columns: tuple[str, ...] = work.TABLE_COLUMNS,
    ) -> None:
        """The save itself (bot.storage.work.update_table); a backend may do it faster."""
        await self._transaction(work.update_table, record, move, expected, now, result, columns)

    async def record_game(self, result: GameResult) -> dict[str, float]:
        """Keep a game that ended outside a table save (back-fills); its rating changes."""
        return await self._transaction(work.record_game, result)

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
                found.append((row_to_record(row), row["created_at"], row["updated_at"]))
            except (ValueError, TypeError):
                continue  # an unreadable old row is simply not back-filled
        return found

    async def quarantine(self, table_id: int) -> bool:
        """Close an open table that no longer loads (status `broken`), freeing its channel;
        whether it was open (a closed table's unreadable row is left as it is)."""
        return await self._transaction(work.quarantine, table_id, time.time())

    async def rematch_opened(self, table_id: int) -> bool:
        """Whether a rematch of this table was ever opened (a table is rematched once)."""
        rows = await self.read(
            "SELECT 1 FROM tables WHERE json_extract(meta, '$.rematch_of') = ? LIMIT 1",
            (table_id,),
        )
        return bool(rows)

    async def discard_table(self, table_id: int) -> None:
        """Delete a table that never reached its channel (its lobby message failed)."""
        await self._transaction(work.discard_table, table_id)

    async def get_table(self, table_id: int) -> TableRecord | None:
        """The table with this id, or None."""
        rows = await self.read("SELECT * FROM tables WHERE id = ?", (table_id,))
        return row_to_record(rows[0]) if rows else None

    async def open_tables(
        self,
        game: str | None = None,
        shard_count: int | None = None,
        shard_ids: Collection[int] | None = None,
    ) -> list[TableRecord | BrokenRow]:
        """Every lobby and running game (of one game, if given; of the guilds of these
        shards out of ``shard_count``, if given), oldest first.

        A row that cannot be decoded comes back as a BrokenRow, never as an exception.
        """
        query = "SELECT * FROM tables WHERE status IN ('lobby', 'running')"
        params: tuple[Any, ...] = ()
        if game is not None:
            query += " AND game = ?"
            params = (game,)
        shard_query, shard_params = _of_shards(shard_count, shard_ids)
        return await self._records(query + shard_query + " ORDER BY id", params + shard_params)

    async def due_tables(
        self,
        until: float,
        since: float | None = None,
        shard_count: int | None = None,
        shard_ids: Collection[int] | None = None,
    ) -> list[TableRecord | BrokenRow]:
        """The open tables whose next timed event falls due by ``until`` (and not before
        ``since``, if given), of these shards if given, soonest first: an indexed read of
        `due_at`. Undecodable rows come back as BrokenRows."""
        query = "SELECT * FROM tables WHERE due_at <= ?"
        params: tuple[Any, ...] = (until,)
        if since is not None:
            query += " AND due_at >= ?"
            params += (since,)
        query += " AND status IN ('lobby', 'running')"
        shard_query, shard_params = _of_shards(shard_count, shard_ids)
        return await self._records(
            query + shard_query + " ORDER BY due_at, id", params + shard_params
        )

    async def next_due(
        self,
        after: float,
        limit: int,
        shard_count: int | None = None,
        shard_ids: Collection[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The next ``limit`` due times after ``after`` of open tables (of these shards if
        given), soonest first, as (table id, due time): an indexed read."""
        shard_query, shard_params = _of_shards(shard_count, shard_ids)
        rows = await self.read(
            "SELECT id, due_at FROM tables WHERE due_at > ? AND status IN ('lobby', 'running')"
            + shard_query
            + " ORDER BY due_at, id LIMIT ?",
            (after, *shard_params, limit),
        )
        return [(int(row[0]), float(row[1])) for row in rows]

    async def open_table_counts(
        self,
        shard_count: int | None = None,
        shard_ids: Collection[int] | None = None,
    ) -> dict[tuple[str, str, str], int]:
        """How many open tables there are (of these shards if given), by (game, status,
        pace): one grouped count, for the metrics' gauge of every open table, loaded or
        not. Pace is "live" or "turn_based" (a turn-based table's meta names its pace)."""
        shard_query, shard_params = _of_shards(shard_count, shard_ids)
        # The meta is compact JSON; a "pace" inside a name is escaped (\"pace\":), so
        # only the field itself matches.
        pace = """CASE WHEN meta LIKE '%"pace":%' THEN 'turn_based' ELSE 'live' END"""
        rows = await self.read(
            f"SELECT game, status, {pace}, COUNT(*) FROM tables"
            " WHERE status IN ('lobby', 'running')"
            + shard_query
            + f" GROUP BY game, status, {pace}",
            shard_params,
        )
        return {(str(row[0]), str(row[1]), str(row[2])): int(row[3]) for row in rows}

    async def open_table_in(self, channel_id: int) -> TableRecord | BrokenRow | None:
        """The open table of a channel (there is at most one), or None."""
        found = await self._records(
            "SELECT * FROM tables WHERE channel_id = ? AND status IN ('lobby', 'running')",
            (channel_id,),
        )
        return found[0] if found else None

    async def open_tables_of(self, guild_id: int) -> list[tuple[int, int]]:
        """The open tables of one server, as (table id, channel id), oldest first."""
        rows = await self.read(
            "SELECT id, channel_id FROM tables WHERE status IN ('lobby', 'running')"
            " AND guild_id = ? ORDER BY id",
            (guild_id,),
        )
        return [(int(row[0]), int(row[1])) for row in rows]

    async def load_table(self, table_id: int) -> TableRecord | BrokenRow | None:
        """The table with this id (a BrokenRow if it cannot be decoded), or None."""
        found = await self._records("SELECT * FROM tables WHERE id = ?", (table_id,))
        return found[0] if found else None

    async def open_seats(self) -> list[list[int]]:
        """The seats of every open table (who sits where games are still going on)."""
        rows = await self.read("SELECT seats FROM tables WHERE status IN ('lobby', 'running')")
        seats: list[list[int]] = []
        for row in rows:
            try:
                seats.append([int(seat) for seat in json.loads(row[0])])
            except (ValueError, TypeError):
                continue  # an unreadable row is quarantined when its table is loaded
        return seats

    async def open_tables_seating(self, user_id: int) -> list[TableRecord]:
        """The open tables (lobby or running) a person sits at, of any process, loaded or
        not, oldest first; unreadable rows are left out (quarantined when loaded)."""
        # The seats are a JSON list of ids: LIKE on the id's digits narrows the open rows
        # (read through the status index) to those that may seat the person, in SQLite
        # and PostgreSQL alike; the decoded seats decide.
        found = await self._records(
            "SELECT * FROM tables WHERE status IN ('lobby', 'running') AND seats LIKE ?"
            " ORDER BY id",
            (f"%{int(user_id)}%",),
        )
        return [
            record
            for record in found
            if isinstance(record, TableRecord) and user_id in record.seats
        ]

    async def set_due(self, table_id: int, revision: int, due_at: float | None) -> bool:
        """Store when a table's next event falls due, if the row is still at ``revision``
        (a derived column: the revision is not bumped). Whether the row was written."""
        return await self._transaction(work.set_due, table_id, revision, due_at)

    async def _records(self, query: str, params: Sequence[Any]) -> list[TableRecord | BrokenRow]:
        records: list[TableRecord | BrokenRow] = []
        for row in await self.read(query, params):
            try:
                records.append(row_to_record(row))
            except (ValueError, TypeError) as error:
                # One unreadable row (a hand edit, another version) must not keep every
                # other table from starting: the caller quarantines it.
                records.append(broken_row(row, f"unreadable row: {error}"))
        return records

    async def moves(self, table_id: int) -> list[tuple[int, str, str]]:
        """The move log of one table: (move number, player, action)."""
        rows = await self.read(
            "SELECT move_number, player, action FROM moves WHERE table_id = ? ORDER BY move_number",
            (table_id,),
        )
        return [(row[0], row[1], row[2]) for row in rows]

    async def get_guild_language(self, guild_id: int) -> str | None:
        """The language a server chose for public table messages, or None for its default."""
        rows = await self.read(
            "SELECT language FROM guild_settings WHERE guild_id = ?", (guild_id,)
        )
        return None if not rows else rows[0]["language"]

    async def set_guild_language(self, guild_id: int, language: str | None) -> None:
        """Store a server's language for public table messages; None clears it."""
        await self._transaction(work.set_guild_language, guild_id, language)

    async def get_guild_images(self, guild_id: int) -> bool | None:
        """Whether a server's table messages show pictures; None if it never chose."""
        rows = await self.read("SELECT images FROM guild_settings WHERE guild_id = ?", (guild_id,))
        return None if not rows or rows[0]["images"] is None else bool(rows[0]["images"])

    async def set_guild_images(self, guild_id: int, images: bool) -> None:
        """Store whether a server's table messages show pictures of the table."""
        await self._transaction(work.set_guild_images, guild_id, images)

    async def get_guild_turn_pings(self, guild_id: int) -> str | None:
        """When a server's turns ping the player ("every", "half", "off"); None if it never
        chose."""
        rows = await self.read(
            "SELECT turn_pings FROM guild_settings WHERE guild_id = ?", (guild_id,)
        )
        return None if not rows else rows[0]["turn_pings"]

    async def set_guild_turn_pings(self, guild_id: int, mode: str | None) -> None:
        """Store when a server's turns ping the player; None clears the choice."""
        await self._transaction(work.set_guild_turn_pings, guild_id, mode)

    async def get_guild_threads(self, guild_id: int) -> bool | None:
        """Whether a server's tables open in a thread by default; None if it never chose."""
        rows = await self.read("SELECT threads FROM guild_settings WHERE guild_id = ?", (guild_id,))
        return None if not rows or rows[0]["threads"] is None else bool(rows[0]["threads"])

    async def set_guild_threads(self, guild_id: int, threads: bool) -> None:
        """Store whether a server's tables open in a thread of their own by default."""
        await self._transaction(work.set_guild_threads, guild_id, threads)

    async def get_guild_text(self, guild_id: int, column: str) -> str | None:
        """One of a server's text settings (pace, pace_pings); None if it never chose."""
        if column not in ("pace", "pace_pings"):
            raise ValueError(f"not a text setting: {column!r}")
        rows = await self.read(
            f"SELECT {column} FROM guild_settings WHERE guild_id = ?", (guild_id,)
        )
        return None if not rows else rows[0][column]

    async def set_guild_text(self, guild_id: int, column: str, value: str | None) -> None:
        """Store one of a server's text settings (pace, pace_pings); None clears it."""
        await self._transaction(work.set_guild_text, guild_id, column, value)

    async def get_user_notify(self, user_id: int) -> str | None:
        """A person's choice of turn notices ("every", "daily", "none"); None if never."""
        rows = await self.read("SELECT notify FROM user_settings WHERE user_id = ?", (user_id,))
        return None if not rows else rows[0]["notify"]

    async def set_user_notify(self, user_id: int, mode: str | None) -> None:
        """Store a person's choice of turn notices; None clears it."""
        await self._transaction(work.set_user_notify, user_id, mode)

    async def get_user_summary_at(self, user_id: int) -> float | None:
        """When a person's last daily summary went out (the bot's clock); None if never."""
        rows = await self.read("SELECT summary_at FROM user_settings WHERE user_id = ?", (user_id,))
        return None if not rows or rows[0]["summary_at"] is None else float(rows[0]["summary_at"])

    async def daily_summaries(self) -> list[tuple[int, float | None]]:
        """Every person who chose a daily summary, and when their last one went out (None:
        never): what start-up plans again."""
        rows = await self.read(
            "SELECT user_id, summary_at FROM user_settings WHERE notify = 'daily'"
        )
        return [
            (int(row["user_id"]), None if row["summary_at"] is None else float(row["summary_at"]))
            for row in rows
        ]

    async def set_user_summary_at(self, user_id: int, at: float) -> None:
        """Store when a person's last daily summary went out."""
        await self._transaction(work.set_user_summary_at, user_id, at)

    async def get_user_away(self, user_id: int) -> tuple[float | None, int, int]:
        """A person's absence: (away until, or None; the year counted; days taken in it)."""
        rows = await self.read(
            "SELECT away_until, away_year, away_used FROM user_settings WHERE user_id = ?",
            (user_id,),
        )
        if not rows:
            return None, 0, 0
        row = rows[0]
        until = None if row["away_until"] is None else float(row["away_until"])
        return until, int(row["away_year"] or 0), int(row["away_used"] or 0)

    async def set_user_away(
        self, user_id: int, until: float | None, year: int, used: int, set_at: float
    ) -> None:
        """Store a person's absence, the days of ``year`` they have taken, and when it was
        set (``set_at``, on the tables' clock)."""
        await self._transaction(work.set_user_away, user_id, until, year, used, set_at)

    async def absences_changed(self, since: float) -> list[tuple[int, float | None, float]]:
        """Every absence set or ended after ``since``: (person, away until or None when
        back, when it was set), oldest change first. One read of an index."""
        rows = await self.read(
            "SELECT user_id, away_until, away_set_at FROM user_settings"
            " WHERE away_set_at > ? ORDER BY away_set_at",
            (since,),
        )
        return [_absence(row) for row in rows]

    async def absences_running(self, now: float) -> list[tuple[int, float | None, float]]:
        """Every absence still running at ``now`` (away until later): (person, until,
        when it was set, 0 if before its stamp was kept). One read of an index."""
        rows = await self.read(
            "SELECT user_id, away_until, away_set_at FROM user_settings WHERE away_until > ?",
            (now,),
        )
        return [_absence(row) for row in rows]

    async def forget_user(self, user_id: int, anonymous: str, name: str = "former player") -> int:
        """Forget a person in every server's records, in one transaction; rows changed.

        Their seats in stored games take ``anonymous`` as id (in the move log too, so the
        games still replay for the others) and ``name``; their names in closed tables'
        metadata become ``name``; their ratings are deleted. Open tables are left alone:
        the caller refuses while the person sits at one.
        """
        return await self._transaction(work.forget_user, str(user_id), anonymous, name)


def _of_shards(
    shard_count: int | None, shard_ids: Collection[int] | None
) -> tuple[str, tuple[Any, ...]]:
    """The condition (and its parameters) that keeps the tables of these shards' guilds."""
    if shard_ids is None:
        return "", ()
    if shard_count is None or shard_count < 1:
        raise ValueError("shard ids need a shard count")
    ids = sorted(set(shard_ids))
    # bot.table.shards.shard_of in SQL (storage may not import the table layer;
    # test_open_tables_of_some_shards holds the two together), filtered here so that a
    # process never reads another shard's states at all.
    return (
        " AND ((COALESCE(guild_id, 0) >> 22) % ?) IN (" + ", ".join("?" for _ in ids) + ")",
        (shard_count, *ids),
    )


def _absence(row: Any) -> tuple[int, float | None, float]:
    """A stored absence row: (person, away until or None, when it was set or 0)."""
    until = None if row[1] is None else float(row[1])
    return int(row[0]), until, float(row[2] or 0.0)
