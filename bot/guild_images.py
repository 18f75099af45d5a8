"""Whether each server's table messages carry a picture of the table, cached.

`/cardtable images` writes through it; every table message reads it without a query.
Pictures are on unless a server turned them off.
"""

from __future__ import annotations

import asyncio
import logging

from bot.storage import Storage

log = logging.getLogger(__name__)


class GuildImages:
    """Each server's choice of pictures in table messages (on by default)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._images: dict[int, bool] = {}
        self._loading: dict[int, asyncio.Task[bool]] = {}

    def images_for(self, guild_id: int | None) -> bool:
        """Whether the server's table messages show pictures; never queries."""
        if guild_id is None:
            return True
        try:
            return self._images[guild_id]
        except KeyError:
            # Not read yet: read it in the background and show pictures meanwhile.
            self._load_soon(guild_id)
            return True

    def _load_soon(self, guild_id: int) -> None:
        if guild_id in self._loading:
            return
        try:
            task = asyncio.get_running_loop().create_task(self.load(guild_id))
        except RuntimeError:  # no running loop: called from synchronous code
            return
        self._loading[guild_id] = task
        task.add_done_callback(lambda done: self._loaded(guild_id, done))

    def _loaded(self, guild_id: int, task: asyncio.Task[bool]) -> None:
        self._loading.pop(guild_id, None)
        if not task.cancelled() and task.exception() is not None:
            log.error(
                "could not read the pictures setting of guild %s",
                guild_id,
                exc_info=task.exception(),
            )

    async def load(self, guild_id: int) -> bool:
        """Read a server's setting from storage into the cache and return it."""
        images = await self.storage.get_guild_images(guild_id)
        # setdefault: a /cardtable images answered while we read must not be overwritten.
        return self._images.setdefault(guild_id, True if images is None else images)

    async def set(self, guild_id: int, images: bool) -> None:
        """Store a server's choice."""
        await self.storage.set_guild_images(guild_id, images)
        self._images[guild_id] = images

    def forget(self, guild_id: int) -> None:
        """Drop a server the bot left from the cache; its setting stays stored."""
        self._images.pop(guild_id, None)

    def close(self) -> None:
        """Stop background reads that would outlive the bot."""
        for task in self._loading.values():
            task.cancel()
