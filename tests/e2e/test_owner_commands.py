"""Owner commands through SimCord: strangers and typos are ignored quietly, owners still sync."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import discord
import pytest
from discord.ext import commands
from simcord import Env
from simcord.builders import ChannelHandle

from bot.client.bot import CardtableBot

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def bot_of(env: Env) -> CardtableBot:
    """The running bot, typed."""
    assert isinstance(env.bot, CardtableBot)
    return env.bot


def setup_channel(env: Env) -> tuple[ChannelHandle, Any, Any]:
    """A channel with an owner (listed in CARDTABLE_OWNER_IDS) and a plain member."""
    guild = env.create_guild()
    channel = guild.create_text_channel("general")
    owner = guild.add_member(env.create_user("olive"))
    stranger = guild.add_member(env.create_user("sam"))
    bot = bot_of(env)
    bot.settings = dataclasses.replace(bot.settings, owner_ids=frozenset({owner.id}))
    return channel, owner, stranger


def mention(env: Env, text: str) -> str:
    """A message that mentions the bot, as a user would type `@cardtable text`."""
    assert env.bot.user is not None
    return f"<@{env.bot.user.id}> {text}"


def bot_messages(env: Env, channel: ChannelHandle) -> list[discord.Message]:
    """Every message the bot wrote in the channel."""
    return [message for message in channel.history() if message.author.id == env.bot.user.id]


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The records at ERROR or above."""
    return [record for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.fixture
def production_error_logging(simcord_env: Env) -> None:
    """Remove SimCord's command-error listener, whose mere presence mutes discord.py's
    default ERROR log, so the tests see what production logs."""
    bot = bot_of(simcord_env)
    for listener in list(bot.extra_events.get("on_command_error", [])):
        bot.remove_listener(listener, "on_command_error")


@pytest.mark.parametrize("text", ["sync", "sync here", "hello"])
async def test_stranger_mention_is_ignored(
    simcord_env: Env, caplog: pytest.LogCaptureFixture, text: str
) -> None:
    """A non-owner mentioning the bot with `sync` or an unknown word: no reply, no error."""
    channel, _, stranger = setup_channel(simcord_env)
    caplog.set_level(logging.DEBUG)
    await stranger.send(channel, mention(simcord_env, text))
    await simcord_env.settle()
    assert bot_messages(simcord_env, channel) == []
    assert errors_logged(caplog) == []
    assert simcord_env.errors == []
    assert any(
        record.levelno == logging.DEBUG and "ignored" in record.getMessage()
        for record in caplog.records
        if record.name == "bot.client.bot"
    )


@pytest.mark.parametrize("text", ["sync", "hello"])
async def test_stranger_mention_logs_no_error_in_production(
    simcord_env: Env, production_error_logging: None, caplog: pytest.LogCaptureFixture, text: str
) -> None:
    """Without SimCord's listener, a stranger's mention still logs nothing at ERROR."""
    channel, _, stranger = setup_channel(simcord_env)
    await stranger.send(channel, mention(simcord_env, text))
    await simcord_env.settle()
    assert bot_messages(simcord_env, channel) == []
    assert errors_logged(caplog) == []


async def test_owner_unknown_command_is_debug_only(
    simcord_env: Env, production_error_logging: None, caplog: pytest.LogCaptureFixture
) -> None:
    """An owner's typo (`@cardtable hello`) is logged at DEBUG, not as an ERROR traceback."""
    channel, owner, _ = setup_channel(simcord_env)
    caplog.set_level(logging.DEBUG)
    await owner.send(channel, mention(simcord_env, "hello"))
    await simcord_env.settle()
    assert bot_messages(simcord_env, channel) == []
    assert errors_logged(caplog) == []
    assert any(
        record.levelno == logging.DEBUG and "hello" in record.getMessage()
        for record in caplog.records
        if record.name == "bot.client.bot"
    )


async def test_owner_sync_still_works(simcord_env: Env, caplog: pytest.LogCaptureFixture) -> None:
    """An owner's `@cardtable sync here` still publishes the commands and replies."""
    channel, owner, _ = setup_channel(simcord_env)
    await owner.send(channel, mention(simcord_env, "sync here"))
    await simcord_env.settle()
    replies = bot_messages(simcord_env, channel)
    assert len(replies) == 1
    assert "synced" in replies[0].content.lower()
    assert errors_logged(caplog) == []


@pytest.mark.parametrize(
    "error",
    [
        commands.CommandNotFound('Command "hello" is not found'),
        commands.NotOwner("You do not own this bot."),
        commands.CheckFailure("check failed"),
        commands.MissingRequiredArgument(
            commands.Parameter("scope", kind=commands.Parameter.POSITIONAL_OR_KEYWORD)
        ),
        commands.BadArgument("bad"),
    ],
)
async def test_quiet_errors_are_debug(
    simcord_env: Env,
    production_error_logging: None,
    caplog: pytest.LogCaptureFixture,
    error: commands.CommandError,
) -> None:
    """Command-not-found, failed checks and bad input are logged at DEBUG only."""
    channel, owner, _ = setup_channel(simcord_env)
    message = await owner.send(channel, "plain text")
    context = await bot_of(simcord_env).get_context(message)
    caplog.set_level(logging.DEBUG)
    await bot_of(simcord_env).on_command_error(context, error)
    assert errors_logged(caplog) == []
    assert any(record.levelno == logging.DEBUG for record in caplog.records)


async def test_unexpected_command_error_is_logged(
    simcord_env: Env, production_error_logging: None, caplog: pytest.LogCaptureFixture
) -> None:
    """A command that crashes still reaches discord.py's ERROR log, with its traceback."""
    channel, owner, _ = setup_channel(simcord_env)
    message = await owner.send(channel, "plain text")
    context = await bot_of(simcord_env).get_context(message)
    try:
        raise RuntimeError("boom")
    except RuntimeError as crash:
        error = commands.CommandInvokeError(crash)
    await bot_of(simcord_env).on_command_error(context, error)
    records = errors_logged(caplog)
    assert len(records) == 1
    assert records[0].exc_info is not None
