"""Idle tables on the real bot (issue 42): memory, start-up, deadlines, clicks.

The real bot (``python -m bot``, as ``run.py`` starts it: ``bot_process.py`` pointed at
the fake Discord of ``fake_discord.py`` over loopback) on a database that
``idle_fill.py`` filled with open mid-game tables through the bot's own change path.
Every figure is set beside the same bot on an empty database (the same guilds, settings
and options), started the same way. Three commands:

- ``startup``: process start to ready (the first heartbeat, written in ``on_ready``: the
  tables restored, the gateway up) and the resident memory (RSS) at ready and after
  ``--settle`` seconds, with ``--tables`` N tables and with none. Targets: at most
  +60 MB and 5 s with 100,000 tables on PostgreSQL (20,000 on SQLite for the memory).
- ``deadlines``: ``--due`` tables whose turns time out spread over ``--spread`` seconds,
  and ``--burst`` tables due in the same second (one bot run each), beside ``--idle``
  idle tables. Each due table waits on people only, so its deadline fires one timeout
  (a computer move for each person awaited, saved with the time in the move log).
  Lateness is the move's saved time minus the stored deadline; "seen" is the first edit
  or post in the table's channel at the fake Discord after the deadline. Fired twice: a
  person's timeouts counted more than once, or more moves than people awaited. Target:
  p99 at most 2 s late, none twice.
- ``clicks``: a Take on a No Thanks! table nobody touched since the bot started (in
  memory before issue 42, out of memory since), each table clicked once: first
  ``--clicks`` at ``--rate`` a second, then ``--burst-rate`` a second for
  ``--burst-seconds``, from ``--wait`` (10) seconds after ready. Latency is
  INTERACTION_CREATE sent to the answer (the interaction callback, or for a deferred
  click the edit of its original message), which comes after the move was saved;
  percentiles are of the clicks answered with the move, and errors count the others (a
  private refusal, or no answer within 30 s). Targets: p99 at most 250 ms at the gentle
  rate on PostgreSQL, and within Discord's 3 s at 100 a second.

Databases: SQLite in a temporary folder by default; ``--database-url postgresql://…`` (a
fresh schema per run, dropped afterwards) or ``--postgres`` (a throw-away server of this
script's own, fsync on). Table messages carry no pictures unless ``--pictures on``
(refreshing them at start-up would paint one per table on today's bot).

Figures on a shared 2-core machine are pessimistic; compare runs made side by side.

Run: ``uv run python benchmarks/load/idle_tables.py startup --tables 2000``
``uv run python benchmarks/load/idle_tables.py deadlines --due 2000 --burst 500``
``uv run python benchmarks/load/idle_tables.py clicks --tables 2000 --database-url …``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import asyncpg  # type: ignore[import-untyped]
import run
from aiohttp import web
from fake_discord import Callback, FakeDiscord, FakeGuild, message
from idle_fill import FIRST_MESSAGE, Due, Filled, fill, pictures, plan

from bot.engines.nothanks import NoThanksGame
from bot.render.components import custom_id
from bot.storage import open_storage
from tests.backends import TemporaryServer, postgres_binaries

MEMORY_TARGET_MB = 60.0
STARTUP_TARGET_S = 5.0
LATE_TARGET_S = 2.0
CLICK_TARGET_MS = 250.0
BURST_TARGET_MS = 3000.0
READY_TIMEOUT = 600.0


def percentile(values: Sequence[float], q: float) -> float:
    """The value at this quantile (nearest rank), NaN for none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Watch:
    """What the fake Discord saw: edits and posts per channel (wall clock) and the edits
    of interactions' original messages (by token, perf_counter)."""

    def __init__(self, fake: FakeDiscord) -> None:
        self.channel: dict[int, list[float]] = defaultdict(list)
        self.original: dict[str, float] = {}
        self.callbacks: dict[int, asyncio.Future[Callback]] = {}
        self.edited: dict[str, asyncio.Event] = {}
        message_route, send_route = fake.message, fake.send

        async def on_message(request: web.Request) -> web.Response:
            if request.method == "PATCH" and "token" in request.match_info:
                token = request.match_info["token"]
                self.original.setdefault(token, time.perf_counter())
                event = self.edited.get(token)
                if event is not None:
                    event.set()
            elif request.method == "PATCH":
                self.channel[int(request.match_info["channel"])].append(time.time())
            return await message_route(request)

        async def on_send(request: web.Request) -> web.Response:
            self.channel[int(request.match_info["channel"])].append(time.time())
            return await send_route(request)

        # Routes are bound when the fake starts: these wrap its handlers.
        fake.message = on_message  # type: ignore[method-assign]
        fake.send = on_send  # type: ignore[method-assign]
        fake.on_callback = self.answered

    def answered(self, interaction_id: int, callback: Callback) -> None:
        """An interaction callback arrived."""
        future = self.callbacks.pop(interaction_id, None)
        if future is not None and not future.done():
            future.set_result(callback)


