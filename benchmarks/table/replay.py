"""How long one replay step takes to render, on stored games of 3 to 8 players.

Stores ``--games`` finished games (No Thanks! and Rage in turn, 3-7 and 3-8 seats, random
legal moves, mixed Rage variants) in a fresh SQLite database through the bot's own
`Storage`, then clicks ``--steps`` random replay steps the way the replay buttons do:
`load_game` (three indexed reads), `game_position` (the deal again and every logged move,
one public view built) and `replay_message` (the game's renderer, the replay controls,
`fit`). The time per step is printed as p50/p95/max, overall, per game and per size, with
the share of each part. Target: p95 under 30 ms per step.

Run: ``uv run python benchmarks/table/replay.py [--games 200 --steps 2000]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.queries.history import load_game
from bot.records.results import GameResult, PlayerResult
from bot.render.records import replay_message
from bot.storage import Storage, TableRecord, open_storage
from bot.table.replay import game_position
from bot.table.spec import GameSpec

TARGET_MS = 30.0
GUILD = 1
RAGE_VARIANTS: tuple[dict[str, bool], ...] = (
    {},
    {"plus_minus_one": True, "sweep": True},
    {"hidden_bids": True},
    {"secret_bids": True},
)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which ``fraction`` of the sorted values fall (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def store_game(storage: Storage, spec: GameSpec, seats: int, rng: random.Random) -> int:
    """Play one game with random legal moves and keep it as a finished table would."""
    options = spec.parse_options(rng.choice(RAGE_VARIANTS) if spec is RAGE else {})
    players = [str(1000 + seat) for seat in range(seats)]
    seed = rng.randrange(2**31)
    engine = spec.new_engine(players, seed, options)
    moves = []
    while not engine.is_over:
        player = rng.choice(engine.acting_players())
        action = rng.choice(list(engine.legal_actions(player)))
        engine.apply(player, action)
        moves.append((player, spec.encode_action(action)))
    record = await storage.create_table(
        TableRecord(
            game=spec.name,
            guild_id=GUILD,
            channel_id=rng.randrange(10**12),
            host_id=int(players[0]),
            status="finished",
            options=options,
            seats=[int(player) for player in players],
            state=engine.to_dict(),
            move_number=engine.move_number,
            meta={"names": {player: f"player {player}" for player in players}},
        )
    )
    assert record.id is not None
    # The move log as the table core writes it, one row per move.
    connection = storage._db
    await connection.executemany(
        "INSERT INTO moves (table_id, move_number, player, action, at) VALUES (?, ?, ?, ?, 0)",
        [(record.id, number, player, action) for number, (player, action) in enumerate(moves, 1)],
    )
    await connection.commit()
    rows = {str(player): (score, rank) for player, score, rank, _ in spec.result_rows(engine)}
    await storage.record_game(
        GameResult(
            table_id=record.id,
            guild_id=GUILD,
            channel_id=record.channel_id,
            game=spec.name,
            status="finished",
            seed=str(seed),
            options=options,
            started_at=0.0,
            ended_at=3600.0,
            moves=engine.move_number,
            players=tuple(
                PlayerResult(
                    seat=seat,
                    player=player,
                    name=f"player {player}",
                    level=None,
                    score=rows[player][0],
                    rank=rows[player][1],
                    seat_player=player,
                )
                for seat, player in enumerate(players)
            ),
        )
    )
    return record.id


async def run(games: int, steps: int, seed: int) -> int:
    """Store the games, time the steps, print the figures; 1 if the target is missed."""
    rng = random.Random(seed)
    specs = {NOTHANKS.name: NOTHANKS, RAGE.name: RAGE}
    with tempfile.TemporaryDirectory() as folder:
        storage = await open_storage(Path(folder) / "replay.db")
        try:
            started = time.perf_counter()
            stored: list[tuple[int, str, int]] = []
            for number in range(games):
                spec = (NOTHANKS, RAGE)[number % 2]
                seats = rng.randint(3, spec.max_players)
                stored.append((await store_game(storage, spec, seats, rng), spec.name, seats))
            print(f"stored {games} games in {time.perf_counter() - started:.1f} s")
            parts: dict[str, list[float]] = {"load": [], "replay": [], "render": []}
            totals: list[float] = []
            by_kind: dict[str, list[float]] = {}
            lengths: list[int] = []
            for _ in range(steps):
                table_id, name, seats = rng.choice(stored)
                begin = time.perf_counter()
                game = await load_game(storage, GUILD, table_id)
                loaded = time.perf_counter()
                assert game is not None
                spec = specs[name]
                position = game_position(spec, game, rng.randint(0, len(game.moves)))
                replayed = time.perf_counter()
                replay_message(spec, game, position, rng.choice(("en", "de", "ru", "it")))
                end = time.perf_counter()
                parts["load"].append(loaded - begin)
                parts["replay"].append(replayed - loaded)
                parts["render"].append(end - replayed)
                totals.append(end - begin)
                lengths.append(len(game.moves))
                size = "3-4" if seats <= 4 else "5-6" if seats <= 6 else "7-8"
                by_kind.setdefault(f"{name} {size} players", []).append(end - begin)
        finally:
            await storage.close()

    def line(label: str, values: Sequence[float]) -> str:
        return (
            f"  {label:<24} n={len(values):>5}  p50 {percentile(values, 0.5) * 1000:6.2f} ms"
            f"  p95 {percentile(values, 0.95) * 1000:6.2f} ms  max {max(values) * 1000:6.2f} ms"
        )

    print(
        f"{steps} replay steps (moves per game: median {statistics.median(lengths):.0f},"
        f" max {max(lengths)})"
    )
    print(line("one step", totals))
    for label in sorted(by_kind):
        print(line(label, by_kind[label]))
    for label, values in parts.items():
        print(line(f"  of which {label}", values))
    p95 = percentile(totals, 0.95) * 1000
    verdict = "met" if p95 < TARGET_MS else "MISSED"
    print(f"target p95 < {TARGET_MS:.0f} ms: {verdict} ({p95:.2f} ms)")
    return 0 if p95 < TARGET_MS else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=200, help="stored games (half each game)")
    parser.add_argument("--steps", type=int, default=2000, help="replay steps to time")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games and steps")
    arguments: Any = parser.parse_args(argv)
    return asyncio.run(run(arguments.games, arguments.steps, arguments.seed))


if __name__ == "__main__":
    sys.exit(main())
