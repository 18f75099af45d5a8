"""Per-server settings, cached: read once in the background, written through to storage.

Every table message reads server settings (language, pictures); none of them may cost a
query on a click, so each is kept in memory and read on the first lookup. The bot owns one
of each; `/cardtable language` and `/cardtable images` write through them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Generic, TypeVar

from bot.storage import DatabaseUnavailable, Storage
from bot.table.errors import UserError
from bot.table.meta import PACES

log = logging.getLogger(__name__)

T = TypeVar("T")


class GuildSetting(Generic[T]):
    """One setting of every server: its stored value, or `default` where none is stored."""

    what = "setting"  # named in the log when a read fails

    def __init__(self, storage: Storage, default: T) -> None:
        self.storage = storage
        self.default = default
        # A server without a stored value caches the default, so misses stay rare.
        self._values: dict[int, T] = {}
        self._loading: dict[int, asyncio.Task[T]] = {}

    async def read(self, guild_id: int) -> T | None:
        """The stored value, or None where the server never chose."""
        raise NotImplementedError

    async def write(self, guild_id: int, value: T) -> None:
        """Store a server's value."""
        raise NotImplementedError

    def value_for(self, guild_id: int | None) -> T:
        """The server's value; never queries (the default until it has been read)."""
        if guild_id is None:
            return self.default
        try:
            return self._values[guild_id]
        except KeyError:
            # Not read yet (a click racing the guild's arrival): read it in the background
            # so the next message is right, and use the default meanwhile.
            self._load_soon(guild_id)
            return self.default

    def _load_soon(self, guild_id: int) -> None:
        if guild_id in self._loading:
            return
        try:
            task = asyncio.get_running_loop().create_task(self.load(guild_id))
        except RuntimeError:  # no running loop: called from synchronous code
            return
        self._loading[guild_id] = task
        task.add_done_callback(lambda done: self._loaded(guild_id, done))

    def _loaded(self, guild_id: int, task: asyncio.Task[T]) -> None:
        self._loading.pop(guild_id, None)
        # A failed read is only logged: the next lookup tries again.
        if not task.cancelled() and task.exception() is not None:
            log.error(
                "could not read the %s of guild %s", self.what, guild_id, exc_info=task.exception()
            )

    async def load(self, guild_id: int) -> T:
        """Read a server's value from storage into the cache and return it."""
        stored = await self.read(guild_id)
        # setdefault: a change answered while we read must not be overwritten.
        return self._values.setdefault(guild_id, self.default if stored is None else stored)

    async def set(self, guild_id: int, value: T) -> None:
        """Store a server's choice; UserError (settings.not_saved) if the database is out
        of reach or does not answer within its limit (the choice then stays unknown)."""
        try:
            await self.write(guild_id, value)
        except (DatabaseUnavailable, TimeoutError) as error:
            log.warning("could not store the %s of guild %s: %r", self.what, guild_id, error)
            raise UserError("settings.not_saved") from error
        self._values[guild_id] = value

    def forget(self, guild_id: int) -> None:
        """Drop a server the bot left from the cache; its setting stays stored."""
        self._values.pop(guild_id, None)

    def close(self) -> None:
        """Stop background reads that would outlive the bot."""
        for task in self._loading.values():
            task.cancel()


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


# When a turn pings the people it waits for: at its start and at half time, at half time
# only, or never. Every turn by default: an edit of the table never notifies anyone.
TURN_PING_MODES = ("every", "half", "off")


