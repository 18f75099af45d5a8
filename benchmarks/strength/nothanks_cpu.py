"""CPU time of the No Thanks! search per decision, and where it goes.

Collects the decisions of seeded 3-player games (normal players; every decision where the
seat still has chips), then times the hard or expert search on each with
``time.thread_time`` (CPU time of this thread, close to what one quiet core would take;
on a virtual machine it also counts time the host took away, so compare runs side by
side) with the work budget and the deal cap deciding. ``--work``, ``--iterations`` and
``--value`` try other budgets and the value function; ``--profile`` adds a cProfile
table of the first 100 decisions.

    uv run python benchmarks/strength/nothanks_cpu.py --level hard --games 4
    uv run python benchmarks/strength/nothanks_cpu.py --level hard --work 12500
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import random
import time

from league import percentile

from bot.ai import Level, choose_nothanks_action
from bot.ai.nothanks import (
    EXPERT_ITERATIONS,
    EXPERT_WORK,
    HARD_ITERATIONS,
    HARD_WORK,
    search_decision,
    table_from_view,
)
from bot.ai.nothanks_search import Decision, search
from bot.engines.nothanks import NoThanksGame


def decisions(games: int, seed: int) -> list[Decision]:
    """The search inputs of every decision with chips in hand, from seeded normal games."""
    out = []
    for index in range(games):
        game = NoThanksGame.new(["a", "b", "c"], seed + index)
        rng = random.Random(seed + index)
        while not game.is_over:
            player = game.active_player
            assert player is not None
            view = game.view(player)
            table = table_from_view(view)
            if table.my_chips:
                out.append(search_decision(view, table))
            game.apply(player, choose_nothanks_action(view, Level.NORMAL, rng))
    return out


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--level", default="hard", choices=["hard", "expert"])
    parser.add_argument("--iterations", type=int, help="replace the level's iteration cap")
    parser.add_argument("--work", type=int, help="replace the level's work budget")
    parser.add_argument(
        "--value", action="store_true", help="playouts cut short by the value function"
    )
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    expert = args.level == "expert"
    cap = args.iterations or (EXPERT_ITERATIONS if expert else HARD_ITERATIONS)
    work = args.work or (EXPERT_WORK if expert else HARD_WORK)
    inputs = decisions(args.games, args.seed)

    def run(index: int, decision: Decision) -> None:
        search(
            decision,
            random.Random(index),
            iterations=cap,
            deadline=math.inf,
            work=work,
            value=args.value,
        )

    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        for index, decision in enumerate(inputs[:100]):
            run(index, decision)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(10)
    times = []
    for index, decision in enumerate(inputs):
        start = time.thread_time()
        run(index, decision)
        times.append(time.thread_time() - start)
    print(
        f"{args.level}, work {work}, at most {cap} deals, {len(times)} decisions: CPU p50"
        f" {percentile(times, 50) * 1e3:.1f} ms, p95 {percentile(times, 95) * 1e3:.1f} ms,"
        f" max {max(times) * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
