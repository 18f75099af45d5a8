"""Rage-specific illegal moves, all subclasses of the shared error family."""

from __future__ import annotations

from bot.engines.errors import (
    GameOver,
    IllegalMove,
    InvalidSetup,
    NotYourTurn,
    UnknownPlayer,
)

__all__ = [
    "AlreadyBid",
    "CardNotInHand",
    "GameOver",
    "IllegalBid",
    "IllegalMove",
    "InvalidAction",
    "InvalidSetup",
    "JokerColourError",
    "MustFollowSuit",
    "NotYourTurn",
    "UnknownPlayer",
    "WrongPhase",
]


class WrongPhase(IllegalMove):
    """A bid while cards are being played, or a card play while bids are open."""

    code = "wrong_phase"


class InvalidAction(IllegalMove):
    """Something that is neither a Bid nor a Play."""

    code = "invalid_action"


class IllegalBid(IllegalMove):
    """A bid outside 0..hand size, or one the plus/minus-one variant forbids."""

    code = "illegal_bid"


class AlreadyBid(NotYourTurn):
    """A second bid from the same player in one round (hidden or secret bidding)."""

    code = "already_bid"


class CardNotInHand(IllegalMove):
    """A play of a card the player does not hold."""

    code = "card_not_in_hand"


class MustFollowSuit(IllegalMove):
    """A card other than the led colour from a player who holds the led colour."""

    code = "must_follow_suit"


class JokerColourError(IllegalMove):
    """A Joker played without a colour, or a colour named for a card that is not a Joker."""

    code = "joker_colour"
