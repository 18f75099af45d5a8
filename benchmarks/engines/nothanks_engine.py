"""Plays random legal 5-player No Thanks! games through the public engine API.

Prints complete games per second and microseconds per action on one core.
Target (issue 2): at least 5,000 complete 5-player games per second.
"""

from __future__ import annotations

import argparse
import random
import time

from bot.engines.nothanks import PASS, TAKE, NoThanksGame


def play_random_game(seed: int, players: list[str], rng: random.Random) -> int:
    """Play one game with uniformly random legal actions; return the number of actions."""
    game = NoThanksGame.new(players, seed)
    apply = game.apply
    legal = game.legal_actions
    actions = 0
    while not game.is_over:
        options = legal()
        action = TAKE if len(options) == 1 or rng.random() < 0.5 else PASS
        apply(game.players[game.active], action)
        actions += 1
    return actions


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--players", type=int, default=5)
    args = parser.parse_args()
    players = [f"p{i}" for i in range(args.players)]
    rng = random.Random(1)
    for seed in range(200):  # warm-up
        play_random_game(seed, players, rng)
    start = time.perf_counter()
    actions = 0
    for seed in range(args.games):
        actions += play_random_game(seed, players, rng)
    elapsed = time.perf_counter() - start
    print(f"{args.players}-player games: {args.games} in {elapsed:.2f} s")
    print(f"games per second: {args.games / elapsed:,.0f}  (target >= 5,000)")
    print(f"actions per game: {actions / args.games:.1f}")
    print(f"microseconds per action: {elapsed / actions * 1e6:.2f}")


if __name__ == "__main__":
    main()
