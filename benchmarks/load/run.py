"""Load benchmark on the wire: the real bot and a do-nothing bot against a fake Discord.

For each table count N, runs side by side in one invocation (``--rounds`` times,
interleaved; the medians are reported):

- **cardtable**: the real bot (``python -m bot``: create_bot, real settings and cogs, a
  temporary SQLite database) started as a subprocess, talking HTTP and WebSocket over
  loopback to the fake Discord in this process (``fake_discord.py``);
- the do-nothing discord.py bots of ``--baselines`` (``baseline_bot.py``):
  **baseline** answers every click with discord.py's ``edit_message`` and an embed and
  buttons of the same size (the issue's comparator); **base+DM** also edits the clicking
  player's DM in place, the REST traffic of a real No Thanks! move; **lean** answers with
  the plain interaction callback that cardtable uses (no ``with_response``, nothing
  parsed back); **lean+DM** does both: the leanest bot making a move's REST calls;
  **lean+DM+save** also commits each click to SQLite before answering (a table's state,
  metadata and move row in one transaction). All of them, and cardtable, make every
  REST call through discord.py's own HTTP client: one transport, side by side. Default:
  baseline and lean+DM.

The driver opens one No Thanks! table per guild the way people do (``/nothanks start``,
a Join click per other player (``--players``, 3 by default), Start), follows each game with
its own copy of the engine (the state read once from the bot's database after Start), and
clicks Take or No thanks! for whoever is to play, as fast as answers come back: one
outstanding click per table. A finished game is followed by a new one in the same channel.
After a warm-up, it measures for ``--seconds``: clicks answered per second,
click-to-answer latency (INTERACTION_CREATE sent → interaction callback received), the
bot's CPU time (user + system, from /proc/<pid>/stat) per interaction answered (and how
much of it the event loop's thread used), and RSS with N tables running minus RSS idle.

Database and processes: SQLite in one process by default; ``--database-url
postgresql://…`` runs the bot on that PostgreSQL server, ``--postgres`` on a throw-away
server this script starts (``initdb`` in a temporary folder, as the ``postgres`` account
when run as root, a Unix socket only, fsync on unless ``--postgres-fsync off``). Each run
gets a fresh schema, dropped afterwards. ``--processes 2`` (PostgreSQL only) runs two bot
processes with ``SHARD_COUNT=2`` and ``SHARD_IDS=0`` and ``1`` (the baseline: two clients on
those shards); the fake Discord sends each guild's events to the process of its shard,
and the guilds alternate between shards. Clicks, CPU and RSS are summed over the
processes, latencies merged.

Before and after: ``--previous DIR`` also runs the cardtable of another checkout (say
``git worktree add /tmp/prev <commit>``) in the same rounds, as **previous**; its row's
ratio is this checkout's CPU per click over that one's, measured side by side.

Run: ``uv run python benchmarks/load/run.py [--tables 1 10 100] [--seconds 20]``
Timings on a shared machine are pessimistic; the CPU ratio is the robust figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

import asyncpg  # type: ignore[import-untyped]  # noqa: E402
from fake_discord import (  # noqa: E402
    APPLICATION_ID,
    DISCORD_EPOCH_MS,
    EVERY_PERMISSION,
    TIMESTAMP,
    Callback,
    DiscordLimits,
    FakeDiscord,
    FakeGuild,
    snowflake_at,
)
from heap import growth, snapshot_of, traced_bytes  # noqa: E402

from bot.engines.nothanks import PASS, TAKE, NoThanksGame  # noqa: E402
from bot.engines.rage import JOKER, Bid, Play, RageState  # noqa: E402
from bot.render.components import CUSTOM_ID, custom_id  # noqa: E402
from bot.storage import open_storage  # noqa: E402
from tests.backends import (  # noqa: E402
    TemporaryServer,
    drop_schema,
    fresh_schema,
    postgres_binaries,
)

TOKEN = "x" * 24 + ".yyyyyy." + "z" * 27
GAME = "nothanks"  # the game the tables play (--game)
EPHEMERAL_FLAG = 64
PLAYERS = 3
PASS_CHANCE = 0.6
ANSWER_TIMEOUT = 30.0
# Behind a shared proxy, the processes' shares add up to this much of the token's rate: a
# proxy that stalls for a moment forwards what it held at once, so the lanes leave room.
PROXY_SHARE = 0.9
# In a living DM: the game's table message (its link), and the chips it shows ("You have
# **13** chips", "You have 9 chips left", "You have 11 chips; keep them secret").
DM_GAME = re.compile(r"discord\.com/channels/\d+/\d+/(?P<message>\d+)")
DM_CHIPS = re.compile(r"You have \**(?P<chips>\d+)\** chip")
# How long after the window a game's final DM is waited for (the target is 5 s).
FINAL_DM_WAIT = 30.0
# Clicks each table makes before measuring starts (the deal's DMs are sent by then).
READY_AFTER = 10
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
# Targets of issue 15, measured side by side.
CPU_RATIO_TARGET = 2.0
# The do-nothing bots, by name: the flags baseline_bot.py runs with.
BASELINES: dict[str, tuple[str, ...]] = {
    "baseline": (),  # answers with discord.py's edit_message: the comparator
    "base+DM": ("--living-dm",),  # ... and edits the clicker's DM, as a move does
    "lean": ("--lean",),  # answers with the plain callback, as cardtable does
    "lean+DM": ("--lean", "--living-dm"),  # the leanest bot with a move's REST traffic
    "lean+DM+save": ("--lean", "--living-dm", "--save"),  # ... and a move's durable save
}
DEFAULT_BASELINES = ("baseline", "lean+DM")
# The bots that are cardtable: this checkout's, with --metrics the same with its metrics
# server on (CARDTABLE_METRICS_PORT) and scraped, and with --previous an earlier one's.
CARDTABLES = ("cardtable", "metrics", "previous")
# --metrics: how often the "metrics" bot is scraped (Prometheus' default is 15 s).
SCRAPE_EVERY = 5.0
PREVIOUS: list[Path] = []  # --previous: the checkout "previous" runs from


def entry_point(checkout: Path) -> Path:
    """The bot process script of a cardtable checkout (this one's, or --previous's)."""
    return checkout / "benchmarks" / "load" / "bot_process.py"


CLICKS_TARGET = 1000.0
MEMORY_TARGET_KB = 50.0


def stat_cpu_seconds(stat: Path) -> float:
    """User + system CPU time so far, from a /proc stat file (a process's or a thread's)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) so far."""
    return stat_cpu_seconds(Path(f"/proc/{pid}/stat"))


def loop_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process's main thread (the event loop's) so far."""
    return stat_cpu_seconds(Path(f"/proc/{pid}/task/{pid}/stat"))


