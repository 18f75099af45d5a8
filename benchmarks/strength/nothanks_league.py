"""The No Thanks! sparring league: round robins and head-to-head matches of computer players.

Entrants (by name):

- ``ismcts-N``: the independent information-set MCTS (nothanks_ismcts.py, beside this
  script) with N iterations a decision (25, 100, 400, 1600 in the standard league);
- ``easy``, ``normal``, ``hard``, ``expert``: the bot's levels as they are now (hard and
  expert capped by their work budgets and deal caps, never by the clock, so results do
  not depend on the machine's load); ``hard@N`` is the hard search with N deals a
  decision (no work budget); ``hard-work@W`` the hard search with a work budget of W
  cards turned up, and ``hard-value@W`` the same with playouts cut short by the value
  function;
- ``legacy-easy``, ``legacy-normal``, ``legacy-hard``: the levels as they were before
  issue 16 (frozen/nothanks_legacy.py; legacy hard keeps its 250 ms budget, which it
  rarely uses);
- ``baseline``: take when the run-aware cost minus the chips on the card is at most 0;
- ``hard+clock``, ``expert+clock``: the level at its real time budget (250 ms, 1 s), so the
  clock may stop a search on a busy machine; the report says how often it did.

Every game is seeded; seats are rotated (league.schedule / league.head_to_head), and each
seat has its own seeded random source, so a run is reproducible whatever the load.

    uv run python benchmarks/strength/nothanks_league.py league --players 3 --games 600 --workers 2
    uv run python benchmarks/strength/nothanks_league.py league --entrants before --games 420
    uv run python benchmarks/strength/nothanks_league.py h2h hard ismcts-400 --games 300 --workers 2
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from frozen.nothanks_legacy import baseline_action
from frozen.nothanks_legacy import choose_nothanks_action as legacy_action
from league import (
    GameResult,
    League,
    head_to_head,
    in_workers,
    percentile,
    run_league,
    schedule,
    wilson,
)
from nothanks_ismcts import ismcts_action

from bot.ai import Level, choose_nothanks_action
from bot.ai.nothanks import HARD_ITERATIONS, search_decision, search_view, table_from_view
from bot.ai.nothanks_search import search
from bot.engines.nothanks import PASS, TAKE, Action, NoThanksGame, PlayerView

ISMCTS = ["ismcts-25", "ismcts-100", "ismcts-400", "ismcts-1600"]
LINEUPS = {
    "before": [*ISMCTS, "legacy-easy", "legacy-normal", "legacy-hard"],
    "after": [*ISMCTS, "easy", "normal", "hard", "legacy-hard"],
    # Expert thinks four times as long as hard: a league with it takes hours on a busy machine.
    "expert": [*ISMCTS, "easy", "normal", "hard", "expert", "legacy-hard"],
    "levels": ["easy", "normal", "hard", "expert", "legacy-easy", "legacy-normal", "legacy-hard"],
}
# Far above any decision's time: the iteration caps, not the clock, end the searches.
UNHURRIED = 600.0


# The share of its planned deals each clocked search reached, in this process.
CLOCKED: list[float] = []


def decide(entrant: str, view: PlayerView, rng: random.Random) -> Action:
    """One entrant's action for its own view."""
    if entrant.endswith("+clock"):
        level = Level(entrant.removesuffix("+clock"))
        if view.chips[view.viewer or ""] == 0:
            return TAKE
        result = search_view(view, level, rng)
        CLOCKED.append(result.iterations / result.planned)
        return TAKE if result.take else PASS
    if entrant.startswith("ismcts-"):
        return ismcts_action(view, int(entrant.removeprefix("ismcts-")), rng)
    if entrant.startswith("hard@"):
        iterations = int(entrant.removeprefix("hard@"))
        return choose_nothanks_action(
            view, Level.HARD, rng, time_budget=UNHURRIED, iterations=iterations
        )
    if entrant.startswith(("hard-work@", "hard-value@")):
        # The hard search at another work budget, playing to the end or with the value
        # function (no clock, the level's deal cap).
        if view.chips[view.viewer or ""] == 0:
            return TAKE
        variant, work = entrant.split("@")
        decision = search_decision(view, table_from_view(view))
        result = search(
            decision,
            rng,
            iterations=HARD_ITERATIONS,
            deadline=math.inf,
            work=int(work),
            value=variant == "hard-value",
        )
        return TAKE if result.take else PASS
    if entrant.startswith("legacy-"):
        return legacy_action(view, entrant.removeprefix("legacy-"), rng)
    if entrant == "baseline":
        return baseline_action(view)
    return choose_nothanks_action(view, Level(entrant), rng, time_budget=UNHURRIED)


