"""Play by post: turn-based tables (a pace per table), with SimCord's virtual clock."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import discord
import pytest
from simcord import Env
from simcord import interactions as simcord_interactions
from simcord.backend import serializers
from simcord.enums import InteractionType
from simcord.results import InteractionResult

from bot.client.bot import CardtableBot
from bot.client.outbound.lane import Priority
from bot.client.publishing.notices import NOTICE_GAP, RECENTLY, RETRY_DELAYS
from bot.client.publishing.tables import WATCHED
from bot.client.publishing.tables import priority as table_priority
from bot.engines.rage import Phase, RageState
from bot.i18n import t
from bot.table.meta import PACES
from bot.table.timers import BOT_DELAY
from tests.e2e.helpers import (
    NAMES,
    Table,
    button_ids,
    choose,
    click_stored,
    message_by_id,
    snapshot,
)

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
    """A turn-based game that runs out by deadlines ends with its pace and how long it
    took on the final board and in the history; its rematch is turn-based too."""
    table = await turn_based_table(simcord_env, 3, pace="1h")
    steps = 0
    while table.running:
        await simcord_env.advance_time(PACES["1h"] + 1)
        steps += 1
        assert steps < 400
    assert "final scores" in table.embed.title
    assert "Turn-based: 1 h per move" in table.embed.description
    meta = table.session.meta
    assert meta.ended_at is not None and meta.started_at is not None
    hours = int((meta.ended_at - meta.started_at) // 3600)
    # Three timeouts in a row for each of three people, an hour each, then computers.
    assert hours == 9
    assert "Turn-based: 1 h per move · played in 9 hours" in table.embed.description
    # The records keep the pace: the history list says it, and how long the game took.
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
        await simcord_env.bot.tree.sync()
    history = await table.players[0].slash(table.channel, "cardtable history")
    listed = history.response.embeds[0].description
    assert "Turn-based: 1 h per move · played in 9 hours" in listed
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


async def wait_for_notice(env: Env, actor: Any) -> discord.Message:
    """Move the clock a minute at a time until the player's notice is out (a notice waits
    for RECENTLY after their last action and NOTICE_GAP after their last notice)."""
    for _ in range(int((NOTICE_GAP + RECENTLY) // 60) + 2):
        live = [m for m in notices(actor) if m.components]
        if live:
            (message,) = live
            return message
        await env.advance_time(60)
    raise AssertionError(f"no turn notice reached {actor.name}")


def assert_one_live_notice_each(table: Table) -> None:
    """Never more than one notice with buttons per player at a table."""
    for player in table.players:
        assert len([m for m in notices(player) if m.components]) <= 1


async def test_a_turn_based_game_played_to_its_end_from_dms_and_the_channel(
    simcord_env: Env,
) -> None:
    """Three people play a 24 h game to its end: some moves from the "your turn" DM, some
    from the channel, and a few left to the deadline (the computer plays, the notice says
    so). The final board shows the standings and the pace; every notice is closed."""
    table = await turn_based_table(simcord_env, 3)
    step = from_dm = from_channel = timed_out = 0
    while table.running:
        step += 1
        assert step < 400
        actor = table.active()
        before = table.game.move_number
        if step % 25 == 7 and timed_out < 3:
            message = await wait_for_notice(simcord_env, actor)
            await pass_time(simcord_env, DAY)
            # The deadline fell due while the table was out of memory (a day idle): the
            # scheduler loaded it and the computer moved; it may have left memory again.
            await table.reload()
            assert table.game.move_number > before
            closed = next(m for m in notices(actor) if m.id == message.id)
            assert closed.content.startswith("⏰ Time ran out") and not closed.components
            timed_out += 1
        elif step % 2:
            message = await wait_for_notice(simcord_env, actor)
            label = choose(table.game)
            answer = await actor.user.click(message, label=label)
            assert not answer.ephemeral, answer.response.content
            from_dm += 1
        else:
            await table.click(actor, choose(table.game))
            from_channel += 1
        assert table.game.move_number > before or not table.running
        assert_one_live_notice_each(table)
    assert from_dm > 10 and from_channel > 10 and timed_out == 3
    assert table.embed.title == "No Thanks! — final scores"
    assert "Turn-based: 24 h per move" in table.embed.description
    record = await simcord_env.bot.storage.get_table(table.table_id)
    assert record is not None and record.status == "finished"
    await simcord_env.advance_time(5)
    for player in table.players:
        assert all(not m.components for m in notices(player))


async def test_a_stale_dm_button_changes_nothing(simcord_env: Env) -> None:
    """A DM button of a turn that has passed (a copy kept by a stale client) answers
    privately that the turn is over, and the table stays as it was."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    message = await wait_for_notice(simcord_env, actor)
    stored = snapshot(simcord_env, message)
    await table.click(actor, "No thanks!")
    before = (table.game.move_number, table.session.revision)
    take = button_ids(message)["Take"]
    answer = await click_stored(actor.user, stored, take)
    assert answer.ephemeral and "This turn is over" in answer.response.content
    assert (table.game.move_number, table.session.revision) == before
    await simcord_env.advance_time(5)
    closed = next(m for m in notices(actor) if m.id == message.id)
    assert closed.content.startswith("✅ Done") and not closed.components


