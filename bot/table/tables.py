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
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.storage import BrokenRow, ChannelBusy, Storage, TableRecord
from bot.table.errors import DatabaseDown, UserError
from bot.table.meta import TableMeta
from bot.table.session import Draft, TableSession, game_result
from bot.table.shards import ShardSet, shard_of
from bot.table.spec import GameSpec, Letter
from bot.table.thinking import ThinkingPool
from bot.table.timers import TimedEvent, Timers

log = logging.getLogger(__name__)

# How many stopped tables the registry remembers, so that a click on one of their old
# messages is told that the table was stopped (and by whom) rather than "moved on".
STOPPED_KEPT = 1024


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
        self._by_id: dict[int, TableSession] = {}
        self._by_channel: dict[int, int] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        # Shards another process took over while this one's claim was lost.
        self.lost: set[int] = set()
        # Tasks started by the registry itself (settling, late DMs): kept until done.
        self._background: set[asyncio.Task[None]] = set()
        # Tables stopped lately, oldest first (at most STOPPED_KEPT): see `stopped`.
        self._stopped: dict[int, StoppedTable] = {}

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
        """An open table by id, or None if it is closed or unknown."""
        return self._by_id.get(table_id)

    def stopped(self, table_id: int) -> StoppedTable | None:
        """A table this process saw stopped (cancelled, stopped or expired) lately, if any."""
        return self._stopped.get(table_id)

    def in_channel(self, channel_id: int) -> TableSession | None:
        """The open table in a channel, or None."""
        table_id = self._by_channel.get(channel_id)
        return None if table_id is None else self._by_id.get(table_id)

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
        return session

    def _remember(self, session: TableSession) -> None:
        self._by_id[session.id] = session
        self._by_channel[session.channel_id] = session.id

    def _forget(self, session: TableSession) -> None:
        self._by_id.pop(session.id, None)
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
        self.timers.cancel_all()
        for task in list(self._background):
            task.cancel()

    async def start_thinking(self) -> None:
        """Start the thinking workers, warmed up with every registered game's AI."""
        await self.thinking.start(spec.choose.__module__ for spec in self.specs.values())

    # -- opening and restoring ----------------------------------------------------------

    async def restore(self) -> list[TableSession]:
        """Load every open table of the registered games and of this process's shards; plan
        their timers and refreshes.

        A table that no longer loads is quarantined (status `broken`, its channel freed,
        logged once, its message told) and every other table starts normally. Another
        shard's tables are left alone, broken or not: their own process deals with them.
        """
        restored: list[TableSession] = []
        broken: list[BrokenRow] = []
        shards = self.shards
        if shards.owns_everything:
            records = await self.storage.open_tables()
        else:
            records = await self.storage.open_tables(None, shards.count, shards.ids)
        for record in records:
            if not self.owns(record.guild_id):
                # The database's filter and Discord's routing disagree: never run a table
                # another process may be running too.
                log.error(
                    "table %s came back from the database but is not of %s", record.id, shards
                )
                continue
            if isinstance(record, BrokenRow):
                broken.append(record)
                continue
            reason = self.unrestorable(record)
            if reason is not None:
                assert record.id is not None
                broken.append(
                    BrokenRow(
                        record.id,
                        record.game,
                        record.channel_id,
                        record.guild_id,
                        record.message_id,
                        reason,
                    )
                )
                continue
            try:
                session = self._session(record)
                _check_seats(session)
            except Exception as error:
                assert record.id is not None
                broken.append(
                    BrokenRow(
                        record.id,
                        record.game,
                        record.channel_id,
                        record.guild_id,
                        record.message_id,
                        f"its game does not load: {error!r}",
                    )
                )
                continue
            self._remember(session)
            self.timers.schedule(session)
            restored.append(session)
        for row in broken:
            log.error("table %s (%s) is quarantined: %s", row.id, row.game, row.reason)
            await self.storage.quarantine(row.id)
            self.publisher.show_broken(row)
        # A crash between a save and its publication left some messages behind: refresh
        # every open table once (the publisher paces the edits).
        for session in restored:
            self.publisher.refresh(session)
            self._tidy(session)  # a reminder whose turn passed before the restart
        log.info(
            "restored %d tables, quarantined %d (%s; other shards' tables are not read)",
            len(restored),
            len(broken),
            self.shards,
        )
        await self.backfill_records()
        return restored

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
            if existing is not None:
                raise UserError("table.channel_busy", link=existing.jump_url)
            record.meta.setdefault("opened_at", self.clock())
            try:
                await self.storage.create_table(record)
            except ChannelBusy:
                raise UserError("table.channel_busy_unknown") from None
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
            return session.spec.choose(view, level, random.Random(seed), memory)
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
                action = await self.choose(session, player)
                await session.change_locked(_auto(player, action, timed_out=True))

    # -- DMs ----------------------------------------------------------------------------

    async def hold(self, user_id: int, until: float | None) -> int:
        """A person is away until ``until`` (None: back): every open turn-based table of
        theirs holds their turns (see Draft.hold); how many tables that is."""
        player = str(user_id)
        count = 0
        for session in list(self):
            if not session.is_open or not session.turn_based:
                continue
            if user_id not in session.record.seats:
                continue
            if until is None and player not in session.meta.held:
                continue
            await session.change(lambda draft: draft.hold(player, until))
            count += 1
        return count

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
