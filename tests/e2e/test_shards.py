"""Sharded processes through SimCord: a process plays its own shards' tables, restarts with
them, and refuses (privately, logged) any click or command for another shard's table."""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import replace
from typing import Any, Protocol

import pytest
from simcord import Env
from simcord.gateway import ShardRouter

from bot.client.bot import CardtableBot, create_bot
from bot.runtime.settings import Settings
from bot.storage import Storage, TableRecord
from tests.e2e.helpers import Table, click_stored, dms, open_table

# guild_id = n << 22 is on shard n % 2: EVEN_GUILD on shard 0, ODD_GUILD on shard 1.
SHARD_COUNT = 2
EVEN_GUILD = 6 << 22
ODD_GUILD = 7 << 22
REFUSED = "This server's tables are run by another cardtable process, so nothing happened here."
MOVED_ON = "This table has moved on"


class MakeBot(Protocol):
    """Builds a fresh bot running some of the two shards."""

    def __call__(self, shard_ids: Sequence[int], *, serve_tables: bool = True) -> CardtableBot:
        """A new bot on the test database."""
        ...


@pytest.fixture
async def shard_bot(settings: Settings, bot_extensions: tuple[str, ...]) -> AsyncIterator[MakeBot]:
    """A factory of fresh bots on one database, each running some of two shards."""
    bots: list[CardtableBot] = []

    def make(shard_ids: Sequence[int], *, serve_tables: bool = True) -> CardtableBot:
        sharded = replace(settings, shard_count=SHARD_COUNT, shard_ids=tuple(shard_ids))
        bot = create_bot(sharded, extensions=bot_extensions, serve_tables=serve_tables)
        bots.append(bot)
        return bot

    yield make
    for bot in bots:
        storage = getattr(bot, "storage", None)
        if storage is not None:
            await storage.close()


@pytest.fixture
def simcord_bot(shard_bot: MakeBot) -> CardtableBot:
    """The first process runs both shards, so the test can open a table on each."""
    return shard_bot((0, 1))


@pytest.fixture
def misrouted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deliver every interaction to the process's first shard, whatever its guild: the
    misconfigured deployment (or misrouting) the guard is there for. Other events keep
    Discord's routing."""
    route = ShardRouter._event_shard_id

    def first_shard(self: ShardRouter, event: str, payload: Any) -> int:
        if event == "INTERACTION_CREATE":
            return self.shard_ids[0]
        return route(self, event, payload)

    monkeypatch.setattr(ShardRouter, "_event_shard_id", first_shard)


async def two_tables(env: Env) -> tuple[Table, Table]:
    """A running No Thanks! table in a guild of each shard, one move played at each."""
    await env.bot.tree.sync()
    even = env.create_guild("even", id=EVEN_GUILD)
    odd = env.create_guild("odd", id=ODD_GUILD)
    tables = (
        await open_table(env, 3, guild=even, names=["ana", "ben", "cid"]),
        await open_table(env, 3, guild=odd, names=["dora", "eli", "fay"]),
    )
    for table in tables:
        await table.click(table.active(), "No thanks!")
    return tables


async def stored_row(env: Env, table: Table) -> tuple[str, int, int]:
    """A table's status, revision and move number as the shared database holds them."""
    record = await env.bot.storage.get_table(table.table_id)
    assert record is not None
    return record.status, record.revision, record.move_number


def edits_of(env: Env, table: Table) -> int:
    """How many times the bot has edited or posted in the table's channel so far."""
    return sum(
        1
        for request in env.http_requests
        if f"/channels/{table.channel.id}/messages" in request.path
        and request.method in ("POST", "PATCH")
    )


