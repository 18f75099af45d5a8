"""One table's session: its stored record, game, metadata and computer memory.

Every change of a table goes through `TableSession.change`: the step works on a `Draft`
(copies of the record, the metadata and the game), the draft is saved in one transaction
that names the revision it replaces, and only then is it swapped in. A step that raises,
or a save that fails, leaves memory and the database exactly as they were.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

from bot import metrics
from bot.engines.contract import GameEngine
from bot.engines.errors import IllegalMove
from bot.records.results import GameResult, PlayerResult
from bot.storage import DatabaseUnavailable, StaleWrite, Storage, TableRecord
from bot.table.errors import (
    DatabaseDown,
    Localized,
    SaveFailed,
    SaveUnknown,
    TableBusy,
    TableMovedOn,
    UserError,
    user_error_for,
)
from bot.table.meta import Notice, TableMeta, Turn
from bot.table.spec import GameSpec, Letter, PublicTable, TableFacts, is_computer_id

log = logging.getLogger(__name__)

DEFAULT_TURN_SECONDS = 60
TIMEOUTS_BEFORE_TAKEOVER = 3
# How long reading a table's row back (after a save without an answer) may take. With
# the save's own limit (bot.storage.postgres.SAVE_TIMEOUT, 4 s) a click that met a server
# that does not answer is told so within about 7 s, and the table's lock is free again.
READ_BACK_TIMEOUT = 3.0
# A click's final answer (its move shown, or a private "try again") is due this long after
# it arrived, on the loop's clock; what follows it is sending that answer. A click waits
# for its table's lock only while there is time left to save and hear back after it.
CLICK_BUDGET = 9.0


class Draft:
    """A change in the making: copies of the record, metadata and game to work on."""

    def __init__(self, session: TableSession, now: float) -> None:
        live = session.record
        self.spec = session.spec
        self.now = now
        # Field by field rather than dataclasses.replace, which inspects the fields anew
        # on every call: every click makes a draft.
        self.record = TableRecord(
            game=live.game,
            channel_id=live.channel_id,
            host_id=live.host_id,
            guild_id=live.guild_id,
            status=live.status,
            options=dict(live.options),
            seats=list(live.seats),
            state=live.state,
            move_number=live.move_number,
            message_id=live.message_id,
            meta={},
            id=live.id,
            revision=live.revision,
            due_at=live.due_at,
        )
        self.meta = session.meta.copy()
        self._absent = session.absent
        self._live_engine = session.engine
        self._engine: GameEngine[Any] | None = None
        self.move: tuple[str, str] | None = None  # the move row to log: (player, action)
        self.letters: list[Letter] = []
        self.restamp = False  # whether the turn clock starts again
        self._was_running = live.status == "running"
        self.result: Any = None  # what the step returned
        self.game_result: GameResult | None = None  # set when a game ends (for the records)

    # -- the game -----------------------------------------------------------------------

    @property
    def engine(self) -> GameEngine[Any]:
        """A private copy of the game (made on first use), or TableMovedOn if none runs."""
        if self._engine is None:
            if self._live_engine is None or self.record.status != "running":
                raise TableMovedOn()
            self._engine = self._live_engine.clone()
        return self._engine

    def apply(self, player: str, action: Any, *, expected_move: int | None = None) -> Any:
        """Apply a move to the draft's game; engine errors become user messages."""
        engine = self.engine
        if expected_move is not None and expected_move != engine.move_number:
            raise TableMovedOn()
        try:
            applied = engine.apply(player, action)
        except IllegalMove as error:
            raise user_error_for(error, self._describe(error)) from None
        self.move = (player, self.spec.encode_action(action))
        self.letters += self.spec.letters(engine, player, applied)
        return applied

    def _describe(self, error: IllegalMove) -> dict[str, object]:
        facts = self.facts()
        described: dict[str, object] = {}
        for name, value in error.details.items():
            if name == "players" and isinstance(value, list | tuple):
                described[name] = ", ".join(facts.mention(p) for p in value)
            elif name == "player":
                described[name] = facts.mention(str(value))
            elif self.spec.renderer.describe(name, value, facts, None) is not None:
                # A colour or a card: in words of the reader's language, when answered.
                described[name] = Localized(partial(_described, self.spec, name, value, facts))
        return described

    def facts(self) -> TableFacts:
        """What messages may show about the drafted table."""
        return _facts(self.record, self.meta, self.spec)

    # -- lobby --------------------------------------------------------------------------

    def require_lobby(self) -> None:
        """TableMovedOn unless the table is still a lobby."""
        if self.record.status != "lobby":
            raise TableMovedOn()

    def join(self, user_id: int, name: str, locale: str | None) -> None:
        """Seat a person."""
        self.require_lobby()
        if user_id in self.record.seats:
            raise UserError("lobby.already_seated")
        if len(self.record.seats) >= self.spec.max_players:
            raise UserError("lobby.full", max=self.spec.max_players)
        self.record.seats.append(user_id)
        self.meta.names[str(user_id)] = name
        self._hold_if_away(str(user_id))
        self.acted(str(user_id))
        if user_id in self.meta.invited:
            self.meta.invited.remove(user_id)
        self.remember_locale(user_id, locale)

    def leave(self, user_id: int) -> None:
        """Give a seat up; the last person leaving cancels the table, a host hands over."""
        self.require_lobby()
        if user_id not in self.record.seats:
            raise UserError("lobby.not_seated")
        self.record.seats.remove(user_id)
        self.meta.held.pop(str(user_id), None)  # no "away until" line for someone gone
        people = [seat for seat in self.record.seats if not is_computer_id(seat)]
        if not people:
            self.close("cancelled", by=user_id)
        elif self.record.host_id == user_id:
            # The longest-seated person becomes host.
            self.record.host_id = people[0]

    def add_computer(self, by: int, level: str, name: str) -> None:
        """Seat a computer player of this level (host only)."""
        self.require_lobby()
        if by != self.record.host_id:
            raise UserError("lobby.not_host_addbot")
        self.seat_computer(level, name)

    def seat_computer(self, level: str, name: str) -> None:
        """Give the next free negative id to a computer of this level."""
        if level not in self.spec.levels:
            raise UserError("lobby.bad_level")
        if len(self.record.seats) >= self.spec.max_players:
            raise UserError("lobby.full", max=self.spec.max_players)
        seat = min([0, *self.record.seats]) - 1
        self.record.seats.append(seat)
        self.meta.computers[str(seat)] = level
        self.meta.names[str(seat)] = name

    def start(self, by: int, seed: int) -> None:
        """Deal the game (host only, with enough players)."""
        self.require_lobby()
        if by != self.record.host_id:
            raise UserError("lobby.not_host_start")
        if len(self.record.seats) < self.spec.min_players:
            raise UserError(
                "lobby.too_few", min=self.spec.min_players, count=len(self.record.seats)
            )
        self._engine = self.spec.new_engine(
            [str(seat) for seat in self.record.seats], seed, self.record.options
        )
        self.record.status = "running"
        self.meta.started_at = self.now
        self.acted(str(by))
        for seat in self.record.seats:
            # Someone who said they are away before this game started is held from its
            # first turn on (an absence may have begun after they joined the lobby).
            if self._hold_if_away(str(seat)):
                self.meta.notice = Notice("away.notice", str(seat))
        self.letters += self.spec.start_letters(self._engine)
        self.restamp = True

    def close(self, how: str, *, by: int | None, reason: str | None = None) -> None:
        """End the table: cancelled (a lobby) or abandoned (a game)."""
        self.record.status = how
        self.meta.closed_by = by
        self.meta.closed_reason = reason
        self.meta.turn = None

    def stop(self, by: int, may_manage: bool) -> None:
        """`/stop`: end a lobby or a game (host, or someone who may manage messages)."""
        if by != self.record.host_id and not may_manage:
            raise UserError("table.not_host_stop")
        if self.record.status != "running":
            self.close("cancelled", by=by)
        else:
            self.close("abandoned", by=by, reason="stalled" if self.stalled() else None)

    def stalled(self) -> bool:
        """Whether this turn-based game has stalled: a person has missed a turn (and not
        moved since), or no person has acted at the table for longer than its pace.

        A live table never stalls: its clock is seconds, and a stop there is abandoning.
        """
        if not self.meta.pace or self.record.status != "running":
            return False
        people = {str(seat) for seat in self.record.seats} - set(self.meta.computers)
        if any(self.meta.timeouts.get(player, 0) > 0 for player in people):
            return True
        last = max((self.meta.acted.get(player, 0.0) for player in people), default=0.0)
        return self.now - last > self.meta.pace

    def cancel(self, by: int, may_manage: bool) -> None:
        """Cancel a lobby (host, or someone who may manage messages)."""
        self.require_lobby()
        if by != self.record.host_id and not may_manage:
            raise UserError("lobby.not_host_cancel")
        self.close("cancelled", by=by)

    def expire(self) -> None:
        """Close a lobby nobody started in time."""
        self.require_lobby()
        self.close("cancelled", by=None, reason="expired")

    # -- moves --------------------------------------------------------------------------

    def human_move(
        self, player: str, action: Any, *, expected_move: int | None, locale: str | None
    ) -> Any:
        """A person's own move: their timeouts and the last notice are forgotten."""
        applied = self.apply(player, action, expected_move=expected_move)
        self.meta.timeouts.pop(player, None)
        self.meta.notice = None
        self.remember_locale(int(player), locale)
        self.acted(player)
        return applied

    def auto_move(self, player: str, action: Any, *, timed_out: bool) -> Any:
        """A computer's move, for a computer seat or for a person whose time ran out."""
        if timed_out:
            count = self.meta.timeouts.get(player, 0) + 1
            self.meta.timeouts[player] = count
            if count >= TIMEOUTS_BEFORE_TAKEOVER and player not in self.meta.away:
                self.meta.away.append(player)
            self.meta.notice = Notice("table.timed_out", player)
        else:
            self.meta.notice = None
        return self.apply(player, action)

    def back(self, player: str) -> None:
        """'I'm back': a person takes their seat back from the computer."""
        if self.record.status != "running":
            raise TableMovedOn()
        if player not in self.meta.away:
            raise UserError("table.not_away")
        self.meta.away.remove(player)
        self.meta.timeouts.pop(player, None)
        self.acted(player)
        self.restamp = True

    def hold(self, player: str, until: float | None) -> None:
        """A person is away until ``until`` (None: back now) at this turn-based table:
        a turn that waits for them runs out a pace after their return; the table says
        so once."""
        if not self.meta.pace or player not in (str(seat) for seat in self.record.seats):
            raise TableMovedOn()
        turn = self.meta.turn
        awaited = (
            turn is not None
            and self.record.status == "running"
            and player in (str(p) for p in self.engine.acting_players())
        )
        if until is None:
            self.meta.held.pop(player, None)
            if awaited and turn is not None:
                turn.deadline = min(turn.deadline, self.now + self.meta.pace)
            return
        self.meta.held[player] = until
        self.meta.notice = Notice("away.notice", player)
        if awaited and turn is not None:
            turn.deadline = max(turn.deadline, until + self.meta.pace)

    def _hold_if_away(self, player: str) -> bool:
        """Hold a person at this turn-based table if they said they are away (as the
        process knows it; its scheduler's next wake catches up with the rest). Whether
        they are away."""
        if not self.meta.pace or is_computer_id(player):
            return False
        until = self._absent(player)
        if until is None or until <= self.now:
            return False
        self.meta.held[player] = until
        return True

    def set_message(self, message_id: int) -> None:
        """The table's public message is now this one (posted anew, or the lobby's)."""
        self.record.message_id = message_id

    def mark_pinged(self, move: int) -> bool:
        """Note the half-time ping of this turn; False if it is no longer due."""
        turn = self.meta.turn
        if turn is None or turn.move != move or turn.pinged:
            return False
        turn.pinged = True
        return True

    def acted(self, player: str) -> None:
        """Note that a person acted at the table now (their next turn-start ping may wait)."""
        self.meta.acted[player] = self.now

    def remember_locale(self, user_id: int, locale: str | None) -> None:
        """Note a person's Discord language, so their DMs can use it."""
        if locale:
            self.meta.user_locales[str(user_id)] = locale

    # -- finishing ----------------------------------------------------------------------

    def finish(self) -> None:
        """Fold the game into the record and restart the turn clock where a turn began."""
        engine = self._engine
        if engine is not None:
            if engine.move_number != self.record.move_number or self.record.state is None:
                self.restamp = True
            self.record.state = engine.to_dict()
            self.record.move_number = engine.move_number
            if engine.is_over and self.record.status == "running":
                self.record.status = "finished"
        for player, until in list(self.meta.held.items()):
            if until <= self.now:
                del self.meta.held[player]  # back: nothing is held for them any more
        if self.record.status != "running":
            self.meta.turn = None
        elif self.restamp:
            self.meta.turn = self._new_turn()
        if self._was_running and self.record.status in ("finished", "abandoned"):
            self.meta.ended_at = self.now
            self.game_result = self._game_result()
        self.record.meta = self.meta.to_dict()

    def planned(self) -> Drafted:
        """The drafted table as its next timed event is worked out (after `finish`)."""
        engine = self._engine if self._engine is not None else self._live_engine
        return Drafted(self.record, self.meta, engine)

    def changed_columns(self, live: TableRecord) -> list[str]:
        """The stored columns this change writes: the metadata, and what differs from
        ``live`` (a move writes its state; a lobby change its seats or status)."""
        record = self.record
        changed = [
            column
            for column in ("message_id", "host_id", "status", "options", "seats")
            if getattr(record, column) != getattr(live, column)
        ]
        if record.state is not live.state or record.move_number != live.move_number:
            changed += ("state", "move_number")
        changed.append("meta")
        if record.due_at != live.due_at:
            changed.append("due_at")
        return changed

    def _game_result(self) -> GameResult:
        """What the records keep of the game that ends with this change."""
        engine = self._engine if self._engine is not None else self._live_engine
        assert engine is not None
        started = self.meta.started_at or self.now
        return game_result(self.spec, self.record, self.meta, engine, started, self.now)

    def _new_turn(self) -> Turn | None:
        engine = self.engine
        acting = engine.acting_players()
        humans = [p for p in acting if not _plays_itself(self.meta, p)]
        if engine.is_over or not humans:
            return None
        seconds = _turn_seconds(self.record, self.meta)
        # A turn waiting for someone away (/cardtable away) starts its clock when they
        # are back.
        start = max([self.now, *(self.meta.held.get(str(p), 0.0) for p in humans)])
        turn = Turn(engine.move_number, start + seconds)
        old = self.meta.turn
        if old is not None and self._continues(old, acting):
            turn.since, turn.called = old.since, old.called
        return turn

    def _continues(self, old: Turn, acting: Sequence[str]) -> bool:
        """Whether the people awaited are still in the turn that began at ``old.since``:
        no move was made ("I'm back"), or a move only struck someone off a set of several
        awaited at once (a bid among simultaneous bids, a computer's included)."""
        live = self._live_engine
        if live is None or not self._was_running:
            return False
        if live.move_number == self.engine.move_number:
            return True
        before = {str(p) for p in live.acting_players()}
        now = {str(p) for p in acting}
        return bool(now) and now < before


