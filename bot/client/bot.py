"""The bot factory: one fresh `CardtableBot` per call, so tests can restart on one database."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands, tasks
from discord.http import Route

from bot import metrics
from bot.client.guild_settings import (
    GuildImages,
    GuildLanguages,
    GuildPace,
    GuildPacePings,
    GuildThreads,
    GuildTurnPings,
    UserNotify,
)
from bot.client.outbound.guard import InvalidRequests
from bot.client.outbound.lane import Lane, SendGate
from bot.client.publishing import DiscordPublisher
from bot.client.replies import answer_error
from bot.client.routing import ClickRouter, log_foreign, slimming_clicked_messages
from bot.client.watching import start_metrics, stop_metrics
from bot.i18n.commands import CatalogueTranslator
from bot.metrics.server import MetricsServer
from bot.runtime import gc_tuning
from bot.runtime.health import clear_heartbeat, heartbeat_path, write_heartbeat
from bot.runtime.settings import Settings
from bot.storage import Storage, open_storage
from bot.table.errors import UserError
from bot.table.review import Reviews
from bot.table.shards import ShardSet
from bot.table.tables import Tables
from bot.table.thinking import ThinkingPool

log = logging.getLogger(__name__)
EXTENSIONS = ("cogs.nothanks", "cogs.rage", "cogs.cardtable", "cogs.admin")
# Seconds between heartbeats; `python -m bot health` calls a beat older than three of them
# stale (the beat names its interval). Read when the loop starts, so tests can patch it.
HEARTBEAT_INTERVAL = 30.0
# A database that takes this long to answer the health probe counts as down.
DATABASE_CHECK_TIMEOUT = 10.0
# Mentions that are not a working owner command: logged at DEBUG, since anyone can send them.
QUIET_COMMAND_ERRORS = (commands.CommandNotFound, commands.CheckFailure, commands.UserInputError)


def now() -> float:
    """The current time as a Unix timestamp (virtual under SimCord)."""
    return discord.utils.utcnow().timestamp()


class CardtableTree(app_commands.CommandTree):
    """The command tree: every unhandled command error is answered in one place."""

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        """Refuse every command from a guild of another process's shard (answered once)."""
        client = interaction.client
        if not isinstance(client, CardtableBot) or client.owns(interaction.guild_id):
            return True
        command = interaction.command
        name = command.qualified_name if command is not None else "a command"
        client.log_foreign(interaction, f"/{name}", interaction.guild_id)
        if interaction.type is discord.InteractionType.application_command:
            await answer_error(interaction, UserError("table.foreign_shard"))
        return False

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        """Answer and log errors no cog handled."""
        original: BaseException = getattr(error, "original", error)
        if isinstance(error, app_commands.NoPrivateMessage):
            original = UserError("error.guild_only")
        await answer_error(interaction, original, context=f"in /{interaction.command}")


