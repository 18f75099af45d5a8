"""Timed events of tables: computer moves, half-time pings, turn deadlines, lobby expiry.

Deadlines live in each table's metadata, so they survive restarts; one loop timer per
table waits until the next thing is due, and a task carries it out. A timed move that
cannot be saved is retried with backoff, never dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from bot import metrics
from bot.engines.contract import GameEngine
from bot.table.errors import DatabaseDown, SaveUnknown
from bot.table.meta import TableMeta
from bot.table.spec import is_computer_id

if TYPE_CHECKING:
    from bot.table.session import TableSession

log = logging.getLogger(__name__)

BOT_DELAY = 2.0  # seconds a computer "thinks" so people can follow its moves
LOBBY_TTL = 15 * 60  # a lobby not started within 15 minutes closes itself
RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 60.0)  # then every 60 s
# While the database is away an event is tried again this often, however long the outage:
# the table is back to normal within this long of the database's return. A failing attempt
# costs next to nothing then (the storage refuses at once while it knows it is down).
OUTAGE_RETRY = 1.0
# At most one "your turn" DM per player and turn-based table this often (seconds).
NOTICE_GAP = 5 * 60
# A person who acted at the table this recently is looking at it: their notice waits.
RECENTLY = 30.0


@dataclass(frozen=True, slots=True)
class TimedEvent:
    """What is due next at a table, and when."""

    kind: str  # "computer", "ping", "timeout" or "expire"
    due: float
    move: int


class Timed(Protocol):
    """What the next event of a table is worked out from: a live session, or a drafted
    change about to be saved (whose due time is stored with it)."""

    @property
    def status(self) -> str:
        """lobby, running, finished, cancelled or abandoned."""
        ...

    @property
    def meta(self) -> TableMeta:
        """The table's metadata (turn clock, away players, opening time)."""
        ...

    @property
    def engine(self) -> GameEngine[Any] | None:
        """The game, if one was dealt."""
        ...

    def acting_players(self) -> tuple[str, ...]:
        """Who may act now."""
        ...

    def plays_itself(self, player: str) -> bool:
        """Whether a computer makes this seat's moves right now."""
        ...

    def turn_seconds(self) -> int:
        """The table's time per turn."""
        ...


def due_time(session: Timed, now: float) -> float | None:
    """When a table's next timed event falls due (None: nothing is due), as stored in its
    row for the scheduler: its next event, or a "your turn" notice owed sooner (the
    scheduler then loads the table, and loading it queues the notice)."""
    event = next_event(session, now)
    due = None if event is None else event.due
    owed = notice_due(session)
    if owed is not None and (due is None or owed < due):
        return owed
    return due


def notice_time(meta: TableMeta, player: str) -> float:
    """When a person's next "your turn" notice at a table may go: RECENTLY after they
    last acted there (they are looking at it) and NOTICE_GAP after their last notice
    there (by the tables' clock); and not before the end of an absence that holds their
    turns (/cardtable away): an away person is told when they are back."""
    at = meta.acted.get(player, -RECENTLY) + RECENTLY
    sent = meta.notice_sent.get(player)
    if sent is not None:
        at = max(at, sent + NOTICE_GAP)
    return max(at, meta.held.get(player, at))


def owed_notices(session: Timed) -> dict[str, float]:
    """The people a turn-based table owes a "your turn" notice, and when it may go: those
    it waits for (not computers, not seats a computer plays, not closed DMs) whose
    notice for this turn is neither out nor settled otherwise (``TableMeta.turn_notices``
    records a notice sent, and one decided not to go, so neither keeps the table due)."""
    meta = session.meta
    turn = meta.turn
    if not meta.pace or session.status != "running" or turn is None:
        return {}
    owed: dict[str, float] = {}
    for player in session.acting_players():
        if is_computer_id(player) or session.plays_itself(player) or player in meta.dm_closed:
            continue
        notice = meta.turn_notices.get(player)
        if notice is not None and notice[2] == turn.since:
            continue
        owed[player] = notice_time(meta, player)
    return owed


def notice_due(session: Timed) -> float | None:
    """When the first notice a table owes may go (None: it owes none)."""
    return min(owed_notices(session).values(), default=None)


def next_event(session: Timed, now: float) -> TimedEvent | None:
    """The next timed event of a table, from its state alone (pure)."""
    if session.status == "lobby":
        return TimedEvent("expire", session.meta.opened_at + LOBBY_TTL, 0)
    if session.status != "running" or session.engine is None:
        return None
    move = session.engine.move_number
    if any(session.plays_itself(p) for p in session.acting_players()):
        return TimedEvent("computer", now + BOT_DELAY, move)
    turn = session.meta.turn
    if turn is None:
        return None
    half = turn.deadline - session.turn_seconds() / 2
    if not turn.pinged and now < half:
        return TimedEvent("ping", half, turn.move)
    return TimedEvent("timeout", turn.deadline, turn.move)


