"""The demo's world: the real bot inside SimCord, a demo server with a channel per game,
the person at the browser (the viewer), and SimCord's preview of one channel at a time."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import discord
import simcord.interactions
from simcord import Env
from simcord.actors import MemberActor
from simcord.builders import ChannelHandle, GuildHandle, UserHandle
from simcord.preview import Preview
from simcord.results import to_discord_message

from bot.client.bot import CardtableBot, create_bot
from bot.i18n import t
from bot.render.components import CUSTOM_ID
from bot.runtime.settings import Settings
from bot.table import timers
from bot.table.meta import TableMeta

log = logging.getLogger(__name__)
T = TypeVar("T")

# --lang: the catalogue language and the Discord locale the viewer's client speaks.
LOCALES = {"en": "en-US", "de": "de", "ru": "ru", "it": "it"}
# The games, each with its channel in the demo server.
GAMES = ("nothanks", "rage")
# A turn-based (play by post) No Thanks! table has a channel of its own, so a live quick
# game and a turn-based one can be open side by side.
POST = "post"
POST_GAME = "nothanks"
POST_PACE = "24h"
CHANNEL_NAMES = {"nothanks": "no-thanks", "rage": "rage", POST: "play-by-post"}
DM = "dm"
# "Move the clock on": a quarter of the pace; "to the next deadline" adds this margin.
CLOCK_STEP = 6 * 3600
DEADLINE_MARGIN = 1.0
# The clock moves in steps of at most an hour: each step must settle within SimCord's
# horizon, and a day holds many periodic timers.
CLOCK_STRIDE = 3600.0
# A quick game's table: the viewer, any simulated people, computers in the other seats.
QUICK_TABLE = 4
# Simulated people (--players): first names, so they read as people, not computers.
PEOPLE = ("Ana", "Ben", "Cid", "Dora", "Eli", "Fay")
MAX_PEOPLE = len(PEOPLE)
# SimCord never logs in: any token of the right shape will do, and none leaves the process.
PLACEHOLDER_TOKEN = "demo" + "x" * 20 + ".yyyyyy." + "z" * 27
# After each click SimCord settles: it waits for the bot's work, and for every timer due
# before its deadline. The deadline is therefore short, under a computer's two-second
# delay and far under the heartbeat and turn timers, which fire later in real time.
SETTLE_HORIZON = 1.5
# Tries in a row without progress before moving the clock gives up (see move_clock).
CLOCK_RETRIES = 10
# ... while the bot's own work (pictures on a busy machine) may take this long in all.
SETTLE_GIVE_UP = 60.0
# How often the demo looks for the bot's changes made outside the page's own actions
# (real seconds): a computer's move shows this long after it is made, at most.
FOLLOW_EVERY = 0.2


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """The command line's choices."""

    lang: str = "en"
    port: int = 0
    players: int = 0
    fast: bool = False
    browser: bool = True

    @property
    def locale(self) -> str:
        """The viewer's Discord locale."""
        return LOCALES[self.lang]


@contextmanager
def speaking(locale: str) -> Iterator[None]:
    """Make every simulated interaction come from a client and a server in ``locale``.

    SimCord writes en-US into each interaction; Discord sends the user's own locale, which
    the bot answers in. Restored afterwards, so a test process is left as it was.
    """
    original = simcord.interactions.base_payload

    def base_payload(*args: Any, **kwargs: Any) -> Any:
        record, payload = original(*args, **kwargs)
        payload["locale"] = locale
        if "guild_locale" in payload:
            payload["guild_locale"] = locale
        return record, payload

    simcord.interactions.base_payload = base_payload
    try:
        yield
    finally:
        simcord.interactions.base_payload = original


@contextmanager
def pace(fast: bool) -> Iterator[None]:
    """--fast: computers move at once instead of after the usual two seconds."""
    usual = timers.BOT_DELAY
    if fast:
        timers.BOT_DELAY = 0.0
    try:
        yield
    finally:
        timers.BOT_DELAY = usual


def button_id(components: Any, action: str, arg: str | None = None) -> str | None:
    """The custom_id of the first enabled table button with this action (and argument),
    in discord.py's components or in raw ones (a response's)."""
    for custom_id, disabled in buttons(components):
        match = CUSTOM_ID.fullmatch(custom_id)
        if disabled or match is None or match["action"] != action:
            continue
        if arg is None or (match["arg"] or "") == arg:
            return custom_id
    return None


def buttons(components: Any) -> list[tuple[str, bool]]:
    """(custom_id, disabled) of every button with a custom_id, rows flattened, in order."""
    found: list[tuple[str, bool]] = []
    for item in components or []:
        if isinstance(item, dict):
            custom_id, disabled = item.get("custom_id"), item.get("disabled")
            children = item.get("components")
        else:
            custom_id = getattr(item, "custom_id", None)
            disabled = getattr(item, "disabled", False)
            children = getattr(item, "children", None)
        if isinstance(custom_id, str):
            found.append((custom_id, bool(disabled)))
        found += buttons(children)
    return found


