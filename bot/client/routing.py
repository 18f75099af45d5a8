"""Click routing: a click on any table component, however old, goes to its game's cog by
the game named in its custom id, if the table belongs to this process's shards."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

import discord

from bot.client.handoff import Handoff
from bot.client.replies import answer_error, answering_sooner, release, timing_click
from bot.render.components import TABLE_PREFIXES, Click, parse_click
from bot.storage import Storage
from bot.table.errors import UserError
from bot.table.shards import ShardSet
from bot.table.tables import Tables

log = logging.getLogger(__name__)


class ClickHandler(Protocol):
    """A game's cog, as the router sees it."""

    async def on_click(self, interaction: discord.Interaction, click: Click) -> None:
        """Handle one click or choice at one of the game's tables."""
        ...


class RoutingHost(Protocol):
    """What routing needs from the bot: its shards, tables, storage and readiness."""

    shard_set: ShardSet
    tables: Tables
    storage: Storage

    def is_ready(self) -> bool:
        """Whether the gateway session is ready."""
        ...


def slimming_clicked_messages(
    parse: Callable[[Any], None], keep: Callable[[dict[str, Any]], None] | None = None
) -> Callable[[Any], None]:
    """discord.py's INTERACTION_CREATE parser, without the clicked table message's embeds,
    components and attachments; ``keep`` is given each table click's raw payload (slimmed)
    before it is parsed.

    A click carries the whole message it was made on, and discord.py turns it into a
    Message (its embeds and every component row) before the click is dispatched. A table
    click reads only that message's id and flags; its contents are the bot's own. The raw
    payload is what a DM click for another process's table is handed over as.
    """

    def parse_interaction_create(data: Any) -> None:
        message = data.get("message")
        if data.get("type") == 3 and isinstance(message, dict):
            custom_id = (data.get("data") or {}).get("custom_id")
            if isinstance(custom_id, str) and custom_id.startswith(TABLE_PREFIXES):
                data["message"] = {**message, "embeds": [], "components": [], "attachments": []}
                if keep is not None:
                    keep(data)
        parse(data)

    return parse_interaction_create


def log_foreign(
    shard_set: ShardSet, interaction: discord.Interaction, what: str, guild_id: int | None
) -> None:
    """Log a refused interaction for another process's shard: a deployment to fix."""
    log.warning(
        "refused %s from user %s in channel %s: guild %s is on shard %s, not among this "
        "process's %s (Discord should route it elsewhere; check SHARD_COUNT and SHARD_IDS)",
        what,
        interaction.user.id,
        interaction.channel_id,
        guild_id,
        shard_set.shard_of(guild_id),
        shard_set,
    )


class ClickRouter:
    """Hands each table click to the cog of its game.

    Usage::

        router = ClickRouter(bot, lambda: bot._connection.parsers["INTERACTION_CREATE"])
        router.handlers["nothanks"] = nothanks_cog  # each game's cog registers itself
        await router.on_interaction(interaction)  # from the bot's on_interaction
    """

    def __init__(
        self, host: RoutingHost, parse: Callable[[], Callable[[dict[str, Any]], None]]
    ) -> None:
        self.host = host
        self.handlers: dict[str, ClickHandler] = {}
        # DM clicks for other processes' tables: handed over, and taken from others.
        self.handoff = Handoff(host, parse)

    async def foreign_guild_of(
        self, interaction: discord.Interaction, click: Click
    ) -> tuple[bool, int | None]:
        """Whether a click is for a table of another process's shard, and that guild.

        A click in a guild belongs to that guild's shard. One from a direct message (which
        Discord sends to shard 0) names its table in the custom id: the table's own guild
        decides, read from the database when it is not one of ours in memory.
        """
        # The tables' view of ownership: shards another process took over meanwhile
        # (Tables.drop_shards) are no longer this process's.
        tables = self.host.tables
        if interaction.guild_id is not None:
            return not tables.owns(interaction.guild_id), interaction.guild_id
        everything = self.host.shard_set.owns_everything and not tables.lost
        if everything or tables.get(click.table_id) is not None:
            return False, None
        record = await self.host.storage.get_table(click.table_id)
        if record is None:
            return False, None
        return not tables.owns(record.guild_id), record.guild_id

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Route a click on a table component by its custom_id (any message, any age)."""
        if interaction.type is not discord.InteractionType.component:
            return
        # A click handed over by another process: how long ago (None: from our gateway).
        lag = self.handoff.lag_of(interaction.id)
        try:
            click = parse_click(interaction.data)
            if click is None:
                return
            try:
                with timing_click(), answering_sooner(lag or 0.0):
                    await self.route(interaction, click, handed=lag is not None)
            finally:
                # Nothing answers a table click after its route returns (no task keeps it).
                release(interaction)
        finally:
            self.handoff.forget(interaction.id)  # its raw payload, kept to hand it over

    async def route(
        self, interaction: discord.Interaction, click: Click, *, handed: bool = False
    ) -> None:
        """Hand a table component's click to its game's cog (if the table is ours; a DM
        click for another process's table is handed to that process, unless ``handed``:
        it was handed here, and this process no longer runs the table either)."""
        foreign, guild_id = await self.foreign_guild_of(interaction, click)
        dm = interaction.guild_id is None
        handing = foreign and dm and guild_id is not None and not handed
        if handing and await self.handoff.hand(interaction, click, guild_id or 0):
            return
        if foreign:
            what = f"{click.game} table {click.table_id} ({click.action})"
            log_foreign(self.host.shard_set, interaction, what, guild_id)
            await answer_error(interaction, UserError("table.foreign_shard"))
            return
        cog = self.handlers.get(click.game)
        if cog is None:
            await answer_error(interaction, UserError("error.unavailable"))
            return
        await cog.on_click(interaction, click)
