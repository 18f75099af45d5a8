"""Replays of stored games: the public view after every move, from the seed and the move log.

Pure: the caller loads the game (bot.queries.history) and renders the views (bot.render.records).
A replay shows what a spectator saw, so only public views (``engine.view(None)``) are kept.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.table.spec import GameSpec

# Ids that replace a forgotten person's Discord id (/cardtable forget-me): above every
# snowflake Discord hands out until the 2080s, so they never name a real account.
ANONYMOUS_FLOOR = 2**63


def is_anonymous(player: str | int) -> bool:
    """Whether a player id is the anonymous id of someone who asked to be forgotten."""
    try:
        return int(player) >= ANONYMOUS_FLOOR
    except ValueError:
        return False  # "computer:<level>"


@dataclass(frozen=True, slots=True)
class StoredSeat:
    """One seat of a stored game, as the records keep it."""

    seat: int
    player: str  # the records' id: a Discord id, "computer:<level>" or an anonymous id
    seat_player: str  # the id the engine knew the seat by (the move log names it)
    name: str
    level: str | None
    score: int
    rank: int
    rating_change: float | None = None

    @property
    def is_computer(self) -> bool:
        """Whether a computer played this seat."""
        return self.level is not None


@dataclass(frozen=True, slots=True)
class GameSummary:
    """A game in the history list: when it ended, who played and who won."""

    table_id: int
    game: str
    status: str
    ended_at: float
    seats: tuple[StoredSeat, ...]
    pace: int = 0  # seconds per move of a turn-based game; 0: live
    started_at: float | None = None

    @property
    def winners(self) -> tuple[StoredSeat, ...]:
        """The seats ranked first (a shared first place names everyone); none if abandoned."""
        if self.status != "finished":
            return ()
        return tuple(seat for seat in self.seats if seat.rank == 1)


@dataclass(frozen=True, slots=True)
class StoredGame:
    """Everything a replay needs: the game, its seed, options, seats and move log."""

    table_id: int
    guild_id: int | None
    game: str
    status: str
    seed: str
    options: Mapping[str, Any]
    started_at: float
    ended_at: float
    seats: tuple[StoredSeat, ...]
    moves: tuple[tuple[str, str], ...] = field(default=())  # (seat player, encoded action)

    @property
    def seat_players(self) -> list[str]:
        """The engine's player ids in seat order."""
        return [seat.seat_player for seat in self.seats]

    @property
    def summary(self) -> GameSummary:
        """The game as the history list shows it."""
        return GameSummary(self.table_id, self.game, self.status, self.ended_at, self.seats)


@dataclass(frozen=True, slots=True)
class Position:
    """One step of a replay: the public view there, and how to move on from it."""

    step: int
    view: Any
    last: int  # the index of the last step (the final position)
    over: bool  # whether the game was played to its end
    # Step indexes where a round starts (Rage), the first included; empty without rounds.
    rounds: tuple[int, ...]

    @property
    def is_final(self) -> bool:
        """Whether this is the final board of a finished game (everything revealed)."""
        return self.over and self.step == self.last

    @property
    def round(self) -> int:
        """The number (from 1) of the round this step belongs to; 0 without rounds."""
        return sum(1 for start in self.rounds if start <= self.step)

    def previous_round(self) -> int:
        """The start of the round before this step's round (or of the first round)."""
        starts = [start for start in self.rounds if start <= self.step]
        return starts[-2] if len(starts) >= 2 else 0

    def next_round(self) -> int:
        """The start of the next round, or the final position after the last round."""
        return next((start for start in self.rounds if start > self.step), self.last)


@dataclass(frozen=True, slots=True)
class Replay:
    """The public view after each move (index 0: the deal) and where rounds start."""

    views: tuple[Any, ...]
    rounds: tuple[int, ...]  # see Position.rounds
    over: bool  # whether the last view is a finished game (shown as the final board)

    @property
    def last(self) -> int:
        """The index of the last step (the final position)."""
        return len(self.views) - 1

    def position(self, step: int) -> Position:
        """One step (clamped to the replay: an old button may name one past its end)."""
        step = max(0, min(step, self.last))
        return Position(step, self.views[step], self.last, self.over, self.rounds)


def round_starts(rounds: Sequence[int | None]) -> tuple[int, ...]:
    """Where a new round begins, from each step's round number (None: a game without)."""
    if not rounds or rounds[0] is None:
        return ()
    return (0, *(i for i in range(1, len(rounds)) if rounds[i] != rounds[i - 1]))


def _moves(spec: GameSpec, moves: Iterable[tuple[str, str]]) -> list[tuple[str, Any]]:
    return [(player, spec.decode_action(action)) for player, action in moves]


def replay(
    spec: GameSpec,
    seat_players: Sequence[str],
    seed: int | str,
    options: Mapping[str, Any],
    moves: Iterable[tuple[str, str]],
) -> Replay:
    """Deal the game again from its seed and apply the logged moves, keeping every view.

    The moves are (player, action) as the log wrote them (``spec.encode_action``); an
    illegal one raises the engine's IllegalMove, as the log then is not this game's.
    """
    engine = spec.new_engine(list(seat_players), int(seed), options)
    views = [engine.view(None)]
    for player, action in _moves(spec, moves):
        engine.apply(player, action)
        views.append(engine.view(None))
    rounds = round_starts([getattr(view, "round", None) for view in views])
    return Replay(tuple(views), rounds, engine.is_over)


def position(
    spec: GameSpec,
    seat_players: Sequence[str],
    seed: int | str,
    options: Mapping[str, Any],
    moves: Iterable[tuple[str, str]],
    step: int,
) -> Position:
    """One step of a replay without building every view (a replay button's click).

    Views are most of a replay's cost, so only the one shown is built; the round of each
    step is read from the game itself, the field the views copy it from (the same
    boundaries as `replay`'s, which the tests check).
    """
    decoded = _moves(spec, moves)
    step = max(0, min(step, len(decoded)))
    engine = spec.new_engine(list(seat_players), int(seed), options)
    rounds: list[int | None] = [getattr(engine, "round", None)]
    view = engine.view(None) if step == 0 else None
    for index, (player, action) in enumerate(decoded, start=1):
        engine.apply(player, action)
        rounds.append(getattr(engine, "round", None))
        if index == step:
            view = engine.view(None)
    return Position(step, view, len(decoded), engine.is_over, round_starts(rounds))


def replay_game(spec: GameSpec, game: StoredGame) -> Replay:
    """The whole replay of a stored game."""
    return replay(spec, game.seat_players, game.seed, game.options, game.moves)


def game_position(spec: GameSpec, game: StoredGame, step: int) -> Position:
    """One step of a stored game's replay."""
    return position(spec, game.seat_players, game.seed, game.options, game.moves, step)


def new_anonymous_id() -> str:
    """A fresh anonymous id for a forgotten person: random, so it cannot be traced back."""
    return str(ANONYMOUS_FLOOR + secrets.randbelow(ANONYMOUS_FLOOR))