def server_cpu_seconds(pid: int) -> float:
    """CPU time of a PostgreSQL server: its postmaster, live backends and exited ones."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = sum(int(value) for value in fields[11:15]) / TICKS  # own + waited-for children
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            child = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(child[1]) == pid:
            total += (int(child[11]) + int(child[12])) / TICKS
    return total


def rss_bytes(pid: int) -> int:
    """Resident memory of a process."""
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE


@dataclass
class Window:
    """What happened while measuring."""

    open: bool = False
    latencies: list[float] = field(default_factory=list)
    interactions: int = 0
    clicks: int = 0
    errors: int = 0
    deferred: int = 0


class Driver:
    """The fake Discord's users: open tables, follow their games, click as fast as answered."""

    def __init__(
        self, fake: FakeDiscord, mode: str, database: Path | asyncpg.Pool, seed: int
    ) -> None:
        self.fake = fake
        self.mode = mode
        self.database = database
        self.rng = random.Random(seed)
        self.waiting: dict[int, asyncio.Future[Callback]] = {}
        self.window = Window()
        self.stopping = False
        self.games_started = 0
        self.moves = 0  # moves the bot took, every table, the whole run (window or not)
        # Seconds between one table's clicks (0: as fast as answered): the moves offered.
        self.pace = 0.0
        # Per player, when their chips changed first since their DM last changed.
        self.unshown: dict[str, float] = {}
        self.staleness: list[float] = []  # seconds from a chip change to a DM showing it
        # A game's final DM: per player, what their DM of each game (named by its table
        # message's id, in the DM's link) shows; per (player, game) ended in the window
        # and not shown yet, (when it ended, its final chips); and the seconds from a
        # game's end to each player's DM showing the final chips.
        self.dm_chips: dict[tuple[str, str], int] = {}
        self.final_pending: dict[tuple[str, str], tuple[float, int]] = {}
        self.final_lag: list[float] = []
        self._final_seen = asyncio.Event()
        fake.on_callback = self.answered
        fake.on_dm = self.dm_shown
        self._baseline_tables = iter(range(1, 10**9))

    def dm_shown(self, user: str, at: float, content: str) -> None:
        """A DM of this player was sent or edited: it shows the changes made before it."""
        changed = self.unshown.pop(user, None)
        if changed is not None and self.window.open:
            self.staleness.append(at - changed)
        game, chips = DM_GAME.search(content), DM_CHIPS.search(content)
        if game is None or chips is None:
            return  # the do-nothing bots' DMs name no game
        key = (user, game["message"])
        self.dm_chips[key] = int(chips["chips"])
        pending = self.final_pending.get(key)
        if pending is not None and pending[1] == int(chips["chips"]):
            del self.final_pending[key]
            self.final_lag.append(max(0.0, at - pending[0]))
            self._final_seen.set()

    async def finals_shown(self) -> None:
        """Until every game's final DM was seen."""
        while self.final_pending:
            self._final_seen.clear()
            await self._final_seen.wait()

    def game_ended(self, message: dict[str, Any], game: NoThanksGame, at: float) -> None:
        """A game ended at ``at`` (its last answer): each player's DM must show the final
        chips (at once if it already does)."""
        if not self.window.open or self.mode not in CARDTABLES:
            return
        for seat, player in enumerate(game.players):
            key, chips = (player, str(message.get("id"))), game.chips[seat]
            if self.dm_chips.get(key) == chips:
                self.final_lag.append(0.0)
            else:
                self.final_pending[key] = (at, chips)

    def answered(self, interaction_id: int, callback: Callback) -> None:
        """The fake got an interaction callback: wake whoever waits for it."""
        future = self.waiting.pop(interaction_id, None)
        if future is not None and not future.done():
            future.set_result(callback)

    async def interact(self, guild: FakeGuild, payload: dict[str, Any]) -> tuple[Callback, float]:
        """Send one interaction; its callback and the seconds it took to arrive."""
        interaction_id = self.fake.new_id()
        payload["id"] = str(interaction_id)
        payload["token"] = f"token{interaction_id}"
        future: asyncio.Future[Callback] = asyncio.get_running_loop().create_future()
        self.waiting[interaction_id] = future
        sent = time.perf_counter()
        await self.fake.send_interaction(guild.id, payload)
        callback = await asyncio.wait_for(future, ANSWER_TIMEOUT)
        if self.window.open:
            self.window.interactions += 1
        return callback, callback.at - sent

    # -- one table ----------------------------------------------------------------------

    async def table(self, guild: FakeGuild, users: list[int], ready: asyncio.Event) -> None:
        """Open the table, play games back to back until stopped."""
        if GAME == "rage":
            await self.rage_table(guild, users, ready)
            return
        played = 0
        next_at = time.perf_counter()
        while not self.stopping:
            message, table_id, game = await self.open_game(guild, users)
            while not game.is_over and not self.stopping:
                if self.pace:
                    next_at = max(next_at + self.pace, time.perf_counter())
                    await asyncio.sleep(next_at - time.perf_counter())
                played += 1
                if played == READY_AFTER:
                    ready.set()  # past the first game's start, its DMs and first moves
                player = game.active_player
                assert player is not None
                chips = game.chips[game.seat_of(player)]
                action = PASS if chips and self.rng.random() < PASS_CHANCE else TAKE
                button = custom_id(GAME, table_id, game.move_number, action.value)
                payload = component(guild, int(player), message, button)
                callback, seconds = await self.interact(guild, payload)
                if callback.message is not None:
                    message = callback.message
                if self.window.open and callback.type == 6:
                    self.window.deferred += 1  # answered later by editing; the move stands
                if callback.type not in (6, 7) or callback.ephemeral:
                    # Not the table's answer: out of step with the bot; catch up.
                    if self.window.open:
                        self.window.errors += 1
                    game = await self.game_state(table_id, game.players)
                    continue
                game.apply(player, action)
                self.moves += 1
                self.unshown.setdefault(player, callback.at)
                if game.is_over:
                    self.game_ended(message, game, callback.at)
                if self.window.open:
                    self.window.clicks += 1
                    self.window.latencies.append(seconds)

    async def rage_table(self, guild: FakeGuild, users: list[int], ready: asyncio.Event) -> None:
        """Rage: open the table and play random legal bids and cards from each player's
        private panel (the table message is edited beside each answer), game after game."""
        played = 0
        while not self.stopping:
            _, table_id, _ = await self.open_game(guild, users)
            state = await self.rage_state(table_id)
            # The private panel the clicks come from: an ephemeral message of the bot's.
            panel = {"id": str(self.fake.new_id()), "flags": EPHEMERAL_FLAG, "components": []}
            next_at = time.perf_counter()
            while not state.is_over and not self.stopping:
                if self.pace:
                    next_at = max(next_at + self.pace, time.perf_counter())
                    await asyncio.sleep(next_at - time.perf_counter())
                played += 1
                if played == READY_AFTER:
                    ready.set()
                player = state.acting_players()[0]
                action = self.rng.choice(state.legal_actions(player))
                button = rage_button(table_id, state, action)
                callback, seconds = await self.interact(
                    guild, component(guild, int(player), panel, button)
                )
                if self.window.open and callback.type == 6:
                    self.window.deferred += 1
                if callback.type not in (6, 7):
                    if self.window.open:
                        self.window.errors += 1
                    state = await self.rage_state(table_id)
                    continue
                state.apply(player, action)
                self.moves += 1
                if self.window.open:
                    self.window.clicks += 1
                    self.window.latencies.append(seconds)

    async def rage_state(self, table_id: int) -> RageState:
        """The Rage game as the bot stored it (SQLite only)."""
        assert isinstance(self.database, Path), "the Rage load runs on SQLite"
        for _ in range(300):
            state = await asyncio.to_thread(read_state, self.database, table_id)
            if state is not None:
                return RageState.from_dict(state)
            await asyncio.sleep(0.1)
        raise RuntimeError(f"table {table_id} has no stored game")

    async def open_game(
        self, guild: FakeGuild, users: list[int]
    ) -> tuple[dict[str, Any], int, NoThanksGame]:
        """`/nothanks start`, a Join per other player, Start; the table's message, id, game."""
        callback, _ = await self.interact(guild, slash(guild, users[0], GAME, "start"))
        message = callback.message or {}
        table_id = self.table_id_in(message)
        for user in users[1:]:
            button = custom_id(GAME, table_id, 0, "join")
            callback, _ = await self.interact(guild, component(guild, user, message, button))
            message = callback.message or message
        button = custom_id(GAME, table_id, 0, "start")
        callback, _ = await self.interact(guild, component(guild, users[0], message, button))
        message = callback.message or message
        self.games_started += 1
        if GAME == "rage":
            return message, table_id, NoThanksGame.new([str(u) for u in users], seed=1)
        return message, table_id, await self.game_state(table_id, [str(u) for u in users])

    def table_id_in(self, message: dict[str, Any]) -> int:
        """The table id the bot put into its buttons (the baseline's: a made-up one)."""
        if self.mode not in CARDTABLES:
            return next(self._baseline_tables)
        for row in message.get("components", []):
            for item in row.get("components", []):
                match = CUSTOM_ID.fullmatch(item.get("custom_id", ""))
                if match is not None:
                    return int(match["table"])
        raise RuntimeError(f"no table button in the answer: {message!r:.300}")

    async def game_state(self, table_id: int, players: list[str]) -> NoThanksGame:
        """The game as the bot dealt it (read once from its database); baseline: a deal."""
        if self.mode not in CARDTABLES:
            return NoThanksGame.new(players, seed=self.rng.getrandbits(63))
        for _ in range(300):
            # A Start answered by deferring is saved just after its answer: wait for it.
            if isinstance(self.database, Path):
                game = await asyncio.to_thread(read_game, self.database, table_id)
            else:
                game = await read_postgres_game(self.database, table_id)
            if game is not None:
                return game
            await asyncio.sleep(0.1)
        raise RuntimeError(f"table {table_id} has no stored game")


