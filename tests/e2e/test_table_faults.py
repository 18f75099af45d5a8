"""Tables through SimCord when saving or publishing fails: locked or full disks, crashes."""

from __future__ import annotations

import asyncio
import copy
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import discord
import pytest
from simcord import Env

from bot.client import replies as interactions
from bot.client.bot import CardtableBot
from bot.storage import Storage, TableRecord
from bot.storage.base import RETRY_INTERVAL
from tests.e2e.helpers import NAMES, Table, click_stored, open_table

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SORRY_SAVE = "Sorry, I could not save"
DB_DOWN = "I can't save right now: nothing changed"
BUSY_MS = 200  # the bot's busy timeout while another process holds the database


# -- faults -------------------------------------------------------------------------------


class Fault:
    """A way for the bot's saves to fail until the fault is stopped."""

    name = "fault"
    cause: type[BaseException] = Exception
    message = ""  # in the text of the error the save fails with
    # Whether the bot knows the database is out of reach (nothing can have been saved):
    # answered DB_DOWN, and timed events wait for the database; else SORRY_SAVE.
    outage = False

    @property
    def answer(self) -> str:
        """How a click that cannot be saved is answered."""
        return DB_DOWN if self.outage else SORRY_SAVE

    def __init__(self, env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
        self.env = env
        self.monkeypatch = monkeypatch
        self.active = False

    @property
    def storage(self) -> Storage:
        """The running bot's storage."""
        return self.env.bot.storage

    async def start(self) -> None:
        """Make saves fail from now on."""
        self.active = True

    async def stop(self) -> None:
        """Make saves work again."""
        self.active = False


class Locked(Fault):
    """Another process holds the database's write lock beyond the bot's busy timeout."""

    name = "locked"
    cause = sqlite3.OperationalError
    message = "database is locked"
    outage = True

    def __init__(self, env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__(env, monkeypatch)
        self.holder: sqlite3.Connection | None = None

    async def start(self) -> None:
        """Shorten the bot's busy timeout, then take the lock from another connection."""
        await set_busy_timeout(self.storage, BUSY_MS)
        self.holder = hold_exclusive_lock(self.env.bot.settings.database)
        await super().start()

    async def stop(self) -> None:
        """Release the lock, and let the interval pass within which a bot that knows the
        database is down refuses saves without trying (on SimCord's clock)."""
        if self.holder is not None:
            release(self.holder)
            self.holder = None
        await self.env.advance_time(RETRY_INTERVAL)
        await super().stop()


class Raising(Fault):
    """`save_table` raises an error (the original is put back by `stop`)."""

    def error(self) -> BaseException:
        """The error each save raises."""
        raise NotImplementedError

    async def start(self) -> None:
        """Replace the bot's save with one that raises."""
        storage = self.storage
        self.original = storage.save_table

        async def broken(*args: object, **kwargs: object) -> None:
            raise self.error()

        self.monkeypatch.setattr(storage, "save_table", broken)
        await super().start()

    async def stop(self) -> None:
        """Give the bot its own save back."""
        self.monkeypatch.setattr(self.storage, "save_table", self.original)
        await super().stop()


class DiskFull(Raising):
    """The disk is full: SQLite refuses the write."""

    name = "disk_full"
    cause = sqlite3.OperationalError
    message = "database or disk is full"

    def error(self) -> BaseException:
        """SQLite's disk-full error."""
        return sqlite3.OperationalError(self.message)


class Unexpected(Raising):
    """Storage fails with something nobody planned for."""

    name = "error"
    cause = RuntimeError
    message = "storage exploded"

    def error(self) -> BaseException:
        """An arbitrary error."""
        return RuntimeError(self.message)


FAULTS: dict[str, type[Fault]] = {kind.name: kind for kind in (Locked, DiskFull, Unexpected)}


@pytest.fixture(params=list(FAULTS))
async def fault(
    request: pytest.FixtureRequest, simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Fault]:
    """Each way a save can fail; the fault is cleared after the test."""
    made = FAULTS[request.param](simcord_env, monkeypatch)
    try:
        yield made
    finally:
        if made.active:
            await made.stop()


async def set_busy_timeout(storage: Storage, milliseconds: int) -> None:
    """How long the bot's connection waits for another connection's lock."""
    async with storage._db.execute(f"PRAGMA busy_timeout = {milliseconds}") as cursor:
        await cursor.fetchall()


def hold_exclusive_lock(path: Path) -> sqlite3.Connection:
    """Another process's connection holding the database's write lock."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def release(holder: sqlite3.Connection) -> None:
    """Let the other process's lock go."""
    holder.execute("ROLLBACK")
    holder.close()


# -- helpers ------------------------------------------------------------------------------


def shown(env: Env, channel_id: int, message_id: int) -> tuple[Any, ...]:
    """What a message shows, as Discord stores it: content, embeds, components."""
    stored = env.backend.get_message(channel_id, message_id)
    return stored.content, copy.deepcopy(stored.embeds), copy.deepcopy(stored.components)


async def row(env: Env, table_id: int) -> TableRecord | None:
    """The table's row in the database."""
    return await env.bot.storage.get_table(table_id)


def save_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The warnings of a failed save: the session's for a save without an answer, the
    storage's (once per outage, with the driver's traceback) for an unavailable database;
    a save refused during an outage adds only a DEBUG line (test_outage_logs.py)."""
    return [
        r
        for r in caplog.records
        if r.levelno >= logging.WARNING
        and (
            r.getMessage().startswith(("could not save", "the database is unavailable"))
            or "without an answer" in r.getMessage()
        )
    ]


def footer(table: Table) -> str:
    """The footer of the table message."""
    return table.embed.footer.text or ""


async def start_with_computers(env: Env, turn_seconds: int = 600) -> Table:
    """A No Thanks! table of ana and two computers, started."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel("games")
    ana = guild.add_member(env.create_user("ana"))
    result = await ana.slash(channel, "nothanks start", bots=2, turn_seconds=turn_seconds)
    assert result.response is not None and not result.ephemeral
    session = env.bot.tables.in_channel(channel.id)
    assert session is not None
    table = Table(env, guild, channel, [ana], result.response.id, session.id)
    await table.click(ana, "Start")
    assert table.running
    return table


def pass_or_take(table: Table) -> str:
    """No thanks! while the active player has chips, else Take."""
    return "No thanks!" if table.game.chips[table.game.active] > 0 else "Take"


def is_human(player: str | None) -> bool:
    """Whether a seat belongs to a person."""
    return player is not None and int(player) > 0


# -- lobby clicks -------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["Start", "Cancel"])
async def test_lobby_click_that_cannot_be_saved(
    simcord_env: Env, fault: Fault, label: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Start or Cancel that cannot be saved: an apology, nothing changed; later it works."""
    caplog.set_level(logging.WARNING, logger="bot.table.session")
    table = await open_table(simcord_env, 3, start=False)
    session = table.session
    before_message = shown(simcord_env, table.channel.id, table.message_id)
    before_row = await row(simcord_env, table.table_id)
    await fault.start()
    result = await table.click(table.players[0], label)
    assert result.ephemeral and result.response is not None
    assert result.response.content.startswith(fault.answer)
    assert simcord_env.errors == []
    assert shown(simcord_env, table.channel.id, table.message_id) == before_message
    assert await row(simcord_env, table.table_id) == before_row
    assert session.status == "lobby" and session.engine is None
    assert simcord_env.bot.tables.in_channel(table.channel.id) is session
    logged = save_warnings(caplog)
    assert len(logged) == 1 and logged[0].exc_info is not None
    error = logged[0].exc_info[1]
    cause = error.__cause__ if fault.outage else error  # DatabaseUnavailable names its cause
    assert isinstance(cause, fault.cause) and fault.message in str(cause)

    await fault.stop()
    again = await table.click(table.players[0], label)
    assert again.acknowledged and not again.ephemeral
    if label == "Start":
        assert table.running and footer(table).startswith(f"Table #{table.table_id} · move 0")
        moved = await table.click(table.active(), "No thanks!")
        assert not moved.ephemeral and table.game.move_number == 1
        assert footer(table).startswith(f"Table #{table.table_id} · move 1")
    else:
        assert table.embed.title == "No Thanks! — table closed"
        assert simcord_env.bot.tables.in_channel(table.channel.id) is None
        reopened = await table.players[1].slash(table.channel, "nothanks start")
        assert reopened.response is not None and not reopened.ephemeral
        joined = await table.players[0].click(reopened.response.message, label="Join")
        assert joined.acknowledged and not joined.ephemeral
    assert simcord_env.errors == []


# -- timed and human moves ------------------------------------------------------------------


async def test_computer_move_that_cannot_be_saved_is_retried(
    simcord_env: Env,
    fault: Fault,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A computer's move that cannot be saved is retried with backoff and the game goes on."""
    # Delays longer than SimCord's settle window: only advance_time fires them, one by one.
    monkeypatch.setattr("bot.table.timers.BOT_DELAY", 30.0)
    monkeypatch.setattr("bot.table.timers.RETRY_DELAYS", (10.0, 20.0, 40.0))
    # Each attempt on a locked file waits out the busy timeout in real time.
    monkeypatch.setattr("bot.table.timers.OUTAGE_RETRY", 10.0)
    caplog.set_level(logging.WARNING, logger="bot.table.timers")
    table = await start_with_computers(simcord_env)
    ana = table.players[0]
    while is_human(table.game.active_player):
        await table.click(ana, "No thanks!")
    move = table.game.move_number
    before_message = shown(simcord_env, table.channel.id, table.message_id)
    await fault.start()
    await simcord_env.advance_time(30.5)  # the computer's move is due, and fails
    await simcord_env.advance_time(10)  # the first retry fails
    await simcord_env.advance_time(20)  # and the second
    assert table.game.move_number == move
    assert shown(simcord_env, table.channel.id, table.message_id) == before_message
    stored = await row(simcord_env, table.table_id)
    assert stored is not None and stored.move_number == move
    if fault.outage:
        # Waiting for the database is no fault of the move: said once, tried again steadily.
        waits = [r for r in caplog.records if "waits for the database" in r.getMessage()]
        assert len(waits) == 1 and not [r for r in caplog.records if "retrying" in r.message]
    else:
        retries = [r for r in caplog.records if "retrying" in r.getMessage()]
        assert [r.args[-1] for r in retries] == [10.0, 20.0, 40.0]  # type: ignore[index]
        causes = [r.exc_info[1].__cause__ for r in retries]  # type: ignore[index]
        assert all(isinstance(c, fault.cause) and fault.message in str(c) for c in causes)

    await fault.stop()
    # The next retry goes through: at once when the database was away (OUTAGE_RETRY).
    await simcord_env.advance_time(10 if fault.outage else 40)
    assert table.game.move_number == move + 1
    moves = await simcord_env.bot.storage.moves(table.table_id)
    assert len(moves) == move + 1 and int(moves[-1][1]) < 0
    assert footer(table).startswith(f"Table #{table.table_id} · move {move + 1}")
    for _ in range(10):
        if not table.running or is_human(table.game.active_player):
            break
        await simcord_env.advance_time(30)
    if table.running:
        count = table.game.move_number
        result = await table.click(ana, pass_or_take(table))
        assert not result.ephemeral and table.game.move_number == count + 1
        assert footer(table).startswith(f"Table #{table.table_id} · move {count + 1}")
    assert await row(simcord_env, table.table_id) == table.session.record
    assert simcord_env.errors == []


async def test_human_move_that_cannot_be_saved_keeps_the_turn_clock(
    simcord_env: Env, fault: Fault, caplog: pytest.LogCaptureFixture
) -> None:
    """A move that cannot be saved leaves the deadline alone; the turn still times out."""
    caplog.set_level(logging.WARNING, logger="bot.table.session")
    table = await open_table(simcord_env, 3)
    turn = copy.deepcopy(table.session.meta.turn)
    assert turn is not None and turn.move == 0
    active = table.active()
    await simcord_env.advance_time(5)
    await fault.start()
    result = await table.click(active, "No thanks!")
    assert result.ephemeral and result.response is not None
    assert result.response.content.startswith(fault.answer)
    assert table.session.meta.turn == turn and table.game.move_number == 0
    stored = await row(simcord_env, table.table_id)
    assert stored is not None and stored.meta["turn"] == turn.to_dict()
    assert len(save_warnings(caplog)) == 1
    await fault.stop()

    now = simcord_env.now().timestamp()
    await simcord_env.advance_time(turn.deadline - now + 0.5)
    assert table.game.move_number == 1
    assert table.session.meta.timeouts == {str(active.id): 1}
    assert "ran out of time" in (table.message.content or "")
    assert footer(table).startswith(f"Table #{table.table_id} · move 1")
    after = await table.click(table.active(), pass_or_take(table))
    assert not after.ephemeral and table.game.move_number == 2
    assert footer(table).startswith(f"Table #{table.table_id} · move 2")
    assert simcord_env.errors == []


# -- the lobby message --------------------------------------------------------------------


async def test_lobby_message_that_cannot_be_posted(
    simcord_env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    """If the lobby cannot be posted, its row is deleted and the channel is free again."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("games")
    ana = guild.add_member(simcord_env.create_user("ana"))
    ben = guild.add_member(simcord_env.create_user("ben"))
    simcord_env.inject_error("POST", "/interactions/*/callback", status=500, times=1)
    with caplog.at_level(logging.ERROR):
        result = await ana.slash(channel, "nothanks start")
    answers = [result.response, *result.followups] if result.response else result.followups
    apologies = [m for m in answers if m is not None and m.ephemeral]
    assert len(apologies) == 1 and apologies[0].content.startswith("Sorry, something went wrong")
    errors = simcord_env.errors
    assert len(errors) == 1, errors  # not swallowed: reported to the error handler
    assert isinstance(getattr(errors[0], "original", None), discord.HTTPException)
    assert simcord_env.bot.tables.in_channel(channel.id) is None
    assert len(simcord_env.bot.tables) == 0
    assert await simcord_env.bot.storage.open_tables() == []
    assert await simcord_env.bot.storage.get_table(1) is None

    again = await ana.slash(channel, "nothanks start")
    assert again.response is not None and not again.ephemeral
    joined = await ben.click(again.response.message, label="Join")
    assert joined.acknowledged and not joined.ephemeral
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None and session.record.seats == [ana.id, ben.id]


async def test_lobby_needs_no_read_back_of_its_message(simcord_env: Env) -> None:
    """The lobby's message id comes with the send: a failing read-back cannot orphan it."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("games")
    ana = guild.add_member(simcord_env.create_user("ana"))
    simcord_env.inject_error("GET", "/webhooks/*/messages/@original", status=500, times=1)
    result = await ana.slash(channel, "nothanks start")
    assert simcord_env.errors == []
    assert result.response is not None and not result.ephemeral
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None and session.record.message_id == result.response.id
    stored = await simcord_env.bot.storage.get_table(session.id)
    assert stored is not None and stored.message_id == result.response.id


# -- slow saves ---------------------------------------------------------------------------


async def test_slow_save_defers_then_shows_the_move(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save slower than Discord allows: the click is deferred, then the message shows the move."""
    table = await open_table(simcord_env, 3)
    monkeypatch.setattr(interactions, "ANSWER_WITHIN", 0.05)
    storage = simcord_env.bot.storage
    original = storage.save_table

    async def slow(*args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(0.2)
        await original(*args, **kwargs)

    monkeypatch.setattr(storage, "save_table", slow)
    result = await table.click(table.active(), "No thanks!")
    assert result.acknowledged and result.deferred and not result.ephemeral
    assert result.response is not None and result.response.id == table.message_id
    assert table.game.move_number == 1
    assert footer(table).startswith(f"Table #{table.table_id} · move 1")
    assert await row(simcord_env, table.table_id) == table.session.record
    monkeypatch.undo()
    following = await table.click(table.active(), "No thanks!")
    assert not following.deferred and table.game.move_number == 2
    assert footer(table).startswith(f"Table #{table.table_id} · move 2")
    assert simcord_env.errors == []


async def test_save_waits_out_a_short_lock(simcord_env: Env) -> None:
    """Another process holding the lock for less than the busy timeout only delays the move."""
    table = await open_table(simcord_env, 3)
    await set_busy_timeout(simcord_env.bot.storage, 5000)
    holder = hold_exclusive_lock(simcord_env.bot.settings.database)
    releaser = threading.Timer(0.3, release, args=(holder,))
    releaser.start()
    try:
        result = await table.click(table.active(), "No thanks!")
    finally:
        releaser.join()
    # SimCord's clock stands still while the bot waits on SQLite, so no deferral shows here.
    assert result.acknowledged and not result.ephemeral
    assert table.game.move_number == 1
    assert footer(table).startswith(f"Table #{table.table_id} · move 1")
    assert await row(simcord_env, table.table_id) == table.session.record
    following = await table.click(table.active(), "No thanks!")
    assert not following.ephemeral and table.game.move_number == 2
    assert simcord_env.errors == []


# -- a crash between the save and its publication -------------------------------------------


async def crash_after_saving(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next click is saved, but neither its answer nor the publisher reach Discord."""
    monkeypatch.setattr(env.bot.publisher, "refresh", lambda session: None)
    env.inject_error("POST", "/interactions/*/callback", status=500, times=1)


async def test_crash_after_saving_a_no_thanks_move(
    simcord_env: Env,
    make_bot: Callable[[], CardtableBot],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A No Thanks! move saved but never shown is shown after a restart, with who is next."""
    caplog.set_level(logging.WARNING, logger="bot.table.session")
    table = await open_table(simcord_env, 3)
    await crash_after_saving(simcord_env, monkeypatch)
    await table.click(table.active(), "No thanks!")
    assert table.game.move_number == 1
    assert footer(table).startswith(f"Table #{table.table_id} · move 0")  # never published
    assert any("answering a change" in r.getMessage() for r in caplog.records)
    saved = await row(simcord_env, table.table_id)
    assert saved is not None and saved.move_number == 1
    monkeypatch.undo()

    await simcord_env.restart_bot(make_bot())
    assert footer(table).startswith(f"Table #{table.table_id} · move 1")
    nxt = table.game.active_player
    assert f"<@{nxt}>: your turn" in (table.message.content or "")  # the prompt pings
    result = await table.click(table.active(), "No thanks!")
    assert not result.ephemeral and table.game.move_number == 2
    assert footer(table).startswith(f"Table #{table.table_id} · move 2")
    assert simcord_env.errors == []


async def test_crash_after_saving_a_rage_bid(
    simcord_env: Env,
    make_bot: Callable[[], CardtableBot],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A Rage bid saved but never shown is shown after a restart, with who bids next."""
    caplog.set_level(logging.WARNING, logger="bot.table.session")
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("rage")
    players = [guild.add_member(simcord_env.create_user(name)) for name in NAMES[:3]]
    opened = await players[0].slash(channel, "rage start")
    assert opened.response is not None
    message_id = opened.response.id
    for player in players[1:]:
        await player.click(opened.response.message, label="Join")
    await players[0].click(opened.response.message, label="Start")
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None
    table = Table(simcord_env, guild, channel, players, message_id, session.id)

    async def open_hand() -> tuple[Any, Any, str]:
        bidder = session_now().acting_players()[0]
        actor = table.actor(bidder)
        hand = await actor.click(table.message, label="Show my hand")
        assert hand.ephemeral and hand.response is not None
        # The bid buttons' ids end in "_<bid>": remember the prefix, choose a bid later.
        select = next(
            item["custom_id"].rsplit("_", 1)[0]
            for line in hand.response.components
            for item in line["components"]
            if item["type"] == 2 and ":bid:" in item.get("custom_id", "")
        )
        stored = copy.deepcopy(simcord_env.backend.get_message(channel.id, hand.response.id))
        return actor, stored, select

    def session_now() -> Any:
        live = simcord_env.bot.tables.get(table.table_id)
        assert live is not None
        return live

    actor, hand, select = await open_hand()
    await crash_after_saving(simcord_env, monkeypatch)
    await click_stored(actor, hand, f"{select}_0")
    assert session_now().engine.move_number == 1
    assert footer(table).startswith(f"Table #{table.table_id} · move 0")  # never published
    assert any("answering a change" in r.getMessage() for r in caplog.records)
    monkeypatch.undo()

    await simcord_env.restart_bot(make_bot())
    assert footer(table).startswith(f"Table #{table.table_id} · move 1")
    nxt = session_now().acting_players()[0]
    # Who bids next: pinged in the content, their row marked ▶ in the embed.
    assert f"<@{nxt}>" in (table.message.content or "")
    assert any(line.startswith("▶ ") for line in (table.embed.description or "").splitlines())
    actor, hand, select = await open_hand()
    chosen = await click_stored(actor, hand, f"{select}_1")
    assert chosen.acknowledged
    assert session_now().engine.move_number == 2
    assert footer(table).startswith(f"Table #{table.table_id} · move 2")
    assert simcord_env.errors == []


# -- a table posted again whose new message cannot be recorded -------------------------------


def live_buttons(message: discord.Message) -> list[str]:
    """The labels of a message's enabled buttons."""
    return [
        item.label or ""
        for row in message.components
        for item in getattr(row, "children", [])
        if not getattr(item, "disabled", True)
    ]


async def test_reposted_copy_that_cannot_be_recorded_is_deleted(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The table's message is deleted and the save that records the copy posted in its
    place fails once: that copy is deleted (and logged), the next update posts the table
    again, and the channel ends with one table message with live buttons, no frozen copy."""
    caplog.set_level(logging.WARNING)
    table = await open_table(simcord_env, 3)
    deleted = table.message_id
    simcord_env.backend.delete_message(table.channel.id, deleted)
    storage = simcord_env.bot.storage
    original = storage.save_table
    failed: list[int | None] = []

    async def fails_once_to_record(record: TableRecord, *args: Any, **kwargs: Any) -> Any:
        if record.message_id != deleted and not failed:
            failed.append(record.message_id)
            raise RuntimeError("storage exploded")
        return await original(record, *args, **kwargs)

    monkeypatch.setattr(storage, "save_table", fails_once_to_record)
    session = table.session
    # A timeout move: the table is posted again, not recorded, and that copy deleted; the
    # next update posts it once more, recorded this time.
    await simcord_env.advance_time(61)
    assert len(failed) == 1 and failed[0] is not None
    with pytest.raises(Exception, match="Unknown Message"):
        simcord_env.backend.get_message(table.channel.id, failed[0])
    assert any(
        f"new message {failed[0]} was not saved; deleting it" in r.getMessage()
        for r in caplog.records
    )
    if session.record.message_id == deleted:
        await simcord_env.advance_time(61)  # the next timeout move
    new_id = session.record.message_id
    assert new_id not in (None, deleted, failed[0])
    assert new_id is not None
    table.message_id = new_id
    for _ in range(3):  # play on there
        moved = await table.click(table.active(), pass_or_take(table))
        assert not moved.ephemeral
    assert footer(table).startswith(f"Table #{table.table_id} · move {table.game.move_number}")
    tables = [m for m in table.channel.history() if m.embeds]
    assert [m.id for m in tables] == [new_id]
    assert [m.id for m in table.channel.history() if live_buttons(m)] == [new_id]
    assert await row(simcord_env, table.table_id) == table.session.record
    assert simcord_env.errors == []


@pytest.mark.parametrize("token_delete", ["works", "fails"])
async def test_table_command_copy_that_cannot_be_recorded_is_deleted(
    simcord_env: Env,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    token_delete: str,
) -> None:
    """Issue 41: `/nothanks table` posts the table again, and the save that records the new
    copy fails. The copy is deleted (through the command's token, or through the lane when
    that fails), the failure is logged, the person is told privately that nothing changed,
    and the old message stays the table's one live message; the table plays on there."""
    caplog.set_level(logging.WARNING)
    table = await open_table(simcord_env, 3)
    old = table.message_id
    storage = simcord_env.bot.storage
    original = storage.save_table
    failed: list[int | None] = []

    async def fails_once_to_record(record: TableRecord, *args: Any, **kwargs: Any) -> Any:
        if record.message_id != old and not failed:
            failed.append(record.message_id)
            raise RuntimeError("storage exploded")
        return await original(record, *args, **kwargs)

    monkeypatch.setattr(storage, "save_table", fails_once_to_record)
    if token_delete == "fails":

        async def refused(interaction: discord.Interaction) -> None:
            response = type("Response", (), {"status": 503, "reason": "Service Unavailable"})
            raise discord.HTTPException(response(), "upstream connect error")

        monkeypatch.setattr(discord.Interaction, "delete_original_response", refused)
    result = await table.players[1].slash(table.channel, "nothanks table")
    await simcord_env.advance_time(1)
    (copy_id,) = failed
    assert copy_id is not None and copy_id != old
    with pytest.raises(Exception, match="Unknown Message"):
        simcord_env.backend.get_message(table.channel.id, copy_id)
    told = [m.content for m in result.followups if m.ephemeral]
    assert any("nothing changed" in text for text in told), told
    logged = [r.getMessage() for r in caplog.records]
    assert any(f"new message {copy_id} was not saved; deleting it" in m for m in logged)
    if token_delete == "fails":
        assert any(f"could not delete the unrecorded copy {copy_id}" in m for m in logged)
    assert table.session.record.message_id == old
    assert [m.id for m in table.channel.history() if live_buttons(m)] == [old]
    moved = await table.click(table.active(), pass_or_take(table))
    assert not moved.ephemeral and table.game.move_number == 1
    assert await row(simcord_env, table.table_id) == table.session.record
