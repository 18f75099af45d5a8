"""Many concurrent Rage tables through SimCord, on the real SQLite storage.

Opens ``--tables`` Rage tables (one per channel, 3-6 players, mixed variants, all running at
once) and plays ``--actions`` bids and cards round-robin across them the way a player does:
click "Show my hand" on the public message, press a bid or card button in the private panel and,
for a Joker, its colour button. The bot's handling of every click and select is
timed by wrapping the cog's ``on_click`` (routing, engine, SQLite commit, the interaction
response; the public table message is edited afterwards by the bot's publisher, so only
the wall time includes it); the share spent in ``Storage.save_table`` is reported too,
and, for reference, the wall time of each SimCord interaction (SimCord's settle loop mostly
waits out its 50 ms idle interval, so most walls are ~55-65 ms whatever the bot does; a
Joker asking for its colour, which only edits the private view, is the exception). There
is no numeric target; No Thanks! had p99 < 25 ms per click, printed for comparison.

Turn timers stay on unless ``--no-timers`` (which benchmarks/table/nothanks_table.py always
uses). With them on, SimCord's settle loop scans every table's sleeping timer task on each
pass, on the bot's event loop, so the figures are also printed net of those scans. The
settle timeout must stay under half a turn (30 s by default): a sleep ending within it,
such as a turn timer's, is waited for instead of being parked.

Run: ``uv run python benchmarks/table/rage_table.py [--tables 50 --actions 2000]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import simcord.env as simcord_env
from harness import (
    BotTimes,
    bench_guild,
    bot_of,
    check_saved,
    cog_named,
    is_running,
    percentile,
    round_robin,
    run,
    running_in,
    session_of,
    summary,
    time_clicks,
    time_saves,
    without_timers,
)
from simcord import Env
from simcord.builders import ChannelHandle, GuildHandle
from simcord.results import InteractionResult, ResponseMessage, to_discord_message

from bot.engines.rage import JOKER, Bid, Play, PlayerId, RageState
from bot.render.components import Click
from bot.table.session import TableSession

NOTHANKS_TARGET_MS = 25.0
HAND_LABEL = "Show my hand"
# Mixed variants, every combination the rules allow among these, cycled over the tables.
VARIANTS: tuple[dict[str, bool], ...] = (
    {},
    {"plus_minus_one": True},
    {"hidden_bids": True},
    {"secret_bids": True},
    {"sweep": True},
    {"plus_minus_one": True, "sweep": True},
    {"hidden_bids": True, "sweep": True},
    {"secret_bids": True, "sweep": True},
)


@dataclass
class BenchTable:
    """One channel with its seated players, variants and the public table message id."""

    channel: ChannelHandle
    players: list[Any]
    variant: dict[str, bool]
    message_id: int
    table_id: int
    games_played: int = 1


@dataclass
class Times(BotTimes):
    """Seconds per interaction: bot side (``on_click``) by kind, saves, and SimCord wall."""

    wall: dict[str, list[float]] = field(default_factory=dict)
    per_action_bot: list[float] = field(default_factory=list)
    per_action_wall: list[float] = field(default_factory=list)
    calls: int = 0
    move_saves: int = 0
    bot_seconds: float = 0.0
    bot_net: dict[str, list[float]] = field(default_factory=dict)
    saves_net: list[float] = field(default_factory=list)


class SettleMeter:
    """Seconds SimCord's settle loop spends scanning tasks and timers (it shares the loop)."""

    # The settlement helpers env.py calls on every pass of its settle loop.
    NAMES = (
        "_active_callbacks",
        "_callback_is_parked",
        "_is_parked",
        "_owned_tasks",
        "_run_due_virtual_callbacks",
        "_virtualize_recognized_waits",
    )

    def __init__(self) -> None:
        self.seconds = 0.0
        self.wrapped: list[str] = []

    def read(self) -> float:
        """Seconds of settle scans so far."""
        return self.seconds

    def install(self) -> None:
        """Wrap the helpers that exist in this SimCord version (private, so each is optional)."""
        if self.wrapped:
            return
        for name in self.NAMES:
            helper = getattr(simcord_env, name, None)
            if callable(helper):
                setattr(simcord_env, name, self._timed(helper))
                self.wrapped.append(name)

    def _timed(self, helper: Callable[..., Any]) -> Callable[..., Any]:
        """One helper, adding its run time to ``seconds``."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            """Run the helper and count its time."""
            start = time.perf_counter()
            try:
                return helper(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


METER = SettleMeter()


def rage_state(session: TableSession) -> RageState:
    """The session's live game (a new object after every saved move: read it again)."""
    state = session.engine
    assert isinstance(state, RageState)
    return state