async def test_a_dm_move_racing_a_channel_move_of_the_same_player(simcord_env: Env) -> None:
    """The same player clicks the same move in the DM and in the channel (both made for
    that move; SimCord runs one click at a time, and the table's lock orders them just
    so): whichever comes second changes nothing and is told so privately, either way."""
    table = await turn_based_table(simcord_env, 3)
    for dm_first in (True, False):
        actor = table.active()
        message = await wait_for_notice(simcord_env, actor)
        channel_copy = snapshot(simcord_env, table.message)
        channel_take = button_ids(table.message)["Take"]
        dm_copy = snapshot(simcord_env, message)
        dm_pass = button_ids(message)["No thanks!"]
        before = table.game.move_number
        if dm_first:
            first = await actor.user.click(message, label="No thanks!")
            second = await click_stored(actor, channel_copy, channel_take)
            assert second.ephemeral and "moved on" in second.response.content
        else:
            first = await click_stored(actor, channel_copy, channel_take)
            second = await click_stored(actor.user, dm_copy, dm_pass)
            assert second.ephemeral and "This turn is over" in second.response.content
        assert not first.ephemeral
        assert table.game.move_number == before + 1
        assert len(await simcord_env.bot.storage.moves(table.table_id)) == before + 1
        await simcord_env.advance_time(5)
        closed = next(m for m in notices(actor) if m.id == message.id)
        assert closed.content.startswith("✅ Done") and not closed.components


async def test_someone_elses_dm_button_is_refused(simcord_env: Env) -> None:
    """A player who forges the awaited player's DM button (the same custom id, from their
    own DM) is refused: the move is the acting user's, not the button's."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    message = await wait_for_notice(simcord_env, actor)
    other = next(p for p in table.players if p.id != actor.id)
    before = table.game.move_number
    stored = snapshot(simcord_env, message)
    stored.channel_id = other.user.dm_channel.id
    answer = await click_stored(other.user, stored, button_ids(message)["Take"])
    assert answer.ephemeral
    assert table.game.move_number == before


async def test_notices_wait_for_the_gap(simcord_env: Env) -> None:
    """A player whose turn comes again within NOTICE_GAP of their last notice is told only
    once the gap has passed."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    message = await wait_for_notice(simcord_env, actor)
    await actor.user.click(message, label="Take")  # taking: the same player goes again
    assert table.game.active_player == str(actor.id)
    await simcord_env.advance_time(RECENTLY + 1)
    assert not [m for m in notices(actor) if m.components]
    await simcord_env.advance_time(NOTICE_GAP - RECENTLY - 1)
    assert len([m for m in notices(actor) if m.components]) == 1
    assert len(notices(actor)) == 2


