"""Players' DMs: the letters a change causes, and the living DM edited in place.

A game whose renderer keeps a living DM (No Thanks!: your chips and cards) shows each
player one DM per game, edited after every change; other letters go out as new DMs.

Everything goes through the outbound lane (bot.client.outbound.lane) under one key per
table and player, so a player's DM requests never overtake each other. Letters are
queued in the order of the changes (the table core hands them over under the table's
lock), and a DM that begins something (the start of a game) is written as the change
left it and sent before any later edit; a living edit shows the state as it is when it
goes out, so edits queued during a backlog collapse into one (latest state wins). A
finished game's DM goes ahead of the running games' (its final chips are the last word).

Opening a player's DM channel (the first DM since the bot started) is a lane job of its
own, one at a time (the group ``DM_OPEN``). The route has a bucket of its own that
discord.py learns from the answers, and with many opens in flight at once (a wave of
games starting) answers came back out of order and it overshot: 15-24 429s a minute in
the rate-limit benchmark. The player's DM follows once the channel is known. At the send
gate an opening goes before the queued requests (``SendGate.take(urgent=True)``), else
one at a time behind a queue of edits made a wave of new players wait minutes.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import discord
from discord.http import Route

from bot.client.outbound.lane import Lane, Priority
from bot.client.publishing.host import Host, shown
from bot.i18n import t
from bot.table.session import Draft, TableSession
from bot.table.spec import Letter, is_computer_id

log = logging.getLogger(__name__)

# Players whose DM channel id is remembered (a DM channel's id never changes). discord.py
# keeps only 128 DM channels; past that every new game's first DM asked Discord again.
DM_CHANNELS_KEPT = 10_000
# A DM request still unanswered (rate limits waited out included) after this long has
# failed; the DM is tried again after RETRY_AFTER, with the state it has by then.
DM_EDIT_TIMEOUT = 30.0
RETRY_AFTER = 5.0
# The lane's group of DM channel openings, and how many may be in flight at once.
DM_OPEN = "dm-open"
DM_OPENS_IN_FLIGHT = 1
# Discord lets a channel take 5 edits (or 5 sends) per 5 s. A running game's DM to a
# player waits this long after that player's last DM request, so its edits spend at most
# four of the five: the DM that ends a game is never held by a spent bucket (discord.py
# would hold it until the bucket resets, up to 5 s), and no DM edit meets a 429.
DM_GAP = 1.25


@dataclass(slots=True)
class _Outbox:
    """What one player's DM at one table still has to show."""

    session: TableSession
    # New DMs in order: (text as its change left it, whether it begins the living DM).
    fresh: collections.deque[tuple[str, bool]] = field(default_factory=collections.deque)
    # The latest change of the living DM not shown yet (rendered when it goes out).
    update: Letter | None = None


