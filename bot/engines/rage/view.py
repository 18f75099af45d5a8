"""One player's observation of a Rage table: everything public plus their own hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .actions import Action
from .cards import Card, Colour
from .options import RageOptions
from .phase import Phase
from .players import PlayerId
from .scoring import Outcome, ScoreSheet
from .trick import TrickPlay, TrickResult


@dataclass(frozen=True, slots=True)
class RageView:
    """What `viewer` may see; per-player tuples are in seat order (see `players`).

    Other hands and the stack order are never included; bids hidden by the hidden/secret
    variants show as None (`has_bid` still tells who has bid).
    """

    viewer: PlayerId | None
    players: tuple[PlayerId, ...]
    options: RageOptions
    phase: Phase
    round: int
    cards_per_hand: int
    dealer: PlayerId
    move_number: int
    players_to_act: tuple[PlayerId, ...]
    hand: tuple[Card, ...]
    legal_actions: tuple[Action, ...]
    hand_sizes: tuple[int, ...]
    trump: Colour | None
    no_trump_this_trick: bool
    turned_up: tuple[Card, ...]
    stack_size: int
    bids: tuple[int | None, ...]
    has_bid: tuple[bool, ...]
    tricks_won: tuple[int, ...]
    bonus: tuple[int, ...]
    leader: PlayerId
    led_colour: Colour | None
    trick_number: int
    trick: tuple[TrickPlay, ...]
    last_trick: TrickResult | None
    totals: tuple[int, ...]
    score_sheet: ScoreSheet
    outcome: Outcome | None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form, e.g. for a web or image renderer."""
        return {
            "viewer": self.viewer,
            "players": list(self.players),
            "options": self.options.to_dict(),
            "phase": self.phase.value,
            "round": self.round,
            "cards_per_hand": self.cards_per_hand,
            "dealer": self.dealer,
            "move_number": self.move_number,
            "players_to_act": list(self.players_to_act),
            "hand": [card.code for card in self.hand],
            "legal_actions": [action.to_dict() for action in self.legal_actions],
            "hand_sizes": list(self.hand_sizes),
            "trump": None if self.trump is None else self.trump.code,
            "no_trump_this_trick": self.no_trump_this_trick,
            "turned_up": [card.code for card in self.turned_up],
            "stack_size": self.stack_size,
            "bids": list(self.bids),
            "has_bid": list(self.has_bid),
            "tricks_won": list(self.tricks_won),
            "bonus": list(self.bonus),
            "leader": self.leader,
            "led_colour": None if self.led_colour is None else self.led_colour.code,
            "trick_number": self.trick_number,
            "trick": [play.to_dict() for play in self.trick],
            "last_trick": None if self.last_trick is None else self.last_trick.to_dict(),
            "totals": list(self.totals),
            "score_sheet": self.score_sheet.to_dict(),
            "outcome": None if self.outcome is None else self.outcome.to_dict(),
        }
