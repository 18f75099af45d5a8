"""The No Thanks! table under bad input, restarts, races, DM failures and many channels."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from typing import Any

import discord
import pytest
from simcord import Env

from bot.client.bot import CardtableBot
from bot.engines.nothanks import TAKE
from bot.table.errors import UserError
from tests.e2e.helpers import button_ids, choose, click_stored, dms, open_table, snapshot

MOVED_ON = "This table has moved on"


async def test_lobby_flow_and_start_needs_three(simcord_env: Env) -> None:
    """The lobby lists seats; Start stays disabled until three players sit down."""
    table = await open_table(simcord_env, 2, start=False)
    start = next(
        item for row in table.message.components for item in row.children if item.label == "Start"
    )
    assert start.disabled
    assert table.embed.footer.text.startswith("1 more player needed to start")
    third = table.guild.add_member(simcord_env.create_user("cid"))
    await table.click(third, "Join")
    assert table.embed.fields[0].value.splitlines() == ["1. ana", "2. ben", "3. cid"]
    assert table.embed.footer.text.startswith("Ready")
    refused = await table.click(third, "Start")
    assert refused.ephemeral
    assert refused.response.content == "Only the host can start the game."
    assert table.session.status == "lobby"


async def test_lobby_join_leave_errors(simcord_env: Env) -> None:
    """Joining twice or leaving without a seat gets a clear private answer."""
    table = await open_table(simcord_env, 2, start=False)
    again = await table.click(table.players[1], "Join")
    assert again.ephemeral and again.response.content == "You already have a seat at this table."
    stranger = table.guild.add_member(simcord_env.create_user("zed"))
    left = await table.click(stranger, "Leave")
    assert left.ephemeral and left.response.content == "You are not seated at this table."
    await table.click(table.players[1], "Leave")
    assert table.embed.fields[0].value.splitlines() == ["1. ana"]


async def test_host_leaving_passes_host_on(simcord_env: Env) -> None:
    """When the host leaves, the next seated player hosts; the last one out closes it."""
    table = await open_table(simcord_env, 2, start=False)
    await table.click(table.players[0], "Leave")
    assert f"<@{table.players[1].id}>" in table.embed.description
    await table.click(table.players[1], "Leave")
    assert table.embed.title == "No Thanks! — table closed"
    assert table.message.components == []
    again = await table.players[0].slash(table.channel, "nothanks start")
    assert not again.ephemeral


async def test_lobby_full_at_seven(simcord_env: Env) -> None:
    """An eighth player cannot join: the Join button is disabled at seven seats."""
    table = await open_table(simcord_env, 7, start=False)
    join = next(
        item for row in table.message.components for item in row.children if item.label == "Join"
    )
    assert join.disabled
    assert table.embed.fields[0].name == "Players (7/7)"


async def test_cancel_permissions(simcord_env: Env) -> None:
    """Cancel works for the host or Manage Messages, and is refused to others."""
    table = await open_table(simcord_env, 2, start=False)
    refused = await table.click(table.players[1], "Cancel")
    assert refused.ephemeral and "Only the host" in refused.response.content
    mods = table.guild.create_role("Mods", permissions=discord.Permissions(manage_messages=True))
    mod = table.guild.add_member(simcord_env.create_user("mod"), roles=[mods])
    await table.click(mod, "Cancel")
    assert table.embed.title == "No Thanks! — table closed"
    assert f"<@{mod.id}>" in table.embed.description
    assert simcord_env.bot.tables.in_channel(table.channel.id) is None
    record = await simcord_env.bot.storage.get_table(table.table_id)
    assert record is not None and record.status == "cancelled"


async def test_second_start_links_to_table(simcord_env: Env) -> None:
    """A second /nothanks start in a busy channel answers privately with a link."""
    table = await open_table(simcord_env, 3)
    result = await table.players[1].slash(table.channel, "nothanks start")
    assert result.ephemeral
    assert "This channel already has a table" in result.response.content
    assert str(table.message_id) in result.response.content


async def test_out_of_turn_and_non_player(simcord_env: Env) -> None:
    """Only the active player can act; others get a private reason and nothing changes."""
    table = await open_table(simcord_env, 3)
    before = table.game.to_dict()
    other = next(p for p in table.players if str(p.id) != table.game.active_player)
    result = await table.click(other, "Take")
    assert result.ephemeral
    assert (
        result.response.content
        == f"It is not your turn: waiting for <@{table.game.active_player}>."
    )
    stranger = table.guild.add_member(simcord_env.create_user("zed"))
    for label in ("Take", "No thanks!", "My chips"):
        result = await table.click(stranger, label)
        assert result.ephemeral
        assert result.response.content.startswith("You are not at this table.")
    assert table.game.to_dict() == before
    record = await simcord_env.bot.storage.get_table(table.table_id)
    assert record is not None and record.move_number == 0


async def test_player_without_chips_must_take(simcord_env: Env) -> None:
    """No thanks! with no chips is refused with a private 'you must take'."""
    table = await open_table(simcord_env, 3)
    while table.game.chips[table.game.active] > 0:
        await table.click(table.active(), "No thanks!")
    card = table.game.current_card
    result = await table.click(table.active(), "No thanks!")
    assert result.ephemeral
    assert result.response.content == f"You have no chips left, so you must take {card}."
    assert table.game.chips_on_card == 33
    await table.click(table.active(), "Take")
    assert table.game.chips_on_card == 0


async def test_double_click_takes_one_card(simcord_env: Env) -> None:
    """Two clicks on the same Take (the taker acts again) take exactly one card."""
    table = await open_table(simcord_env, 3)
    actor = table.active()
    old = snapshot(simcord_env, table.message)
    take_id = button_ids(table.message)["Take"]
    first = await click_stored(actor, old, take_id)
    assert first.acknowledged and not first.ephemeral
    second = await click_stored(actor, old, take_id)
    assert second.ephemeral and second.response.content.startswith(MOVED_ON)
    seat = table.game.seat_of(str(actor.id))
    assert len(table.game.cards[seat]) == 1
    assert table.game.move_number == 1


async def test_click_after_message_changed_is_answered(simcord_env: Env) -> None:
    """A click carrying a button the message no longer shows still gets an answer."""
    table = await open_table(simcord_env, 3)
    take_id = button_ids(table.message)["Take"]
    await table.click(table.active(), "No thanks!")
    current = snapshot(simcord_env, table.message)
    result = await click_stored(table.active(), current, take_id)
    assert result.ephemeral and result.response.content.startswith(MOVED_ON)
    assert table.game.move_number == 1


async def test_racing_clicks_apply_once(simcord_env: Env) -> None:
    """Two players' clicks dispatched at the same moment apply at most one move."""
    table = await open_table(simcord_env, 3)
    old = snapshot(simcord_env, table.message)
    ids = button_ids(table.message)
    active = table.active()
    other = next(p for p in table.players if p is not active)
    results = []
    for actor, label in ((active, "Take"), (active, "No thanks!"), (other, "Take")):
        results.append(await click_stored(actor, old, ids[label]))
    assert table.game.move_number == 1
    answered = [r for r in results if r.acknowledged]
    assert len(answered) == 3
    assert sum(1 for r in results if not r.ephemeral) == 1


