"""Players' DMs: the letters a change causes, and the living DM edited in place.

A game whose renderer keeps a living DM (No Thanks!: your chips and cards) shows each
player one DM per game, edited after every change; other letters go out as new DMs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import discord
import orjson
from discord.http import HTTPClient, Route

import bot.client.transport.rest as rest
from bot.client.publishing.host import Host, shown
from bot.i18n import t
from bot.table.session import Draft, TableSession
from bot.table.spec import Letter, is_computer_id

log = logging.getLogger(__name__)

# Players whose DM channel id is remembered (a DM channel's id never changes). discord.py
# keeps only 128 DM channels; past that every new game's first DM asked Discord again.
DM_CHANNELS_KEPT = 10_000
# A living DM edit still unanswered (rate limits waited out included) after this long has
# failed; the next move edits it again. discord.py's session would wait five minutes.
DM_EDIT_TIMEOUT = 30.0


class _HeldLock:
    """A lock and how many are holding or awaiting it, so an idle one can be dropped."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class PlayerDms:
    """Sends and edits players' DMs for the tables.

    Usage::

        dms = PlayerDms(bot)
        await dms.deliver(session, draft.letters)  # never to computers or closed DMs
    """

    def __init__(self, host: Host) -> None:
        self.host = host
        # One DM at a time per table and player: a refusal is seen before the next try.
        self._dm_locks: dict[tuple[int, str], _HeldLock] = {}
        self._dm_channels: dict[int, int] = {}  # user id -> DM channel id, oldest first
        self._limits = rest.RateLimits()  # of the DM edits made on bot.client.transport

    async def deliver(self, session: TableSession, letters: Sequence[Letter]) -> None:
        """Send the DMs a change caused (never to computers or to closed DMs)."""
        for letter in letters:
            player = letter.player
            if is_computer_id(player):
                continue
            key = (session.id, player)
            held = self._dm_locks.get(key)
            if held is None:
                held = self._dm_locks[key] = _HeldLock()
            held.users += 1
            try:
                async with held.lock:
                    # Checked under the lock: a start DM and a first move's DM racing to a
                    # player with closed DMs make one attempt, and the hint is owed once.
                    if player in session.meta.dm_closed:
                        continue
                    await self._send_dm(session, letter)
            finally:
                held.users -= 1
                if not held.users:
                    # Nobody waits: forget it, or every table ever played keeps one per player.
                    del self._dm_locks[key]

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

    async def _send_dm(self, session: TableSession, letter: Letter) -> None:
        player = letter.player
        living = self._living_text(session, letter)
        starts = getattr(session.spec.renderer, "living_dm_starts", None)
        fresh = starts is not None and starts(letter)
        if living is not None and not fresh and await self._edit_living(session, player, living):
            return
        text = living or t(
            letter.key, session.user_locale(player), link=session.jump_url, **letter.params
        )
        try:
            channel = await self._dm_channel(int(player))
            message = await channel.send(text)
        except (discord.Forbidden, discord.NotFound):
            self._dm_channels.pop(int(player), None)
            await self.host.tables.note_dm_closed(session, player)
            return
        except discord.HTTPException:
            log.warning("DM to %s failed for table %s", player, session.id, exc_info=True)
            return
        if living is not None:
            await self._remember_living(session, player, channel.id, message.id)

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

    async def _edit_living(self, session: TableSession, player: str, text: str) -> bool:
        """Edit the player's living DM in place; False if there is none to edit."""
        ids = session.meta.dm_messages.get(player)
        if not ids:
            return False
        channel_id, message_id = ids
        try:
            await self._patch_message(channel_id, message_id, text)
        except TimeoutError:
            log.warning("editing %s's DM for table %s timed out", player, session.id)
        except discord.NotFound:
            return False  # deleted by the player: send a new one
        except discord.Forbidden:
            await self.host.tables.note_dm_closed(session, player)
        except discord.HTTPException:
            log.warning("could not edit %s's DM for table %s", player, session.id, exc_info=True)
        return True

    async def _patch_message(self, channel_id: int, message_id: int, text: str) -> None:
        """Edit a DM's text: the request PartialMessage.edit makes (the payload
        handle_message_parameters writes for a text), without building a Message from the
        answer that nobody reads; this runs after nearly every move."""
        payload: dict[str, Any] = {"content": text, "tts": False}
        mentions = self.host.allowed_mentions  # none: a living DM pings nobody
        if mentions is not None:
            payload["allowed_mentions"] = mentions.to_dict()
        http = self.host.http
        if type(http) is not HTTPClient or http.proxy is not None or http.token is None:
            # A test's simulated Discord, or a proxy: discord.py's own request.
            route = Route(
                "PATCH",
                "/channels/{channel_id}/messages/{message_id}",
                channel_id=channel_id,
                message_id=message_id,
            )
            await http.request(route, json=payload)
            return
        # As discord.py's request, on the keep-alive connections of bot.client.transport
        # (the bucket of a message edit is its channel's).
        await rest.call(
            self.host.http1,
            "PATCH",
            f"{Route.BASE}/channels/{channel_id}/messages/{message_id}",
            body=orjson.dumps(payload),
            headers=rest.json_headers(http.user_agent, http.token),
            give_up_at=asyncio.get_running_loop().time() + DM_EDIT_TIMEOUT,
            limits=self._limits,
            bucket=f"PATCH /channels/{channel_id}/messages",
        )

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