async def test_closed_dms_are_said_once_and_the_player_plays_from_the_channel(
    simcord_env: Env,
) -> None:
    """A player whose DMs refuse the notice plays from the channel; the table says once
    that their notices can't reach them, and no notice is tried again."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    simcord_env.inject_error(
        "POST", f"/channels/{actor.user.dm_channel.id}/messages", status=403, code=50007
    )
    await simcord_env.advance_time(RECENTLY + 1)
    assert str(actor.id) in table.session.meta.dm_closed
    assert "can't get turn notices by DM" in table.message.content
    assert f"<@{actor.id}>" in table.message.content
    await table.click(actor, "No thanks!")
    assert "can't get turn notices" not in table.message.content
    assert not notices(actor)


async def test_dm_buttons_work_after_a_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A notice sent before a restart plays its move after it (a fresh bot instance); no
    second notice is sent for that turn, and the next player's notice comes from the new
    bot and works too."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    message = await wait_for_notice(simcord_env, actor)
    await simcord_env.restart_bot(make_bot())
    await simcord_env.advance_time(RECENTLY + 1)
    assert len(notices(actor)) == 1  # remembered with the table: not sent again
    before = table.game.move_number
    answer = await actor.user.click(message, label="No thanks!")
    assert not answer.ephemeral, answer.response.content
    assert table.game.move_number == before + 1
    closed = next(m for m in notices(actor) if m.id == message.id)
    assert closed.content.startswith("✅ Done") and not closed.components
    following = table.active()
    second = await wait_for_notice(simcord_env, following)
    await following.user.click(second, label="No thanks!")
    assert table.game.move_number == before + 2


async def test_a_notice_after_a_restart_goes_to_the_dm_channel_the_table_remembers(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """After a restart, a player whose earlier notice the table remembers gets their next
    one in that DM channel: one request, without opening the channel first (the opening
    route's own limit made a wave of turns' notices late)."""
    table = await turn_based_table(simcord_env, 3)
    first = table.active()
    await first.user.click(await wait_for_notice(simcord_env, first), label="No thanks!")
    second = table.active()
    await second.user.click(await wait_for_notice(simcord_env, second), label="No thanks!")
    await simcord_env.restart_bot(make_bot())
    seen = len(simcord_env.http_requests)
    await table.click(table.active(), "No thanks!")  # loads the table: the first's turn
    assert table.active().id == first.id
    # The gap since their last notice holds across the restart: the clock moves to it.
    await wait_for_notice(simcord_env, first)
    after = simcord_env.http_requests[seen:]
    opened = [
        r
        for r in after
        if r.path.endswith("/users/@me/channels") and str(r.json["recipient_id"]) == str(first.id)
    ]
    assert not opened
    dm = f"/channels/{first.user.dm_channel.id}/messages"
    sent = [r for r in after if r.method == "POST" and r.path.endswith(dm)]
    assert len(sent) == 1 and "Your turn" in sent[0].json["content"]
    assert live_notice(first).content.startswith(sent[0].json["content"][:20])


async def test_a_notice_that_timed_out_is_sent_again(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A notice whose request timed out (a backlog at Discord's limits) is logged and tried
    again after RETRY_DELAYS[0], not left for the table's next change a day later."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    dms = simcord_env.bot.publisher.dms
    real = dms.dm_channel
    failed: list[int] = []

    async def timing_out(user_id: int) -> discord.PartialMessageable:
        if not failed:
            failed.append(user_id)
            raise TimeoutError
        return await real(user_id)

    monkeypatch.setattr(dms, "dm_channel", timing_out)
    await simcord_env.advance_time(RECENTLY)
    assert failed == [actor.id] and not notices(actor)
    assert any("trying again" in r.getMessage() for r in caplog.records)
    await simcord_env.advance_time(RETRY_DELAYS[0])
    assert "Your turn" in live_notice(actor).content
    assert len(notices(actor)) == 1


async def test_a_deadline_nobody_watches_edits_the_table_after_everything_else(
    simcord_env: Env,
) -> None:
    """A turn that passes at its deadline, at a table where nobody acted for WATCHED,
    edits the table message at the lowest priority (notices and live tables' DMs go
    first at a wave of deadlines); the edit still comes, saying the computer moved."""
    table = await turn_based_table(simcord_env, 3)
    lane = simcord_env.bot.lane
    await pass_time(simcord_env, DAY - HOUR)
    assert "ran out of time" not in table.message.content
    before = lane.started[Priority.COSMETIC]
    await pass_time(simcord_env, 2 * HOUR)
    assert lane.started[Priority.COSMETIC] > before
    assert "ran out of time, so the computer made that move" in table.message.content


def test_a_table_message_is_demoted_only_when_nobody_watches_a_turn_based_game() -> None:
    """Live tables, closed tables and turn-based tables where a person acted within
    WATCHED keep the table's priority; only a running turn-based table nobody acted at
    for WATCHED is edited at the lowest one."""

    def session(pace: int, status: str, acted_ago: float) -> Any:
        return SimpleNamespace(
            turn_based=pace > 0,
            status=status,
            clock=lambda: 10_000.0,
            meta=SimpleNamespace(acted={"1": 10_000.0 - acted_ago}),
        )

    assert table_priority(session(0, "running", WATCHED + 1)) is Priority.TABLE
    assert table_priority(session(DAY, "finished", WATCHED + 1)) is Priority.TABLE
    assert table_priority(session(DAY, "running", WATCHED - 1)) is Priority.TABLE
    assert table_priority(session(DAY, "running", WATCHED + 1)) is Priority.COSMETIC


async def test_a_closing_still_waiting_goes_before_the_next_notice(simcord_env: Env) -> None:
    """A notice's closing waits at the lowest priority; when the same player's next notice
    at that table goes first (the lane busy with other work), it closes the old notice
    itself before sending, so the player never has two live notices of one table."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    first = await wait_for_notice(simcord_env, actor)
    lane = simcord_env.bot.lane
    lane.limit_to(lambda: Priority.DM)  # the lowest priority's work is held back
    await table.click(actor, "Take")  # from the channel: the same player goes again
    assert table.game.active_player == str(actor.id)
    assert lane.pending_at(Priority.COSMETIC) >= 1
    seen = len(simcord_env.http_requests)
    await simcord_env.advance_time(NOTICE_GAP + 1)
    second = live_notice(actor)
    assert second.id != first.id
    closed = next(m for m in notices(actor) if m.id == first.id)
    assert closed.content.startswith("✅ Done") and not closed.components
    dm = f"/channels/{actor.user.dm_channel.id}/messages"
    order = [r.method for r in simcord_env.http_requests[seen:] if dm in r.path]
    assert order.index("PATCH") < order.index("POST")
    assert_one_live_notice_each(table)