async def test_concurrent_moves_are_serialised(simcord_env: Env) -> None:
    """Moves raced inside the bot (no SimCord settling between them) apply exactly once."""
    table = await open_table(simcord_env, 3)
    session = table.session
    player = table.game.active_player
    assert player is not None
    outcomes: list[str] = []

    async def take() -> None:
        try:
            await session.change(lambda d: d.human_move(player, TAKE, expected_move=0, locale=None))
            outcomes.append("applied")
        except UserError as error:
            outcomes.append(type(error).__name__)

    await asyncio.gather(take(), take(), take())
    assert table.game.move_number == 1
    assert sorted(outcomes) == ["TableMovedOn", "TableMovedOn", "applied"]
    stored = await simcord_env.bot.storage.moves(table.table_id)
    assert len(stored) == 1


async def test_finished_game_buttons_moved_on(simcord_env: Env) -> None:
    """A Take on the message of a finished game changes nothing and says so."""
    table = await open_table(simcord_env, 3)
    stale = snapshot(simcord_env, table.message)
    take_id = button_ids(table.message)["Take"]
    while table.running:
        await table.click(table.active(), choose(table.game))
    result = await click_stored(table.players[0], stale, take_id)
    assert result.ephemeral and result.response.content.startswith(MOVED_ON)
    chips = await click_stored(table.players[0], stale, button_ids_from(stale)["My chips"])
    assert chips.ephemeral and chips.response.content.startswith(MOVED_ON)


