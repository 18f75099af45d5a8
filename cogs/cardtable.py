"""`/cardtable`: the bot's settings on a server, first of all the language of its tables."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.i18n import language_of, t
from bot.interactions import answers_user_errors
from bot.table.errors import UserError

if TYPE_CHECKING:
    from bot.app import CardtableBot

log = logging.getLogger(__name__)
COG_NAME = "Cardtable"
# Catalogue code -> the language's own name, as the picker shows it in every locale.
LANGUAGES: dict[str, str] = {"en": "English", "de": "Deutsch", "ru": "Русский", "it": "Italiano"}
# The choice that clears the setting, so tables follow the server's Discord language.
SERVER_DEFAULT = "default"


def language_name(code: str) -> str:
    """A catalogue language by its own name ('de' -> 'Deutsch')."""
    return LANGUAGES.get(code, code)


def can_configure(interaction: discord.Interaction) -> bool:
    """Whether the user may change the bot's settings here (Manage Server)."""
    permissions = interaction.permissions
    return bool(permissions.manage_guild or permissions.administrator)


class Cardtable(commands.Cog, name=COG_NAME):
    """Server settings; the bot's language service caches them for every click."""

    # Discord hides the group from members without Manage Server; the command checks it
    # again, because a server may grant the command to other roles in its integrations.
    group = app_commands.Group(
        name="cardtable",
        description="Settings of the cardtable bot on this server",
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )

    def __init__(self, bot: CardtableBot) -> None:
        self.bot = bot
        self.languages = bot.languages

    async def cog_load(self) -> None:
        """Read the settings of the servers already connected (when reloaded while running)."""
        for guild in self.bot.guilds:
            await self.languages.load(guild.id)

    @commands.Cog.listener()
    async def on_guild_available(self, guild: discord.Guild) -> None:
        """Cache a server's language when it comes online, before its first click."""
        await self.languages.load(guild.id)

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        """Cache the language of a server the bot joins (normally none yet)."""
        await self.languages.load(guild.id)

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """Forget a server the bot left; its setting stays stored for a return."""
        self.languages.forget(guild.id)

    def language_for(self, guild_id: int | None) -> str | None:
        """The server's chosen language for public table messages (see GuildLanguages)."""
        return self.languages.language_for(guild_id)

    # -- commands --------------------------------------------------------------------

    @group.command(
        name="language",
        description="Choose the language of public table messages on this server",
    )
    @app_commands.describe(language="The language for lobbies, game tables and final scores")
    @app_commands.choices(
        language=[
            *(app_commands.Choice(name=name, value=code) for code, name in LANGUAGES.items()),
            app_commands.Choice(
                name="Server default (the server's Discord language)",
                value=SERVER_DEFAULT,
            ),
        ]
    )
    @answers_user_errors
    async def language(self, interaction: discord.Interaction, language: str) -> None:
        """Set or clear the server's language for public table messages (Manage Server)."""
        if not can_configure(interaction):
            raise UserError("settings.not_admin")
        assert interaction.guild_id is not None  # the group is guild-only
        if language == SERVER_DEFAULT:
            await self.languages.set(interaction.guild_id, None)
            text = t(
                "settings.language.cleared",
                interaction.locale,
                language=language_name(language_of(interaction.guild_locale)),
            )
        elif language in LANGUAGES:
            await self.languages.set(interaction.guild_id, language)
            text = t("settings.language.set", interaction.locale, language=LANGUAGES[language])
        else:
            # Discord only sends the offered choices; anything else is a bug worth a log.
            raise ValueError(f"unknown language choice {language!r}")
        await interaction.response.send_message(text, ephemeral=True)

    @group.command(name="about", description="What cardtable plays, and this server's settings")
    @answers_user_errors
    async def about(self, interaction: discord.Interaction) -> None:
        """Show the games and the server's table language privately."""
        locale = interaction.locale
        chosen = self.language_for(interaction.guild_id)
        if chosen in LANGUAGES:
            line = t("settings.about.language", locale, language=LANGUAGES[chosen])
        else:
            current = language_name(language_of(interaction.guild_locale))
            line = t("settings.about.language_default", locale, language=current)
        await interaction.response.send_message(
            f"{t('settings.about.text', locale)}\n{line}", ephemeral=True
        )


async def setup(bot: CardtableBot) -> None:
    """Load the settings cog."""
    await bot.add_cog(Cardtable(bot))
