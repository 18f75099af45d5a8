"""Skill ratings: OpenSkill's Plackett-Luce model over a finished game's ranks (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
START_MU = MODEL.mu
START_SIGMA = MODEL.sigma
# A player appears on a leaderboard after this many rated games.
MIN_RATED_GAMES = 5
# What people see: μ − 3σ (OpenSkill's ordinal, 0 for a newcomer and below 0 after a first
# loss) on a scale that starts everyone at 1,000 and moves in whole points.
DISPLAY_BASE = 1000
DISPLAY_SCALE = 20


def displayed(conservative: float) -> int:
    """A rating (μ − 3σ) as people read it: 1,000 for a newcomer, whole points."""
    return round(DISPLAY_BASE + DISPLAY_SCALE * conservative)


def displayed_change(change: float) -> int:
    """A change of μ − 3σ on the displayed scale (0 only for a change too small to see)."""
    return round(DISPLAY_SCALE * change)


@dataclass(frozen=True, slots=True)
class Rating:
    """One player's skill estimate: mean and uncertainty."""

    mu: float = START_MU
    sigma: float = START_SIGMA

    @property
    def conservative(self) -> float:
        """What leaderboards show and rank by: μ − 3σ."""
        return self.mu - 3 * self.sigma


def rate(ratings: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """New ratings after one game, each player a team of one; ties share a rank."""
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    rated = MODEL.rate(teams, ranks=list(ranks))
    return [Rating(team[0].mu, team[0].sigma) for team in rated]