async def test_stop_command(simcord_env: Env) -> None:
    """/nothanks stop: refused to other players, allowed to the host, recorded as abandoned."""
    table = await open_table(simcord_env, 3)
    refused = await table.players[1].slash(table.channel, "nothanks stop")
    assert refused.ephemeral and "Only the host" in refused.response.content
    stale = snapshot(simcord_env, table.message)
    done = await table.players[0].slash(table.channel, "nothanks stop")
    assert done.ephemeral and done.response.content == "The table has been stopped."
    assert table.embed.title == "No Thanks! — table closed"
    assert "abandoned" in table.embed.description
    record = await simcord_env.bot.storage.get_table(table.table_id)
    assert record is not None and record.status == "abandoned"
    late = await click_stored(table.players[0], stale, button_ids_from(stale)["Take"])
    assert late.ephemeral
    assert late.response.content == (
        f"This table was stopped by <@{table.players[0].id}>,"
        " so that button no longer does anything."
    )
    none = await table.players[0].slash(table.channel, "nothanks stop")
    assert none.ephemeral and none.response.content == "There is no table in this channel."


async def test_click_on_a_stopped_table_says_it_was_stopped(simcord_env: Env) -> None:
    """A legal move on a copy of the message from before /stop (a client not yet updated)
    is told privately who stopped the table, not that the table "moved on"; a private
    button too; and nothing changes."""
    table = await open_table(simcord_env, 4)
    dave = table.players[3]
    await table.click(table.active(), "No thanks!")
    stale = snapshot(simcord_env, table.message)
    ids = button_ids_from(stale)
    mods = table.guild.create_role("mods", permissions=discord.Permissions(manage_messages=True))
    mod = table.guild.add_member(simcord_env.create_user("mod"), roles=[mods])
    stopped = await mod.slash(table.channel, "nothanks stop")
    assert stopped.ephemeral and stopped.response.content == "The table has been stopped."
    said = f"This table was stopped by <@{mod.id}>, so that button no longer does anything."
    for label in ("No thanks!", "Take", "My chips"):
        late = await click_stored(dave, stale, ids[label])
        assert late.ephemeral and late.response.content == said, label
    assert table.embed.title == "No Thanks! — table closed"
    record = await simcord_env.bot.storage.get_table(table.table_id)
    assert record is not None and record.status == "abandoned" and record.move_number == 1
    # Another channel's table is not explained by this one's stop.
    other = await open_table(simcord_env, 3, guild=table.guild, channel_name="other")
    forged = await click_stored(other.players[0], other_copy(stale, other), ids["Take"])
    assert forged.ephemeral and forged.response.content.startswith(MOVED_ON)
    assert simcord_env.errors == []


def other_copy(stored: Any, table: Any) -> Any:
    """A stored message moved to another table's channel (its custom ids unchanged)."""
    moved = copy.deepcopy(stored)
    moved.channel_id = table.channel.id
    return moved