class Drafted:
    """A drafted table, read as a session is (bot.table.timers.Timed): its due time is
    worked out before the save that stores it."""

    __slots__ = ("engine", "meta", "record")

    def __init__(
        self, record: TableRecord, meta: TableMeta, engine: GameEngine[Any] | None
    ) -> None:
        self.record = record
        self.meta = meta
        self.engine = engine if record.status in ("running", "finished") else None

    @property
    def status(self) -> str:
        """The drafted status."""
        return self.record.status

    def acting_players(self) -> tuple[str, ...]:
        """Who may act after the change."""
        if self.engine is None or self.record.status != "running":
            return ()
        return tuple(self.engine.acting_players())

    def plays_itself(self, player: str) -> bool:
        """Whether a computer makes this seat's moves after the change."""
        return _plays_itself(self.meta, player)

    def turn_seconds(self) -> int:
        """The table's time per turn: its pace when turn-based, else the live clock."""
        return _turn_seconds(self.record, self.meta)


def _turn_seconds(record: TableRecord, meta: TableMeta) -> int:
    # A turn-based table's pace (hours or days) is its people's clock, so the due time
    # stored for the scheduler is that deadline even while the table is out of memory.
    return meta.pace or int(record.options.get("turn_seconds", DEFAULT_TURN_SECONDS))


