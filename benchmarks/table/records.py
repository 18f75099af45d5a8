"""Player stats and leaderboards over a large history: 100,000 stored games, 5,000 players.

The database is built with the bot's own schema (``Storage.open`` migrates it), then
filled directly with sqlite3 in bulk: games of 3–7 seats on a few servers of unequal size,
some seats taken by computers of the three levels, a few games abandoned, players who
play often and players who rarely do; then one ratings row per (server, game, player),
as OpenSkill would have left it. The timings are of the bot's own queries
(``player_stats`` and ``leaderboard`` of ``bot.queries.players``) through the real Storage,
over
many random calls.
Target: p95 under 50 ms for stats and for leaderboards.

Run: ``uv run python benchmarks/table/records.py [--games 100000 --players 5000 --calls 2000]``
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from bot.queries.players import leaderboard, player_stats
from bot.records.ratings import START_MU, START_SIGMA
from bot.storage import open_storage

TARGET_MS = 50.0
LEVELS = ("easy", "normal", "hard")
# Servers of unequal size: the first holds half of all games and players.
SERVER_WEIGHTS = (0.5, 0.2, 0.15, 0.1, 0.05)
GAMES = ("nothanks", "rage")
T0 = 1_700_000_000.0


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def ranks(scores: Sequence[int], *, lower_wins: bool) -> list[int]:
    """Competition ranks of scores (ties share a rank)."""
    keyed = [score if lower_wins else -score for score in scores]
    return [1 + sum(other < mine for other in keyed) for mine in keyed]


def seat_figures(game: str, rng: random.Random) -> tuple[int, dict[str, int]]:
    """A plausible score and figures for one seat of a finished game."""
    if game == "nothanks":
        card_points = rng.randint(5, 110)
        chips = rng.randint(0, 30)
        stats = {
            "card_points": card_points,
            "chips": chips,
            "cards": rng.randint(2, 12),
            "longest_run": rng.randint(1, 6),
        }
        return card_points - chips, stats
    rounds = 10
    exact = rng.randint(0, rounds)
    return rng.randint(-40, 90), {"exact_bids": exact, "rounds": rounds}


def build(path: Path, games: int, players: int, seed: int) -> dict[str, Any]:
    """Fill a migrated database with the history; return what the timed calls pick from."""
    rng = random.Random(seed)
    servers = list(range(1, len(SERVER_WEIGHTS) + 1))
    # Players belong to one server each; a few are members of a second one too.
    members: dict[int, list[str]] = {server: [] for server in servers}
    for number in range(players):
        person = str(10**17 + number)
        home = rng.choices(servers, SERVER_WEIGHTS)[0]
        members[home].append(person)
        if rng.random() < 0.05:
            members[rng.choice([s for s in servers if s != home])].append(person)
    # Activity is skewed: a player's chance of sitting down falls with their position.
    activity = {
        server: list(itertools.accumulate(1 / (i + 1) ** 0.8 for i in range(len(ids))))
        for server, ids in members.items()
    }
    game_rows: list[tuple[Any, ...]] = []
    seat_rows: list[tuple[Any, ...]] = []
    played: dict[tuple[int, str, str], int] = {}
    names: dict[str, str] = {}
    for table_id in range(1, games + 1):
        server = rng.choices(servers, SERVER_WEIGHTS)[0]
        game = rng.choice(GAMES)
        finished = rng.random() < 0.95
        count = rng.randint(3, 7)
        computers = rng.choice((0, 0, 0, 1, 2)) if count > 3 else 0
        seats: list[str] = []
        while len(seats) < count - computers:
            (person,) = rng.choices(members[server], cum_weights=activity[server])
            if person not in seats:
                seats.append(person)
        seats += [f"computer:{rng.choice(LEVELS)}" for _ in range(computers)]
        rng.shuffle(seats)
        started = T0 + table_id * 60
        game_rows.append(
            (
                table_id,
                server,
                5000 + server,
                game,
                "finished" if finished else "abandoned",
                str(rng.getrandbits(63)),
                "{}",
                started,
                started + 900,
                rng.randint(30, 400),
            )
        )
        figures = [seat_figures(game, rng) if finished else (0, {}) for _ in seats]
        ranked = ranks([score for score, _ in figures], lower_wins=game == "nothanks")
        for seat, (player, (score, stats), rank) in enumerate(
            zip(seats, figures, ranked, strict=True)
        ):
            level = player.split(":", 1)[1] if player.startswith("computer:") else None
            name = names.setdefault(player, f"🤖 {level}" if level else f"player {player[-4:]}")
            rank = rank if finished else 0
            seat_rows.append(
                (
                    table_id,
                    seat,
                    server,
                    game,
                    "finished" if finished else "abandoned",
                    player,
                    player if level is None else f"-{seat + 1}",
                    name,
                    level,
                    score,
                    rank,
                    int(finished and rank == 1),
                    json.dumps(stats, separators=(",", ":")),
                    None,
                )
            )
            if finished:
                key = (server, game, player)
                played[key] = played.get(key, 0) + 1
    rating_rows = []
    for (server, game, player), count in played.items():
        # As OpenSkill leaves them: σ shrinks with games played, μ spreads out.
        sigma = max(START_SIGMA / (1 + count / 8) ** 0.5, 0.8)
        mu = rng.gauss(START_MU, 2.5)
        rating_rows.append(
            (
                server,
                game,
                player,
                names[player],
                int(player.startswith("computer:")),
                mu,
                sigma,
                count,
            )
        )
    connection = sqlite3.connect(str(path))
    try:
        with connection:
            connection.executemany(
                "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", game_rows
            )
            connection.executemany(
                "INSERT INTO game_players VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                seat_rows,
            )
            connection.executemany(
                "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rating_rows
            )
        connection.execute("ANALYZE")
    finally:
        connection.close()
    return {
        "seats": len(seat_rows),
        "ratings": len(rating_rows),
        "people": [key for key in played if not key[2].startswith("computer:")],
        # The most active people: their stats read the most rows.
        "regulars": sorted(
            (key for key in played if not key[2].startswith("computer:")),
            key=lambda key: -played[key],
        )[:50],
        "most_games": max(played.values()),
        "computers": [key for key in played if key[2].startswith("computer:")],
        "servers": servers,
    }


async def timed(calls: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    """Seconds taken by each of ``calls`` calls."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return times


