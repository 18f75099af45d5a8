"""`/cardtable language` and `/cardtable about` through SimCord: who may set the server's
table language, what is stored and cached, and the localised command tree on sync.

SimCord users all speak en-US, so the answers here are English; the de/ru/it texts are
checked below the interaction layer in tests/i18n/test_translations.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import discord
import pytest
from simcord import Env
from simcord.builders import ChannelHandle, GuildHandle

from bot.client.bot import CardtableBot
from bot.client.guild_settings import (
    GuildImages,
    GuildLanguages,
    GuildPace,
    GuildPacePings,
    GuildThreads,
    GuildTurnPings,
)
from bot.i18n import catalogues, t
from bot.i18n.commands import CatalogueTranslator
from bot.storage import open_storage
from tests.e2e.helpers import open_table

EXTENSION = "cogs.cardtable"


async def setup_guild(env: Env) -> tuple[GuildHandle, ChannelHandle, list[Any]]:
    """Load the settings cog (until bot/client/bot.py lists it), sync, and make a guild with
    an admin (Manage Server role) and a plain member."""
    if EXTENSION not in env.bot.extensions:
        await env.bot.load_extension(EXTENSION)
    await env.bot.tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel("games")
    admins = guild.create_role("Admins", permissions=discord.Permissions(manage_guild=True))
    admin = guild.add_member(env.create_user("ada"), roles=[admins])
    member = guild.add_member(env.create_user("bob"))
    return guild, channel, [admin, member]


def cog_of(env: Env) -> Any:
    """The running settings cog."""
    cog = env.bot.get_cog("Cardtable")
    assert cog is not None
    return cog


def test_every_catalogue_can_be_chosen() -> None:
    """The language picker offers exactly the languages that have a catalogue."""
    from cogs.cardtable import LANGUAGES

    assert set(LANGUAGES) == set(catalogues())


async def test_admin_sets_the_language(simcord_env: Env) -> None:
    """A member with Manage Server picks Deutsch: answered privately, stored and cached."""
    guild, channel, (admin, _) = await setup_guild(simcord_env)
    result = await admin.slash(channel, "cardtable language", language="de")
    assert result.ephemeral
    assert result.response.content == t("settings.language.set", "en", language="Deutsch")
    assert cog_of(simcord_env).language_for(guild.id) == "de"
    assert await simcord_env.bot.storage.get_guild_language(guild.id) == "de"


async def test_server_default_clears_the_language(simcord_env: Env) -> None:
    """'Server default' removes the choice: tables follow the server's Discord language."""
    guild, channel, (admin, _) = await setup_guild(simcord_env)
    await admin.slash(channel, "cardtable language", language="ru")
    result = await admin.slash(channel, "cardtable language", language="default")
    assert result.ephemeral
    # SimCord servers speak en-US, so the server's own language is English.
    assert result.response.content == t("settings.language.cleared", "en", language="English")
    assert cog_of(simcord_env).language_for(guild.id) is None
    assert await simcord_env.bot.storage.get_guild_language(guild.id) is None


async def test_plain_member_cannot_set_the_language(simcord_env: Env) -> None:
    """Every member sees /cardtable (history and forget-me are for everyone), but without
    Manage Server the language command is refused privately and changes nothing."""
    guild, channel, (_, member) = await setup_guild(simcord_env)
    result = await member.slash(channel, "cardtable language", language="it")
    assert result.ephemeral
    assert result.response.content == t("settings.not_admin", "en")
    assert cog_of(simcord_env).language_for(guild.id) is None


async def test_granted_member_without_manage_server_is_refused(simcord_env: Env) -> None:
    """A server may grant the command to other roles; the cog still refuses them,
    privately, and changes nothing."""
    guild, channel, (_, _) = await setup_guild(simcord_env)
    helpers = guild.create_role("Helpers")
    helper = guild.add_member(simcord_env.create_user("hal"), roles=[helpers])
    command = next(
        command
        for command in await simcord_env.bot.tree.fetch_commands()
        if command.name == "cardtable"
    )
    guild.set_command_permissions(command, {helpers: True})
    result = await helper.slash(channel, "cardtable language", language="it")
    assert result.ephemeral
    assert result.response.content == t("settings.not_admin", "en")
    assert cog_of(simcord_env).language_for(guild.id) is None
    assert await simcord_env.bot.storage.get_guild_language(guild.id) is None


async def test_about_shows_the_language(simcord_env: Env) -> None:
    """/cardtable about names the games and the table language, default or chosen."""
    _, channel, (admin, _) = await setup_guild(simcord_env)
    before = await admin.slash(channel, "cardtable about")
    assert before.ephemeral
    assert t("settings.about.text", "en") in before.response.content
    assert t("settings.about.language_default", "en", language="English") in (
        before.response.content
    )
    await admin.slash(channel, "cardtable language", language="it")
    after = await admin.slash(channel, "cardtable about")
    assert t("settings.about.language", "en", language="Italiano") in after.response.content


