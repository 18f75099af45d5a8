"""Rage (Amigo): a pure rules engine for 3 to 8 players, ten rounds of trick bidding.

Create a game with `RageState.new(players, seed=..., options=RageOptions(...))`, ask
`acting_players()` and `legal_actions(player)`, and `apply(player, action)`.
"""

from bot.engines.errors import GameOver, IllegalMove, InvalidSetup, NotYourTurn, UnknownPlayer

from .actions import Action, Bid, Play, action_from_dict
from .cards import (
    ACTION_CARDS,
    ALL_CARDS,
    CHANGE_TRUMP,
    COLOURS,
    DECK,
    JOKER,
    MINUS_FIVE,
    NO_TRUMP,
    PLUS_FIVE,
    Card,
    Colour,
    card,
    sort_hand,
)
from .dealing import ROUNDS, cards_in_round
from .errors import (
    AlreadyBid,
    CardNotInHand,
    IllegalBid,
    InvalidAction,
    JokerColourError,
    MustFollowSuit,
    WrongPhase,
)
from .options import RageOptions
from .phase import Phase
from .players import PlayerId
from .scoring import (
    Outcome,
    PlayerRoundScore,
    RoundRecord,
    ScoreSheet,
    SheetEntry,
    SheetRow,
    Standing,
    score_player,
)
from .state import RageState
from .trick import TrickPlay, TrickResult, WinReason, resolve_trick
from .view import RageView

__all__ = [
    "ACTION_CARDS",
    "ALL_CARDS",
    "CHANGE_TRUMP",
    "COLOURS",
    "DECK",
    "JOKER",
    "MINUS_FIVE",
    "NO_TRUMP",
    "PLUS_FIVE",
    "ROUNDS",
    "Action",
    "AlreadyBid",
    "Bid",
    "Card",
    "CardNotInHand",
    "Colour",
    "GameOver",
    "IllegalBid",
    "IllegalMove",
    "InvalidAction",
    "InvalidSetup",
    "JokerColourError",
    "MustFollowSuit",
    "NotYourTurn",
    "Outcome",
    "Phase",
    "Play",
    "PlayerId",
    "PlayerRoundScore",
    "RageOptions",
    "RageState",
    "RageView",
    "RoundRecord",
    "ScoreSheet",
    "SheetEntry",
    "SheetRow",
    "Standing",
    "TrickPlay",
    "TrickResult",
    "UnknownPlayer",
    "WinReason",
    "WrongPhase",
    "action_from_dict",
    "card",
    "cards_in_round",
    "resolve_trick",
    "score_player",
    "sort_hand",
]
