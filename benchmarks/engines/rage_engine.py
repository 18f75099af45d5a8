"""Throughput of the Rage engine: random legal games played to the end via the public API."""

from __future__ import annotations

import argparse
import random
import time

from bot.engines.rage import RageOptions, RageState

# Every combination the rules allow (hidden+secret and plus/minus one with either are out).
ALLOWED_OPTIONS: tuple[RageOptions, ...] = tuple(
    RageOptions(plus_minus_one=pm, hidden_bids=hidden, secret_bids=secret, sweep=sweep)
    for pm in (False, True)
    for hidden in (False, True)
    for secret in (False, True)
    for sweep in (False, True)
    if not (hidden and secret) and not (pm and (hidden or secret))
)


def play_random_game(n_players: int, options: RageOptions, seed: int, rng: random.Random) -> int:
    """Play one game with uniformly random legal actions; return the number of actions."""
    state = RageState.new(list(range(n_players)), seed=seed, options=options)
    actions = 0
    pick = rng.random  # cheaper than rng.choice, so the figures reflect the engine
    while True:
        actors = state.acting_players()
        if not actors:
            return actions
        player = actors[0] if len(actors) == 1 else actors[int(pick() * len(actors))]
        legal = state.legal_actions(player)
        state.apply(player, legal[int(pick() * len(legal))])
        actions += 1


def measure(seconds: float, n_players: int | None, seed: int) -> tuple[int, int, float]:
    """Play games for about `seconds`; return (games, actions, elapsed seconds)."""
    rng = random.Random(seed)
    games = actions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        n = n_players if n_players is not None else rng.randint(3, 8)
        options = ALLOWED_OPTIONS[0] if n_players is not None else rng.choice(ALLOWED_OPTIONS)
        actions += play_random_game(n, options, rng.getrandbits(32), rng)
        games += 1
    return games, actions, time.perf_counter() - start


def report(label: str, games: int, actions: int, elapsed: float) -> None:
    """Print one result line."""
    print(
        f"{label:<34} {games / elapsed:8.1f} games/s  "
        f"{elapsed / actions * 1e6:6.2f} µs/action  ({games} games, {actions} actions)"
    )


def main() -> None:
    """Run the benchmark from the command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    report("random players (3-8) and variants", *measure(args.seconds, None, args.seed))
    report("5 players, ten rounds, no variants", *measure(args.seconds, 5, args.seed))


if __name__ == "__main__":
    main()
