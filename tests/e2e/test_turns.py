"""Computer players, turn timers, takeover and lobby expiry, with SimCord's simulated time."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from simcord import Env

from bot.client.bot import CardtableBot, now
from bot.table.timers import BOT_DELAY, LOBBY_TTL
from tests.e2e.helpers import NAMES, Table, button_ids, choose, message_by_id


async def start_table(env: Env, humans: int, pings: str = "every", **options: object) -> Table:
    """Open a No Thanks! table with ``humans`` people (plus any bots option) and start it,
    on a server whose turn pings setting is ``pings``."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    await env.bot.turn_pings.set(guild.id, pings)
    channel = guild.create_text_channel("games")
    players = [guild.add_member(env.create_user(name)) for name in NAMES[:humans]]
    result = await players[0].slash(channel, "nothanks start", **options)
    assert not result.ephemeral, result.response.content
    session = env.bot.tables.in_channel(channel.id)
    table = Table(env, guild, channel, players, result.response.id, session.id)
    for player in players[1:]:
        await table.click(player, "Join")
    await table.click(players[0], "Start")
    return table


def meta_of(table: Table):
    """The table's metadata as its session holds it."""
    return table.session.meta


async def test_add_computer_player_in_lobby(simcord_env: Env) -> None:
    """The host adds computer players with the lobby's select; others may not."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("games")
    ana = guild.add_member(simcord_env.create_user("ana"))
    ben = guild.add_member(simcord_env.create_user("ben"))
    result = await ana.slash(channel, "nothanks start")
    message = result.response.message
    await ben.click(message, label="Join")
    lobby = message_by_id(simcord_env, channel, message.id)
    select_id = next(
        item.custom_id for row in lobby.components for item in row.children if item.type.value == 3
    )
    refused = await ben.select(lobby, ["hard"], custom_id=select_id)
    assert refused.ephemeral and "Only the host" in refused.response.content
    await ana.select(lobby, ["hard"], custom_id=select_id)
    lobby = message_by_id(simcord_env, channel, message.id)
    seats = lobby.embeds[0].fields[0].value.splitlines()
    assert seats == ["1. ana", "2. ben", "3. 🤖 Computer 1 (hard)"]
    assert not next(
        item for row in lobby.components for item in row.children if item.label == "Start"
    ).disabled


@pytest.mark.simcord(window=0)  # the clock moves only when this test moves it
async def test_computer_players_move_after_a_short_delay(simcord_env: Env) -> None:
    """A computer's turn is played by itself after the visible delay, not before, through
    the engine."""
    table = await start_table(simcord_env, 1, bots=2, turn_seconds=600)
    assert len(table.game.players) == 3
    human = str(table.players[0].id)
    computer_moves = 0
    while table.running and computer_moves < 4:
        before = table.game.move_number
        if table.game.active_player == human:
            await table.click(table.players[0], choose(table.game))
            assert table.game.move_number == before + 1
            continue
        # The turn began at this instant (the last move, or the human's click just now).
        await simcord_env.advance_time(BOT_DELAY - 0.5)
        assert table.game.move_number == before  # still "thinking"
        await simcord_env.advance_time(0.5)
        assert table.game.move_number == before + 1
        computer_moves += 1
    assert computer_moves == 4
    assert all(int(p) < 0 for p in table.game.players if p != human)


async def test_three_computers_finish_a_game(simcord_env: Env) -> None:
    """A host who never acts is taken over after three timeouts; the game then ends by itself."""
    table = await start_table(simcord_env, 1, bots=2, turn_seconds=15)
    human = str(table.players[0].id)
    steps = 0
    saw_back_button = False
    while table.running:
        await simcord_env.advance_time(16)
        steps += 1
        if table.running and human in meta_of(table).away:
            saw_back_button = saw_back_button or "I'm back" in button_ids(table.message)
        assert steps < 400
    assert saw_back_button
    assert table.embed.title == "No Thanks! — final scores"
    record = await simcord_env.bot.storage.get_table(table.table_id)
    assert record.status == "finished"
    assert record.meta["timeouts"][human] >= 3


async def test_half_time_ping_and_timeout_move(simcord_env: Env) -> None:
    """At half time the player is pinged once; at the deadline the computer moves for them."""
    table = await start_table(simcord_env, 3, pings="half", turn_seconds=30)
    active = table.game.active_player
    assert "<t:" in table.embed.description  # the deadline as a relative timestamp
    await simcord_env.advance_time(16)
    pings = [m for m in table.channel.history() if "your turn" in m.content]
    assert len(pings) == 1 and f"<@{active}>" in pings[0].content
    await simcord_env.advance_time(10)
    assert len([m for m in table.channel.history() if "your turn" in m.content]) == 1
    assert table.game.move_number == 0
    await simcord_env.advance_time(5)
    assert table.game.move_number >= 1
    assert "ran out of time" in table.message.content
    assert meta_of(table).timeouts[active] == 1
    # Acting again resets the count.
    if table.game.active_player == active:
        await table.click(table.actor(active), "Take")
        assert active not in meta_of(table).timeouts


async def test_takeover_and_im_back(simcord_env: Env) -> None:
    """Three timeouts in a row hand the seat to a computer until its owner clicks I'm back."""
    table = await start_table(simcord_env, 3, turn_seconds=15)
    victim = table.game.active_player
    others = [p for p in table.players if str(p.id) != victim]
    for _ in range(300):
        if victim in meta_of(table).away:
            break
        if table.game.active_player == victim:
            await simcord_env.advance_time(16)
        else:
            await table.click(
                table.active(), "No thanks!" if table.game.chips[table.game.active] else "Take"
            )
    assert victim in meta_of(table).away
    assert "I'm back" in button_ids(table.message)
    stranger = others[0]
    refused = await table.click(stranger, "I'm back")
    assert refused.ephemeral and "playing your own seat" in refused.response.content
    await table.click(table.actor(victim), "I'm back")
    assert victim not in meta_of(table).away
    assert "I'm back" not in button_ids(table.message)


