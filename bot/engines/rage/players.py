"""Player ids: opaque JSON-safe ids (str or int) in seat order."""

from __future__ import annotations

from collections.abc import Sequence

from bot.engines.errors import InvalidSetup

PlayerId = int | str

MIN_PLAYERS = 3
MAX_PLAYERS = 8


def validate_players(players: Sequence[PlayerId]) -> tuple[PlayerId, ...]:
    """Seat order as a tuple; InvalidSetup unless 3..8 distinct str/int ids."""
    if isinstance(players, str | bytes) or not isinstance(players, Sequence):
        raise InvalidSetup(f"players must be a list of ids in seat order, not {players!r}")
    seats = tuple(players)
    if not MIN_PLAYERS <= len(seats) <= MAX_PLAYERS:
        raise InvalidSetup(f"Rage needs {MIN_PLAYERS} to {MAX_PLAYERS} players, not {len(seats)}")
    for player in seats:
        # bool is an int subclass but True == 1 would make two ids collide.
        if isinstance(player, bool) or not isinstance(player, int | str):
            raise InvalidSetup(f"player ids must be strings or integers, not {player!r}")
    if len(set(seats)) != len(seats):
        raise InvalidSetup("player ids must be distinct")
    return seats
