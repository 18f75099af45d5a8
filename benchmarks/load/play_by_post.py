"""Play by post against Discord's rate limits (issue 43): notices paced, live tables kept.

The real bot (``bot_process.py``, started as ``idle_tables.py`` starts it) on PostgreSQL,
against the fake Discord of ``fake_discord.py`` with Discord's limits enforced (the
global 50 requests a second, per-route buckets, 429s). Before it starts, ``idle_fill.py``
writes ``--tables`` open, running turn-based tables (No Thanks! and Rage, 60/40, 3 to 8
seats, paces of 1 to 72 hours a move) through the bot's own change path, each person
with the "your turn" DM the bot remembers at that table; ``--turns`` of them have their
deadline in the same ``--minute`` (evenly spread, from ``--lead`` seconds after the
fill), the rest hours to days away. At each of those deadlines the computer plays for the
absent person and the next person's turn begins: a "your turn" DM is owed. Meanwhile
``run.py``'s driver plays ``--live-tables`` live No Thanks! tables of ``--players``
clickers each at ``--live-rate`` moves a second in all, on the same process.

Reported:

- notices: owed (each person awaited at a due table's new turn, counted from the
  database afterwards) and sent (that person's DM POSTed to the fake Discord, naming the
  table, after the turn began); per notice, from its turn starting (the stored start of
  the turn: its deadline less the table's pace) to the POST reaching the fake: p50, p99,
  max. Target: p99 <= 60 s;
- requests counted against the global limit, per second: mean over the minute and the
  peak second, beside Discord's 50 and the lane's pace (45); 429s by scope (target: 0);
  requests by kind;
- the live tables' click answers (INTERACTION_CREATE sent to the answer) p50/p99, the
  bot's CPU over the minute (all its work, per live interaction answered), and how stale
  their players' chip DMs ran (a chip change to the DM request showing it, as ``run.py``
  measures it); ``--no-turn-based`` runs the same without the turn-based tables (no
  fill), the baseline to compare them with.

The machine is shared: figures are pessimistic, compare runs made side by side.

Run: ``uv run python benchmarks/load/play_by_post.py --database-url postgresql://…``
(``--tables 10000 --turns 1000`` by default), then the same with ``--no-turn-based``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import idle_tables
import run
from aiohttp import web
from fake_discord import DiscordLimits, FakeDiscord, FakeGuild
from idle_fill import FIRST_DM_CHANNEL, FIRST_USER, Filled, fill, idle_due, plan

from bot.games import GAMES
from bot.storage import Storage, open_storage
from bot.table.session import TableSession
from bot.table.spec import is_computer_id
from tests.backends import TemporaryServer, postgres_binaries

NOTICE_TARGET_S = 60.0
LANE_PACE = 45.0  # bot.client.outbound.lane.DEFAULT_RATE
DISCORD_LIMIT = 50.0
LINK = re.compile(r"discord\.com/channels/\d+/(?P<channel>\d+)/")


def percentile(values: Sequence[float], q: float) -> float:
    """The value at this quantile (nearest rank), NaN for none."""
    return idle_tables.percentile(values, q)


@dataclass
class Posts:
    """The DMs POSTed to the fake Discord: per (DM channel, table channel), when."""

    at: dict[tuple[int, int], list[float]] = field(default_factory=lambda: defaultdict(list))

    def watch(self, fake: FakeDiscord) -> None:
        """Wrap the fake's send route (before it starts) to see each DM's table link."""
        send = fake.send

        async def on_send(request: web.Request) -> web.Response:
            channel = int(request.match_info["channel"])
            if channel in fake._dm_ids:
                raw = await request.read()
                body = json.loads(raw) if request.content_type == "application/json" else {}
                found = LINK.search(str(body.get("content") or ""))
                if found is not None:
                    self.at[(channel, int(found["channel"]))].append(time.time())
            return await send(request)

        fake.send = on_send  # type: ignore[method-assign]

    def count(self) -> int:
        """How many such DMs came so far."""
        return sum(len(times) for times in self.at.values())


def dm_channel_of(user: int) -> int:
    """The DM channel the fill remembered for a person (and the fake opens for them)."""
    return FIRST_DM_CHANNEL + user - FIRST_USER


@dataclass
class Owed:
    """A notice owed: a person awaited at a due table's new turn, and when it began."""

    table: Filled
    player: int
    started: float