def kind_of(action: str, values: Sequence[str]) -> str:
    """The timing bucket of a click: its action, with a Joker card choice apart."""
    if action == "play" and tuple(values) == (JOKER.code,):
        return "play JOKER (asks colour)"
    return action


def instrument(env: Env, cog: Any, times: Times) -> None:
    """Time the cog's ``on_click`` by kind and every save, whole and net of SimCord's scans."""

    def clicked(click: Click, elapsed: float, scanned: float) -> None:
        """One click, from routing to the interaction's answer."""
        kind = kind_of(click.action, click.values)
        times.bot.setdefault(kind, []).append(elapsed)
        times.bot_net.setdefault(kind, []).append(elapsed - scanned)
        times.calls += 1
        times.bot_seconds += elapsed

    def saved(move: tuple[str, str] | None, elapsed: float, scanned: float) -> None:
        """One save (a move's: the SQLite UPDATE + INSERT + commit)."""
        times.saves.append(elapsed)
        times.saves_net.append(elapsed - scanned)
        times.move_saves += move is not None

    time_clicks(cog, clicked, METER.read)
    time_saves(env, saved, METER.read)


def public_message(env: Env, table: BenchTable) -> discord.Message:
    """The table's public message as it is now, looked up by id (never the history)."""
    return to_discord_message(env, env.backend.get_message(table.channel.id, table.message_id))


def answer(result: InteractionResult) -> str:
    """The bot's reply to an interaction, for an assertion message."""
    return repr(result.response.content) if result.response is not None else repr(result)


def button_id(view: ResponseMessage, action: str, arg: str) -> str:
    """The custom_id of the private panel's button for an action and its argument."""
    for row in view.components:
        for item in row.get("components", []):
            custom = str(item.get("custom_id", ""))
            if custom.split(":")[4:6] == [action, arg]:
                assert not item.get("disabled"), f"{action} {arg} is disabled: {view.content!r}"
                return custom
    raise AssertionError(f"no {action} button for {arg!r} in the private view: {view.content!r}")


def choose(state: RageState, player: PlayerId, rng: random.Random) -> Bid | Play:
    """A seeded policy: a random legal bid; a held Joker at once, else a random legal card."""
    legal = state.legal_actions(player)
    if isinstance(legal[0], Bid):
        return rng.choice(legal)
    jokers = [a for a in legal if isinstance(a, Play) and a.card == JOKER]
    if jokers:
        return rng.choice(jokers)
    return rng.choice(legal)


# -- set-up ---------------------------------------------------------------------------


async def open_table(
    env: Env, guild: GuildHandle, number: int, players: int, variant: dict[str, bool]
) -> BenchTable:
    """Create a channel, open a Rage lobby with the variants, seat players and start."""
    channel = guild.create_text_channel(f"rage-{number}")
    members = [guild.add_member(env.create_user(f"r{number}p{seat}")) for seat in range(players)]
    result = await members[0].slash(channel, "rage start", **variant)
    assert result.response is not None and not result.ephemeral, f"no lobby: {answer(result)}"
    message = result.response.message
    for member in members[1:]:
        joined = await member.click(message, label="Join")
        assert joined.acknowledged and not joined.ephemeral, f"join refused: {answer(joined)}"
    started = await members[0].click(message, label="Start")
    assert started.acknowledged and not started.ephemeral, f"start refused: {answer(started)}"
    return BenchTable(channel, members, variant, message.id, running_in(env, channel.id).id)


async def rematch(env: Env, table: BenchTable) -> None:
    """After a finished game, open the rematch lobby and start it, same seats."""
    host = table.players[table.games_played % len(table.players)]
    lobby = await host.click(public_message(env, table), label="Rematch")
    assert lobby.response is not None and not lobby.ephemeral, "rematch refused"
    started = await host.click(lobby.response.message, label="Start")
    assert started.acknowledged and not started.ephemeral, "rematch start refused"
    table.message_id, table.table_id = lobby.response.id, running_in(env, table.channel.id).id
    table.games_played += 1


# -- one action: Show my hand + button [+ Joker colour] ---------------------------------


async def timed(
    times: Times, kind: str, interaction: Awaitable[InteractionResult]
) -> InteractionResult:
    """Await one SimCord interaction and record its wall time under ``kind``."""
    start = time.perf_counter()
    result = await interaction
    times.wall.setdefault(kind, []).append(time.perf_counter() - start)
    return result


