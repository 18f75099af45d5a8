"""Publishing tables on Discord: the public message, DMs and half-time pings.

The public message is refreshed "latest state wins": a refresh marks the table, and a
few drain tasks edit each marked table with what it shows at that moment, so a burst of
changes costs one edit, and a change made during an edit is followed by another edit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import discord

from bot.i18n import t
from bot.render.table import public_message
from bot.table.session import TableSession
from bot.table.spec import Letter, MessageFields, is_computer_id

if TYPE_CHECKING:
    from bot.app import CardtableBot

log = logging.getLogger(__name__)

# Edits in flight at once: discord.py waits out rate limits per route, and a few parallel
# edits keep a restart's refresh of many tables from hogging the connection.
DRAIN_TASKS = 4
RETRY_DELAYS = (1.0, 5.0, 15.0)


class DiscordPublisher:
    """Shows tables on Discord for the table core."""

    def __init__(self, bot: CardtableBot) -> None:
        self.bot = bot
        self._dirty: dict[int, TableSession] = {}
        self._drains: set[asyncio.Task[None]] = set()

    # -- what a table looks like ----------------------------------------------------------

    def table_locale(self, session: TableSession) -> object:
        """The language of public table messages: the server's setting, else its locale."""
        chosen = self.bot.languages.language_for(session.record.guild_id)
        return chosen or session.meta.locale

    def render(self, session: TableSession) -> MessageFields:
        """The table's public message as it should look now."""
        return public_message(session.public(), session.spec.renderer, self.table_locale(session))

    # -- the public message ---------------------------------------------------------------

    def refresh(self, session: TableSession) -> None:
        """Bring the table's public message up to date soon (latest state wins)."""
        if session.record.message_id is None:
            return
        self._dirty[session.id] = session
        if len(self._drains) < DRAIN_TASKS:
            task = asyncio.get_running_loop().create_task(self._drain())
            self._drains.add(task)
            task.add_done_callback(self._drains.discard)

    async def _drain(self) -> None:
        await self.bot.wait_until_ready()
        while self._dirty:
            table_id = next(iter(self._dirty))
            session = self._dirty.pop(table_id)
            await self._edit_until_done(session)

    async def _edit_until_done(self, session: TableSession) -> None:
        for attempt, delay in enumerate((0.0, *RETRY_DELAYS)):
            if delay:
                await asyncio.sleep(delay)
            revision = session.revision
            try:
                await self.edit(session, **self.render(session))
            except discord.HTTPException as error:
                log.warning(
                    "could not edit the message of %s table %s (attempt %d): %s",
                    session.spec.name,
                    session.id,
                    attempt + 1,
                    error,
                )
                continue
            if session.revision != revision:
                # Changed while we edited: show the newer state too.
                self.refresh(session)
            return
        log.error(
            "gave up editing the message of %s table %s after %d attempts",
            session.spec.name,
            session.id,
            len(RETRY_DELAYS) + 1,
        )

    async def edit(self, session: TableSession, **fields: Any) -> None:
        """Edit the table's public message outside any interaction."""
        message_id = session.record.message_id
        if message_id is None:
            return
        channel = self.bot.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        await channel.get_partial_message(message_id).edit(**fields)

    # -- DMs and pings ------------------------------------------------------------------

    async def deliver(self, session: TableSession, letters: Sequence[Letter]) -> None:
        """Send the DMs a change caused (never to computers or to closed DMs)."""
        for letter in letters:
            player = letter.player
            if is_computer_id(player) or player in session.meta.dm_closed:
                continue
            text = t(
                letter.key, session.user_locale(player), link=session.jump_url, **letter.params
            )
            try:
                # create_dm is cached per user and needs no members intent (no GET /users).
                channel = await self.bot.create_dm(discord.Object(id=int(player)))
                await channel.send(text)
            except (discord.Forbidden, discord.NotFound):
                await self.bot.tables.note_dm_closed(session, player)
            except discord.HTTPException:
                log.warning("DM to %s failed for table %s", player, session.id, exc_info=True)

    async def ping(self, session: TableSession, players: Sequence[str], deadline: float) -> None:
        """Ping the people whose turn it is, once, at half time."""
        if not players:
            return
        channel = self.bot.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        text = t(
            "table.ping",
            self.table_locale(session),
            players=", ".join(f"<@{p}>" for p in players),
            deadline=int(deadline),
        )
        try:
            await channel.send(
                text,
                allowed_mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(int(p)) for p in players]
                ),
            )
        except discord.HTTPException:
            log.warning("could not ping on table %s", session.id, exc_info=True)
