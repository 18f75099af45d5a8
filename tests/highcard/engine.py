"""The High card rules engine: pure, seeded, deterministic; a `GameEngine[str]`.

Cards 1..20 are shuffled with the seed and every player is dealt two. Over two rounds the
players act in seat order, each playing one card per round; the highest card of a round
scores its player a point. Most points wins; tied players share a rank.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bot.engines.errors import (
    GameOver,
    IllegalMove,
    InvalidSetup,
    NotYourTurn,
    UnknownPlayer,
    plain_id,
)

MIN_PLAYERS = 2
MAX_PLAYERS = 4
HIGHEST_CARD = 20
HAND_SIZE = 2
ROUNDS = 2
STATE_VERSION = 1


class NotInHand(IllegalMove):
    """A card the player does not hold (or no card at all)."""

    code = "card_not_in_hand"  # reuses the catalogue's error.card_not_in_hand


class Play(NamedTuple):
    """One applied move: who played which card."""

    seat: int
    card: int


class Standing(NamedTuple):
    """One player's current result."""

    player: str
    points: int
    rank: int


@dataclass(frozen=True, slots=True)
class HighCardView:
    """What one seat may see (its own hand only); the public view has no hand at all."""

    viewer: str | None
    players: tuple[str, ...]
    round: int
    active_player: str | None
    trick: tuple[tuple[str, int], ...]  # this round's plays so far, in order
    last_round: tuple[str, int] | None  # (winner, card) of the round before
    points: dict[str, int]
    cards_left: dict[str, int]
    hand: tuple[int, ...] | None  # None in the public view
    legal: tuple[int, ...]  # the viewer's legal cards now (empty for spectators)
    move_number: int
    is_over: bool