async def test_reading_the_language_costs_no_query(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once known, the language comes from memory: clicks never touch the database."""
    guild, channel, (admin, _) = await setup_guild(simcord_env)
    await admin.slash(channel, "cardtable language", language="de")

    async def no_query(guild_id: int) -> str | None:
        raise AssertionError("language_for queried the database")

    monkeypatch.setattr(simcord_env.bot.storage, "get_guild_language", no_query)
    for _ in range(100):
        assert cog_of(simcord_env).language_for(guild.id) == "de"
    assert simcord_env.bot.guild_language(guild.id) == "de"
    assert simcord_env.bot.guild_language(None) is None


async def test_language_survives_a_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A new bot on the same database reads the stored language; a lookup before it is
    loaded answers None at once and fills the cache in the background."""
    guild, channel, (admin, _) = await setup_guild(simcord_env)
    await admin.slash(channel, "cardtable language", language="ru")
    restarted = make_bot()
    restarted.storage = await open_storage(restarted.settings.database)
    restarted.languages = GuildLanguages(restarted.storage)
    restarted.images = GuildImages(restarted.storage)
    restarted.turn_pings = GuildTurnPings(restarted.storage)
    restarted.threads = GuildThreads(restarted.storage)
    restarted.pace = GuildPace(restarted.storage)
    restarted.pace_pings = GuildPacePings(restarted.storage)
    await restarted.load_extension(EXTENSION)
    cog = restarted.get_cog("Cardtable")
    assert cog is not None
    assert cog.language_for(guild.id) is None
    for _ in range(100):  # let the background read finish
        if cog.language_for(guild.id) is not None:
            break
        await asyncio.sleep(0.01)
    assert cog.language_for(guild.id) == "ru"


async def test_synced_commands_carry_localisations(simcord_env: Env) -> None:
    """With the translator set, the synced payload has de/ru/it names, and the command
    still runs by its default name."""
    await simcord_env.bot.tree.set_translator(CatalogueTranslator())
    guild, channel, (admin, _) = await setup_guild(simcord_env)
    stored = simcord_env.backend.find_command("cardtable", None)
    assert stored is not None
    assert stored["name_localizations"] == {"de": "cardtable", "ru": "cardtable", "it": "cardtable"}
    language = next(option for option in stored["options"] if option["name"] == "language")
    assert language["name_localizations"] == {"de": "sprache", "ru": "язык", "it": "lingua"}
    nothanks = simcord_env.backend.find_command("nothanks", None)
    assert nothanks["name_localizations"]["de"] == "geschenkt"
    result = await admin.slash(channel, "cardtable language", language="de")
    assert result.ephemeral
    assert cog_of(simcord_env).language_for(guild.id) == "de"


async def test_public_table_messages_use_the_server_language(simcord_env: Env) -> None:
    """After /cardtable language de, a table's public message is German, and an open table
    switches at its next update."""
    guild, channel, (admin, _) = await setup_guild(simcord_env)
    table = await open_table(simcord_env, 2, guild=guild, start=False)
    assert table.embed.title == t("lobby.title", "en", game="No Thanks!")
    await admin.slash(channel, "cardtable language", language="de")
    third = guild.add_member(simcord_env.create_user("cid"))
    await table.click(third, "Join")
    assert table.embed.title == t("lobby.title", "de", game="Geschenkt!")


async def test_failed_background_read_is_logged_and_retried(
    make_bot: Callable[[], CardtableBot],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A database error while filling the cache is logged, not raised into the click, and
    the next lookup tries again."""
    bot = make_bot()
    bot.storage = await open_storage(bot.settings.database)
    bot.languages = GuildLanguages(bot.storage)
    bot.images = GuildImages(bot.storage)
    bot.turn_pings = GuildTurnPings(bot.storage)
    bot.threads = GuildThreads(bot.storage)
    bot.pace = GuildPace(bot.storage)
    bot.pace_pings = GuildPacePings(bot.storage)
    await bot.storage.set_guild_language(5, "it")
    await bot.load_extension(EXTENSION)
    cog = bot.get_cog("Cardtable")
    assert cog is not None
    calls = 0

    async def broken(guild_id: int) -> str | None:
        nonlocal calls
        calls += 1
        raise OSError("disk on fire")

    monkeypatch.setattr(bot.storage, "get_guild_language", broken)
    assert cog.language_for(5) is None
    for _ in range(100):
        if "could not read the language" in caplog.text:
            break
        await asyncio.sleep(0.01)
    assert "could not read the language of guild 5" in caplog.text
    monkeypatch.undo()
    assert cog.language_for(5) is None  # a new read starts
    for _ in range(100):
        if cog.language_for(5) is not None:
            break
        await asyncio.sleep(0.01)
    assert cog.language_for(5) == "it"
    assert calls == 1
