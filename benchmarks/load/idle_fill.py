"""Fill a database with open tables in mid-game, idle for hours to days (issue 42).

Each table is written through the bot's own change path: its row is created as a lobby
(``Storage.create_table``), then one ``TableSession.change`` seats the people and the
computers, deals the game and plays its moves so far on a ``Draft``, and the storage's
save writes it, as a click would (the same columns, the same turn clock, whatever else
the save writes). The moves before the last one are added to the move log in bulk
(SQLite: one transaction per batch; PostgreSQL: COPY), so that the log is what the bot
would have written; ``--move-log last`` leaves them out.

The mix: No Thanks! (60 %) and Rage (40 %), 3 to 7 and 3 to 8 seats (small tables
commoner), a computer seat at a fifth of the tables, from 1 move to most of a game made
(never a finished game, and always waiting on a person). Each table's pace (its
``turn_seconds`` option) is 6 hours to 3 days: the 600 s cap is the slash command's, not
the table core's. Its turn began a while ago, so the deadline stored in its metadata
(``meta.turn.deadline``) is 1 hour to the whole pace away; a turn past its half time
was pinged (a second change, as the bot stores a ping). People are drawn from a pool
half as large as the seats, so that one person plays at several tables.

With ``--turn-based`` (issue 43) the tables are play by post instead: their pace
(``meta.pace``) is one of the turn-based speeds (1, 12, 24 or 72 hours a move), and each
person at the table has had a "your turn" DM there (``meta.turn_notices``: a DM channel of
their own, ``FIRST_DM_CHANNEL`` + their number), the people awaited now for the turn in
progress, the others for an earlier one, as the bot remembers them.

Tables are written many at once (SQLite batches saves that meet a busy thread; PostgreSQL
runs them on its pool); the script reports its own time and rate.

Run: ``uv run python benchmarks/load/idle_fill.py --tables 500 --sqlite /tmp/idle.db``
(or ``--database-url postgresql://…``, the bot's schema created if missing; with
``--new-schema`` in a schema of its own, whose URL it prints for ``idle_tables.py
--filled``).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.games import GAMES
from bot.storage import Storage, TableRecord, open_storage
from bot.table import timers
from bot.table.meta import PACES as TABLE_PACES
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec, is_computer_id

HOUR = 3600.0
DAY = 24 * HOUR
GAME_MIX = (("nothanks", 0.6), ("rage", 0.4))
# Seats by weight: small tables are commoner.
SEATS = {
    "nothanks": ((3, 30), (4, 30), (5, 22), (6, 12), (7, 6)),
    "rage": ((3, 20), (4, 30), (5, 25), (6, 15), (7, 6), (8, 4)),
}
PACES = (6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 3 * DAY)  # turn_seconds of play by post
# The turn-based speeds of /nothanks start pace: (issue 43), for --turn-based tables.
TURN_PACES = tuple(float(seconds) for seconds in TABLE_PACES.values() if seconds)
COMPUTER_SHARE = 0.2  # tables with one computer seat
MAX_MOVES = {"nothanks": 80, "rage": 120}  # moves made so far at most (a game is longer)
FIRST_USER = 710_000_000_000_000_000
FIRST_CHANNEL = 820_000_000_000_000_000
FIRST_MESSAGE = 830_000_000_000_000_000
FIRST_DM_CHANNEL = 840_000_000_000_000_000  # + a person's number: their DM channel
FIRST_NOTICE = 850_000_000_000_000_000  # + the table's number: its notices' message ids
COMPUTER_LEVEL = "normal"
MOVE_COLUMNS = ("table_id", "move_number", "player", "action", "at")


@dataclass(frozen=True, slots=True)
class Planned:
    """One table to write: where it is, who sits, how far its game is, when it is due."""

    index: int
    game: str
    guild_id: int
    channel_id: int
    people: tuple[int, ...]
    computers: int
    moves: int  # moves to make (fewer if the game would end or a computer would be acting)
    seed: int
    pace: float  # turn_seconds (turn-based: meta.pace)
    due: float  # the turn's deadline (Unix time)
    turn_based: bool = False  # play by post (issue 43): the pace is meta.pace
    noticed: bool = False  # turn-based: each person's last notice there is remembered


@dataclass
class Filled:
    """A table as written: its id, the people awaited and its move number."""

    planned: Planned
    table_id: int
    move_number: int
    acting: tuple[str, ...]
    deadline: float


# A table's deadline from its index, its pace and a random source.
Due = Callable[[int, float, random.Random], float]


def idle_due(now: float) -> Due:
    """Deadlines 1 hour to a whole pace after ``now`` (hours to days away)."""
    return lambda index, pace, rng: now + rng.uniform(HOUR, max(HOUR, pace))


def plan(
    count: int,
    *,
    guilds: Sequence[int],
    seed: int = 42,
    due: Due | None = None,
    computers: bool = True,
    first: int = 0,
    turn_based: bool = False,
    games: Sequence[tuple[str, float]] = GAME_MIX,
    noticed: bool = True,
) -> list[Planned]:
    """``count`` tables spread over ``guilds``, each in its own channel (numbered from
    ``first``, so that several fills of one database never share a channel); ``games``
    the mix of games by weight, ``turn_based`` play by post at its speeds (``noticed``:
    with each person's last notice at the table remembered)."""
    rng = random.Random(seed)
    due = due or idle_due(time.time())
    pool = max(8, count * 2)  # distinct people: about half the seats
    planned: list[Planned] = []
    for offset in range(count):
        index = first + offset
        game = rng.choices([g for g, _ in games], [w for _, w in games])[0]
        sizes = SEATS[game]
        seats = rng.choices([s for s, _ in sizes], [w for _, w in sizes])[0]
        with_computer = computers and rng.random() < COMPUTER_SHARE
        people: list[int] = []
        while len(people) < seats - with_computer:
            user = FIRST_USER + rng.randrange(pool)
            if user not in people:
                people.append(user)
        pace = rng.choice(TURN_PACES if turn_based else PACES)
        planned.append(
            Planned(
                index=index,
                game=game,
                guild_id=guilds[index % len(guilds)],
                channel_id=FIRST_CHANNEL + index,
                people=tuple(people),
                computers=int(with_computer),
                moves=rng.randint(1, MAX_MOVES[game]),
                seed=rng.getrandbits(62),
                pace=pace,
                due=due(index, pace, rng),
                turn_based=turn_based,
                noticed=turn_based and noticed,
            )
        )
    return planned


def seats_of(table: Planned) -> list[int]:
    """The seats in the order the lobby fills them: the people, then the computers."""
    return [*table.people, *(-(n + 1) for n in range(table.computers))]


def scripted_moves(spec: GameSpec, table: Planned) -> list[tuple[str, Any]]:
    """Random legal moves from the deal on a scratch copy of the game, cut back to the
    last point where the game is not over and only people are awaited."""
    players = [str(seat) for seat in seats_of(table)]
    engine = spec.new_engine(players, table.seed, spec.parse_options(options_of(table)))
    rng = random.Random(table.seed)
    moves: list[tuple[str, Any]] = []

    def people_only() -> bool:
        return not any(is_computer_id(p) for p in engine.acting_players())

    waiting_on_people = [0] if people_only() else []  # move counts awaiting only people
    while True:
        player = engine.acting_players()[0]
        action = rng.choice(list(engine.legal_actions(player)))
        engine.apply(player, action)
        if engine.is_over:
            break
        moves.append((player, action))
        if people_only():
            waiting_on_people.append(len(moves))
            if len(moves) >= table.moves:
                break
    if not waiting_on_people:
        raise ValueError(f"table {table.index}: no point of its game awaits only people")
    return moves[: waiting_on_people[-1]]


def options_of(table: Planned) -> dict[str, Any]:
    """The table's options as its slash command would give them, at a play-by-post pace
    (a turn-based table's pace is in its metadata: its options are the default ones)."""
    if table.turn_based:
        return {"open_chips": False} if table.game == "nothanks" else {}
    if table.game == "nothanks":
        return {"open_chips": False, "turn_seconds": int(table.pace)}
    return {"turn_seconds": int(table.pace)}


async def fill_one(storage: Storage, table: Planned) -> tuple[Filled, list[tuple[Any, ...]]]:
    """Write one table through the change path; the earlier moves' log rows to add."""
    spec = GAMES[table.game]
    moves = scripted_moves(spec, table)
    # The change is made as it was when the turn in progress began: its clock ends at the
    # stored deadline, one pace later.
    began = table.due - table.pace
    record = TableRecord(
        game=table.game,
        guild_id=table.guild_id,
        channel_id=table.channel_id,
        host_id=table.people[0],
        options=spec.parse_options(options_of(table)),
        meta={"locale": "en-US", "opened_at": began - 60.0}
        | ({"pace": int(table.pace)} if table.turn_based else {}),
    )
    await storage.create_table(record)
    clock = [began]
    session = TableSession(spec, record, storage, asyncio.Lock(), lambda: clock[0])
    if hasattr(timers, "due_time"):
        # Where a save also stores the next due time (issue 42), it is planned as the
        # registry plans it (Tables._session).
        setattr(session, "plan", timers.due_time)  # noqa: B010

    def step(draft: Draft) -> None:
        for user in table.people:
            draft.join(user, f"Player {user % 100_000}", "en-US")
        for number in range(table.computers):
            draft.seat_computer(COMPUTER_LEVEL, f"Computer {number + 1}")
        draft.start(by=table.people[0], seed=table.seed)
        for player, action in moves:
            if is_computer_id(player):
                draft.auto_move(player, action, timed_out=False)
            else:
                draft.human_move(player, action, expected_move=None, locale="en-US")
        draft.set_message(FIRST_MESSAGE + table.index)

    await session.change(step)
    turn = session.meta.turn
    assert turn is not None, f"table {session.id} waits on nobody"
    half = turn.deadline - table.pace / 2
    if half <= time.time():
        # Past half time the running bot has reminded the people awaited: that ping is
        # stored as its own change, as Tables._ping stores it.
        clock[0] = half
        await session.change(lambda draft: draft.mark_pinged(turn.move))
    if table.noticed:
        await session.change(partial(noticed, table, session.acting_players(), turn.since))
    logged = [
        (session.id, number, player, spec.encode_action(action), began)
        for number, (player, action) in enumerate(moves[:-1], start=1)
    ]
    filled = Filled(
        table, session.id, session.record.move_number, session.acting_players(), turn.deadline
    )
    return filled, logged


def noticed(table: Planned, acting: Sequence[str], since: int, draft: Draft) -> None:
    """Each person's last "your turn" DM at the table, as the bot remembers it: for this
    turn if they are awaited, else for an earlier one."""
    for number, user in enumerate(table.people):
        player = str(user)
        channel = FIRST_DM_CHANNEL + user - FIRST_USER
        message = FIRST_NOTICE + table.index * 10 + number
        draft.meta.turn_notices[player] = [channel, message, since if player in acting else 0]


async def log_moves(storage: Storage, rows: list[tuple[Any, ...]]) -> None:
    """Add earlier moves to the move log in one go."""
    if not rows:
        return
    pool = getattr(storage, "_pool", None)
    if pool is not None:  # PostgreSQL: COPY, far faster than a statement a row
        async with pool.acquire() as connection:
            await connection.copy_records_to_table("moves", records=rows, columns=MOVE_COLUMNS)
        return

    async def insert(tx: Any, batch: list[tuple[Any, ...]]) -> None:
        for row in batch:
            await tx.execute(
                "INSERT INTO moves (table_id, move_number, player, action, at)"
                " VALUES (?, ?, ?, ?, ?)",
                *row,
            )

    await storage._transaction(insert, rows)


async def fill(
    storage: Storage,
    tables: Sequence[Planned],
    *,
    concurrency: int = 64,
    move_log: str = "full",
    progress: Callable[[int], None] | None = None,
) -> list[Filled]:
    """Write every planned table, ``concurrency`` at a time; what was written."""
    filled: list[Filled] = []
    pending: list[tuple[Any, ...]] = []
    queue = iter(tables)
    lock = asyncio.Lock()

    async def worker() -> None:
        for table in queue:
            written, rows = await fill_one(storage, table)
            filled.append(written)
            if move_log == "full":
                pending.extend(rows)
            if len(pending) >= 20_000:
                async with lock:
                    batch = pending[:]
                    pending.clear()
                    await log_moves(storage, batch)
            if progress is not None:
                progress(len(filled))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    await log_moves(storage, pending)
    filled.sort(key=lambda each: each.planned.index)
    return filled


async def pictures(storage: Storage, guilds: Sequence[int], on: bool) -> None:
    """Store each guild's picture setting (/cardtable images), read when it comes online."""
    for guild in guilds:
        await storage.set_guild_images(guild, on)


async def main(args: argparse.Namespace) -> int:
    """Fill the database and report the time it took."""
    target: str | Path = args.database_url or args.sqlite
    if args.new_schema:
        if not args.database_url:
            print("idle_fill.py: error: --new-schema needs --database-url", file=sys.stderr)
            return 2
        from tests.backends import fresh_schema

        name, target = await fresh_schema(args.database_url)
        print(f"schema {name}: {target}", flush=True)
    guilds = [900_000_000_000_000_000 + n for n in range(args.guilds)]
    storage = await open_storage(target)
    try:
        started = time.perf_counter()
        planned = plan(
            args.tables,
            guilds=guilds,
            seed=args.seed,
            first=args.first,
            turn_based=args.turn_based,
        )
        last = [started]

        def progress(done: int) -> None:
            if done % 5000 == 0 or time.perf_counter() - last[0] > 10:
                last[0] = time.perf_counter()
                rate = done / max(1e-9, last[0] - started)
                print(f"  {done} tables, {rate:.0f}/s", flush=True)

        filled = await fill(
            storage,
            planned,
            concurrency=args.concurrency,
            move_log=args.move_log,
            progress=progress,
        )
        seconds = time.perf_counter() - started
    finally:
        await storage.close()
    moves = sum(each.move_number for each in filled)
    where = "PostgreSQL" if args.database_url else "SQLite"
    print(
        f"filled {len(filled)} tables ({moves} moves) in {seconds:.1f} s:"
        f" {len(filled) / seconds:.0f} tables/s on {where}"
    )
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=500, help="open tables to write")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sqlite", type=Path, help="a SQLite file (created if missing)")
    where.add_argument("--database-url", help="a postgresql:// URL")
    parser.add_argument("--guilds", type=int, default=20, help="servers the tables are in")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--first", type=int, default=0, help="number of the first table (its channel)"
    )
    parser.add_argument(
        "--new-schema",
        action="store_true",
        help="fill a new schema of --database-url (printed: pass its URL to idle_tables.py"
        " --filled; DROP SCHEMA it afterwards)",
    )
    parser.add_argument("--concurrency", type=int, default=64, help="tables written at once")
    parser.add_argument("--turn-based", action="store_true", help="play by post tables (issue 43)")
    parser.add_argument(
        "--move-log",
        choices=("full", "last"),
        default="full",
        help="full: every earlier move in the log too; last: only the save's own move",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
