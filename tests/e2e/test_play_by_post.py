"""Play by post: turn-based tables (a pace per table), with SimCord's virtual clock."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from simcord import Env

from bot.client.publishing.notices import NOTICE_GAP, RECENTLY
from bot.table.meta import PACES
from bot.table.timers import BOT_DELAY
from tests.e2e.helpers import NAMES, Table

DAY = PACES["24h"]
HOUR = 3600


async def pass_time(env: Env, seconds: float) -> None:
    """Move the virtual clock by ``seconds``, an hour at a time: one advance_time must
    settle within a few real seconds, and a day holds many periodic timers."""
    while seconds > 0:
        step = min(seconds, HOUR)
        await env.advance_time(step)
        seconds -= step


async def turn_based_table(
    env: Env, humans: int, *, pace: str | None = "24h", start: bool = True, **options: object
) -> Table:
    """Open a No Thanks! table at ``pace`` (None: the server's default) with ``humans``
    people (plus any bots option), and start it."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel("games")
    players = [guild.add_member(env.create_user(name)) for name in NAMES[:humans]]
    if pace is not None:
        options["pace"] = pace
    result = await players[0].slash(channel, "nothanks start", **options)
    assert result.response is not None and not result.ephemeral, result
    session = env.bot.tables.in_channel(channel.id)
    table = Table(env, guild, channel, players, result.response.id, session.id)
    for player in players[1:]:
        await table.click(player, "Join")
    if start:
        await table.click(players[0], "Start")
    return table


@pytest.mark.simcord(window=0)  # the clock moves only when this test moves it
async def test_pace_is_shown_and_people_get_the_long_clock(simcord_env: Env) -> None:
    """A 24 h table says so in its lobby and on the table; a person's deadline is a day
    away, a computer still moves after its usual pause, and at the deadline a computer
    plays for the absent person and the table says so."""
    table = await turn_based_table(simcord_env, 2, start=False, bots=1)
    assert len(table.session.record.seats) == 3
    lobby = table.embed.fields[-1].value
    assert "Turn-based: 24 h per move" in lobby and "seconds per turn" not in lobby
    await table.click(table.players[0], "Start")
    assert table.session.meta.pace == DAY
    assert "Turn-based: 24 h per move" in table.embed.description
    human = {str(p.id) for p in table.players}
    # Play until a person is to move (the computer may open), watching the computer's pace.
    while table.game.active_player not in human:
        before = table.game.move_number
        await simcord_env.advance_time(BOT_DELAY)
        assert table.game.move_number == before + 1
    turn = table.session.meta.turn
    assert turn is not None and turn.deadline == pytest.approx(simcord_env.bot.tables.clock() + DAY)
    absent = table.game.active_player
    before = table.game.move_number
    await pass_time(simcord_env, DAY - 60)
    assert table.game.move_number == before  # a whole day less a minute: still waiting
    await simcord_env.advance_time(61)
    assert table.game.move_number > before
    assert "ran out of time" in table.message.content
    assert table.session.meta.timeouts[absent] == 1


async def test_server_default_pace_and_an_explicit_live_start(simcord_env: Env) -> None:
    """/cardtable pace makes new tables turn-based by default; a start that says live is
    live; the setting is told back and shown in /cardtable about."""
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    admins = guild.create_role("Admins", permissions=discord.Permissions(manage_guild=True))
    owner = guild.add_member(simcord_env.create_user("owner"), roles=[admins])
    channel = guild.create_text_channel("setup")
    answer = await owner.slash(channel, "cardtable pace", default="72h", pings="both")
    assert answer.ephemeral
    assert "turn-based by default: 72 h per move" in answer.response.content
    assert "pinged in the channel" in answer.response.content
    about = await owner.slash(channel, "cardtable about")
    assert "72 h per move" in about.response.content
    await owner.slash(channel, "nothanks start")
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None and session.meta.pace == PACES["72h"]
    other = guild.create_text_channel("live")
    await owner.slash(other, "nothanks start", pace="live")
    live = simcord_env.bot.tables.in_channel(other.id)
    assert live is not None and live.meta.pace == 0 and not live.turn_based
    member = guild.add_member(simcord_env.create_user("member"))
    refused = await member.slash(channel, "cardtable pace", default="live")
    assert refused.ephemeral and simcord_env.bot.pace.pace_for(guild.id) == "72h"


async def test_turn_based_tables_ping_in_the_channel_only_when_the_server_says(
    simcord_env: Env,
) -> None:
    """DM only (the default): no channel ping at a turn-based table, even at half time;
    DM and channel ping: the server's /cardtable pings applies as at live tables."""
    quiet = await turn_based_table(simcord_env, 3)
    await pass_time(simcord_env, DAY / 2 + 60)
    assert not [m for m in quiet.channel.history() if "your turn" in m.content]
    loud = await turn_based_table(simcord_env, 3, start=False)
    await simcord_env.bot.pace_pings.set(loud.guild.id, "both")
    await loud.click(loud.players[0], "Start")
    await pass_time(simcord_env, DAY / 2 + 60)
    pings = [m for m in loud.channel.history() if "your turn" in m.content]
    assert pings and f"<@{loud.game.active_player}>" in pings[-1].content


async def test_final_board_shows_the_pace_and_a_rematch_keeps_it(simcord_env: Env) -> None:
    """A turn-based game that runs out by deadlines ends with its pace on the final board;
    its rematch is turn-based too."""
    table = await turn_based_table(simcord_env, 3, pace="1h")
    steps = 0
    while table.running:
        await simcord_env.advance_time(PACES["1h"] + 1)
        steps += 1
        assert steps < 400
    assert "final scores" in table.embed.title
    assert "Turn-based: 1 h per move" in table.embed.description
    await table.click(table.players[0], "Rematch")
    rematch = simcord_env.bot.tables.in_channel(table.channel.id)
    assert rematch is not None and rematch.id != table.table_id
    assert rematch.meta.pace == PACES["1h"]


def notices(actor: Any) -> list[discord.Message]:
    """The "your turn" DMs the bot sent a player, oldest first (not the living chip DM)."""
    return [
        m
        for m in actor.user.dm_channel.history()
        if "Your turn" in m.content or "✅" in m.content or "⏰ Time ran out" in m.content
    ]


def live_notice(actor: Any) -> discord.Message:
    """A player's one notice that still carries buttons."""
    (live,) = [m for m in notices(actor) if m.components]
    return live


async def test_your_turn_dm_carries_the_move_and_plays_it(simcord_env: Env) -> None:
    """The awaited player gets a new DM naming the game, server, channel (with a link) and
    the deadline, with Take / No thanks!, the card, the chips on it and their own chips;
    Take from the DM plays the move in the channel and the DM then says it is done."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    assert not notices(actor)  # everyone has just been at the table (joined, started)
    await simcord_env.advance_time(RECENTLY)
    message = live_notice(actor)
    text = message.content
    assert "Your turn" in text and "No Thanks!" in text and table.guild.name in text
    assert f"<#{table.channel.id}>" in text and table.session.jump_url in text
    assert f"<t:{int(table.session.meta.turn.deadline)}:R>" in text
    assert (
        f"It is your turn: {table.game.current_card} with" in text
        and "You have **11** chips" in text
    )
    labels = [item.label for row in message.components for item in row.children]
    assert labels == ["Take", "No thanks!"]
    others = [p for p in table.players if p.id != actor.id]
    assert all(not notices(p) for p in others)  # only the awaited player is told
    card = table.game.current_card
    before = table.game.move_number
    answer = await actor.user.click(message, label="No thanks!")
    assert not answer.ephemeral
    assert table.game.move_number == before + 1
    assert table.game.history[-1].card == card
    done = next(m for m in notices(actor) if m.id == message.id)
    assert done.content.startswith("✅ Done") and not done.components
    # The channel's table shows the move; the next player now has their notice.
    assert f"{actor.name}: No thanks! ({card})" in table.embed.description
    assert f"<@{table.game.active_player}>: your turn" in table.message.content
    assert live_notice(table.active()).id != message.id