def game_result(
    spec: GameSpec,
    record: TableRecord,
    meta: TableMeta,
    engine: GameEngine[Any],
    started_at: float,
    ended_at: float,
) -> GameResult:
    """What the records keep of a game that ended (finished: ranked; abandoned: not)."""
    assert record.id is not None
    rows = spec.result_rows(engine) if record.status == "finished" else []
    by_player = {player: (score, rank, stats) for player, score, rank, stats in rows}
    players = []
    for seat, player in enumerate(engine.players):
        score, rank, stats = by_player.get(str(player), (0, 0, {}))
        level = meta.computers.get(str(player))
        players.append(
            PlayerResult(
                seat=seat,
                # A computer is remembered by its level, so "hard" has one record and one
                # rating across every table it played at.
                player=str(player) if level is None else f"computer:{level}",
                name=meta.names.get(str(player), str(player)),
                level=level,
                seat_player=str(player),
                score=score,
                rank=rank,
                stats=stats,
            )
        )
    return GameResult(
        table_id=record.id,
        guild_id=record.guild_id,
        channel_id=record.channel_id,
        game=spec.name,
        # A stalled game (the host ended it after it stalled) is kept as its own ending,
        # unrated like an abandoned one, so the history can list it and say so.
        status="stalled"
        if record.status == "abandoned" and meta.closed_reason == "stalled"
        else record.status,
        seed=str(engine.seed),
        # A turn-based game's pace is kept with its options (the history shows it).
        options=dict(record.options) | ({"pace": meta.pace} if meta.pace else {}),
        started_at=started_at,
        ended_at=ended_at,
        moves=engine.move_number,
        players=tuple(players),
    )


