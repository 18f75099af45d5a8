"""Tables in a thread of their own, in SimCord: `/<game> start thread:True` and the server's
/cardtable threads default open the lobby in a new thread of the channel, play goes on
there (after a restart too), and the thread is archived when the table ends; the cases
where no thread can be opened get a clear answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import discord
import pytest
from simcord import Env

from bot.client.bot import CardtableBot
from tests.e2e.helpers import NAMES, message_by_id

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def setup(
    env: Env, *, overwrite: discord.PermissionOverwrite | None = None
) -> tuple[Any, Any, list[Any], Any]:
    """A server (text tables: faster) with a text channel, an admin and three people; the
    bot's permissions in the channel changed by ``overwrite``."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    await env.bot.images.set(guild.id, False)
    overwrites = {} if overwrite is None else {guild.me: overwrite}
    channel = guild.create_text_channel("games", overwrites=overwrites)
    admins = guild.create_role("Admins", permissions=discord.Permissions(manage_guild=True))
    admin = guild.add_member(env.create_user("ada"), roles=[admins])
    players = [guild.add_member(env.create_user(name)) for name in NAMES[:3]]
    return guild, channel, players, admin


def archived(env: Env, thread: Any) -> bool:
    """Whether Discord holds the thread as archived."""
    metadata = env.backend.channels[thread.id].thread_metadata
    return bool(metadata is not None and metadata.archived)


def lobby_in(thread: Any) -> discord.Message:
    """The table's message in a thread: the bot's first message there."""
    (message,) = [m for m in thread.history() if m.embeds]
    return message


async def test_a_table_in_its_own_thread_plays_and_is_archived_at_the_end(
    simcord_env: Env,
) -> None:
    """thread:True opens the lobby in a new thread named after the game and host; joining,
    starting and moving happen there; stopping the game archives the thread."""
    _, channel, players, _ = await setup(simcord_env)
    ana, ben, cid = players
    answer = await ana.slash(channel, "nothanks start", thread=True)
    assert answer.ephemeral
    (thread,) = channel.threads
    assert thread.name == "No Thanks! — ana"
    session = simcord_env.bot.tables.in_channel(thread.id)
    assert session is not None and session.channel_id == thread.id
    assert simcord_env.bot.tables.in_channel(channel.id) is None  # the channel stays free
    assert not [m for m in channel.history() if m.embeds]  # no table in the channel itself
    lobby = lobby_in(thread)
    assert lobby.id == session.record.message_id
    for player in (ben, cid):
        joined = await player.click(lobby, label="Join")
        assert not joined.ephemeral, joined.response.content
    await ana.click(message_by_id(simcord_env, thread, lobby.id), label="Start")
    assert session.status == "running"
    game: Any = session.engine
    actor = next(p for p in players if str(p.id) == game.active_player)
    moved = await actor.click(message_by_id(simcord_env, thread, lobby.id), label="Take")
    assert not moved.ephemeral and session.engine.move_number == 1
    assert not archived(simcord_env, thread)
    stopped = await ana.slash(thread, "nothanks stop")
    assert stopped.ephemeral
    await simcord_env.advance_time(0.5)
    assert archived(simcord_env, thread)


def answer_text(result: Any) -> str:
    """What a (possibly deferred) command finally answered."""
    if result.followups:
        return str(result.followups[-1].content)
    return str(result.response.content)


async def test_the_answer_points_to_the_thread(simcord_env: Env) -> None:
    """The starter is told privately where the table is."""
    _, channel, players, _ = await setup(simcord_env)
    answer = await players[0].slash(channel, "nothanks start", thread=True)
    (thread,) = channel.threads
    assert answer.ephemeral
    assert answer_text(answer) == f"Your table is open in its own thread: <#{thread.id}>"


async def test_a_cancelled_lobby_archives_its_thread(simcord_env: Env) -> None:
    """A lobby cancelled by its host closes its thread too."""
    _, channel, players, _ = await setup(simcord_env)
    await players[0].slash(channel, "rage start", thread=True)
    (thread,) = channel.threads
    assert thread.name == "Rage — ana"
    await players[0].click(lobby_in(thread), label="Cancel")
    await simcord_env.advance_time(0.5)
    assert archived(simcord_env, thread)


async def test_a_threaded_game_survives_a_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """After a restart the table is found by its thread: clicks there play on, and its end
    still archives the thread."""
    _, channel, players, _ = await setup(simcord_env)
    ana = players[0]
    await ana.slash(channel, "nothanks start", thread=True, turn_seconds=15)
    (thread,) = channel.threads
    lobby = lobby_in(thread)
    for player in players[1:]:
        await player.click(lobby, label="Join")
    await ana.click(message_by_id(simcord_env, thread, lobby.id), label="Start")
    await simcord_env.restart_bot(make_bot())
    await simcord_env.advance_time(0.1)
    session = simcord_env.bot.tables.in_channel(thread.id)
    assert session is not None and session.meta.thread == channel.id
    game: Any = session.engine
    before = game.move_number
    actor = next(p for p in players if str(p.id) == game.active_player)
    moved = await actor.click(message_by_id(simcord_env, thread, lobby.id), label="Take")
    assert not moved.ephemeral
    assert simcord_env.bot.tables.in_channel(thread.id).engine.move_number == before + 1
    steps = 0
    while simcord_env.bot.tables.get(session.id) is not None:
        await simcord_env.advance_time(16)  # every turn times out: computers finish it
        steps += 1
        assert steps < 400
    await simcord_env.advance_time(0.5)
    assert archived(simcord_env, thread)
    # A rematch posts in the same thread (Discord takes a thread out of the archive when
    # a message is posted in it; SimCord does not model that, so the test does).
    final = message_by_id(simcord_env, thread, lobby.id)
    rematch = await ana.click(final, label="Rematch")
    assert not rematch.ephemeral
    simcord_env.backend.edit_channel(thread.id, {}, thread_metadata={"archived": False})
    again = simcord_env.bot.tables.in_channel(thread.id)
    assert again is not None and again.id != session.id and again.meta.thread == channel.id
    await ana.click(message_by_id(simcord_env, thread, rematch.response.id), label="Cancel")
    await simcord_env.advance_time(0.5)
    assert archived(simcord_env, thread)


