"""What the SimCord table benchmarks (nothanks_table.py, rage_table.py) share.

The bot under SimCord with its database closed afterwards, the table registry's lookups,
the wrappers that time each click and each save, and the figures' percentiles.

    from harness import cog_named, settings_for, simulated  # beside the script, in table/
    async with simulated(create_bot(settings_for(database)), settle_timeout=30.0) as env:
        cog = cog_named(env, "NoThanks")
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import discord
import simcord
from simcord import Env
from simcord.builders import GuildHandle

from bot.client.bot import CardtableBot, create_bot
from bot.render.components import Click
from bot.runtime.settings import Settings
from bot.storage import TableRecord
from bot.table.session import TableSession
from bot.table.timers import Timers

TOKEN = "x" * 24 + ".yyyyyy." + "z" * 27
OnClick = Callable[[discord.Interaction, Click], Awaitable[None]]
SaveTable = Callable[..., Awaitable[None]]
# Seconds so far of SimCord's settle scans, read before and after a timed call.
Scans = Callable[[], float]
# A timed click: the click, its seconds, and the seconds of settle scans inside them.
NoteClick = Callable[[Click, float, float], None]
# A timed save: its move (None for a save without one), seconds, settle scans inside them.
NoteSave = Callable[[tuple[str, str] | None, float, float], None]


class Seated(Protocol):
    """A benchmark's table: its seated players play the game with this id now."""

    table_id: int


SeatedTable = TypeVar("SeatedTable", bound=Seated)


@dataclass
class BotTimes:
    """Seconds on the bot's side: per click (``on_click``) by its kind, and per save."""

    bot: dict[str, list[float]] = field(default_factory=dict)
    saves: list[float] = field(default_factory=list)


def without_timers() -> None:
    """Leave turn timers and lobby expiry out: they are not part of a click's cost.

    SimCord waits for any sleep that ends within its settle timeout, and the turn timer's
    half-time ping sleeps 30 s; every sleeping timer task also adds to SimCord's own settle
    bookkeeping (its settle loop scans every task against every timer on each pass, inside
    the clicks' timing), which is not the bot's cost. The benchmarks never advance time,
    so no timer would fire anyway.
    """
    Timers.schedule = lambda self, session: None  # type: ignore[method-assign]


def settings_for(database: Path) -> Settings:
    """Settings for a bot on this database file (no thinking workers: people play here,
    and loop_lag.py measures the workers)."""
    return Settings(token=TOKEN, database=database, ai_workers=0)


def bot_of(env: Env) -> CardtableBot:
    """The bot SimCord runs, as the cardtable bot it is."""
    return cast(CardtableBot, env.bot)


def cog_named(env: Env, name: str) -> Any:
    """The running cog of this class name (cogs load as fresh modules, so found by name)."""
    cog = bot_of(env).get_cog(name)
    assert cog is not None and type(cog).__name__ == name
    return cog


def session_of(env: Env, table_id: int) -> TableSession:
    """The open table with this id (closed tables leave the registry)."""
    session = bot_of(env).tables.get(table_id)
    assert session is not None, f"table {table_id} is not open"
    return session


def is_running(env: Env, table_id: int) -> bool:
    """Whether the table's game is still running (closed tables leave the registry)."""
    session = bot_of(env).tables.get(table_id)
    return session is not None and session.status == "running"


def running_in(env: Env, channel_id: int) -> TableSession:
    """The table running in this channel (the one its lobby's Start just started)."""
    session = bot_of(env).tables.in_channel(channel_id)
    assert session is not None and is_running(env, session.id)
    return session


async def check_saved(env: Env, table_id: int) -> None:
    """Assert that the open table's game in memory is at the move its database row holds."""
    record = await bot_of(env).storage.get_table(table_id)
    engine = session_of(env, table_id).engine
    assert record is not None and engine is not None
    assert record.move_number == engine.move_number, "memory and database disagree"


async def round_robin(
    env: Env,
    tables: Sequence[SeatedTable],
    turns: int,
    rematch: Callable[[Env, SeatedTable], Awaitable[None]],
    play: Callable[[SeatedTable], Awaitable[None]],
) -> int:
    """Play ``turns`` turns over the tables in turn, first rematching a table whose game has
    finished; return how many rematches that took."""
    rematches = 0
    for n in range(turns):
        table = tables[n % len(tables)]
        if not is_running(env, table.table_id):
            await rematch(env, table)
            rematches += 1
        await play(table)
    return rematches


