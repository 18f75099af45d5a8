"""Tables out of memory, as players see them in Discord: an idle table leaves memory
without a trace on screen, a click brings it back, its due times still fire once, and a
stopped table is known after a restart (SimCord, virtual clock)."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable

import pytest
from simcord import Env

from bot.client.bot import CardtableBot
from bot.runtime.settings import Settings
from tests.e2e.helpers import (
    Table,
    choose,
    click_stored,
    dms,
    open_table,
    snapshot,
)
from tests.e2e.test_cardtable_cog import setup_guild
from tests.e2e.test_table_images import until

IDLE = 60.0  # seconds a table stays in memory unused, in these tests
LONG_TURN = 600  # the longest turn a command gives: its ping and deadline lie past IDLE


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The test settings, with tables leaving memory after a minute unused."""
    return dataclasses.replace(settings, table_idle_seconds=IDLE)


def board(table: Table) -> tuple[object, ...]:
    """What a finished No Thanks! game left on the table: cards, chips, every move."""
    game = table.game
    moves = [(m.seat, m.action, m.card, m.chips_on_card) for m in game.history]
    return tuple(map(tuple, game.cards)), tuple(game.chips), tuple(moves)


async def play_to_the_end(table: Table, *, pause_at: int | None = None) -> None:
    """Play the game out with the helpers' deterministic player; at move ``pause_at``
    everyone leaves the table alone until it has left memory (its message, buttons and
    DMs unchanged meanwhile)."""
    env = table.env
    while table.running:
        if table.game.move_number == pause_at:
            shown = snapshot(env, table.message)
            letters = [dms(player) for player in table.players]
            await env.advance_time(IDLE + 1)
            assert env.bot.tables.get(table.table_id) is None  # out of memory
            after = snapshot(env, table.message)
            assert (after.content, after.embeds, after.components) == (
                shown.content,
                shown.embeds,
                shown.components,
            )
            assert [dms(player) for player in table.players] == letters
        result = await table.click(table.active(), choose(table.game))
        assert not result.ephemeral, result.response.content


async def test_a_table_unloaded_mid_game_plays_to_the_same_end(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two tables dealt alike and played alike: one left alone mid-game leaves memory,
    its next click loads it from its row, and both end on the same board and scores."""
    monkeypatch.setattr(secrets, "randbits", lambda bits: 424242)
    kept = await open_table(simcord_env, 3, turn_seconds=LONG_TURN, channel_name="kept")
    await play_to_the_end(kept)
    moved = await open_table(
        simcord_env, 3, guild=kept.guild, turn_seconds=LONG_TURN, channel_name="moved"
    )
    await play_to_the_end(moved, pause_at=7)
    assert board(moved) == board(kept)
    assert moved.embed.title == kept.embed.title == "No Thanks! — final scores"
    kept_scores = [field.value for field in kept.embed.fields]
    moved_scores = [field.value for field in moved.embed.fields]
    assert moved_scores == kept_scores
    record = await simcord_env.bot.storage.get_table(moved.table_id)
    assert record is not None and record.status == "finished" and record.due_at is None


@pytest.mark.simcord(window=0)
async def test_a_ping_due_while_unloaded_is_sent_once(simcord_env: Env) -> None:
    """The half-time reminder of a long turn falls due while the table is out of memory:
    the scheduler loads it in time and the player is reminded once; at the deadline the
    computer moves for them once."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    await simcord_env.bot.turn_pings.set(guild.id, "half")
    table = await open_table(simcord_env, 3, guild=guild, turn_seconds=LONG_TURN)
    await simcord_env.advance_time(IDLE + 1)
    assert simcord_env.bot.tables.get(table.table_id) is None

    def reminders() -> list[str]:
        return [m.content for m in table.channel.history() if "your turn" in m.content]

    assert reminders() == []
    await simcord_env.advance_time(LONG_TURN / 2 - IDLE - 2)  # just before half time
    assert reminders() == []
    await simcord_env.advance_time(2)
    assert len(reminders()) == 1
    await simcord_env.advance_time(LONG_TURN / 2 - 5)  # just before the deadline
    assert len(reminders()) == 1 and table.game.move_number == 0
    await simcord_env.advance_time(10)
    assert table.game.move_number == 1 and "ran out of time" in table.message.content
    moves = await simcord_env.bot.storage.moves(table.table_id)
    assert [m[0] for m in moves] == [1]


async def test_a_stopped_table_is_known_after_a_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A click on a table stopped before a restart is told who stopped it, from its row."""
    table = await open_table(simcord_env, 3)
    stale = snapshot(simcord_env, table.message)
    ids = {
        item["label"]: item["custom_id"] for row in stale.components for item in row["components"]
    }
    stopped = await table.players[0].slash(table.channel, "nothanks stop")
    assert stopped.response.content == "The table has been stopped."
    await simcord_env.restart_bot(make_bot())
    late = await click_stored(table.players[1], stale, ids["Take"])
    assert late.ephemeral
    assert late.response.content == (
        f"This table was stopped by <@{table.players[0].id}>,"
        " so that button no longer does anything."
    )


async def test_a_command_finds_the_channels_unloaded_table(simcord_env: Env) -> None:
    """/nothanks chips and /nothanks stop in a channel whose table left memory load it."""
    table = await open_table(simcord_env, 3, turn_seconds=LONG_TURN)
    await simcord_env.advance_time(IDLE + 1)
    assert simcord_env.bot.tables.get(table.table_id) is None
    chips = await table.players[1].slash(table.channel, "nothanks chips")
    assert chips.ephemeral and "chips" in chips.response.content.lower()
    await simcord_env.advance_time(IDLE + 1)
    assert simcord_env.bot.tables.get(table.table_id) is None
    done = await table.players[0].slash(table.channel, "nothanks stop")
    assert done.response.content == "The table has been stopped."
    assert table.embed.title == "No Thanks! — table closed"


async def test_images_off_reaches_a_table_out_of_memory(simcord_env: Env) -> None:
    """`/cardtable images off` takes the picture off every open table of the server,
    those out of memory too (loaded for it), as it does for those in memory."""
    guild, channel, (admin, _) = await setup_guild(simcord_env)
    table = await open_table(simcord_env, 3, guild=guild, turn_seconds=LONG_TURN)
    assert table.message.attachments
    await simcord_env.advance_time(IDLE + 1)
    assert simcord_env.bot.tables.get(table.table_id) is None
    answer = await admin.slash(channel, "cardtable images", show="off")
    assert answer.ephemeral and "text only" in answer.response.content
    await until(simcord_env, lambda: not table.message.attachments)
    assert "cards left" in (table.embed.description or "")
