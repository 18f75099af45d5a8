"""The Rage sparring league: 4-player round robins of computer players, seats rotated.

Entrants: ``heuristic`` (the straightforward heuristic of issue 16, rage_heuristic.py),
``easy``/``normal``/``hard`` (today's bot/ai/rage.py) and ``legacy-easy``/
``legacy-normal``/``legacy-hard`` (the levels before issue 16, frozen in frozen/rage_legacy.py).
Every game is seeded; a deal is played once per rotation of its line-up, so results do
not depend on seat luck or on how many workers play them.

    uv run python benchmarks/strength/rage_league.py --games 1400 --workers 2
    uv run python benchmarks/strength/rage_league.py --entrants heuristic legacy-easy \\
        legacy-normal legacy-hard --games 1000
    uv run python benchmarks/strength/rage_league.py --hero hard --opponent heuristic \\
        --games 1000 --plus-minus-one both

Besides the league table (win share with 95% interval, mean score, OpenSkill rating)
it prints each entrant's bid accuracy (rounds that ended exactly on the bid) and its
decision time p50/p95/max (measured under whatever else the machine is doing).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from frozen import rage_legacy
from league import League, head_to_head, in_workers, percentile, schedule, wilson
from rage_heuristic import heuristic_action

from bot.ai import rage, rage_search
from bot.ai.rage_value import WinModel, win_model
from bot.engines.rage import Bid, Phase, Play, RageOptions, RageState, RageView

PLAYERS = 4
LEVELS = ("easy", "normal", "hard")
# Hard's variants: without its clock, scoring rounds by the value table's chance to win
# instead of points (no clock), and (as hard@N, N imagined plays a decision, no clock)
# with another budget.
VARIANTS = ("hard-uncapped", "hard-win")
LEAGUE = ("heuristic", *LEVELS, *(f"legacy-{level}" for level in LEVELS))
ENTRANTS = (*LEAGUE, *VARIANTS)

Decide = Callable[[RageView, random.Random], Bid | Play]


def make_player(name: str) -> Decide:
    """A fresh player for one seat of one game (with its own memory of the round)."""
    if name == "heuristic":
        return lambda view, rng: heuristic_action(view)
    if name.startswith("legacy-"):
        level = name.removeprefix("legacy-")
        old_memory = rage_legacy.RageMemory()
        return lambda view, rng: rage_legacy.choose_rage_action(view, level, rng, old_memory)
    if name in LEVELS:
        memory = rage.RageMemory()
        return lambda view, rng: rage.choose_rage_action(view, name, rng, memory)
    if name == "hard-uncapped":
        memory = rage.RageMemory()
        return lambda view, rng: rage.choose_rage_action(view, "hard", rng, memory, None)
    if name == "hard-win" or name.startswith("hard@"):
        budget = int(name.removeprefix("hard@")) if "@" in name else rage_search.PLAY_BUDGET
        model = win_model() if name == "hard-win" else None
        return _searcher(budget, model)
    raise ValueError(f"unknown entrant {name!r}; choose from {', '.join(ENTRANTS)}")


def _searcher(budget: int, model: WinModel | None) -> Decide:
    """Hard's search with another budget or objective, and no clock."""
    memory = rage.RageMemory()

    def decide(view: RageView, rng: random.Random) -> Bid | Play:
        """One decision."""
        memory.observe(view)
        if len(view.legal_actions) == 1:
            return view.legal_actions[0]
        search = rage_search.search_bid if view.phase is Phase.BIDDING else rage_search.search_play
        return search(view, memory, rng, rage.RIVAL_WEIGHT, budget=budget, model=model)

    return decide


@dataclass
class SeatStats:
    """One seat's figures from one game."""

    hits: int = 0
    rounds: int = 0
    times: list[float] = field(default_factory=list)  # seconds per decision (wall clock)
    cpu: list[float] = field(default_factory=list)  # CPU seconds per decision (this thread)


GameOut = tuple[tuple[list[int], list[float]], list[SeatStats]]


def play_game(lineup: Sequence[str], seed: int, plus_minus_one: bool) -> GameOut:
    """One seeded game: ranks and totals by seat, and each seat's bid hits and timings."""
    options = RageOptions(plus_minus_one=plus_minus_one)
    state = RageState.new(list(range(PLAYERS)), seed=seed, options=options)
    players = [make_player(name) for name in lineup]
    rngs = [random.Random(f"{seed}:{seat}") for seat in range(PLAYERS)]
    stats = [SeatStats() for _ in range(PLAYERS)]
    clock, cpu = time.perf_counter, time.thread_time
    while not state.is_over:
        seat = state.acting_players()[0]
        view = state.view(seat)
        start, start_cpu = clock(), cpu()
        action = players[seat](view, rngs[seat])
        stats[seat].cpu.append(cpu() - start_cpu)
        stats[seat].times.append(clock() - start)
        state.apply(seat, action)
    for record in state.rounds:
        for seat in range(PLAYERS):
            stats[seat].hits += record.bids[seat] == record.tricks[seat]
            stats[seat].rounds += 1
    totals = state.totals
    ranks = [1 + sum(1 for other in totals if other > mine) for mine in totals]
    return (ranks, [float(t) for t in totals]), stats