# -- databases and the bot ------------------------------------------------------------------


@dataclass
class Where:
    """The database of one run: the bot's target, and a way to read it."""

    folder: Path  # the bot process's folder (its SQLite file, heartbeat, log)
    url: str | None  # PostgreSQL, or None for SQLite in the folder
    pool: asyncpg.Pool | None = None

    @property
    def target(self) -> str | Path:
        """What open_storage takes."""
        return self.url if self.url is not None else self.folder / "cardtable.db"

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of a read-only query (SQLite opened read-only beside the bot)."""
        if self.pool is not None:
            return [tuple(row) for row in await self.pool.fetch(sql)]

        def read() -> list[tuple[Any, ...]]:
            uri = f"file:{self.folder / 'cardtable.db'}?mode=ro"
            with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
                return list(db.execute(sql).fetchall())

        return await asyncio.to_thread(read)


@contextlib.asynccontextmanager
async def database(server: run.Database, label: str) -> AsyncIterator[Where]:
    """A fresh database in a temporary folder (a fresh schema on PostgreSQL)."""
    with tempfile.TemporaryDirectory(prefix=f"idle-{label}-") as tmp:
        folder = Path(tmp)
        async with server.for_run(folder) as (url, handle):
            (folder / "p0").mkdir(exist_ok=True)
            pool = handle if isinstance(handle, asyncpg.Pool) else None
            yield Where(folder / "p0", url, pool)


@contextlib.asynccontextmanager
async def given(url: str) -> AsyncIterator[Where]:
    """A PostgreSQL database idle_fill.py filled (``--filled``), left as it is after."""
    with tempfile.TemporaryDirectory(prefix="idle-filled-") as tmp:
        pool = await asyncpg.create_pool(url, min_size=1, max_size=4)
        try:
            yield Where(Path(tmp), url, pool)
        finally:
            await pool.close()


async def stored_guilds(where: Where) -> tuple[list[FakeGuild], list[int]]:
    """The guilds of a filled database's tables, for the fake to serve."""
    ids = sorted(int(row[0]) for row in await where.rows("SELECT DISTINCT guild_id FROM tables"))
    return [FakeGuild(guild, guild + 1, f"g{n}") for n, guild in enumerate(ids)], ids


async def open_count(where: Where) -> int:
    """How many open tables a database holds."""
    rows = await where.rows("SELECT COUNT(*) FROM tables WHERE status IN ('lobby', 'running')")
    return int(rows[0][0])


async def prepare(where: Where, guilds: Sequence[int], on: bool) -> None:
    """The schema and each guild's picture setting, as before any bot start."""
    storage = await open_storage(where.target)
    try:
        await pictures(storage, guilds, on)
    finally:
        await storage.close()


async def filled(
    where: Where,
    count: int,
    guilds: Sequence[int],
    *,
    due: Due | None = None,
    computers: bool = True,
    first: int = 0,
    seed: int = 42,
) -> tuple[list[Filled], float]:
    """Fill ``count`` tables; what was written and the seconds it took."""
    if count == 0:
        return [], 0.0
    storage = await open_storage(where.target)
    try:
        started = time.perf_counter()
        tables = plan(count, guilds=guilds, seed=seed, due=due, computers=computers, first=first)
        written = await fill(storage, tables)
        return written, time.perf_counter() - started
    finally:
        await storage.close()


@dataclass
class Started:
    """A bot process that became ready."""

    process: Any  # subprocess.Popen[bytes]
    ready_seconds: float  # from just before the process was started to its first beat
    rss_ready: int