async def owed_notices(
    storage: Storage, due: Sequence[Filled], since: float
) -> tuple[list[Owed], int, int]:
    """The people each due table waits for at its turn begun after ``since`` (a move was
    made at it: the computer's, for the absent person), as the bot's notices see them;
    how many tables moved, and how many of those games ended with that move."""
    owed: list[Owed] = []
    moved = ended = 0
    for table in due:
        record = await storage.get_table(table.table_id)
        if record is None or record.move_number == table.move_number:
            continue
        moved += 1
        session = TableSession(GAMES[record.game], record, storage, asyncio.Lock(), time.time)
        turn = session.meta.turn
        if turn is None or not session.is_open:
            ended += not session.is_open
            continue
        started = turn.deadline - session.meta.pace
        if started < since:
            continue
        for player in session.acting_players():
            if is_computer_id(player) or session.plays_itself(player):
                continue
            if player in session.meta.dm_closed:
                continue
            owed.append(Owed(table, int(player), started))
    return owed, moved, ended


@dataclass
class Outcome:
    """One run's figures."""

    label: str
    owed: int = 0
    sent: list[float] = field(default_factory=list)  # seconds from turn start to POST
    counted: list[float] = field(default_factory=list)  # monotonic times, in the minute
    minute: float = 60.0
    rejected: dict[str, int] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    staleness: list[float] = field(default_factory=list)  # live chip DMs, s
    interactions: int = 0
    clicks: int = 0
    errors: int = 0
    cpu: float = 0.0
    moved: int = 0  # due tables that moved on
    ended: int = 0  # of them, games that ended with the computer's move
    fill_seconds: float = 0.0
    ready_seconds: float = 0.0
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def peak(self) -> int:
        """The most counted requests in any one second (a sliding window)."""
        ordered = sorted(self.counted)
        best, start = 0, 0
        for end, at in enumerate(ordered):
            while ordered[start] <= at - 1.0:
                start += 1
            best = max(best, end - start + 1)
        return best


async def fill_tables(
    where: idle_tables.Where, args: argparse.Namespace, guild_ids: list[int], start: float
) -> tuple[list[Filled], float]:
    """The idle turn-based tables, then the due ones (deadlines from ``start`` over the
    minute); the due tables and when the first falls due."""
    storage = await open_storage(where.target)
    try:
        idle = plan(
            args.tables - args.turns,
            guilds=guild_ids,
            seed=args.seed,
            due=idle_due(start),
            turn_based=True,
            noticed=not args.no_notices,
        )
        await fill(storage, idle, concurrency=args.concurrency, move_log="last")
        first_due = time.time() + args.lead
        minute = args.minute

        def due(index: int, pace: float, rng: random.Random) -> float:
            return first_due + minute * (index - len(idle)) / max(1, args.turns)

        planned = plan(
            args.turns,
            guilds=guild_ids,
            seed=args.seed + 1,
            due=due,
            computers=False,
            first=len(idle),
            turn_based=True,
            noticed=not args.no_notices,
        )
        tables = await fill(storage, planned, concurrency=args.concurrency, move_log="last")
        return tables, first_due
    finally:
        await storage.close()


async def settings(where: idle_tables.Where, args: argparse.Namespace, ids: list[int]) -> None:
    """Pictures, and the share of servers whose turn-based tables also ping the channel."""
    storage = await open_storage(where.target)
    try:
        for index, guild in enumerate(ids):
            await storage.set_guild_images(guild, args.pictures == "on")
            if index < len(ids) * args.channel_pings:
                await storage.set_guild_text(guild, "pace_pings", "both")
    finally:
        await storage.close()


