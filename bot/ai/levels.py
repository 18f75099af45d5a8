"""The difficulty levels shared by every computer player: the one place they are listed."""

from __future__ import annotations

from enum import StrEnum


class Level(StrEnum):
    """How strong a computer player is."""

    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"
    EXPERT = "expert"


# Every level, weakest first (No Thanks! offers them all).
ALL_LEVELS: tuple[str, ...] = tuple(level.value for level in Level)
# The levels every game offers, weakest first (Rage stops at hard).
STANDARD_LEVELS: tuple[str, ...] = (Level.EASY.value, Level.NORMAL.value, Level.HARD.value)
# Levels whose search is slow enough to think in a worker process (see bot.table.thinking);
# the others take well under a millisecond, less than a round trip to a worker.
SEARCHING_LEVELS: frozenset[str] = frozenset({Level.HARD.value, Level.EXPERT.value})