async def start_bot(fake: FakeDiscord, where: Where) -> Started:
    """Start the bot; wait for its first heartbeat (polled, no fixed wait)."""
    beat = where.folder / "cardtable.db.heartbeat"
    started = time.time()
    process = run.spawn("cardtable", fake.base_url, where.folder, None, None, where.url)
    deadline = time.monotonic() + READY_TIMEOUT
    while not beat.exists():
        if process.poll() is not None:
            log = (where.folder / "cardtable.log").read_text()[-3000:]
            raise RuntimeError(f"the bot exited with {process.returncode}:\n{log}")
        if time.monotonic() > deadline:
            run.stop(process)
            raise RuntimeError(f"the bot was not ready within {READY_TIMEOUT:.0f} s")
        await asyncio.sleep(0.02)
    rss = run.rss_bytes(process.pid)
    written = json.loads(beat.read_text())
    return Started(process, float(written["time"]) - started, rss)


def guild_ids(count: int) -> tuple[list[FakeGuild], list[int]]:
    """The fake's guilds (each bot run sees the same ones) and their ids."""
    guilds = run.make_guilds(count)
    return guilds, [guild.id for guild in guilds]


# -- startup --------------------------------------------------------------------------------


@dataclass
class Boot:
    """One start of the bot on a database of ``tables`` tables."""

    tables: int
    fill_seconds: float
    ready_seconds: float
    rss_ready: int
    rss_settled: int
    due: int | None = None  # tables due within 5 minutes of the start (None: no due column)


async def boot(
    args: argparse.Namespace,
    server: run.Database,
    tables: int,
    guilds: tuple[list[FakeGuild], list[int]] | None = None,
) -> Boot:
    """Fill, start the bot, measure, stop it (``--filled``: N tables are those filled)."""
    fakes, ids = guilds or guild_ids(args.guilds)
    if tables and args.filled:
        async with given(args.filled) as where:
            return await measure_boot(args, where, fakes, tables, 0.0)
    async with database(server, f"startup{tables}") as where:
        await prepare(where, ids, args.pictures == "on")
        _, fill_seconds = await filled(where, tables, ids, seed=args.seed)
        return await measure_boot(args, where, fakes, tables, fill_seconds)


async def measure_boot(
    args: argparse.Namespace,
    where: Where,
    fakes: list[FakeGuild],
    tables: int,
    fill_seconds: float,
) -> Boot:
    """Start the bot on a database, measure, stop it."""
    due = await due_soon(where)
    fake = FakeDiscord(fakes)
    await fake.start()
    try:
        bot = await start_bot(fake, where)
        try:
            await asyncio.sleep(args.settle)
            settled = run.rss_bytes(bot.process.pid)
        finally:
            run.stop(bot.process)
    finally:
        await fake.close()
    return Boot(tables, fill_seconds, bot.ready_seconds, bot.rss_ready, settled, due)


async def due_soon(where: Where) -> int | None:
    """Open tables whose stored due time (issue 42's column) is past or within 5 minutes:
    the ones a start loads (a reminder or a deadline that passed while the bot was down,
    or falls due soon). None where the column does not exist."""
    soon = time.time() + 300
    try:
        rows = await where.rows(f"SELECT COUNT(*) FROM tables WHERE due_at <= {soon}")
    except (sqlite3.Error, asyncpg.PostgresError):
        return None
    return int(rows[0][0])


async def startup(args: argparse.Namespace, server: run.Database) -> int:
    """Empty, then N tables (``--rounds`` times, interleaved): ready time and RSS."""
    guilds: tuple[list[FakeGuild], list[int]] | None = None
    if args.filled:
        async with given(args.filled) as where:
            guilds = await stored_guilds(where)
            args.tables = await open_count(where)
    runs: dict[int, list[Boot]] = {0: [], args.tables: []}
    for round_ in range(args.rounds):
        for tables in runs:
            result = await boot(args, server, tables, guilds)
            runs[tables].append(result)
            print(
                f"  round {round_ + 1}, {tables} tables: filled in {result.fill_seconds:.1f} s,"
                f" ready in {result.ready_seconds:.2f} s, RSS {result.rss_ready / 2**20:.1f} MB"
                f" at ready, {result.rss_settled / 2**20:.1f} MB after {args.settle:.0f} s"
                + ("" if result.due is None else f"; {result.due} due within 5 minutes"),
                flush=True,
            )
    empty = min(runs[0], key=lambda b: b.ready_seconds)
    full = min(runs[args.tables], key=lambda b: b.ready_seconds)
    grown = (full.rss_settled - empty.rss_settled) / 2**20
    print(f"\n{server.name}, {args.tables} open idle tables vs none (best of {args.rounds}):")
    print(
        f"  ready: {full.ready_seconds:.2f} s (empty: {empty.ready_seconds:.2f} s;"
        f" +{full.ready_seconds - empty.ready_seconds:.2f} s); target <= {STARTUP_TARGET_S:.0f} s"
        " at 100,000 tables"
    )
    print(
        f"  RSS after {args.settle:.0f} s: {full.rss_settled / 2**20:.1f} MB"
        f" (empty: {empty.rss_settled / 2**20:.1f} MB; +{grown:.1f} MB,"
        f" {grown * 1024 / max(1, args.tables):.1f} KB a table);"
        f" target <= +{MEMORY_TARGET_MB:.0f} MB (100,000 on PostgreSQL, 20,000 on SQLite)"
    )
    print(
        f"  RSS at ready: +{(full.rss_ready - empty.rss_ready) / 2**20:.1f} MB;"
        + (
            f" fill: {full.fill_seconds:.1f} s ({args.tables / full.fill_seconds:.0f} tables/s)"
            if full.fill_seconds
            else " filled beforehand (--filled)"
        )
    )
    return 0


