"""Strength of the hard Rage player against three baseline players.

Plays seeded 4-player games without variants (the hard player's seat rotates) and prints
its win share (ties split) with a 95% confidence interval, plus how often each kind of
player hit its bid.

    uv run python benchmarks/strength/rage_strength.py --games 500 --workers 2
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from league import in_workers, interval

from bot.ai import Level, RageMemory, choose_rage_action
from bot.ai.rage import baseline_action
from bot.engines.rage import RageOptions, RageState

PLAYERS = 4


def play_game(
    index: int, seed: int, level: str, opponent: str
) -> tuple[float, float, float, int, int]:
    """One game: hero's win share, its and the others' bid hit rates, its and best other's total."""
    hero = index % PLAYERS
    state = RageState.new(list(range(PLAYERS)), seed=seed, options=RageOptions())
    rng = random.Random(seed)
    # The computer seat keeps its memory of the round's finished tricks, as the cogs should.
    memories = {seat: RageMemory() for seat in range(PLAYERS)}
    while not state.is_over:
        for player in state.acting_players():
            view = state.view(player)
            if player == hero:
                action = choose_rage_action(view, level, rng, memories[player])
            elif opponent == "baseline":
                action = baseline_action(view)
            else:
                action = choose_rage_action(view, opponent, rng, memories[player])
            state.apply(player, action)
            break  # the state moved on: ask again who may act
    totals = state.totals
    best = max(totals)
    winners = [seat for seat, total in enumerate(totals) if total == best]
    share = 1.0 / len(winners) if hero in winners else 0.0
    hits = [0] * PLAYERS
    for record in state.rounds:
        for seat in range(PLAYERS):
            hits[seat] += record.bids[seat] == record.tricks[seat]
    rounds = len(state.rounds)
    others = [hits[s] / rounds for s in range(PLAYERS) if s != hero]
    best_other = max(t for s, t in enumerate(totals) if s != hero)
    return share, hits[hero] / rounds, statistics.fmean(others), totals[hero], best_other


def _work(job: tuple[int, int, str, str]) -> tuple[float, float, float, int, int]:
    """Pool entry point."""
    return play_game(*job)


def run(games: int, workers: int, seed: int, level: str, opponent: str) -> None:
    """Play the games and print the figures."""
    jobs = [(i, seed + i, level, opponent) for i in range(games)]
    start = time.perf_counter()
    results = list(in_workers(_work, jobs, workers, chunksize=4))
    elapsed = time.perf_counter() - start
    mean, half = interval([r[0] for r in results])
    print(
        f"{games} games, {level} vs three {opponent} players, {workers} worker(s), {elapsed:.0f} s"
    )
    print(f"win share (ties split): {mean:6.1%} ± {half:.1%}  (parity {1 / PLAYERS:.0%})")
    print(
        f"bid hit rate: {level} {statistics.fmean(r[1] for r in results):.1%}, "
        f"{opponent} {statistics.fmean(r[2] for r in results):.1%}"
    )
    print(
        f"mean total: {level} {statistics.fmean(r[3] for r in results):.1f}, "
        f"best {opponent} {statistics.fmean(r[4] for r in results):.1f}"
    )


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--level", default="hard", choices=[level.value for level in Level])
    parser.add_argument(
        "--opponent", default="baseline", choices=["baseline", *(level.value for level in Level)]
    )
    args = parser.parse_args()
    run(args.games, args.workers, args.seed, args.level, args.opponent)


if __name__ == "__main__":
    main()