def dm_buttons(message: discord.Message, action: str) -> list[discord.ui.Button[Any]]:
    """The enabled buttons of one action ("bid", "play", "joker") of a DM's panel."""
    found = []
    for row in message.components:
        for item in getattr(row, "children", []):
            parts = (item.custom_id or "").split(":")
            if parts[4:5] == [action] and not item.disabled:
                found.append(item)
    return found


async def test_a_rage_round_played_from_dms(simcord_env: Env) -> None:
    """A turn-based Rage round, bids and cards, played entirely from the "your turn" DMs:
    each DM carries the hand panel with the bid or the playable cards, and the channel's
    table follows."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("rage")
    players = [guild.add_member(simcord_env.create_user(name)) for name in NAMES[:3]]
    result = await players[0].slash(channel, "rage start", pace="12h")
    assert result.response is not None and not result.ephemeral
    for player in players[1:]:
        await player.click(result.response.message, label="Join")
    await players[0].click(result.response.message, label="Start")
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None and session.meta.pace == PACES["12h"]
    engine = session.engine
    assert isinstance(engine, RageState)
    first_round = engine.round
    bids = plays = 0
    while True:
        live = simcord_env.bot.tables.get(session.id)
        assert live is not None
        state = live.engine
        assert isinstance(state, RageState)
        if state.round != first_round or state.is_over:
            break
        (acting,) = state.acting_players()
        actor = next(p for p in players if str(p.id) == acting)
        message = await wait_for_notice(simcord_env, actor)
        assert "Rage" in message.content and "Your turn" in message.content
        before = state.move_number
        if state.phase is Phase.BIDDING:
            options = dm_buttons(message, "bid")
            assert options and not dm_buttons(message, "play")
            await actor.user.click(message, custom_id=options[len(options) // 2].custom_id)
            bids += 1
        else:
            options = dm_buttons(message, "play")
            assert options
            answer = await actor.user.click(message, custom_id=options[0].custom_id)
            colours = dm_buttons(answer.response.message, "joker") if answer.response else []
            if colours:  # a Joker: its colour is the second tap, on the same DM
                await actor.user.click(message, custom_id=colours[0].custom_id)
            plays += 1
        live = simcord_env.bot.tables.get(session.id)
        assert live is not None and live.engine is not None
        assert live.engine.move_number > before
        closed = next(m for m in actor.user.dm_channel.history() if m.id == message.id)
        assert closed.content.startswith("✅ Done") and not closed.components
    assert bids == 3 and plays >= 3
    # Every DM move was saved through the table's change path, in the move log.
    logged = await simcord_env.bot.storage.moves(session.id)
    assert len(logged) == bids + plays


async def test_cardtable_turns_lists_every_server_soonest_first(simcord_env: Env) -> None:
    """/cardtable turns, in a DM with the bot and in a server: every turn-based table
    waiting for the caller, in both servers, soonest deadline first, with links and time
    left; not a live table, nor one waiting for someone else."""
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
    await simcord_env.bot.tree.sync()
    ana, ben, cid = (simcord_env.create_user(name) for name in NAMES[:3])
    sessions = []
    for name, pace in (("first", "72h"), ("second", "1h"), ("third", "live")):
        guild = simcord_env.create_guild(name=name)
        channel = guild.create_text_channel(f"{name}-games")
        members = [guild.add_member(user) for user in (ana, ben, cid)]
        result = await members[0].slash(channel, "nothanks start", pace=pace)
        for member in members[1:]:
            await member.click(result.response.message, label="Join")
        await members[0].click(result.response.message, label="Start")
        session = simcord_env.bot.tables.in_channel(channel.id)
        assert session is not None
        sessions.append((guild, channel, session, members))
    # Pass in each game until Ana is to move everywhere.
    for _, channel, session, members in sessions:
        while session.acting_players() != (str(ana.id),):
            (acting,) = session.acting_players()
            member = next(m for m in members if str(m.id) == acting)
            table_message = message_by_id(simcord_env, channel, session.record.message_id)
            await member.click(table_message, label="No thanks!")
    answer = await ana.slash("cardtable turns")
    assert answer.ephemeral
    text = answer.response.content
    assert "Waiting for you** (2)" in text
    lines = [line for line in text.splitlines() if line.startswith("•")]
    assert len(lines) == 2
    (first_guild, first_channel, first, _), (second_guild, second_channel, second, _) = sessions[:2]
    assert second_guild.name in lines[0] and f"<#{second_channel.id}>" in lines[0]
    assert second.jump_url in lines[0]
    assert f"<t:{int(second.meta.turn.deadline)}:R>" in lines[0]
    assert first_guild.name in lines[1] and first.jump_url in lines[1]
    assert "third" not in text  # a live table is not play by post
    nothing = await ben.slash("cardtable turns")
    assert "No table is waiting for you" in nothing.response.content
    # In a server too, and it changes as the game moves on.
    members = sessions[1][3]
    await members[0].click(
        message_by_id(simcord_env, second_channel, second.record.message_id), label="No thanks!"
    )
    again = await sessions[0][3][0].slash(first_channel, "cardtable turns")
    assert again.ephemeral and "Waiting for you** (1)" in again.response.content
    refused = await ana.slash("cardtable pace", default="live")
    assert refused.ephemeral and "only works in a server" in refused.response.content


async def test_notify_none_and_daily_summary(simcord_env: Env) -> None:
    """/cardtable notify (in a DM with the bot): "none" sends no turn notice; "daily"
    sends one summary of every table waiting, then none until a day later; "every" brings
    the per-turn notice back."""
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    chosen = await actor.user.slash("cardtable notify", when="none")
    assert chosen.ephemeral and "no turn notices" in chosen.response.content
    await simcord_env.advance_time(RECENTLY + 1)
    assert not notices(actor)
    assert await simcord_env.bot.storage.get_user_notify(actor.id) == "none"
    await actor.user.slash("cardtable notify", when="daily")
    await table.click(actor, "Take")  # a change of the table: their turn again
    await simcord_env.advance_time(RECENTLY + 1)
    summaries = [m for m in actor.user.dm_channel.history() if "daily summary" in m.content]
    assert len(summaries) == 1 and table.session.jump_url in summaries[0].content
    assert not summaries[0].components and not notices(actor)
    await table.click(actor, "Take")
    await simcord_env.advance_time(RECENTLY + 1)
    summaries = [m for m in actor.user.dm_channel.history() if "daily summary" in m.content]
    assert len(summaries) == 1  # not again the same day
    await pass_time(simcord_env, HOUR * 12)
    await table.click(actor, "Take")  # still their table a day after the first summary
    await pass_time(simcord_env, HOUR * 12)
    summaries = [m for m in actor.user.dm_channel.history() if "daily summary" in m.content]
    assert len(summaries) == 2
    await actor.user.slash("cardtable notify", when="every")
    await table.click(actor, "Take")
    await simcord_env.advance_time(RECENTLY + 1)
    assert live_notice(actor)


async def race_clicks(env: Env, clicks: list[tuple[Any, Any, str]]) -> list[InteractionResult]:
    """Dispatch several button clicks at once and settle once: (actor, stored message,
    custom_id) each. SimCord's own click settles before the next; here the bot gets every
    INTERACTION_CREATE before it has handled the first, as Discord may send them."""
    records = []
    for actor, stored, custom_id in clicks:
        guild = getattr(actor, "guild", None)
        record, payload = simcord_interactions.base_payload(
            env.backend,
            type=InteractionType.MESSAGE_COMPONENT,
            channel_id=stored.channel_id,
            guild_id=None if guild is None else guild.id,
            user_id=actor.id,
            data={"custom_id": custom_id, "component_type": discord.ComponentType.button.value},
        )
        payload["message"] = dict(serializers.message_payload(env.backend, stored))
        record.source_message_id = stored.id
        env._notify_dispatch_observers(record)
        env.backend.emit("INTERACTION_CREATE", payload)
        records.append(record)
    await env._settle_internal(dispatch="INTERACTION_CREATE")
    return [InteractionResult(env, record) for record in records]


async def test_a_dm_move_and_a_channel_move_dispatched_together(simcord_env: Env) -> None:
    """The same player's DM click and channel click for one move reach the bot together:
    the table's lock orders them, one move is played and saved, the other click is told
    privately it came too late, and the move log holds one move."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    message = await wait_for_notice(simcord_env, actor)
    before = table.game.move_number
    dm = (actor.user, snapshot(simcord_env, message), button_ids(message)["No thanks!"])
    channel = (actor, snapshot(simcord_env, table.message), button_ids(table.message)["Take"])
    results = await race_clicks(simcord_env, [dm, channel])
    assert all(result.acknowledged for result in results)
    assert table.game.move_number == before + 1
    assert len(await simcord_env.bot.storage.moves(table.table_id)) == before + 1
    refused = [r for r in results if r.ephemeral]
    assert len(refused) == 1, [r.response.content if r.response else None for r in results]
    assert any(
        phrase in refused[0].response.content for phrase in ("This turn is over", "moved on")
    )


