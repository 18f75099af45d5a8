"""What publishing needs from the bot: a small Protocol, so that publishing never imports
the bot class (bot.client.bot builds the publisher, not the other way round)."""

from __future__ import annotations

from typing import Protocol

import discord
from discord.http import HTTPClient

from bot.client.guild_settings import (
    GuildImages,
    GuildLanguages,
    GuildPacePings,
    GuildThreads,
    GuildTurnPings,
    UserNotify,
)
from bot.table.tables import Tables


class Host(Protocol):
    """The parts of the bot that publishing uses (CardtableBot has them all).

    Usage::

        publisher = DiscordPublisher(bot)  # any object with these attributes
    """

    tables: Tables
    languages: GuildLanguages
    images: GuildImages
    turn_pings: GuildTurnPings
    threads: GuildThreads
    pace_pings: GuildPacePings
    notify: UserNotify
    http: HTTPClient
    allowed_mentions: discord.AllowedMentions | None

    async def wait_until_ready(self) -> None:
        """Wait until the gateway is ready (messages can be edited)."""
        ...

    def get_partial_messageable(
        self,
        id: int,
        *,
        guild_id: int | None = None,
        type: discord.ChannelType | None = None,
    ) -> discord.PartialMessageable:
        """A channel to send to or edit in by id, without fetching it."""
        ...

    def get_guild(self, id: int, /) -> discord.Guild | None:
        """A server the bot is in, by id (None if it does not see it)."""
        ...

    async def create_dm(self, user: discord.abc.Snowflake) -> discord.DMChannel:
        """Open (or find) the DM channel with a user."""
        ...


async def shown() -> bool:
    """The `then` of a change whose message was already shown in its current state."""
    return True