class GuildTurnPings(GuildSetting[str]):
    """Each server's choice of turn pings (one of TURN_PING_MODES; "every" by default)."""

    what = "turn pings setting"

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, default="every")

    async def read(self, guild_id: int) -> str | None:
        """The stored choice, or None where the server never chose (or the row is unknown)."""
        stored = await self.storage.get_guild_turn_pings(guild_id)
        return stored if stored in TURN_PING_MODES else None

    async def write(self, guild_id: int, value: str) -> None:
        """Store a server's choice (ValueError for anything but a mode)."""
        if value not in TURN_PING_MODES:
            raise ValueError(f"unknown turn pings mode {value!r}")
        await self.storage.set_guild_turn_pings(guild_id, value)

    def mode_for(self, guild_id: int | None) -> str:
        """When the server's turns ping the player; never queries."""
        return self.value_for(guild_id)


class GuildThreads(GuildSetting[bool]):
    """Each server's default for opening a table in a thread of its own (off by default)."""

    what = "threads setting"

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, default=False)

    async def read(self, guild_id: int) -> bool | None:
        """The stored choice, or None where the server never chose."""
        return await self.storage.get_guild_threads(guild_id)

    async def write(self, guild_id: int, value: bool) -> None:
        """Store a server's choice."""
        await self.storage.set_guild_threads(guild_id, value)

    def threads_for(self, guild_id: int | None) -> bool:
        """Whether the server's tables open in a thread by default; never queries."""
        return self.value_for(guild_id)


# What a turn-based table does beside the "your turn" DM: nothing ("dm", the default) or
# also the channel's turn pings, as the server's /cardtable pings setting says ("both").
PACE_PING_MODES = ("dm", "both")


class GuildTextSetting(GuildSetting[str]):
    """A server setting stored as one of a few names in a text column."""

    column = ""
    choices: tuple[str, ...] = ()

    async def read(self, guild_id: int) -> str | None:
        """The stored choice, or None where the server never chose (or it is unknown)."""
        stored = await self.storage.get_guild_text(guild_id, self.column)
        return stored if stored in self.choices else None

    async def write(self, guild_id: int, value: str) -> None:
        """Store a server's choice (ValueError for anything but a choice)."""
        if value not in self.choices:
            raise ValueError(f"unknown {self.what} {value!r}")
        await self.storage.set_guild_text(guild_id, self.column, value)


class GuildPace(GuildTextSetting):
    """Each server's default pace of new tables (a name of PACES; "live" by default)."""

    what = "pace setting"
    column = "pace"
    choices = tuple(PACES)

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, default="live")

    def pace_for(self, guild_id: int | None) -> str:
        """The pace new tables of the server get unless their start says; never queries."""
        return self.value_for(guild_id)


class GuildPacePings(GuildTextSetting):
    """Each server's choice of channel pings at turn-based tables (PACE_PING_MODES)."""

    what = "turn-based pings setting"
    column = "pace_pings"
    choices = PACE_PING_MODES

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, default="dm")

    def mode_for(self, guild_id: int | None) -> str:
        """Whether turn-based tables ping in the channel too ("both") or not ("dm")."""
        return self.value_for(guild_id)


# How a person hears of their turns at turn-based tables: a DM for every turn, one daily
# summary of every table waiting for them, or nothing (/cardtable notify).
NOTIFY_MODES = ("every", "daily", "none")


class UserNotify(GuildSetting[str]):
    """Each person's choice of turn notices (NOTIFY_MODES; "every" by default).

    Keyed by user id, not server: the same cache as the servers' settings.
    """

    what = "turn notices setting"

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, default="every")

    async def read(self, guild_id: int) -> str | None:
        """The stored choice of this user id, or None where they never chose."""
        stored = await self.storage.get_user_notify(guild_id)
        return stored if stored in NOTIFY_MODES else None

    async def write(self, guild_id: int, value: str) -> None:
        """Store this user id's choice (ValueError for anything but a mode)."""
        if value not in NOTIFY_MODES:
            raise ValueError(f"unknown turn notices mode {value!r}")
        await self.storage.set_user_notify(guild_id, value)

    async def mode_of(self, user_id: int) -> str:
        """A person's choice, read from storage the first time it is needed."""
        cached = self._values.get(user_id)
        return cached if cached is not None else await self.load(user_id)