async def test_the_server_default_opens_threads(simcord_env: Env) -> None:
    """/cardtable threads on: a plain start opens a thread; thread:False still opens the
    table in the channel; about shows the setting."""
    guild, channel, players, admin = await setup(simcord_env)
    refused = await players[0].slash(channel, "cardtable threads", use="on")
    assert refused.ephemeral and "Manage Server" in refused.response.content
    done = await admin.slash(channel, "cardtable threads", use="on")
    assert "open in a thread of their own" in done.response.content
    assert await simcord_env.bot.storage.get_guild_threads(guild.id) is True
    about = await admin.slash(channel, "cardtable about")
    assert "New tables: in a thread of their own" in about.response.content
    await players[0].slash(channel, "nothanks start")
    assert len(channel.threads) == 1
    other = guild.create_text_channel("plain")
    here = await players[1].slash(other, "rage start", thread=False)
    assert not here.ephemeral and other.threads == []
    assert simcord_env.bot.tables.in_channel(other.id) is not None


async def test_no_permission_to_open_threads(simcord_env: Env) -> None:
    """Where the bot may not create threads: thread:True is refused, naming the missing
    permission, and opens nothing; the server's default falls back to the channel and
    says why, privately."""
    guild, channel, players, _ = await setup(
        simcord_env, overwrite=discord.PermissionOverwrite(create_public_threads=False)
    )
    refused = await players[0].slash(channel, "nothanks start", thread=True)
    assert refused.ephemeral
    assert answer_text(refused) == (
        "I can't open a thread here: I am missing Create Public Threads. Start the table"
        " without thread, or ask an admin to give me these permissions here."
    )
    assert channel.threads == [] and simcord_env.bot.tables.in_channel(channel.id) is None
    await simcord_env.bot.threads.set(guild.id, True)
    opened = await players[0].slash(channel, "nothanks start")
    assert not opened.ephemeral and opened.response.embeds  # the lobby, in the channel
    assert simcord_env.bot.tables.in_channel(channel.id) is not None
    assert "the table is in this channel" in answer_text(opened)
    assert "Create Public Threads" in answer_text(opened)
    assert channel.threads == []


async def test_discord_refusing_the_thread(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If Discord refuses the thread after all: thread:True gets a clear refusal; the
    server's default posts the table in the channel instead."""
    guild, channel, players, _ = await setup(simcord_env)

    async def refuse(*args: Any, **kwargs: Any) -> Any:
        response = type("Response", (), {"status": 403, "reason": "Forbidden"})()
        raise discord.Forbidden(response, {"code": 50013, "message": "Missing Permissions"})

    monkeypatch.setattr(simcord_env.bot.http, "start_thread_without_message", refuse)
    refused = await players[0].slash(channel, "nothanks start", thread=True)
    assert "I couldn't open a thread here" in answer_text(refused)
    assert simcord_env.bot.tables.in_channel(channel.id) is None
    await simcord_env.bot.threads.set(guild.id, True)
    fallen = await players[0].slash(channel, "nothanks start")
    assert "the table is in this channel" in answer_text(fallen)
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None and session.meta.thread is None
    assert [m.id for m in channel.history() if m.embeds] == [session.record.message_id]


async def test_thread_true_inside_a_thread(simcord_env: Env) -> None:
    """thread:True in a thread is refused clearly; with the server's default the table
    simply opens in that thread, and it is not archived at the end (not the bot's)."""
    guild, channel, players, _ = await setup(simcord_env)
    ana = players[0]
    await ana.slash(channel, "nothanks start", thread=True)
    (thread,) = channel.threads
    await ana.slash(thread, "nothanks stop")
    await simcord_env.advance_time(0.5)
    simcord_env.backend.edit_channel(thread.id, {}, thread_metadata={"archived": False})
    refused = await ana.slash(thread, "nothanks start", thread=True)
    assert refused.ephemeral
    assert answer_text(refused).startswith("This is already a thread")
    await simcord_env.bot.threads.set(guild.id, True)
    opened = await ana.slash(thread, "nothanks start")
    assert not opened.ephemeral
    session = simcord_env.bot.tables.in_channel(thread.id)
    assert session is not None and session.meta.thread is None
    assert len(channel.threads) == 1
    await ana.slash(thread, "nothanks stop")
    await simcord_env.advance_time(0.5)
    assert not archived(simcord_env, thread)


async def test_no_table_command_in_a_dm(simcord_env: Env) -> None:
    """A DM holds no table, thread or not: the command answers that it works in servers
    (Discord applies guild_only to top-level commands only, so /nothanks start reaches
    the bot from a DM)."""
    await simcord_env.bot.tree.sync()
    user = simcord_env.create_user("ana")
    result = await user.slash("nothanks start", thread=True)
    assert result.ephemeral
    assert answer_text(result) == "This command only works in a server channel."
    plain = await user.slash("nothanks start")
    assert plain.ephemeral
    assert answer_text(plain) == "This command only works in a server channel."