async def test_lobby_expires_after_fifteen_minutes(simcord_env: Env) -> None:
    """A lobby nobody starts closes itself after 15 minutes and frees the channel."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("games")
    ana = guild.add_member(simcord_env.create_user("ana"))
    result = await ana.slash(channel, "nothanks start")
    await simcord_env.advance_time(LOBBY_TTL - 5)
    assert simcord_env.bot.tables.in_channel(channel.id) is not None
    await simcord_env.advance_time(10)
    message = message_by_id(simcord_env, channel, result.response.id)
    assert "closed itself" in message.embeds[0].description
    assert simcord_env.bot.tables.in_channel(channel.id) is None
    again = await ana.slash(channel, "nothanks start")
    assert not again.ephemeral


async def test_overdue_turn_is_played_after_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """Deadlines are stored: a turn that fell due while the bot was down is played at once."""
    table = await start_table(simcord_env, 3, turn_seconds=60)
    # As if the bot had been down past the deadline: the stored row says so.
    record = await simcord_env.bot.storage.get_table(table.table_id)
    record.meta["turn"]["deadline"] = now() - 1
    await simcord_env.bot.storage.save_table(record)
    await simcord_env.restart_bot(make_bot())
    await simcord_env.advance_time(0.1)
    assert table.game.move_number == 1
    assert "ran out of time" in table.message.content


async def test_lobby_expiry_survives_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A lobby's expiry is rescheduled from its stored opening time after a restart."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("games")
    ana = guild.add_member(simcord_env.create_user("ana"))
    await ana.slash(channel, "nothanks start")
    await simcord_env.advance_time(LOBBY_TTL / 2)
    await simcord_env.restart_bot(make_bot())
    await simcord_env.advance_time(LOBBY_TTL / 2 + 1)
    assert simcord_env.bot.tables.in_channel(channel.id) is None


async def test_rage_with_computers_finishes_by_itself(simcord_env: Env) -> None:
    """A Rage table of one absent host and two computers plays all ten rounds by itself."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("rage")
    ana = guild.add_member(simcord_env.create_user("ana"))
    result = await ana.slash(channel, "rage start", bots=2, bot_level="hard", turn_seconds=15)
    await ana.click(result.response.message, label="Start")
    session = simcord_env.bot.tables.in_channel(channel.id)
    steps = 0
    while simcord_env.bot.tables.get(session.id) is not None:
        await simcord_env.advance_time(16)
        steps += 1
        assert steps < 600
    message = message_by_id(simcord_env, channel, result.response.id)
    assert message.embeds[0].title == "Rage — final standings"
    stored = await simcord_env.bot.storage.get_table(session.id)
    assert stored.status == "finished"
    assert str(ana.id) in stored.meta["away"]


def reminders(table: Table) -> list[object]:
    """The half-time reminders still in the table's channel."""
    return [m for m in table.channel.history() if "your turn at this table" in m.content]


async def test_the_player_to_act_is_mentioned_in_the_content(simcord_env: Env) -> None:
    """Embeds never ping: the content names the one person to act, and only they may be pinged."""
    table = await start_table(simcord_env, 3)
    for _ in range(3):
        await table.click(table.active(), "No thanks!")
        active = table.game.active_player
        assert f"▶ <@{active}>: your turn" in table.message.content
        body = [
            r.json.get("data", r.json)
            for r in simcord_env.http_requests
            if r.path.endswith("/callback") and isinstance(r.json, dict)
        ][-1]
        mentions = body["allowed_mentions"]
        assert mentions.get("parse", []) == []
        assert list(map(str, mentions["users"])) == [active]
        # One player decides: no "for anyone who has not decided".
        assert "anyone who has not decided" not in table.embed.description
        assert "Time runs out <t:" in table.embed.description


async def test_the_reminder_is_deleted_when_the_turn_passes(simcord_env: Env) -> None:
    """One reminder at half time, deleted once the turn passes: the channel keeps none."""
    table = await start_table(simcord_env, 3, pings="half", turn_seconds=30)
    for _ in range(3):
        await simcord_env.advance_time(16)
        assert len(reminders(table)) == 1
        assert meta_of(table).ping_message
        await table.click(table.active(), "No thanks!")
        await simcord_env.advance_time(0.1)
        assert reminders(table) == []
        assert meta_of(table).ping_message == []


async def test_a_passed_reminder_is_deleted_after_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A reminder whose turn passed while its deletion was pending goes after a restart."""
    table = await start_table(simcord_env, 3, pings="half", turn_seconds=30)
    await simcord_env.advance_time(16)
    (reminder,) = reminders(table)
    # As if the bot had stopped after the turn passed but before deleting the reminder.
    record = await simcord_env.bot.storage.get_table(table.table_id)
    record.meta["ping_message"] = [reminder.id, record.meta["turn"]["move"] - 1]
    await simcord_env.bot.storage.save_table(record)
    await simcord_env.restart_bot(make_bot())
    await simcord_env.advance_time(0.1)
    assert reminders(table) == []
    assert meta_of(table).ping_message == []
