"""Where a round of Rage stands: bidding, playing, or finished."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where the round stands."""

    BIDDING = "bidding"
    PLAYING = "playing"
    FINISHED = "finished"