def rage_button(table_id: int, state: RageState, action: Bid | Play) -> str:
    """The panel button that makes this move."""
    move = state.move_number
    if isinstance(action, Bid):
        return custom_id(GAME, table_id, move, "bid", f"{state.round}_{action.tricks}")
    if action.card == JOKER:
        assert action.colour is not None
        return custom_id(GAME, table_id, move, "joker", action.colour.code)
    return custom_id(GAME, table_id, move, "play", action.card.code)


def read_state(database: Path, table_id: int) -> dict[str, Any] | None:
    """The table's stored state as a dict, or None before it is dealt."""
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        row = db.execute("SELECT state FROM tables WHERE id = ?", (table_id,)).fetchone()
    if row is None or row[0] is None:
        return None
    state: dict[str, Any] = json.loads(row[0])
    return state


def read_game(database: Path, table_id: int) -> NoThanksGame | None:
    """The table's stored game, or None before it is dealt (read-only, beside the bot)."""
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        row = db.execute("SELECT state FROM tables WHERE id = ?", (table_id,)).fetchone()
    if row is None or row[0] is None:
        return None
    return NoThanksGame.from_dict(json.loads(row[0]))


async def read_postgres_game(pool: asyncpg.Pool, table_id: int) -> NoThanksGame | None:
    """The table's stored game on PostgreSQL, or None before it is dealt."""
    state = await pool.fetchval("SELECT state FROM tables WHERE id = $1", table_id)
    return None if state is None else NoThanksGame.from_dict(json.loads(state))


# -- interaction payloads -------------------------------------------------------------------


def member(user_id: int) -> dict[str, Any]:
    """A guild member as an interaction carries it."""
    return {
        "user": {
            "id": str(user_id),
            "username": f"player{user_id % 100000}",
            "discriminator": "0",
            "global_name": f"Player {user_id % 1000}",
            "avatar": None,
        },
        "roles": [],
        "joined_at": TIMESTAMP,
        "deaf": False,
        "mute": False,
        "flags": 0,
        "permissions": "3072",  # view channel and send messages: no manager
    }


