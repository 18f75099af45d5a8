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
