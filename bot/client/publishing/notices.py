"""Turn notices: at a turn-based table, the "your turn" DM of each person it waits for.

Edits never notify, so each turn's notice is a new DM, which does. It says which game,
which server and channel (with a link to the table) and the deadline, and carries the
move's own buttons (the game renderer's ``turn_panel``): their custom ids are the
channel's, checked the same way (table, game, move, acting user) and played through the
same change path, so they work after a restart too.

- **One live notice per player and table.** It is remembered with the table
  (``TableMeta.turn_notices``: DM channel, message, the turn it is for). Once its turn has
  passed, for whatever reason, it is edited to say so ("done", or that the computer
  played at the deadline) and loses its buttons, before a later notice of that table;
  the table then remembers it closed (message id 0), so it is never edited again, after
  a restart too.
- **At most one notice per player and table every ``NOTICE_GAP`` seconds** (5 minutes),
  by the tables' clock, with when it went out kept with the table
  (``TableMeta.notice_sent``). A turn that starts sooner after the last notice waits for
  the gap; if the player has moved meanwhile (they were at the table), no notice goes
  out at all.
- **Owed notices survive a restart.** A turn whose notice is neither out nor settled
  keeps the table due at the time the notice may go (``bot.table.timers.due_time``): the
  scheduler loads the table then, and loading a table queues what it owes. A turn whose
  notice is decided not to go (daily summary or none, or Discord refused it for good)
  records that decision, so it never keeps the table due; one that met a passing fault
  is tried again after ``RETRY_DELAYS`` (5, 15, 60 s), then every ``NOTICE_RETRY``.
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
from bot.render.notices import notice_over, turn_notice, turns_list
from bot.table.meta import Notice
from bot.table.session import Draft, TableSession
from bot.table.spec import is_computer_id
from bot.table.timers import NOTICE_GAP, RECENTLY, notice_time, owed_notices

log = logging.getLogger(__name__)

# A daily summary goes out at most this often per person (seconds, the tables' clock).
SUMMARY_EVERY = 24 * 3600
# A notice that timed out or met a server error is tried again after these delays (the
# table's next change may be a day away at a turn-based pace), then every NOTICE_RETRY
# seconds while it is still owed (the table stays due for it meanwhile).
RETRY_DELAYS = (5.0, 15.0, 60.0)
NOTICE_RETRY = RETRY_DELAYS[-1]

__all__ = ["NOTICE_GAP", "NOTICE_RETRY", "RECENTLY", "RETRY_DELAYS", "SUMMARY_EVERY", "TurnNotices"]


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
        # (table, player) -> their last notice there already told its turn is over (until
        # the table remembers it closed: TableMeta.turn_notices).
        self._over: dict[tuple[int, str], int] = {}
        # Person -> when (the tables' clock) their last daily summary went out, as read
        # from or written to their user_settings row.
        self._summary_at: dict[str, float | None] = {}

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
            if channel_id:
                # A DM channel never changes: after a restart (or once forgotten) the next
                # notice costs one request, not two, and takes no turn at the opening
                # route's own limit (10 a second), which at a wave of turns made notices late.
                self.dms.learn_channel(int(player), channel_id)
            if not message_id:
                continue  # closed already, or none was sent
            passed = turn is None or since != turn.since or player not in awaited
            if passed and self._over.get((session.id, player)) != message_id:
                # Last of all: an edit notifies nobody. A later notice of the same table
                # to the same player closes it first, if it still waits (_send).
                self.lane.put(
                    ("notice-over", session.id, message_id),
                    Priority.COSMETIC,
                    partial(self._close, session.id, session, player, channel_id, message_id),
                )
        if turn is None or not session.is_open:
            self.forget(session)
            return
        # Every notice owed (this turn's is neither out nor settled): queued to go when
        # it may, or (daily summary, none) to record that none goes. Someone on daily
        # summaries whose turn it still is gets theirs planned (again, after a restart).
        owed = owed_notices(session)
        for player in awaited:
            mode = self.host.notify.value_for(int(player))  # "every" until read
            if player not in owed:
                if mode == "daily":
                    self.summary_soon(player)
            elif mode == "every":
                self._queue(session, player, turn.since)
            else:
                self._queue(session, player, turn.since, settle=True)

    def _wait(self, session: TableSession, player: str) -> float:
        """How long a player's next notice at this table must still wait: someone at the
        table now is told only if they are still awaited once they have had RECENTLY
        seconds to move, and nobody more often than every NOTICE_GAP (both kept with the
        table, on the tables' clock)."""
        wait = notice_time(session.meta, player) - session.clock()
        # A hundredth of a second is no wait: the clocks need not agree to the last bit.
        return wait if wait > 0.01 else 0.0

    def _queue(
        self,
        session: TableSession,
        player: str,
        since: int,
        *,
        settle: bool = False,
        attempt: int = 0,
        open_first: bool = True,
    ) -> None:
        """Queue a player's notice for the turn that began at ``since``, when it may go
        (``settle``: at once, to read their choice and record that none goes;
        ``attempt``: failed tries so far, each waiting its RETRY_DELAYS). A person's DM
        channel not known yet is opened first, by the DMs' one-at-a-time opening job."""
        if settle:
            cost, delay = 0, 0.0  # a save, no request (unless they chose "every" since)
        else:
            if open_first and not self.dms.knows_channel(int(player)):
                again = partial(
                    self._queue, session, player, since, attempt=attempt, open_first=False
                )
                self.dms.open_then(int(player), Priority.PING, again)
                return
            delay = self._wait(session, player)
            if attempt:
                delay = max(delay, RETRY_DELAYS[min(attempt, len(RETRY_DELAYS)) - 1])
            # The DM channel is opened first the first time, and the previous notice
            # closed first if its closing still waits (the remembering save is no request).
            cost = (
                1 + (not self.dms.knows_channel(int(player))) + self._closing_waits(session, player)
            )
        self.lane.put(
            ("notice", session.id, player),
            Priority.PING,
            # By id: the table may leave memory (and come back) before this goes out.
            partial(self._send_to, session.id, player, since, attempt),
            cost=cost,
            delay=delay,
        )

    def _closing_waits(self, session: TableSession, player: str) -> bool:
        """Whether the player's previous notice at this table still waits to be closed."""
        notice = session.meta.turn_notices.get(player)
        return (
            notice is not None
            and bool(notice[1])
            and self.lane.busy(("notice-over", session.id, notice[1]))
        )

    async def waiting(
        self, player: str, locale: object, seated: list[TableSession] | None = None
    ) -> list[tuple[str, str | None, int, float, str]]:
        """Every turn-based table waiting for a person, soonest deadline first, as
        `turns_list` shows them: (game, server, channel id, deadline, link). Read from
        the database (``seated``, if already read): most such tables are not in memory."""
        if seated is None:
            seated = await self.host.tables.seated(int(player))
        found: list[tuple[float, int, TableSession]] = []
        for session in seated:
            turn = session.meta.turn
            if (
                session.turn_based
                and session.status == "running"
                and turn is not None
                and player in session.acting_players()
                and not session.plays_itself(player)
            ):
                found.append((turn.deadline, session.id, session))
        found.sort(key=lambda entry: entry[:2])
        return [
            (
                session.spec.renderer.title(locale),
                self.server_name(session),
                session.channel_id,
                deadline,
                session.jump_url,
            )
            for deadline, _, session in found
        ]

    def answered(self, session: TableSession, player: str, message_id: int) -> None:
        """A notice's own button played the move: its click already said it is done (the
        table remembers that soon, so no restart edits it again)."""
        self._over[(session.id, player)] = message_id
        if session.is_open:
            self.lane.put(
                ("notice-closed", session.id, player),
                Priority.DM,
                partial(self._remember_closed, session.id, player, message_id),
                cost=0,  # a save, no request
            )

    def forget(self, session: TableSession) -> None:
        """A table closed: its memory of notices is dropped (not the notices' closing)."""
        for key in [key for key in self._over if key[0] == session.id]:
            del self._over[key]

    async def _remember_closed(self, table_id: int, player: str, message_id: int) -> None:
        """Note with an open table that a player's notice there is closed (message id 0),
        so that it is not edited again, by this process or after a restart."""
        session = await self._table(table_id)
        if session is None:
            return  # closed meanwhile: nothing edits its notices again
        notice = session.meta.turn_notices.get(player)
        if notice is None or notice[1] != message_id:
            return  # already noted, or a newer notice replaced it

        def closed(draft: Draft) -> None:
            noted = draft.meta.turn_notices.get(player)
            if noted is not None and noted[1] == message_id:
                noted[1] = 0

        try:
            await session.change(closed, then=shown)
        except Exception:
            # Kept in this process's memory: only a restart before the table's next change
            # may edit it once more.
            log.warning("could not note %s's closed notice at table %s", player, table_id)

    def server_name(self, session: TableSession) -> str | None:
        """The name of the table's server, if the bot sees it."""
        guild_id = session.record.guild_id
        guild = None if guild_id is None else self.host.get_guild(guild_id)
        return None if guild is None else guild.name

    async def _table(self, table_id: int) -> TableSession | None:
        """The open table a queued notice is for, as it is now: the session in memory,
        else loaded from its row (under its channel's lock, as a click loads it)."""
        return await self.host.tables.load(table_id)

    async def _send_to(self, table_id: int, player: str, since: int, attempt: int = 0) -> None:
        """Send a queued notice, to the table as it is now (None: closed meanwhile)."""
        session = await self._table(table_id)
        if session is not None:
            await self._send(session, player, since, attempt)

    async def _send(self, session: TableSession, player: str, since: int, attempt: int = 0) -> None:
        """Send a player's notice for the turn that began at ``since``, if still due
        (``attempt``: failed tries so far)."""
        turn = session.meta.turn
        if turn is None or turn.since != since or player not in self.awaited(session):
            return  # the turn passed while the notice waited
        notice = session.meta.turn_notices.get(player)
        if notice is not None and notice[2] == since:
            return
        try:
            mode = await self.host.notify.mode_of(int(player))
        except Exception:
            log.warning("could not read %s's turn notices setting", player, exc_info=True)
            mode = "every"  # the default: a notice too many beats a turn missed
        if mode != "every":
            if mode == "daily":
                self.summary_soon(player)
            await self._settled(session, player, since)
            return
        if self._wait(session, player) > 0:
            # Queued sooner than its rules allow (the lane keeps the sooner of two puts
            # of a key): wait for them.
            self._queue(session, player, since, attempt=attempt)
            return
        await self.host.wait_until_ready()
        if notice is not None and self._closing_waits(session, player):
            # The previous notice's closing still waits at the lowest priority: it goes
            # now, so that the player never has two live notices of one table.
            await self._close(session.id, session, player, notice[0], notice[1])
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
        except (TimeoutError, discord.HTTPException) as error:
            if isinstance(error, discord.HTTPException) and error.status < 500:
                # Refused for good (not a rate limit: discord.py waits those out): this
                # turn gets no notice, so it does not keep the table due; the next turn
                # tries again.
                log.warning(
                    "turn notice to %s for table %s refused", player, session.id, exc_info=True
                )
                await self._settled(session, player, since)
                return
            # Not sent (a timeout, a server error): still owed (the table stays due for
            # it), tried again later.
            log.warning(
                "turn notice to %s for table %s failed; trying again",
                player,
                session.id,
                exc_info=True,
            )
            self._queue(session, player, since, attempt=attempt + 1)
            return
        sent = session.clock()

        def remember(draft: Draft) -> None:
            draft.meta.turn_notices[player] = [channel.id, message.id, since]
            draft.meta.notice_sent[player] = sent

        try:
            await session.change(remember, then=shown)
        except Exception:
            # Not remembered: the notice is left as it is (its buttons answer "this turn
            # is over" once it passes), and no other is sent for this turn meanwhile.
            log.warning("could not remember %s's turn notice at table %s", player, session.id)

    async def _settled(self, session: TableSession, player: str, since: int) -> None:
        """Record with the table that no notice goes for this turn (the player chose a
        daily summary or none, or Discord refused it), so the turn does not keep the table
        due for one. (An earlier notice still open is closed by the edit already queued.)"""

        def settled(draft: Draft) -> None:
            turn = draft.meta.turn
            if turn is not None and turn.since == since:  # else the turn passed meanwhile
                draft.meta.turn_notices[player] = [0, 0, since]

        try:
            await session.change(settled, then=shown)
        except Exception:
            log.warning("could not note at table %s that %s gets no notice", session.id, player)

    async def plan_summaries(self) -> int:
        """At start-up: plan every daily summary again, a day after the last one went out
        (now if none did, or if it is overdue), so that it comes even if none of the
        person's tables changes meanwhile; how many were planned. Run by the process of
        shard 0 (the DMs' shard), so that several processes send each summary once."""
        planned = 0
        for user_id, last in await self.host.tables.storage.daily_summaries():
            player = str(user_id)
            self._summary_at[player] = last
            self.summary_soon(player)
            planned += 1
        return planned

    def summary_soon(self, player: str) -> None:
        """Queue a person's daily summary: now if they had none yet (as far as this
        process knows: the summary reads the stored time before it goes), else a day after
        their last one (a pending one is not moved)."""
        last = self._summary_at.get(player)
        delay = 0.0
        if last is not None:
            delay = max(last + SUMMARY_EVERY - self.host.tables.clock(), 0.0)
        self.lane.put(
            ("notice-summary", player), Priority.DM, partial(self._summary, player), delay=delay
        )

    async def _summary(self, player: str) -> None:
        """Send a person the list of every table waiting for them (if any still does, and
        they still want it), and plan the next one a day later."""
        try:
            if await self.host.notify.mode_of(int(player)) != "daily":
                return
        except Exception:
            log.warning("could not read %s's turn notices setting", player, exc_info=True)
            return
        try:
            last = await self._last_summary(player)
        except Exception:
            log.warning("could not read when %s's last daily summary went", player, exc_info=True)
            return  # the next turn waiting for them queues it again
        now = self.host.tables.clock()
        if last is not None and now < last + SUMMARY_EVERY:
            self.summary_soon(player)  # too early (an older put, a restart): wait for the day
            return
        seated = await self.host.tables.seated(int(player))
        sessions = [s for s in seated if player in s.meta.user_locales]
        locale = sessions[0].user_locale(player) if sessions else None
        entries = await self.waiting(player, locale, seated)
        if not entries:
            return  # nothing waits: the next turn that does queues the next summary
        await self.host.wait_until_ready()
        fields = turns_list(entries, locale, title="notify.summary")
        try:
            async with asyncio.timeout(DM_EDIT_TIMEOUT):
                channel = await self.dms.dm_channel(int(player))
                await channel.send(**fields)
        except (discord.Forbidden, discord.NotFound):
            log.info("the daily summary of %s cannot be sent: DMs closed", player)
            return
        except (TimeoutError, discord.HTTPException):
            log.warning("the daily summary of %s failed", player, exc_info=True)
            return
        self._summary_at.pop(player, None)
        self._summary_at[player] = now
        try:
            await self.host.tables.storage.set_user_summary_at(int(player), now)
        except Exception:
            # Kept in this process's memory: only a restart may send the next one early.
            log.warning("could not store when %s's daily summary went", player, exc_info=True)
        self.summary_soon(player)

    async def _last_summary(self, player: str) -> float | None:
        """When a person's last daily summary went out (None: never), read from their
        user_settings row each time one is about to go (at most daily): with several
        processes another one may have sent it since this one last looked."""
        storage = self.host.tables.storage
        self._summary_at[player] = await storage.get_user_summary_at(int(player))
        return self._summary_at[player]

    async def _close(
        self,
        table_id: int,
        closing: TableSession,
        player: str,
        channel_id: int,
        message_id: int,
    ) -> None:
        """Edit a notice whose turn has passed to say so, without its buttons: from the
        table in memory now (it may have left memory and come back), else as it was when
        the turn passed (``closing``; a closed or unloaded table needs no loading for it)."""
        if self._over.get((table_id, player)) == message_id:
            return
        session = self.host.tables.get(table_id) or closing
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
        if session.is_open:  # a closed table's memory is already dropped
            self._over[(session.id, player)] = message_id
            await self._remember_closed(table_id, player, message_id)

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