async def test_tables_of_the_own_shard_play_on_and_survive_restarts(
    simcord_env: Env, shard_bot: MakeBot
) -> None:
    """A process of shard 0 restores, plays and times shard 0's table only. When shard 1
    moves to a process of its own, that one restores shard 1's table and plays its overdue
    turn; when shard 0 moves back, the buttons its old process drew still work."""
    even, odd = await two_tables(simcord_env)
    odd_before = await stored_row(simcord_env, odd)
    odd_old_message = copy.deepcopy(simcord_env.backend.get_message(odd.channel.id, odd.message_id))

    await simcord_env.restart_bot(shard_bot((0,)))
    bot = simcord_env.bot
    assert bot.tables.get(even.table_id) is not None
    assert bot.tables.get(odd.table_id) is None
    assert bot.get_guild(EVEN_GUILD) is not None and bot.get_guild(ODD_GUILD) is None
    move = even.game.move_number
    played = await even.click(even.active(), "No thanks!")
    assert played.acknowledged and not played.ephemeral
    assert even.game.move_number == move + 1
    assert f"move {move + 1}" in (even.embed.footer.text or "")
    # Both turns' deadlines pass: only shard 0's timer runs here.
    odd_edits = edits_of(simcord_env, odd)
    await simcord_env.advance_time(61)
    assert "ran out of time" in (even.message.content or "")
    assert await stored_row(simcord_env, odd) == odd_before
    assert edits_of(simcord_env, odd) == odd_edits
    # Discord sends shard 1's clicks to shard 1's process, not to this one.
    unrouted = await odd.click(odd.actor(odd.game.active_player or ""), "No thanks!")
    assert not unrouted.acknowledged
    assert await stored_row(simcord_env, odd) == odd_before

    # Shard 1 moves to its own process: it restores the table and plays the overdue turn
    # from the saved deadline at once.
    even_edits = edits_of(simcord_env, even)
    even_message = copy.deepcopy(simcord_env.backend.get_message(even.channel.id, even.message_id))
    await simcord_env.restart_bot(shard_bot((1,)))
    await simcord_env.advance_time(0.1)
    bot = simcord_env.bot
    session = bot.tables.get(odd.table_id)
    assert session is not None and bot.tables.get(even.table_id) is None
    assert session.running_engine().move_number == odd_before[2] + 1
    assert "ran out of time" in (odd.message.content or "")
    # A button of the message before that turn names an earlier move: nothing is played.
    actor = odd.actor(odd.game.active_player or "")
    stale = await click_stored(actor, odd_old_message, button_ids_of(odd_old_message)["Take"])
    assert stale.ephemeral and stale.response.content.startswith(MOVED_ON)
    move = odd.game.move_number
    taken = await odd.click(actor, "Take")
    assert not taken.ephemeral and odd.game.move_number == move + 1
    assert edits_of(simcord_env, even) == even_edits  # shard 0's messages are left alone

    # Shard 0 moves back: a button drawn by its earlier process plays the current move.
    odd_edits = edits_of(simcord_env, odd)
    await simcord_env.restart_bot(shard_bot((0,)))
    move = even.game.move_number
    player = even.actor(even.game.active_player or "")
    again = await click_stored(player, even_message, button_ids_of(even_message)["No thanks!"])
    assert again.acknowledged and not again.ephemeral
    assert even.game.move_number == move + 1
    assert edits_of(simcord_env, odd) == odd_edits


def button_ids_of(stored: Any) -> dict[str, str]:
    """Label to custom_id for every button of a stored message."""
    return {
        item["label"]: item["custom_id"]
        for row in stored.components
        for item in row.get("components", [])
        if "custom_id" in item and "label" in item
    }


async def test_a_misrouted_click_or_command_for_another_shard_is_refused(
    simcord_env: Env, shard_bot: MakeBot, misrouted: None, caplog: pytest.LogCaptureFixture
) -> None:
    """A click or command from a guild of a shard this process does not run is answered
    privately with the reason, logged with the guild and shard, and changes nothing."""
    even, odd = await two_tables(simcord_env)
    await simcord_env.restart_bot(shard_bot((0,)))
    before = await stored_row(simcord_env, odd)
    edits = edits_of(simcord_env, odd)
    active = odd.actor(odd.game.active_player or "")

    with caplog.at_level(logging.WARNING, logger="bot.client.bot"):
        clicked = await odd.click(active, "No thanks!")
        stopped = await odd.players[0].slash(odd.channel, "nothanks stop")
        started = await odd.players[1].slash(odd.channel, "rage start")
    for result in (clicked, stopped, started):
        assert result.ephemeral and result.response.content.startswith(REFUSED)
    assert await stored_row(simcord_env, odd) == before
    assert edits_of(simcord_env, odd) == edits
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 3
    assert all(f"guild {ODD_GUILD} is on shard 1" in line for line in refusals)
    assert "nothanks table" in refusals[0] and "/nothanks stop" in refusals[1]
    assert all("shards 0 of 2" in line for line in refusals)

    # The own shard's table still plays, misrouting or not.
    move = even.game.move_number
    played = await even.click(even.active(), "No thanks!")
    assert not played.ephemeral and even.game.move_number == move + 1


async def click_in_dm(env: Env, table: Table) -> Any:
    """A table button clicked on the clicker's DM from the bot (its living chips message
    showing the table's buttons): a direct message interaction, sent to shard 0."""
    player = table.players[0]
    assert dms(player)
    dm_channel = player.user.dm_channel
    dm = dm_channel.history()[0]
    stored = copy.deepcopy(env.backend.get_message(dm_channel.id, dm.id))
    table_message = env.backend.get_message(table.channel.id, table.message_id)
    stored.components = copy.deepcopy(table_message.components)
    return await click_stored(player.user, stored, button_ids_of(stored)["No thanks!"])


