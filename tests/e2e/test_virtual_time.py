"""The suite's SimCord (tests/virtual_time.py): a bot's timers pass on the virtual clock,
in order, within an action's window, and never cost wall-clock time."""

from __future__ import annotations

import asyncio
import time

import discord
import pytest
from discord.ext import commands

from tests.virtual_time import VirtualTimeEnv


def sleeper() -> commands.Bot:
    """A bot whose /later answers at once, then posts after ``seconds`` (twice: at the
    half and at the end, so the order of its timers shows)."""
    bot = commands.Bot(command_prefix="!", intents=discord.Intents.default())

    @bot.tree.command(name="later")
    async def later(interaction: discord.Interaction, seconds: float) -> None:
        await interaction.response.send_message("soon")
        channel = interaction.channel
        assert isinstance(channel, discord.TextChannel)
        await asyncio.sleep(seconds / 2)
        await channel.send(f"half of {seconds:g}")
        await asyncio.sleep(seconds / 2)
        await channel.send(f"after {seconds:g}")

    return bot


async def started(window: float | None = None) -> tuple[VirtualTimeEnv, object, object]:
    """A running env around the sleeper bot, with a channel and a member in it."""
    env = VirtualTimeEnv(sleeper(), window=window)
    await env.start()
    await env.bot.tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel("general")
    member = guild.add_member(env.create_user("ana"))
    return env, channel, member


def posted(channel: object) -> list[str]:
    """The channel's messages from the bot, oldest first."""
    return [m.content for m in channel.history()]  # type: ignore[attr-defined]


async def test_timers_within_the_window_pass_in_order_without_waiting() -> None:
    """A 4-second wait after a command has passed when the command returns, in virtual
    time only; the clock stops at the last timer, not at the end of the window."""
    env, channel, member = await started()
    try:
        begun, clock = time.perf_counter(), env._virtual_time
        await member.slash(channel, "later", seconds=4)  # type: ignore[attr-defined]
        assert time.perf_counter() - begun < 1.5  # it waited 4 s before this helper
        assert posted(channel) == ["soon", "half of 4", "after 4"]
        assert env._virtual_time - clock == pytest.approx(4, abs=0.01)
    finally:
        await env.shutdown()


async def test_timers_beyond_the_window_wait_for_the_test() -> None:
    """A wait longer than the window is parked until the test moves the clock."""
    env, channel, member = await started()
    try:
        await member.slash(channel, "later", seconds=12)  # type: ignore[attr-defined]
        assert posted(channel) == ["soon"]  # the half (6 s) is beyond 5 s too
        await env.advance_time(6)
        assert posted(channel) == ["soon", "half of 12"]
        await env.advance_time(6)
        assert posted(channel) == ["soon", "half of 12", "after 12"]
    finally:
        await env.shutdown()


async def test_a_window_of_zero_moves_the_clock_only_when_the_test_does() -> None:
    """With window=0 a test sees the bot before its shortest timer fires."""
    env, channel, member = await started(window=0)
    try:
        await member.slash(channel, "later", seconds=2)  # type: ignore[attr-defined]
        assert posted(channel) == ["soon"]
        await env.advance_time(1)
        assert posted(channel) == ["soon", "half of 2"]
        await env.advance_time(1)
        assert posted(channel) == ["soon", "half of 2", "after 2"]
    finally:
        await env.shutdown()