# Carries an event out; returns normally when done (or no longer due), raises to retry.
Handler = Callable[["TableSession", TimedEvent], Awaitable[None]]


class Timers:
    """One timer per table for its next timed event, and a task while it is carried out.

    Once the bot is ready, waiting is a loop timer, not a sleeping task: a move replans its
    table's next event, and cancelling a timer handle and setting another costs a fraction
    of cancelling a task and starting one (a task's start and its cancellation each take a
    loop step). Before, a task waits for ``ready`` first and then for the event's time by
    ``clock``, which need not be the loop's (a test's clock).
    """

    def __init__(
        self,
        handle: Handler,
        *,
        clock: Callable[[], float],
        ready: Callable[[], Awaitable[object]],
        is_ready: Callable[[], bool] = lambda: False,
        name: str = "table",
    ) -> None:
        self._handle = handle
        self._clock = clock
        self._ready = ready
        self._is_ready = is_ready
        self._name = name
        self._waiting: dict[int, asyncio.TimerHandle] = {}  # table id -> its next event's timer
        self._tasks: dict[int, asyncio.Task[None]] = {}  # table id -> event being carried out
        self._running: set[int] = set()  # tables whose event is being carried out (or retried)

    def __len__(self) -> int:
        return len(self._waiting.keys() | self._tasks.keys())

    def schedule(self, session: TableSession) -> None:
        """(Re)plan the next timed event of a table after any change."""
        self.cancel(session.id)
        event = next_event(session, self._clock())
        if event is None:
            return
        if self._is_ready():
            delay = max(event.due - self._clock(), 0.0)
            loop = asyncio.get_running_loop()
            self._waiting[session.id] = loop.call_later(delay, self._start, session, event)
        else:
            self._start(session, event)

    def _start(self, session: TableSession, event: TimedEvent) -> None:
        self._waiting.pop(session.id, None)
        self._tasks[session.id] = asyncio.get_running_loop().create_task(
            self._run(session, event), name=f"{self._name}-{session.id}-{event.kind}"
        )

    def busy(self, table_id: int) -> bool:
        """Whether a table's timed event is being carried out now (or retried)."""
        return table_id in self._running

    def cancel(self, table_id: int) -> None:
        """Stop whatever was scheduled for a table."""
        waiting = self._waiting.pop(table_id, None)
        if waiting is not None:
            waiting.cancel()
        task = self._tasks.pop(table_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    def cancel_all(self) -> None:
        """Stop every timer (the bot is closing)."""
        for table_id in list(self._waiting.keys() | self._tasks.keys()):
            self.cancel(table_id)

    async def _run(self, session: TableSession, event: TimedEvent) -> None:
        await self._ready()
        delay = event.due - self._clock()
        if delay > 0:
            # Due later than the timer fired (the clock was set back, or the bot became
            # ready late after a restart's timers were set): wait out the rest.
            await asyncio.sleep(delay)
        # Late from the row's due time: after a restart or a load, the event's own time
        # (a computer's pause, say) starts again, but the row says when it really fell due.
        stored = session.record.due_at
        if stored is not None and stored < event.due and stored == notice_due(session):
            stored = None  # the row is due for a notice owed, not for this event
        due = event.due if stored is None else min(stored, event.due)
        metrics.event_started(event.kind, self._clock() - due)
        self._running.add(session.id)
        try:
            await self._carry_out(session, event)
        finally:
            self._running.discard(session.id)
        if self._tasks.get(session.id) is asyncio.current_task():
            # Done without a change that planned the next event (a ping): plan it now.
            del self._tasks[session.id]
            if session.is_open:
                self.schedule(session)

    async def _carry_out(self, session: TableSession, event: TimedEvent) -> None:
        """Carry an event out, retried until it is done (or the table closed)."""
        attempt = 0
        while True:
            try:
                await self._handle(session, event)
                metrics.event_done(event.kind)
                break
            except asyncio.CancelledError:
                raise
            except (DatabaseDown, SaveUnknown):
                # Not a fault of the event: it waits for the database, and is never dropped.
                attempt += 1
                if attempt == 1:
                    log.warning(
                        "%s on %s table %s waits for the database; trying every %.0f s",
                        event.kind,
                        session.spec.name,
                        session.id,
                        OUTAGE_RETRY,
                    )
                await asyncio.sleep(OUTAGE_RETRY)
            except Exception:
                delay = RETRY_DELAYS[min(attempt, len(RETRY_DELAYS) - 1)]
                attempt += 1
                log.warning(
                    "%s on %s table %s failed (attempt %d); retrying in %.0f s",
                    event.kind,
                    session.spec.name,
                    session.id,
                    attempt,
                    delay,
                    exc_info=True,
                )
                await asyncio.sleep(delay)
            if not session.is_open:
                break
