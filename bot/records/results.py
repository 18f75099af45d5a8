"""A finished or abandoned game as the records keep it: players, ranks, scores, figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class PlayerResult:
    """One seat's result: who sat there, their rank and score, and game-specific figures."""

    seat: int
    player: str  # who the records count: a Discord id, or "computer:<level>"
    name: str
    level: str | None  # a computer's level; None for people
    score: int
    rank: int
    stats: dict[str, Any] = field(default_factory=dict)
    seat_player: str = ""  # the id the game knew this seat by (a replay needs it)

    @property
    def won(self) -> bool:
        """A shared first place counts as a win."""
        return self.rank == 1


@dataclass(frozen=True, slots=True)
class GameResult:
    """What the records keep of one game when it ends (finished or abandoned)."""

    table_id: int
    guild_id: int | None
    channel_id: int
    game: str
    status: str  # "finished", "abandoned" or "stalled" (ended by the host, unrated)
    seed: str
    options: dict[str, Any]
    started_at: float
    ended_at: float
    moves: int
    players: tuple[PlayerResult, ...]

    @property
    def rated(self) -> bool:
        """Only finished games change ratings; abandoned ones count for nothing."""
        return self.status == "finished"
