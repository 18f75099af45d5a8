"""Tables in a thread of their own: the thread is created from the channel when the table
opens (`/<game> start thread:True`, or the server's /cardtable threads default), and
archived once the table closes, so a busy channel never scrolls the table away.

Both are REST requests outside an interaction's answer, so both go through the outbound
lane: creating a thread at the table's priority (a person waits for it), archiving as
cosmetic work that waits until the table's last edit and the deletion of its last ping
have gone out (an archived thread's messages can no longer be edited or deleted).
"""

from __future__ import annotations

import logging
import weakref
from typing import Any, Literal

import discord

from bot.client.outbound.lane import Lane, Priority
from bot.client.publishing.host import Host
from bot.table.session import TableSession

log = logging.getLogger(__name__)

# Minutes without a message after which Discord archives the thread by itself: a day,
# Discord's default, so a slow game is never archived under its players (edits are no
# activity); the bot archives it as soon as the table ends anyway.
AUTO_ARCHIVE_MINUTES: Literal[1440] = 1440
# Discord's limit on a thread's name.
NAME_MAX = 100
# Seconds between looks while the table's last edit or ping deletion is still going out,
# and how many looks at most (then the thread is archived all the same).
ARCHIVE_WAIT = 1.0
ARCHIVE_LOOKS = 60


class TableThreads:
    """Creates tables' threads and archives them when their tables close.

    Usage::

        threads = TableThreads(bot, lane)
        thread_id = await threads.create(channel_id, "No Thanks! — ana", key=interaction.id)
        threads.closed(session)  # after every change: archives the thread of a closed table
    """

    def __init__(self, host: Host, lane: Lane) -> None:
        self.host = host
        self.lane = lane
        self._archiving: weakref.WeakSet[TableSession] = weakref.WeakSet()

    async def create(self, channel_id: int, name: str, *, key: int) -> int:
        """Create a public thread from a channel (through the lane); its id.

        ``key`` names this one request (the interaction's id). Raises discord's
        HTTPException where Discord refuses (Forbidden: no permission to create threads).
        """

        async def work() -> int:
            await self.host.wait_until_ready()
            data = await self.host.http.start_thread_without_message(
                channel_id,
                name=name[:NAME_MAX],
                auto_archive_duration=AUTO_ARCHIVE_MINUTES,
                type=11,  # a public thread
            )
            return int(data["id"])

        return await self.lane.call(("thread", key), Priority.TABLE, work)

    async def post(self, channel_id: int, guild_id: int | None, **fields: Any) -> int:
        """Post a message in a channel or thread (through the lane, at the table's
        priority) and return its id: a table's first message outside an interaction."""

        async def work() -> int:
            await self.host.wait_until_ready()
            channel = self.host.get_partial_messageable(channel_id, guild_id=guild_id)
            message = await channel.send(**fields)
            return message.id

        return await self.lane.call(("post", channel_id), Priority.TABLE, work)

    def abandon(self, thread_id: int) -> None:
        """Archive soon a thread whose table could not be opened after all."""

        async def work() -> None:
            try:
                await self.host.http.edit_channel(thread_id, archived=True)
            except discord.HTTPException as error:
                log.warning("could not archive the abandoned thread %s: %s", thread_id, error)

        self.lane.put(("abandon", thread_id), Priority.COSMETIC, work)

    def closed(self, session: TableSession) -> None:
        """After a change: archive a closed table's thread soon (once), if the bot made it."""
        if session.meta.thread is None or session.is_open or session in self._archiving:
            return
        self._archiving.add(session)
        self.archive_soon(session)

    def archive_soon(self, session: TableSession, look: int = 0) -> None:
        """Queue archiving the table's thread (``look``: how many times it waited)."""
        self.lane.put(
            ("archive", session.id),
            Priority.COSMETIC,
            lambda: self._archive(session, look),
            delay=ARCHIVE_WAIT if look else 0.0,
        )

    async def _archive(self, session: TableSession, look: int) -> None:
        waiting = self.lane.busy(("table", session.id)) or bool(session.meta.ping_message)
        if waiting and look < ARCHIVE_LOOKS:
            # Its last edit or ping deletion is still to go out: archived first, they
            # would fail.
            self.archive_soon(session, look + 1)
            return
        await self.host.wait_until_ready()
        try:
            await self.host.http.edit_channel(session.channel_id, archived=True)
        except discord.HTTPException as error:
            # Discord archives it by itself after a day without messages.
            log.warning("could not archive the thread of table %s: %s", session.id, error)