async def test_a_direct_message_click_is_judged_by_its_tables_guild(
    simcord_env: Env, shard_bot: MakeBot, caplog: pytest.LogCaptureFixture
) -> None:
    """Discord sends direct-message clicks to shard 0. One naming a table of shard 1 is
    refused with the reason; one naming shard 0's own table is answered as before."""
    even, odd = await two_tables(simcord_env)
    await simcord_env.restart_bot(shard_bot((0,)))
    before = await stored_row(simcord_env, odd)

    with caplog.at_level(logging.WARNING, logger="bot.client.bot"):
        foreign = await click_in_dm(simcord_env, odd)
    assert foreign.ephemeral and foreign.response.content.startswith(REFUSED)
    assert await stored_row(simcord_env, odd) == before
    (line,) = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert f"table {odd.table_id}" in line and f"guild {ODD_GUILD} is on shard 1" in line

    own_before = await stored_row(simcord_env, even)
    own = await click_in_dm(simcord_env, even)
    # As without shards: a table is played from its own channel only.
    assert own.ephemeral and own.response.content.startswith(MOVED_ON)
    assert await stored_row(simcord_env, even) == own_before


async def test_a_process_claims_its_shards_before_it_restores_their_tables(
    simcord_env: Env, shard_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Start-up claims the process's shards first (a second claimant stops there); the bot
    that `python -m bot sync` builds claims nothing and leaves every table alone."""
    even, odd = await two_tables(simcord_env)
    calls: list[tuple[Any, ...]] = []
    # The backend's class: each backend has its own claim (SQLite's is a no-op).
    backend = type(simcord_env.bot.storage)
    claim, read = backend.claim_shards, backend.due_tables

    async def claiming(self: Storage, shard_ids: Sequence[int], count: int | None = None) -> None:
        calls.append(("claim", tuple(shard_ids), count))
        await claim(self, shard_ids, count)

    async def reading(
        self: Storage,
        until: float,
        since: float | None = None,
        shard_count: int | None = None,
        shard_ids: Collection[int] | None = None,
    ) -> list[Any]:
        calls.append(("restore", shard_count, None if shard_ids is None else sorted(shard_ids)))
        return await read(self, until, since, shard_count, shard_ids)

    monkeypatch.setattr(backend, "claim_shards", claiming)
    monkeypatch.setattr(backend, "due_tables", reading)
    await simcord_env.restart_bot(shard_bot((1,)))
    count = simcord_env.bot.shard_set.count
    # Only shard 1's tables are read from the database (what is due, at start).
    assert count and calls[:2] == [("claim", (1,), count), ("restore", count, [1])]
    assert all(call == ("restore", count, [1]) for call in calls[1:])

    calls.clear()
    rows: list[TableRecord | None] = [
        await simcord_env.bot.storage.get_table(table.table_id) for table in (even, odd)
    ]
    publisher = shard_bot((0, 1), serve_tables=False)
    await simcord_env.restart_bot(publisher)
    await simcord_env.advance_time(120)  # past every deadline: no timer may run
    assert calls == [] and len(publisher.tables) == 0
    assert publisher.tree.get_command("nothanks") is not None  # the commands it publishes
    for table, before in zip((even, odd), rows, strict=True):
        assert await publisher.storage.get_table(table.table_id) == before


async def test_shards_taken_over_meanwhile_stop_running_here(
    simcord_env: Env, misrouted: None, caplog: pytest.LogCaptureFixture
) -> None:
    """When another process took shard 1 while this one's claim was lost, this process
    stops running shard 1's tables (logged; their clicks refused, nothing changed) and goes
    on with shard 0's: it neither exits nor touches the other process's tables."""
    even, odd = await two_tables(simcord_env)
    bot = simcord_env.bot
    assert isinstance(bot, CardtableBot)
    assert bot.storage.on_shards_lost == bot.shards_lost
    before = await stored_row(simcord_env, odd)
    with caplog.at_level(logging.ERROR, logger="bot.client.bot"):
        bot.shards_lost([1], "shard 1 already claimed by another cardtable process")
    (line,) = [r.getMessage() for r in caplog.records if "stopped running" in r.getMessage()]
    assert "shards [1] and their 1 open tables" in line
    assert bot.tables.get(odd.table_id) is None and bot.tables.get(even.table_id) is not None
    await simcord_env.advance_time(61)  # odd's deadline passes: its timer no longer runs here
    assert await stored_row(simcord_env, odd) == before
    refused = await odd.click(odd.actor(odd.game.active_player or ""), "No thanks!")
    assert refused.ephemeral and refused.response.content.startswith(REFUSED)
    assert await stored_row(simcord_env, odd) == before
    move = even.game.move_number
    played = await even.click(even.active(), "No thanks!")
    assert not played.ephemeral and even.game.move_number >= move + 1
    assert not bot.is_closed() and bot.exit_status == 0
