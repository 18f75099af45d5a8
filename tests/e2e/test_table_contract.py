"""The shared table contract, played through Discord for every game: No Thanks!, Rage, High card.

High card (tests/highcard) exists only in tests: the bot here loads it as one more
extension, which shows that a game needs only its own engine, renderer and cog.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

import pytest
from simcord import Env
from simcord.builders import ChannelHandle, GuildHandle
from simcord.results import InteractionResult

from bot.client.bot import EXTENSIONS, CardtableBot
from bot.engines.rage import JOKER
from bot.table.session import TableSession
from tests.e2e.helpers import (
    NAMES,
    button_ids,
    click_stored,
    message_by_id,
    select_stored,
    snapshot,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MOVED_ON = "This table has moved on"
SAVE_FAILED = "Sorry, I could not save"
TIMED_OUT = "ran out of time"


# -- the bot, with High card loaded as one more extension --------------------------------


@pytest.fixture
def bot_extensions() -> tuple[str, ...]:
    """The production games plus High card, which exists only in the tests."""
    return (*EXTENSIONS, "tests.highcard.cog")


def bot_of(env: Env) -> CardtableBot:
    """The running bot, typed."""
    return cast(CardtableBot, env.bot)


# -- one table in one channel, whatever the game -----------------------------------------


@dataclass
class Table:
    """A table in its own channel: its people, its public message, its game's driver."""

    env: Env
    game: Game
    guild: GuildHandle
    channel: ChannelHandle
    players: list[Any]
    message_id: int
    table_id: int

    @property
    def session(self) -> TableSession:
        """The open table's session (the test may look; players may not)."""
        session = bot_of(self.env).tables.get(self.table_id)
        assert session is not None, "the table is closed"
        return session

    @property
    def move_number(self) -> int:
        """Moves applied so far, as the bot's memory holds them."""
        engine = self.session.engine
        assert engine is not None
        return engine.move_number

    @property
    def message(self) -> Any:
        """The public table message as it is now."""
        return message_by_id(self.env, self.channel, self.message_id)

    def acting(self) -> Any:
        """The actor of the (first) player who may act now."""
        player = self.session.acting_players()[0]
        return next(p for p in self.players if str(p.id) == player)

    async def click(self, actor: Any, label: str) -> InteractionResult:
        """Click a button of the public message by its label."""
        return await actor.click(self.message, label=label)


@dataclass
class Pending:
    """A click that makes the current move, frozen so it can be sent (again) later."""

    actor: Any
    stored: Any  # the message as Discord stored it when the click was prepared
    custom_id: str
    values: list[str]


async def fire(pending: Pending) -> InteractionResult:
    """Send a prepared click (a button, or a choice in a select)."""
    if pending.values:
        return await select_stored(pending.actor, pending.stored, pending.custom_id, pending.values)
    return await click_stored(pending.actor, pending.stored, pending.custom_id)


async def on_the_table(table: Table) -> Pending:
    """No Thanks!: Take on the public message (always legal)."""
    message = table.message
    return Pending(table.acting(), snapshot(table.env, message), button_ids(message)["Take"], [])


async def in_the_hand(table: Table) -> Pending:
    """Rage and High card: open the private hand and pick its first plain choice."""
    actor = table.acting()
    label = table.game.hand_label
    assert label is not None
    opened = await table.click(actor, label)
    assert opened.ephemeral, opened
    view = opened.response
    assert view is not None
    choice = first_choice_button(view)
    if choice is not None:  # Rage: bids and cards are buttons
        return Pending(actor, snapshot(table.env, view.message), choice, [])
    custom_id, values = select_of(view)
    value = next(v for v in values if v != JOKER.code)  # a Joker would ask for its colour
    return Pending(actor, snapshot(table.env, view.message), custom_id, [value])


def first_choice_button(view: Any) -> str | None:
    """The custom_id of the first enabled bid or card button, never a Joker (it asks more)."""
    for row in view.components:
        for item in row.get("components", []):
            custom_id = item.get("custom_id", "")
            if (
                item.get("type") == 2
                and not item.get("disabled")
                and (":bid:" in custom_id or ":play:" in custom_id)
                and not custom_id.endswith(JOKER.code)
            ):
                return str(custom_id)
    return None


def select_of(view: Any) -> tuple[str, list[str]]:
    """The custom_id and option values of the select in a private view."""
    for row in view.components:
        for item in row.get("components", []):
            if item.get("type") == 3:
                return item["custom_id"], [option["value"] for option in item["options"]]
    raise AssertionError(f"no select in {view.content!r}")


@dataclass(frozen=True)
class Game:
    """How to play one game through Discord."""

    name: str
    people: int  # the fewest players a game starts with
    hand_label: str | None  # the public button that opens the private hand, if any
    prepare: Callable[[Table], Awaitable[Pending]]  # the click that makes the current move
    stale_answer: str  # what an outdated click is told

    def __str__(self) -> str:
        return self.name