@dataclass(slots=True)
class HighCardGame:
    """The whole state of one game of High card, hands included."""

    players: list[str]
    seed: int
    hands: list[list[int]]
    points: list[int]
    active: int
    trick: list[Play] = field(default_factory=list)
    history: list[Play] = field(default_factory=list)
    last_round: Play | None = None

    # -- construction -----------------------------------------------------------------

    @classmethod
    def new(cls, players: Sequence[str], seed: int) -> HighCardGame:
        """Shuffle cards 1..20 with the seed and deal two to each player."""
        seated = [str(p) for p in players]
        if not MIN_PLAYERS <= len(seated) <= MAX_PLAYERS or len(set(seated)) != len(seated):
            raise InvalidSetup(f"High card needs {MIN_PLAYERS} to {MAX_PLAYERS} distinct players.")
        deck = list(range(1, HIGHEST_CARD + 1))
        random.Random(seed).shuffle(deck)
        hands = [sorted(deck[i * HAND_SIZE : (i + 1) * HAND_SIZE]) for i in range(len(seated))]
        return cls(players=seated, seed=seed, hands=hands, points=[0] * len(seated), active=0)

    # -- queries ----------------------------------------------------------------------

    @property
    def move_number(self) -> int:
        """How many cards have been played."""
        return len(self.history)

    @property
    def is_over(self) -> bool:
        """Whether both rounds have been played."""
        return len(self.history) >= ROUNDS * len(self.players)

    @property
    def round(self) -> int:
        """The round in progress (1 or 2; the last one once the game is over)."""
        return min(ROUNDS, len(self.history) // len(self.players) + 1)

    @property
    def active_player(self) -> str | None:
        """Who plays next, or None once the game is over."""
        return None if self.is_over else self.players[self.active]

    def acting_players(self) -> tuple[str, ...]:
        """The one player to act, or nobody once the game is over."""
        return () if self.is_over else (self.players[self.active],)

    def seat_of(self, player: str) -> int:
        """The seat index of a player, or UnknownPlayer."""
        try:
            return self.players.index(player)
        except ValueError:
            raise UnknownPlayer(
                f"{player} has no seat at this table.", player=plain_id(player)
            ) from None

    def legal_actions(self, player: str | None = None) -> list[int]:
        """The cards the active player (or ``player``, if active) may play."""
        if self.is_over:
            return []
        if player is not None and self.seat_of(player) != self.active:
            return []
        return sorted(self.hands[self.active])

    def standings(self) -> list[Standing]:
        """Every player's points, most first (seat order breaks ties); ties share a rank."""
        order = sorted(range(len(self.players)), key=lambda seat: (-self.points[seat], seat))
        result: list[Standing] = []
        for index, seat in enumerate(order):
            points = self.points[seat]
            rank = result[-1].rank if result and result[-1].points == points else index + 1
            result.append(Standing(self.players[seat], points, rank))
        return result

    def view(self, player: str | None = None) -> HighCardView:
        """What ``player`` may see: their own hand only; None is a spectator (no hands)."""
        seat = None if player is None else self.seat_of(player)
        return HighCardView(
            viewer=player,
            players=tuple(self.players),
            round=self.round,
            active_player=self.active_player,
            trick=tuple((self.players[p.seat], p.card) for p in self.trick),
            last_round=(
                None
                if self.last_round is None
                else (self.players[self.last_round.seat], self.last_round.card)
            ),
            points={p: self.points[i] for i, p in enumerate(self.players)},
            cards_left={p: len(self.hands[i]) for i, p in enumerate(self.players)},
            hand=None if seat is None else tuple(sorted(self.hands[seat])),
            legal=() if player is None else tuple(self.legal_actions(player)),
            move_number=self.move_number,
            is_over=self.is_over,
        )

    # -- actions ----------------------------------------------------------------------

    def apply(self, player: str, action: Any) -> Play:
        """Play one card; an illegal action raises and changes nothing."""
        seat = self.seat_of(player)
        if self.is_over:
            raise GameOver("The game is over.", player=player)
        if seat != self.active:
            raise NotYourTurn(
                f"It is {self.players[self.active]}'s turn, not {player}'s.",
                player=player,
                players=[self.players[self.active]],
            )
        if (
            isinstance(action, bool)
            or not isinstance(action, int)
            or action not in self.hands[seat]
        ):
            raise NotInHand(
                f"{player} does not hold {action!r}.",
                player=player,
                card=action if isinstance(action, int) else repr(action),
            )
        self.hands[seat].remove(action)
        play = Play(seat, action)
        self.trick.append(play)
        self.history.append(play)
        self.active = (seat + 1) % len(self.players)
        if len(self.trick) == len(self.players):
            best = max(self.trick, key=lambda p: p.card)
            self.points[best.seat] += 1
            self.last_round = best
            self.trick = []
        return play

    # -- serialisation ----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The full state, hands included, as plain JSON data."""
        return {
            "version": STATE_VERSION,
            "game": "highcard",
            "players": list(self.players),
            "seed": self.seed,
            "hands": [list(h) for h in self.hands],
            "points": list(self.points),
            "active": self.active,
            "trick": [list(p) for p in self.trick],
            "history": [list(p) for p in self.history],
            "last_round": None if self.last_round is None else list(self.last_round),
        }

    def clone(self) -> HighCardGame:
        """An independent copy, through the plain-data form (small enough not to matter)."""
        return HighCardGame.from_dict(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HighCardGame:
        """Rebuild a state written by ``to_dict``."""
        if data.get("game") != "highcard" or data.get("version") != STATE_VERSION:
            raise ValueError(f"Not a High card state: {data.get('game')!r}")
        last = data.get("last_round")
        return cls(
            players=[str(p) for p in data["players"]],
            seed=int(data["seed"]),
            hands=[[int(c) for c in h] for h in data["hands"]],
            points=[int(p) for p in data["points"]],
            active=int(data["active"]),
            trick=[Play(int(s), int(c)) for s, c in data["trick"]],
            history=[Play(int(s), int(c)) for s, c in data["history"]],
            last_round=None if last is None else Play(int(last[0]), int(last[1])),
        )
