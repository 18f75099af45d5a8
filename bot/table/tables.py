"""The registry of table sessions: one per open table, with its channel's lock and timers.

It opens and restores tables, carries out timed events (computer moves, pings, timeouts,
lobby expiry) through the one change path, and frees a session when its table ends.
Publishing goes through a `Publisher`, which the Discord layer provides. A registry holds
only the tables of its process's shards (`ShardSet`): others are never loaded or timed.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot import metrics
from bot.storage import BrokenRow, ChannelBusy, DatabaseUnavailable, Storage, TableRecord
from bot.table.errors import DatabaseDown, TableMovedOn, UserError
from bot.table.meta import TableMeta
from bot.table.session import Draft, TableSession, game_result
from bot.table.shards import ShardSet, shard_of
from bot.table.spec import GameSpec, Letter
from bot.table.thinking import ThinkingPool, game_of
from bot.table.timers import TimedEvent, Timers, due_time, next_event, notice_due

log = logging.getLogger(__name__)

# How many stopped tables the registry remembers, so that a click on one of their old
# messages is told that the table was stopped (and by whom) rather than "moved on"
# without reading the row (older ones are read from their rows).
STOPPED_KEPT = 1024
# A table with no change, click or timed event for this long leaves memory (its row
# stays; its next click, command or due time loads it again).
IDLE_SECONDS = 300.0
# How far ahead the scheduler loads what falls due: a table due within LOOKAHEAD is
# loaded, and its own timer carries the event out on time.
LOOKAHEAD = 5.0
# How soon the scheduler (or an idle table's unloading) tries again after a failure, and
# the least time between two of its reads: many due times close together are loaded a
# few at a time, still LOOKAHEAD - RETRY_SECONDS before they fall due.
RETRY_SECONDS = 1.0
# With several processes, each looks this often for absences (/cardtable away) set or
# ended through another process, and holds or releases its own shards' tables of theirs:
# one indexed read a wake, whatever the number of tables.
ABSENCE_SECONDS = 15.0
# Each look reads back this far before the previous one: a change stamped on another
# process's clock (a little behind), or committed a moment after its stamp, is not missed.
ABSENCE_OVERLAP = 60.0
# How far back start-up looks for absences set or ended (an absence lasts at most 14
# days, so an older "I'm back" has no held deadline left to bring forward).
ABSENCE_REACH = 15 * 86400.0
# How often a table that owes a notice already due (being sent, or waiting to be tried
# again) looks again whether it may leave memory.
OWED_AGAIN = 60.0


@dataclass(frozen=True, slots=True)
class StoppedTable:
    """A table closed before its end (cancelled, stopped or expired): what a late click
    on its message needs to know."""

    id: int
    game: str
    guild_id: int | None
    channel_id: int
    by: int | None  # who stopped it; None when it closed itself
    reason: str | None  # "expired" for a lobby nobody started


class Publisher(Protocol):
    """What the table core needs from the messaging side."""

    def refresh(self, session: TableSession) -> None:
        """Bring the table's public message up to date (soon, latest state wins)."""
        ...

    def deliver(self, session: TableSession, letters: Sequence[Letter]) -> None:
        """Queue the DMs a saved change caused (called under the table's lock, in the
        order of the changes: it must not wait for Discord)."""
        ...

    async def ping(self, session: TableSession, players: Sequence[str], deadline: float) -> None:
        """Remind people at half time that it is their turn."""
        ...

    def show_broken(self, row: BrokenRow) -> None:
        """Say on a quarantined table's message (soon) that it could not be restored."""
        ...


class QuietPublisher:
    """A publisher that shows nothing (until the Discord layer sets the real one)."""

    def refresh(self, session: TableSession) -> None:
        """Nothing to refresh."""

    def deliver(self, session: TableSession, letters: Sequence[Letter]) -> None:
        """Nothing to send."""

    async def ping(self, session: TableSession, players: Sequence[str], deadline: float) -> None:
        """Nobody to ping."""

    def show_broken(self, row: BrokenRow) -> None:
        """Nowhere to show it."""


