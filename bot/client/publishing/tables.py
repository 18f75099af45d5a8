"""The table's public message: rendered, edited "latest state wins", posted again where it
was deleted, and pointed at from older copies.

A refresh puts the table's edit in the outbound lane (bot.client.outbound.lane) at the
highest priority; the edit shows the table as it is when it goes out, so a burst of
changes costs one edit, and a change made during an edit is followed by another edit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import discord

from bot.client.outbound.lane import Lane, Priority
from bot.client.publishing.host import Host, shown
from bot.client.publishing.pictures import Pictures, TablePicture
from bot.i18n import t
from bot.render.table import public_message, public_picture
from bot.storage import BrokenRow
from bot.table.errors import SaveFailed
from bot.table.session import TableSession
from bot.table.spec import MessageFields

log = logging.getLogger(__name__)

# Seconds before each new try of an edit that failed (then it is given up until the next
# change).
RETRY_DELAYS = (1.0, 5.0, 15.0)
# A running turn-based table where no person acted for this long has nobody looking at
# it: its message's edit (a deadline passed) waits behind every other request.
WATCHED = 5 * 60.0


def priority(session: TableSession) -> Priority:
    """The lane priority of a table message's edit: a table's, unless the table is a
    running turn-based one where no person acted within WATCHED (its turn passed at a
    deadline, played by the computer). Then it goes after the "your turn" notices that
    tell the people, and after the live tables' DMs: at a wave of deadlines the lane's
    pace cannot carry every request at once, and a table watched by nobody can wait."""
    if not session.turn_based or session.status != "running":
        return Priority.TABLE
    now = session.clock()
    if any(now - at < WATCHED for at in session.meta.acted.values()):
        return Priority.TABLE
    return Priority.COSMETIC


class TableMessages:
    """Shows each table's public message in its channel.

    Usage::

        messages = TableMessages(bot, Pictures(), Lane())
        messages.refresh(session)  # edited soon, with the state it has by then
    """

    def __init__(self, host: Host, pictures: Pictures, lane: Lane) -> None:
        self.host = host
        self.pictures = pictures
        self.lane = lane
        self._unshown: set[int] = set()  # tables whose message could not be edited or posted
        self._told: set[tuple[int, int]] = set()  # who has been told so, per table
        # Copies posted again whose record was not saved and whose deletion failed, per table.
        self._strays: dict[int, set[int]] = {}

    # -- what a table looks like ----------------------------------------------------------

    def table_locale(self, session: TableSession) -> object:
        """The language of public table messages: the server's setting, else its locale."""
        chosen = self.host.languages.language_for(session.record.guild_id)
        return chosen or session.meta.locale

    def render(self, session: TableSession) -> MessageFields:
        """The table's public message as it should look now, as text (no picture)."""
        return public_message(session.public(), session.spec.renderer, self.table_locale(session))

    async def message(
        self, session: TableSession, editing: int | None = None
    ) -> tuple[MessageFields, TablePicture | None]:
        """The table's public message and its picture, when the server shows pictures.

        With a picture, the picture is the table and the text says only what it does not
        (whose turn, the timer, the last move). The picture is painted in a worker thread,
        once per state (see PictureCache). If it cannot be painted, that is logged and the
        whole table goes out as text: a picture never stops a move from being shown.

        ``editing``: the message this is for, when it is edited. If that message carries
        the picture already (a move that changed nothing it shows), nothing is painted:
        the edit keeps the attachment (the quick path of most moves).
        """
        public = session.public()
        locale = self.table_locale(session)
        picture = None
        if (
            public.facts.status in ("running", "finished")
            and self.host.images.images_for(session.record.guild_id)
            and not self.pictures.refused_lately(session.channel_id)
        ):
            try:
                picture = public_picture(public, session.spec.renderer, locale)
                if picture is None or (
                    editing is not None and self.pictures.carried(editing, picture)
                ):
                    png = b""  # nothing to upload: not painted
                else:
                    png = await self.pictures.paint(picture)
            except Exception:
                log.exception(
                    "could not paint the picture of %s table %s at move %s; showing it as text",
                    session.spec.name,
                    session.id,
                    public.facts.move_number,
                )
                picture = None
        fields = public_message(public, session.spec.renderer, locale, pictures=picture is not None)
        if picture is None or fields.get("embed") is None:
            return fields, None
        # A plain attachment, not the embed's image: a phone shows it 302 px wide, an
        # embed's image at most 270 and a tall one 210 (cards.SHOWN_WIDTH).
        return fields, TablePicture(picture.key, png, picture.alt)

    async def show(self, session: TableSession) -> None:
        """Edit the table's public message to its current state (picture only if changed)."""
        message_id = session.record.message_id
        if message_id is None:
            return
        async with self.pictures.lock(message_id):
            fields, picture = await self.message(session, message_id)

            async def edit(**changes: Any) -> None:
                await self.edit(session, **changes)

            await self.pictures.edit_carrying(
                session, message_id, fields, picture, edit, lambda: self.render(session)
            )

    async def answer_click(self, reply: Any, session: TableSession) -> bool:
        """Answer a click on the table message by editing it to the current state."""
        message_id = session.record.message_id
        if message_id is None:
            return bool(await reply.edit(**self.render(session)))
        async with self.pictures.lock(message_id):
            fields, picture = await self.message(session, message_id)
            done = await self.pictures.edit_carrying(
                session, message_id, fields, picture, reply.edit, lambda: self.render(session)
            )
            return bool(done)

    async def sendable(self, session: TableSession) -> tuple[MessageFields, TablePicture | None]:
        """The table as a new message: its fields with the picture as a file to upload."""
        fields, picture = await self.message(session)
        if picture is not None:
            fields["file"] = picture.file()
        return fields, picture

    async def send_table(
        self, session: TableSession, send: Callable[..., Awaitable[Any]]
    ) -> tuple[Any, TablePicture | None]:
        """Post the table with ``send``; as text if the picture is refused. (result, picture)"""
        fields, picture = await self.sendable(session)
        try:
            return await send(**fields), picture
        except discord.Forbidden as error:
            if picture is None:
                raise
            self.pictures.refuse(session, error)
            return await send(**self.render(session)), None

    # -- keeping it current ---------------------------------------------------------------

    def refresh(self, session: TableSession) -> None:
        """Bring the table's public message up to date soon (latest state wins)."""
        if session.record.message_id is None:
            return
        self.lane.put(("table", session.id), priority(session), lambda: self._show_once(session))

    async def shown(self, session: TableSession, within: float) -> bool:
        """Wait (at most ``within`` seconds) until the work queued for the table's message
        is done: edited or posted again (or given up, which is logged); whether in time."""
        try:
            async with asyncio.timeout(within):
                await self.lane.done_with(("table", session.id))
        except TimeoutError:
            log.info("table %s's message was not shown within %s s", session.id, within)
            return False
        return True

    async def _show_once(self, session: TableSession, attempt: int = 0) -> None:
        """One try at showing the table's current state (a failed one is tried again)."""
        await self.host.wait_until_ready()
        revision = session.revision
        try:
            await self.show(session)
        except (discord.NotFound, discord.Forbidden) as error:
            # Deleted, or no longer ours to edit: post the table anew instead.
            log.warning(
                "the message of %s table %s cannot be edited (%s); posting it again",
                session.spec.name,
                session.id,
                error,
            )
            if not await self.repost(session):
                return
        except discord.HTTPException as error:
            log.warning(
                "could not edit the message of %s table %s (attempt %d): %s",
                session.spec.name,
                session.id,
                attempt + 1,
                error,
            )
            if attempt < len(RETRY_DELAYS):
                self.lane.put(
                    ("table", session.id),
                    priority(session),
                    lambda: self._show_once(session, attempt + 1),
                    delay=RETRY_DELAYS[attempt],
                )
            else:
                log.error(
                    "gave up editing the message of %s table %s after %d attempts",
                    session.spec.name,
                    session.id,
                    attempt + 1,
                )
            return
        self._shown_again(session)
        if session.revision != revision:
            # Changed while we edited: show the newer state too.
            self.refresh(session)

    async def edit(self, session: TableSession, **fields: Any) -> None:
        """Edit the table's public message outside any interaction."""
        message_id = session.record.message_id
        if message_id is None:
            return
        channel = self.host.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        await channel.get_partial_message(message_id).edit(**fields)

    async def repost(self, session: TableSession) -> bool:
        """Post the table as a new message in its channel and make it the table's message.

        If the bot cannot post there either, the table is marked as not shown, and the
        next person who clicks is told privately what is wrong.
        """
        channel = self.host.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        try:
            message, picture = await self.send_table(session, channel.send)
        except discord.HTTPException as error:
            log.error(
                "cannot show %s table %s in channel %s: %s",
                session.spec.name,
                session.id,
                session.channel_id,
                error,
            )
            self._unshown.add(session.id)
            return False
        self.pictures.carries(message.id, picture)
        try:
            await session.change(lambda d: d.set_message(message.id), then=shown)
        except SaveFailed:
            # Shown, but not remembered: the next refresh would post yet another copy, and
            # this one would stay with live buttons, frozen at this move. Take it down; the
            # next refresh posts the table again (and records it once saves work).
            log.error(
                "table %s was posted again but its new message %s was not saved; deleting it",
                session.id,
                message.id,
            )
            await self.delete_copy(session, message.id)
            return False
        self._shown_again(session)
        self._delete_strays(session)
        return True

    async def delete_copy(self, session: TableSession, message_id: int) -> None:
        """Delete a copy of the table's message that is not its recorded message; if that
        fails it is logged, and deleted once the table's message is posted and recorded."""
        channel = self.host.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        try:
            await channel.get_partial_message(message_id).delete()
        except discord.NotFound:
            return  # already gone
        except discord.HTTPException as error:
            log.error(
                "could not delete message %s, an unrecorded copy of table %s: %s",
                message_id,
                session.id,
                error,
            )
            self._strays.setdefault(session.id, set()).add(message_id)

    def discard_copy(self, session: TableSession, message_id: int) -> None:
        """Soon delete a copy of the table that is not its recorded message (through the
        lane; a failure is kept and tried again once the table is posted and recorded)."""
        self.lane.put(
            ("stray copy", message_id),
            Priority.COSMETIC,
            partial(self.delete_copy, session, message_id),
        )

    def _delete_strays(self, session: TableSession) -> None:
        """Soon delete the unrecorded copies of the table that could not be deleted."""
        for message_id in self._strays.pop(session.id, set()):
            if message_id != session.record.message_id:
                self.discard_copy(session, message_id)

    def _shown_again(self, session: TableSession) -> None:
        if session.id in self._unshown:
            self._unshown.discard(session.id)
            self._told = {told for told in self._told if told[0] != session.id}

    def cannot_show(self, session: TableSession) -> bool:
        """Whether the table's message could neither be edited nor posted anew."""
        return session.id in self._unshown

    def owes_notice(self, session: TableSession, user_id: int) -> bool:
        """Whether to tell this person that the table cannot be shown (once each)."""
        if session.id not in self._unshown or (session.id, user_id) in self._told:
            return False
        self._told.add((session.id, user_id))
        return True

    # -- older copies and broken tables ---------------------------------------------------

    def pointer(self, session: TableSession, locale: object) -> MessageFields:
        """What an older copy of a table's message becomes: a link to the current one."""
        return {
            "content": t("table.reposted", locale, link=session.jump_url),
            "embed": None,
            "view": None,
            "attachments": [],  # its picture would otherwise stay, shown as a plain file
        }

    def point_old_copy(self, session: TableSession, message_id: int, locale: object) -> None:
        """Soon turn an older copy of the table's message into a link to the current one."""
        fields = self.pointer(session, locale)
        self.lane.put(
            ("old copy", message_id),
            Priority.COSMETIC,
            lambda: self.edit_message(session, message_id, **fields),
        )

    async def edit_message(self, session: TableSession, message_id: int, **fields: Any) -> None:
        """Edit one message of the table's channel (an older copy of the table)."""
        channel = self.host.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        try:
            await channel.get_partial_message(message_id).edit(**fields)
        except discord.HTTPException as error:
            # An old copy that cannot be edited is harmless: its buttons answer "moved on".
            log.info("could not point table %s's old message to the new one: %s", session.id, error)

    def show_broken(self, row: BrokenRow) -> None:
        """Tell a quarantined table's channel, on its message, that it could not be restored."""
        message_id = row.message_id
        if message_id is not None:
            self.lane.put(
                ("table", row.id), Priority.TABLE, lambda: self._show_broken(row, message_id)
            )

    async def _show_broken(self, row: BrokenRow, message_id: int) -> None:
        locale = self.host.languages.language_for(row.guild_id)
        spec = self.host.tables.specs.get(row.game)
        title = spec.renderer.title(locale) if spec is not None else row.game
        embed = discord.Embed(
            title=t("closed.title", locale, game=title),
            description=t("closed.broken", locale),
            colour=discord.Colour.dark_grey(),
        )
        channel = self.host.get_partial_messageable(row.channel_id, guild_id=row.guild_id)
        try:
            await self.host.wait_until_ready()
            await channel.get_partial_message(message_id).edit(content=None, embed=embed, view=None)
        except discord.HTTPException as error:
            # The channel may be gone or closed to us; the table is closed all the same.
            log.warning("could not mark the message of broken table %s: %s", row.id, error)