class CardtableBot(commands.AutoShardedBot):
    """The cardtable bot: storage, the table registry, publishing and the game cogs.

    It runs the shards SHARD_COUNT and SHARD_IDS name (all of Discord's choice when unset)
    and owns the tables of their guilds only.
    """

    storage: Storage
    tables: Tables
    languages: GuildLanguages
    images: GuildImages
    turn_pings: GuildTurnPings
    threads: GuildThreads
    pace: GuildPace
    pace_pings: GuildPacePings
    notify: UserNotify
    publisher: DiscordPublisher
    reviews: Reviews

    def __init__(
        self,
        settings: Settings,
        *,
        extensions: tuple[str, ...] = EXTENSIONS,
        serve_tables: bool = True,
    ) -> None:
        intents = discord.Intents.default()
        # Left out when unset: AutoShardedBot then asks Discord for the count and runs all.
        sharding: dict[str, Any] = {}
        if settings.shard_count is not None:
            sharding["shard_count"] = settings.shard_count
        if settings.shard_ids is not None:
            sharding["shard_ids"] = list(settings.shard_ids)
        if settings.api_base is not None:
            # Every REST call (discord.py's HTTP client and its webhook adapter alike) goes
            # to the rate-limiting proxy the bot's processes share.
            Route.BASE = f"{settings.api_base}/api/v10"
        # Counts Discord's refusals on every answer of discord.py's session.
        self.guard = InvalidRequests(on_revoked=lambda: self.stop_for_revoked_token())
        # Everything sent outside an interaction's answer, paced below the global limit.
        self.lane = Lane(settings.lane_rate)
        self.lane.limit_to(self.guard.ceiling)
        # ... and the same rate kept where the requests leave (the lane's may bunch up).
        self.gate = SendGate(settings.lane_rate)
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            help_command=None,
            tree_cls=CardtableTree,
            # Nobody is pinged unless a message names who: each table message says so.
            allowed_mentions=discord.AllowedMentions.none(),
            http_trace=self.guard.trace_config(self.gate),
            **sharding,
        )
        self.settings = settings
        self.shard_set = ShardSet.of(settings.shard_count, settings.shard_ids)
        self.extensions_to_load = extensions
        # False for `python -m bot sync`, beside a running bot: it must neither claim that
        # bot's shards nor restore (and so refresh or quarantine) its tables.
        self.serve_tables = serve_tables
        # What `python -m bot` exits with once the bot has closed.
        self.exit_status = 0
        self.metrics_server: MetricsServer | None = None  # CARDTABLE_METRICS_PORT's
        self._stopping: asyncio.Task[None] | None = None  # a stop on its way (once)
        # The database outages already reported by a beat (a beat reports every one that
        # began since the one before, however short).
        self._outages_beaten = 0
        self._beats: set[asyncio.Task[None]] = set()
        self._beat_lock = asyncio.Lock()
        # `python -m bot` sets it when it holds the database's instance lock, so that the
        # health check may probe the lock to learn whether this process still lives.
        self.holds_instance_lock = False
        # Each game's cog registers itself with the router, so a click finds its game.
        self.router = ClickRouter(self, lambda: self._connection.parsers["INTERACTION_CREATE"])
        self.table_cogs = self.router.handlers
        # `python -m bot` sets it: a test process must not freeze its fixtures out of reach.
        self.freeze_when_ready = False
        self._frozen = False
        # Daily summaries are planned once a process is first ready (see on_ready).
        self._summaries_planned = False
        parsers = self._connection.parsers
        # With other processes beside it, a DM click's raw payload is kept until routed: one
        # for another process's table is handed over as it came (bot.client.handoff).
        keep = None if self.shard_set.owns_everything else self.router.handoff.keep
        parsers["INTERACTION_CREATE"] = slimming_clicked_messages(
            parsers["INTERACTION_CREATE"], keep
        )

    async def on_error(self, event_method: str, /, *args: object, **kwargs: object) -> None:
        """Log an unexpected error with its context and traceback (called inside ``except``)."""
        log.error("unexpected error in %s", event_method, exc_info=True)

    async def is_owner(self, user: discord.abc.User) -> bool:
        """The application's owner(s), plus anyone listed in CARDTABLE_OWNER_IDS."""
        if user.id in self.settings.owner_ids:
            return True
        return await super().is_owner(user)

    async def process_commands(self, message: discord.Message) -> None:
        """Run an owner's mention command; ignore anyone else's mention without a trace."""
        if message.author.bot:
            return
        context = await self.get_context(message)
        if context.prefix is None:
            return  # not addressed to the bot
        # Strangers never reach the command checks, whose failures would be dispatched
        # (and, by discord.py's default handler, logged as errors) for every such mention.
        if not await self.is_owner(message.author):
            log.debug(
                "ignored mention %r from non-owner %s", context.invoked_with, message.author.id
            )
            return
        await self.invoke(context)

    async def on_command_error(
        self, context: commands.Context[Any], exception: commands.CommandError, /
    ) -> None:
        """Log unknown commands, failed checks and bad input at DEBUG; anything else as usual."""
        if isinstance(exception, QUIET_COMMAND_ERRORS):
            log.debug(
                "ignored command %r from %s: %s",
                context.invoked_with,
                context.author.id,
                exception,
            )
            return
        await super().on_command_error(context, exception)

    def gateway_connected(self) -> bool:
        """Whether the gateway is up: ready, not closing, and heartbeats acknowledged."""
        # discord.py drops the keep-alive when the socket closes, so latency turns inf/nan.
        return not self.is_closed() and self.is_ready() and math.isfinite(self.latency)

    async def database_answers(self) -> bool:
        """Whether the database answers a probe (a write on SQLite) in time; the storage
        hears of the outcome, so a return is noticed even when nothing else is saved."""
        started = time.time()
        try:
            await asyncio.wait_for(self.storage.probe(), DATABASE_CHECK_TIMEOUT)
        except Exception as exc:
            log.warning("the database did not answer the health query: %r", exc)
            self.storage.mark_down(exc, since=started)
            return False
        self.storage.mark_up()
        return True

    async def beat(self) -> None:
        """Write one heartbeat for `python -m bot health` (one at a time, so the file ends
        with the newest state)."""
        async with self._beat_lock:
            await self._beat()

    async def _beat(self) -> None:
        path = heartbeat_path(self.settings.database)
        storage = self.storage
        answers = await self.database_answers()
        # An outage that began and ended between two beats is reported by the next one.
        missed = storage.outages > self._outages_beaten
        self._outages_beaten = storage.outages
        beat = {
            # Wall-clock time: the health check is another process comparing with its own.
            "time": time.time(),
            "pid": os.getpid(),
            "interval": self.heartbeat.seconds or HEARTBEAT_INTERVAL,
            "instance_lock": self.holds_instance_lock,
            "connected": self.gateway_connected(),
            "database": answers and not missed,
            "database_down_since": storage.down_since,
        }
        try:
            await asyncio.to_thread(write_heartbeat, path, beat)
        except OSError as exc:
            log.warning("cannot write the heartbeat file %s: %s", path, exc)

    # discord.ext.tasks rather than a sleeping task: it survives reconnects, and SimCord
    # drives its sleeps on the virtual clock.
    @tasks.loop(seconds=HEARTBEAT_INTERVAL)
    async def heartbeat(self) -> None:
        """Write a heartbeat every HEARTBEAT_INTERVAL seconds, from ready until close()."""
        await self.beat()

    def database_availability(self, up: bool) -> None:
        """The database went away or came back: beat at once (the health check must not
        wait for the next beat to hear of it), and settle what the outage left open."""
        if up:
            self.tables.database_back()
        if self.heartbeat.is_running():
            task = asyncio.get_running_loop().create_task(self.beat())
            self._beats.add(task)
            task.add_done_callback(self._beats.discard)

    def shards_lost(self, shards: list[int], reason: str) -> None:
        """Another process took some of this process's shards while their claim was lost:
        stop running their tables (their clicks are then refused as another process's)."""
        dropped = self.tables.drop_shards(shards)
        log.error(
            "stopped running shards %s and their %d open tables: %s; the rest of %s runs on",
            shards,
            len(dropped),
            reason,
            self.shard_set,
        )

    async def on_resumed(self) -> None:
        """A gateway session resumed after a drop: counted as a reconnect."""
        metrics.reconnected()

    async def on_ready(self) -> None:
        """Start beating once the gateway is ready (`python -m bot sync` never gets here)."""
        if self.heartbeat.is_running():
            metrics.reconnected()  # ready again: a new session after a drop
        if not self.heartbeat.is_running():
            self.heartbeat.change_interval(seconds=HEARTBEAT_INTERVAL)
            self.heartbeat.start()
        if not self._summaries_planned and self.tables.owns(None):
            # Once, by the DMs' shard's process: daily summaries come a day after the last
            # one even when none of the person's tables changes after a restart.
            self._summaries_planned = True
            task = asyncio.get_running_loop().create_task(self.plan_summaries())
            self._beats.add(task)
            task.add_done_callback(self._beats.discard)
        # Once: on_ready comes again after a reconnect, by when start-up's objects are frozen.
        if self.freeze_when_ready and not self._frozen:
            self._frozen = True
            gc_tuning.freeze_survivors()

    async def plan_summaries(self) -> None:
        """Plan every daily summary again (start-up); a failure is logged, and each
        person's next table change plans theirs."""
        try:
            planned = await self.publisher.notices.plan_summaries()
        except Exception:
            log.warning("could not plan the daily summaries again", exc_info=True)
            return
        if planned:
            log.info("planned %d daily summaries", planned)

    def guild_language(self, guild_id: int | None) -> str | None:
        """The language a server chose for its public table messages (/cardtable language)."""
        return self.languages.language_for(guild_id)

    async def setup_hook(self) -> None:
        """Open the database, claim the shards, load the games, restore the shards' open
        tables (and refresh them)."""
        self.storage = await open_storage(self.settings.storage_target)
        if self.serve_tables:
            # Before anything is restored: a second process claiming these shards stops here.
            await self.storage.claim_shards(self.shard_set.claims(), self.shard_set.count or 0)
            self.storage.on_shards_lost = self.shards_lost
            log.info("running %s", self.shard_set)
        self.storage.on_availability = self.database_availability
        self.languages = GuildLanguages(self.storage)
        self.images = GuildImages(self.storage)
        self.turn_pings = GuildTurnPings(self.storage)
        self.threads = GuildThreads(self.storage)
        self.pace = GuildPace(self.storage)
        self.pace_pings = GuildPacePings(self.storage)
        self.notify = UserNotify(self.storage)
        self.tables = Tables(
            self.storage,
            clock=now,
            ready=self.wait_until_ready,
            is_ready=self.is_ready,
            shards=self.shard_set,
            thinking=ThinkingPool(self.settings.ai_workers),
            idle_seconds=self.settings.table_idle_seconds,
        )
        self.publisher = DiscordPublisher(self, self.lane)
        # Game reviews of every game: worked out one at a time in the thinking pool, kept.
        self.reviews = Reviews(self.tables.thinking)
        self.tables.publisher = self.publisher
        if self.serve_tables and self.storage.hands_off and not self.shard_set.owns_everything:
            # DM clicks for our tables that reached another process (Discord sends every
            # DM interaction to shard 0) are handed to us through the database.
            await self.storage.listen_for_clicks(
                self.shard_set.claims(), self.router.handoff.handed
            )
        # Command names and descriptions in every catalogue language, applied when synced.
        await self.tree.set_translator(CatalogueTranslator())
        for extension in self.extensions_to_load:
            await self.load_extension(extension)
        if self.serve_tables:
            # The workers start beside the restore; a search waits until they are ready.
            await self.tables.start_thinking()
            await self.tables.restore()
            self.metrics_server = await start_metrics(self)

    def owns(self, guild_id: int | None) -> bool:
        """Whether a guild's tables belong to the shards this process runs (and still
        holds: another process may have taken some while the database was away)."""
        tables = getattr(self, "tables", None)
        return self.shard_set.owns(guild_id) if tables is None else tables.owns(guild_id)

    def log_foreign(
        self, interaction: discord.Interaction, what: str, guild_id: int | None
    ) -> None:
        """Log a refused interaction for another process's shard: a deployment to fix."""
        log_foreign(self.shard_set, interaction, what, guild_id)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Route a click on a table component by its custom_id (any message, any age)."""
        await self.router.on_interaction(interaction)

    def stop_for_revoked_token(self) -> None:
        """Discord answered 401 to the bot's token: it was revoked or reset. Stop (exit
        status 1); nothing can work until DISCORD_TOKEN holds the new token."""
        if self._stopping is not None:
            return
        log.critical(
            "stopping: Discord refused the bot's token (401 Unauthorized): it was reset or "
            "revoked; put the new one in DISCORD_TOKEN"
        )
        self.exit_status = 1
        self._stopping = asyncio.get_running_loop().create_task(self.close())

    async def close(self) -> None:
        """Stop the heartbeat, close Discord, the thinking workers, then the database."""
        if self.heartbeat.is_running():
            self.heartbeat.cancel()
            # A bot that stopped must not be vouched for by its last beat.
            try:
                clear_heartbeat(self.settings.database)
            except OSError as exc:
                log.warning("cannot remove the heartbeat file: %s", exc)
        for task in list(self._beats):
            task.cancel()
        self.router.handoff.close()
        tables = getattr(self, "tables", None)
        if tables is not None:
            tables.close()
            await tables.thinking.close()
        languages = getattr(self, "languages", None)
        if languages is not None:
            languages.close()
        for setting in ("images", "turn_pings", "threads", "pace", "pace_pings", "notify"):
            cached = getattr(self, setting, None)
            if cached is not None:
                cached.close()
        self.lane.close()
        await stop_metrics(self.metrics_server)
        self.metrics_server = None
        await super().close()
        storage = getattr(self, "storage", None)
        if storage is not None:
            await storage.close()

    async def sync_commands(self, guild_id: int | None = None) -> int:
        """Publish the slash commands globally, or to one guild instantly; return the count."""
        if guild_id is None:
            commands_synced = await self.tree.sync()
        else:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            commands_synced = await self.tree.sync(guild=guild)
        return len(commands_synced)


def create_bot(
    settings: Settings, *, extensions: tuple[str, ...] = EXTENSIONS, serve_tables: bool = True
) -> CardtableBot:
    """Build a fresh bot for these settings (a new instance each call); ``serve_tables``
    False builds one that only publishes the commands."""
    return CardtableBot(settings, extensions=extensions, serve_tables=serve_tables)
