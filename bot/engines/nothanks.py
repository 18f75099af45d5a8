"""The No Thanks! (Geschenkt!) rules engine: pure, seeded, deterministic.

See ``RULES.md``: 33 cards 3..35 with 9 removed unseen, chips by player count, take or
pass, a taker acts again, runs count their lowest card, chips subtract, lowest wins.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from bot.engines.errors import (
    GameOver,
    IllegalMove,
    InvalidSetup,
    NotYourTurn,
    UnknownPlayer,
    plain_id,
)

MIN_PLAYERS = 3
MAX_PLAYERS = 7
LOWEST_CARD = 3
HIGHEST_CARD = 35
REMOVED_CARDS = 9
PILE_SIZE = HIGHEST_CARD - LOWEST_CARD + 1 - REMOVED_CARDS  # 24
STATE_VERSION = 1


def starting_chips(players: int) -> int:
    """Chips each player starts with: 11 for 3-5 players, 9 for 6, 7 for 7."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InvalidSetup(
            f"No Thanks! needs {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}."
        )
    return {6: 9, 7: 7}.get(players, 11)


class Action(StrEnum):
    """What the active player does with the face-up card."""

    TAKE = "take"
    PASS = "pass"


TAKE = Action.TAKE
PASS = Action.PASS


class MustTake(IllegalMove):
    """A player with no chips left tried to pass."""

    code = "must_take"


class UnknownAction(IllegalMove):
    """Something that is neither take nor pass."""

    code = "unknown_action"


class Move(NamedTuple):
    """One applied action, with what lay on the table when it was made."""

    seat: int
    action: Action
    card: int
    chips_on_card: int


def runs(cards: list[int]) -> list[list[int]]:
    """Group cards into runs of consecutive numbers, lowest first."""
    grouped: list[list[int]] = []
    for card in sorted(cards):
        if grouped and card == grouped[-1][-1] + 1:
            grouped[-1].append(card)
        else:
            grouped.append([card])
    return grouped


def card_points(cards: list[int]) -> int:
    """Points of a set of cards: each run counts only its lowest card."""
    present = set(cards)
    return sum(card for card in present if card - 1 not in present)


def score(cards: list[int], chips: int) -> int:
    """A player's total: card points minus one per chip (lower is better)."""
    return card_points(cards) - chips


@dataclass(frozen=True, slots=True)
class Standing:
    """One player's final (or current) result."""

    player: str
    seat: int
    runs: list[list[int]]
    card_points: int
    chips: int
    total: int
    rank: int

    @property
    def is_winner(self) -> bool:
        """Whether this player shares first place."""
        return self.rank == 1

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "player": self.player,
            "seat": self.seat,
            "runs": [list(r) for r in self.runs],
            "card_points": self.card_points,
            "chips": self.chips,
            "total": self.total,
            "rank": self.rank,
        }


def rank_standings(rows: list[tuple[str, int, list[int], int]]) -> list[Standing]:
    """Rank (player, seat, cards, chips) rows: lowest total first, ties share a rank."""
    scored = [
        (score(cards, chips), seat, player, cards, chips) for player, seat, cards, chips in rows
    ]
    scored.sort(key=lambda row: (row[0], row[1]))
    result: list[Standing] = []
    for index, (total, seat, player, cards, chips) in enumerate(scored):
        rank = result[-1].rank if result and result[-1].total == total else index + 1
        result.append(
            Standing(
                player=player,
                seat=seat,
                runs=runs(cards),
                card_points=card_points(cards),
                chips=chips,
                total=total,
                rank=rank,
            )
        )
    return result


@dataclass(slots=True)
class PlayerView:
    """What one seat may see: its own chips, others' only with open chips, no hidden cards."""

    viewer: str | None
    players: list[str]
    open_chips: bool
    current_card: int | None
    chips_on_card: int
    cards_left: int
    active_player: str | None
    cards: dict[str, list[int]]
    chips: dict[str, int | None]
    move_number: int
    is_over: bool
    removed: list[int] | None
    history: list[Move]

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "viewer": self.viewer,
            "players": list(self.players),
            "open_chips": self.open_chips,
            "current_card": self.current_card,
            "chips_on_card": self.chips_on_card,
            "cards_left": self.cards_left,
            "active_player": self.active_player,
            "cards": {p: list(c) for p, c in self.cards.items()},
            "chips": dict(self.chips),
            "move_number": self.move_number,
            "is_over": self.is_over,
            "removed": None if self.removed is None else list(self.removed),
            # _value_ rather than .value: the property costs more than the rest of the row
            # (every save writes the whole history).
            "history": [[s, a._value_, c, p] for s, a, c, p in self.history],
        }