def play_timed(
    lineup: Sequence[str], seed: int
) -> tuple[GameResult, list[list[float]], list[list[float]]]:
    """One seeded game: (ranks, totals) by seat, each seat's decision times (s), wall clock
    and CPU time of this process (the CPU time is what a quiet core would take)."""
    names = [f"p{seat}" for seat in range(len(lineup))]
    game = NoThanksGame.new(names, seed)
    rngs = [random.Random(seed * 16 + seat) for seat in range(len(lineup))]
    times: list[list[float]] = [[] for _ in lineup]
    cpu_times: list[list[float]] = [[] for _ in lineup]
    while not game.is_over:
        player = game.active_player
        assert player is not None
        seat = game.seat_of(player)
        start, cpu_start = time.perf_counter(), time.process_time()
        action = decide(lineup[seat], game.view(player), rngs[seat])
        times[seat].append(time.perf_counter() - start)
        cpu_times[seat].append(time.process_time() - cpu_start)
        game.apply(player, action)
    ranks = [0] * len(lineup)
    scores = [0.0] * len(lineup)
    for standing in game.standings():
        ranks[standing.seat] = standing.rank
        scores[standing.seat] = float(standing.total)
    return (ranks, scores), times, cpu_times


def play_game(lineup: Sequence[str], seed: int) -> GameResult:
    """One seeded game: (ranks, totals) by seat (the league's game function)."""
    return play_timed(lineup, seed)[0]


# One head-to-head game: the hero's seat, the result, the hero's wall and CPU times, and
# the share of its planned deals that each of its clocked searches reached.
H2HGame = tuple[int, GameResult, list[float], list[float], list[float]]


def _h2h_job(job: tuple[list[str], int, str]) -> H2HGame:
    """Worker entry point: the hero's seat, the result and the hero's decision times."""
    lineup, seed, hero = job
    seat = lineup.index(hero)
    CLOCKED.clear()
    result, times, cpu_times = play_timed(lineup, seed)
    return seat, result, times[seat], cpu_times[seat], list(CLOCKED)


def _hero_share(seat: int, ranks: Sequence[int]) -> float:
    """The seat's share of the win: 1, 1/k for a k-way tie for first, or 0."""
    winners = [s for s, rank in enumerate(ranks) if rank == min(ranks)]
    return 1 / len(winners) if seat in winners else 0.0


def run_h2h(hero: str, opponent: str, players: int, games: int, seed: int, workers: int) -> None:
    """One hero seat against copies of the opponent: win share, margin and decision times."""
    jobs = [
        (lineup, deal, hero) for lineup, deal in head_to_head(hero, opponent, players, games, seed)
    ]
    started = time.perf_counter()
    results: list[H2HGame] = []
    title = f"{hero} vs {players - 1} x {opponent} ({players} players), seed {seed}"

    def collect(done: Iterator[H2HGame]) -> None:
        for result in done:
            results.append(result)
            if len(results) % 30 == 0 and len(results) < len(jobs):
                # The whole report as it stands, so a long run can be read before it ends.
                elapsed = time.perf_counter() - started
                print(f"... after {len(results)} games, {elapsed:.0f} s:", flush=True)
                print(h2h_report(results, hero, players), flush=True)

    collect(in_workers(_h2h_job, jobs, workers))
    elapsed = time.perf_counter() - started
    print(f"{title}, {workers} worker(s), {elapsed:.0f} s")
    print(h2h_report(results, hero, players))