def decode_pictures_in_process() -> None:
    """Let the preview check the demo's pictures in a thread instead of a new process each.

    SimCord's preview validates every image in a fresh, killable subprocess (it may be
    shown untrusted media). Here every image is a PNG the bot itself painted, and on a
    loaded 2-core machine a process per picture fell behind a Rage round's pictures until
    the page waited minutes at 'Completing action…'. The same check runs in a thread.
    """
    from simcord.preview import _media

    async def decode(
        self: _media.MediaWorker, key: str, blob: bytes, media_time: float | None
    ) -> _media.MediaInfo:
        return await asyncio.to_thread(_media._process_media, blob, media_time)

    _media.MediaWorker._decode = decode  # type: ignore[method-assign]


class DemoEnv(Env):
    """SimCord's Env with patience for a slow machine: a settle that outlasts its short
    horizon starts again from the present, until SETTLE_GIVE_UP."""

    async def _settle_internal(
        self,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        idle: float = 0.05,
        dispatch: str | None = None,
        _deadline: float | None = None,
    ) -> None:
        loop = asyncio.get_running_loop()
        give_up = loop.time() + SETTLE_GIVE_UP
        while True:
            try:
                await super()._settle_internal(
                    timeout=timeout, idle=idle, dispatch=dispatch, _deadline=_deadline
                )
                return
            except TimeoutError:
                if loop.time() >= give_up:
                    raise
                if _deadline is not None:
                    _deadline = loop.time() + self.settle_timeout