async def play_one(env: Env, table: BenchTable, times: Times, rng: random.Random) -> str:
    """One player of this table acts through the private hand view; return the action kind."""
    # The session stays up to date after its game ends, even once it leaves the registry.
    session = session_of(env, table.table_id)
    state = rage_state(session)
    before = state.move_number
    actors = state.acting_players()
    player = actors[0] if len(actors) == 1 else rng.choice(actors)
    actor = next(p for p in table.players if str(p.id) == player)
    chosen = choose(state, player, rng)
    calls, bot_before = times.calls, times.bot_seconds
    start = time.perf_counter()
    shown = await timed(times, "hand", actor.click(public_message(env, table), label=HAND_LABEL))
    view = shown.response
    assert shown.ephemeral and view is not None, "no private hand view"
    if isinstance(chosen, Bid):
        kind = "bid"
        arg = f"{state.round}_{chosen.tricks}"
        pressed = button_id(view, "bid", arg)
        result = await timed(times, kind, actor.click(view.message, custom_id=pressed))
    else:
        value = chosen.card.code
        kind = kind_of("play", [value])
        pressed = button_id(view, "play", value)
        result = await timed(times, kind, actor.click(view.message, custom_id=pressed))
        if chosen.card == JOKER:
            assert chosen.colour is not None
            colours = result.response
            assert colours is not None and rage_state(session).move_number == before
            kind = "joker"
            colour_button = button_id(colours, "joker", chosen.colour.code)
            result = await timed(times, kind, actor.click(colours.message, custom_id=colour_button))
    times.per_action_wall.append(time.perf_counter() - start)
    times.per_action_bot.append(times.bot_seconds - bot_before)
    assert result.acknowledged and not result.followups, [f.content for f in result.followups]
    expected = 3 if kind == "joker" else 2
    assert times.calls == calls + expected, "a click did not reach on_click"
    if is_running(env, table.table_id):
        assert rage_state(session).move_number == before + 1, f"the {kind} was not applied"
    else:
        record = await bot_of(env).storage.get_table(table.table_id)
        assert record is not None and record.status == "finished"
    return kind


# -- the benchmark ----------------------------------------------------------------------


async def bench(database: Path, count: int, actions: int, settle_timeout: float, seed: int) -> None:
    """``count`` running Rage tables at once, ``actions`` bids/cards played round-robin."""
    print(f"== {count} concurrent Rage tables, {actions} actions round-robin ==")
    rng = random.Random(seed)
    async with bench_guild(database, settle_timeout) as (env, guild):
        cog = cog_named(env, "Rage")
        start = time.perf_counter()
        tables = [
            await open_table(env, guild, n, 3 + n % 4, VARIANTS[n % len(VARIANTS)])
            for n in range(count)
        ]
        setup = time.perf_counter() - start
        running = sum(1 for t in tables if is_running(env, t.table_id))
        seats = sum(len(t.players) for t in tables)
        print(
            f"set-up: {count} lobbies ({seats} players, {len(VARIANTS)} variant mixes) filled "
            f"and started in {setup:.2f} s; running: {running}"
        )
        assert running == count
        times = Times()
        instrument(env, cog, times)
        METER.install()
        scanned = METER.seconds
        kinds: dict[str, int] = {}

        async def act(table: BenchTable) -> None:
            """One action at this table, counted by its kind."""
            kind = await play_one(env, table, times, rng)
            kinds[kind] = kinds.get(kind, 0) + 1

        start = time.perf_counter()
        rematches = await round_robin(env, tables, actions, rematch, act)
        wall = time.perf_counter() - start
        scanned = METER.seconds - scanned
        live = [session_of(env, t.table_id) for t in tables if is_running(env, t.table_id)]
        still = len(live)
        rounds = sorted(rage_state(session).round for session in live)
        await check_saved(env, tables[0].table_id)
    report(times, kinds, actions, wall, rematches, still, rounds)
    report_net(times, actions, wall, scanned)