def no_scans() -> float:
    """No settle scans counted: every timed call is taken whole."""
    return 0.0


def time_clicks(cog: Any, note: NoteClick, scans: Scans = no_scans) -> None:
    """Wrap the cog's ``on_click`` so that every click, answered or failed, is noted."""
    original: OnClick = cog.on_click

    async def timed_on_click(interaction: discord.Interaction, click: Click) -> None:
        """Time one click from routing to the interaction's answer."""
        start, scanned = time.perf_counter(), scans()
        try:
            await original(interaction, click)
        finally:
            note(click, time.perf_counter() - start, scans() - scanned)

    cog.on_click = timed_on_click


def time_saves(env: Env, note: NoteSave, scans: Scans = no_scans) -> None:
    """Wrap the bot's ``storage.save_table`` so that every save (with a move: the SQLite
    UPDATE + INSERT + commit) is noted."""
    storage = bot_of(env).storage
    save: SaveTable = storage.save_table

    async def timed_save(
        record: TableRecord,
        move: tuple[str, str] | None = None,
        **options: Any,
    ) -> None:
        """Time one save."""
        start, scanned = time.perf_counter(), scans()
        await save(record, move, **options)
        note(move, time.perf_counter() - start, scans() - scanned)

    storage.save_table = timed_save  # type: ignore[method-assign]


async def close_storage(bot: CardtableBot) -> None:
    """Close a bot's database, which SimCord never does (its thread would block the exit)."""
    storage = getattr(bot, "storage", None)
    if storage is not None:
        await storage.close()


@contextlib.asynccontextmanager
async def simulated(bot: CardtableBot, settle_timeout: float) -> AsyncIterator[Env]:
    """``simcord.run`` that closes the database of every bot it ran, whatever happens."""
    bots = [bot]
    try:
        # One shard: SimCord's stand-in for the count Discord would recommend.
        async with simcord.run(bot, settle_timeout=settle_timeout, shard_count=1) as env:
            try:
                yield env
            finally:
                bots.append(bot_of(env))
    finally:
        for each in dict.fromkeys(bots):
            await close_storage(each)


@contextlib.asynccontextmanager
async def bench_guild(
    database: Path, settle_timeout: float
) -> AsyncIterator[tuple[Env, GuildHandle]]:
    """A fresh bot on this database under SimCord, its slash commands synced, and a guild
    named "bench" to open the tables in."""
    async with simulated(create_bot(settings_for(database)), settle_timeout) as env:
        await bot_of(env).tree.sync()
        yield env, env.create_guild(name="bench")


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]


def ms(seconds: float) -> str:
    """Seconds as milliseconds with two decimals."""
    return f"{seconds * 1000:.2f} ms"


def summary(values: list[float]) -> str:
    """p50, p99, max and mean of a non-empty list of seconds."""
    return (
        f"p50 {ms(percentile(values, 0.50))}  p99 {ms(percentile(values, 0.99))}  "
        f"max {ms(max(values))}  mean {ms(statistics.fmean(values))}"
    )


def run(benchmark: Coroutine[Any, Any, None]) -> None:
    """Run a benchmark with warnings logged to stderr, then print the whole run's time."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    started = time.perf_counter()
    asyncio.run(benchmark)
    print(f"\ntotal run time: {time.perf_counter() - started:.1f} s")


async def on_both_backends(
    title: str, measure: Callable[[Path | str], Awaitable[list[str]]]
) -> None:
    """Print ``measure``'s lines on a fresh SQLite file, then on a fresh PostgreSQL schema
    (the server of the test suite's URL variable; skipped, and said, without one)."""
    import os
    import tempfile

    from tests.backends import URL_VARIABLE, drop_schema, fresh_schema

    with tempfile.TemporaryDirectory() as folder:
        print(f"SQLite, {title}:")
        for line in await measure(Path(folder) / "bench.db"):
            print(line)
    url = os.environ.get(URL_VARIABLE, "").strip()
    if not url:
        print(f"PostgreSQL: no server (set {URL_VARIABLE})")
        return
    name, scoped = await fresh_schema(url)
    try:
        print(f"PostgreSQL, {title}:")
        for line in await measure(scoped):
            print(line)
    finally:
        await drop_schema(url, name)
