"""The event loop's lag while computer players think, with searches inline, in a thread or
in the worker-process pool.

It runs the real table core (``Tables``, ``TableSession``, timers, the real SQLite storage
on a temporary file, no Discord): ``--computer-tables`` No Thanks! tables where hard
computers play each other (moved by the table's own timers, after the bot's two-second
delay), and ``--people-tables`` tables where simulated people click moves (each table a
click every ``--click-interval`` seconds on average). A ticker sleeps 1 ms over and over
and records how late it wakes: that lag is how long any click or message waits for the
loop. It prints the lag's p50/p99/max, the people's click latency (the change path: lock,
engine, SQLite commit) and how long the computers' searches took, for three ways to think:

- ``inline``: the search runs on the event loop itself;
- ``thread``: ``asyncio.to_thread`` (the bot before the pool), which still holds the GIL;
- ``pool``: ``ThinkingPool`` worker processes (``--workers``, default: cores - 1);

and two baselines: ``idle`` (the ticker alone: what the machine itself adds, e.g. when
other processes compete for the cores) and ``people`` (the people's tables without any
computer table).

``--think-ms N`` replaces the hard AI's search by a pure-Python stand-in that burns N ms
of CPU and then asks the real AI, so the GIL's effect shows whatever the AI on main
takes. Target: p99 lag ≤ 2 ms with the pool.

Run: ``uv run python benchmarks/table/loop_lag.py [--seconds 20 --think-ms 250 --modes pool]``
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bot.ai.nothanks import seat_choice as choose
from bot.engines.nothanks import TAKE, NoThanksGame
from bot.games.nothanks import SPEC
from bot.runtime.settings import machine_workers
from bot.storage import TableRecord, open_storage
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec
from bot.table.tables import Tables
from bot.table.thinking import ThinkingPool

MODES = ("idle", "people", "inline", "thread", "pool")
LAG_TARGET_MS = 2.0
TICK = 0.001
GUILD = 1
HARD_SEATS = 3  # per computer table, beside the host's seat (taken over by a computer)
PEOPLE = 3  # per people table
# How long the stand-in search burns, in ms (from --think-ms; sent to a worker as memory).
THINK_MS = 0.0


def burning_choose(view: Any, level: str, rng: random.Random, memory: Any) -> Any:
    """The real No Thanks! AI, after a hard player's budget of pure-Python work (GIL held)."""
    budget = float(memory or 0.0) / 1000 if level == "hard" else 0.0
    deadline = time.perf_counter() + budget
    spin = 0
    while time.perf_counter() < deadline:
        for number in range(200):
            spin += number * number
    return choose(view, level, rng, None)


def burning_memory() -> float:
    """Each seat's 'memory' carries the stand-in's budget to wherever it thinks."""
    return THINK_MS


@dataclass
class Figures:
    """What one mode measured."""

    lags: list[float] = field(default_factory=list)
    clicks: list[float] = field(default_factory=list)
    searches: list[float] = field(default_factory=list)
    computer_moves: int = 0


class TimedTables(Tables):
    """The registry, timing each computer's decision (queueing included)."""

    figures: Figures

    async def choose(self, session: TableSession, player: str) -> Any:
        """Time the real decision."""
        start = time.perf_counter()
        try:
            return await super().choose(session, player)
        finally:
            self.figures.searches.append(time.perf_counter() - start)
            self.figures.computer_moves += 1


async def always_ready() -> None:
    """The timers' start gate: open from the start."""


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]


def ms(values: list[float], fraction: float | None = None) -> str:
    """A percentile (or the maximum) of seconds, in ms."""
    if not values:
        return "—"
    value = max(values) if fraction is None else percentile(values, fraction)
    return f"{value * 1000:.2f}"


