"""Faults and abuse around a table: bad rows, lost messages, permissions, forged ids, DMs."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import Any

import discord
from simcord import Env

from bot.client.bot import CardtableBot
from bot.table.spec import Letter
from tests.e2e.helpers import (
    NAMES,
    click_stored,
    message_by_id,
    open_table,
    snapshot,
)

MOVED_ON = "This table has moved on"


def plant(stored: Any, custom_id: str) -> Any:
    """Put a forged custom id on a stored message's first component, as a modded client could."""
    stored.components[0]["components"][0]["custom_id"] = custom_id
    return stored


def corrupt_state(path: object, table_id: int) -> None:
    """Overwrite a stored game with something no engine can load (a hand edit)."""
    connection = sqlite3.connect(str(path))
    try:
        connection.execute("UPDATE tables SET state = ? WHERE id = ?", ('{"no": 1}', table_id))
        connection.commit()
    finally:
        connection.close()


async def test_a_bad_row_is_quarantined_and_the_others_start(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A table whose row no longer loads is closed as broken and says so; others play on."""
    bad = await open_table(simcord_env, 3, channel_name="bad")
    good = await open_table(simcord_env, 3, guild=bad.guild, channel_name="good")
    corrupt_state(simcord_env.bot.settings.database, bad.table_id)
    await simcord_env.restart_bot(make_bot())
    assert simcord_env.bot.tables.get(bad.table_id) is None
    stored = await simcord_env.bot.storage.get_table(bad.table_id)
    assert stored is not None and stored.status == "broken"
    embed = bad.message.embeds[0]
    assert (
        embed.description == "This table could not be restored after a restart, so it was closed."
    )
    assert bad.message.components == []
    again = await bad.players[0].slash(bad.channel, "nothanks start")
    assert not again.ephemeral  # the channel is free
    moved = await good.click(good.active(), "No thanks!")
    assert not moved.ephemeral and good.game.move_number == 1
    assert simcord_env.errors == []


async def test_start_refused_without_the_permissions_a_table_needs(simcord_env: Env) -> None:
    """Where the bot cannot post embeds, /start is refused privately, naming what is missing."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    me = guild.me
    assert me is not None
    channel = guild.create_text_channel(
        "locked",
        overwrites={me: discord.PermissionOverwrite(embed_links=False, read_message_history=False)},
    )
    ana = guild.add_member(simcord_env.create_user("ana"))
    result = await ana.slash(channel, "nothanks start")
    assert result.ephemeral
    assert result.response.content == (
        "I can't run a table in this channel: I am missing Embed Links, Read Message History."
        " Ask an admin to give me these permissions here."
    )
    assert simcord_env.bot.tables.in_channel(channel.id) is None
    assert await simcord_env.bot.storage.open_tables() == []


async def test_deleted_table_message_is_posted_again(simcord_env: Env) -> None:
    """A deleted table message is posted anew at the next update, and play goes on there."""
    table = await open_table(simcord_env, 3)
    simcord_env.backend.delete_message(table.channel.id, table.message_id)
    session = table.session
    await simcord_env.advance_time(61)  # the turn times out: the computer moves, the table updates
    new_id = session.record.message_id
    assert new_id is not None and new_id != table.message_id
    table.message_id = new_id
    assert table.embed.footer.text.startswith(f"Table #{table.table_id} · move 1")
    assert "ran out of time" in (table.message.content or "")
    moved = await table.click(table.active(), "Take")
    assert not moved.ephemeral and table.game.move_number == 2
    assert simcord_env.errors == []


async def test_table_that_cannot_be_shown_is_explained_to_the_next_clicker(
    simcord_env: Env,
) -> None:
    """If the message can neither be edited nor posted again, the next clicker is told."""
    table = await open_table(simcord_env, 3)
    simcord_env.inject_error("PATCH", "/channels/*/messages/*", status=403, code=50013, times=None)
    simcord_env.inject_error("POST", "/channels/*/messages", status=403, code=50013, times=None)
    session = table.session
    await simcord_env.advance_time(61)  # a timeout move the table cannot show
    assert simcord_env.bot.publisher.tables.cannot_show(session)
    result = await table.click(table.active(), "No thanks!")
    told = [m.content for m in result.followups if m.ephemeral]
    assert any(text.startswith("I can't show this table in this channel") for text in told)


async def test_table_command_posts_the_table_again(simcord_env: Env) -> None:
    """/nothanks table posts the table at the bottom; the old copy points to it."""
    table = await open_table(simcord_env, 3)
    old = table.message_id
    result = await table.players[1].slash(table.channel, "nothanks table")
    assert not result.ephemeral and result.response is not None
    assert table.session.record.message_id == result.response.id
    assert result.response.embeds[0].footer.text.startswith(f"Table #{table.table_id} · move 0")
    pointer = message_by_id(simcord_env, table.channel, old)
    assert pointer.components == [] and pointer.embeds == []
    assert "bottom of the channel" in pointer.content
    table.message_id = result.response.id
    moved = await table.click(table.active(), "Take")
    assert not moved.ephemeral and table.game.move_number == 1
    empty = table.guild.create_text_channel("empty")
    none = await table.players[0].slash(empty, "nothanks table")
    assert none.ephemeral


async def test_forged_ids_naming_another_table_are_refused(simcord_env: Env) -> None:
    """Ids planted on a message that name another channel's or server's table change nothing."""
    here = await open_table(simcord_env, 3, channel_name="here")
    there = await open_table(simcord_env, 3, guild=here.guild, channel_name="there")
    elsewhere = await open_table(simcord_env, 3, channel_name="elsewhere")
    for target in (there, elsewhere):
        forged = f"ct:nothanks:{target.table_id}:0:take"
        stored = plant(snapshot(simcord_env, here.message), forged)
        result = await click_stored(here.active(), stored, forged)
        assert result.ephemeral and result.response.content.startswith(MOVED_ON)
        assert target.game.move_number == 0
    assert here.game.move_number == 0


async def test_forged_rematch_of_another_game_is_refused(simcord_env: Env) -> None:
    """A No Thanks! table cannot be 'rematched' as Rage through a planted id."""
    table = await open_table(simcord_env, 3)
    while table.running:  # everyone takes: the shortest way to a finished game
        await table.click(table.active(), "Take")
    forged = f"ct:rage:{table.table_id}:0:rematch"
    stored = plant(snapshot(simcord_env, table.message), forged)
    result = await click_stored(table.players[0], stored, forged)
    assert result.ephemeral and result.response.content.startswith(MOVED_ON)
    assert simcord_env.bot.tables.in_channel(table.channel.id) is None


async def test_joker_colour_prompt_only_for_the_player_to_act(simcord_env: Env) -> None:
    """A planted 'play the Joker' choice from a player not to act gets no colour prompt."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("rage")
    players = [guild.add_member(simcord_env.create_user(name)) for name in NAMES[:3]]
    result = await players[0].slash(channel, "rage start")
    lobby = result.response
    for player in players[1:]:
        await player.click(lobby, label="Join")
    await players[0].click(lobby, label="Start")
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None and session.engine is not None
    acting = set(session.engine.acting_players())
    idle = next(p for p in players if str(p.id) not in acting) if len(acting) < 3 else None
    assert idle is not None  # standard bidding is one at a time, so someone waits
    move = session.engine.move_number
    forged = f"ct:rage:{session.id}:{move}:play:JOKER"
    # The acting player's private button, re-aimed at "play the Joker", used by someone else.
    table_message = message_by_id(simcord_env, channel, lobby.id)
    acting_actor = next(p for p in players if str(p.id) in acting)
    hand = await acting_actor.click(table_message, label="Show my hand")
    stored = plant(snapshot(simcord_env, hand.response.message), forged)
    answer = await click_stored(idle, stored, forged)
    assert answer.ephemeral
    assert "not your turn" in answer.response.content
    assert session.engine.move_number == move


async def test_closed_dms_tried_once_when_letters_race(simcord_env: Env) -> None:
    """Two DMs racing to a player with closed DMs make one attempt; the hint is owed once."""
    table = await open_table(simcord_env, 3)
    ben = table.players[1]
    dm_id = ben.user.dm_channel.id
    simcord_env.inject_error(
        "POST", f"/channels/{dm_id}/messages", status=403, code=50007, times=None
    )
    session = table.session
    before = len([r for r in simcord_env.http_requests if r.path == f"/channels/{dm_id}/messages"])
    letter = Letter(str(ben.id), "nothanks.dm.started", {"count": 11})
    publisher = simcord_env.bot.publisher
    publisher.deliver(session, [letter])
    publisher.deliver(session, [letter])
    # Queued from the test's own task, so not bot-owned work that settle() would join.
    await asyncio.wait_for(publisher.lane.idle(), 10)
    posts = [r for r in simcord_env.http_requests if r.path == f"/channels/{dm_id}/messages"]
    assert len(posts) - before <= 1
    assert session.meta.dm_closed.count(str(ben.id)) == 1
    assert session.meta.hint_pending.count(str(ben.id)) == 1


async def test_nobody_is_pinged_but_the_people_meant(simcord_env: Env) -> None:
    """Every public message names who it may ping; @everyone and roles never."""
    table = await open_table(simcord_env, 3, names=["@everyone", "<@&1>", "cid"], pictures=False)
    for _ in range(4):
        await table.click(table.active(), "No thanks!")
    channel_paths = (f"/channels/{table.channel.id}/", "/interactions/", "/webhooks/")
    public = [
        r.json.get("data", r.json)
        for r in simcord_env.http_requests
        if r.method in ("POST", "PATCH")
        and isinstance(r.json, dict)
        and any(part in r.path for part in channel_paths)
        and isinstance(r.json.get("data", r.json), dict)
        and (r.json.get("data", r.json).get("embeds") or r.json.get("data", r.json).get("content"))
    ]
    assert public
    for body in public:
        mentions = body.get("allowed_mentions")
        assert mentions is not None, body.get("content")
        # No blanket parsing: not @everyone, not roles, not every user a text mentions.
        assert mentions.get("parse", []) == []
        # Only the one person to act may be pinged (the starter, then each turn's player).
        users = set(map(str, mentions.get("users", [])))
        assert len(users) <= 1 and users <= {str(p.id) for p in table.players}
    shown = table.embed.description or ""
    assert "@\u200beveryone" in shown  # the name is shown, defused
    assert "@everyone" not in shown.replace("@\u200beveryone", "")


async def test_rematch_keeps_computer_levels_and_takes_another_computer(simcord_env: Env) -> None:
    """A rematch keeps a hard computer as hard; adding a computer there gives a new seat."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("games")
    ana, ben = (guild.add_member(simcord_env.create_user(name)) for name in ("ana", "ben"))
    result = await ana.slash(channel, "nothanks start", bots=1, bot_level="hard")
    lobby = result.response
    await ben.click(lobby, label="Join")
    await ana.click(lobby, label="Start")
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None
    people = {str(ana.id): ana, str(ben.id): ben}
    for _ in range(200):
        if simcord_env.bot.tables.get(session.id) is None:
            break
        active = session.acting_players()[0]
        if active in people:
            await people[active].click(message_by_id(simcord_env, channel, lobby.id), label="Take")
        else:
            await simcord_env.advance_time(2.5)
    assert session.status == "finished"
    rematch = await ben.click(message_by_id(simcord_env, channel, lobby.id), label="Rematch")
    assert not rematch.ephemeral
    again = simcord_env.bot.tables.in_channel(channel.id)
    assert again is not None
    assert again.record.seats == [-1, ben.id] or again.record.seats == [ben.id, -1]
    assert again.meta.computers == {"-1": "hard"}
    shown = message_by_id(simcord_env, channel, rematch.response.id)
    select_id = next(
        item.custom_id for row in shown.components for item in row.children if item.type.value == 3
    )
    await ben.select(shown, ["easy"], custom_id=select_id)
    assert sorted(again.record.seats) == sorted([-1, -2, ben.id])
    assert again.meta.computers == {"-1": "hard", "-2": "easy"}
    await ana.click(message_by_id(simcord_env, channel, rematch.response.id), label="Join")
    started = await ben.click(
        message_by_id(simcord_env, channel, rematch.response.id), label="Start"
    )
    assert not started.ephemeral and again.status == "running"
    assert simcord_env.errors == []