class Tables:
    """Every open table in memory, one per channel, each behind its channel's lock."""

    def __init__(
        self,
        storage: Storage,
        *,
        clock: Callable[[], float],
        ready: Callable[[], Awaitable[object]],
        is_ready: Callable[[], bool] = lambda: False,
        thinking: ThinkingPool | None = None,
        shards: ShardSet | None = None,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self.storage = storage
        # Where searches run: worker processes once started, else a thread of this process.
        self.thinking = ThinkingPool(0) if thinking is None else thinking
        self.clock = clock
        # The shards this process runs: only their guilds' tables are loaded and timed.
        self.shards = shards or ShardSet()
        self.specs: dict[str, GameSpec] = {}
        self.publisher: Publisher = QuietPublisher()
        # Called after every saved change, e.g. by a game that keeps private views current.
        self.listeners: list[Callable[[TableSession], None]] = []
        self.timers = Timers(self._on_event, clock=clock, ready=ready, is_ready=is_ready)
        self._ready = ready
        self._by_id: dict[int, TableSession] = {}
        self._by_channel: dict[int, int] = {}
        # A channel's lock lives while anything holds it (a session, a waiter): an
        # unloaded table's channel costs nothing, and two loaders still share one lock.
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()
        # When each table in memory was last used (a change, a click, a load): by clock.
        self._used: dict[int, float] = {}
        self.idle_seconds = idle_seconds
        self._is_ready = is_ready
        # The scheduler has loaded every table due before this instant (None: not yet).
        self._horizon: float | None = None
        self._scheduler: asyncio.Task[None] | None = None
        # The scheduler's one timer: when it polls next (by the clock), while planned.
        self._wake_handle: asyncio.TimerHandle | None = None
        self._wake_when = 0.0
        self._polling = False
        self._poll_again = False
        # Per table in memory, once the bot is ready: when to see whether it is idle.
        self._idle_timers: dict[int, asyncio.TimerHandle] = {}
        # Shards another process took over while this one's claim was lost.
        self.lost: set[int] = set()
        # Tasks started by the registry itself (settling, late DMs): kept until done.
        self._background: set[asyncio.Task[None]] = set()
        # Tables stopped lately, oldest first (at most STOPPED_KEPT): see `stopped`.
        self._stopped: dict[int, StoppedTable] = {}
        # Every person away (/cardtable away) as this process last read it: player ->
        # until when. A table they join, or whose game starts, meanwhile holds them.
        self.absences: dict[str, float] = {}
        # The absences' look (`poll_absences`): when it last read every change (None:
        # not yet), the change it applied per person, and its timer.
        self._absences_read: float | None = None
        self._absences_seen: dict[int, float] = {}
        self._absence_handle: asyncio.TimerHandle | None = None
        self._closed = False

    # -- the registry -------------------------------------------------------------------

    def register(self, spec: GameSpec) -> None:
        """Make a game playable at tables."""
        self.specs[spec.name] = spec

    def lock(self, channel_id: int) -> asyncio.Lock:
        """The lock that serialises every change to the table in one channel."""
        lock = self._locks.get(channel_id)
        if lock is None:
            lock = self._locks[channel_id] = asyncio.Lock()
        return lock

    def owns(self, guild_id: int | None) -> bool:
        """Whether a guild's tables belong to this process's shards (and were not taken
        over by another process: drop_shards)."""
        if self.lost and self._on_lost_shard(guild_id):
            return False
        return self.shards.owns(guild_id)

    def _on_lost_shard(self, guild_id: int | None) -> bool:
        count = self.shards.count
        # With the count left to Discord the one claim (shard 0) stands for every guild.
        return count is None or shard_of(guild_id, count) in self.lost

    def get(self, table_id: int) -> TableSession | None:
        """An open table in memory by id, or None (closed, unknown, or not loaded: see
        `load`)."""
        return self._by_id.get(table_id)

    def stopped(self, table_id: int) -> StoppedTable | None:
        """A table this process saw stopped (cancelled, stopped or expired) lately, if any."""
        return self._stopped.get(table_id)

    async def stopped_row(self, table_id: int) -> StoppedTable | None:
        """A stopped table (cancelled, stopped or expired), from memory or from its row,
        so that a click on it is answered so across restarts; None otherwise."""
        known = self._stopped.get(table_id)
        if known is not None or table_id in self._by_id:
            return known
        try:
            record = await self.storage.get_table(table_id)
            if record is None or record.status not in ("cancelled", "abandoned"):
                return None
            meta = TableMeta.from_dict(record.meta)
        except Exception:
            log.warning("cannot read table %s to say how it closed", table_id, exc_info=True)
            return None
        return StoppedTable(
            table_id,
            record.game,
            record.guild_id,
            record.channel_id,
            meta.closed_by,
            meta.closed_reason,
        )

    def in_channel(self, channel_id: int) -> TableSession | None:
        """The open table in memory in a channel, or None (see `load_in_channel`)."""
        table_id = self._by_channel.get(channel_id)
        return None if table_id is None else self._by_id.get(table_id)

    async def load(self, table_id: int, channel_id: int | None = None) -> TableSession | None:
        """An open table of this process by id: from memory, else loaded from its row
        under its channel's lock (the lock every change of it takes), so two clicks, or a
        click and a due time, load it once. None if it is closed, unknown, of another
        shard, or (with ``channel_id``) not in that channel."""
        session = self._by_id.get(table_id)
        if session is None:
            if channel_id is None:
                found = await self.storage.load_table(table_id)
                if found is None:
                    return None
                channel_id = found.channel_id
            async with self.lock(channel_id):
                session = await self._load_locked(table_id, channel_id)
        if session is not None and channel_id not in (None, session.channel_id):
            return None
        if session is not None:
            self._touch(session)
        return session

    async def load_in_channel(self, channel_id: int) -> TableSession | None:
        """The open table in a channel: from memory, else loaded from its row; or None."""
        session = self.in_channel(channel_id)
        if session is None:
            found = await self.storage.open_table_in(channel_id)
            if found is None:
                return None
            async with self.lock(channel_id):
                session = await self._load_locked(_id_of(found), channel_id, found)
        if session is not None:
            self._touch(session)
        return session

    async def _load_locked(
        self,
        table_id: int,
        channel_id: int,
        found: TableRecord | BrokenRow | None = None,
    ) -> TableSession | None:
        """Load a table under its channel's lock (held): the one in memory if another
        loader was first; ``found`` is its row if just read, else it is read now."""
        session = self._by_id.get(table_id)
        if session is not None:
            return session
        if found is None:
            # Read under the lock: nothing changes the row between this read and the
            # session built from it (every change of the table takes this lock). A row
            # read just before (by the scheduler) is as good: only a loaded table changes,
            # and one loaded meanwhile is in memory (found above).
            found = await self.storage.load_table(table_id)
        if found is None or found.channel_id != channel_id or not self.owns(found.guild_id):
            return None
        if isinstance(found, TableRecord) and not found.is_open:
            return None
        adopted = self._adopt(found)
        if isinstance(adopted, BrokenRow):
            await self._quarantine(adopted)
            return None
        self._remember(adopted)
        self._touch(adopted)
        self.timers.schedule(adopted)
        # What its publisher owes a table as it was stored (a "your turn" notice that was
        # waiting when the bot stopped, or when the table left memory) goes out now.
        loaded = getattr(self.publisher, "loaded", None)
        if loaded is not None:
            loaded(adopted)
        return adopted

    def _adopt(self, record: TableRecord | BrokenRow) -> TableSession | BrokenRow:
        """A session of a stored open table, or the BrokenRow saying why it cannot run."""
        if isinstance(record, BrokenRow):
            return record
        assert record.id is not None
        reason = self.unrestorable(record)
        if reason is None:
            try:
                session = self._session(record)
                _check_seats(session)
                return session
            except Exception as error:
                reason = f"its game does not load: {error!r}"
        return BrokenRow(
            record.id,
            record.game,
            record.channel_id,
            record.guild_id,
            record.message_id,
            reason,
        )

    async def _quarantine(self, row: BrokenRow) -> None:
        if not await self.storage.quarantine(row.id):
            return  # a closed table's unreadable row (a click on an old game): left alone
        log.error("table %s (%s) is quarantined: %s", row.id, row.game, row.reason)
        self.publisher.show_broken(row)

    async def load_guild(self, guild_id: int) -> list[TableSession]:
        """Every open table of a server, loaded (a setting that changes how all of them
        look, say); they leave memory again when idle."""
        loaded = []
        for table_id, channel_id in await self.storage.open_tables_of(guild_id):
            session = await self.load(table_id, channel_id)
            if session is not None:
                loaded.append(session)
        return loaded

    async def seated_at_open_table(self, user_id: int) -> bool:
        """Whether a person sits at an open table of any process (loaded or not)."""
        if any(s.is_open and user_id in s.record.seats for s in self._by_id.values()):
            return True
        return any(user_id in seats for seats in await self.storage.open_seats())

    async def count_open(self) -> dict[tuple[str, str, str], int]:
        """How many open tables this process's shards have, loaded or not, by (game,
        status, pace): one grouped count from the database (the metrics' gauge)."""
        shards = self.shards
        if shards.owns_everything and not self.lost:
            return await self.storage.open_table_counts()
        if shards.count is None:
            return {}  # shards lost before Discord named a count: none counted here
        ids = set(range(shards.count) if shards.ids is None else shards.ids) - self.lost
        if not ids:
            return {}
        return await self.storage.open_table_counts(shards.count, ids)

    def __iter__(self) -> Iterator[TableSession]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)

    def _session(self, record: TableRecord) -> TableSession:
        session = TableSession(
            self.specs[record.game], record, self.storage, self.lock(record.channel_id), self.clock
        )
        session.on_changed = self._changed
        session.on_settled = self._settled
        session.plan = due_time
        session.absent = self.absent_until
        return session

    def _remember(self, session: TableSession) -> None:
        self._by_id[session.id] = session
        self._by_channel[session.channel_id] = session.id

    def _touch(self, session: TableSession) -> None:
        """Note that a table in memory was used now (its idle time starts again)."""
        self._used[session.id] = self.clock()
        if session.id not in self._idle_timers:
            self._arm_idle(session.id, self.clock() + self.idle_seconds)

    def _arm_idle(self, table_id: int, at: float) -> None:
        """Look at ``at`` whether a table in memory has become idle (once the bot is
        ready: before, the scheduler arms every table loaded when it starts)."""
        if not self._is_ready():
            return
        old = self._idle_timers.pop(table_id, None)
        if old is not None:
            old.cancel()
        delay = max(at - self.clock(), 0.0)
        self._idle_timers[table_id] = asyncio.get_running_loop().call_later(
            delay, self._idle_due, table_id
        )

    def _idle_due(self, table_id: int) -> None:
        self._idle_timers.pop(table_id, None)
        session = self._by_id.get(table_id)
        if session is not None:
            self._in_background(self._unload_or_wait(session), f"unloading table {table_id}")

    async def _unload_or_wait(self, session: TableSession) -> None:
        """Unload a table if it is idle; else look again when it may be."""
        now = self.clock()
        try:
            if await self._unload_if_idle(session, now):
                return
            again = self._idle_again(session, now)
        except Exception:
            log.warning("table %s stays in memory for now", session.id, exc_info=True)
            again = now + RETRY_SECONDS
        if self._by_id.get(session.id) is session and session.id not in self._idle_timers:
            self._arm_idle(session.id, again)

    def _idle_again(self, session: TableSession, now: float) -> float:
        """When a table that is not idle yet may be: its idle time after its last use,
        and after its next event leaves the idle window."""
        at = self._used.get(session.id, now) + self.idle_seconds
        event = next_event(session, now)
        if event is not None and event.due <= now + max(self.idle_seconds, LOOKAHEAD):
            # Due soon: it stays at least until then (the event's change touches it).
            at = max(at, event.due)
        owed = notice_due(session)
        if owed is not None and owed <= now + max(self.idle_seconds, LOOKAHEAD):
            # A notice on its way: look again once it should be out (its remembering
            # change touches the table).
            at = max(at, owed + RETRY_SECONDS if owed > now else now + OWED_AGAIN)
        if session.lock.locked() or session.unsettled is not None or self.timers.busy(session.id):
            at = max(at, now + RETRY_SECONDS)
        return max(at, now + RETRY_SECONDS) if at <= now else at

    def _forget(self, session: TableSession) -> None:
        self._by_id.pop(session.id, None)
        self._used.pop(session.id, None)
        idle = self._idle_timers.pop(session.id, None)
        if idle is not None:
            idle.cancel()
        if self._by_channel.get(session.channel_id) == session.id:
            del self._by_channel[session.channel_id]
        self.timers.cancel(session.id)
        session.memory.clear()

    def _changed(
        self, session: TableSession, published: bool, letters: Sequence[Letter] = ()
    ) -> None:
        """After every saved change (under the lock): plan timers, free closed tables,
        publish, queue its DMs (so a game's first DM is queued before any move's)."""
        if session.is_open:
            self._remember(session)
            self._touch(session)
            self.timers.schedule(session)
        else:
            self._forget(session)
            self._remember_stopped(session)
        if not published:
            self.publisher.refresh(session)
        if letters:
            self.publisher.deliver(session, letters)
        self._tidy(session)
        for listener in self.listeners:
            listener(session)

    def _remember_stopped(self, session: TableSession) -> None:
        if session.status not in ("cancelled", "abandoned"):
            return
        record = session.record
        self._stopped.pop(session.id, None)
        self._stopped[session.id] = StoppedTable(
            session.id,
            session.spec.name,
            record.guild_id,
            record.channel_id,
            session.meta.closed_by,
            session.meta.closed_reason,
        )
        while len(self._stopped) > STOPPED_KEPT:
            del self._stopped[next(iter(self._stopped))]

    def _settled(self, session: TableSession, draft: Draft) -> None:
        """A save settled late went through: queue the DMs it caused (under the lock)."""
        if draft.letters:
            self.publisher.deliver(session, draft.letters)

    def _in_background(self, work: Awaitable[None], what: str) -> None:
        """Run ``work`` as a task of the registry's own; its failure is logged."""

        async def run() -> None:
            try:
                await work
            except Exception:
                log.exception("%s failed", what)

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def database_back(self) -> None:
        """The database answers again: settle every save whose outcome is still unknown."""
        for session in self:
            if session.unsettled is not None:
                self._in_background(self._settle(session), f"settling table {session.id}")

    async def _settle(self, session: TableSession) -> None:
        async with session.lock:
            try:
                await session.settle()
            except DatabaseDown:
                return  # away again: the next change, or the next return, settles it

    def drop_shards(self, shards: Sequence[int]) -> list[TableSession]:
        """Stop running the tables of these shards (another process runs them now): their
        timers stop and they leave memory, untouched in the database. The ones dropped."""
        self.lost.update(shards)
        dropped = [s for s in self if self._on_lost_shard(s.record.guild_id)]
        for session in dropped:
            self._forget(session)
        return dropped

    def _tidy(self, session: TableSession) -> None:
        """Let the publisher delete a half-time reminder whose turn has passed (if it can)."""
        tidy = getattr(self.publisher, "tidy", None)
        if tidy is not None:
            tidy(session)

    def close(self) -> None:
        """Stop every timer and the registry's own tasks (the bot is shutting down)."""
        self._closed = True
        if self._scheduler is not None:
            self._scheduler.cancel()
        if self._wake_handle is not None:
            self._wake_handle.cancel()
            self._wake_handle = None
        if self._absence_handle is not None:
            self._absence_handle.cancel()
            self._absence_handle = None
        for handle in self._idle_timers.values():
            handle.cancel()
        self._idle_timers.clear()
        self.timers.cancel_all()
        for task in list(self._background):
            task.cancel()

    async def start_thinking(self) -> None:
        """Start the thinking workers, warmed up with every registered game's AI."""
        await self.thinking.start(spec.choose.__module__ for spec in self.specs.values())

    # -- opening and restoring ----------------------------------------------------------

    async def restore(self) -> list[TableSession]:
        """Start the tables of this process's shards: load the ones with an event due
        within the idle time (a timeout, a computer's move, a lobby's expiry, a "your
        turn" notice owed: what a running bot would keep in memory, and what fell due
        while it was down), plan their timers and refresh their messages; then start the
        scheduler for the rest.

        An unloaded table's message is already right (it was shown before it left
        memory, or before the bot stopped); its next click, command or due time loads it.
        A table that no longer loads is quarantined (status `broken`, its channel freed,
        logged once, its message told) when it is loaded, and every other table starts
        normally. Another shard's tables are left alone, broken or not: their own process
        deals with them.
        """
        try:
            # Who is away now, for the tables they join or start (one indexed read); what
            # changed while this process was down is caught up once it is ready (see
            # `_look`), not here: that takes a read per person, and start-up must not wait.
            for user_id, running, _ in await self.storage.absences_running(self.clock()):
                self._note_absence(str(user_id), running)
        except Exception:
            log.warning("absences not read at start-up: the scheduler reads them", exc_info=True)
        until = self.clock() + max(self.idle_seconds, LOOKAHEAD)
        restored = await self._load_due(until, None)
        self._horizon = until
        # A crash between a save and its publication left some messages behind: refresh
        # every table loaded once (the publisher paces the edits).
        for session in restored:
            self.publisher.refresh(session)
            self._tidy(session)  # a reminder whose turn passed before the restart
        log.info(
            "restored %d tables due within %.0f s (%s; the others load when used)",
            len(restored),
            max(self.idle_seconds, LOOKAHEAD),
            self.shards,
        )
        await self.backfill_records()
        self.start_scheduler()
        return restored

    async def _load_due(self, until: float, since: float | None) -> list[TableSession]:
        """Load the tables of this process due by ``until`` (not before ``since``)."""
        shards = self.shards
        if shards.owns_everything:
            records = await self.storage.due_tables(until, since)
        else:
            records = await self.storage.due_tables(until, since, shards.count, shards.ids)
        loaded: list[TableSession] = []
        for record in records:
            if not self.owns(record.guild_id):
                if not self.lost:
                    # The database's filter and Discord's routing disagree: never run a
                    # table another process may be running too.
                    log.error(
                        "table %s came back from the database but is not of %s",
                        record.id,
                        shards,
                    )
                continue
            if record.id in self._by_id:
                continue
            async with self.lock(record.channel_id):
                session = await self._load_locked(_id_of(record), record.channel_id, record)
            if session is not None:
                self._touch(session)
                loaded.append(session)
        return loaded

    # -- the scheduler: due times from the database, idle tables out of memory ----------

    def start_scheduler(self) -> None:
        """Start the scheduler once the bot is ready: it loads what falls due and its
        tables' idle times begin."""
        if self._scheduler is None:
            self._scheduler = asyncio.get_running_loop().create_task(
                self._start_scheduling(), name="table-scheduler"
            )

    async def _start_scheduling(self) -> None:
        try:
            await self._ready()
        except RuntimeError:
            # discord.py's answer for a client that never logged in: no scheduler to run,
            # but say so (a task's failure would otherwise surface only when collected).
            log.exception("the table scheduler cannot start: the bot never logged in")
            return
        for session in self:
            self._touch(session)
        # Beside the scheduler, not before it: what falls due is not kept waiting.
        self._in_background(self._look(), "the absences' look")
        await self._poll_and_plan()

    async def _look(self) -> None:
        """Catch up with the absences (`poll_absences`), then look again in
        ABSENCE_SECONDS while other processes run other shards (an absence may be said
        through any of them), or until the first look has gone through."""
        try:
            if self.storage.may_try():
                await self.poll_absences()
        except (DatabaseUnavailable, DatabaseDown) as error:
            # The outage is logged by the storage; one line here, no traceback every look.
            log.warning("the absences' look waits for the database: %r", error)
        finally:
            if not self._closed and (
                self._absences_read is None or not self.shards.owns_everything
            ):
                self._absence_handle = asyncio.get_running_loop().call_later(
                    ABSENCE_SECONDS, self._absences_due
                )

    def _absences_due(self) -> None:
        self._absence_handle = None
        self._in_background(self._look(), "the absences' look")

    def _wake_at(self, at: float) -> None:
        """Poll again at ``at`` (by the clock), unless a poll is planned sooner: one timer
        for the process, never one per table."""
        if self._wake_handle is not None:
            if self._wake_when <= at:
                return
            self._wake_handle.cancel()
        self._wake_when = at
        self._wake_handle = asyncio.get_running_loop().call_later(
            max(at - self.clock(), 0.0), self._woken
        )

    def _woken(self) -> None:
        self._wake_handle = None
        self._in_background(self._poll_and_plan(), "the table scheduler")

    async def _poll_and_plan(self) -> None:
        """Load what falls due now, then plan the next poll: LOOKAHEAD before the next
        due time of a table not in memory (read from the index), or none while nothing is
        due; a table leaving memory plans its own (`_unload_if_idle`)."""
        if self._polling:
            self._poll_again = True
            return
        self._polling = True
        try:
            while True:
                self._poll_again = False
                try:
                    await self.poll_due()
                    wake = await self._next_wake()
                except Exception:
                    # The database away, say: the next poll reads from the same horizon,
                    # so nothing due is skipped.
                    log.warning("the table scheduler's poll failed", exc_info=True)
                    wake = self.clock() + RETRY_SECONDS
                if not self._poll_again:
                    break
        finally:
            self._polling = False
        if wake is not None:
            self._wake_at(wake)

    async def _next_wake(self) -> float | None:
        """LOOKAHEAD before the next due time of a table not in memory (those in memory
        keep their own timers); None if there is none."""
        after = self._horizon if self._horizon is not None else self.clock()
        shards = self.shards
        limit = len(self._by_id) + 1
        if shards.owns_everything:
            due = await self.storage.next_due(after, limit)
        else:
            due = await self.storage.next_due(after, limit, shards.count, shards.ids)
        for table_id, at in due:
            if table_id not in self._by_id:
                return max(at - LOOKAHEAD, self.clock() + RETRY_SECONDS)
        return None

    async def poll_due(self) -> list[TableSession]:
        """Load every table of this process's shards due within LOOKAHEAD that is not in
        memory yet; each one's own timer then carries its event out on time. The ones
        loaded."""
        until = self.clock() + LOOKAHEAD
        if self._horizon is not None and until <= self._horizon:
            return []
        loaded = await self._load_due(until, self._horizon)
        self._horizon = until
        return loaded

    async def sweep_idle(self) -> list[int]:
        """Unload every table idle for `idle_seconds` (see `_unload_if_idle`); the ids."""
        now = self.clock()
        unloaded: list[int] = []
        for session in list(self._by_id.values()):
            if await self._unload_if_idle(session, now):
                unloaded.append(session.id)
        return unloaded

    async def _unload_if_idle(self, session: TableSession, now: float) -> bool:
        """Unload a table idle for `idle_seconds`: no change, click or load for that long,
        nothing due within it, nothing being carried out or settled. Its due time is
        stored first, so the scheduler loads it again on time. Whether it was unloaded.

        Its message, buttons and DMs stay as they are: they show its stored state.
        """
        if session.lock.locked() or not self._idle(session, now):
            return False
        async with session.lock:
            if self._by_id.get(session.id) is not session or not self._idle(session, now):
                return False
            due = due_time(session, now)
            if due != session.record.due_at:
                # Planned at an earlier instant (or by an older version): the row must
                # hold the real due time before the table leaves memory.
                if not await self.storage.set_due(session.id, session.revision, due):
                    return False  # the row moved on: kept until a change settles it
                session.record.due_at = due
            self._forget(session)
        log.debug("table %s left memory (next due %s)", session.id, due)
        if due is not None and self._scheduler is not None and self._is_ready():
            self._wake_at(due - LOOKAHEAD)
        return True

    def _idle(self, session: TableSession, now: float) -> bool:
        """Whether a table may leave memory now (its lock aside)."""
        if session.unsettled is not None or self.timers.busy(session.id):
            return False
        if now - self._used.get(session.id, now) < self.idle_seconds:
            return False
        soon = now + max(self.idle_seconds, LOOKAHEAD)
        event = next_event(session, now)
        owed = notice_due(session)
        # A notice owed soon is on its way (the publisher queued it when the table was
        # changed or loaded): the table stays until it is out and remembered.
        return (event is None or event.due > soon) and (owed is None or owed > soon)

    def unrestorable(self, record: TableRecord) -> str | None:
        """Why an open table's row cannot be run again (None if it can): an unknown game,
        or a running game without a state."""
        if record.game not in self.specs:
            return f"unknown game {record.game!r}"
        if record.status == "running" and not record.state:
            return "a running game without a state"
        return None

    async def backfill_records(self) -> int:
        """Record the games that ended before the records existed, oldest first (rated in
        that order); a game whose state no longer loads is left out. Returns the count."""
        count = 0
        for record, created, updated in await self.storage.unrecorded_games():
            if not self.owns(record.guild_id):
                continue  # its shard's process records it, exactly once
            spec = self.specs.get(record.game)
            if spec is None or record.state is None:
                continue
            try:
                engine = spec.engine_from_dict(record.state)
                if record.status == "finished" and not engine.is_over:
                    continue
                meta = TableMeta.from_dict(record.meta)
                result = game_result(spec, record, meta, engine, created, updated)
            except Exception:
                log.warning("table %s cannot be back-filled into the records", record.id)
                continue
            await self.storage.record_game(result)
            count += 1
        if count:
            log.info("back-filled %d earlier games into the records", count)
        return count

    async def open(
        self,
        spec: GameSpec,
        record: TableRecord,
        *,
        seat: Callable[[Draft], None],
        post: Callable[[TableSession], Awaitable[int]],
    ) -> TableSession:
        """Open a lobby: create its row, let ``seat`` fill it, post its message.

        If the message cannot be posted, the row is deleted again, so the channel is free.
        A guild of another process's shard is refused: that process would never see the table.
        """
        if not self.owns(record.guild_id):
            raise UserError("table.foreign_shard")
        async with self.lock(record.channel_id):
            existing = self.in_channel(record.channel_id)
            if existing is None:
                found = await self.storage.open_table_in(record.channel_id)
                if found is not None:
                    existing = await self._load_locked(_id_of(found), record.channel_id, found)
            if existing is not None:
                raise UserError("table.channel_busy", link=existing.jump_url)
            record.meta.setdefault("opened_at", self.clock())
            try:
                await self.storage.create_table(record)
            except ChannelBusy:
                raise UserError("table.channel_busy_unknown") from None
            except DatabaseUnavailable as error:
                raise DatabaseDown() from error
            except TimeoutError as error:  # sent, never answered: the row may exist
                log.warning("the new table's row in channel %s was not answered", record.channel_id)
                raise UserError("table.open_unknown") from error
            session = self._session(record)
            try:
                await session.change_locked(seat, then=_published)
                message_id = await post(session)
            except BaseException:
                self._forget(session)
                await self.storage.discard_table(session.id)
                raise
            self._remember(session)

            await session.change_locked(lambda d: d.set_message(message_id), then=_published)
            return session

    # -- timed events -------------------------------------------------------------------

    async def _on_event(self, session: TableSession, event: TimedEvent) -> None:
        if self.get(session.id) is not session:
            return  # closed meanwhile
        if not self.storage.may_try():
            # Nothing could be saved: no search for a move that would be thrown away. The
            # timer tries again (bot.table.timers.OUTAGE_RETRY).
            raise DatabaseDown()
        if event.kind == "expire":
            await self._expire(session)
        elif event.kind == "computer":
            await self._computer_turn(session, event.move)
        elif event.kind == "ping":
            await self._ping(session, event.move)
        elif event.kind == "timeout":
            await self._timeout(session, event.move)

    async def _expire(self, session: TableSession) -> None:
        async with session.lock:
            if session.status != "lobby":
                return
            await session.change_locked(Draft.expire)

    async def choose(self, session: TableSession, player: str) -> Any:
        """A computer's action for a seat, from that seat's own view (under the lock)."""
        engine = session.running_engine()
        level = session.level_of(player)
        seed = f"{session.id}:{engine.move_number}:{player}"
        memory = session.memory.setdefault(player, session.spec.new_memory())
        view = engine.view(player)
        if level not in session.spec.searching_levels:
            # A rule of thumb: cheaper here than a round trip to a worker.
            began = time.thread_time()
            action = session.spec.choose(view, level, random.Random(seed), memory)
            metrics.decided(game_of(session.spec.choose), level, time.thread_time() - began)
            return action
        # A search: in a worker process, so the loop stays free for other tables. The
        # worker thinks on a copy of the memory and sends back the one it updated.
        action, session.memory[player] = await self.thinking.search(
            session.spec.choose, view, level, seed, memory
        )
        return action

    async def _computer_turn(self, session: TableSession, move: int) -> None:
        async with session.lock:
            if session.engine is None or session.engine.move_number != move:
                return
            for player in session.acting_players():
                if session.plays_itself(player):
                    action = await self.choose(session, player)
                    await session.change_locked(_auto(player, action, timed_out=False))
                    break  # one move per delay, so people can follow

    async def _ping(self, session: TableSession, move: int) -> None:
        async with session.lock:
            turn = session.meta.turn
            if turn is None or turn.move != move or turn.pinged:
                return
            players = [p for p in session.acting_players() if not session.plays_itself(p)]
            await session.change_locked(lambda d: d.mark_pinged(move))
            deadline = turn.deadline
        await self.publisher.ping(session, players, deadline)

    async def _timeout(self, session: TableSession, move: int) -> None:
        async with session.lock:
            turn = session.meta.turn
            if turn is None or turn.move != move:
                return
            late = [p for p in session.acting_players() if not session.plays_itself(p)]
            for player in late:
                if player not in session.acting_players():
                    continue
                if await self._held_instead(session, player):
                    continue
                action = await self.choose(session, player)
                await session.change_locked(_auto(player, action, timed_out=True))

    async def _held_instead(self, session: TableSession, player: str) -> bool:
        """At a turn-based deadline (under the lock): whether the person said they are
        away, through another process, before this one applied it (its look comes every
        ABSENCE_SECONDS); if so the turn is held now instead of timed out."""
        if not session.turn_based or not player.isdigit():
            return False
        until, _, _ = await self.storage.get_user_away(int(player))
        now = self.clock()
        if until is None or until <= now or session.meta.held.get(player) == until:
            return False
        self._note_absence(player, until)
        await session.change_locked(lambda draft: draft.hold(player, until))
        log.info("table %s: %s is away (said elsewhere): their turn is held", session.id, player)
        return True

    # -- absences (/cardtable away) -----------------------------------------------------

    def absent_until(self, player: str) -> float | None:
        """Until when a person is away, as this process knows it; None if not away."""
        until = self.absences.get(player)
        if until is None:
            return None
        if until <= self.clock():
            del self.absences[player]  # back by now
            return None
        return until

    def _note_absence(self, player: str, until: float | None) -> None:
        if until is None or until <= self.clock():
            self.absences.pop(player, None)
        else:
            self.absences[player] = until

    async def poll_absences(self) -> int:
        """Catch up with the absences set or ended since the last look, through any
        process: hold or release the person's tables of this process's shards (see
        `hold`, which does nothing twice). The first look, once the bot is ready after
        start-up, reads every absence still running and every change within
        ABSENCE_REACH. One indexed read when nothing changed. How many people's absences
        it applied.

        A person whose tables could not all be changed (the database away, say) is tried
        again at the next look."""
        now = self.clock()
        first = self._absences_read is None
        since = now - ABSENCE_REACH if self._absences_read is None else self._absences_read
        changes = await self.storage.absences_changed(since - ABSENCE_OVERLAP)
        if first:
            # Also the running ones stored before their changes were stamped.
            changes += await self.storage.absences_running(now)
        applied = 0
        complete = True
        for user_id, until, set_at in changes:
            if self._absences_seen.get(user_id) == set_at:
                continue
            running = until if until is not None and until > now else None
            try:
                await self.hold(user_id, running)
            except (DatabaseUnavailable, DatabaseDown) as error:
                log.warning("absences not applied yet, the database is away: %r", error)
                complete = False
                break  # the next look reads them all again
            except Exception:
                log.warning("the absence of %s is not applied yet", user_id, exc_info=True)
                complete = False
                continue
            self._absences_seen[user_id] = set_at
            applied += 1
        if complete:
            self._absences_read = now
            # What the next look reads again is remembered; what it does not, forgotten.
            for user_id, set_at in list(self._absences_seen.items()):
                if set_at <= now - ABSENCE_OVERLAP:
                    del self._absences_seen[user_id]
        return applied

    async def hold(self, user_id: int, until: float | None) -> int:
        """A person is away until ``until`` (None: back): every open turn-based table of
        theirs on this process's shards holds their turns (see Draft.hold), and a table
        they join or start meanwhile holds them too. Other processes do the same on
        their next look (`poll_absences`). How many open turn-based tables they sit at,
        on every process.

        Found from the database: a table out of memory is loaded only if it changes (its
        stored due time then moves with the held deadline). A table that already holds
        them until then (or, when back, does not hold them) is left alone, so a second
        call changes nothing and tells nobody again."""
        player = str(user_id)
        self._note_absence(player, until)
        count = 0
        for record in await self.storage.open_tables_seating(user_id):
            meta = self._meta_of(record)
            if meta is None or not meta.pace:
                continue
            count += 1
            if not self.owns(record.guild_id) or _holds(meta, player, until):
                continue
            assert record.id is not None
            session = await self.load(record.id, record.channel_id)
            if session is None:
                continue  # closed, or moved on, since the read

            def step(draft: Draft) -> None:
                if _holds(draft.meta, player, until):
                    raise TableMovedOn()  # held meanwhile (by another look, say)
                draft.hold(player, until)

            try:
                await session.change(step)
            except TableMovedOn:
                continue  # no longer turn-based, no longer theirs, or held already
        return count

    # -- DMs ----------------------------------------------------------------------------

    async def seated(self, user_id: int) -> list[TableSession]:
        """Every open table a person sits at, read for showing (their turns, a summary):
        the session in memory if loaded, else one built from its row that is not kept
        and never changed (nothing is loaded)."""
        sessions: list[TableSession] = []
        for record in await self.storage.open_tables_seating(user_id):
            assert record.id is not None
            session = self._by_id.get(record.id)
            if session is None:
                if record.game not in self.specs:
                    continue
                try:
                    session = TableSession(
                        self.specs[record.game],
                        record,
                        self.storage,
                        asyncio.Lock(),  # a reading copy: never changed, so never locked
                        self.clock,
                    )
                except Exception:
                    log.warning("cannot read table %s for a list", record.id, exc_info=True)
                    continue
            sessions.append(session)
        return sessions

    @staticmethod
    def _meta_of(record: TableRecord) -> TableMeta | None:
        try:
            return TableMeta.from_dict(record.meta)
        except Exception:
            log.warning("cannot read table %s's metadata", record.id, exc_info=True)
            return None

    async def note_dm_closed(self, session: TableSession, player: str) -> None:
        """A player's DMs are closed: never try again at this table, hint them once."""

        def close(draft: Draft) -> None:
            if player not in draft.meta.dm_closed:
                draft.meta.dm_closed.append(player)
                draft.meta.hint_pending.append(player)

        if player not in session.meta.dm_closed:
            await session.change(close, then=_published)

    async def take_hint(self, session: TableSession, player: str) -> bool:
        """Whether a player is owed the closed-DM hint; it is owed once."""
        if player not in session.meta.hint_pending:
            return False

        def taken(draft: Draft) -> None:
            draft.meta.hint_pending.remove(player)

        try:
            await session.change(taken, then=_published)
        except (UserError, ValueError):
            return False
        return True


def _id_of(row: TableRecord | BrokenRow) -> int:
    """A stored row's table id (a stored record always has one)."""
    assert row.id is not None
    return row.id


def _holds(meta: TableMeta, player: str, until: float | None) -> bool:
    """Whether a table already holds a person until then (None: holds them no more)."""
    return meta.held.get(player) == until if until is not None else player not in meta.held


def _check_seats(session: TableSession) -> None:
    """ValueError unless a running game's players are the table's seats, in order."""
    engine = session.engine
    if engine is None:
        return
    players = [str(player) for player in engine.players]
    seats = [str(seat) for seat in session.record.seats]
    if players != seats:
        raise ValueError(f"its seats {seats} are not its game's players {players}")


def _auto(player: str, action: Any, *, timed_out: bool) -> Callable[[Draft], Any]:
    """The step of a computer's move for ``player``."""
    return lambda draft: draft.auto_move(player, action, timed_out=timed_out)


async def _published() -> bool:
    """For changes that do not alter the public message."""
    return True
