"""Fit the No Thanks! search's value function from self-play of its own playout policy.

The search (bot/ai/nothanks_search.py) plays each imagined game only a few cards deep and
then estimates how many more points each seat will score by the end. This script makes
that estimate: it plays seeded games with the playout policy, and after every take it
notes, for each seat, the features of ``value_features`` and how much the seat's score
still changed until the end. A least-squares fit for each player count and each number of
cards still to come gives the weights, written as plain numbers to
data/nothanks_value.json (the bot needs no numpy and downloads nothing).

    uv run python benchmarks/strength/nothanks_value_fit.py --games 8000

If the features change, delete the old file first: the search refuses weights fitted for
other features, and this script imports the search.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from bot.ai.nothanks_search import (
    VALUE_FEATURES,
    VALUE_PATH,
    _points,
    policy_takes,
    value_features,
)
from bot.engines.nothanks import (
    HIGHEST_CARD,
    LOWEST_CARD,
    MAX_PLAYERS,
    MIN_PLAYERS,
    PILE_SIZE,
    starting_chips,
)

ALL_CARDS = list(range(LOWEST_CARD, HIGHEST_CARD + 1))
# A little ridge keeps rarely seen buckets (few cards left with many chips) well posed.
RIDGE = 1e-3

# One sample: the features of a seat right after a take, and its score change to the end.
Sample = tuple[tuple[float, ...], float]


def play(n: int, rng: random.Random) -> list[list[Sample]]:
    """One game of the playout policy; samples by the number of cards still to come."""
    deck = ALL_CARDS[:]
    rng.shuffle(deck)
    pile = deck[:PILE_SIZE]
    masks = [0] * n
    chips = [starting_chips(n)] * n
    by_left: list[list[tuple[int, list[tuple[float, ...]], list[int]]]] = [
        [] for _ in range(PILE_SIZE)
    ]
    unseen = 0
    for card in deck:
        unseen |= 1 << card
    card = pile.pop()
    unseen &= ~(1 << card)
    on, active = 0, rng.randrange(n)
    while True:
        mine = chips[active]
        if policy_takes(masks[active], mine, card, on, len(pile), 0, rng.random()):
            masks[active] |= 1 << card
            chips[active] = mine + on
            on = 0
            left = len(pile)
            if left:
                scores = [_points(m) - c for m, c in zip(masks, chips, strict=True)]
                features = [value_features(masks[s], chips[s], unseen) for s in range(n)]
                by_left[left].append((left, features, scores))
            if not pile:
                break
            card = pile.pop()
            unseen &= ~(1 << card)
        else:
            chips[active] = mine - 1
            on += 1
            active = (active + 1) % n
    final = [_points(m) - c for m, c in zip(masks, chips, strict=True)]
    samples: list[list[Sample]] = [[] for _ in range(PILE_SIZE)]
    for left, snaps in enumerate(by_left):
        for _, features, scores in snaps:
            for seat in range(n):
                samples[left].append((features[seat], float(final[seat] - scores[seat])))
    return samples


def least_squares(samples: list[Sample]) -> tuple[list[float], float]:
    """Weights minimising the squared error (normal equations, a little ridge) and the RMSE."""
    k = len(VALUE_FEATURES)
    a = [[0.0] * k for _ in range(k)]
    b = [0.0] * k
    for x, y in samples:
        for i in range(k):
            b[i] += x[i] * y
            row = a[i]
            for j in range(k):
                row[j] += x[i] * x[j]
    for i in range(k):
        a[i][i] += RIDGE * len(samples)
    # Gaussian elimination with partial pivoting.
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(k):
            if r != col and m[col][col]:
                f = m[r][col] / m[col][col]
                for c in range(col, k + 1):
                    m[r][c] -= f * m[col][c]
    w = [m[i][k] / m[i][i] if m[i][i] else 0.0 for i in range(k)]
    err = sum((sum(wi * xi for wi, xi in zip(w, x, strict=True)) - y) ** 2 for x, y in samples)
    return w, (err / max(1, len(samples))) ** 0.5


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=20000, help="games per player count")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.process_time()
    weights: dict[str, list[list[float]]] = {}
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        rng = random.Random(args.seed * 100 + n)
        buckets: list[list[Sample]] = [[] for _ in range(PILE_SIZE)]
        for _ in range(args.games):
            for left, samples in enumerate(play(n, rng)):
                buckets[left].extend(samples)
        rows = [[0.0] * len(VALUE_FEATURES)]  # nothing left to come: no change
        for left in range(1, PILE_SIZE):
            w, rmse = least_squares(buckets[left])
            rows.append([round(v, 4) for v in w])
            if left in (1, 6, 12, 18, 23):
                print(f"{n} players, {left:2} to come: rmse {rmse:5.2f}, weights {rows[-1]}")
        weights[str(n)] = rows
    data = {
        "about": "No Thanks! search value: a seat's score change to the end, by player count"
        " and cards still to come; fitted by benchmarks/strength/nothanks_value_fit.py",
        "seed": args.seed,
        "games_per_player_count": args.games,
        "features": list(VALUE_FEATURES),
        "weights": weights,
    }
    VALUE_PATH.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {VALUE_PATH} ({time.process_time() - started:.0f} s CPU)")


if __name__ == "__main__":
    main()
