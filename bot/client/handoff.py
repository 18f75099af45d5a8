"""DM clicks for another process's table, handed to that process through the database.

Discord sends every DM interaction to shard 0. A "your turn" DM's button names a table of
some server, whose shard another process may run (several processes on PostgreSQL). The
process that received such a click (the receiver) hands its raw payload to the table's
process (the owner) through the database, and the owner answers it itself with the
interaction's token (callbacks, follow-ups and edits through the token need no bot token
and any process of the application may send them). The owner rebuilds the interaction
with its own connection state and routes it exactly as one from its own gateway: the
same checks, the same change path, the same answer.

Exactly one of them answers: the owner claims the click atomically as soon as it hears
of it (LISTEN/NOTIFY); the receiver, CLAIM_WAIT after the click, cancels it atomically if
nobody claimed it (the owner is down) and says privately that the table's process is not
answering. Both well within Discord's 3 seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import discord

from bot import metrics
from bot.client.replies import answer_error
from bot.render.components import Click
from bot.storage import Storage
from bot.storage.schema import dump
from bot.table.errors import UserError
from bot.table.shards import ShardSet
from bot.table.tables import Tables

log = logging.getLogger(__name__)

# How long the receiver leaves a handed click to its owner before it cancels it and
# answers itself: with the cancel's own limit (HAND_TIMEOUT, 0.8 s) and the answer's
# round trip this stays within Discord's 3 seconds, and an owner that is up claims within
# milliseconds of the notification.
CLAIM_WAIT = 1.5
# Handed clicks left behind (a receiver that died mid-way) are deleted once this old.
KEEP_HANDED = 60.0
# The most an owner counts as already spent of a handed click's time (a click claimed
# late, just before the receiver gave up, must still be deferred within 3 s).
MOST_LAG = 1.8


class HandoffHost(Protocol):
    """What the handoff needs from the bot: its shards, tables, storage and readiness."""

    shard_set: ShardSet
    tables: Tables
    storage: Storage

    def is_ready(self) -> bool:
        """Whether the gateway session is ready (its connection state filled in)."""
        ...


class Handoff:
    """Hands DM clicks for other processes' tables over, and takes those handed to us.

    Usage::

        handoff = Handoff(bot, parse=lambda: bot._connection.parsers["INTERACTION_CREATE"])
        handoff.keep(payload)  # from the INTERACTION_CREATE parser: a DM click's raw payload
        await handoff.hand(interaction, click, guild_id)  # the receiver, from the router
        handoff.handed(click_id, shard)  # the owner, from the storage's listener
    """

    def __init__(
        self, host: HandoffHost, parse: Callable[[], Callable[[dict[str, Any]], None]]
    ) -> None:
        self.host = host
        # discord.py's INTERACTION_CREATE parser (as the bot wraps it), looked up when used.
        self._parse = parse
        # The raw payloads of DM table clicks received, until their route is done.
        self.raw: dict[int, dict[str, Any]] = {}
        # Interactions handed to this process, by id: how long ago they were handed.
        self.handed_in: dict[int, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # Who claimed a handed click, for whoever reads the table of handed clicks.
        self.name = f"{socket.gethostname()}:{os.getpid()}"

    # -- the receiver ---------------------------------------------------------------------

    def keep(self, data: dict[str, Any]) -> None:
        """Keep a DM click's raw payload (a shallow copy: discord.py reads the original)."""
        if data.get("guild_id") is None and "id" in data:
            self.raw[int(data["id"])] = dict(data)

    def forget(self, interaction_id: int) -> None:
        """A click's route is done: its raw payload is no longer needed."""
        self.raw.pop(interaction_id, None)

    async def hand(self, interaction: discord.Interaction, click: Click, guild_id: int) -> bool:
        """Hand a DM click for another shard's table to the process running it; answer
        it here only if nobody claims it in time. False if it cannot be handed (SQLite, or
        no raw payload): refuse it then."""
        storage = self.host.storage
        shard = self.host.shard_set.shard_of(guild_id)
        payload = self.raw.pop(interaction.id, None)
        if not storage.hands_off or shard is None or payload is None:
            return False
        loop = asyncio.get_running_loop()
        started = loop.time()
        what = f"{click.game} table {click.table_id} ({click.action}) of user {interaction.user.id}"
        try:
            click_id = await storage.hand_click(shard, dump(payload), time.time())
        except Exception as error:
            log.warning("could not hand the DM click on %s to shard %s: %r", what, shard, error)
            metrics.handed("not_handed")
            await answer_error(interaction, UserError("table.owner_not_answering"))
            return True
        log.info("handed the DM click on %s to shard %s (handed click %d)", what, shard, click_id)
        await asyncio.sleep(max(started + CLAIM_WAIT - loop.time(), 0.0))
        try:
            unclaimed = await storage.cancel_click(click_id)
        except Exception as error:
            # Unknown whether it was claimed: answer; if the owner did too, Discord refuses
            # the second answer (logged), which beats a click nobody answers.
            log.warning("could not settle handed click %d: %r; answering it here", click_id, error)
            unclaimed = True
        self._background(self._forget_rows(click_id))
        if not unclaimed:
            log.debug("handed click %d was claimed by shard %s's process", click_id, shard)
            metrics.handed("claimed")
            return True
        log.warning(
            "no process claimed handed click %d (%s) for shard %s within %.1f s: answered "
            "that the table's process is not answering",
            click_id,
            what,
            shard,
            CLAIM_WAIT,
        )
        metrics.handed("unclaimed")
        await answer_error(interaction, UserError("table.owner_not_answering"))
        return True

    async def _forget_rows(self, click_id: int) -> None:
        try:
            await self.host.storage.forget_clicks(click_id, time.time() - KEEP_HANDED)
        except Exception as error:
            # Left for the next handoff's clean-up: rows older than KEEP_HANDED go then.
            log.warning("could not delete handed click %d: %r", click_id, error)

    # -- the owner ------------------------------------------------------------------------

    def handed(self, click_id: int, shard: int) -> None:
        """The storage's listener heard of a click handed to one of our shards: claim it
        and answer it (unless the shard was lost to another process meanwhile)."""
        if shard in self.host.tables.lost or not self.host.is_ready():
            return  # not ours to answer now: its receiver does
        self._background(self._take(click_id, shard))

    async def _take(self, click_id: int, shard: int) -> None:
        try:
            claimed = await self.host.storage.claim_click(click_id, self.name, time.time())
        except Exception as error:
            # Its receiver answers it when the claim does not come.
            log.warning("could not claim handed click %d: %r", click_id, error)
            return
        if claimed is None:
            return  # cancelled by its receiver, or claimed already
        payload, handed_at = claimed
        data = json.loads(payload)
        interaction_id = int(data["id"])
        lag = min(max(time.time() - handed_at, 0.0), MOST_LAG)
        log.info(
            "took handed click %d (interaction %s) for shard %s, %.0f ms after it was handed",
            click_id,
            interaction_id,
            shard,
            lag * 1000,
        )
        self.handed_in[interaction_id] = lag
        metrics.handed("taken")
        try:
            # As from our own gateway: rebuilt on our connection state and dispatched to
            # on_interaction, whose router answers it (and drops handed_in's entry).
            self._parse()(data)
        except Exception:
            self.handed_in.pop(interaction_id, None)
            log.exception("could not rebuild handed click %d", click_id)

    def lag_of(self, interaction_id: int) -> float | None:
        """How long ago a click handed to this process was handed (None: not handed);
        asked once, when its route begins."""
        return self.handed_in.pop(interaction_id, None)

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self) -> None:
        """Cancel the handoffs still on their way (the bot is closing)."""
        for task in list(self._tasks):
            task.cancel()
