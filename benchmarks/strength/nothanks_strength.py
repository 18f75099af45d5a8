"""Strength of the hard No Thanks! player against two baseline threshold players.

Plays seeded 3-player games (the hard player's seat rotates), prints its win share (ties
split) and win-or-tie share with 95% confidence intervals, and its decision times. Each
worker process plays its own games on one core and times its own decisions.

    uv run python benchmarks/strength/nothanks_strength.py --games 2000 --workers 2
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Iterable

from league import in_workers, interval, percentile, wilson

from bot.ai import Level, choose_nothanks_action
from bot.ai.nothanks import baseline_action
from bot.engines.nothanks import NoThanksGame

PLAYERS = 3


def play_game(
    index: int, seed: int, level: Level, budget: float, opponent: str
) -> tuple[float, bool, list[float]]:
    """One game: (hard's win share, whether it won or tied, its decision times in seconds)."""
    hard_seat = index % PLAYERS
    names = [f"p{i}" for i in range(PLAYERS)]
    game = NoThanksGame.new(names, seed)
    rng = random.Random(seed * 7 + 1)
    times: list[float] = []
    while not game.is_over:
        player = game.active_player
        assert player is not None
        view = game.view(player)
        if game.seat_of(player) == hard_seat:
            start = time.perf_counter()
            action = choose_nothanks_action(view, level, rng, time_budget=budget)
            times.append(time.perf_counter() - start)
        elif opponent == "baseline":
            action = baseline_action(view)
        else:
            action = choose_nothanks_action(view, Level(opponent), rng)
        game.apply(player, action)
    standings = game.standings()
    winners = [s.seat for s in standings if s.rank == 1]
    won = hard_seat in winners
    return (1.0 / len(winners) if won else 0.0), won, times


def _work(job: tuple[int, int, str, float, str]) -> tuple[float, bool, list[float]]:
    """Pool entry point."""
    index, seed, level, budget, opponent = job
    return play_game(index, seed, Level(level), budget, opponent)


def run(games: int, workers: int, budget: float, seed: int, level: str, opponent: str) -> None:
    """Play the games and print the figures."""
    jobs: Iterable[tuple[int, int, str, float, str]] = [
        (i, seed + i, level, budget, opponent) for i in range(games)
    ]
    start = time.perf_counter()
    results = list(in_workers(_work, jobs, workers, chunksize=8))
    elapsed = time.perf_counter() - start
    shares = [r[0] for r in results]
    wins_or_ties = [1.0 if r[1] else 0.0 for r in results]
    times = [t for r in results for t in r[2]]
    share, share_ci = interval(shares)
    wot = statistics.fmean(wins_or_ties)
    wot_low, wot_high = wilson(sum(wins_or_ties), len(wins_or_ties))
    print(f"{games} games, {level} vs two {opponent} players, {workers} worker(s), {elapsed:.0f} s")
    print(f"win share (ties split): {share:6.1%} ± {share_ci:.1%}")
    print(f"win-or-tie share:       {wot:6.1%} (95% CI {wot_low:.1%} to {wot_high:.1%})")
    print(
        f"decision time: p50 {percentile(times, 50) * 1e3:.1f} ms, "
        f"p95 {percentile(times, 95) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms, "
        f"mean {statistics.fmean(times) * 1e3:.1f} ms over {len(times)} decisions"
    )


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=float, default=0.25, help="time budget per decision (s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--level", default="hard", choices=[level.value for level in Level])
    parser.add_argument(
        "--opponent", default="baseline", choices=["baseline", *(level.value for level in Level)]
    )
    args = parser.parse_args()
    run(args.games, args.workers, args.budget, args.seed, args.level, args.opponent)


if __name__ == "__main__":
    main()