async def test_away_holds_deadlines_within_a_yearly_budget(simcord_env: Env) -> None:
    """/cardtable away (in a DM with the bot): the turn waiting for the away player runs
    out a pace after their return, not before; the table says once that they are away
    and shows until when; days beyond 14 a year are refused; 0 ends the absence early
    and gives back its whole days."""
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    start = simcord_env.bot.tables.clock()
    answer = await actor.user.slash("cardtable away", days=3)
    assert answer.ephemeral or answer.followups, answer
    text = (answer.followups[-1] if answer.followups else answer.response).content
    assert "You are away until" in text and "tables now: 1" in text and "this year: 11" in text
    turn = table.session.meta.turn
    assert turn is not None and turn.deadline == pytest.approx(start + 3 * DAY + DAY, abs=5)
    assert "is away for a while" in table.message.content
    assert "is away until <t:" in table.embed.description
    before = table.game.move_number
    await pass_time(simcord_env, 3 * DAY + DAY - 120)
    assert table.game.move_number == before  # held: four days and still waiting
    await pass_time(simcord_env, 240)
    assert table.game.move_number > before and "ran out of time" in table.message.content
    assert "is away until" not in table.embed.description  # back by now
    too_much = await actor.user.slash("cardtable away", days=12)
    refused = (too_much.followups[-1] if too_much.followups else too_much.response).content
    assert "11 more days this year" in refused
    not_away = await actor.user.slash("cardtable away", days=0)
    assert "not away" in not_away.response.content
    await actor.user.slash("cardtable away", days=5)
    await pass_time(simcord_env, DAY + HOUR)
    back = await actor.user.slash("cardtable away", days=0)
    said = (back.followups[-1] if back.followups else back.response).content
    # Five days taken, back after one and an hour: the three whole days left come back.
    assert "Welcome back" in said and "this year: 9" in said
    assert str(actor.id) not in table.session.meta.held


