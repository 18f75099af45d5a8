"""The outbound lane in the bot: a click's answer never waits for it, and a game's DMs
keep their order (the start first) whatever the lane does meanwhile."""

from __future__ import annotations

import asyncio

import discord
import pytest
from simcord import Env

from bot.client.outbound.lane import Priority
from tests.e2e.helpers import choose, dms, open_table
from tests.e2e.test_living_dm import dm_requests


async def test_a_click_is_answered_past_a_backlog_of_thousands_of_dms(simcord_env: Env) -> None:
    """Five thousand DMs waiting in the lane: a move is answered at once, and its own DM
    joins the queue instead of holding the answer."""
    table = await open_table(simcord_env, 3)
    lane = simcord_env.bot.lane
    lane.limit_to(lambda: Priority.PING)  # the DMs wait, as they would under overload
    ran: list[int] = []

    def dm(number: int):  # type: ignore[no-untyped-def]
        async def send() -> None:
            ran.append(number)

        return send

    for number in range(5000):
        lane.put(("backlog", number), Priority.DM, dm(number))
    actor = table.active()
    moves_before = table.game.move_number
    result = await table.click(actor, "No thanks!")
    assert result.acknowledged and not result.followups
    assert table.game.move_number == moves_before + 1
    assert ran == [] and lane.pending_at(Priority.DM) == 5001  # the backlog and the move's DM
    lane.limit_to(lambda: Priority.COSMETIC)
    await asyncio.wait_for(lane.idle(), 30)
    assert len(ran) == 5000


async def test_moves_before_the_start_dm_goes_out_leave_the_right_history(
    simcord_env: Env,
) -> None:
    """The start DM is still waiting when moves are made: each player still gets one DM,
    opening with the starting chips, then edited to their chips now."""
    table = await open_table(simcord_env, 3, start=False)
    lane = simcord_env.bot.lane
    lane.limit_to(lambda: Priority.PING)
    await table.click(table.players[0], "Start")
    for _ in range(4):
        await table.click(table.active(), choose(table.game))
    assert all(dms(player) == [] for player in table.players)
    lane.limit_to(lambda: Priority.COSMETIC)
    await asyncio.wait_for(lane.idle(), 10)
    game = table.game
    for player in table.players:
        requests = [
            r
            for r in simcord_env.http_requests
            if f"/channels/{player.user.dm_channel.id}/messages" in r.path
        ]
        assert [r.method for r in requests] in (["POST"], ["POST", "PATCH"])
        opening = requests[0].json["content"]
        assert "game has" in opening and "You have 11 chips" in opening
        seat = game.players.index(str(player.id))
        (shown,) = dms(player)
        chips = game.chips[seat]
        if requests[-1].method == "PATCH":
            # The chips line ("You have **13** chips"), or after a pass the move's own
            # line ("You have 9 chips left") in its place.
            assert f"You have **{chips}** chip" in shown or f"You have {chips} chip" in shown
        assert dm_requests(simcord_env, player)[0] == 1


async def test_dm_channels_are_opened_through_the_lane_one_at_a_time(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seven players start a game at once: each DM channel is opened once, by a job of the
    lane (counted against its rate), never two at a time, and every start DM arrives."""
    bot = simcord_env.bot
    in_flight = most = 0
    opened: list[int] = []
    create_dm = bot.create_dm

    async def counted_create_dm(user: discord.abc.Snowflake) -> discord.DMChannel:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        try:
            await asyncio.sleep(0.01)  # an answer's time on the wire, so opens could overlap
            return await create_dm(user)
        finally:
            in_flight -= 1
            opened.append(user.id)

    monkeypatch.setattr(bot, "create_dm", counted_create_dm)
    started_before = bot.lane.started[Priority.DM]
    table = await open_table(simcord_env, 7)
    await asyncio.wait_for(bot.lane.idle(), 30)
    assert sorted(opened) == sorted(player.id for player in table.players)
    assert most == 1
    # Per player: the open and the start DM, each a request the lane paced.
    assert bot.lane.started[Priority.DM] - started_before == 14
    assert all(len(dms(player)) == 1 for player in table.players)