def base_interaction(guild: FakeGuild, user_id: int, kind: int) -> dict[str, Any]:
    """What every interaction in a guild channel carries."""
    return {
        "application_id": str(APPLICATION_ID),
        "type": kind,
        "version": 1,
        "guild_id": str(guild.id),
        "channel_id": str(guild.channel_id),
        "channel": guild.channel_payload(),
        "member": member(user_id),
        "app_permissions": EVERY_PERMISSION,
        "locale": "en-US",
        "guild_locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "authorizing_integration_owners": {"0": str(guild.id)},
        "context": 0,
    }


def slash(guild: FakeGuild, user_id: int, group: str, name: str) -> dict[str, Any]:
    """`/<group> <name>` with no options."""
    payload = base_interaction(guild, user_id, 2)
    payload["data"] = {
        "id": "1",
        "name": group,
        "type": 1,
        "guild_id": str(guild.id),
        "options": [{"type": 1, "name": name, "options": []}],
    }
    return payload


def component(
    guild: FakeGuild, user_id: int, message: dict[str, Any], button: str
) -> dict[str, Any]:
    """A button click on a message (as last answered, so it shows the button)."""
    payload = base_interaction(guild, user_id, 3)
    payload["data"] = {"custom_id": button, "component_type": 2}
    shown = dict(message)
    shown["channel_id"] = str(guild.channel_id)
    if not any(
        item.get("custom_id") == button
        for row in shown.get("components", [])
        for item in row.get("components", [])
    ):
        # The baseline's message shows other ids; Discord only sends clicks on shown buttons.
        row = {
            "type": 1,
            "components": [{"type": 2, "style": 2, "label": "·", "custom_id": button}],
        }
        shown["components"] = [row]
    payload["message"] = shown
    return payload


# -- one run --------------------------------------------------------------------------------


@dataclass
class Result:
    """One run's figures."""

    mode: str
    tables: int
    store: str
    processes: int
    seconds: float
    clicks: int
    interactions: int
    errors: int
    deferred: int
    cpu: float
    loop_cpu: float  # of cpu, the main threads' (the event loop; the rest: worker threads)
    db_cpu: float | None  # the PostgreSQL server's, when it runs here (--postgres)
    latencies: list[float]
    rss_idle: int  # summed over the processes, as is rss_loaded
    rss_loaded: int
    requests: dict[str, int]
    heap_idle: list[tracemalloc.Snapshot] | None = None  # one per process
    heap_loaded: list[tracemalloc.Snapshot] | None = None
    # With Discord's limits enforced (--limits): requests counted against the global
    # limit while measuring, 429s by scope, invalid requests in the last 10 minutes, DM
    # staleness samples (s), and players whose last change no DM showed by the end.
    counted: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    invalid: int = 0
    staleness: list[float] = field(default_factory=list)
    unshown: int = 0
    # Seconds from each game's end (in the window) to each player's DM showing the final
    # chips, and the players' final DMs never seen to (within FINAL_DM_WAIT after).
    final_lag: list[float] = field(default_factory=list)
    final_missing: int = 0
    # REST requests by the Host they named, and the proxy's (with --proxy).
    hosts: dict[str, int] = field(default_factory=dict)
    direct: dict[str, int] = field(default_factory=dict)  # to the fake's own host
    proxy_host: str | None = None
    # Over the whole run (set-up and warm-up too, like ``requests``): games started and
    # moves the bot took.
    games: int = 0
    moves: int = 0

    @property
    def clicks_per_second(self) -> float:
        """Game clicks answered per second."""
        return self.clicks / self.seconds

    @property
    def db_ms_per_interaction(self) -> str:
        """The PostgreSQL server's CPU per interaction answered, in ms ("-": not measured)."""
        if self.db_cpu is None or self.mode not in CARDTABLES:
            return "-"  # the baseline stores nothing: the server idles beside it
        return f"{1000 * self.db_cpu / max(1, self.interactions):.3f}"

    @property
    def cpu_ms_per_interaction(self) -> float:
        """Bot CPU per interaction answered (game clicks and table openings alike)."""
        return 1000 * self.cpu / max(1, self.interactions)

    def percentile(self, q: float) -> float:
        """Click-to-answer latency at this quantile, in ms."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def kb_per_table(self) -> float:
        """(RSS with the tables running - RSS idle) / tables, in KB.

        Summed over the processes and divided by every table: with the tables spread
        evenly, that is each process's growth per table it runs.
        """
        return (self.rss_loaded - self.rss_idle) / self.tables / 1024

    @property
    def setup(self) -> str:
        """Database and process count, e.g. ``postgres×2`` (a baseline stores nothing, or
        in SQLite with ``--save``)."""
        if self.mode in CARDTABLES:
            store = self.store
        else:
            store = "sqlite" if "--save" in BASELINES.get(self.mode, ()) else "no db"
        return f"{store}×{self.processes}"


def make_guilds(count: int) -> list[FakeGuild]:
    """Guilds one millisecond apart: guild i is on shard i % shard_count.

    The shard is ``(guild_id >> 22) % shard_count``, the id's milliseconds since Discord's
    epoch; starting on a multiple of every small shard count spreads tables evenly.
    """
    start = (int(time.time() * 1000) - 10_000_000 - DISCORD_EPOCH_MS) // 720 * 720
    start += DISCORD_EPOCH_MS
    return [
        FakeGuild(snowflake_at(start + i), snowflake_at(start + i, 1), f"g{i}")
        for i in range(count)
    ]


@dataclass
class Database:
    """Where the bot under test keeps its tables: SQLite, or a PostgreSQL server."""

    server_url: str | None = None  # None: SQLite in each run's temporary folder
    server_pid: int | None = None  # the server's postmaster, when it runs here

    def cpu(self) -> float | None:
        """The server's CPU time so far (None: not measured)."""
        return None if self.server_pid is None else server_cpu_seconds(self.server_pid)

    @property
    def name(self) -> str:
        """How the report names it."""
        return "sqlite" if self.server_url is None else "postgres"

    @contextlib.asynccontextmanager
    async def for_run(self, folder: Path) -> AsyncIterator[tuple[str | None, Path | asyncpg.Pool]]:
        """A fresh database for one run: (DATABASE_URL or None, what the driver reads)."""
        if self.server_url is None:
            yield None, folder / "p0" / "cardtable.db"
            return
        schema, url = await fresh_schema(self.server_url)
        try:
            pool = await asyncpg.create_pool(url, min_size=1, max_size=4)
            try:
                yield url, pool
            finally:
                await pool.close()
        finally:
            await drop_schema(self.server_url, schema)


