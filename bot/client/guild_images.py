"""Whether each server's table messages carry a picture of the table, cached.

`/cardtable images` writes through it; every table message reads it without a query.
Pictures are on unless a server turned them off.
"""

from __future__ import annotations

from bot.client.guild_settings import GuildSetting
from bot.storage import Storage


class GuildImages(GuildSetting[bool]):
    """Each server's choice of pictures in table messages (on by default)."""

    what = "pictures setting"

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, default=True)

    async def read(self, guild_id: int) -> bool | None:
        """The stored choice, or None where the server never chose."""
        return await self.storage.get_guild_images(guild_id)

    async def write(self, guild_id: int, value: bool) -> None:
        """Store a server's choice."""
        await self.storage.set_guild_images(guild_id, value)

    def images_for(self, guild_id: int | None) -> bool:
        """Whether the server's table messages show pictures; never queries."""
        return self.value_for(guild_id)