NOTHANKS = Game("nothanks", 3, None, on_the_table, MOVED_ON)
# Rage answers an outdated hand with the current one ("That view was out of date").
RAGE = Game("rage", 3, "Show my hand", in_the_hand, "out of date")
HIGHCARD = Game("highcard", 2, "Show my cards", in_the_hand, MOVED_ON)
GAMES = [NOTHANKS, RAGE, HIGHCARD]
each_game = pytest.mark.parametrize("game", GAMES, ids=str)


async def open_lobby(env: Env, game: Game, people: int, **options: object) -> Table:
    """A new channel whose first player opens a lobby; nobody else is seated yet."""
    await bot_of(env).tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel(game.name)
    players = [guild.add_member(env.create_user(name)) for name in NAMES[:people]]
    result = await players[0].slash(channel, f"{game.name} start", **options)
    assert result.response is not None
    assert not result.ephemeral, result.response.content
    session = bot_of(env).tables.in_channel(channel.id)
    assert session is not None
    return Table(env, game, guild, channel, players, result.response.id, session.id)


async def start_game(env: Env, game: Game, people: int = 0, **options: object) -> Table:
    """A started table of ``people`` (default: the game's minimum) plus any computers."""
    table = await open_lobby(env, game, people or game.people, **options)
    for player in table.players[1:]:
        await table.click(player, "Join")
    await table.click(table.players[0], "Start")
    assert table.session.status == "running"
    return table


def shown(message: Any) -> tuple[Any, ...]:
    """What a public message shows: content, embeds and buttons."""
    return (message.content, [e.to_dict() for e in message.embeds], button_ids(message))


def shown_move(message: Any) -> int:
    """The move number in the table message's footer ("Table #3 · move 5 · ...")."""
    found = re.search(r"move (\d+)", message.embeds[0].footer.text or "")
    assert found is not None, message.embeds[0].footer.text
    return int(found[1])


def seats(table: Table) -> list[str]:
    """The seated names the lobby lists."""
    return [line.split(". ", 1)[1] for line in table.message.embeds[0].fields[0].value.splitlines()]


# -- the lobby ----------------------------------------------------------------------------


@each_game
async def test_lobby_join_leave_and_host_start(simcord_env: Env, game: Game) -> None:
    """Join, Leave and Join again; only the host may Start, which deals the game."""
    table = await open_lobby(simcord_env, game, game.people)
    host, second = table.players[:2]
    await table.click(second, "Join")
    assert seats(table) == ["ana", "ben"]
    await table.click(second, "Leave")
    assert seats(table) == ["ana"]
    await table.click(second, "Join")
    for player in table.players[2:]:
        await table.click(player, "Join")
    assert seats(table) == NAMES[: game.people]
    refused = await table.click(second, "Start")
    assert refused.ephemeral and refused.response is not None
    assert refused.response.content == "Only the host can start the game."
    assert table.session.status == "lobby"
    await table.click(host, "Start")
    assert table.session.status == "running"
    assert table.session.engine is not None
    assert list(table.session.engine.players) == [str(p.id) for p in table.players]
    assert shown_move(table.message) == 0
    record = await bot_of(simcord_env).storage.get_table(table.table_id)
    assert record is not None and record.status == "running"


@each_game
async def test_cancel_frees_the_channel(simcord_env: Env, game: Game) -> None:
    """The host's Cancel closes the lobby for good; a new start in the channel works."""
    table = await open_lobby(simcord_env, game, 2)
    await table.click(table.players[1], "Join")
    await table.click(table.players[0], "Cancel")
    assert bot_of(simcord_env).tables.get(table.table_id) is None
    assert bot_of(simcord_env).tables.in_channel(table.channel.id) is None
    assert table.message.components == []
    assert table.message.embeds[0].title.endswith("— table closed")
    record = await bot_of(simcord_env).storage.get_table(table.table_id)
    assert record is not None and record.status == "cancelled"
    again = await table.players[1].slash(table.channel, f"{game.name} start")
    assert not again.ephemeral, again.response.content
    assert bot_of(simcord_env).tables.in_channel(table.channel.id) is not None


@pytest.mark.parametrize(
    "game",
    [NOTHANKS, RAGE, HIGHCARD],
    ids=str,
)
async def test_lobby_names_the_game(simcord_env: Env, game: Game) -> None:
    """The lobby's title names the game in words, not by a catalogue key."""
    table = await open_lobby(simcord_env, game, 1)
    title = table.message.embeds[0].title
    assert f"game.{game.name}.name" not in title, title


# -- restarts, stale and double clicks, failed saves --------------------------------------


