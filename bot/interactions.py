"""The table layer shared by every game: open tables per channel, locks, user errors."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

import discord

from bot.i18n import t
from bot.storage import Storage, TableRecord

log = logging.getLogger(__name__)
P = ParamSpec("P")
S = TypeVar("S")


class UserError(Exception):
    """Bad input from a user: answered ephemerally with a translated message, never logged."""

    def __init__(self, key: str, /, **params: object) -> None:
        super().__init__(key)
        self.key = key
        self.params = params


class TableMovedOn(UserError):
    """A click on a button of an older turn, an older game or a finished game."""

    def __init__(self) -> None:
        super().__init__("table.moved_on")


class Tables:
    """Open tables kept in memory (and in storage), one per channel, with a lock each."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._by_id: dict[int, TableRecord] = {}
        self._by_channel: dict[int, int] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    def lock(self, channel_id: int) -> asyncio.Lock:
        """The lock that serialises every change to the table in one channel."""
        lock = self._locks.get(channel_id)
        if lock is None:
            lock = self._locks[channel_id] = asyncio.Lock()
        return lock

    def remember(self, record: TableRecord) -> None:
        """Keep an open table in memory."""
        assert record.id is not None
        self._by_id[record.id] = record
        self._by_channel[record.channel_id] = record.id

    def forget(self, record: TableRecord) -> None:
        """Drop a closed table from memory and free its channel."""
        if record.id is not None:
            self._by_id.pop(record.id, None)
            if self._by_channel.get(record.channel_id) == record.id:
                del self._by_channel[record.channel_id]

    def get(self, table_id: int) -> TableRecord | None:
        """An open table by id, or None if it is closed or unknown."""
        return self._by_id.get(table_id)

    def in_channel(self, channel_id: int) -> TableRecord | None:
        """The open table in a channel, or None."""
        table_id = self._by_channel.get(channel_id)
        return None if table_id is None else self._by_id.get(table_id)

    def __iter__(self) -> Iterator[TableRecord]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)

    async def restore(self, game: str) -> list[TableRecord]:
        """Load every open table of a game from storage into memory."""
        records = await self.storage.open_tables(game)
        for record in records:
            self.remember(record)
        return records

    async def save(self, record: TableRecord, move: tuple[str, str] | None = None) -> None:
        """Commit a table; closed tables leave memory and free their channel."""
        await self.storage.save_table(record, move)
        if record.is_open:
            self.remember(record)
        else:
            self.forget(record)


def jump_url(record: TableRecord) -> str:
    """A link to the table's public message."""
    guild = record.guild_id if record.guild_id is not None else "@me"
    return f"https://discord.com/channels/{guild}/{record.channel_id}/{record.message_id}"


async def reply_ephemeral(
    interaction: discord.Interaction, content: str, *, embed: discord.Embed | None = None
) -> None:
    """Answer privately, whether or not the interaction was already answered."""
    kwargs: dict[str, object] = {"content": content, "ephemeral": True}
    if embed is not None:
        kwargs["embed"] = embed
    if interaction.response.is_done():
        await interaction.followup.send(**kwargs)  # type: ignore[arg-type]
    else:
        await interaction.response.send_message(**kwargs)  # type: ignore[arg-type]


async def answer_error(
    interaction: discord.Interaction, error: BaseException, *, context: str = ""
) -> None:
    """The one place errors are answered: user errors explained, others apologised and logged.

    Call it from the ``except`` block that caught ``error``: unexpected errors go on to the
    client's ``on_error``, which logs the traceback with the context.
    """
    if isinstance(error, UserError):
        await reply_ephemeral(interaction, t(error.key, interaction.locale, **error.params))
        return
    try:
        await reply_ephemeral(interaction, t("error.unexpected", interaction.locale))
    except discord.HTTPException:
        log.warning("could not send the apology (%s)", context)
    where = (
        f"{context or 'an interaction'} (user {interaction.user.id}, "
        f"channel {interaction.channel_id})"
    )
    await interaction.client.on_error(where)


def answers_user_errors(
    func: Callable[Concatenate[S, discord.Interaction, P], Awaitable[Any]],
) -> Callable[Concatenate[S, discord.Interaction, P], Awaitable[None]]:
    """Answer a command's UserError ephemerally; real errors still reach the error handler."""

    @functools.wraps(func)
    async def wrapper(
        self: S, interaction: discord.Interaction, *args: P.args, **kwargs: P.kwargs
    ) -> None:
        try:
            await func(self, interaction, *args, **kwargs)
        except UserError as error:
            await answer_error(interaction, error)

    # discord.py reads option types from the annotations in the wrapper's module; resolve
    # them where the command was written instead.
    wrapper.__signature__ = inspect.signature(func, eval_str=True)  # type: ignore[attr-defined]
    return wrapper