async def test_stop_answers_once_the_table_shows_it(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/stop answers only when the table's message shows the table closed: when that edit
    is slow, the answer is deferred (Discord's 3 s) and given after it."""
    table = await open_table(simcord_env, 3)
    # The edit of the table's message fails once and goes through 2.5 s later, past the
    # 2 s after which an answer is deferred.
    monkeypatch.setattr("bot.client.publishing.tables.RETRY_DELAYS", (2.5,))
    simcord_env.inject_error("PATCH", "/channels/*/messages/*", status=500, times=1)
    table_path = f"/channels/{table.channel.id}/messages/{table.message_id}"
    start = len(simcord_env.http_requests)
    done = await table.players[0].slash(table.channel, "nothanks stop")
    assert done.ephemeral and done.response.content == "The table has been stopped."
    assert table.embed.title == "No Thanks! — table closed"
    steps = []
    for request in simcord_env.http_requests[start:]:
        if request.path == table_path:
            steps.append("edit table")
        elif request.path.endswith("/callback"):
            steps.append(f"callback {request.json['type']}")
        elif request.path.startswith("/webhooks/"):
            steps.append("answer")
    # The failed edit, the deferral (type 5) at 2 s, the edit again at 2.5 s, the answer.
    assert steps == ["edit table", "callback 5", "edit table", "answer"]
    assert simcord_env.errors == []


def button_ids_from(stored: object) -> dict[str, str]:
    """Label to custom_id of a stored message snapshot."""
    ids = {}
    for row in stored.components:  # type: ignore[attr-defined]
        for item in row["components"]:
            ids[item["label"]] = item["custom_id"]
    return ids


async def test_restart_mid_game_keeps_buttons_working(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """After a restart (fresh bot, same database) the old message's buttons go on."""
    table = await open_table(simcord_env, 3)
    for _ in range(5):
        await table.click(table.active(), choose(table.game))
    before = table.game.to_dict()
    message_id = table.message_id
    await simcord_env.restart_bot(make_bot())
    assert table.game.to_dict() == before
    assert table.message_id == message_id
    result = await table.click(table.active(), "No thanks!")
    assert result.acknowledged and not result.ephemeral
    assert table.game.move_number == 6
    while table.running:
        await table.click(table.active(), choose(table.game))
    assert table.embed.title == "No Thanks! — final scores"


async def test_restart_keeps_lobby(simcord_env: Env, make_bot: Callable[[], CardtableBot]) -> None:
    """A lobby survives a restart: Join and Start on the old message still work."""
    table = await open_table(simcord_env, 2, start=False)
    await simcord_env.restart_bot(make_bot())
    third = table.guild.add_member(simcord_env.create_user("cid"))
    await table.click(third, "Join")
    await table.click(table.players[0], "Start")
    assert table.running
    busy = await third.slash(table.channel, "nothanks start")
    assert busy.ephemeral


async def test_two_channels_play_independently(simcord_env: Env) -> None:
    """Two channels host two games at once; moves in one never touch the other."""
    first = await open_table(simcord_env, 3, channel_name="one")
    second = await open_table(simcord_env, 4, guild=first.guild, channel_name="two")
    assert first.table_id != second.table_id
    for _ in range(10):
        await first.click(first.active(), choose(first.game))
        await second.click(second.active(), choose(second.game))
    assert first.game.move_number == 10 and second.game.move_number == 10
    assert first.game.players != second.game.players
    other_guild = simcord_env.create_guild()
    third = await open_table(simcord_env, 3, guild=other_guild, channel_name="games")
    assert third.running


async def test_dm_failure_hints_once_and_stops_retrying(simcord_env: Env) -> None:
    """Closed DMs: the game goes on, the player is told once to use My chips, no retries."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    closed_user = simcord_env.create_user("ben")
    dm_id = closed_user.dm_channel.id
    simcord_env.inject_error(
        "POST",
        f"/channels/{dm_id}/messages",
        status=403,
        code=50007,
        message="Cannot send messages to this user",
        times=None,
    )
    channel = guild.create_text_channel("games")
    ana = guild.add_member(simcord_env.create_user("ana"))
    ben = guild.add_member(closed_user)
    cid = guild.add_member(simcord_env.create_user("cid"))
    await ana.slash(channel, "nothanks start")
    lobby = channel.last_message
    await ben.click(lobby, label="Join")
    await cid.click(lobby, label="Join")
    await ana.click(lobby, label="Start")
    from tests.e2e.helpers import Table

    session = simcord_env.bot.tables.in_channel(channel.id)
    table = Table(simcord_env, guild, channel, [ana, ben, cid], lobby.id, session.id)
    assert session.meta.dm_closed == [str(ben.id)]
    assert len(dms(ana)) == 1 and len(dms(cid)) == 1
    posts = [r for r in simcord_env.http_requests if r.path == f"/channels/{dm_id}/messages"]
    assert len(posts) == 1
    hinted = 0
    while table.running and table.game.move_number < 40:
        actor = table.active()
        result = await table.click(actor, choose(table.game))
        if actor is ben:
            hinted += len(result.followups)
            for followup in result.followups:
                assert followup.ephemeral
                assert "could not DM you" in followup.content
    assert hinted == 1
    posts = [r for r in simcord_env.http_requests if r.path == f"/channels/{dm_id}/messages"]
    assert len(posts) == 1
    mine = await table.click(ben, "My chips")
    assert mine.ephemeral and "You have" in mine.response.content


async def test_storage_failure_changes_nothing_and_is_reported(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """If the commit fails, the player gets an apology, the game is unchanged, the log has it."""
    caplog.set_level(logging.WARNING, logger="bot.table.session")
    table = await open_table(simcord_env, 3)
    before = table.game.to_dict()
    storage = simcord_env.bot.storage
    original = storage.save_table

    async def broken(*_: object, **__: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(storage, "save_table", broken)
    result = await table.click(table.active(), "No thanks!")
    assert result.ephemeral
    assert result.response.content.startswith("Sorry, I could not save that move")
    assert simcord_env.errors == []  # answered, and logged with its cause:
    logged = [r for r in caplog.records if "ended without an answer" in r.getMessage()]
    assert len(logged) == 1 and isinstance(logged[0].exc_info[1], OSError)
    assert table.game.to_dict() == before
    assert table.embed.footer.text.startswith(f"Table #{table.table_id} · move 0")
    monkeypatch.setattr(storage, "save_table", original)
    ok = await table.click(table.active(), "No thanks!")
    assert not ok.ephemeral and table.game.move_number == 1
