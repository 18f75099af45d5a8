"""What one game review costs: CPU seconds per review and per judged decision.

Plays ``--games`` games of each game (No Thanks! with 3 to 5 seats, Rage with 3 to 6,
every seat at the normal level), then reviews seat 0 of each with the bot's own budget,
as `/nothanks review` and `/rage review` do: the deal again, every choice's playouts
from the player's view, and the strongest level at the costliest-looking decisions.
Everything runs in this process (a thinking pool of no workers), so the CPU time counted
(`time.process_time`, every thread) is what a worker would spend. Printed: p50/p95/max
CPU seconds per review, CPU milliseconds per judged decision, how many decisions and
expert searches a review makes, and how often the expert, asked about a decision the
playouts found costly, would indeed have chosen otherwise. Target: p95 under 10 s of
CPU per review (the interaction's token lives 15 minutes; one review at a time holds one
worker).

Run: ``uv run python benchmarks/table/review.py [--games 10 --seed 1]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.table.replay import StoredGame, StoredSeat
from bot.table.review import review_game
from bot.table.spec import GameSpec
from bot.table.thinking import ThinkingPool

TARGET_SECONDS = 10.0
SEATS = {"nothanks": (3, 5), "rage": (3, 6)}


class CountingPool(ThinkingPool):
    """An in-process pool that counts the searches of each kind."""

    def __init__(self, spec: GameSpec) -> None:
        super().__init__(0)
        self.spec = spec
        self.calls: dict[str, int] = {}
        self.overruled = 0  # expert searches that chose otherwise than the player

    async def search(
        self, choose: Any, view: Any, level: str, seed: str, memory: Any
    ) -> tuple[Any, Any]:
        """Count, then search as the pool does."""
        self.calls[choose.__name__] = self.calls.get(choose.__name__, 0) + 1
        result = await super().search(choose, view, level, seed, memory)
        if choose.__name__.endswith("expert"):
            self.overruled += result[0] != self.spec.encode_action(memory.made)
        return result


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which ``fraction`` of the sorted values fall (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def played(spec: GameSpec, rng: random.Random) -> StoredGame:
    """A game of normal-level players, stored as the records keep it."""
    low, high = SEATS[spec.name]
    players = [str(seat + 1) for seat in range(rng.randint(low, high))]
    seed = rng.randrange(2**31)
    engine = spec.new_engine(players, seed, {})
    memories = {player: spec.new_memory() for player in players}
    moves = []
    while not engine.is_over:
        player = engine.acting_players()[0]
        view = engine.view(player)
        action = spec.choose(view, "normal", random.Random(len(moves)), memories[player])
        moves.append((player, spec.encode_action(action)))
        engine.apply(player, action)
    seats = tuple(
        StoredSeat(seat, player, player, player, None, 0, 1) for seat, player in enumerate(players)
    )
    return StoredGame(1, 1, spec.name, "finished", str(seed), {}, 0.0, 1.0, seats, tuple(moves))


async def measure(spec: GameSpec, games: int, rng: random.Random) -> None:
    """Review seat 0 of ``games`` games and print the CPU they took."""
    per_review: list[float] = []
    per_decision: list[float] = []
    decisions: list[int] = []
    experts: list[int] = []
    overruled: list[int] = []
    for _ in range(games):
        game = played(spec, rng)
        pool = CountingPool(spec)
        start = time.process_time()
        review = await review_game(pool, spec, game, game.seat_players[0])
        spent = time.process_time() - start
        per_review.append(spent)
        decisions.append(review.decisions)
        per_decision.append(1000 * spent / max(review.decisions, 1))
        experts.append(sum(n for name, n in pool.calls.items() if name.endswith("expert")))
        overruled.append(pool.overruled)
    p95 = percentile(per_review, 0.95)
    print(
        f"{spec.name}: {games} reviews; CPU per review p50 {statistics.median(per_review):.2f} s,"
        f" p95 {p95:.2f} s, max {max(per_review):.2f} s;"
        f" per decision p50 {statistics.median(per_decision):.0f} ms;"
        f" decisions per review {statistics.mean(decisions):.0f};"
        f" expert searches per review {statistics.mean(experts):.1f},"
        f" of which {sum(overruled)}/{sum(experts)} chose otherwise than the player"
        f" — target p95 ≤ {TARGET_SECONDS:.0f} s: {'met' if p95 <= TARGET_SECONDS else 'MISSED'}"
    )


def main() -> None:
    """Parse the options and measure both games."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="reviews per game")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games played")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for spec in (NOTHANKS, RAGE):
        asyncio.run(measure(spec, args.games, rng))


if __name__ == "__main__":
    main()