def report(label: str, times: Sequence[float]) -> bool:
    """Print one line of p50 / p95 / max; True if the p95 is within the target."""
    p50, p95 = percentile(times, 0.5) * 1e3, percentile(times, 0.95) * 1e3
    ok = p95 < TARGET_MS
    print(
        f"  {label:<32} {len(times):>5} calls  p50 {p50:6.2f} ms  p95 {p95:6.2f} ms"
        f"  max {max(times) * 1e3:6.2f} ms  {'ok' if ok else 'OVER TARGET'}"
    )
    return ok


async def bench(path: Path, picks: dict[str, Any], calls: int, seed: int) -> bool:
    """Time stats and leaderboards on the built database; True if every p95 is on target."""
    rng = random.Random(seed + 1)
    storage = await open_storage(path)
    try:
        people, computers = picks["people"], picks["computers"]

        async def person() -> Any:
            server, game, player = rng.choice(people)
            return await player_stats(storage, server, game, player)

        async def regular() -> Any:
            server, game, player = rng.choice(picks["regulars"])
            return await player_stats(storage, server, game, player)

        async def computer() -> Any:
            server, game, player = rng.choice(computers)
            return await player_stats(storage, server, game, player)

        async def board(shown: bool) -> Any:
            server = rng.choices(picks["servers"], SERVER_WEIGHTS)[0]
            return await leaderboard(storage, server, rng.choice(GAMES), computers=shown)

        # A few calls first, so the timings are of a warm page cache, as in a running bot.
        await timed(50, person)
        results = [
            report("stats, people", await timed(calls, person)),
            report("stats, the 50 most active people", await timed(calls // 10, regular)),
            report("stats, computers", await timed(max(calls // 10, 20), computer)),
            report("leaderboard, computers shown", await timed(calls // 2, lambda: board(True))),
            report("leaderboard, computers hidden", await timed(calls // 2, lambda: board(False))),
        ]
        print(f"  (the most games of one player, computers included: {picks['most_games']:,})")
        return all(results)
    finally:
        await storage.close()


async def main_async(args: argparse.Namespace) -> int:
    """Build the database, time the calls, and say whether the targets are met."""
    with tempfile.TemporaryDirectory(prefix="cardtable-records-") as folder:
        path = Path(args.database) if args.database else Path(folder) / "records.db"
        storage = await open_storage(path)  # the bot's schema, migrated
        await storage.close()
        started = time.perf_counter()
        picks = build(path, args.games, args.players, args.seed)
        print(
            f"built {args.games:,} games, {picks['seats']:,} seats, {picks['ratings']:,} ratings"
            f" rows for {args.players:,} players on {len(SERVER_WEIGHTS)} servers"
            f" in {time.perf_counter() - started:.1f} s ({path.stat().st_size / 2**20:.0f} MiB)"
        )
        ok = await bench(path, picks, args.calls, args.seed)
    print(f"target: p95 under {TARGET_MS:.0f} ms: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def main() -> None:
    """Parse the options and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000, help="stored games")
    parser.add_argument("--players", type=int, default=5_000, help="people")
    parser.add_argument("--calls", type=int, default=2_000, help="timed stats calls")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the history")
    parser.add_argument("--database", help="build here instead of a temporary file (must be new)")
    args = parser.parse_args()
    started = time.perf_counter()
    code = asyncio.run(main_async(args))
    print(f"total run time: {time.perf_counter() - started:.1f} s")
    sys.exit(code)


if __name__ == "__main__":
    main()