class PlayerDms:
    """Sends and edits players' DMs for the tables, through the outbound lane.

    Usage::

        dms = PlayerDms(bot, lane)
        dms.deliver(session, draft.letters)  # queued; never to computers or closed DMs
    """

    def __init__(self, host: Host, lane: Lane) -> None:
        self.host = host
        self.lane = lane
        self._outboxes: dict[tuple[int, str], _Outbox] = {}
        self._dm_channels: dict[int, int] = {}  # user id -> DM channel id, oldest first
        # User id -> when (the loop's clock) their last DM request went, oldest first.
        self._last_request: dict[int, float] = {}
        # Players' DMs waiting for their channel to be opened, by user id (in order).
        self._awaiting_channel: dict[int, dict[tuple[int, str], None]] = {}
        lane.limit_group(DM_OPEN, DM_OPENS_IN_FLIGHT)
        # Openings for the other DMs of the tables (turn notices, summaries), one at a
        # time as the DM_OPEN group's: a wave of notices to new players opened dozens at
        # once, overshot the route's limit (429s) and timed out behind it.
        self._opening = asyncio.Lock()
        # What else waits for a user's DM channel to be opened (open_then), in order.
        self._then_opened: dict[int, list[Callable[[], None]]] = {}

    def deliver(self, session: TableSession, letters: Sequence[Letter]) -> None:
        """Queue the DMs a change caused (never to computers or to closed DMs)."""
        renderer = session.spec.renderer
        starts = getattr(renderer, "living_dm_starts", None)
        for letter in letters:
            player = letter.player
            if is_computer_id(player) or player in session.meta.dm_closed:
                continue
            key = (session.id, player)
            outbox = self._outboxes.get(key)
            if outbox is None:
                outbox = self._outboxes[key] = _Outbox(session)
            living = self._living_text(session, letter)
            if living is None:
                text = t(
                    letter.key, session.user_locale(player), link=session.jump_url, **letter.params
                )
                outbox.fresh.append((text, False))
            elif starts is not None and starts(letter):
                # Written now, as this change left it: later changes edit it afterwards.
                outbox.fresh.append((living, True))
                outbox.update = None
            else:
                outbox.update = letter
            self._queue(key)

    def _queue(self, key: tuple[int, str], *, delay: float = 0.0, open_first: bool = True) -> None:
        user_id = int(key[1])
        if user_id in self._dm_channels:
            cost = 1
        elif open_first:
            # The channel is opened first, by a job of the DM_OPEN group; it queues this.
            # (Put again on every change, as the DM itself would be: one job per player.)
            self._awaiting_channel.setdefault(user_id, {})[key] = None
            self.lane.put(
                (DM_OPEN, user_id),
                self._priority(key),
                lambda: self._open_channel(user_id),
                delay=delay,
                group=DM_OPEN,
            )
            return
        else:
            cost = 2  # the opening failed: the DM opens it again itself (and handles why)
        priority = self._priority(key)
        if priority >= Priority.DM:
            last = self._last_request.get(user_id)
            if last is not None:
                delay = max(delay, last + DM_GAP - asyncio.get_running_loop().time())
        self.lane.put(("dm", *key), priority, lambda: self._send_next(key), cost=cost, delay=delay)

    def _requested(self, user_id: int) -> None:
        """Note that a DM request to this user went now (for DM_GAP)."""
        self._last_request.pop(user_id, None)
        self._last_request[user_id] = asyncio.get_running_loop().time()
        if len(self._last_request) > DM_CHANNELS_KEPT:
            del self._last_request[next(iter(self._last_request))]

    def _priority(self, key: tuple[int, str]) -> Priority:
        """A living DM's priority; a game's last DM goes ahead of the running games' DMs.

        Under overload living DMs refresh less often, but a finished game's DM is the last
        word on it (the player's final chips), and nothing later replaces it: it goes out
        at the turn pings' priority, one request per player and game. A running
        turn-based game's DMs go last: its people are away for hours (their notice shows
        their chips), while live tables' players watch theirs change by the second.
        """
        outbox = self._outboxes.get(key)
        if outbox is not None and outbox.session.status != "running":
            return Priority.PING
        if outbox is not None and outbox.session.turn_based:
            return Priority.COSMETIC
        return Priority.DM

    async def _open_channel(self, user_id: int) -> None:
        """Open a player's DM channel, then queue the DMs that wait for it."""
        try:
            if user_id not in self._dm_channels:
                await self.host.wait_until_ready()
                async with asyncio.timeout(DM_EDIT_TIMEOUT), self._opening:
                    await self._dm_channel(user_id)
        except asyncio.CancelledError:
            self._awaiting_channel.pop(user_id, None)  # the lane is closing
            raise
        except Exception as exc:
            # Not opened: each waiting DM tries once more itself, and answers the
            # failure as it always did (a closed DM noted, a timeout retried).
            log.debug("could not open the DM channel of %s: %r", user_id, exc)
        for key in self._awaiting_channel.pop(user_id, {}):
            self._queue(key, open_first=False)
        for then in self._then_opened.pop(user_id, []):
            then()

    def open_then(self, user_id: int, priority: Priority, then: Callable[[], None]) -> None:
        """Call ``then`` once the user's DM channel is known: now if it is, else after a
        job of the DM_OPEN group opened it (or failed to: ``then`` handles that itself), so
        that a wave of DMs to new people opens their channels one at a time, holding one
        of the lane's slots, not one each."""
        if user_id in self._dm_channels:
            then()
            return
        self._then_opened.setdefault(user_id, []).append(then)
        self.lane.put(
            (DM_OPEN, user_id), priority, lambda: self._open_channel(user_id), group=DM_OPEN
        )

    @property
    def waiting(self) -> int:
        """How many players' DMs have something not shown yet."""
        return len(self._outboxes)

    def _living_text(self, session: TableSession, letter: Letter) -> str | None:
        """The living DM's text after this letter's change, for games that keep one."""
        living = getattr(session.spec.renderer, "living_dm", None)
        if living is None or session.engine is None:
            return None
        player = letter.player
        if player not in session.engine.players:
            return None
        view = session.engine.view(player)  # the latest state: the DM shows it as it is now
        text: str = living(view, letter, session.jump_url, session.user_locale(player))
        return text

    async def _send_next(self, key: tuple[int, str]) -> None:
        """Send one request of a player's DM: the oldest new DM, else the living edit."""
        outbox = self._outboxes.get(key)
        if outbox is None:
            return
        session, player = outbox.session, key[1]
        if player in session.meta.dm_closed:
            del self._outboxes[key]
            return
        await self.host.wait_until_ready()
        self._requested(int(player))
        retry = False
        if outbox.fresh:
            fresh, begins_living = outbox.fresh[0]
            retry = not await self._send_new(session, player, fresh, begins_living)
            if not retry:
                outbox.fresh.popleft()
        elif outbox.update is not None:
            letter, outbox.update = outbox.update, None
            living = self._living_text(session, letter)
            if living is not None:
                retry = not await self._show_living(session, player, living)
                if retry and outbox.update is None:
                    outbox.update = letter
        if player in session.meta.dm_closed or not (outbox.fresh or outbox.update):
            del self._outboxes[key]
            return
        self._queue(key, delay=RETRY_AFTER if retry else 0.0)

    async def _send_new(
        self, session: TableSession, player: str, text: str, begins_living: bool
    ) -> bool:
        """Send a new DM; False if it should be tried again later."""
        try:
            async with asyncio.timeout(DM_EDIT_TIMEOUT):
                channel = await self._dm_channel(int(player))
                message = await channel.send(text)
        except (discord.Forbidden, discord.NotFound):
            self._dm_channels.pop(int(player), None)
            await self.host.tables.note_dm_closed(session, player)
            return True
        except TimeoutError:
            log.warning("a DM to %s for table %s timed out; trying again", player, session.id)
            return False
        except discord.HTTPException:
            log.warning("DM to %s failed for table %s", player, session.id, exc_info=True)
            return True  # as before: a refused DM is not sent again
        if begins_living:
            await self._remember_living(session, player, channel.id, message.id)
        return True

    async def _show_living(self, session: TableSession, player: str, text: str) -> bool:
        """Edit the living DM in place (or send it anew); False to try again later."""
        ids = session.meta.dm_messages.get(player)
        if not ids:
            return await self._send_new(session, player, text, True)
        channel_id, message_id = ids
        try:
            async with asyncio.timeout(DM_EDIT_TIMEOUT):
                await self._patch_message(channel_id, message_id, text)
        except TimeoutError:
            log.warning("editing %s's DM for table %s timed out; trying again", player, session.id)
            return False
        except discord.NotFound:
            # Deleted by the player: send a new one.
            return await self._send_new(session, player, text, True)
        except discord.Forbidden:
            await self.host.tables.note_dm_closed(session, player)
        except discord.DiscordServerError:
            log.warning("could not edit %s's DM for table %s; trying again", player, session.id)
            return False
        except discord.HTTPException:
            log.warning("could not edit %s's DM for table %s", player, session.id, exc_info=True)
        return True

    async def _dm_channel(self, user_id: int) -> discord.PartialMessageable:
        """The user's DM channel: remembered, else opened (once) through Discord."""
        channel_id = self._dm_channels.pop(user_id, None)
        if channel_id is None:
            # Needs no members intent (no GET /users), unlike fetching the user.
            opened = await self.host.create_dm(discord.Object(id=user_id))
            channel_id = opened.id
        self._dm_channels[user_id] = channel_id  # now the most recently used
        if len(self._dm_channels) > DM_CHANNELS_KEPT:
            del self._dm_channels[next(iter(self._dm_channels))]
        return self.host.get_partial_messageable(channel_id, type=discord.ChannelType.private)

    def learn_channel(self, user_id: int, channel_id: int) -> None:
        """Remember a user's DM channel read from a table (a DM sent there before, by this
        process or an earlier one): their next DM needs no opening request first."""
        if user_id not in self._dm_channels:
            self._dm_channels[user_id] = channel_id
            if len(self._dm_channels) > DM_CHANNELS_KEPT:
                del self._dm_channels[next(iter(self._dm_channels))]

    def knows_channel(self, user_id: int) -> bool:
        """Whether the user's DM channel is known (a DM to them is one request, not two)."""
        return user_id in self._dm_channels

    async def dm_channel(self, user_id: int) -> discord.PartialMessageable:
        """The user's DM channel (remembered, else opened, one opening at a time), for
        other DMs of the tables."""
        if user_id in self._dm_channels:
            return await self._dm_channel(user_id)
        async with self._opening:
            return await self._dm_channel(user_id)  # opened meanwhile: no request

    async def _patch_message(self, channel_id: int, message_id: int, text: str) -> None:
        """Edit a DM's text with discord.py's HTTP client: the request PartialMessage.edit
        makes, without building a Message from the answer that nobody reads."""
        payload: dict[str, Any] = {"content": text, "tts": False}
        mentions = self.host.allowed_mentions  # none: a living DM pings nobody
        if mentions is not None:
            payload["allowed_mentions"] = mentions.to_dict()
        route = Route(
            "PATCH",
            "/channels/{channel_id}/messages/{message_id}",
            channel_id=channel_id,
            message_id=message_id,
        )
        await self.host.http.request(route, json=payload)

    async def _remember_living(
        self, session: TableSession, player: str, channel_id: int, message_id: int
    ) -> None:
        def remember(draft: Draft) -> None:
            draft.meta.dm_messages[player] = [channel_id, message_id]

        try:
            await session.change(remember, then=shown)
        except Exception:
            # Not remembered: the next change sends a new DM instead of editing this one.
            log.warning("could not remember %s's DM for table %s", player, session.id)
