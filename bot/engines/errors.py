"""The error family shared by every rules engine."""

from __future__ import annotations


class IllegalMove(Exception):
    """An action the rules do not allow in the current state; the state is unchanged."""

    code: str = "illegal_move"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.details = details


class GameOver(IllegalMove):
    """An action after the game has ended."""

    code = "game_over"


class NotYourTurn(IllegalMove):
    """An action by a seated player who is not the active player."""

    code = "not_your_turn"


class UnknownPlayer(IllegalMove):
    """An action by someone who has no seat at the table."""

    code = "unknown_player"


class InvalidSetup(ValueError):
    """A game cannot be created with these players or options."""
