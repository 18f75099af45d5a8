"""How long one table picture takes to paint, per kind, with 8 players and long names.

Plays seeded games with random legal moves (No Thanks! at its maximum of 7 seats, Rage at
8) with long Cyrillic and emoji names, and paints every state of each picture kind the
table message would show: the No Thanks! table after each move and the final board, the
Rage trick after each card and the score sheet after each round and at the end. Each
state is painted from its scene (scene building included, no picture cache), one at a
time on one core, after a short warm-up (fonts loaded once, as in a running bot). Prints
p50/p95/max per kind, in CPU time of the painting thread (what one core spends, true on a
shared machine too) and in wall time (pessimistic when other work shares the cores), and
the largest PNG. Target: p95 at most 30 ms of one core; every PNG at most 200 KB.

Run: ``uv run python benchmarks/table/images.py [--games 4 --seed 1]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.engines.nothanks import NoThanksGame
from bot.engines.rage import Phase, RageOptions, RageState
from bot.render.images import nothanks, rage
from bot.table.spec import TableFacts

TARGET_MS = 30.0
MAX_BYTES = 200 * 1024
NAMES = [
    "Дмитрий 🎲 Müller",
    "Anna-Lena Schmidt-Vogel",
    "🤖 Computer 2 (hard)",
    "Zoë 🎉🎉",
    "Giuseppe Verdi 🎻🎶",
    "Ольга Константиновна Белозерская",
    "Bob the Magnificent",
    "Мария-Антуанетта 👑",
]
LOCALES = ("en", "de", "ru", "it")


def facts(game: str, players: list[str]) -> TableFacts:
    """Facts of a table whose seats carry the long names."""
    return TableFacts(
        id=1,
        game=game,
        status="running",
        host_id=int(players[0]),
        seats=tuple(int(p) for p in players),
        options={},
        names=dict(zip(players, NAMES, strict=False)),
        computers={},
        min_players=3,
        max_players=8,
    )


Job = Callable[[], bytes]


def nothanks_jobs(game_no: int, seed: int) -> dict[str, list[Job]]:
    """A No Thanks! game's states as picture jobs: the table after each move, the final."""
    players = [str(100 + i) for i in range(7)]
    table = facts("nothanks", players)
    game = NoThanksGame.new(players, seed, open_chips=game_no % 2 == 0)
    rng = random.Random(seed)
    locale = LOCALES[game_no % len(LOCALES)]
    jobs: dict[str, list[Job]] = {"nothanks table": [], "nothanks final": []}
    while not game.is_over:
        view = game.view(None)
        jobs["nothanks table"].append(
            lambda v=view: nothanks.table_png(nothanks.table_scene(table, v, locale))
        )
        player = game.active_player
        assert player is not None
        legal = game.legal_actions(player)
        game.apply(player, legal[1] if len(legal) > 1 and rng.random() < 0.75 else legal[0])
    final = game.view(None)
    jobs["nothanks final"].append(
        lambda: nothanks.final_png(nothanks.final_scene(table, final, locale))
    )
    return jobs


def rage_jobs(game_no: int, seed: int) -> dict[str, list[Job]]:
    """A Rage game's states as picture jobs: the trick after each card, the sheets."""
    players = [str(100 + i) for i in range(8)]
    table = facts("rage", players)
    state = RageState.new(players, seed=seed, options=RageOptions(sweep=game_no % 2 == 1))
    rng = random.Random(seed)
    locale = LOCALES[game_no % len(LOCALES)]
    jobs: dict[str, list[Job]] = {"rage trick": [], "rage sheet": []}
    while not state.is_over:
        view = state.view(None)
        if view.phase is Phase.PLAYING and view.trick:
            jobs["rage trick"].append(
                lambda v=view: rage.trick_png(rage.trick_scene(table, v, locale))
            )
        elif view.phase is Phase.BIDDING and view.round > 1 and not any(view.has_bid):
            jobs["rage sheet"].append(
                lambda v=view: rage.sheet_png(rage.sheet_scene(table, v, locale))
            )
        player = state.acting_players()[0]
        state.apply(player, rng.choice(state.legal_actions(player)))
    end = state.view(None)
    jobs["rage sheet"].append(lambda: rage.sheet_png(rage.sheet_scene(table, end, locale)))
    return jobs


def percentile(values: list[float], share: float) -> float:
    """The value below which ``share`` of the values lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(games: int, seed: int) -> bool:
    """Paint every job once, timed; print the figures; True if within the targets."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    kinds: dict[str, list[Job]] = {}
    for game_no in range(games):
        for part in (nothanks_jobs(game_no, seed + game_no), rage_jobs(game_no, seed + game_no)):
            for kind, jobs in part.items():
                kinds.setdefault(kind, []).extend(jobs)
    for jobs in kinds.values():  # warm-up: fonts and glyph masks, as in a running bot
        for job in jobs[:3]:
            job()
    ok = True
    print(
        f"{'':<23}{'CPU ms (one core)':^27}{'wall ms':^27}\n"
        f"{'picture':<16}{'count':>7}" + f"{'p50':>9}{'p95':>9}{'max':>9}" * 2 + f"{'max KB':>9}"
    )
    for kind, jobs in kinds.items():
        cpu: list[float] = []
        wall: list[float] = []
        sizes: list[int] = []
        for job in jobs:
            start, start_cpu = time.perf_counter(), time.thread_time()
            png = job()
            cpu.append((time.thread_time() - start_cpu) * 1000)
            wall.append((time.perf_counter() - start) * 1000)
            sizes.append(len(png))
        p95 = percentile(cpu, 0.95)
        ok = ok and p95 <= TARGET_MS and max(sizes) <= MAX_BYTES
        figures = "".join(
            f"{statistics.median(times):>9.1f}{percentile(times, 0.95):>9.1f}{max(times):>9.1f}"
            for times in (cpu, wall)
        )
        print(f"{kind:<16}{len(jobs):>7}{figures}{max(sizes) / 1024:>9.1f}")
    verdict = "met" if ok else "NOT met"
    print(f"target: CPU p95 <= {TARGET_MS:.0f} ms, every PNG <= {MAX_BYTES // 1024} KB: {verdict}")
    return ok


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games per game kind")
    parser.add_argument("--seed", type=int, default=1)
    args: Any = parser.parse_args(argv)
    return 0 if run(args.games, args.seed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
