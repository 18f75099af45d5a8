"""The bot factory: one fresh `CardtableBot` per call, so tests can restart on one database."""

from __future__ import annotations

import logging
from typing import Protocol

import discord
from discord import app_commands
from discord.ext import commands

from bot.command_translator import CatalogueTranslator
from bot.interactions import answer_error
from bot.languages import GuildLanguages
from bot.publisher import DiscordPublisher
from bot.render.components import Click, TableButton, TableSelect
from bot.settings import Settings
from bot.storage import Storage
from bot.table.errors import UserError
from bot.table.tables import Tables

log = logging.getLogger(__name__)
EXTENSIONS = ("cogs.nothanks", "cogs.rage", "cogs.cardtable", "cogs.admin")


def now() -> float:
    """The current time as a Unix timestamp (virtual under SimCord)."""
    return discord.utils.utcnow().timestamp()


class ClickHandler(Protocol):
    """A game's cog, as the router sees it."""

    async def on_click(self, interaction: discord.Interaction, click: Click) -> None:
        """Handle one click or choice at one of the game's tables."""
        ...


class CardtableTree(app_commands.CommandTree):
    """The command tree: every unhandled command error is answered in one place."""

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        """Answer and log errors no cog handled."""
        original: BaseException = getattr(error, "original", error)
        if isinstance(error, app_commands.NoPrivateMessage):
            original = UserError("error.guild_only")
        await answer_error(interaction, original, context=f"in /{interaction.command}")


class CardtableBot(commands.Bot):
    """The cardtable bot: storage, the table registry, publishing and the game cogs."""

    storage: Storage
    tables: Tables
    languages: GuildLanguages
    publisher: DiscordPublisher

    def __init__(self, settings: Settings, *, extensions: tuple[str, ...] = EXTENSIONS) -> None:
        intents = discord.Intents.default()
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            help_command=None,
            tree_cls=CardtableTree,
            allowed_mentions=discord.AllowedMentions(everyone=False, roles=False, users=True),
        )
        self.settings = settings
        self.extensions_to_load = extensions
        # Each game's cog registers itself here, so a click finds its game by name.
        self.table_cogs: dict[str, ClickHandler] = {}

    async def on_error(self, event_method: str, /, *args: object, **kwargs: object) -> None:
        """Log an unexpected error with its context and traceback (called inside ``except``)."""
        log.error("unexpected error in %s", event_method, exc_info=True)

    async def is_owner(self, user: discord.abc.User) -> bool:
        """The application's owner(s), plus anyone listed in CARDTABLE_OWNER_IDS."""
        if user.id in self.settings.owner_ids:
            return True
        return await super().is_owner(user)

    def guild_language(self, guild_id: int | None) -> str | None:
        """The language a server chose for its public table messages (/cardtable language)."""
        return self.languages.language_for(guild_id)

    async def setup_hook(self) -> None:
        """Open the database, load the games, restore open tables (and refresh them)."""
        self.storage = await Storage.open(self.settings.database)
        self.languages = GuildLanguages(self.storage)
        self.tables = Tables(self.storage, clock=now, ready=self.wait_until_ready)
        self.publisher = DiscordPublisher(self)
        self.tables.publisher = self.publisher
        self.add_dynamic_items(TableButton, TableSelect)
        # Command names and descriptions in every catalogue language, applied when synced.
        await self.tree.set_translator(CatalogueTranslator())
        for extension in self.extensions_to_load:
            await self.load_extension(extension)
        await self.tables.restore()

    async def route_click(self, interaction: discord.Interaction, click: Click) -> None:
        """Hand a table component's click to its game's cog."""
        cog = self.table_cogs.get(click.game)
        if cog is None:
            await answer_error(interaction, UserError("error.unavailable"))
            return
        await cog.on_click(interaction, click)

    async def close(self) -> None:
        """Close Discord first, then the database."""
        tables = getattr(self, "tables", None)
        if tables is not None:
            tables.close()
        languages = getattr(self, "languages", None)
        if languages is not None:
            languages.close()
        await super().close()
        storage = getattr(self, "storage", None)
        if storage is not None:
            await storage.close()

    async def sync_commands(self, guild_id: int | None = None) -> int:
        """Publish the slash commands globally, or to one guild instantly; return the count."""
        if guild_id is None:
            commands_synced = await self.tree.sync()
        else:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            commands_synced = await self.tree.sync(guild=guild)
        return len(commands_synced)


def create_bot(settings: Settings, *, extensions: tuple[str, ...] = EXTENSIONS) -> CardtableBot:
    """Build a fresh bot for these settings (a new instance each call)."""
    return CardtableBot(settings, extensions=extensions)
