"""The server-language service: each server's language for public table messages, cached.

The bot owns one; `/cardtable language` writes through it and every table message reads
it without a query.
"""

from __future__ import annotations

from bot.client.guild_settings import GuildSetting
from bot.storage import Storage


class GuildLanguages(GuildSetting[str | None]):
    """Each server's chosen language (None: follow the server's Discord language)."""

    what = "language"

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, default=None)

    async def read(self, guild_id: int) -> str | None:
        """The stored language, or None."""
        return await self.storage.get_guild_language(guild_id)

    async def write(self, guild_id: int, value: str | None) -> None:
        """Store a server's language (None clears it)."""
        await self.storage.set_guild_language(guild_id, value)

    def language_for(self, guild_id: int | None) -> str | None:
        """The server's chosen language for public table messages, or None; never queries."""
        return self.value_for(guild_id)