async def one_run(args: argparse.Namespace, server: run.Database) -> Outcome:
    """Fill, start the bot, drive the live tables through the minute, count."""
    turn_based = not args.no_turn_based
    outcome = Outcome("with turn-based tables" if turn_based else "live tables only")
    outcome.minute = args.minute
    everything = run.make_guilds(args.live_tables + args.guilds)
    live, others = everything[: args.live_tables], everything[args.live_tables :]
    async with idle_tables.database(server, "pbp") as where:
        assert where.pool is not None, "play_by_post.py runs on PostgreSQL"
        await settings(where, args, [g.id for g in others])
        await idle_tables.prepare(where, [g.id for g in live], args.pictures == "on")
        due: list[Filled] = []
        filled_at = time.perf_counter()
        if turn_based:
            due, first_due = await fill_tables(where, args, [g.id for g in others], time.time())
        else:
            first_due = time.time() + args.lead
        outcome.fill_seconds = time.perf_counter() - filled_at
        print(f"  filled in {outcome.fill_seconds:.1f} s", flush=True)
        fake = FakeDiscord(everything, limits=DiscordLimits())
        if turn_based:
            for user in range(FIRST_USER, FIRST_USER + 2 * args.tables):
                fake.known_dm(str(user), dm_channel_of(user))
        posts = Posts()
        posts.watch(fake)
        await fake.start()
        try:
            bot = await idle_tables.start_bot(fake, where)
            outcome.ready_seconds = bot.ready_seconds
            print(f"  ready in {bot.ready_seconds:.1f} s", flush=True)
            try:
                await drive(args, fake, where, live, bot.process.pid, first_due, posts, outcome)
            finally:
                run.stop(bot.process)
        finally:
            await fake.close()
        outcome.requests = dict(fake.requests)
        assert fake.limits is not None
        outcome.rejected = dict(fake.limits.rejected)
        if turn_based:
            storage = await open_storage(where.target)
            try:
                owed, outcome.moved, outcome.ended = await owed_notices(
                    storage, due, first_due - 1.0
                )
            finally:
                await storage.close()
            outcome.owed = len(owed)
            for notice in owed:
                key = (dm_channel_of(notice.player), notice.table.planned.channel_id)
                after = [at for at in posts.at.get(key, ()) if at >= notice.started - 1.0]
                if after:
                    outcome.sent.append(min(after) - notice.started)
    return outcome


async def drive(
    args: argparse.Namespace,
    fake: FakeDiscord,
    where: idle_tables.Where,
    live: list[FakeGuild],
    pid: int,
    first_due: float,
    posts: Posts,
    outcome: Outcome,
) -> None:
    """The live tables from ready; the window is the minute of deadlines; then wait for
    the notices (up to ``--grace`` seconds after the minute)."""
    run.PLAYERS = args.players
    driver = run.Driver(fake, "cardtable", where.pool, args.seed)
    driver.pace = args.live_tables / args.live_rate if args.live_rate else 0.0
    readies = [asyncio.Event() for _ in live]
    tasks = [
        asyncio.create_task(driver.table(guild, run.players_of(index), ready))
        for index, (guild, ready) in enumerate(zip(live, readies, strict=True))
    ]
    try:
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 120)
        if time.time() > first_due:
            print("  the live tables were ready after the first deadline: raise --lead")
        await asyncio.sleep(max(0.0, first_due - time.time()))
        outcome.load = _loadavg()
        driver.window.open = True
        cpu_before, from_ = run.cpu_seconds(pid), time.monotonic()
        await asyncio.sleep(args.minute)
        cpu_after, to = run.cpu_seconds(pid), time.monotonic()
        driver.window.open = False
        window = driver.window
        outcome.latencies = window.latencies
        outcome.staleness = list(driver.staleness)
        outcome.interactions = window.interactions
        outcome.clicks = window.clicks
        outcome.errors = window.errors
        outcome.cpu = cpu_after - cpu_before
        assert fake.limits is not None
        outcome.counted = [at for at in fake.limits.counted if from_ <= at < to]
        # The notices still on their way: until no DM naming a table came for 10 s (the
        # lane paces them at most 45 a second), at most --grace.
        quiet_since, seen = time.monotonic(), posts.count()
        ends = time.monotonic() + args.grace
        while time.monotonic() < ends and time.monotonic() - quiet_since < 10.0:
            await asyncio.sleep(1.0)
            if posts.count() > seen:
                seen, quiet_since = posts.count(), time.monotonic()
    finally:
        driver.stopping = True
        await asyncio.gather(*tasks, return_exceptions=True)


def _loadavg() -> tuple[float, float, float]:
    """The machine's load averages (1, 5, 15 minutes)."""
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return float(one), float(five), float(fifteen)


