"""What the metrics server shows of this bot: its state at a scrape, and the server itself.

The families and the server are in `bot.metrics`; this module only reads the bot (its
tables, lane, guard, gateway and database) into a `Snapshot`, and starts the server when
CARDTABLE_METRICS_PORT is set.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from typing import Protocol

from bot import metrics
from bot.client.outbound.guard import InvalidRequests
from bot.client.outbound.lane import Lane, Priority
from bot.metrics.server import MetricsServer
from bot.runtime.settings import Settings
from bot.table.meta import PACES, pace_name
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


# A pace outside bot.table.meta.PACES (none is offered today) is counted as this, so the
# label keeps its few values.
OTHER_PACE = "other"


def pace_label(seconds: int) -> str:
    """A table's pace as the gauge's label: a name of PACES (live, 1h, 12h, 24h, 72h)."""
    name = pace_name(seconds)
    return name if name in PACES else OTHER_PACE


def snapshot(bot: Watched) -> metrics.Snapshot:
    """The bot's state as the gauges show it."""
    tables = getattr(bot, "tables", None)
    counts: Counter[tuple[str, str, str]] = Counter()
    if tables is not None:
        for session in tables:
            pace = pace_label(session.meta.pace)
            counts[(session.spec.name, str(session.record.status), pace)] += 1
    storage = getattr(bot, "storage", None)
    latencies = {
        shard: seconds
        for shard, seconds in bot.latencies
        if math.isfinite(seconds) and not bot.is_closed()
    }
    return metrics.Snapshot(
        tables=counts,
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
    metrics.watch(lambda: snapshot(bot))
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
