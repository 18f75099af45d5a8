"""Turn notices: at a turn-based table, the "your turn" DM of each person it waits for.

Edits never notify, so each turn's notice is a new DM, which does. It says which game,
which server and channel (with a link to the table) and the deadline, and carries the
move's own buttons (the game renderer's ``turn_panel``): their custom ids are the
channel's, checked the same way (table, game, move, acting user) and played through the
same change path, so they work after a restart too.

- **One live notice per player and table.** It is remembered with the table
  (``TableMeta.turn_notices``: DM channel, message, the turn it is for). Once its turn has
  passed, for whatever reason, it is edited to say so ("done", or that the computer
  played at the deadline) and loses its buttons, before a later notice of that table.
- **At most one notice per player and table every ``NOTICE_GAP`` seconds** (5 minutes).
  A turn that starts sooner after the last notice waits for the gap; if the player has
  moved meanwhile (they were at the table), no notice goes out at all.
- **Nobody is told what they are looking at.** A person who acted at this table in the
  last ``RECENTLY`` seconds (the turn pings' rule) is told only if the turn still waits
  for them ``RECENTLY`` seconds after they acted.
- **Closed DMs.** A player whose DMs refuse the notice is never sent another at this
  table; the table says so once, above the game, and they play from the channel.

Everything goes through the outbound lane under one key per table and player, so a newer
turn's notice replaces one still waiting (latest state wins); the texts are composed when
the request goes out, from the table as it is then.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial

import discord

from bot.client.outbound.lane import Lane, Priority
from bot.client.publishing.dms import DM_EDIT_TIMEOUT, PlayerDms
from bot.client.publishing.host import Host, shown
from bot.render.notices import notice_over, turn_notice
from bot.table.meta import Notice
from bot.table.session import Draft, TableSession
from bot.table.spec import is_computer_id

log = logging.getLogger(__name__)

# At most one "your turn" DM per player and table this often (seconds).
NOTICE_GAP = 5 * 60
# A person who acted at the table this recently is looking at it: no notice for now.
RECENTLY = 30.0


class TurnNotices:
    """Sends, and closes, the "your turn" DMs of turn-based tables.

    Usage::

        notices = TurnNotices(bot, lane, dms)
        notices.update(session)  # after every change: notices to send, notices now over
    """

    def __init__(self, host: Host, lane: Lane, dms: PlayerDms) -> None:
        self.host = host
        self.lane = lane
        self.dms = dms
        # (table, player) -> when (the loop's clock) their last notice there went out.
        self._sent_at: dict[tuple[int, str], float] = {}
        # Notice messages already told their turn is over: (table, message id).
        self._over: set[tuple[int, int]] = set()

    def awaited(self, session: TableSession) -> list[str]:
        """The people a turn-based table waits for who can get a notice."""
        if not session.turn_based or not session.is_open or session.meta.turn is None:
            return []
        closed = session.meta.dm_closed
        return [
            player
            for player in session.acting_players()
            if not is_computer_id(player)
            and not session.plays_itself(player)
            and player not in closed
        ]

    def update(self, session: TableSession) -> None:
        """After a change: close notices whose turn passed, queue those a turn needs."""
        if not session.turn_based:
            return
        turn = session.meta.turn
        awaited = self.awaited(session)
        for player, ids in session.meta.turn_notices.items():
            channel_id, message_id, since = ids
            passed = turn is None or since != turn.since or player not in awaited
            if passed and (session.id, message_id) not in self._over:
                self.lane.put(
                    ("notice-over", session.id, message_id),
                    Priority.DM,
                    partial(self._close, session, player, channel_id, message_id),
                )
        if turn is None or not session.is_open:
            self.forget(session)
            return
        loop_now = asyncio.get_running_loop().time()
        now = session.clock()
        for player in awaited:
            notice = session.meta.turn_notices.get(player)
            if notice is not None and notice[2] == turn.since:
                continue  # this turn's notice is out
            # Someone at the table now is told only if they are still awaited once they
            # have had RECENTLY seconds to move; nobody more often than every NOTICE_GAP.
            delay = max(session.meta.acted.get(player, -RECENTLY) + RECENTLY - now, 0.0)
            last = self._sent_at.get((session.id, player))
            if last is not None:
                delay = max(delay, last + NOTICE_GAP - loop_now)
            self.lane.put(
                ("notice", session.id, player),
                Priority.PING,
                partial(self._send, session, player, turn.since),
                delay=delay,
            )

    def answered(self, session: TableSession, message_id: int) -> None:
        """A notice's own button played the move: its click already said it is done."""
        self._over.add((session.id, message_id))

    def forget(self, session: TableSession) -> None:
        """A table closed: its memory of notices is dropped (not the notices' closing)."""
        for key in [key for key in self._sent_at if key[0] == session.id]:
            del self._sent_at[key]

    def server_name(self, session: TableSession) -> str | None:
        """The name of the table's server, if the bot sees it."""
        guild_id = session.record.guild_id
        guild = None if guild_id is None else self.host.get_guild(guild_id)
        return None if guild is None else guild.name

    async def _send(self, session: TableSession, player: str, since: int) -> None:
        """Send a player's notice for the turn that began at ``since``, if still due."""
        turn = session.meta.turn
        if turn is None or turn.since != since or player not in self.awaited(session):
            return  # the turn passed while the notice waited
        notice = session.meta.turn_notices.get(player)
        if notice is not None and notice[2] == since:
            return
        await self.host.wait_until_ready()
        locale = session.user_locale(player)
        fields = turn_notice(
            session.spec.renderer,
            session.facts(),
            session.player_view(player),
            server=self.server_name(session),
            channel_id=session.channel_id,
            link=session.jump_url,
            deadline=turn.deadline,
            locale=locale,
        )
        try:
            async with asyncio.timeout(DM_EDIT_TIMEOUT):
                channel = await self.dms.dm_channel(int(player))
                message = await channel.send(**fields)
        except (discord.Forbidden, discord.NotFound):
            await self._closed(session, player)
            return
        except (TimeoutError, discord.HTTPException):
            # Not sent: the next change of the table queues it again (after the gap).
            log.warning("turn notice to %s for table %s failed", player, session.id, exc_info=True)
            return
        self._sent_at.pop((session.id, player), None)
        self._sent_at[(session.id, player)] = asyncio.get_running_loop().time()

        def remember(draft: Draft) -> None:
            draft.meta.turn_notices[player] = [channel.id, message.id, since]

        try:
            await session.change(remember, then=shown)
        except Exception:
            # Not remembered: the notice is left as it is (its buttons answer "this turn
            # is over" once it passes), and no other is sent for this turn meanwhile.
            log.warning("could not remember %s's turn notice at table %s", player, session.id)

    async def _close(
        self, session: TableSession, player: str, channel_id: int, message_id: int
    ) -> None:
        """Edit a notice whose turn has passed to say so, without its buttons."""
        if (session.id, message_id) in self._over:
            return
        fields = notice_over(
            session.spec.renderer,
            timed_out=session.meta.timeouts.get(player, 0) > 0,
            server=self.server_name(session),
            link=session.jump_url,
            locale=session.user_locale(player),
        )
        channel = self.host.get_partial_messageable(channel_id, type=discord.ChannelType.private)
        try:
            async with asyncio.timeout(DM_EDIT_TIMEOUT):
                await channel.get_partial_message(message_id).edit(**fields)
        except (discord.NotFound, discord.Forbidden):
            pass  # deleted by the player, or DMs closed: nothing left to close
        except (TimeoutError, discord.HTTPException):
            log.warning(
                "could not close %s's turn notice at table %s", player, session.id, exc_info=True
            )
            return  # the next change of the table tries again
        self._over.add((session.id, message_id))

    async def _closed(self, session: TableSession, player: str) -> None:
        """A player's DMs refuse notices: never again at this table; the table says so."""

        def close(draft: Draft) -> None:
            if player not in draft.meta.dm_closed:
                draft.meta.dm_closed.append(player)
                draft.meta.hint_pending.append(player)
                draft.meta.notice = Notice("notice.dm_closed", player)

        if player in session.meta.dm_closed:
            return
        try:
            await session.change(close)
        except Exception:
            log.warning("could not note %s's closed DMs at table %s", player, session.id)