def spawn(
    mode: str,
    base_url: str,
    folder: Path,
    profile: Path | None,
    heap: Path | None,
    database_url: str | None = None,
    shard: tuple[int, int] | None = None,
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start the bot under test (or the baseline) as its own process.

    ``shard`` is (this process's shard id, shard count) when several processes share the
    guilds; ``folder`` is the process's own (its SQLite file, or its heartbeat).
    """
    env = dict(os.environ)
    for name in ("DATABASE_URL", "SHARD_COUNT", "SHARD_IDS"):
        env.pop(name, None)
    env.update(
        DISCORD_TOKEN=TOKEN,
        CARDTABLE_DATABASE=str(folder / "cardtable.db"),
        CARDTABLE_LOG_LEVEL="WARNING",
        # No computer players here: no idle worker process that a stop could orphan.
        CARDTABLE_AI_WORKERS="0",
        PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT)]),
    )
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    if shard is not None:
        env.update(SHARD_IDS=str(shard[0]), SHARD_COUNT=str(shard[1]))
    env.update(extra_env or {})
    if mode in ("cardtable", "metrics"):
        script = entry_point(ROOT)
    elif mode == "previous":
        # The earlier checkout's own entry point, with its own code first on the path.
        previous = PREVIOUS[0]
        script = entry_point(previous)
        env["PYTHONPATH"] = os.pathsep.join([str(script.parent), str(previous)])
    else:
        script = HERE / "baseline_bot.py"
    command = [sys.executable, str(script), base_url]
    if profile is not None and mode == "cardtable":
        command += ["--profile", str(profile)]
    if heap is not None:
        command += ["--tracemalloc", str(heap)]
    command += BASELINES.get(mode, ())
    log = (folder / f"{mode}.log").open("wb")
    # The folder is the working directory: no developer's .env is read.
    return subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)


def free_port() -> int:
    """A TCP port no one listens on now (for the bot's metrics server)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def scrape_every(port: int, every: float) -> int:
    """GET /metrics from the bot every ``every`` seconds, as Prometheus would, until
    cancelled; returns how many scrapes answered (each checked for the moves counter)."""
    import urllib.request

    def get() -> bytes:
        url = f"http://127.0.0.1:{port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            return bytes(response.read())

    answered = 0
    try:
        while True:
            body = await asyncio.to_thread(get)
            assert b"cardtable_moves_total" in body
            answered += 1
            await asyncio.sleep(every)
    except asyncio.CancelledError:
        return answered


def spawn_proxy(upstream: str, folder: Path) -> subprocess.Popen[bytes]:
    """A real rate-limiting proxy process (nirn.py) in front of ``upstream``; it writes
    its port to ``folder``/proxy.port once it serves."""
    log = (folder / "proxy.log").open("wb")
    env = {**os.environ, "ENABLE_METRICS": "false", "LOG_LEVEL": "warning"}
    command = [sys.executable, str(HERE / "proxy_process.py"), upstream]
    command.append(str(folder / "proxy.port"))
    return subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)


async def start_proxy(upstream: str, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The proxy process in front of ``upstream``, and its URL once it serves (polled for
    its port file: no fixed wait)."""
    port_file = folder / "proxy.port"
    proxy = spawn_proxy(upstream, folder)
    deadline = time.monotonic() + 60
    while not port_file.exists():
        if proxy.poll() is not None:
            raise RuntimeError(f"the proxy exited with {proxy.returncode} before serving")
        if time.monotonic() > deadline:
            stop(proxy)
            raise RuntimeError("the proxy did not serve within 60 s")
        await asyncio.sleep(0.05)
    return proxy, f"http://127.0.0.1:{port_file.read_text()}"


async def wait_connected(
    fake: FakeDiscord, guilds: int, bots: list[subprocess.Popen[bytes]]
) -> None:
    """Until every bot has identified and been sent its guilds (no fixed wait for ready:
    discord.py dispatches it about two seconds after the last guild, and the tables' first
    commands, answered within ANSWER_TIMEOUT, simply come after it on a slow machine)."""
    deadline = time.monotonic() + 60
    while fake.guilds_sent < guilds or len(fake.shards) < len(bots):
        for bot in bots:
            if bot.poll() is not None:
                raise RuntimeError(f"a bot exited with {bot.returncode} before connecting")
        if time.monotonic() > deadline:
            raise RuntimeError("the bot did not connect within 60 s")
        await asyncio.sleep(0.05)


def pin_cpus(pids: list[int]) -> None:
    """Each bot process on one CPU of its own, the last ones; this process on the others."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < len(pids) + 1:
        raise RuntimeError(f"--pin needs {len(pids) + 1} CPUs, this machine lets us use {cpus}")
    for pid, cpu in zip(pids, reversed(cpus), strict=False):
        for task in Path(f"/proc/{pid}/task").iterdir():  # every thread, the database's too
            os.sched_setaffinity(int(task.name), {cpu})
    os.sched_setaffinity(0, set(cpus[: len(cpus) - len(pids)]))


def sample(pid: int, seconds: float, out: Path | None) -> subprocess.Popen[bytes] | None:
    """py-spy the bot while measuring (collapsed stacks; it needs ptrace, so root)."""
    if out is None:
        return None
    spy = shutil.which("py-spy")
    if spy is None:
        raise RuntimeError("py-spy is not installed: uv run --with py-spy python ...")
    command = [spy, "record", "--pid", str(pid), "--duration", str(int(seconds))]
    command += ["--rate", "250", "--nonblocking", "--format", "raw", "--output", str(out)]
    command += ["--threads"] if os.environ.get("LOAD_SPY_ALL") else ["--gil"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def run_once(
    mode: str,
    tables: int,
    seconds: float,
    warmup: float,
    seed: int,
    profile: Path | None,
    py_spy: Path | None = None,
    traced: bool = False,
    storage: Database | None = None,
    processes: int = 1,
    pictures: bool = True,
    pin: bool = False,
    moves_per_second: float | None = None,
    limits: bool = False,
    proxy: bool = False,
    share: float | None = None,
) -> Result:
    """The bot in 1 or more processes, N tables: warm up, measure, stop (traced: the heap).

    ``pin``: each bot process on a CPU of its own (the last ones), this driver and the
    fake Discord on the first: clicks per second is then what one core sustains.
    """
    storage = storage or Database()
    guilds = make_guilds(tables)
    fake = FakeDiscord(guilds, limits=DiscordLimits() if limits else None)
    base_url = await fake.start()
    with tempfile.TemporaryDirectory(prefix=f"load-{mode}-") as tmp:
        folder = Path(tmp)
        folders = [folder / f"p{index}" for index in range(processes)]
        for each in folders:
            each.mkdir()
        heaps = [each / "heap.snapshot" for each in folders] if traced else None
        bots: list[subprocess.Popen[bytes]] = []
        extra_env: dict[str, str] = {}
        proxy_process: subprocess.Popen[bytes] | None = None
        proxy_url: str | None = None
        metrics_port = free_port() if mode == "metrics" else None
        if metrics_port is not None:
            extra_env["CARDTABLE_METRICS_PORT"] = str(metrics_port)
        if proxy:
            # Every process's REST calls through one proxy process; each paces itself to
            # its share of the token's rate, so that their sum stays under the limit,
            # leaving a tenth more for the proxy's jitter (as docs/deployment.md advises).
            proxy_process, proxy_url = await start_proxy(base_url, folder)
            extra_env = {
                "DISCORD_API_BASE": proxy_url,
                "CARDTABLE_REST_SHARE": f"{share or PROXY_SHARE / processes:.6f}",
            }
        try:
            async with storage.for_run(folder) as (database_url, database):
                if not pictures and mode in CARDTABLES:
                    target = database_url or folders[0] / "cardtable.db"
                    await pictures_off(target, [guild.id for guild in guilds])
                for index, each in enumerate(folders):
                    shard = (index, processes) if processes > 1 else None
                    bots.append(
                        spawn(
                            mode,
                            base_url,
                            each,
                            numbered(profile, index, processes),
                            None if heaps is None else heaps[index],
                            database_url,
                            shard,
                            extra_env,
                        )
                    )
                pids = [bot.pid for bot in bots]
                if pin:
                    pin_cpus(pids)
                await wait_connected(fake, tables, bots)
                rss_idle = sum(map(rss_bytes, pids))
                heap_idle = await heaps_of(pids, heaps)
                driver = Driver(fake, mode, database, seed)
                if moves_per_second:
                    driver.pace = tables / moves_per_second
                readies = [asyncio.Event() for _ in guilds]
                tasks = [
                    asyncio.create_task(driver.table(guild, players_of(index), ready))
                    for index, (guild, ready) in enumerate(zip(guilds, readies, strict=True))
                ]
                await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 120)
                await asyncio.sleep(warmup)
                window = driver.window
                window.open = True
                db_before = storage.cpu()
                cpu_before, started = sum(map(cpu_seconds, pids)), time.perf_counter()
                window_from = time.monotonic()
                loop_before = sum(map(loop_cpu_seconds, pids))
                spies = [
                    sample(pid, seconds, numbered(py_spy, index, processes))
                    for index, pid in enumerate(pids)
                    if mode == "cardtable"
                ]
                scraping = (
                    None
                    if metrics_port is None
                    else asyncio.create_task(scrape_every(metrics_port, SCRAPE_EVERY))
                )
                await asyncio.sleep(seconds)
                if scraping is not None:
                    scraping.cancel()
                    print(f"  scraped /metrics {await scraping} times", flush=True)
                cpu_after, ended = sum(map(cpu_seconds, pids)), time.perf_counter()
                window_to = time.monotonic()
                loop_after = sum(map(loop_cpu_seconds, pids))
                db_after = storage.cpu()
                for spy in spies:
                    if spy is not None:
                        await asyncio.to_thread(spy.wait)
                window.open = False
                driver.stopping = True
                # Games that ended near the window's close: their final DMs may still come.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(driver.finals_shown(), FINAL_DM_WAIT)
                results = await asyncio.gather(*tasks, return_exceptions=True)
                failures = [r for r in results if isinstance(r, BaseException)]
                if failures:
                    raise RuntimeError(f"{len(failures)} tables failed: {failures[0]!r}")
                await asyncio.sleep(0.5)
                rss_loaded = sum(map(rss_bytes, pids))
                heap_loaded = await heaps_of(pids, heaps)
                for bot in bots:
                    stop(bot)  # before the run's schema is dropped
                return Result(
                    mode=mode,
                    tables=tables,
                    store=storage.name,
                    processes=processes,
                    seconds=ended - started,
                    clicks=window.clicks,
                    interactions=window.interactions,
                    errors=window.errors,
                    deferred=window.deferred,
                    cpu=cpu_after - cpu_before,
                    loop_cpu=loop_after - loop_before,
                    db_cpu=None if db_after is None or db_before is None else db_after - db_before,
                    latencies=window.latencies,
                    rss_idle=rss_idle,
                    rss_loaded=rss_loaded,
                    requests=dict(fake.requests),
                    heap_idle=heap_idle,
                    heap_loaded=heap_loaded,
                    counted=0
                    if fake.limits is None
                    else sum(1 for at in fake.limits.counted if window_from <= at < window_to),
                    rejected={} if fake.limits is None else dict(fake.limits.rejected),
                    invalid=0 if fake.limits is None else fake.limits.invalid_in_window(),
                    staleness=driver.staleness,
                    unshown=len(driver.unshown),
                    final_lag=driver.final_lag,
                    final_missing=len(driver.final_pending),
                    hosts=dict(fake.hosts),
                    direct=dict(fake.direct),
                    proxy_host=None if proxy_url is None else proxy_url.split("//", 1)[1],
                    games=driver.games_started,
                    moves=driver.moves,
                )
        except BaseException:
            for each in folders:
                log = each / f"{mode}.log"
                if log.exists():
                    print(f"{log.name} of {each.name}:", file=sys.stderr)
                    print(log.read_text()[-3000:], file=sys.stderr)
            raise
        finally:
            for bot in bots:
                stop(bot)
            if proxy_process is not None:
                stop(proxy_process)
            if pin:
                os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
            await fake.close()


async def pictures_off(target: Path | str, guild_ids: list[int]) -> None:
    """`/cardtable images show:off` in every guild, stored before the bot starts.

    The bot reads a guild's setting when the guild comes online, so it must be there by
    then; the bot's own storage creates the schema and stores it.
    """
    store = await open_storage(target)
    try:
        for guild_id in guild_ids:
            await store.set_guild_images(guild_id, False)
    finally:
        await store.close()


def numbered(path: Path | None, index: int, processes: int) -> Path | None:
    """One output file per process: ``path`` itself for one, ``path.p<index>`` for more."""
    if path is None or processes == 1:
        return path
    return path.with_name(f"{path.name}.p{index}")


async def heaps_of(pids: list[int], heaps: list[Path] | None) -> list[tracemalloc.Snapshot] | None:
    """Each process's heap snapshot (None when not tracing)."""
    if heaps is None:
        return None
    return [await snapshot_of(pid, heap) for pid, heap in zip(pids, heaps, strict=True)]


def players_of(index: int) -> list[int]:
    """The people at table ``index``."""
    return [700_000_000_000_000_000 + 10 * index + seat for seat in range(PLAYERS)]


def stop(bot: subprocess.Popen[bytes]) -> None:
    """Ctrl+C the bot (it closes cleanly), or kill it if it hangs."""
    if bot.poll() is None:
        bot.send_signal(signal.SIGINT)
        try:
            bot.wait(20)
        except subprocess.TimeoutExpired:
            bot.kill()
            bot.wait()


# -- reporting ------------------------------------------------------------------------------


def report(groups: list[list[list[Result]]]) -> Iterator[str]:
    """The figures, one line per bot and table count (its median run): on each baseline's
    line, cardtable's CPU per click over that baseline's."""
    yield (
        f"{'tables':>6} {'bot':<9} {'setup':<10} {'clicks/s':>9} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'CPU ms/click':>12} {'DB ms':>6} {'cardtable ÷':>11} {'1-core/s':>8} "
        f"{'KB/table':>9} {'errors':>6} {'deferred':>8}"
    )
    for group in groups:
        real = median_run(group[0]).cpu_ms_per_interaction
        for index, results in enumerate(group):
            result = median_run(results)
            ratio = real / max(1e-9, result.cpu_ms_per_interaction)
            shown = f"{ratio:>10.2f}×" if index else f"{'':>11}"
            yield (
                f"{result.tables:>6} {result.mode:<9} {result.setup:<10} "
                f"{result.clicks_per_second:>9.0f} "
                f"{result.percentile(0.5):>7.2f} {result.percentile(0.99):>7.2f} "
                f"{result.cpu_ms_per_interaction:>12.3f} {result.db_ms_per_interaction:>6} "
                f"{shown} "
                f"{1000 / max(1e-9, result.cpu_ms_per_interaction):>8.0f} "
                f"{result.kb_per_table:>9.1f} "
                f"{result.errors:>6} {result.deferred:>8}"
            )


async def main(args: argparse.Namespace) -> int:
    """Check the options, start PostgreSQL if asked, and measure."""
    problem = refusal(args)
    if problem is not None:
        print(f"run.py: error: {problem}", file=sys.stderr)
        return 2
    if not args.postgres:
        return await measure(args, Database(args.database_url))
    binaries = postgres_binaries()
    if binaries is None:
        print("run.py: error: --postgres needs initdb and pg_ctl (postgresql)", file=sys.stderr)
        return 2
    server = TemporaryServer(binaries, durable=args.postgres_fsync == "on")
    try:
        url = await asyncio.to_thread(server.start)
        print(f"PostgreSQL: a temporary server on a Unix socket, fsync {args.postgres_fsync}")
        postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
        return await measure(args, Database(url, postmaster))
    finally:
        await asyncio.to_thread(server.stop)


def refusal(args: argparse.Namespace) -> str | None:
    """Why these options cannot run, or None."""
    if args.postgres and args.database_url:
        return "--postgres starts a server of its own: give it or --database-url, not both"
    if args.database_url and not args.database_url.startswith(("postgresql://", "postgres://")):
        return "--database-url must be a postgresql:// URL"
    if args.processes < 1:
        return "--processes must be at least 1"
    if args.rounds < 1:
        return "--rounds must be at least 1"
    if args.processes > 1 and not (args.postgres or args.database_url):
        return (
            f"--processes {args.processes} needs PostgreSQL (--postgres or --database-url): "
            "one SQLite file cannot be shared between processes"
        )
    return None


async def measure(args: argparse.Namespace, storage: Database) -> int:
    """Every table count: cardtable and each baseline, ``--rounds`` times, and the report."""
    if args.memory:
        return await memory(args, storage)
    modes = (
        "cardtable",
        *(("metrics",) if args.metrics else ()),
        *args.baselines,
        *(("previous",) if args.previous else ()),
    )
    groups: list[list[list[Result]]] = []  # per table count: per mode, one result a round
    for tables in args.tables:
        group: list[list[Result]] = [[] for _ in modes]
        for round_ in range(args.rounds):
            # Interleaved, so that a slower spell of this shared machine hits every bot.
            for index, mode in enumerate(modes):
                profile = Path(args.profile) if args.profile and round_ == 0 else None
                spy = Path(f"{args.py_spy}.{tables}") if args.py_spy and round_ == 0 else None
                result = await run_once(
                    mode,
                    tables,
                    args.seconds,
                    args.warmup,
                    args.seed,
                    profile,
                    spy,
                    storage=storage,
                    processes=args.processes,
                    pictures=args.pictures == "on",
                    pin=args.pin,
                    moves_per_second=args.moves_per_second,
                )
                group[index].append(result)
                print(
                    f"  {mode} x{tables} (round {round_ + 1}): {result.clicks} clicks,"
                    f" {result.interactions} interactions, {result.cpu:.2f} s CPU"
                    f" ({result.loop_cpu:.2f} s on the event loop's thread) in"
                    f" {result.seconds:.1f} s; requests {result.requests}",
                    flush=True,
                )
        groups.append(group)
    print()
    for line in report(groups):
        print(line)
    if len(groups) > 1:
        # RSS also grows by things paid once (SQLite's page cache, the allocator's pools):
        # the slope between the smallest and the largest run is what one more table costs.
        for index, mode in enumerate(modes):
            low, high = median_run(groups[0][index]), median_run(groups[-1][index])
            if high.tables > low.tables:
                slope = (high.rss_loaded - high.rss_idle) - (low.rss_loaded - low.rss_idle)
                per_table = slope / (high.tables - low.tables) / 1024
                print(
                    f"{mode}: {per_table:.1f} KB per additional running table "
                    f"({low.tables} -> {high.tables} tables)"
                )
    print(
        "\nCPU ms/click: the median over the rounds (the run shown is the median one);"
        " cardtable ÷: cardtable's CPU per click over that bot's, in the same rounds"
    )
    print(
        "baseline: a do-nothing discord.py bot answering with edit_message; base+DM: and"
        " editing the clicker's DM; lean: answering with the plain callback, as cardtable"
        " does; lean+DM: both, the leanest bot making a move's REST calls; lean+DM+save:"
        " and committing each click to SQLite first (state, metadata and move row);"
        " previous: the cardtable of --previous"
        " (an earlier commit), its ratio is now/then"
    )
    print(
        "1-core/s: the clicks per second one whole core would answer at this CPU per click"
        " (the contention-free ceiling; clicks/s is what this machine gave during the run)"
    )
    print(
        f"targets: CPU ratio <= {CPU_RATIO_TARGET} (over baseline), >= {CLICKS_TARGET:.0f}"
        f" clicks/s, <= {MEMORY_TARGET_KB:.0f} KB per running table (SQLite, one process)"
    )
    if args.postgres:
        print("DB ms: the PostgreSQL server's CPU per click (postmaster and backends), apart")
    if args.processes > 1:
        print(
            f"{args.processes} processes: clicks/s, CPU and RSS summed over them (KB/table:"
            " each process's growth per table it runs), latencies merged"
        )
    return 0


def median_run(results: list[Result]) -> Result:
    """The run with the median CPU per click (the lower middle one of an even count)."""
    ordered = sorted(results, key=lambda result: result.cpu_ms_per_interaction)
    return ordered[(len(ordered) - 1) // 2]


async def memory(args: argparse.Namespace, storage: Database) -> int:
    """Python heap per running table (tracemalloc; the timings of these runs mean nothing)."""
    grown_by: dict[tuple[str, int], int] = {}
    for tables in args.tables:
        for mode in ("cardtable", "baseline"):
            result = await run_once(
                mode,
                tables,
                args.seconds,
                args.warmup,
                args.seed,
                None,
                traced=True,
                storage=storage,
                processes=args.processes,
                pictures=args.pictures == "on",
            )
            assert result.heap_idle is not None and result.heap_loaded is not None
            grown = sum(map(traced_bytes, result.heap_loaded)) - sum(
                map(traced_bytes, result.heap_idle)
            )
            grown_by[mode, tables] = grown
            print(
                f"{tables:>6} {mode:<9} heap {grown / tables / 1024:8.1f} KB per running table"
                f" (after a full collection, clicks stopped, every table open mid-game)"
            )
            if mode == "cardtable":
                # Where the first process's heap grew (the others' grow alike).
                for line in growth(result.heap_idle[0], result.heap_loaded[0], 12):
                    print("         " + line)
    low, high = min(args.tables), max(args.tables)
    if high > low:
        # What is loaded once (the message catalogues, discord.py's caches) cancels out.
        for mode in ("cardtable", "baseline"):
            slope = (grown_by[mode, high] - grown_by[mode, low]) / (high - low) / 1024
            print(f"{mode}: heap {slope:.1f} KB per additional running table ({low} -> {high})")
    return 0


def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument(
        "--moves-per-second",
        type=float,
        default=None,
        help="offer this many moves a second over all tables (default: as fast as answered),"
        " so that runs with and without pictures compare at the same load",
    )
    parser.add_argument(
        "--game",
        choices=("nothanks", "rage"),
        default="nothanks",
        help="rage: random legal bids and cards from the private panel (SQLite, no baselines)",
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per run")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument(
        "--players", type=int, default=3, help="people at each table (2-7; default 3)"
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="bot processes, each running SHARD_IDS=i of SHARD_COUNT=N (PostgreSQL only)",
    )
    parser.add_argument(
        "--database-url", default=None, help="run on this PostgreSQL server (a schema per run)"
    )
    parser.add_argument(
        "--pictures",
        choices=("on", "off"),
        default="on",
        help="off: every guild's table messages as text (/cardtable images show:off)",
    )
    parser.add_argument(
        "--postgres", action="store_true", help="start a temporary PostgreSQL server for this"
    )
    parser.add_argument(
        "--postgres-fsync",
        choices=("on", "off"),
        default="on",
        help="the temporary server's fsync (on: durable commits, as in production)",
    )
    parser.add_argument("--profile", default=None, help="cProfile the bot into this file")
    parser.add_argument(
        "--memory", action="store_true", help="measure the Python heap per table instead"
    )
    parser.add_argument(
        "--baselines",
        nargs="*",
        choices=sorted(BASELINES),
        default=list(DEFAULT_BASELINES),
        help="the do-nothing bots to run beside cardtable (default: baseline lean+DM)",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="each bot process on a CPU of its own, the driver on the rest (one-core figures)",
    )
    parser.add_argument(
        "--metrics",
        action="store_true",
        help="also run cardtable with its metrics server on and scraped every"
        f" {SCRAPE_EVERY:.0f} s, as 'metrics' (its ratio is CPU per click over cardtable's)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs of each bot, interleaved; medians shown"
    )
    parser.add_argument(
        "--py-spy", default=None, help="sample the bot with py-spy into FILE.<tables> (raw)"
    )
    parser.add_argument(
        "--previous",
        type=Path,
        default=None,
        help="also run the cardtable of this checkout (e.g. a git worktree of an earlier"
        " commit) in the same rounds, as 'previous': its row's ratio is before/after",
    )
    args = parser.parse_args()
    global GAME, PLAYERS
    GAME = args.game
    if not 2 <= args.players <= 7:
        parser.error("--players: No Thanks! and Rage tables here seat 2 to 7 people")
    PLAYERS = args.players
    if args.previous is not None:
        script = entry_point(args.previous)
        if not script.is_file():
            parser.error(f"--previous: {script} does not exist")
        PREVIOUS.append(args.previous.resolve())
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
