"""The difficulty levels shared by every computer player."""

from __future__ import annotations

from enum import StrEnum


class Level(StrEnum):
    """How strong a computer player is."""

    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"
    EXPERT = "expert"