@each_game
async def test_restart_keeps_the_old_message_working(
    simcord_env: Env, game: Game, make_bot: Callable[[], CardtableBot]
) -> None:
    """After a restart the old message's buttons make the next move; the message follows."""
    table = await start_game(simcord_env, game)
    await fire(await game.prepare(table))
    assert table.move_number == 1
    before = table.session.engine.to_dict()  # type: ignore[union-attr]
    await simcord_env.restart_bot(make_bot())
    assert table.session.engine.to_dict() == before  # type: ignore[union-attr]
    assert table.session.record.message_id == table.message_id
    await fire(await game.prepare(table))
    assert table.move_number == 2
    assert shown_move(table.message) == 2
    record = await bot_of(simcord_env).storage.get_table(table.table_id)
    assert record is not None and record.move_number == 2
    assert simcord_env.errors == []


@each_game
async def test_stale_click_changes_nothing(simcord_env: Env, game: Game) -> None:
    """A click prepared before the last move is answered privately and applies nothing."""
    table = await start_game(simcord_env, game)
    stale = await game.prepare(table)
    await fire(await game.prepare(table))
    assert table.move_number == 1
    before = shown(table.message)
    result = await fire(stale)
    assert result.response is not None and game.stale_answer in result.response.content
    assert result.response.id != table.message_id  # answered privately
    assert table.move_number == 1
    assert shown(table.message) == before
    assert len(await bot_of(simcord_env).storage.moves(table.table_id)) == 1


@each_game
async def test_double_click_applies_once(simcord_env: Env, game: Game) -> None:
    """The same move sent twice from one message applies once and is logged once."""
    table = await start_game(simcord_env, game)
    pending = await game.prepare(table)
    first = await fire(pending)
    assert first.acknowledged
    second = await fire(pending)
    assert second.response is not None and game.stale_answer in second.response.content
    assert table.move_number == 1
    moves = await bot_of(simcord_env).storage.moves(table.table_id)
    assert [number for number, _, _ in moves] == [1]
    assert moves[0][1] == str(pending.actor.id)


@each_game
async def test_failed_save_changes_nothing(
    simcord_env: Env, game: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move whose save fails is apologised for; nothing changes; it works once saves do."""
    table = await start_game(simcord_env, game)
    storage = bot_of(simcord_env).storage
    original = storage.save_table

    async def broken(*_: object, **__: object) -> None:
        raise OSError("disk full")

    pending = await game.prepare(table)
    before = shown(table.message)
    monkeypatch.setattr(storage, "save_table", broken)
    result = await fire(pending)
    assert result.ephemeral and result.response is not None
    assert result.response.content.startswith(SAVE_FAILED), result.response.content
    assert table.move_number == 0
    assert table.session.record.move_number == 0
    assert shown(table.message) == before
    assert simcord_env.errors == []
    monkeypatch.setattr(storage, "save_table", original)
    await fire(pending)
    assert table.move_number == 1
    assert shown_move(table.message) == 1
    assert len(await storage.moves(table.table_id)) == 1


# -- timers -------------------------------------------------------------------------------


@each_game
async def test_timeout_moves_for_an_absent_player(simcord_env: Env, game: Game) -> None:
    """When a turn's time runs out, the computer moves for the player and says so."""
    table = await start_game(simcord_env, game, turn_seconds=15)
    absent = table.session.acting_players()[0]
    await simcord_env.advance_time(16)
    assert table.move_number >= 1
    assert TIMED_OUT in (table.message.content or "")
    assert table.session.meta.timeouts[absent] == 1
    moves = await bot_of(simcord_env).storage.moves(table.table_id)
    assert moves[0][:2] == (1, absent)


# Rage is left out here, not skipped: its ten rounds take long, and
# tests/e2e/test_turns.py::test_rage_with_computers_finishes_by_itself plays them.
@pytest.mark.parametrize("game", [NOTHANKS, HIGHCARD], ids=str)
async def test_computers_finish_a_game_by_themselves(simcord_env: Env, game: Game) -> None:
    """A table of computers and a host who never acts plays to its end by itself."""
    table = await open_lobby(simcord_env, game, 1, bots=game.people - 1, turn_seconds=15)
    await table.click(table.players[0], "Start")
    host = str(table.players[0].id)
    steps = 0
    while bot_of(simcord_env).tables.get(table.table_id) is not None:
        await simcord_env.advance_time(16)
        steps += 1
        assert steps < 400
    record = await bot_of(simcord_env).storage.get_table(table.table_id)
    assert record is not None and record.status == "finished"
    assert record.meta["timeouts"][host] >= 1
    assert table.message.embeds[0].title.endswith(("final scores", "final standings"))
    assert list(button_ids(table.message)) == ["Rematch"]