# -- deadlines ------------------------------------------------------------------------------


@dataclass
class Fired:
    """What became of a batch of deadlines."""

    label: str
    due: int
    late: list[float] = field(default_factory=list)  # saved time - deadline, s
    seen: list[float] = field(default_factory=list)  # first channel request - deadline, s
    never: int = 0
    twice: int = 0
    ready_before_first: bool = True


async def deadline_run(
    args: argparse.Namespace, server: run.Database, label: str, count: int, spread: float
) -> Fired:
    """Fill idle tables and ``count`` due ones, start the bot, let the deadlines pass."""
    fakes, ids = guild_ids(args.guilds)
    async with database(server, f"deadlines-{label}") as where:
        await prepare(where, ids, args.pictures == "on")
        await filled(where, args.idle, ids, seed=args.seed)
        base = time.time() + args.lead

        def due(index: int, pace: float, rng: random.Random) -> float:
            # Evenly over the spread (the same second for a burst).
            return base + spread * (index - args.idle) / max(1, count)

        tables, seconds = await filled(
            where, count, ids, due=due, computers=False, first=args.idle, seed=args.seed + 1
        )
        print(f"  {label}: {count} due tables filled in {seconds:.1f} s", flush=True)
        fake = FakeDiscord(fakes)
        watch = Watch(fake)
        await fake.start()
        try:
            bot = await start_bot(fake, where)
            ready_at = time.time()
            try:
                last = max(t.deadline for t in tables)
                # Until every table moved on and was seen to, or the grace after the last
                # deadline passed.
                while time.time() < last + args.grace:
                    await asyncio.sleep(1.0)
                    if (
                        time.time() > last
                        and all(seen_after(watch, t) for t in tables)
                        and await moved(where, tables) == len(tables)
                    ):
                        break
            finally:
                run.stop(bot.process)
            fired = await outcome(where, tables, watch, label)
            fired.ready_before_first = ready_at < min(t.deadline for t in tables)
            print(f"  {label}: ready in {bot.ready_seconds:.1f} s", flush=True)
            return fired
        finally:
            await fake.close()


def seen_after(watch: Watch, table: Filled) -> bool:
    """Whether the table's channel had an edit or a post after its deadline."""
    return any(at >= table.deadline for at in watch.channel.get(table.planned.channel_id, ()))


async def moved(where: Where, tables: Sequence[Filled]) -> int:
    """How many of these tables have a move after the one they were filled with."""
    first, last = tables[0].table_id, tables[-1].table_id
    rows = await where.rows(
        f"SELECT id, move_number FROM tables WHERE id BETWEEN {first} AND {last}"
    )
    numbers = dict(rows)
    return sum(1 for t in tables if numbers.get(t.table_id, 0) > t.move_number)


