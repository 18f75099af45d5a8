"""The server-language service: each server's language for public table messages, cached.

The bot owns one; `/cardtable language` writes through it and every table message reads
it without a query.
"""

from __future__ import annotations

import asyncio
import logging

from bot.storage import Storage

log = logging.getLogger(__name__)


class GuildLanguages:
    """Each server's chosen language (None: follow the server's Discord language)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        # guild id -> chosen language; None is cached too ("no setting"), so misses are rare.
        self._languages: dict[int, str | None] = {}
        self._loading: dict[int, asyncio.Task[str | None]] = {}

    def language_for(self, guild_id: int | None) -> str | None:
        """The server's chosen language for public table messages, or None; never queries."""
        if guild_id is None:
            return None
        try:
            return self._languages[guild_id]
        except KeyError:
            # Not loaded yet (a click racing the guild's arrival): read it in the background
            # so the next message is right, and use the server's default meanwhile.
            self._load_soon(guild_id)
            return None

    def _load_soon(self, guild_id: int) -> None:
        if guild_id in self._loading:
            return
        try:
            task = asyncio.get_running_loop().create_task(self.load(guild_id))
        except RuntimeError:  # no running loop: called from synchronous code
            return
        self._loading[guild_id] = task
        task.add_done_callback(lambda done: self._loaded(guild_id, done))

    def _loaded(self, guild_id: int, task: asyncio.Task[str | None]) -> None:
        self._loading.pop(guild_id, None)
        # A failed read is only logged: the next lookup tries again.
        if not task.cancelled() and task.exception() is not None:
            log.error(
                "could not read the language of guild %s", guild_id, exc_info=task.exception()
            )

    async def load(self, guild_id: int) -> str | None:
        """Read a server's language from storage into the cache and return it."""
        language = await self.storage.get_guild_language(guild_id)
        # setdefault: a /cardtable language answered while we read must not be overwritten.
        return self._languages.setdefault(guild_id, language)

    async def set(self, guild_id: int, language: str | None) -> None:
        """Store a server's language (None: follow the server's Discord language)."""
        await self.storage.set_guild_language(guild_id, language)
        self._languages[guild_id] = language

    def forget(self, guild_id: int) -> None:
        """Drop a server the bot left from the cache; its setting stays stored."""
        self._languages.pop(guild_id, None)

    def close(self) -> None:
        """Stop background reads that would outlive the bot."""
        for task in self._loading.values():
            task.cancel()