def _described(spec: GameSpec, name: str, value: object, facts: TableFacts, locale: object) -> str:
    """An engine error detail in words of one language."""
    return spec.renderer.describe(name, value, facts, locale) or str(value)


def _plays_itself(meta: TableMeta, player: str) -> bool:
    return is_computer_id(player) or player in meta.away


def _facts(record: TableRecord, meta: TableMeta, spec: GameSpec) -> TableFacts:
    assert record.id is not None
    return TableFacts(
        id=record.id,
        game=spec.name,
        status=record.status,
        host_id=record.host_id,
        seats=tuple(record.seats),
        options=dict(record.options),
        names=dict(meta.names),
        computers=dict(meta.computers),
        min_players=spec.min_players,
        max_players=spec.max_players,
        move_number=record.move_number,
        levels=spec.levels,
        rating_changes=dict(meta.rating_changes),
    )


# Runs after a change is saved and swapped in, under the table's lock; True when it
# brought the public message up to date itself (a click answered by editing it).
Then = Callable[[], Awaitable[bool]]


class TableSession:
    """One open (or just closed) table: the record, the game, metadata, computer memory."""

    def __init__(
        self,
        spec: GameSpec,
        record: TableRecord,
        storage: Storage,
        lock: asyncio.Lock,
        clock: Callable[[], float],
    ) -> None:
        assert record.id is not None
        self.spec = spec
        self.record = record
        self.storage = storage
        self.lock = lock
        self.clock = clock
        self.meta = TableMeta.from_dict(record.meta)
        self.engine: GameEngine[Any] | None = None
        if record.state is not None and record.status in ("running", "finished"):
            self.engine = spec.engine_from_dict(record.state)
        # Computer players' memory of the round, per seat: never stored, freed on close.
        self.memory: dict[str, Any] = {}
        # Called after every saved change, under the lock, with the letters it caused (the
        # host reschedules timers, frees closed tables, queues the DMs in change order).
        self.on_changed: Callable[[TableSession, bool, Sequence[Letter]], None] = (
            lambda session, published, letters: None
        )
        # Called when a save whose outcome was unknown turns out to have gone through after
        # its click was answered (the host sends the DMs it caused).
        self.on_settled: Callable[[TableSession, Draft], None] = lambda session, draft: None
        # A change whose save was sent but never answered: it may or may not be stored.
        # Until it is settled by reading the row back, no other change is made.
        self.unsettled: Draft | None = None
        # When a drafted change's next timed event falls due (None: nothing due): stored
        # with the change, for the scheduler (the host sets it; bot.table.timers.due_time).
        self.plan: Callable[[Drafted, float], float | None] = lambda drafted, now: None
        # Until when a person said they are away (/cardtable away), as the host knows it;
        # None if not away. A person who joins, or whose game starts, meanwhile is held.
        self.absent: Callable[[str], float | None] = lambda player: None

    # -- reading ------------------------------------------------------------------------

    @property
    def id(self) -> int:
        """The table id."""
        assert self.record.id is not None
        return self.record.id

    @property
    def channel_id(self) -> int:
        """The channel the table sits in."""
        return self.record.channel_id

    @property
    def status(self) -> str:
        """lobby, running, finished, cancelled or abandoned."""
        return self.record.status

    @property
    def is_open(self) -> bool:
        """Whether the table still occupies its channel."""
        return self.record.is_open

    @property
    def jump_url(self) -> str:
        """A link to the table's public message."""
        guild = self.record.guild_id if self.record.guild_id is not None else "@me"
        return f"https://discord.com/channels/{guild}/{self.channel_id}/{self.record.message_id}"

    @property
    def revision(self) -> int:
        """How many saves the table has had: any change bumps it."""
        return self.record.revision

    def facts(self) -> TableFacts:
        """What messages may show about the table besides the game."""
        return _facts(self.record, self.meta, self.spec)

    def public(self) -> PublicTable:
        """What a public message about this table may show: no hidden card, no hidden bid."""
        meta = self.meta
        return PublicTable(
            facts=self.facts(),
            view=None if self.engine is None else self.engine.view(None),
            notice=None if meta.notice is None else (meta.notice.key, meta.notice.player),
            deadline=None if meta.turn is None else meta.turn.deadline,
            away=tuple(meta.away),
            turn_seconds=self.turn_seconds(),
            pace=meta.pace,
            held=tuple(
                (player, until) for player, until in meta.held.items() if until > self.clock()
            ),
            played_for=None
            if meta.ended_at is None or meta.started_at is None
            else meta.ended_at - meta.started_at,
            closed_reason=meta.closed_reason,
            closed_by=meta.closed_by,
            invited=tuple(meta.invited),
        )

    def running_engine(self) -> GameEngine[Any]:
        """The game, or TableMovedOn if the table is not running one."""
        if self.engine is None or self.record.status != "running":
            raise TableMovedOn()
        return self.engine

    def player_view(self, player: str) -> Any:
        """What one seated player may see; UserError for someone without a seat."""
        engine = self.running_engine()
        if player not in engine.players:
            raise UserError("table.not_seated")
        return engine.view(player)

    def acting_players(self) -> tuple[str, ...]:
        """Who may act now."""
        return (
            ()
            if self.engine is None or self.status != "running"
            else (self.engine.acting_players())
        )

    def plays_itself(self, player: str) -> bool:
        """Whether a computer makes this seat's moves right now."""
        return _plays_itself(self.meta, player)

    def level_of(self, player: str) -> str:
        """A computer seat's level; normal for a seat taken over from an absent person."""
        return self.meta.computers.get(player, "normal")

    def turn_seconds(self) -> int:
        """The table's time per turn: its pace when turn-based, else the live clock."""
        return _turn_seconds(self.record, self.meta)

    @property
    def turn_based(self) -> bool:
        """Whether people have a long clock here (play by post), not a live one."""
        return self.meta.pace > 0

    def user_locale(self, player: str) -> str | None:
        """The language a person last used with this table, for DMs."""
        return self.meta.user_locales.get(player)

    # -- the one path for every change ----------------------------------------------------

    async def change(
        self,
        step: Callable[[Draft], Any],
        *,
        then: Then | None = None,
        deadline: float | None = None,
    ) -> Draft:
        """Take the table's lock and make one change (see `change_locked`).

        With a ``deadline`` (the loop's clock: a click's answer is due then), the change
        is made only if it can be answered by then, else it fails at once and nothing
        changes: DatabaseDown when the lock is held while the database is known to be
        down (a save of this table hangs on it), TableBusy when the lock is not free in
        time to save and hear back before the deadline.
        """
        if deadline is None:
            async with self.lock:
                return await self.change_locked(step, then=then)
        if self.lock.locked() and not self.storage.available:
            raise DatabaseDown()
        try:
            async with asyncio.timeout_at(deadline - self._work_limit()):
                await self.lock.acquire()
        except TimeoutError:
            log.info("%s table %s: busy past a click's time", self.spec.name, self.id)
            raise TableBusy() from None
        try:
            return await self.change_locked(step, then=then, deadline=deadline)
        finally:
            self.lock.release()

    def _work_limit(self) -> float:
        """The longest a change's save may take before it is answered: the save and, if
        it is not answered, reading the row back. (An earlier unanswered save is settled
        first, within READ_BACK_TIMEOUT; a change left without the time for its own save
        then is refused, the table settled for the next.)"""
        return self.storage.save_limit + READ_BACK_TIMEOUT

    def _in_time(self, deadline: float | None, need: float) -> None:
        """Raise (nothing changed) when ``need`` seconds of work could no longer be done by
        the deadline: DatabaseDown while the database is known to be down, else TableBusy."""
        if deadline is None:
            return
        if asyncio.get_running_loop().time() + need <= deadline:
            return
        if not self.storage.available:
            raise DatabaseDown()
        raise TableBusy()

    async def change_locked(
        self,
        step: Callable[[Draft], Any],
        *,
        then: Then | None = None,
        deadline: float | None = None,
    ) -> Draft:
        """Compute a change on a draft, save it in one transaction, then swap it in.

        ``step`` may raise a UserError: nothing changes. With a ``deadline`` (see
        `change`), a change that could no longer be answered by then is refused before
        anything is sent (DatabaseDown or TableBusy). A save that certainly failed
        raises SaveFailed (DatabaseDown when the database is out of reach): nothing changes
        either. A save whose outcome is unknown is settled by reading the row back: the
        change stands if the row holds it, else SaveFailed; SaveUnknown while the row
        cannot be read. A StaleWrite reloads the table from the database. ``then`` runs
        after the swap, still under the lock, so publications keep their order.
        """
        if not self.lock.locked():
            raise RuntimeError("change_locked needs the table's lock")
        if self.unsettled is not None:
            self._in_time(deadline, READ_BACK_TIMEOUT)
            if not self.storage.may_try():
                # The database is down and was tried just now: no read-back that would
                # hold the table for its whole limit; the change is refused at once, as
                # its save would be (see Storage.may_try).
                raise DatabaseDown()
            # An earlier change's fate first: this one must build on what is really stored.
            await self.settle()
        self._in_time(deadline, self._work_limit())
        draft = Draft(self, self.clock())
        draft.result = step(draft)
        draft.finish()
        draft.record.due_at = self.plan(draft.planned(), draft.now)
        expected = self.record.revision
        try:
            await self.storage.save_table(
                draft.record,
                draft.move,
                expect_revision=expected,
                result=draft.game_result,
                columns=draft.changed_columns(self.record),
            )
        except StaleWrite as error:
            # Another writer holds newer state: show that, so the next click builds on it.
            log.warning("%s table %s: %s; reloading it", self.spec.name, self.id, error)
            await self.reload()
            raise SaveFailed() from error
        except DatabaseUnavailable as error:
            # The storage logs the outage once (with the driver's traceback) and its end;
            # each refused change adds only this, at DEBUG: during an outage every click
            # and timer is refused, and a traceback each grew the log by a megabyte in two
            # minutes. The click's answer logs one line of its own (bot.client.replies).
            log.debug(
                "could not save %s table %s (revision %s): %s",
                self.spec.name,
                self.id,
                expected,
                error,
            )
            raise DatabaseDown() from error
        except Exception as error:
            log.warning(
                "the save of %s table %s (revision %s) ended without an answer: %r;"
                " reading the row back",
                self.spec.name,
                self.id,
                expected,
                error,
                exc_info=True,
            )
            # The save may have bumped the draft's revision before it raised: the read
            # back compares with the revision it replaced.
            draft.record.revision = expected
            self.unsettled = draft
            try:
                stood = await self._settle_unsettled()
            except DatabaseDown:
                raise SaveUnknown() from error
            if stood is None:
                raise SaveFailed() from error
        self._swap(draft)
        metrics.moved(self.spec.name)
        published = False
        if then is not None:
            try:
                published = await then()
            except Exception:
                # The change stands; the table message is brought up to date another way.
                log.warning("answering a change of table %s failed", self.id, exc_info=True)
        self.on_changed(self, published, draft.letters)
        return draft

    async def settle(self) -> None:
        """Settle a save whose outcome was unknown (under the lock): if the row holds it,
        swap it in and publish it; DatabaseDown while the row cannot be read."""
        if self.unsettled is None:
            return
        draft = await self._settle_unsettled()
        if draft is not None:
            self._swap(draft)
            self.on_changed(self, False, ())
            self.on_settled(self, draft)

    async def _settle_unsettled(self) -> Draft | None:
        """Read the row back: the unsettled draft if its save went through, else None (a
        row another writer changed is loaded). DatabaseDown if the row cannot be read."""
        draft = self.unsettled
        if draft is None:
            return None
        expected = draft.record.revision  # a failed save leaves the draft's revision alone
        try:
            async with asyncio.timeout(READ_BACK_TIMEOUT):
                stored = await self.storage.get_table(self.id)
        except Exception as error:
            log.warning("cannot read %s table %s back yet: %r", self.spec.name, self.id, error)
            raise DatabaseDown() from error
        # It answered: saves need not wait for the next health probe to be tried again.
        self.storage.mark_up()
        self.unsettled = None
        # One revision past ours is ours: only this process writes its shards' rows under
        # the table's lock, and any other writer would have met a StaleWrite of its own.
        if (
            stored is not None
            and stored.revision == expected + 1
            and stored.move_number == draft.record.move_number
            and stored.status == draft.record.status
        ):
            log.warning(
                "the unanswered save of %s table %s went through (revision %s)",
                self.spec.name,
                self.id,
                expected + 1,
            )
            draft.record.revision = expected + 1
            metrics.settled("went_through")
            changes = stored.meta.get("rating_changes")
            if changes:
                draft.record.meta["rating_changes"] = changes
            return draft
        if stored is not None and stored.revision == expected:
            metrics.settled("did_not")
            log.warning(
                "the unanswered save of %s table %s did not go through; nothing changed",
                self.spec.name,
                self.id,
            )
            return None
        metrics.settled("did_not")
        log.warning(
            "%s table %s holds another writer's revision: reloading it", self.spec.name, self.id
        )
        self.load(stored)
        return None

    async def reload(self) -> None:
        """Load the table again from the database and publish it (after a StaleWrite).

        If the database cannot be read now, the next change meets the StaleWrite again
        and tries once more.
        """
        try:
            # Bounded as a read-back: it runs under the table's lock.
            async with asyncio.timeout(READ_BACK_TIMEOUT):
                stored = await self.storage.get_table(self.id)
        except Exception:
            log.warning("cannot reload %s table %s yet", self.spec.name, self.id, exc_info=True)
            return
        self.load(stored)

    def load(self, stored: TableRecord | None) -> None:
        """Take over the stored row (None: deleted), then replan and publish the table."""
        if stored is None:
            # Only a lobby whose message never appeared is deleted: it is gone.
            self.record.status = "cancelled"
            self.engine = None
        else:
            try:
                engine = (
                    self.spec.engine_from_dict(stored.state)
                    if stored.state is not None and stored.status in ("running", "finished")
                    else None
                )
                meta = TableMeta.from_dict(stored.meta)
            except Exception:
                log.error(
                    "%s table %s no longer loads; kept as it was",
                    self.spec.name,
                    self.id,
                    exc_info=True,
                )
                return
            self.record, self.meta, self.engine = stored, meta, engine
        self.memory.clear()  # computers' memory of a round that may have gone another way
        self.on_changed(self, False, ())

    def _swap(self, draft: Draft) -> None:
        self.record = draft.record
        # The draft's metadata is what was saved, except the rating changes a finished
        # game's save adds to the stored form: those are taken over from it.
        changes = draft.record.meta.get("rating_changes")
        if changes:
            draft.meta.rating_changes = {str(k): float(v) for k, v in changes.items()}
        self.meta = draft.meta
        if draft._engine is not None:
            self.engine = draft._engine
        if not self.is_open:
            self.memory.clear()