async def outcome(where: Where, tables: Sequence[Filled], watch: Watch, label: str) -> Fired:
    """Lateness, never and twice, from the move log and the tables' metadata."""
    first, last = tables[0].table_id, tables[-1].table_id
    moves = await where.rows(
        f"SELECT table_id, move_number, at FROM moves WHERE table_id BETWEEN {first} AND {last}"
    )
    metas = dict(
        await where.rows(f"SELECT id, meta FROM tables WHERE id BETWEEN {first} AND {last}")
    )
    new: dict[int, list[float]] = defaultdict(list)
    by_id = {t.table_id: t for t in tables}
    for table_id, number, at in moves:
        table = by_id.get(table_id)
        if table is not None and number > table.move_number:
            new[table_id].append(float(at))
    fired = Fired(label, len(tables))
    for table in tables:
        saved = new.get(table.table_id)
        if not saved:
            fired.never += 1
            continue
        fired.late.append(min(saved) - table.deadline)
        meta = metas[table.table_id]
        timeouts = json.loads(meta if isinstance(meta, str) else json.dumps(meta)).get(
            "timeouts", {}
        )
        if len(saved) > len(table.acting) or any(int(n) > 1 for n in timeouts.values()):
            fired.twice += 1
        seen = [
            at for at in watch.channel.get(table.planned.channel_id, []) if at >= table.deadline
        ]
        if seen:
            fired.seen.append(min(seen) - table.deadline)
    return fired


async def deadlines(args: argparse.Namespace, server: run.Database) -> int:
    """The spread run, then the burst run; their lateness."""
    results: list[Fired] = []
    if args.due:
        results.append(
            await deadline_run(
                args, server, f"{args.due} over {args.spread:.0f} s", args.due, args.spread
            )
        )
    if args.burst:
        results.append(await deadline_run(args, server, f"{args.burst} in 1 s", args.burst, 0.999))
    print(f"\n{server.name}, beside {args.idle} idle tables:")
    print(
        f"  {'deadlines':<16} {'fired':>6} {'p50 s':>6} {'p99 s':>6} {'max s':>6} {'never':>5}"
        f" {'twice':>5} {'seen':>6} {'seen p50':>8} {'seen p99':>8}"
    )
    for fired in results:
        print(
            f"  {fired.label:<16} {len(fired.late):>6} {percentile(fired.late, 0.5):>6.2f}"
            f" {percentile(fired.late, 0.99):>6.2f} {max(fired.late, default=float('nan')):>6.2f}"
            f" {fired.never:>5} {fired.twice:>5} {len(fired.seen):>6}"
            f" {percentile(fired.seen, 0.5):>8.2f}"
            f" {percentile(fired.seen, 0.99):>8.2f}"
            + (
                ""
                if fired.ready_before_first
                else "  (the bot was ready only after the first deadline: raise --lead)"
            )
        )
    print(
        "  late: the timeout's move saved, after its deadline; seen: the first edit or post"
        " in its channel at the fake Discord after the deadline (seen: of how many tables"
        f" before the run ended, --grace {args.grace:.0f} s after the last deadline)."
        f" target: p99 <= {LATE_TARGET_S:.0f} s, none twice"
    )
    return 0


# -- clicks ---------------------------------------------------------------------------------


@dataclass
class Clicked:
    """One phase of clicks."""

    label: str
    latencies: list[float] = field(default_factory=list)  # seconds
    errors: int = 0  # unanswered within run.ANSWER_TIMEOUT, or refused
    unanswered: int = 0
    sent_at: list[float] = field(default_factory=list)  # perf_counter of each answered click
    deferred: int = 0
    offered_rate: float = 0.0


@dataclass(frozen=True, slots=True)
class Target:
    """A No Thanks! table to click: where it is and who is to play which move."""

    table_id: int
    guild_id: int
    channel_id: int
    message_id: int
    move_number: int
    player: int
    deadline: float


def target_of(table: Filled) -> Target:
    """A table as the fill wrote it."""
    planned = table.planned
    message_id = FIRST_MESSAGE + planned.index
    player = int(table.acting[0])
    return Target(
        table.table_id,
        planned.guild_id,
        planned.channel_id,
        message_id,
        table.move_number,
        player,
        table.deadline,
    )


async def stored_targets(where: Where) -> list[Target]:
    """The running No Thanks! tables of a filled database, as they are now."""
    rows = await where.rows(
        "SELECT id, guild_id, channel_id, message_id, move_number, state, meta FROM tables"
        " WHERE status = 'running' AND game = 'nothanks'"
    )
    targets: list[Target] = []
    for table_id, guild_id, channel_id, message_id, move_number, state, meta in rows:
        game = NoThanksGame.from_dict(json.loads(state))
        turn = json.loads(meta).get("turn")
        if game.active_player is None or turn is None:
            continue
        targets.append(
            Target(
                table_id,
                guild_id,
                channel_id,
                message_id,
                move_number,
                int(game.active_player),
                float(turn["deadline"]),
            )
        )
    return targets


