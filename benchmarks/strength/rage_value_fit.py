"""Fit Rage hard's value table (data/rage_value.json) from self-play of the heuristic.

Plays seeded 4-player games in which every seat is the straightforward heuristic
(rage_heuristic.py), half of them with plus/minus one. After each round but the last it
records, for every seat, how many rounds are left, the seat's margins over the three
others (total minus their totals, largest rival first) and whether the seat went on to
win (ties split). Then it fits, for each number of rounds left, a logistic model of the
chance to win from those margins, by Newton's method in plain Python, and writes the
coefficients, read by bot/ai/rage_value.py (the estimates for game reviews, and the
league's hard-win entrant, which scores imagined rounds by that chance).

    uv run python benchmarks/strength/rage_value_fit.py --games 4000 --workers 2
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from league import in_workers
from rage_heuristic import heuristic_action

from bot.ai.rage_value import FEATURES, VALUE_FILE, features
from bot.engines.rage import RageOptions, RageState

PLAYERS = 4
ROUNDS = 10

Sample = tuple[int, list[float], float]  # rounds left, features, win share


def play_game(seed: int) -> list[Sample]:
    """One all-heuristic game: a sample per seat after every round but the last."""
    options = RageOptions(plus_minus_one=seed % 2 == 1)
    state = RageState.new(list(range(PLAYERS)), seed=seed, options=options)
    while not state.is_over:
        seat = state.acting_players()[0]
        state.apply(seat, heuristic_action(state.view(seat)))
    totals = [0] * PLAYERS
    after: list[list[int]] = []
    for record in state.rounds:
        for seat, score in enumerate(record.scores):
            totals[seat] += score.points
        after.append(list(totals))
    best = max(totals)
    winners = [s for s in range(PLAYERS) if totals[s] == best]
    samples: list[Sample] = []
    for played, snapshot in enumerate(after[:-1], start=1):
        left = ROUNDS - played
        for seat in range(PLAYERS):
            share = 1.0 / len(winners) if seat in winners else 0.0
            samples.append((left, features(snapshot, seat), share))
    return samples


def fit(rows: list[tuple[list[float], float]], iterations: int = 25) -> list[float]:
    """Logistic regression (intercept first) by Newton's method, lightly regularised."""
    size = len(rows[0][0]) + 1
    weights = [0.0] * size
    for _ in range(iterations):
        grad = [0.0] * size
        hess = [[0.0] * size for _ in range(size)]
        for x, y in rows:
            xs = [1.0, *x]
            z = sum(w * v for w, v in zip(weights, xs, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            g = p - y
            h = p * (1.0 - p)
            for i in range(size):
                grad[i] += g * xs[i]
                for j in range(size):
                    hess[i][j] += h * xs[i] * xs[j]
        for i in range(size):
            hess[i][i] += 1e-3
        step = solve(hess, grad)
        weights = [w - s for w, s in zip(weights, step, strict=True)]
        if max(abs(s) for s in step) < 1e-9:
            break
    return weights


def solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a small dense system)."""
    n = len(vector)
    a = [[*row, vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col:
                factor = a[r][col] / a[col][col]
                for c in range(col, n + 1):
                    a[r][c] -= factor * a[col][c]
    return [a[i][n] / a[i][i] for i in range(n)]


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=VALUE_FILE)
    args = parser.parse_args()
    start = time.process_time()
    seeds = range(args.seed, args.seed + args.games)
    by_left: dict[int, list[tuple[list[float], float]]] = {}
    for samples in in_workers(play_game, seeds, args.workers, chunksize=20):
        for left, x, share in samples:
            by_left.setdefault(left, []).append((x, share))
    table = {str(left): fit(rows) for left, rows in sorted(by_left.items())}
    for left, weights in table.items():
        print(f"{left} rounds left: " + ", ".join(f"{w:+.4f}" for w in weights))
    data = {
        "about": (
            "Rage hard's chance to win a 4-player game from the margins over the others, "
            "by rounds left: logistic coefficients (intercept, then one per feature). "
            "Fitted by benchmarks/strength/rage_value_fit.py from "
            f"{args.games} all-heuristic self-play games, seeds {args.seed} on."
        ),
        "features": list(FEATURES),
        "rounds_left": table,
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({time.process_time() - start:.0f} s CPU in this process)")


if __name__ == "__main__":
    main()
