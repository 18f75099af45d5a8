"""Who wins a Rage trick, and the public record of a finished trick."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from .cards import COLOUR_OF, JOKER, JOKER_VALUE, MINUS_FIVE, PLUS_FIVE, Card, Colour
from .players import PlayerId


class WinReason(StrEnum):
    """Why a trick went to its winner."""

    TRUMP = "trump"  # highest card of the trump colour in force at the end of the trick
    LED_COLOUR = "led_colour"  # no trump in the trick: highest card of the led colour
    JOKER = "joker"  # a Joker won, as trump or as led colour (see TrickResult.trump/led)
    ACTION_ONLY = "action_only"  # only action cards, no Joker: the first one wins


def effective_colour(card: Card, named: Colour | None) -> Colour | None:
    """The colour a played card counts as: printed colour, a Joker's named colour, or None."""
    return named if card == JOKER else COLOUR_OF[card]


def resolve_trick(
    cards: Sequence[Card],
    named: Sequence[Colour | None],
    trump: Colour | None,
    led: Colour | None,
) -> tuple[int, WinReason]:
    """Index of the winning play and the reason, given the trump in force as the trick ends."""
    for target in (trump, led):
        if target is None:
            continue
        best = -1
        best_value = -1
        for i, card in enumerate(cards):
            if card == JOKER:
                if named[i] is not target:
                    continue
                value = JOKER_VALUE
            elif COLOUR_OF[card] is target:
                value = card & 15
            else:
                continue
            # ">=" lets the second Joker of a colour beat the first; colour cards never tie.
            if value >= best_value:
                best, best_value = i, value
        if best >= 0:
            if cards[best] == JOKER:
                return best, WinReason.JOKER
            return best, WinReason.TRUMP if target is trump else WinReason.LED_COLOUR
    # Any colour card or Joker would have set the led colour, so only action cards remain.
    return 0, WinReason.ACTION_ONLY


def trick_bonus(cards: Sequence[Card]) -> int:
    """Points the "+5" and "-5" cards in a trick give its winner."""
    return 5 * (cards.count(PLUS_FIVE) - cards.count(MINUS_FIVE))


@dataclass(frozen=True, slots=True)
class TrickPlay:
    """One card in a trick: who played it, and the colour named if it is a Joker."""

    player: PlayerId
    card: Card
    colour: Colour | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "player": self.player,
            "card": self.card.code,
            "colour": None if self.colour is None else self.colour.code,
        }


@dataclass(frozen=True, slots=True)
class TrickResult:
    """A finished trick: its plays in order, the winner and why it won."""

    round: int
    number: int
    plays: tuple[TrickPlay, ...]
    winner: PlayerId
    winning_index: int
    reason: WinReason
    trump: Colour | None
    led: Colour | None
    bonus: int

    @property
    def leader(self) -> PlayerId:
        """The player who led the trick."""
        return self.plays[0].player

    @property
    def winning_play(self) -> TrickPlay:
        """The play that took the trick."""
        return self.plays[self.winning_index]

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "round": self.round,
            "number": self.number,
            "plays": [play.to_dict() for play in self.plays],
            "winner": self.winner,
            "winning_index": self.winning_index,
            "reason": self.reason.value,
            "trump": None if self.trump is None else self.trump.code,
            "led": None if self.led is None else self.led.code,
            "bonus": self.bonus,
        }


class TrickRecord(NamedTuple):
    """A finished trick by seat numbers; cheap to build on the hot path, see to_result."""

    round: int
    number: int
    leader: int
    cards: tuple[Card, ...]
    named: tuple[Colour | None, ...]
    winner: int
    reason: WinReason
    trump: Colour | None
    led: Colour | None
    bonus: int

    def to_result(self, players: Sequence[PlayerId]) -> TrickResult:
        """The public TrickResult with player ids instead of seats."""
        n = len(players)
        plays = tuple(
            TrickPlay(players[(self.leader + i) % n], card, self.named[i])
            for i, card in enumerate(self.cards)
        )
        return TrickResult(
            round=self.round,
            number=self.number,
            plays=plays,
            winner=players[self.winner],
            winning_index=(self.winner - self.leader) % n,
            reason=self.reason,
            trump=self.trump,
            led=self.led,
            bonus=self.bonus,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (seats, card codes, colour names)."""
        return {
            "round": self.round,
            "number": self.number,
            "leader": self.leader,
            "cards": [card.code for card in self.cards],
            "named": [None if c is None else c.code for c in self.named],
            "winner": self.winner,
            "reason": self.reason.value,
            "trump": None if self.trump is None else self.trump.code,
            "led": None if self.led is None else self.led.code,
            "bonus": self.bonus,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrickRecord:
        """Rebuild from to_dict."""
        return cls(
            round=data["round"],
            number=data["number"],
            leader=data["leader"],
            cards=tuple(Card.parse(code) for code in data["cards"]),
            named=tuple(None if c is None else Colour.parse(c) for c in data["named"]),
            winner=data["winner"],
            reason=WinReason(data["reason"]),
            trump=None if data["trump"] is None else Colour.parse(data["trump"]),
            led=None if data["led"] is None else Colour.parse(data["led"]),
            bonus=data["bonus"],
        )
