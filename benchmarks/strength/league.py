"""A sparring league for computer players: seeded round robins with rotated seats.

Game-neutral: a game's league script supplies the entrants (by name) and a function that
plays one seeded game with a given line-up and returns each seat's rank (1 = best, ties
share a rank) and score. This module schedules the line-ups, rotates seats, runs games in
worker processes, and reports each entrant's win share with a 95% interval, its mean score
and an OpenSkill rating over every game it played. The strength scripts
(``<game>_strength.py``) share its worker pool and its intervals too.

    from league import run_league, schedule  # run as `python benchmarks/strength/<game>_league.py`
    table = run_league(schedule(names, 3, 600, seed=1), play_game, table_size=3, workers=2)
    print(table.report())
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import random
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from openskill.models import PlackettLuce

# (ranks, scores) of one game, by seat.
GameResult = tuple[list[int], list[float]]
# Plays one game: (line-up of entrant names by seat, seed) -> result by seat.
PlayGame = Callable[[Sequence[str], int], GameResult]
Job = TypeVar("Job")
Done = TypeVar("Done")


def wilson(successes: float, trials: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (sound near 0% and 100%)."""
    if trials == 0:
        return 0.0, 1.0
    z = 1.96
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    spread = math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    half = z * spread / (1 + z * z / trials)
    return centre - half, centre + half


def interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal-approximation confidence interval."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, float("nan")
    return mean, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def in_workers(
    work: Callable[[Job], Done], jobs: Iterable[Job], workers: int, chunksize: int = 1
) -> Iterator[Done]:
    """``map(work, jobs)``, in that many spawned worker processes when more than one; the
    results come in the jobs' order. ``work`` must be a module-level function."""
    if workers <= 1:
        yield from map(work, jobs)
        return
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        yield from pool.imap(work, jobs, chunksize=chunksize)


def schedule(
    entrants: Sequence[str], table_size: int, games: int, seed: int
) -> Iterator[tuple[list[str], int]]:
    """Line-ups and seeds: every combination of entrants (with repeats when there are fewer
    entrants than seats), each seated in every rotation, cycled until `games` are played.

    Each deal (seed) is played once per rotation of the same line-up, so a lucky deal is
    shared by every seat rather than handed to one entrant.
    """
    if len(entrants) >= table_size:
        lineups = [list(c) for c in itertools.combinations(entrants, table_size)]
    else:
        lineups = [list(c) for c in itertools.combinations_with_replacement(entrants, table_size)]
        lineups = [lineup for lineup in lineups if len(set(lineup)) > 1] or lineups
    rng = random.Random(seed)
    played = 0
    while True:
        for lineup in lineups:
            deal = rng.randrange(2**31)
            for shift in range(table_size):
                if played >= games:
                    return
                yield lineup[shift:] + lineup[:shift], deal
                played += 1


def head_to_head(
    hero: str, opponent: str, table_size: int, games: int, seed: int
) -> Iterator[tuple[list[str], int]]:
    """One `hero` seat against `table_size - 1` copies of `opponent`, the hero's seat rotated."""
    rng = random.Random(seed)
    played = 0
    while True:
        deal = rng.randrange(2**31)
        for seat in range(table_size):
            if played >= games:
                return
            lineup = [opponent] * table_size
            lineup[seat] = hero
            yield lineup, deal
            played += 1


@dataclass
class Standing:
    """One entrant's record over a league."""

    name: str
    games: int = 0
    wins: float = 0.0  # a shared first place counts as a fraction
    scores: list[float] = field(default_factory=list)
    mu: float = 25.0
    sigma: float = 25.0 / 3

    @property
    def share(self) -> float:
        """Win share: games won, ties split, over games played."""
        return self.wins / self.games if self.games else 0.0

    @property
    def rating(self) -> float:
        """The conservative OpenSkill rating (mu - 3 sigma)."""
        return self.mu - 3 * self.sigma


@dataclass
class League:
    """Results accumulated game by game."""

    table_size: int
    standings: dict[str, Standing] = field(default_factory=dict)
    played: int = 0

    def add(self, lineup: Sequence[str], result: GameResult) -> None:
        """Record one game. Copies of one entrant at a table are rated as separate teams."""
        ranks, scores = result
        winners = [seat for seat, rank in enumerate(ranks) if rank == min(ranks)]
        model = PlackettLuce()
        teams = []
        for seat, name in enumerate(lineup):
            standing = self.standings.setdefault(name, Standing(name))
            standing.games += 1
            standing.scores.append(scores[seat])
            if seat in winners:
                standing.wins += 1 / len(winners)
            teams.append([model.rating(mu=standing.mu, sigma=standing.sigma)])
        rated = model.rate(teams, ranks=list(ranks))
        # A name seated twice gets the mean of its seats' updates.
        updates: dict[str, list[tuple[float, float]]] = {}
        for name, (player,) in zip(lineup, rated, strict=True):
            updates.setdefault(name, []).append((player.mu, player.sigma))
        for name, values in updates.items():
            standing = self.standings[name]
            standing.mu = statistics.fmean(v[0] for v in values)
            standing.sigma = statistics.fmean(v[1] for v in values)
        self.played += 1

    def report(self, title: str = "") -> str:
        """A league table, best rating first, with win shares and 95% intervals."""
        parity = 1 / self.table_size
        lines = []
        if title:
            lines.append(title)
        lines.append(f"{self.played} games, {self.table_size} seats, parity {parity:.1%}")
        lines.append(
            f"{'entrant':<24} {'games':>6} {'win share':>10} {'95% interval':>17}"
            f" {'mean score':>11} {'rating':>7}"
        )
        ordered = sorted(self.standings.values(), key=lambda s: s.rating, reverse=True)
        for s in ordered:
            low, high = wilson(s.wins, s.games)
            lines.append(
                f"{s.name:<24} {s.games:>6} {s.share:>10.1%} {low:>8.1%}–{high:<8.1%}"
                f" {statistics.fmean(s.scores) if s.scores else 0:>11.1f} {s.rating:>7.2f}"
            )
        return "\n".join(lines)


def _play(job: tuple[PlayGame, list[str], int]) -> tuple[list[str], GameResult]:
    """Worker entry point: play one game."""
    play_game, lineup, seed = job
    return lineup, play_game(lineup, seed)


def run_league(
    games: Iterator[tuple[list[str], int]] | Sequence[tuple[list[str], int]],
    play_game: PlayGame,
    *,
    table_size: int,
    workers: int = 1,
    progress: Callable[[League], None] | None = None,
) -> League:
    """Play scheduled games (see `schedule`, `head_to_head`), in worker processes if asked.

    `play_game` must be a module-level function so worker processes can import it. Results
    are recorded in schedule order, so ratings do not depend on worker timing.
    """
    league = League(table_size)
    jobs = ((play_game, lineup, seed) for lineup, seed in games)
    for lineup, result in in_workers(_play, jobs, workers):
        league.add(lineup, result)
        if progress:
            progress(league)
    return league


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) by nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[index]