async def click(fake: FakeDiscord, watch: Watch, table: Target, result: Clicked) -> None:
    """Take the card at a No Thanks! table for the person to play; time the answer."""
    guild = FakeGuild(table.guild_id, table.channel_id, "g")
    shown = message(table.message_id, table.channel_id, {})
    button = custom_id("nothanks", table.table_id, table.move_number, "take")
    payload = run.component(guild, table.player, shown, button)
    interaction_id = fake.new_id()
    token = f"token{interaction_id}"
    payload["id"], payload["token"] = str(interaction_id), token
    future: asyncio.Future[Callback] = asyncio.get_running_loop().create_future()
    watch.callbacks[interaction_id] = future
    edited = watch.edited[token] = asyncio.Event()
    sent = time.perf_counter()
    await fake.send_interaction(table.guild_id, payload)
    try:
        answer = await asyncio.wait_for(future, run.ANSWER_TIMEOUT)
        if answer.type == 6:
            # Deferred: the move shows when the original message is edited.
            result.deferred += 1
            await asyncio.wait_for(edited.wait(), run.ANSWER_TIMEOUT)
            done = watch.original[token]
        else:
            done = answer.at
    except TimeoutError:
        result.errors += 1
        result.unanswered += 1
        return
    finally:
        watch.edited.pop(token, None)
    if answer.type not in (6, 7) or answer.ephemeral:
        result.errors += 1
        return
    result.latencies.append(done - sent)
    result.sent_at.append(sent)


async def phase(
    fake: FakeDiscord, watch: Watch, tables: list[Target], label: str, rate: float
) -> Clicked:
    """Click each table once, ``rate`` clicks a second (open loop)."""
    result = Clicked(label, offered_rate=rate)
    tasks: list[asyncio.Task[None]] = []
    start = time.perf_counter()
    for number, table in enumerate(tables):
        wait = start + number / rate - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(click(fake, watch, table, result)))
    await asyncio.gather(*tasks)
    return result


async def click_run(args: argparse.Namespace, server: run.Database) -> tuple[Clicked, Clicked]:
    """Fill (or take ``--filled``), start the bot, click unloaded tables gently, then at
    the burst rate."""
    async with contextlib.AsyncExitStack() as stack:
        if args.filled:
            where = await stack.enter_async_context(given(args.filled))
            fakes, _ = await stored_guilds(where)
            targets = await stored_targets(where)
            args.tables = await open_count(where)
        else:
            fakes, ids = guild_ids(args.guilds)
            where = await stack.enter_async_context(database(server, "clicks"))
            await prepare(where, ids, args.pictures == "on")
            tables, seconds = await filled(where, args.tables, ids, seed=args.seed)
            print(f"  {args.tables} tables filled in {seconds:.1f} s", flush=True)
            targets = [target_of(t) for t in tables if t.planned.game == "nothanks"]
        return await clicking(args, where, fakes, targets)
    raise AssertionError("unreachable")


async def clicking(
    args: argparse.Namespace, where: Where, fakes: list[FakeGuild], targets: list[Target]
) -> tuple[Clicked, Clicked]:
    """Start the bot, click the gentle phase, then the burst; stop it."""
    burst = int(args.burst_rate * args.burst_seconds)
    # Tables far from their deadline, so no timer touches them meanwhile.
    soon = time.time() + 3600
    targets = [t for t in targets if t.deadline > soon]
    random.Random(args.seed).shuffle(targets)
    if len(targets) < args.clicks + burst:
        raise SystemExit(
            f"{len(targets)} No Thanks! tables to click, {args.clicks + burst} clicks asked:"
            " raise --tables"
        )
    fake = FakeDiscord(fakes)
    watch = Watch(fake)
    await fake.start()
    try:
        bot = await start_bot(fake, where)
        try:
            print(f"  ready in {bot.ready_seconds:.1f} s", flush=True)
            ready = time.perf_counter()
            await asyncio.sleep(args.wait)
            gentle = await phase(fake, watch, targets[: args.clicks], "gentle", args.rate)
            later = targets[args.clicks : args.clicks + burst]
            fast = await phase(fake, watch, later, "burst", args.burst_rate)
        finally:
            run.stop(bot.process)
    finally:
        await fake.close()
    for result in (gentle, fast):
        result.sent_at = [at - ready for at in result.sent_at]
    return gentle, fast