def h2h_report(results: Sequence[H2HGame], hero: str, players: int) -> str:
    """Win share with its interval, the margin to the best opponent and decision times."""
    wins = 0.0
    margins: list[float] = []
    times: list[float] = []
    cpu_times: list[float] = []
    clocked: list[float] = []
    for seat, (ranks, scores), hero_times, hero_cpu, hero_clocked in results:
        clocked.extend(hero_clocked)
        wins += _hero_share(seat, ranks)
        best_other = min(score for s, score in enumerate(scores) if s != seat)
        margins.append(best_other - scores[seat])
        times.extend(hero_times)
        cpu_times.extend(hero_cpu)
    low, high = wilson(wins, len(results))
    lines = []
    if clocked:
        cut = sum(share < 1 for share in clocked)
        lines.append(
            f"the clock stopped {cut} of {len(clocked)} searches ({cut / len(clocked):.1%});"
            f" mean share of the planned deals reached {statistics.fmean(clocked):.1%},"
            f" lowest {min(clocked):.1%}"
        )
    return "\n".join(
        [
            f"{len(results)} games: win share {wins / len(results):.1%}"
            f" ({wins:g} wins; 95% interval {low:.1%}–{high:.1%}), parity {1 / players:.1%}",
            f"mean points ahead of the best opponent: {statistics.fmean(margins):+.1f}"
            " (negative: behind; lower totals win)",
            f"{hero} decision time: p50 {percentile(times, 50) * 1e3:.1f} ms,"
            f" p95 {percentile(times, 95) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms"
            f" over {len(times)} decisions (wall clock)",
            f"{hero} decision CPU time: p50 {percentile(cpu_times, 50) * 1e3:.1f} ms,"
            f" p95 {percentile(cpu_times, 95) * 1e3:.1f} ms, max {max(cpu_times) * 1e3:.1f} ms"
            " (what one quiet core would take)",
            *lines,
        ]
    )


def run_round_robin(entrants: list[str], players: int, games: int, seed: int, workers: int) -> None:
    """A seeded round robin; prints the league table."""
    started = time.perf_counter()

    def progress(league: League) -> None:
        if league.played % 50 == 0:
            print(f"... {league.played} games, {time.perf_counter() - started:.0f} s", flush=True)

    league = run_league(
        schedule(entrants, players, games, seed),
        play_game,
        table_size=players,
        workers=workers,
        progress=progress,
    )
    title = (
        f"No Thanks! league, {players} players, seed {seed}, {workers} worker(s),"
        f" {time.perf_counter() - started:.0f} s (mean score: lower is better)"
    )
    print(league.report(title))


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="mode", required=True)
    league = sub.add_parser("league", help="a round robin")
    league.add_argument(
        "--entrants",
        default="after",
        help=f"a line-up name ({', '.join(LINEUPS)}) or entrant names joined by commas",
    )
    league.add_argument("--players", type=int, default=3)
    league.add_argument("--games", type=int, default=600)
    h2h = sub.add_parser("h2h", help="one hero seat against copies of one opponent")
    h2h.add_argument("hero")
    h2h.add_argument("opponent")
    h2h.add_argument("--players", type=int, default=3)
    h2h.add_argument("--games", type=int, default=300)
    for command in (league, h2h):
        command.add_argument("--seed", type=int, default=1)
        command.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.mode == "league":
        entrants = LINEUPS.get(args.entrants) or args.entrants.split(",")
        run_round_robin(entrants, args.players, args.games, args.seed, args.workers)
    else:
        run_h2h(args.hero, args.opponent, args.players, args.games, args.seed, args.workers)


if __name__ == "__main__":
    main()
