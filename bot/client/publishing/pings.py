"""Half-time reminders: one message that pings the people whose turn it is, deleted once
the turn has passed (even after a restart: the message is remembered with the table)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

import discord

from bot.client.publishing.host import Host, shown
from bot.i18n import t
from bot.table.session import Draft, TableSession

log = logging.getLogger(__name__)


class TurnPings:
    """Posts and tidies the half-time reminders.

    Usage::

        pings = TurnPings(bot, locale_of=messages.table_locale)
        await pings.ping(session, ["123"], deadline)  # a real mention: it notifies
        pings.tidy(session)  # deletes it soon once the turn has passed
    """

    def __init__(self, host: Host, locale_of: Callable[[TableSession], object]) -> None:
        self.host = host
        self.locale_of = locale_of
        self._tidying: set[int] = set()  # tables whose old reminder is being deleted
        self._tasks: set[asyncio.Task[None]] = set()

    async def ping(self, session: TableSession, players: Sequence[str], deadline: float) -> None:
        """Ping the people whose turn it is, once, at half time."""
        if not players:
            return
        channel = self.host.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        text = t(
            "table.ping",
            self.locale_of(session),
            players=", ".join(f"<@{p}>" for p in players),
            deadline=int(deadline),
        )
        move = session.meta.turn.move if session.meta.turn is not None else -1
        try:
            message = await channel.send(
                text,
                allowed_mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(int(p)) for p in players]
                ),
            )
        except discord.HTTPException:
            log.warning("could not ping on table %s", session.id, exc_info=True)
            return

        def remember(draft: Draft) -> None:
            draft.meta.ping_message = [message.id, move]

        try:
            # Remembered, so that it is deleted when the turn passes, even after a restart.
            await session.change(remember, then=shown)
        except Exception:
            log.warning("could not remember the reminder of table %s", session.id)

    def tidy(self, session: TableSession) -> None:
        """Delete the half-time reminder soon, once the turn it was for has passed."""
        if not self._reminder_passed(session) or session.id in self._tidying:
            return
        self._tidying.add(session.id)
        task = asyncio.get_running_loop().create_task(self._tidy(session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    def _reminder_passed(session: TableSession) -> bool:
        reminder = session.meta.ping_message
        if not reminder:
            return False
        turn = session.meta.turn
        return turn is None or turn.move != reminder[1]

    async def _tidy(self, session: TableSession) -> None:
        try:
            await self.host.wait_until_ready()
            reminder = list(session.meta.ping_message)
            if not self._reminder_passed(session):
                return
            channel = self.host.get_partial_messageable(
                session.channel_id, guild_id=session.record.guild_id
            )
            try:
                await channel.get_partial_message(reminder[0]).delete()
            except discord.NotFound:
                pass  # already gone
            except discord.HTTPException:
                log.warning("could not delete the reminder of table %s", session.id)

            def forget(draft: Draft) -> None:
                if draft.meta.ping_message == reminder:
                    draft.meta.ping_message = []

            try:
                await session.change(forget, then=shown)
            except Exception:
                log.warning("could not forget the reminder of table %s", session.id)
        finally:
            self._tidying.discard(session.id)