def report(outcome: Outcome, args: argparse.Namespace) -> None:
    """Print one run's figures."""
    minute = outcome.minute
    load = ", ".join(f"{x:.2f}" for x in outcome.load)
    print(f"\n{outcome.label} (load average at the minute's start: {load}):")
    if outcome.owed or outcome.sent:
        sent = outcome.sent
        late = sum(1 for s in sent if s > NOTICE_TARGET_S)
        print(
            f"  {outcome.moved} of {args.turns} due tables moved on ({outcome.ended} games"
            " ended so);"
            f" notices: {outcome.owed} owed,"
            f" {len(sent)} sent ({late} after {NOTICE_TARGET_S:.0f} s);"
            f" turn start to POST p50 {percentile(sent, 0.5):.1f} s,"
            f" p99 {percentile(sent, 0.99):.1f} s, max {max(sent, default=float('nan')):.1f} s"
            f" (target p99 <= {NOTICE_TARGET_S:.0f} s)"
        )
    rejected = ", ".join(f"{k} {v}" for k, v in sorted(outcome.rejected.items())) or "none"
    print(
        f"  requests against the global limit over the {minute:.0f} s:"
        f" mean {len(outcome.counted) / minute:.1f}/s, peak {outcome.peak()} in a second"
        f" (Discord: {DISCORD_LIMIT:.0f}/s, the lane's pace {LANE_PACE:.0f}/s); 429s: {rejected}"
    )
    kinds = Counter(outcome.requests).most_common()
    print("  requests by kind (whole run): " + ", ".join(f"{k} {v}" for k, v in kinds))
    ms = [1000 * s for s in outcome.latencies]
    cpu = 1000 * outcome.cpu / max(1, outcome.interactions)
    print(
        f"  live tables ({args.live_tables} x {args.players} clickers, {args.live_rate:.0f}"
        f" moves/s offered): {outcome.clicks} clicks, p50 {percentile(ms, 0.5):.1f} ms,"
        f" p99 {percentile(ms, 0.99):.1f} ms, errors {outcome.errors};"
        f" bot CPU {cpu:.2f} ms per interaction ({outcome.cpu:.1f} s in the minute, all work)"
    )
    stale = outcome.staleness
    print(
        f"  their chip DMs: from a chip change to the DM showing it p50"
        f" {percentile(stale, 0.5):.2f} s, p95 {percentile(stale, 0.95):.2f} s ({len(stale)})"
    )


async def main(args: argparse.Namespace) -> int:
    """Pick the database and run."""
    if args.postgres:
        binaries = postgres_binaries()
        if binaries is None:
            print("play_by_post.py: error: --postgres needs initdb and pg_ctl", file=sys.stderr)
            return 2
        temporary = TemporaryServer(binaries, durable=True)
        try:
            url = await asyncio.to_thread(temporary.start)
            report(await one_run(args, run.Database(url)), args)
        finally:
            await asyncio.to_thread(temporary.stop)
        return 0
    if not args.database_url:
        print("play_by_post.py: error: --database-url or --postgres", file=sys.stderr)
        return 2
    report(await one_run(args, run.Database(args.database_url)), args)
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--database-url", default=None, help="PostgreSQL (a schema per run)")
    where.add_argument("--postgres", action="store_true", help="a throw-away PostgreSQL server")
    parser.add_argument("--tables", type=int, default=10_000, help="turn-based tables")
    parser.add_argument("--turns", type=int, default=1000, help="of them, due in the minute")
    parser.add_argument("--minute", type=float, default=60.0, help="seconds the turns pass in")
    parser.add_argument("--guilds", type=int, default=50, help="servers of the turn-based tables")
    parser.add_argument(
        "--channel-pings",
        type=float,
        default=0.2,
        help="share of those servers whose turn-based tables ping the channel too",
    )
    parser.add_argument("--live-tables", type=int, default=20)
    parser.add_argument("--players", type=int, default=4, help="clickers per live table")
    parser.add_argument("--live-rate", type=float, default=10.0, help="live moves a second")
    parser.add_argument("--pictures", choices=("on", "off"), default="on")
    parser.add_argument(
        "--lead", type=float, default=45.0, help="seconds from the fill to the first deadline"
    )
    parser.add_argument("--grace", type=float, default=120.0, help="wait after the minute")
    parser.add_argument("--concurrency", type=int, default=32, help="tables filled at once")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--no-notices",
        action="store_true",
        help="no earlier notice remembered at the tables: every DM channel is opened first"
        " (the first round of every game at once, after a restart)",
    )
    parser.add_argument(
        "--no-turn-based",
        action="store_true",
        help="the baseline: the live tables alone, the same minute",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
