"""The table's picture on Discord: painted once per state in a worker thread, uploaded only
when the message does not carry it yet, and left out where Discord refuses attachments."""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import discord

from bot.render.images.cache import FILENAME, Picture, PictureCache
from bot.table.session import TableSession
from bot.table.spec import MessageFields

log = logging.getLogger(__name__)

# After Discord refused a picture in a channel (no Attach Files), its tables show text
# only for this long before a picture is tried again (the permission may be granted).
NO_PICTURES_FOR = 600.0
# What a message was last seen to carry: a picture's key, None for no picture; a message
# missing from the map (posted before a restart, or after a failed edit) is unknown.
_UNKNOWN = "?"
# One painter thread for the process: painting is CPU work, so more threads would not
# paint faster, and each thread that paints keeps a malloc arena of picture-sized buffers.
_PAINTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="picture-painter")


@dataclass(frozen=True, slots=True)
class TablePicture:
    """A painted picture for a table message: its key (what it shows), PNG and alt text.

    ``upload_key`` is what a message carrying it must match: the picture and its alt text.
    Discord keeps an attachment's description as uploaded (an edit naming the attachment
    with a new description is ignored, discord-api-docs#4197), so a new alt text needs the
    file sent again; the PNG comes from the cache, painted once per picture.
    """

    key: str
    png: bytes
    alt: str

    @property
    def upload_key(self) -> tuple[str, str]:
        """The picture's key and its alt text (compared as they are: no digest to make)."""
        return (self.key, self.alt)

    def file(self) -> discord.File:
        """A fresh upload of the picture (a File can be sent only once)."""
        if not self.png:
            raise ValueError("a picture a message already carries was not painted to upload")
        return discord.File(io.BytesIO(self.png), filename=FILENAME, description=self.alt)


class Pictures:
    """The painted pictures, which message carries which, and where they are refused.

    Usage::

        pictures = Pictures()
        png = await pictures.paint(picture)  # cached by what the picture shows
        fields = pictures.for_edit(message_id, fields, TablePicture(picture.key, png, alt))
    """

    def __init__(self) -> None:
        self.cache = PictureCache()
        self._painting: dict[str, asyncio.Future[bytes]] = {}
        # message id -> upload key (picture and alt text) of the picture on it
        self._carried: dict[int, tuple[str, str] | str | None] = {}
        # One edit at a time per message, so "which picture does it carry" stays true.
        self._message_locks: dict[int, asyncio.Lock] = {}
        self._refused: dict[int, float] = {}  # channel id -> when a picture was refused

    @property
    def painted(self) -> int:
        """How many pictures were painted (not served from the cache)."""
        return self.cache.painted

    async def paint(self, picture: Picture) -> bytes:
        """A picture's PNG: cached, or painted once in the painter thread however many ask."""
        png = self.cache.get(picture.key)
        if png is not None:
            return png
        pending = self._painting.get(picture.key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._painting[picture.key] = future
        try:
            loop = asyncio.get_running_loop()
            png = await loop.run_in_executor(_PAINTER, self.cache.paint, picture)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as error:
            future.set_exception(error)
            future.exception()  # retrieved here: the caller below re-raises it
            raise
        else:
            future.set_result(png)
            return png
        finally:
            self._painting.pop(picture.key, None)

    def refused_lately(self, channel_id: int) -> bool:
        """Whether Discord refused a picture in this channel a short while ago."""
        refused = self._refused.get(channel_id)
        return refused is not None and time.monotonic() - refused < NO_PICTURES_FOR

    def refuse(self, session: TableSession, error: discord.Forbidden) -> None:
        """Discord refused the picture here (no Attach Files): show text for a while."""
        log.warning(
            "cannot attach the picture of %s table %s in channel %s (%s); showing text only",
            session.spec.name,
            session.id,
            session.channel_id,
            error,
        )
        self._refused[session.channel_id] = time.monotonic()

    def lock(self, message_id: int) -> asyncio.Lock:
        """The lock that keeps one edit at a time on a message."""
        return self._message_locks.setdefault(message_id, asyncio.Lock())

    def for_edit(
        self, message_id: int, fields: MessageFields, picture: TablePicture | None
    ) -> MessageFields:
        """Edit fields that upload the picture only if the message does not carry it yet
        (the same picture with another alt text is uploaded again)."""
        carried = self._carried.get(message_id, _UNKNOWN)
        if picture is None:
            if carried is not None:
                fields["attachments"] = []  # drop an old picture (e.g. pictures turned off)
        elif carried != picture.upload_key:
            fields["attachments"] = [picture.file()]
        # Unchanged: no upload; the message keeps the attachment it already has.
        return fields

    def carried(self, message_id: int, picture: Picture) -> bool:
        """Whether the message is known to carry this picture with this alt text already
        (then an edit keeps it, and it need not even be painted)."""
        return self._carried.get(message_id, _UNKNOWN) == (picture.key, picture.alt)

    def carries(self, message_id: int, picture: TablePicture | None) -> None:
        """Note which picture a message now carries (after a successful send or edit)."""
        self._carried[message_id] = None if picture is None else picture.upload_key

    async def edit_carrying(
        self,
        session: TableSession,
        message_id: int,
        fields: MessageFields,
        picture: TablePicture | None,
        edit: Callable[..., Awaitable[Any]],
        as_text: Callable[[], MessageFields],
    ) -> Any:
        """Edit a message, uploading the picture only if it (or its alt text) changed; if
        Discord refuses the picture, the whole table as text (``as_text``: the message made
        without one)."""
        carried = self._carried.get(message_id, _UNKNOWN)
        uploads = picture is not None and carried != picture.upload_key
        try:
            result = await edit(**self.for_edit(message_id, dict(fields), picture))
        except discord.Forbidden as error:
            self._carried.pop(message_id, None)
            if not uploads:
                raise
            self.refuse(session, error)
            picture = None
            result = await edit(**self.for_edit(message_id, dict(as_text()), None))
        except BaseException:
            self._carried.pop(message_id, None)  # it may or may not have changed
            raise
        self.carries(message_id, picture)
        return result
