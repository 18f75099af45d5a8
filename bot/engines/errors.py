"""The error family shared by every rules engine."""

from __future__ import annotations

from typing import TypeAlias

# What an error's details may hold: plain JSON, so a table can log, store or format them
# without knowing an engine's enums and card types.
Detail: TypeAlias = str | int | list[str] | list[int] | list[str | int]


class IllegalMove(Exception):
    """An action the rules do not allow in the current state; the state is unchanged."""

    code: str = "illegal_move"

    def __init__(self, message: str, **details: Detail) -> None:
        """Keep the message for people and the plain-JSON details for code."""
        super().__init__(message)
        self.details: dict[str, Detail] = details


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


def plain_id(player: object) -> str | int:
    """A player id as given, or its repr when it is not a str or int id (bool is not one)."""
    if isinstance(player, str) or (isinstance(player, int) and not isinstance(player, bool)):
        return player
    return repr(player)
