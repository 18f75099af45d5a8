"""Half-time reminders: one message that pings the people whose turn it is, deleted once
the turn has passed (even after a restart: the message is remembered with the table).

Both go through the outbound lane: a reminder at the priority of turn pings, its deletion
as cosmetic work."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import discord

from bot.client.outbound.lane import Lane, Priority
from bot.client.publishing.host import Host, shown
from bot.i18n import t
from bot.table.session import Draft, TableSession

log = logging.getLogger(__name__)


class TurnPings:
    """Posts and tidies the half-time reminders.

    Usage::

        pings = TurnPings(bot, lane, locale_of=messages.table_locale)
        pings.ping(session, ["123"], deadline)  # soon; a real mention: it notifies
        pings.tidy(session)  # deletes it soon once the turn has passed
    """

    def __init__(self, host: Host, lane: Lane, locale_of: Callable[[TableSession], object]) -> None:
        self.host = host
        self.lane = lane
        self.locale_of = locale_of

    def ping(self, session: TableSession, players: Sequence[str], deadline: float) -> None:
        """Ping the people whose turn it is, once, at half time (soon, through the lane)."""
        if not players:
            return
        move = session.meta.turn.move if session.meta.turn is not None else -1
        self.lane.put(
            ("ping", session.id),
            Priority.PING,
            lambda: self._ping(session, list(players), deadline, move),
        )

    async def _ping(
        self, session: TableSession, players: list[str], deadline: float, move: int
    ) -> None:
        turn = session.meta.turn
        if turn is None or turn.move != move:
            return  # the turn passed while the reminder waited: it would only confuse
        await self.host.wait_until_ready()
        channel = self.host.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        text = t(
            "table.ping",
            self.locale_of(session),
            players=", ".join(f"<@{p}>" for p in players),
            deadline=int(deadline),
        )
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
        if not self._reminder_passed(session):
            return
        self.lane.put(("tidy", session.id), Priority.COSMETIC, lambda: self._tidy(session))

    @staticmethod
    def _reminder_passed(session: TableSession) -> bool:
        reminder = session.meta.ping_message
        if not reminder:
            return False
        turn = session.meta.turn
        return turn is None or turn.move != reminder[1]

    async def _tidy(self, session: TableSession) -> None:
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
            log.warning("could not delete the reminder of table %s", session.id, exc_info=True)

        def forget(draft: Draft) -> None:
            if draft.meta.ping_message == reminder:
                draft.meta.ping_message = []

        try:
            await session.change(forget, then=shown)
        except Exception:
            log.warning("could not forget the reminder of table %s", session.id)