async def open_table(
    tables: Tables, spec: GameSpec, channel: int, users: list[int]
) -> TableSession:
    """A lobby with ``users`` seated (the first hosts it), its message a made-up id."""
    record = TableRecord(
        game=spec.name,
        guild_id=GUILD,
        channel_id=channel,
        host_id=users[0],
        options=spec.parse_options({"turn_seconds": 600}),
        meta={"locale": "en-US"},
    )

    async def post(session: TableSession) -> int:
        return 10_000 + session.id

    session = await tables.open(
        spec, record, seat=lambda d: d.join(users[0], f"p{users[0]}", "en-US"), post=post
    )
    for user in users[1:]:
        await session.change(partial(Draft.join, user_id=user, name=f"p{user}", locale=None))
    return session


async def computer_table(tables: Tables, spec: GameSpec, channel: int, seed: int) -> TableSession:
    """A running game of hard computers (the host's seat is played by a computer too)."""
    host = 1_000_000 + channel
    session = await open_table(tables, spec, channel, [host])
    for number in range(HARD_SEATS):
        await session.change(lambda d, n=number: d.add_computer(host, "hard", f"🤖 {n}"))
    await session.change(lambda d: d.start(host, seed))

    def step_away(draft: Draft) -> None:
        draft.meta.away.append(str(host))

    await session.change(step_away)
    return session


def person_choice(game: NoThanksGame) -> Any:
    """A quick person: take with no chips left or a pot worth a third of the card."""
    seat = game.active
    card = game.current_card or 0
    if game.chips[seat] == 0 or game.chips_on_card * 3 >= card:
        return TAKE
    return game.legal_actions(game.players[seat])[-1]


async def keep_computers_playing(tables: Tables, spec: GameSpec, channel: int, seed: int) -> None:
    """One computer table after another in a channel (until cancelled at the end)."""
    game = 0
    while True:
        ended = asyncio.Event()

        def note_end(session: TableSession, ended: asyncio.Event = ended) -> None:
            if session.channel_id == channel and not session.is_open:
                ended.set()

        tables.listeners.append(note_end)
        await computer_table(tables, spec, channel, seed * 1000 + game)
        await ended.wait()  # the table's own timers play it out
        tables.listeners.remove(note_end)
        game += 1


async def keep_people_clicking(
    tables: Tables,
    channel: int,
    seed: int,
    interval: float,
    measuring: asyncio.Event,
    stop: asyncio.Event,
    figures: Figures,
) -> None:
    """People at one table click moves, one every ``interval`` s on average, game after game."""
    rng = random.Random(seed)
    users = [channel * 10 + n for n in range(PEOPLE)]
    game = 0
    await asyncio.sleep(rng.uniform(0, interval))  # not all tables at once
    while not stop.is_set():
        session = await open_table(tables, SPEC, channel + game * 100_000, users)
        await session.change(lambda d, g=game: d.start(users[0], seed * 1000 + g))
        while session.status == "running" and not stop.is_set():
            await asyncio.sleep(rng.expovariate(1 / interval))
            engine = session.running_engine()
            assert isinstance(engine, NoThanksGame)
            player = engine.players[engine.active]
            action = person_choice(engine)
            move = engine.move_number
            start = time.perf_counter()
            await session.change(
                lambda d, p=player, a=action, m=move: d.human_move(
                    p, a, expected_move=m, locale=None
                )
            )
            if measuring.is_set():
                figures.clicks.append(time.perf_counter() - start)
        game += 1


async def tick(measuring: asyncio.Event, stop: asyncio.Event, figures: Figures) -> None:
    """Sleep 1 ms over and over; record how late each wake-up is."""
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(TICK)
        if measuring.is_set():
            figures.lags.append(max(0.0, time.perf_counter() - start - TICK))