class World:
    """The running demo: SimCord around the bot, the demo server and the open preview.

    Every SimCord operation (a preview's click, a simulated person's move, switching the
    previewed channel) runs under one lock: SimCord allows one operation at a time.
    """

    def __init__(
        self,
        env: Env,
        guild: GuildHandle,
        viewer: MemberActor,
        people: list[MemberActor],
        channels: dict[str, ChannelHandle],
        options: DemoOptions,
    ) -> None:
        self.env = env
        self.guild = guild
        self.viewer = viewer
        self.people = people
        self.channels = channels
        self.options = options
        self.lock = asyncio.Lock()
        self.preview: Preview | None = None
        self.shown: str | None = None
        # The bot's requests and events SimCord had recorded when the page last published.
        self._published = 0

    @property
    def bot(self) -> CardtableBot:
        """The bot under the demo."""
        bot = self.env.bot
        assert isinstance(bot, CardtableBot)
        return bot

    @classmethod
    async def start(cls, options: DemoOptions, folder: Path) -> World:
        """Start the bot in SimCord on a fresh database in ``folder`` and build the server."""
        decode_pictures_in_process()
        # Computers think in a thread: worker processes would only slow the start down.
        settings = Settings(token=PLACEHOLDER_TOKEN, database=folder / "cardtable.db", ai_workers=0)
        bot = create_bot(settings)
        # One shard: SimCord's stand-in for the count Discord would recommend. Errors the
        # bot handles are logged by it; SimCord need not collect them.
        env = DemoEnv(bot, shard_count=1, check_errors=False, settle_timeout=SETTLE_HORIZON)
        await env.start()
        env.backend.edit_bot_profile("cardtable")
        await bot.tree.sync()
        guild = env.create_guild(t("demo.server", options.lang), preferred_locale=options.locale)
        channels = {
            where: guild.create_text_channel(CHANNEL_NAMES[where]) for where in (*GAMES, POST)
        }
        you = t("demo.you", options.lang)
        viewer = guild.add_member(env.create_user("you", global_name=you))
        people = [
            guild.add_member(env.create_user(name.lower(), global_name=name))
            for name in PEOPLE[: options.players]
        ]
        return cls(env, guild, viewer, people, channels, options)

    async def operation(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run one SimCord operation, after any other has finished."""
        async with self.lock:
            return await work()

    def _changes(self) -> int:
        """How many requests and gateway events the bot has made so far: every change it
        makes, a private panel's edit included, adds one."""
        return len(self.env.backend.transcript)

    async def follow(self) -> None:
        """Republish the page whenever the bot changed something outside the page's own
        actions: a computer's move after its delay, a simulated person's, a timer's.

        SimCord's preview publishes only after its own actions (and Refresh); without
        this the page kept showing the table as it was after the viewer's last click,
        waiting for computers that had already moved. Runs until cancelled.
        """
        while True:
            await asyncio.sleep(FOLLOW_EVERY)
            if self._changes() == self._published:
                continue
            try:
                async with self.lock:
                    preview = self.preview
                    if preview is None or preview._closed:
                        continue
                    # Settles the bot's work first, so the page never shows half a move.
                    await preview.refresh()
                    self._published = self._changes()
            except Exception:
                # The page shows the next change instead; the demo goes on.
                log.warning("the page could not follow the bot", exc_info=True)

    async def show(self, where: str) -> str:
        """Preview a game's channel (or the viewer's DMs) and return the page's URL."""
        async with self.lock:
            preview = self.preview
            if preview is not None and not preview._closed and self.shown == where:
                return preview.url
            if preview is not None:
                await preview.close()
            self.preview = None
            viewers: list[MemberActor | UserHandle]
            if where == DM:
                user: UserHandle = self.viewer.user
                channel, viewers = user.dm_channel, [user]
            else:
                channel, viewers = self.channels[where], [self.viewer]
            preview = self.env.preview(
                channel,
                viewers=viewers,
                layout="channel",
                locale=self.options.locale,
            )
            await preview.__aenter__()
            self._serialise(preview)
            self.preview, self.shown = preview, where
            self._published = self._changes()
            return preview.url

    def _serialise(self, preview: Preview) -> None:
        """Make the page's actions wait for the lock, like every other operation."""
        act = preview._action

        async def action(*args: Any, **kwargs: Any) -> Any:
            async with self.lock:
                try:
                    return await act(*args, **kwargs)
                finally:
                    # The action published what it changed.
                    self._published = self._changes()

        # The preview's server calls this attribute for each click and command.
        setattr(preview, "_action", action)  # noqa: B010

    async def quick_game(self, where: str) -> None:
        """Open a table in the game's channel (or the turn-based one's) with the viewer as
        host, seat the simulated people and computers in the other seats, and start it."""
        channel = self.channels[where]
        async with self.lock:
            # Loaded from its row if it left memory while nobody played it.
            if await self.bot.tables.load_in_channel(channel.id) is not None:
                return  # a table is already open there: show it as it is
            people = self.people[: QUICK_TABLE - 1]
            computers = max(0, QUICK_TABLE - 1 - len(people))
            if where == POST:
                await self.viewer.slash(
                    channel, f"{POST_GAME} start", bots=computers, pace=POST_PACE
                )
            else:
                await self.viewer.slash(channel, f"{where} start", bots=computers)
            session = self.bot.tables.in_channel(channel.id)
            if session is None or session.record.message_id is None:
                return  # the bot said why in the channel
            for person in people:
                message = self.table_message(session.record)
                join = button_id(message.components, "join")
                if join is not None:
                    await person.click(message, custom_id=join)
            start = button_id(self.table_message(session.record).components, "start")
            if start is not None:
                await self.viewer.click(self.table_message(session.record), custom_id=start)

    async def next_deadline(self) -> float | None:
        """Seconds until the soonest deadline of a turn-based demo table, or None when
        none waits for anyone. A table out of memory is read from its row (not loaded)."""
        tables = self.bot.tables
        # SimCord's virtual time: the bot's clock reads it only inside the bot's own tasks.
        now = self.env.now().timestamp()
        waits = []
        for channel in self.channels.values():
            session = tables.in_channel(channel.id)
            if session is not None:
                status, meta = session.status, session.meta
            else:
                record = await self.bot.storage.open_table_in(channel.id)
                # None, or a row that no longer reads (it has no meta to read).
                if not isinstance(getattr(record, "meta", None), dict):
                    continue
                status, meta = record.status, TableMeta.from_dict(record.meta)  # type: ignore[union-attr]
            if status != "running" or not meta.pace:
                continue
            if meta.turn is not None:
                waits.append(max(0.0, meta.turn.deadline - now))
        return min(waits, default=None)

    async def move_clock(self, seconds: float) -> None:
        """Move SimCord's virtual clock on by ``seconds``: every timer due meanwhile fires
        (a deadline, and the computer's move for the absent person), in order."""
        async with self.lock:
            target = self.env.now().timestamp() + seconds
            stuck = 0
            while (left := target - self.env.now().timestamp()) > 0:
                reached = self.env.now()
                try:
                    await self.env.advance_time(min(left, CLOCK_STRIDE))
                except TimeoutError:
                    # A busy machine: the bot did not settle within the demo's short
                    # horizon; SimCord kept the time it reached, so go on from there.
                    stuck = 0 if self.env.now() > reached else stuck + 1
                    if stuck >= CLOCK_RETRIES:
                        raise
                    log.info("the demo's clock waits for the bot (reached %s)", self.env.now())

    async def clock_to_deadline(self) -> bool:
        """Move the clock just past the next turn-based deadline; False if none waits."""
        wait = await self.next_deadline()
        if wait is None:
            return False
        await self.move_clock(wait + DEADLINE_MARGIN)
        return True

    def table_message(self, record: Any) -> discord.Message:
        """A table's public message as it is now."""
        stored = self.env.backend.get_message(record.channel_id, record.message_id)
        return to_discord_message(self.env, stored)

    async def close(self) -> None:
        """Close the preview and the bot, its workers and its database."""
        async with self.lock:
            if self.preview is not None:
                await self.preview.close()
                self.preview = None
        bot = self.bot
        try:
            await self.env.shutdown()
        finally:
            # SimCord never calls bot.close(): end what it would have ended.
            tables = getattr(bot, "tables", None)
            if tables is not None:
                tables.close()
                await tables.thinking.close()
            storage = getattr(bot, "storage", None)
            if storage is not None:
                await storage.close()
