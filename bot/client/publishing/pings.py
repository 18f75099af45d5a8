"""Turn pings: a short message that mentions the people a turn waits for, deleted once the
turn has passed (even after a restart: the message is remembered with the table).

Edits never notify anyone, so the table's own "your turn" line does not reach a player
who is not looking; a new message does. What a server gets is its /cardtable pings
setting (bot.client.guild_settings.GuildTurnPings):

- ``every``: a ping when a turn starts, and a reminder at half time;
- ``half``: the reminder at half time only;
- ``off``: neither.

A turn-start ping skips whoever acted at this table in the last ``RECENTLY`` seconds
(they are looking at it), and computers and seats a computer plays are never pinged. A
table has at most one ping message at a time: a newer one deletes the one before it. All
of it goes through the outbound lane, under one key per table, so a newer turn replaces a
ping still waiting: pings at the priority of turn pings, deletions of passed ones as
cosmetic work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import discord

from bot.client.outbound.lane import Lane, Priority
from bot.client.publishing.host import Host, shown
from bot.i18n import t
from bot.table.session import Draft, TableSession

log = logging.getLogger(__name__)

# Seconds since a person's own last action at a table within which their next turn
# starts without a ping.
RECENTLY = 30.0
# What a remembered ping message is for (the third number of TableMeta.ping_message).
HALF_TIME = 0  # the reminder of one turn clock (Turn.move)
TURN_START = 1  # the ping of a turn (Turn.since)


class TurnPings:
    """Posts and tidies the turn pings of every table.

    Usage::

        pings = TurnPings(bot, lane, locale_of=messages.table_locale)
        pings.announce(session)  # after a change: pings a turn that just started, soon
        pings.ping(session, ["123"], deadline)  # at half time; a real mention: it notifies
        pings.tidy(session)  # deletes the ping soon once its turn has passed
    """

    def __init__(self, host: Host, lane: Lane, locale_of: Callable[[TableSession], object]) -> None:
        self.host = host
        self.lane = lane
        self.locale_of = locale_of
        # In memory only, by table: the turn (its ``since``) of a ping that was posted but
        # could not be remembered with the table, so that the turn is not pinged again...
        self._called: dict[int, int] = {}
        # ...and such a ping that could not be deleted at once either: [message, key, kind].
        self._loose: dict[int, list[int]] = {}

    def mode(self, session: TableSession) -> str:
        """The server's turn pings setting for this table ("off" at a turn-based table of
        a server that has its turns told by DM only)."""
        guild_id = session.record.guild_id
        if session.turn_based and self.host.pace_pings.mode_for(guild_id) != "both":
            return "off"
        return self.host.turn_pings.mode_for(guild_id)

    # -- at the start of a turn -----------------------------------------------------------

    def callees(self, session: TableSession) -> list[str]:
        """The people to ping for the turn in progress: those it waits for, less computers
        and seats a computer plays, less whoever acted here in the last RECENTLY seconds."""
        turn = session.meta.turn
        if turn is None or not session.is_open:
            return []
        now = session.clock()
        acted = session.meta.acted
        return [
            player
            for player in session.acting_players()
            if not session.plays_itself(player) and now - acted.get(player, -RECENTLY) >= RECENTLY
        ]

    def announce(self, session: TableSession) -> None:
        """After a change: if a turn started that nobody was pinged for, ping it soon."""
        turn = session.meta.turn
        if turn is None or turn.called or turn.pinged or self.mode(session) != "every":
            return  # no turn, or it was pinged (at its start or at half time)
        if self._called.get(session.id) == turn.since:
            return  # pinged, though the table could not remember it
        if not self.callees(session):
            return  # everyone awaited is at the table; a later change of this turn looks again
        since = turn.since
        self.lane.put(("ping", session.id), Priority.PING, lambda: self._announce(session, since))

    async def _announce(self, session: TableSession, since: int) -> None:
        def compose() -> tuple[list[str], str] | None:
            turn = session.meta.turn
            if (
                turn is None
                or turn.since != since
                or turn.called
                or turn.pinged
                or self._called.get(session.id) == since
                or self.mode(session) != "every"
            ):
                return None  # the turn passed (or was pinged) while the ping waited
            players = self.callees(session)
            if not players:
                return None
            locale = self.locale_of(session)
            text = t(
                "table.turn_ping",
                locale,
                players=", ".join(f"<@{p}>" for p in players),
                game=session.spec.renderer.title(locale),
                link=session.jump_url,
            )
            return players, text

        await self._post(session, compose, since, TURN_START)

    # -- at half time ---------------------------------------------------------------------

    def ping(self, session: TableSession, players: Sequence[str], deadline: float) -> None:
        """Remind the people whose turn it is, once, at half time (soon, through the lane)."""
        if not players or self.mode(session) == "off":
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
        def compose() -> tuple[list[str], str] | None:
            turn = session.meta.turn
            if turn is None or turn.move != move:
                return None  # the turn passed while the reminder waited: it would only confuse
            text = t(
                "table.ping",
                self.locale_of(session),
                players=", ".join(f"<@{p}>" for p in players),
                deadline=int(deadline),
            )
            return players, text

        await self._post(session, compose, move, HALF_TIME)

    # -- posting and tidying --------------------------------------------------------------

    async def _post(
        self,
        session: TableSession,
        compose: Callable[[], tuple[list[str], str] | None],
        key: int,
        kind: int,
    ) -> None:
        """Post a ping, after deleting the table's previous one (one at a time: none is
        sent while the previous one cannot be deleted), and remember it with the table.

        ``compose`` gives the people to mention and the text, or None once the ping is no
        longer due (its turn passed). It is asked again right before the message is sent,
        after every wait: whoever moved meanwhile is not notified for nothing. A ping that
        cannot be remembered is deleted at once (kept in memory, and deleted when its turn
        passes, if even that fails), and its turn counts as pinged in memory.
        """
        if compose() is None:
            return
        await self.host.wait_until_ready()
        channel = self.host.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        # The table's previous ping goes first: while it cannot be deleted, no new one is
        # sent beside it (it is tried again when its turn's tidying or the next change of
        # this turn comes, and the turn is pinged once it is gone).
        previous = list(session.meta.ping_message)
        if previous and not await self._delete(session, previous[0]):
            return
        loose = self._loose.get(session.id)
        if loose is not None:
            if not await self._delete(session, loose[0]):
                return
            self._forget_loose(session, loose)
        composed = compose()  # again: the turn may have passed during the waits above
        turn = session.meta.turn
        if composed is None or turn is None:
            return
        players, text = composed
        since = turn.since
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
        reminder = [message.id, key, kind]

        def remember(draft: Draft) -> None:
            draft.meta.ping_message = list(reminder)
            turn = draft.meta.turn
            # Either ping calls the turn: no turn-start ping follows a half-time reminder.
            if turn is not None and (turn.since if kind == TURN_START else turn.move) == key:
                turn.called = True

        try:
            # Remembered, so that it is deleted when the turn passes, even after a restart.
            await session.change(remember, then=shown)
        except Exception:
            log.warning(
                "could not remember the ping of table %s; deleting it", session.id, exc_info=True
            )
            # The people were notified: this turn is not pinged again at its next change.
            self._called[session.id] = since
            if not await self._delete(session, message.id):
                # Still posted and known nowhere else: deleted when its turn passes.
                self._loose[session.id] = reminder

    def tidy(self, session: TableSession) -> None:
        """Delete the table's ping soon, once the turn it was for has passed."""
        turn = session.meta.turn
        if session.id in self._called and (turn is None or turn.since != self._called[session.id]):
            del self._called[session.id]  # that turn is over
        loose = self._loose.get(session.id)
        if loose is not None and passed(session, loose):
            self.lane.put(
                ("unping", loose[0]), Priority.COSMETIC, lambda: self._tidy_loose(session, loose)
            )
        reminder = list(session.meta.ping_message)
        if not passed(session, reminder):
            return
        self.lane.put(
            ("unping", reminder[0]), Priority.COSMETIC, lambda: self._tidy(session, reminder)
        )

    async def _tidy_loose(self, session: TableSession, loose: list[int]) -> None:
        if self._loose.get(session.id) != loose:
            return  # deleted before the next ping
        await self.host.wait_until_ready()
        if await self._delete(session, loose[0]):
            self._forget_loose(session, loose)

    def _forget_loose(self, session: TableSession, loose: list[int]) -> None:
        if self._loose.get(session.id) == loose:
            del self._loose[session.id]

    async def _tidy(self, session: TableSession, reminder: list[int]) -> None:
        if session.meta.ping_message != reminder:
            return  # a newer ping deleted it before it was posted
        await self.host.wait_until_ready()
        if not await self._delete(session, reminder[0]):
            # Still up: kept on record, so that the next tidying (after any change) tries
            # again and no new ping is sent beside it meanwhile.
            return

        def forget(draft: Draft) -> None:
            if draft.meta.ping_message == reminder:
                draft.meta.ping_message = []

        try:
            await session.change(forget, then=shown)
        except Exception:
            log.warning("could not forget the ping of table %s", session.id)

    async def _delete(self, session: TableSession, message_id: int) -> bool:
        """Delete a ping message: whether it is gone (a failure is logged)."""
        channel = self.host.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        try:
            await channel.get_partial_message(message_id).delete()
        except discord.NotFound:
            pass  # already gone
        except discord.HTTPException:
            log.warning("could not delete the ping of table %s", session.id, exc_info=True)
            return False
        return True


def passed(session: TableSession, reminder: Sequence[int]) -> bool:
    """Whether a remembered ping's turn has passed (so it should go)."""
    if not reminder:
        return False
    turn = session.meta.turn
    if turn is None or not session.is_open:
        return True
    kind = reminder[2] if len(reminder) > 2 else HALF_TIME
    current = turn.since if kind == TURN_START else turn.move
    return current != reminder[1]