def report(
    times: Times,
    kinds: dict[str, int],
    actions: int,
    wall: float,
    rematches: int,
    still: int,
    rounds: list[int],
) -> None:
    """Print the figures."""
    every = [value for values in times.bot.values() for value in values]
    committing = [value for kind in ("bid", "play", "joker") for value in times.bot.get(kind, [])]
    print(
        f"actions played: {actions} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}); "
        f"interactions: {len(every)}; finished games rematched: {rematches}; "
        f"tables running at the end: {still}"
        + (f" (rounds {rounds[0]}-{rounds[-1]})" if rounds else "")
    )
    print(f"bot-side per click (cog on_click), all {len(every)}: {summary(every)}")
    for kind, values in sorted(times.bot.items()):
        print(f"  {kind:<24} x{len(values):<5} {summary(values)}")
    verdict = "under" if percentile(every, 0.99) * 1000 < NOTHANKS_TARGET_MS else "over"
    print(
        f"  no numeric target for Rage; for comparison, No Thanks! target p99 < "
        f"{NOTHANKS_TARGET_MS:.0f} ms per click: Rage p99 is {verdict} it"
    )
    saved = sum(times.saves)
    print(
        f"committing (Storage.save_table: SQLite UPDATE + INSERT + commit), x{len(times.saves)} "
        f"({times.move_saves} with a move): {summary(times.saves)}"
    )
    print(
        f"  share of bot-side time spent committing: {saved / sum(every):.1%} of all clicks, "
        f"{saved / sum(committing):.1%} of the committing clicks (bid/play/joker)"
    )
    print(f"bot-side per action (hand + button [+ colour]): {summary(times.per_action_bot)}")
    print(f"bot-side moves per second (actions / sum of on_click): {actions / sum(every):,.0f}")
    print("wall per interaction incl. SimCord simulation (reference):")
    for kind, values in sorted(times.wall.items()):
        print(f"  {kind:<24} x{len(values):<5} {summary(values)}")
    print(f"wall per action incl. SimCord (reference): {summary(times.per_action_wall)}")
    print(f"wall moves per second incl. SimCord (reference): {actions / wall:,.0f}")


def report_net(times: Times, actions: int, wall: float, scanned: float) -> None:
    """Print the bot-side figures without SimCord's settle scans that ran inside them."""
    if not METER.wrapped:
        print("SimCord's settle helpers not found: no figures net of its scans")
        return
    every = [value for values in times.bot.values() for value in values]
    net = [value for values in times.bot_net.values() for value in values]
    inside = sum(every) - sum(net)
    print(
        f"SimCord's settle scans ({len(METER.wrapped)} helpers timed): {scanned:.1f} s of the "
        f"{wall:.1f} s loop; {inside:.1f} s of them ran inside on_click ({inside / sum(every):.0%}"
        " of its time: they share the event loop while the bot awaits SQLite)"
    )
    print(f"bot-side per click net of those scans, all {len(net)}: {summary(net)}")
    for kind, values in sorted(times.bot_net.items()):
        print(f"  {kind:<24} x{len(values):<5} {summary(values)}")
    verdict = "under" if percentile(net, 0.99) * 1000 < NOTHANKS_TARGET_MS else "over"
    print(f"  for comparison, No Thanks! target p99 < {NOTHANKS_TARGET_MS:.0f} ms: {verdict} it")
    print(
        f"committing net of those scans: {summary(times.saves_net)}; share of the net bot-side "
        f"time: {sum(times.saves_net) / sum(net):.1%}"
    )
    print(f"bot-side moves per second net of those scans: {actions / sum(net):,.0f}")


async def main_async(args: argparse.Namespace) -> None:
    """Run the benchmark on a temporary database, within the time limit."""
    print(f"turn timers and lobby expiry: {'off' if args.no_timers else 'on (as in production)'}")
    if args.no_timers:
        without_timers()
    async with asyncio.timeout(args.time_limit):
        with tempfile.TemporaryDirectory(prefix="cardtable-bench-") as folder:
            await bench(
                Path(folder) / "rage.db", args.tables, args.actions, args.settle_timeout, args.seed
            )


def main() -> None:
    """Parse the options and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50, help="concurrent tables")
    parser.add_argument("--actions", type=int, default=2000, help="bids and cards to play")
    parser.add_argument("--seed", type=int, default=1, help="seed of the players' choices")
    parser.add_argument(
        "--settle-timeout", type=float, default=5.0, help="SimCord, seconds (< half a turn)"
    )
    parser.add_argument(
        "--no-timers", action="store_true", help="leave turn timers out (as nothanks_table.py)"
    )
    parser.add_argument("--time-limit", type=float, default=600.0, help="whole run, seconds")
    args = parser.parse_args()
    if args.tables < 1 or args.actions < 1:
        parser.error("--tables and --actions must be at least 1")
    run(main_async(args))


if __name__ == "__main__":
    main()
