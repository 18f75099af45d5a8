"""The two Rage action types: a bid and a card play (a Joker play names a colour)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import ALL_CARDS, COLOURS, JOKER, Card, Colour, to_card

MAX_BID = 10


@dataclass(frozen=True, slots=True)
class Bid:
    """Announce how many tricks the player expects to win this round."""

    tricks: int

    def __str__(self) -> str:
        """Readable form for logs."""
        return f"bid {self.tricks}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {"type": "bid", "tricks": self.tricks}


@dataclass(frozen=True, slots=True)
class Play:
    """Play a card; a Joker carries the colour its player names, other cards carry None."""

    card: Card
    colour: Colour | None = None

    def __str__(self) -> str:
        """Readable form for logs."""
        if self.colour is None:
            return f"play {self.card}"
        return f"play {self.card} as {self.colour}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "type": "play",
            "card": self.card.code,
            "colour": None if self.colour is None else self.colour.code,
        }


Action = Bid | Play

# Interned actions: legal_actions hands these out instead of building new objects per call.
BIDS: tuple[Bid, ...] = tuple(Bid(n) for n in range(MAX_BID + 1))
PLAYS: tuple[Play, ...] = tuple(Play(c) for c in ALL_CARDS)
JOKER_PLAYS: tuple[Play, ...] = tuple(Play(JOKER, colour) for colour in COLOURS)


def action_from_dict(data: dict[str, Any]) -> Action:
    """Rebuild an action from its to_dict form; ValueError if malformed."""
    kind = data.get("type")
    if kind == "bid":
        tricks = data.get("tricks")
        if isinstance(tricks, bool) or not isinstance(tricks, int):
            raise ValueError(f"a bid needs an integer number of tricks, got {tricks!r}")
        return Bid(tricks)
    if kind == "play":
        card = to_card(data["card"])
        colour = data.get("colour")
        return Play(card, None if colour is None else Colour.parse(colour))
    raise ValueError(f"unknown action type {kind!r}")
