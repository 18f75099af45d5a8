"""The demo's play-by-post table: its clock moves on from the front page, the viewer gets
the "your turn" DM, and at the deadline a computer moves for them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiohttp
import discord
import pytest

from bot.demo.launcher import Launcher, bind, page
from bot.demo.world import CLOCK_STEP, POST, DemoOptions, World, pace
from bot.table.meta import PACES


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    """A demo world with fast computers and no simulated people."""
    with pace(True):
        started = await World.start(DemoOptions(fast=True, browser=False), tmp_path)
        try:
            yield started
        finally:
            await started.close()


def notices(world: World) -> list[discord.Message]:
    """The bot's turn notices in the viewer's DMs, oldest first (not the chip DM)."""
    return [
        m
        for m in world.viewer.user.dm_channel.history()
        if "Your turn" in m.content or "⏰ Time ran out" in m.content
    ]


async def until(world: World, check: Callable[[], bool]) -> None:
    """Move the clock a virtual second at a time until ``check`` holds: a DM and its edit
    go out through the paced outbound lane, a moment after the move that caused them."""
    for _ in range(120):
        if check():
            return
        await world.move_clock(1)
    assert check()


def labels(message: discord.Message) -> list[str]:
    """The enabled buttons' labels on a message."""
    return [
        str(child.label)
        for row in message.components
        for child in getattr(row, "children", [])
        if isinstance(child, discord.Button) and not child.disabled
    ]


async def test_quick_turn_based_game_and_the_clock(world: World) -> None:
    """Quick game under Play by post opens a 24 h No Thanks! table with computers; moving
    the clock on sends the viewer the "your turn" DM with Take / No thanks!, and moving it
    past the deadline makes a computer move for the viewer and says so on that DM."""
    assert await world.next_deadline() is None
    assert not await world.clock_to_deadline()
    await world.quick_game(POST)
    session = world.bot.tables.in_channel(world.channels[POST].id)
    assert session is not None and session.status == "running"
    assert session.meta.pace == PACES["24h"] and len(session.record.seats) == 4
    viewer = str(world.viewer.id)
    # The computers move at once (--fast), each when the clock is moved a little.
    await until(world, lambda: session.running_engine().active_player == viewer)
    wait = await world.next_deadline()
    assert wait is not None and PACES["24h"] - 300 < wait <= PACES["24h"]
    await world.move_clock(CLOCK_STEP)
    await until(world, lambda: len(notices(world)) == 1)
    (notice,) = notices(world)
    assert "Your turn" in notice.content and "No Thanks!" in notice.content
    assert labels(notice) == ["Take", "No thanks!"]
    before = session.running_engine().move_number
    assert await world.clock_to_deadline()
    # A day on, the table has left memory between its events: read it again.
    now = await world.bot.tables.load(session.id)
    assert now is not None
    assert now.running_engine().move_number > before
    assert now.meta.timeouts[viewer] == 1

    def edited() -> discord.Message:
        return next(m for m in notices(world) if m.id == notice.id)

    await until(world, lambda: "⏰ Time ran out" in edited().content)
    assert not labels(edited())


async def test_front_page_clock_buttons_and_bad_requests(world: World) -> None:
    """The front page offers the two clock moves; /clock needs the token, a known move,
    and says plainly when no turn-based table waits; a move answers with the DM page."""
    html = page("en")
    assert "Play by post" in html and "Move the clock on 6 hours" in html
    assert "Move the clock to the next deadline" in html
    launcher = Launcher(world, bind(0))
    await launcher.start()
    base = launcher.url.split("#")[0]
    good = {"X-Demo-Token": launcher.token}
    try:
        async with aiohttp.ClientSession() as client:
            async with client.post(f"{base}clock", json={"move": "step"}) as answer:
                assert answer.status == 401
            async with client.post(f"{base}clock", json={"move": "year"}, headers=good) as answer:
                assert answer.status == 400
            async with client.post(
                f"{base}clock", json={"move": "deadline"}, headers=good
            ) as answer:
                assert answer.status == 409
                assert "press Quick game" in (await answer.json())["error"]
            clock = world.env.now().timestamp()
            async with client.post(f"{base}clock", json={"move": "step"}, headers=good) as answer:
                assert answer.status == 200
                assert (await answer.json())["url"].startswith("http://127.0.0.1:")
            assert world.env.now().timestamp() - clock >= CLOCK_STEP
            assert world.shown == "dm"
    finally:
        await launcher.close()