@dataclass(slots=True)
class NoThanksGame:
    """The whole state of one game of No Thanks!, including what no player may see."""

    players: list[str]
    seed: int
    open_chips: bool
    removed: list[int]
    pile: list[int]
    current_card: int | None
    chips_on_card: int
    chips: list[int]
    cards: list[list[int]]
    active: int
    first_player: int
    history: list[Move] = field(default_factory=list)
    _seats: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    # The history as to_dict writes it, a row per move, extended as moves are made: every
    # save writes the whole history, so rows are built once each, not once per save. The
    # rows are shared with clones and with to_dict's results: never change one.
    _rows: list[list[Any]] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._seats = {player: seat for seat, player in enumerate(self.players)}

    def clone(self) -> NoThanksGame:
        """An independent copy (moves are immutable tuples, so the history is shared)."""
        return NoThanksGame(
            players=list(self.players),
            seed=self.seed,
            open_chips=self.open_chips,
            removed=list(self.removed),
            pile=list(self.pile),
            current_card=self.current_card,
            chips_on_card=self.chips_on_card,
            chips=list(self.chips),
            cards=[list(cards) for cards in self.cards],
            active=self.active,
            first_player=self.first_player,
            history=list(self.history),
            _rows=list(self._rows),
        )

    # -- construction ---------------------------------------------------------------

    @classmethod
    def new(cls, players: list[str], seed: int, *, open_chips: bool = False) -> NoThanksGame:
        """Deal a new game: shuffle, remove 9 cards unseen, hand out chips, draw a starter."""
        players = [str(p) for p in players]
        count = starting_chips(len(players))
        if len(set(players)) != len(players):
            raise InvalidSetup("A player cannot take two seats at one table.")
        rng = random.Random(seed)
        deck = list(range(LOWEST_CARD, HIGHEST_CARD + 1))
        rng.shuffle(deck)
        removed = sorted(deck[:REMOVED_CARDS])
        pile = deck[REMOVED_CARDS:]
        first = rng.randrange(len(players))
        return cls(
            players=players,
            seed=seed,
            open_chips=open_chips,
            removed=removed,
            pile=pile[:-1],
            current_card=pile[-1],
            chips_on_card=0,
            chips=[count] * len(players),
            cards=[[] for _ in players],
            active=first,
            first_player=first,
        )

    @classmethod
    def replay(
        cls,
        players: list[str],
        seed: int,
        actions: Sequence[Action | str],
        *,
        open_chips: bool = False,
    ) -> NoThanksGame:
        """Rebuild a game from its seed and the list of actions taken."""
        game = cls.new(players, seed, open_chips=open_chips)
        for action in actions:
            game.apply(game.players[game.active], action)
        return game

    # -- queries --------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        """Whether the last card has been taken."""
        return self.current_card is None

    @property
    def move_number(self) -> int:
        """How many actions have been applied."""
        return len(self.history)

    @property
    def active_player(self) -> str | None:
        """The player who must act now, or None once the game is over."""
        return None if self.current_card is None else self.players[self.active]

    @property
    def cards_left(self) -> int:
        """Face-down cards still in the pile (the face-up card not counted)."""
        return len(self.pile)

    def acting_players(self) -> tuple[str, ...]:
        """The one player who must act now, or nobody once the game is over."""
        return () if self.current_card is None else (self.players[self.active],)

    def seat_of(self, player: str) -> int:
        """The seat index of a player, or UnknownPlayer."""
        try:
            return self._seats[player]
        except (KeyError, TypeError):
            raise UnknownPlayer(
                f"{player} has no seat at this table.", player=plain_id(player)
            ) from None

    def legal_actions(self, player: str | None = None) -> list[Action]:
        """The actions open to the active player (or to ``player``: none if not active)."""
        if self.current_card is None:
            return []
        if player is not None and self.seat_of(player) != self.active:
            return []
        return [TAKE, PASS] if self.chips[self.active] > 0 else [TAKE]

    def score_of(self, player: str) -> int:
        """A player's current total (card points minus chips)."""
        seat = self.seat_of(player)
        return score(self.cards[seat], self.chips[seat])

    def standings(self) -> list[Standing]:
        """Every player's runs, card points, chips, total and rank (ties share a rank)."""
        return rank_standings(
            [
                (player, seat, self.cards[seat], self.chips[seat])
                for seat, player in enumerate(self.players)
            ]
        )

    def winners(self) -> list[str]:
        """The players sharing the lowest total."""
        return [s.player for s in self.standings() if s.rank == 1]

    def total_chips(self) -> int:
        """Chips in play: every player's plus the ones on the card (never changes)."""
        return sum(self.chips) + self.chips_on_card

    def view(self, player: str | None = None) -> PlayerView:
        """What ``player`` may see (``None``: a spectator, who sees no private chips)."""
        seat = None if player is None else self.seat_of(player)
        over = self.is_over
        chips: dict[str, int | None] = {}
        for index, name in enumerate(self.players):
            visible = self.open_chips or over or index == seat
            chips[name] = self.chips[index] if visible else None
        return PlayerView(
            viewer=player,
            players=list(self.players),
            open_chips=self.open_chips,
            current_card=self.current_card,
            chips_on_card=self.chips_on_card,
            cards_left=len(self.pile),
            active_player=self.active_player,
            cards={name: sorted(self.cards[i]) for i, name in enumerate(self.players)},
            chips=chips,
            move_number=len(self.history),
            is_over=over,
            removed=list(self.removed) if over else None,
            history=list(self.history),
        )

    # -- actions --------------------------------------------------------------------

    def apply(self, player: str, action: Action | str) -> Move:
        """Validate and apply one action; an illegal one raises and changes nothing."""
        if action is not TAKE and action is not PASS:
            try:
                action = Action(action)
            except ValueError:
                raise UnknownAction(
                    f"{action!r} is not an action: take or pass.",
                    player=plain_id(player),
                    action=action if isinstance(action, str) else repr(action),
                ) from None
        seat = self.seat_of(player)
        card = self.current_card
        if card is None:
            raise GameOver("The game is over: every card has been taken.", player=player)
        if seat != self.active:
            raise NotYourTurn(
                f"It is {self.players[self.active]}'s turn, not {player}'s.",
                player=player,
                players=[self.players[self.active]],
            )
        move = Move(seat, action, card, self.chips_on_card)
        if action is PASS:
            if self.chips[seat] == 0:
                raise MustTake(
                    f"{player} has no chips left and must take {card}.", player=player, card=card
                )
            self.chips[seat] -= 1
            self.chips_on_card += 1
            self.active = (seat + 1) % len(self.players)
        else:
            self.chips[seat] += self.chips_on_card
            self.cards[seat].append(card)
            self.chips_on_card = 0
            self.current_card = self.pile.pop() if self.pile else None
        self.history.append(move)
        return move

    # -- serialisation --------------------------------------------------------------

    def _history_rows(self) -> list[list[Any]]:
        """The history as rows [seat, action, card, chips on it], brought up to date."""
        rows, history = self._rows, self.history
        if len(rows) > len(history):
            rows.clear()  # a history replaced by a shorter one: start again
        if len(rows) < len(history):
            # _value_ rather than .value: the property costs more than the rest of the row.
            rows.extend([s, a._value_, c, p] for s, a, c, p in history[len(rows) :])
        return rows

    def to_dict(self) -> dict[str, Any]:
        """The full state as plain JSON data (includes hidden cards: keep it server-side)."""
        return {
            "version": STATE_VERSION,
            "game": "nothanks",
            "players": list(self.players),
            "seed": self.seed,
            "open_chips": self.open_chips,
            "removed": list(self.removed),
            "pile": list(self.pile),
            "current_card": self.current_card,
            "chips_on_card": self.chips_on_card,
            "chips": list(self.chips),
            "cards": [list(c) for c in self.cards],
            "active": self.active,
            "first_player": self.first_player,
            "history": list(self._history_rows()),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NoThanksGame:
        """Rebuild a state written by ``to_dict``."""
        if data.get("game") != "nothanks" or data.get("version") != STATE_VERSION:
            raise ValueError(
                f"Not a No Thanks! state of version {STATE_VERSION}: "
                f"{data.get('game')!r} v{data.get('version')!r}"
            )
        return cls(
            players=[str(p) for p in data["players"]],
            seed=data["seed"],
            open_chips=bool(data["open_chips"]),
            removed=list(data["removed"]),
            pile=list(data["pile"]),
            current_card=data["current_card"],
            chips_on_card=data["chips_on_card"],
            chips=list(data["chips"]),
            cards=[list(c) for c in data["cards"]],
            active=data["active"],
            first_player=data["first_player"],
            history=[Move(s, Action(a), c, p) for s, a, c, p in data["history"]],
        )