def _job(job: tuple[list[str], int, bool]) -> tuple[list[str], GameOut]:
    """Worker entry point."""
    lineup, seed, plus_minus_one = job
    return lineup, play_game(lineup, seed, plus_minus_one)


@dataclass
class Figures:
    """Bid hits and decision times per entrant over a league."""

    hits: dict[str, int] = field(default_factory=dict)
    rounds: dict[str, int] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)

    def add(self, lineup: Sequence[str], stats: Sequence[SeatStats]) -> None:
        """Fold in one game's seats."""
        for name, seat in zip(lineup, stats, strict=True):
            self.hits[name] = self.hits.get(name, 0) + seat.hits
            self.rounds[name] = self.rounds.get(name, 0) + seat.rounds
            self.times.setdefault(name, []).extend(seat.times)
            self.cpu.setdefault(name, []).extend(seat.cpu)

    def report(self) -> str:
        """Bid accuracy with its 95% interval, and decision-time percentiles, per entrant.

        Wall-clock times depend on what else the machine runs; CPU times (this thread's)
        are what a quiet core would take. "over clock" is the share of decisions that took
        longer than hard's time budget (wall clock): only there can its clock have cut a
        search short, so where it is 0 hard played exactly as without a clock.
        """
        lines = [
            f"{'entrant':<24} {'exact bids':>10} {'95% interval':>17}"
            f" {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
            f" {'CPU p50':>8} {'CPU p95':>8} {'CPU max':>8} {'over clock':>10}"
        ]
        for name in sorted(self.hits):
            hits, rounds = self.hits[name], self.rounds[name]
            low, high = wilson(hits, rounds)
            times, cpu = self.times[name], self.cpu[name]
            # Decisions that took longer than hard's clock: there the clock cut the search.
            over = sum(1 for t in times if t >= rage.HARD_TIME_BUDGET)
            lines.append(
                f"{name:<24} {hits / rounds:>10.1%} {low:>8.1%}–{high:<8.1%}"
                f" {percentile(times, 50) * 1e3:>8.2f} {percentile(times, 95) * 1e3:>8.2f}"
                f" {max(times) * 1e3:>8.2f}"
                f" {percentile(cpu, 50) * 1e3:>8.2f} {percentile(cpu, 95) * 1e3:>8.2f}"
                f" {max(cpu) * 1e3:>8.2f} {over / len(times):>10.2%}"
            )
        return "\n".join(lines)


def run(
    games: Iterator[tuple[list[str], int]], plus_minus_one: bool, workers: int
) -> tuple[League, Figures]:
    """Play the scheduled games; results are folded in schedule order (deterministic)."""
    league = League(PLAYERS)
    figures = Figures()
    jobs = ((lineup, seed, plus_minus_one) for lineup, seed in games)
    for lineup, (result, stats) in in_workers(_job, jobs, workers, chunksize=2):
        league.add(lineup, result)
        figures.add(lineup, stats)
    return league, figures


def entrant(name: str) -> str:
    """An entrant's name, checked: one of ENTRANTS or hard@N."""
    if name in ENTRANTS or (name.startswith("hard@") and name[5:].isdigit()):
        return name
    raise argparse.ArgumentTypeError(f"choose from {', '.join(ENTRANTS)} or hard@N")


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entrants", nargs="+", default=list(LEAGUE), type=entrant)
    parser.add_argument("--games", type=int, default=1400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plus-minus-one", choices=["off", "on", "both"], default="off")
    parser.add_argument("--hero", type=entrant, help="head-to-head: one hero seat ...")
    parser.add_argument("--opponent", type=entrant, default="heuristic")
    args = parser.parse_args()
    variants = {"off": [False], "on": [True], "both": [False, True]}[args.plus_minus_one]
    for plus_minus_one in variants:
        if args.hero:
            games = head_to_head(args.hero, args.opponent, PLAYERS, args.games, args.seed)
            title = f"{args.hero} against three {args.opponent}"
        else:
            games = schedule(args.entrants, PLAYERS, args.games, args.seed)
            title = "round robin of " + ", ".join(args.entrants)
        title += f", plus/minus one {'on' if plus_minus_one else 'off'}, seed {args.seed}"
        start = time.perf_counter()
        league, figures = run(games, plus_minus_one, args.workers)
        elapsed = time.perf_counter() - start
        print(league.report(title))
        print(figures.report())
        print(f"({elapsed:.0f} s with {args.workers} worker(s))\n", flush=True)


if __name__ == "__main__":
    main()