async def run_mode(mode: str, args: argparse.Namespace) -> Figures:
    """One run of the whole load with searches thought out one way."""
    figures = Figures()
    with tempfile.TemporaryDirectory() as folder:
        storage = await open_storage(Path(folder) / "lag.db")
        thinking = ThinkingPool(args.workers if mode == "pool" else 0)
        tables = TimedTables(storage, clock=time.time, ready=always_ready, thinking=thinking)
        tables.figures = figures
        spec = SPEC
        if args.think_ms:
            spec = dataclasses.replace(spec, choose=burning_choose, new_memory=burning_memory)
        if mode == "inline":
            spec = dataclasses.replace(spec, searching_levels=frozenset())
        tables.register(spec)
        await tables.start_thinking()
        measuring, stop = asyncio.Event(), asyncio.Event()
        tasks = [asyncio.create_task(tick(measuring, stop, figures))]
        computers: list[asyncio.Task[None]] = []
        computer_tables = 0 if mode in ("idle", "people") else args.computer_tables
        people_tables = 0 if mode == "idle" else args.people_tables
        for number in range(computer_tables):
            computers.append(
                asyncio.create_task(
                    keep_computers_playing(tables, spec, 1 + number, args.seed + number)
                )
            )
        for number in range(people_tables):
            channel = 1_000 + number
            tasks.append(
                asyncio.create_task(
                    keep_people_clicking(
                        tables,
                        channel,
                        args.seed + channel,
                        args.click_interval,
                        measuring,
                        stop,
                        figures,
                    )
                )
            )
        await asyncio.sleep(args.warmup)
        measuring.set()
        await asyncio.sleep(args.seconds)
        measuring.clear()
        stop.set()
        tables.close()  # the computers' timers
        for task in computers:
            task.cancel()
        await asyncio.gather(*tasks, *computers, return_exceptions=True)
        await thinking.close()
        await storage.close()
    return figures


def report(mode: str, figures: Figures, args: argparse.Namespace) -> str:
    """One table row of figures."""
    return (
        f"{mode:<7} | {ms(figures.lags, 0.5):>7} {ms(figures.lags, 0.99):>7} "
        f"{ms(figures.lags):>8} | {ms(figures.clicks, 0.5):>7} {ms(figures.clicks, 0.99):>7} "
        f"{len(figures.clicks) / args.seconds:>6.0f}/s | "
        f"{ms(figures.searches, 0.5):>8} {ms(figures.searches, 0.99):>8} "
        f"{figures.computer_moves:>5}"
    )


async def main(args: argparse.Namespace) -> None:
    """Run every mode asked for, one after the other, and print the table."""
    global THINK_MS
    THINK_MS = args.think_ms
    search = f"stand-in search of {args.think_ms:g} ms" if args.think_ms else "the real hard AI"
    print(
        f"{args.computer_tables} computer tables ({HARD_SEATS} hard + 1 taken-over seat, "
        f"{search}), {args.people_tables} people tables (a click every "
        f"{args.click_interval:g} s each), {args.seconds:g} s measured after "
        f"{args.warmup:g} s; pool: {args.workers} worker(s)"
    )
    header = (
        "mode    |  lag ms p50     p99      max | click ms p50    p99   rate | "
        "search ms p50      p99 moves"
    )
    print(header)
    print("-" * len(header))
    results: dict[str, Figures] = {}
    for mode in args.modes:
        results[mode] = await run_mode(mode, args)
        print(report(mode, results[mode], args), flush=True)
    if "pool" in results and results["pool"].lags:
        p99 = percentile(results["pool"].lags, 0.99) * 1000
        verdict = "meets" if p99 <= LAG_TARGET_MS else "misses"
        print(f"pool: p99 lag {p99:.2f} ms {verdict} the target of {LAG_TARGET_MS:g} ms")
    for mode, figures in results.items():
        if figures.lags:
            spread = statistics.fmean(figures.lags) * 1000
            print(f"{mode}: mean lag {spread:.2f} ms over {len(figures.lags)} ticks")


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--computer-tables", type=int, default=10)
    parser.add_argument("--people-tables", type=int, default=100)
    parser.add_argument("--click-interval", type=float, default=1.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--think-ms", type=float, default=0.0)
    parser.add_argument("--workers", type=int, default=machine_workers())
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(parse(sys.argv[1:])))