async def test_a_joker_from_a_dm_takes_its_colour_on_the_same_dm(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A Joker played from the "your turn" DM turns that DM into the colour choice; Back
    shows the hand there again (no new message); the colour then plays the Joker."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("rage")
    players = [guild.add_member(simcord_env.create_user(name)) for name in NAMES[:3]]
    result = await players[0].slash(channel, "rage start", pace="24h")
    for player in players[1:]:
        await player.click(result.response.message, label="Join")
    await players[0].click(result.response.message, label="Start")
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None
    a, b, c = (str(p.id) for p in players)
    state = RageState.from_deal(
        [a, b, c],
        {a: ["JOKER", "R3"], b: ["B4", "G5"], c: ["Y6", "B7"]},
        stack=["R9"],
        dealer=c,
        bids={a: 1, b: 0, c: 1},
    )
    record = await simcord_env.bot.storage.get_table(session.id)
    assert record is not None
    record.state = state.to_dict()
    record.move_number = state.move_number
    now = simcord_env.bot.tables.clock()
    record.meta["turn"] = {"move": state.move_number, "deadline": now + DAY, "pinged": False}
    await simcord_env.bot.storage.save_table(record)
    await simcord_env.restart_bot(make_bot())
    ana = players[0]
    # The table owes Ana her notice: its stored due time says so, the restart loads it
    # and the notice goes out (not only at the half-time reminder, half a day later).
    message = await wait_for_notice(simcord_env, ana)
    (joker,) = [b for b in dm_buttons(message, "play") if "JOKER" in (b.custom_id or "")]
    await ana.user.click(message, custom_id=joker.custom_id)
    asking = next(m for m in ana.user.dm_channel.history() if m.id == message.id)
    colours = dm_buttons(asking, "joker")
    assert len(colours) == 6  # one per colour of the deck
    (back,) = dm_buttons(asking, "hand")
    count = len(ana.user.dm_channel.history())
    await ana.user.click(asking, custom_id=back.custom_id)
    again = next(m for m in ana.user.dm_channel.history() if m.id == message.id)
    assert dm_buttons(again, "play") and not dm_buttons(again, "joker")
    assert len(ana.user.dm_channel.history()) == count  # the same DM, no new message
    await ana.user.click(again, custom_id=joker.custom_id)
    asking = next(m for m in ana.user.dm_channel.history() if m.id == message.id)
    await ana.user.click(asking, custom_id=dm_buttons(asking, "joker")[0].custom_id)
    live = simcord_env.bot.tables.get(session.id)
    assert live is not None and live.engine is not None
    assert live.engine.move_number == state.move_number + 1
    done = next(m for m in ana.user.dm_channel.history() if m.id == message.id)
    assert done.content.startswith("✅ Done") and not done.components


async def until_unloaded(env: Env, table: Table) -> None:
    """Move the clock a minute at a time until the table has left memory (its idle time,
    CARDTABLE_TABLE_IDLE_SECONDS, after its last use)."""
    for _ in range(int(env.bot.tables.idle_seconds // 60) + 3):
        if env.bot.tables.get(table.table_id) is None:
            return
        await env.advance_time(60)
    raise AssertionError(f"table {table.table_id} stayed in memory")


async def test_an_unloaded_turn_based_table_keeps_its_deadline_list_and_dm_buttons(
    simcord_env: Env,
) -> None:
    """A 24 h table left alone leaves memory: /cardtable turns still lists it (from the
    database); its deadline passes while it is out of memory (the scheduler loads it, the
    computer moves, the old notice says time ran out); once it has left memory again, the
    next player's DM button loads it and plays the move, and that DM says it is done."""
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
    table = await turn_based_table(simcord_env, 3)
    first = table.active()
    message = await wait_for_notice(simcord_env, first)
    await until_unloaded(simcord_env, table)
    stored = await simcord_env.bot.storage.get_table(table.table_id)
    assert stored is not None and stored.due_at is not None
    deadline = table.session.meta.turn.deadline
    assert stored.due_at <= deadline  # the half-time reminder, then the day's deadline
    listed = await first.user.slash("cardtable turns")
    assert listed.ephemeral and "Waiting for you** (1)" in listed.response.content
    assert f"<t:{int(deadline)}:R>" in listed.response.content
    assert table.session.jump_url in listed.response.content
    assert simcord_env.bot.tables.get(table.table_id) is None  # listing loads nothing
    other = next(p for p in table.players if p.id != first.id)
    nothing = await other.user.slash("cardtable turns")
    assert "No table is waiting for you" in nothing.response.content

    before = table.game.move_number
    await pass_time(simcord_env, DAY)
    session = await table.reload()
    assert session.engine is not None and session.engine.move_number == before + 1
    assert session.meta.timeouts.get(str(first.id), 0) == 1
    closed = next(m for m in notices(first) if m.id == message.id)
    assert closed.content.startswith("⏰ Time ran out") and not closed.components

    # The deal is random: a computer that took the card for the absent person leaves the
    # turn with them, so "next" may be the same person, told of their new turn.
    second = table.active()
    notice = await wait_for_notice(simcord_env, second)
    assert notice.id != message.id
    await until_unloaded(simcord_env, table)
    answer = await second.user.click(notice, label="No thanks!")
    assert not answer.ephemeral, answer.response.content
    live = simcord_env.bot.tables.get(table.table_id)
    assert live is not None and live.engine is not None
    assert live.engine.move_number == before + 2
    done = next(m for m in notices(second) if m.id == notice.id)
    assert done.content.startswith("✅ Done") and not done.components
    moves = await simcord_env.bot.storage.moves(table.table_id)
    assert len(moves) == before + 2  # each move saved once
    assert_one_live_notice_each(table)


async def test_away_holds_a_table_out_of_memory(simcord_env: Env) -> None:
    """/cardtable away finds a turn-based table that left memory (from the database),
    holds its deadline and stores the later due time: the computer does not move at the
    old deadline, while the table is out of memory again, but a pace after the return."""
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    await until_unloaded(simcord_env, table)
    before = (await table.reload()).engine
    assert before is not None
    start = simcord_env.bot.tables.clock()
    answer = await actor.user.slash("cardtable away", days=2)
    text = (answer.followups[-1] if answer.followups else answer.response).content
    assert "You are away until" in text and "tables now: 1" in text
    stored = await simcord_env.bot.storage.get_table(table.table_id)
    assert stored is not None and stored.due_at is not None
    held = (await table.reload()).meta.turn
    assert held is not None and held.deadline == pytest.approx(start + 3 * DAY, abs=5)
    assert stored.due_at > start + DAY  # no longer the first day's reminder or deadline
    await pass_time(simcord_env, 3 * DAY - 2 * HOUR)
    session = await table.reload()
    assert session.engine is not None
    assert session.engine.move_number == before.move_number  # held past the old deadline
    await pass_time(simcord_env, 3 * HOUR)
    session = await table.reload()
    assert session.engine is not None
    assert session.engine.move_number == before.move_number + 1


async def stop_and_list(table: Table) -> tuple[str, str]:
    """The host stops the table; the table's closed message and the server's history."""
    stopped = await table.players[0].slash(table.channel, "nothanks stop")
    assert stopped.ephemeral and stopped.response.content == t("table.stopped", "en"), stopped
    closed = table.message.embeds[0].description or ""
    listed = await table.players[0].slash(table.channel, "cardtable history")
    return closed, listed.response.embeds[0].description or ""


async def test_the_host_ends_a_stalled_game_and_the_records_say_so(simcord_env: Env) -> None:
    """A 24 h game whose person missed a turn (a day passed) is stalled: a non-host may
    not stop it; the host's stop says "ended by the host after it stalled", the history
    lists the game with that ending, and no rating changed."""
    table = await turn_based_table(simcord_env, 3)
    waiting = table.game.active_player
    before = table.game.move_number
    await pass_time(simcord_env, DAY + 60)
    assert table.game.move_number > before
    assert table.session.meta.timeouts[waiting] == 1
    refused = await table.players[1].slash(table.channel, "nothanks stop")
    assert refused.ephemeral and refused.response.content == t("table.not_host_stop", "en")
    assert table.session.status == "running"
    closed, history = await stop_and_list(table)
    assert closed == t("closed.stalled", "en", user=f"<@{table.players[0].id}>")
    assert "ended by the host after it stalled" in closed
    assert t("history.stalled", "en") in history and "No Thanks!" in history
    assert table.session.meta.closed_reason == "stalled"
    rows = await simcord_env.bot.tables.storage.read(
        "SELECT status FROM games WHERE table_id = ?", (table.session.id,)
    )
    assert [row["status"] for row in rows] == ["stalled"]
    rated = await simcord_env.bot.tables.storage.read(
        "SELECT rating_change FROM game_players WHERE table_id = ?", (table.session.id,)
    )
    assert rated and all(row["rating_change"] is None for row in rated)


async def test_stopping_a_fresh_turn_based_game_abandons_it_as_before(simcord_env: Env) -> None:
    """An hour into a 24 h game nobody has missed a turn: the host's stop abandons it
    as today (the abandoned message; the history does not list it)."""
    table = await turn_based_table(simcord_env, 3)
    await pass_time(simcord_env, HOUR)
    assert not (await table.reload()).meta.timeouts
    closed, history = await stop_and_list(table)
    assert closed == t("closed.abandoned", "en", user=f"<@{table.players[0].id}>")
    assert history == t("history.empty", "en")
    assert (await table.reload()).meta.closed_reason is None
