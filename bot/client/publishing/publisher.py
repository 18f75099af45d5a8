"""Publishing tables on Discord: the public message, DMs and half-time pings.

The public message is refreshed "latest state wins": a refresh marks the table, and a
few drain tasks edit each marked table with what it shows at that moment, so a burst of
changes costs one edit, and a change made during an edit is followed by another edit.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord
import orjson
from discord.http import HTTPClient, Route

import bot.client.transport.rest as rest
from bot.i18n import t
from bot.render.images.cache import FILENAME, Picture, PictureCache
from bot.render.table import public_message, public_picture
from bot.storage import BrokenRow
from bot.table.errors import SaveFailed
from bot.table.session import Draft, TableSession
from bot.table.spec import Letter, MessageFields, is_computer_id

if TYPE_CHECKING:
    from bot.client.bot import CardtableBot

log = logging.getLogger(__name__)

# Edits in flight at once: discord.py waits out rate limits per route, and a few parallel
# edits keep a restart's refresh of many tables from hogging the connection.
DRAIN_TASKS = 4
RETRY_DELAYS = (1.0, 5.0, 15.0)
# After Discord refused a picture in a channel (no Attach Files), its tables show text
# only for this long before a picture is tried again (the permission may be granted).
NO_PICTURES_FOR = 600.0
# Players whose DM channel id is remembered (a DM channel's id never changes). discord.py
# keeps only 128 DM channels; past that every new game's first DM asked Discord again.
DM_CHANNELS_KEPT = 10_000
# A living DM edit still unanswered (rate limits waited out included) after this long has
# failed; the next move edits it again. discord.py's session would wait five minutes.
DM_EDIT_TIMEOUT = 30.0


async def _shown() -> bool:
    """For a change whose message was just posted with its current state."""
    return True


@dataclass(frozen=True, slots=True)
class TablePicture:
    """A painted picture for a table message: its key (what it shows), PNG and alt text."""

    key: str
    png: bytes
    alt: str

    def file(self) -> discord.File:
        """A fresh upload of the picture (a File can be sent only once)."""
        return discord.File(io.BytesIO(self.png), filename=FILENAME, description=self.alt)


# What a message was last seen to carry: a picture's key, None for no picture; a message
# missing from the map (posted before a restart, or after a failed edit) is unknown.
_UNKNOWN = "?"


class _HeldLock:
    """A lock and how many are holding or awaiting it, so an idle one can be dropped."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class DiscordPublisher:
    """Shows tables on Discord for the table core."""

    def __init__(self, bot: CardtableBot) -> None:
        self.bot = bot
        self._dirty: dict[int, TableSession] = {}
        self._drains: set[asyncio.Task[None]] = set()
        self._notices: set[asyncio.Task[None]] = set()
        self._unshown: set[int] = set()  # tables whose message could not be edited or posted
        self._told: set[tuple[int, int]] = set()  # who has been told so, per table
        # One DM at a time per table and player: a refusal is seen before the next try.
        self._dm_locks: dict[tuple[int, str], _HeldLock] = {}
        self._dm_channels: dict[int, int] = {}  # user id -> DM channel id, oldest first
        self._tidying: set[int] = set()  # tables whose old reminder is being deleted
        self.pictures = PictureCache()
        self._painting: dict[str, asyncio.Future[bytes]] = {}
        self._carried: dict[int, str | None] = {}  # message id -> key of the picture on it
        # One edit at a time per message, so "which picture does it carry" stays true.
        self._message_locks: dict[int, asyncio.Lock] = {}
        self._refused: dict[int, float] = {}  # channel id -> when a picture was refused
        self._limits = rest.RateLimits()  # of the DM edits made on bot.client.transport.http1

    # -- what a table looks like ----------------------------------------------------------

    def table_locale(self, session: TableSession) -> object:
        """The language of public table messages: the server's setting, else its locale."""
        chosen = self.bot.languages.language_for(session.record.guild_id)
        return chosen or session.meta.locale

    def render(self, session: TableSession) -> MessageFields:
        """The table's public message as it should look now, as text (no picture)."""
        return public_message(session.public(), session.spec.renderer, self.table_locale(session))

    async def message(self, session: TableSession) -> tuple[MessageFields, TablePicture | None]:
        """The table's public message and its picture, when the server shows pictures.

        The picture is painted in a worker thread, once per state (see PictureCache). If it
        cannot be painted, that is logged and the message goes out as text, which says the
        same: a picture never stops a move from being shown.
        """
        public = session.public()
        locale = self.table_locale(session)
        fields = public_message(public, session.spec.renderer, locale)
        embed = fields.get("embed")
        if (
            embed is None
            or not self.bot.images.images_for(session.record.guild_id)
            or self._refused_lately(session.channel_id)
        ):
            return fields, None
        try:
            picture = public_picture(public, session.spec.renderer, locale)
            if picture is None:
                return fields, None
            png = await self.paint(picture)
        except Exception:
            log.exception(
                "could not paint the picture of %s table %s at move %s; showing it as text",
                session.spec.name,
                session.id,
                public.facts.move_number,
            )
            return fields, None
        embed.set_image(url=f"attachment://{FILENAME}")
        return fields, TablePicture(picture.key, png, picture.alt)

    async def paint(self, picture: Picture) -> bytes:
        """A picture's PNG: cached, or painted once in a worker thread however many ask."""
        png = self.pictures.get(picture.key)
        if png is not None:
            return png
        pending = self._painting.get(picture.key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._painting[picture.key] = future
        try:
            png = await asyncio.to_thread(self.pictures.paint, picture)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as error:
            future.set_exception(error)
            future.exception()  # retrieved here: the caller below re-raises it
            raise
        else:
            future.set_result(png)
            return png
        finally:
            self._painting.pop(picture.key, None)

    def _refused_lately(self, channel_id: int) -> bool:
        refused = self._refused.get(channel_id)
        return refused is not None and time.monotonic() - refused < NO_PICTURES_FOR

    def _refuse(self, session: TableSession, error: discord.Forbidden) -> None:
        """Discord refused the picture here (no Attach Files): show text for a while."""
        log.warning(
            "cannot attach the picture of %s table %s in channel %s (%s); showing text only",
            session.spec.name,
            session.id,
            session.channel_id,
            error,
        )
        self._refused[session.channel_id] = time.monotonic()

    @staticmethod
    def text_only(fields: MessageFields) -> MessageFields:
        """The same message without its picture."""
        fields = {key: value for key, value in fields.items() if key not in ("file", "attachments")}
        embed = fields.get("embed")
        if embed is not None:
            embed.set_image(url=None)
        return fields

    async def _edit_carrying(
        self,
        session: TableSession,
        message_id: int,
        fields: MessageFields,
        picture: TablePicture | None,
        edit: Callable[..., Awaitable[Any]],
    ) -> Any:
        """Edit a message, uploading the picture only if it changed; text if it is refused."""
        uploads = picture is not None and self._carried.get(message_id, _UNKNOWN) != picture.key
        try:
            result = await edit(**self.for_edit(message_id, dict(fields), picture))
        except discord.Forbidden as error:
            self._carried.pop(message_id, None)
            if not uploads:
                raise
            self._refuse(session, error)
            picture = None
            result = await edit(**self.for_edit(message_id, self.text_only(fields), None))
        except BaseException:
            self._carried.pop(message_id, None)  # it may or may not have changed
            raise
        self.carries(message_id, picture)
        return result

    def _lock(self, message_id: int) -> asyncio.Lock:
        return self._message_locks.setdefault(message_id, asyncio.Lock())

    def for_edit(
        self, message_id: int, fields: MessageFields, picture: TablePicture | None
    ) -> MessageFields:
        """Edit fields that upload the picture only if the message does not carry it yet."""
        carried = self._carried.get(message_id, _UNKNOWN)
        if picture is None:
            if carried is not None:
                fields["attachments"] = []  # drop an old picture (e.g. pictures turned off)
        elif carried != picture.key:
            fields["attachments"] = [picture.file()]
        # Unchanged: no upload; the embed names the attachment the message already has.
        return fields

    def carries(self, message_id: int, picture: TablePicture | None) -> None:
        """Note which picture a message now carries (after a successful send or edit)."""
        self._carried[message_id] = None if picture is None else picture.key

    async def show(self, session: TableSession) -> None:
        """Edit the table's public message to its current state (picture only if changed)."""
        message_id = session.record.message_id
        if message_id is None:
            return
        async with self._lock(message_id):
            fields, picture = await self.message(session)

            async def edit(**changes: Any) -> None:
                await self.edit(session, **changes)

            await self._edit_carrying(session, message_id, fields, picture, edit)

    async def answer_click(self, reply: Any, session: TableSession) -> bool:
        """Answer a click on the table message by editing it to the current state."""
        message_id = session.record.message_id
        if message_id is None:
            return bool(await reply.edit(**self.render(session)))
        async with self._lock(message_id):
            fields, picture = await self.message(session)
            done = await self._edit_carrying(session, message_id, fields, picture, reply.edit)
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
            self._refuse(session, error)
            return await send(**self.text_only(fields)), None

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
                continue
            self._shown_again(session)
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

    async def repost(self, session: TableSession) -> bool:
        """Post the table as a new message in its channel and make it the table's message.

        If the bot cannot post there either, the table is marked as not shown, and the
        next person who clicks is told privately what is wrong.
        """
        channel = self.bot.get_partial_messageable(
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
        self.carries(message.id, picture)
        try:
            await session.change(lambda d: d.set_message(message.id), then=_shown)
        except SaveFailed:
            # Shown, but not remembered: the next refresh tries the old message again.
            log.error("table %s was posted again but its new message was not saved", session.id)
            return False
        self._shown_again(session)
        return True

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

    def pointer(self, session: TableSession, locale: object) -> MessageFields:
        """What an older copy of a table's message becomes: a link to the current one."""
        return {
            "content": t("table.reposted", locale, link=session.jump_url),
            "embed": None,
            "view": None,
            "attachments": [],  # its picture would otherwise stay, shown as a plain file
        }

    async def edit_message(self, session: TableSession, message_id: int, **fields: Any) -> None:
        """Edit one message of the table's channel (an older copy of the table)."""
        channel = self.bot.get_partial_messageable(
            session.channel_id, guild_id=session.record.guild_id
        )
        try:
            await channel.get_partial_message(message_id).edit(**fields)
        except discord.HTTPException as error:
            # An old copy that cannot be edited is harmless: its buttons answer "moved on".
            log.info("could not point table %s's old message to the new one: %s", session.id, error)

    def show_broken(self, row: BrokenRow) -> None:
        """Tell a quarantined table's channel, on its message, that it could not be restored."""
        if row.message_id is not None:
            task = asyncio.get_running_loop().create_task(self._show_broken(row, row.message_id))
            self._notices.add(task)  # keep a reference until it is done
            task.add_done_callback(self._notices.discard)

    async def _show_broken(self, row: BrokenRow, message_id: int) -> None:
        locale = self.bot.languages.language_for(row.guild_id)
        spec = self.bot.tables.specs.get(row.game)
        title = spec.renderer.title(locale) if spec is not None else row.game
        embed = discord.Embed(
            title=t("closed.title", locale, game=title),
            description=t("closed.broken", locale),
            colour=discord.Colour.dark_grey(),
        )
        channel = self.bot.get_partial_messageable(row.channel_id, guild_id=row.guild_id)
        try:
            await self.bot.wait_until_ready()
            await channel.get_partial_message(message_id).edit(content=None, embed=embed, view=None)
        except discord.HTTPException as error:
            # The channel may be gone or closed to us; the table is closed all the same.
            log.warning("could not mark the message of broken table %s: %s", row.id, error)

    # -- DMs and pings ------------------------------------------------------------------

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
            await self.bot.tables.note_dm_closed(session, player)
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
            opened = await self.bot.create_dm(discord.Object(id=user_id))
            channel_id = opened.id
        self._dm_channels[user_id] = channel_id  # now the most recently used
        if len(self._dm_channels) > DM_CHANNELS_KEPT:
            del self._dm_channels[next(iter(self._dm_channels))]
        return self.bot.get_partial_messageable(channel_id, type=discord.ChannelType.private)

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
            await self.bot.tables.note_dm_closed(session, player)
        except discord.HTTPException:
            log.warning("could not edit %s's DM for table %s", player, session.id, exc_info=True)
        return True

    async def _patch_message(self, channel_id: int, message_id: int, text: str) -> None:
        """Edit a DM's text: the request PartialMessage.edit makes (the payload
        handle_message_parameters writes for a text), without building a Message from the
        answer that nobody reads; this runs after nearly every move."""
        payload: dict[str, Any] = {"content": text, "tts": False}
        mentions = self.bot.allowed_mentions  # none: a living DM pings nobody
        if mentions is not None:
            payload["allowed_mentions"] = mentions.to_dict()
        http = self.bot.http
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
        # As discord.py's request, on the keep-alive connections of bot.client.transport (the bucket
        # of a message edit is its channel's).
        await rest.call(
            self.bot.http1,
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
            await session.change(remember, then=_shown)
        except Exception:
            # Not remembered: the next change sends a new DM instead of editing this one.
            log.warning("could not remember %s's DM for table %s", player, session.id)

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
            await session.change(remember, then=_shown)
        except Exception:
            log.warning("could not remember the reminder of table %s", session.id)

    def tidy(self, session: TableSession) -> None:
        """Delete the half-time reminder soon, once the turn it was for has passed."""
        if not self._reminder_passed(session) or session.id in self._tidying:
            return
        self._tidying.add(session.id)
        task = asyncio.get_running_loop().create_task(self._tidy(session))
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)

    @staticmethod
    def _reminder_passed(session: TableSession) -> bool:
        reminder = session.meta.ping_message
        if not reminder:
            return False
        turn = session.meta.turn
        return turn is None or turn.move != reminder[1]

    async def _tidy(self, session: TableSession) -> None:
        try:
            await self.bot.wait_until_ready()
            reminder = list(session.meta.ping_message)
            if not self._reminder_passed(session):
                return
            channel = self.bot.get_partial_messageable(
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
                await session.change(forget, then=_shown)
            except Exception:
                log.warning("could not forget the reminder of table %s", session.id)
        finally:
            self._tidying.discard(session.id)
