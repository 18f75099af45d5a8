"""What the metrics server shows of this bot: its state at a scrape, and the server itself.

The families and the server are in `bot.metrics`; this module only reads the bot (its
tables, lane, guard, gateway and database) into a `Snapshot`, and starts the server when
CARDTABLE_METRICS_PORT is set.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Mapping
from typing import Protocol

from bot import metrics
from bot.client.outbound.guard import InvalidRequests
from bot.client.outbound.lane import Lane, Priority
from bot.metrics.server import MetricsServer
from bot.runtime.settings import Settings
from bot.table.tables import Tables
from bot.table.thinking import game_of

log = logging.getLogger(__name__)


class Watched(Protocol):
    """What is read of the bot (Watched), without importing it (no import cycle)."""

    settings: Settings
    lane: Lane
    guard: InvalidRequests

    @property
    def latencies(self) -> list[tuple[int, float]]: ...

    def is_closed(self) -> bool: ...

    def gateway_connected(self) -> bool: ...

    # `tables` and `storage` are read with getattr: they exist once setup_hook opened them.


# How often the open tables are counted in the database (a scrape comes every 15 s; the
# count is one indexed, grouped query, so a gauge at most this old is cheap and enough).
COUNT_EVERY = 30.0


class OpenTableCounts:
    """The open tables of this process's shards, loaded or not, counted from the database
    in the background every COUNT_EVERY seconds: a scrape reads the last count (the
    collector is synchronous and must never wait for the database)."""

    def __init__(self, tables: Tables, every: float = COUNT_EVERY) -> None:
        self.tables = tables
        self.every = every
        # (game, status, pace) -> how many; empty until the first count
        self.counts: Mapping[tuple[str, str, str], int] = {}
        self._failing = False

    async def refresh(self) -> None:
        """Count once; on failure (the database away) keep the last count, and say so once
        per outage."""
        try:
            counts = await self.tables.count_open()
        except Exception as exc:
            if not self._failing:
                log.warning("cannot count the open tables (the gauge keeps its last): %r", exc)
            self._failing = True
            return
        self._failing = False
        self.counts = counts

    async def run(self) -> None:
        """Count now and every ``every`` seconds until cancelled."""
        while True:
            await self.refresh()
            await asyncio.sleep(self.every)

    def by_pace(self) -> dict[tuple[str, str, str], int]:
        """The last count, as the gauge's (game, status, pace) series: pace is "live" or
        "turn_based" (the speed of a turn-based table is not a label: it stays bounded)."""
        return dict(self.counts)


def snapshot(bot: Watched, counts: OpenTableCounts | None = None) -> metrics.Snapshot:
    """The bot's state as the gauges show it (the open tables as ``counts`` last read)."""
    tables = getattr(bot, "tables", None)
    storage = getattr(bot, "storage", None)
    latencies = {
        shard: seconds
        for shard, seconds in bot.latencies
        if math.isfinite(seconds) and not bot.is_closed()
    }
    return metrics.Snapshot(
        tables={} if counts is None else counts.by_pace(),
        loaded=0 if tables is None else len(tables),
        queued={p.name.lower(): bot.lane.pending_at(p) for p in Priority},
        started={p.name.lower(): count for p, count in bot.lane.started.items()},
        invalid_requests=bot.guard.count,
        guard_level=bot.guard.level,
        latencies=latencies,
        database_up=storage is None or storage.down_since is None,
        connected=bot.gateway_connected(),
    )


def not_ready(bot: Watched) -> str | None:
    """Why the bot cannot serve clicks now (as `python -m bot health` says it), or None."""
    if not bot.gateway_connected():
        return "the bot's gateway connection to Discord is down"
    storage = getattr(bot, "storage", None)
    if storage is None or storage.down_since is not None:
        return "database down"
    return None


async def start_metrics(bot: Watched) -> MetricsServer | None:
    """Serve /metrics, /livez and /readyz if CARDTABLE_METRICS_PORT asks, and record."""
    port = bot.settings.metrics_port
    if port is None:
        return None
    host = bot.settings.metrics_host
    server = MetricsServer(host, port, ready=lambda: not_ready(bot))
    try:
        await server.start()
    except OSError as error:
        # The tables matter more than their figures: the bot runs on without metrics, and
        # Prometheus shows the target down.
        log.error("cannot serve metrics on %s:%d (%s): running without them", host, port, error)
        return None
    tables = getattr(bot, "tables", None)
    specs = {} if tables is None else tables.specs
    metrics.prime({name: (game_of(spec.choose), spec.levels) for name, spec in specs.items()})
    counts = None
    if tables is not None:
        counts = OpenTableCounts(tables)
        server.companions.append(asyncio.get_running_loop().create_task(counts.run()))
    metrics.watch(lambda: snapshot(bot, counts))
    metrics.switch_on()
    log.info("metrics on http://%s:%d/metrics", host, server.bound_port)
    return server


async def stop_metrics(server: MetricsServer | None) -> None:
    """Stop serving and recording."""
    if server is None:
        return
    metrics.switch_off()
    metrics.watch(None)
    await server.close()