async def clicks(args: argparse.Namespace, server: run.Database) -> int:
    """The clicks and their latency against the targets."""
    gentle, fast = await click_run(args, server)
    print(f"\n{server.name}, {args.tables} open idle tables, each clicked once:")
    print(
        f"  {'phase':<7} {'rate/s':>6} {'clicks':>6} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}"
        f" {'errors':>6} {'of them unanswered':>18} {'deferred':>8}  target"
    )
    for result, target in ((gentle, CLICK_TARGET_MS), (fast, BURST_TARGET_MS)):
        ms = [1000 * s for s in result.latencies]
        print(
            f"  {result.label:<7} {result.offered_rate:>6.0f} {len(ms):>6}"
            f" {percentile(ms, 0.5):>7.1f} {percentile(ms, 0.99):>7.1f}"
            f" {max(ms, default=float('nan')):>7.1f}"
            f" {result.errors:>6} {result.unanswered:>18} {result.deferred:>8}"
            f"  p99 <= {target:.0f} ms"
        )
    for result in (gentle, fast):
        slowest = sorted(zip(result.latencies, result.sent_at, strict=True), reverse=True)[:3]
        shown = ", ".join(f"{1000 * late:.0f} ms at {at:.1f} s" for late, at in slowest)
        print(f"  {result.label}: slowest {shown} after ready")
    return 0


# -- the command line -----------------------------------------------------------------------


async def main(args: argparse.Namespace) -> int:
    """Pick the database, run the command."""
    command = {"startup": startup, "deadlines": deadlines, "clicks": clicks}[args.command]
    if not args.postgres:
        return await command(args, run.Database(args.database_url))
    binaries = postgres_binaries()
    if binaries is None:
        print("idle_tables.py: error: --postgres needs initdb and pg_ctl", file=sys.stderr)
        return 2
    temporary = TemporaryServer(binaries, durable=True)
    try:
        url = await asyncio.to_thread(temporary.start)
        postmaster = int((temporary.data / "postmaster.pid").read_text().split()[0])
        return await command(args, run.Database(url, postmaster))
    finally:
        await asyncio.to_thread(temporary.stop)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Each command has its own --help.",
    )
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_mutually_exclusive_group()
    where.add_argument("--database-url", default=None, help="PostgreSQL (a schema per run)")
    where.add_argument("--postgres", action="store_true", help="a throw-away PostgreSQL server")
    common.add_argument("--guilds", type=int, default=20, help="servers the tables are in")
    common.add_argument("--seed", type=int, default=42)
    common.add_argument("--pictures", choices=("on", "off"), default="off")
    common.add_argument(
        "--filled",
        default=None,
        help="startup, clicks: a postgresql:// database idle_fill.py filled, used as it is"
        " (the empty baseline gets a fresh schema)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    boot_ = commands.add_parser("startup", parents=[common], help="ready time and RSS")
    boot_.add_argument("--tables", type=int, default=2000)
    boot_.add_argument("--settle", type=float, default=5.0, help="seconds after ready for RSS")
    boot_.add_argument("--rounds", type=int, default=1, help="starts of each, best shown")
    due = commands.add_parser("deadlines", parents=[common], help="deadlines firing")
    due.add_argument("--due", type=int, default=2000, help="deadlines spread over --spread")
    due.add_argument("--spread", type=float, default=60.0)
    due.add_argument("--burst", type=int, default=500, help="deadlines in the same second")
    due.add_argument("--idle", type=int, default=0, help="idle tables beside them")
    due.add_argument(
        "--lead", type=float, default=60.0, help="seconds from filling to the first deadline"
    )
    due.add_argument("--grace", type=float, default=30.0, help="wait after the last deadline")
    press = commands.add_parser("clicks", parents=[common], help="clicks on unloaded tables")
    press.add_argument("--tables", type=int, default=2000)
    press.add_argument("--clicks", type=int, default=200, help="gentle clicks")
    press.add_argument("--rate", type=float, default=10.0, help="gentle clicks a second")
    press.add_argument("--burst-rate", type=float, default=100.0)
    press.add_argument("--burst-seconds", type=float, default=5.0)
    press.add_argument(
        "--wait",
        type=float,
        default=10.0,
        help="seconds after ready before the first click (start-up's own work, such as the"
        " first refreshes, is not what is measured)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
