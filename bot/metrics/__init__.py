"""Prometheus metrics of the running bot, with `prometheus_client` (docs/deployment.md#metrics).

The layers record through the small functions here (one line at each place), which do
nothing until `switch_on` (the bot calls it when CARDTABLE_METRICS_PORT is set): a bot
without a metrics server records nothing. What is a state rather than an event (open
tables, the lane's queues, the guard, gateway latency, the database's state) is read at
scrape time from the `Snapshot` the bot hands `watch`, so those places carry no hook; the
open tables there are a count the bot keeps from the database in the background (a
collector runs synchronously, so it never queries the database itself).

Labels stay bounded: games, statuses, paces, priorities, scopes, levels and shard
numbers; never a table, channel, guild or user id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client import REGISTRY, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

# Click answers and saves: Discord wants an answer within 3 s; most take milliseconds.
FAST_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)
# CPU of one decision or one picture: from a millisecond to a search's budget.
CPU_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
# How long a living DM waits behind the table messages: up to minutes on a busy token.
STALENESS_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

MOVES = Counter("cardtable_moves", "Table changes saved (moves, joins, starts...)", ["game"])
CLICK_ANSWER = Histogram(
    "cardtable_click_answer_seconds",
    "From a click reaching the bot to its answer (or deferral) being sent",
    buckets=FAST_BUCKETS,
)
SAVE = Histogram(
    "cardtable_database_save_seconds", "One table save's round trip", buckets=FAST_BUCKETS
)
UNCERTAIN = Counter(
    "cardtable_database_uncertain_commits",
    "Saves that ended without an answer, by how reading the row back settled them",
    ["settled"],
)
DECISION_CPU = Histogram(
    "cardtable_ai_decision_cpu_seconds",
    "CPU of one computer player's decision (in its worker), by game and level",
    ["game", "level"],
    buckets=CPU_BUCKETS,
)
WORKER_RESTARTS = Counter(
    "cardtable_ai_pool_restarts", "Thinking pools replaced after a worker broke or hung"
)
PAINT_CPU = Histogram(
    "cardtable_picture_paint_cpu_seconds",
    "CPU of painting one table picture (cache misses only)",
    buckets=CPU_BUCKETS,
)
REST_ANSWERS = Counter(
    "cardtable_rest_requests",
    "REST requests answered (the bot's token and interaction webhooks), by status class",
    ["status_class"],
)
RATE_LIMITED = Counter(
    "cardtable_rest_429", "429 answers from Discord, by X-RateLimit-Scope", ["scope"]
)
DM_STALENESS = Histogram(
    "cardtable_lane_dm_staleness_seconds",
    "How long a living DM's change waited in the lane before its edit started",
    buckets=STALENESS_BUCKETS,
)
REST_SENT = Counter(
    "cardtable_rest_requests_sent",
    "Requests with the bot's token, counted against its global limit (past the send gate)",
)
# How late a timed event starts: milliseconds on time, up to a restart's downtime.
LATENESS_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
)
EVENTS = Counter(
    "cardtable_timed_events",
    "Timed events carried out (computer moves, half-time pings, timeouts, lobby expiry)",
    ["kind"],
)
EVENT_LATENESS = Histogram(
    "cardtable_timed_event_lateness_seconds",
    "How long after its stored due time a timed event started being carried out",
    ["kind"],
    buckets=LATENESS_BUCKETS,
)
GATEWAY_RECONNECTS = Counter(
    "cardtable_gateway_reconnects", "Gateway connections resumed or made again"
)
HANDED_CLICKS = Counter(
    "cardtable_handed_clicks",
    "DM clicks handed between processes (several processes on PostgreSQL), by outcome: "
    "here the receiver's (claimed, unclaimed and answered here, not_handed) and the "
    "owner's (taken)",
    ["outcome"],
)

_on = False


def switch_on() -> None:
    """Start recording (the metrics server is about to serve what is recorded)."""
    global _on
    _on = True


def switch_off() -> None:
    """Stop recording (a bot without a metrics server, or a benchmark's baseline)."""
    global _on
    _on = False


def recording() -> bool:
    """Whether the hooks record."""
    return _on


def moved(game: str) -> None:
    """A change of a table of ``game`` was saved."""
    if _on:
        MOVES.labels(game).inc()


def answered(seconds: float) -> None:
    """A click was answered ``seconds`` after it reached the bot."""
    if _on:
        CLICK_ANSWER.observe(seconds)


def saved(seconds: float) -> None:
    """A table save took ``seconds``."""
    if _on:
        SAVE.observe(seconds)


def settled(how: str) -> None:
    """A save without an answer was settled: ``went_through`` or ``did_not``."""
    if _on:
        UNCERTAIN.labels(how).inc()


def decided(game: str, level: str, cpu: float) -> None:
    """A computer player's decision took ``cpu`` seconds of CPU."""
    if _on:
        DECISION_CPU.labels(game, level).observe(cpu)


def pool_restarted() -> None:
    """The thinking pool was replaced."""
    if _on:
        WORKER_RESTARTS.inc()


def painted(cpu: float) -> None:
    """A picture was painted with ``cpu`` seconds of CPU."""
    if _on:
        PAINT_CPU.observe(cpu)


def rest_answer(status: int, scope: str | None) -> None:
    """Discord answered a REST request with ``status`` (a 429 names its ``scope``)."""
    if _on:
        REST_ANSWERS.labels(f"{status // 100}xx").inc()
        if status == 429:
            RATE_LIMITED.labels(scope if scope in ("user", "global", "shared") else "none").inc()


def rest_sent() -> None:
    """A request with the bot's token left (past the send gate)."""
    if _on:
        REST_SENT.inc()


def dm_waited(seconds: float) -> None:
    """A living DM's edit started ``seconds`` after it was first due."""
    if _on:
        DM_STALENESS.observe(seconds)


def event_started(kind: str, late: float) -> None:
    """A timed event of ``kind`` started ``late`` seconds after its stored due time."""
    if _on:
        EVENT_LATENESS.labels(kind).observe(max(late, 0.0))


def event_done(kind: str) -> None:
    """A timed event of ``kind`` was carried out."""
    if _on:
        EVENTS.labels(kind).inc()


def handed(outcome: str) -> None:
    """A DM click handed between processes ended so (one of HANDED_OUTCOMES)."""
    if _on:
        HANDED_CLICKS.labels(outcome).inc()


def reconnected() -> None:
    """The gateway connected again (resumed, or a new session after a drop)."""
    if _on:
        GATEWAY_RECONNECTS.inc()


@dataclass(slots=True)
class Snapshot:
    """The bot's state at a scrape: what the gauges show."""

    # (game, status, pace) -> how many open tables, loaded or not (a cached count)
    tables: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    # how many tables are in memory now
    loaded: int = 0
    # priority name -> pending work in the lane
    queued: Mapping[str, int] = field(default_factory=dict)
    # priority name -> work the lane started since the process began
    started: Mapping[str, int] = field(default_factory=dict)
    # 401/403/429 over the guard's window, and its level (-1: none held back)
    invalid_requests: int = 0
    guard_level: int = -1
    # shard -> gateway heartbeat latency in seconds (only shards with a finite one)
    latencies: Mapping[int, float] = field(default_factory=dict)
    database_up: bool = True
    connected: bool = False


# The open statuses a table is counted under, shown at 0 when there is none.
OPEN_STATUSES = ("lobby", "running")
SCOPES = ("user", "global", "shared", "none")
# The kinds of timed event (bot.table.timers.TimedEvent.kind).
EVENT_KINDS = ("computer", "ping", "timeout", "expire")
# How a DM click handed between processes ended (bot.client.handoff).
HANDED_OUTCOMES = ("claimed", "unclaimed", "not_handed", "taken")


def prime(games: Mapping[str, tuple[str, tuple[str, ...]]]) -> None:
    """Create every labelled series at 0, so a scrape shows each family from the start
    (a dashboard's query finds its series, and rate() sees the first increment).
    ``games`` maps each game's name to its computer players' label (see `decided`) and
    the levels it offers."""
    for game, (thinker, levels) in games.items():
        MOVES.labels(game)
        for level in levels:
            DECISION_CPU.labels(thinker, level)
    for how in ("went_through", "did_not"):
        UNCERTAIN.labels(how)
    for scope in SCOPES:
        RATE_LIMITED.labels(scope)
    for status_class in ("2xx", "4xx", "5xx"):
        REST_ANSWERS.labels(status_class)
    for kind in EVENT_KINDS:
        EVENTS.labels(kind)
        EVENT_LATENESS.labels(kind)
    for outcome in HANDED_OUTCOMES:
        HANDED_CLICKS.labels(outcome)
    _STATE.games = tuple(games)


class _StateCollector(Collector):
    """The gauges read from the watched bot at each scrape."""

    def __init__(self) -> None:
        self.source: Callable[[], Snapshot] | None = None
        self.games: tuple[str, ...] = ()

    def collect(self) -> Iterator[Metric]:
        source = self.source
        if source is None:
            return
        snap = source()
        tables = GaugeMetricFamily(
            "cardtable_open_tables",
            "Open tables of this process's shards, loaded or not, by game, status and pace",
            labels=["game", "status", "pace"],
        )
        counts = {(game, status, "live"): 0 for game in self.games for status in OPEN_STATUSES}
        counts.update(snap.tables)
        for (game, status, pace), count in sorted(counts.items()):
            tables.add_metric([game, status, pace], count)
        yield tables
        yield GaugeMetricFamily(
            "cardtable_loaded_tables",
            "Tables in memory now (the others wait in the database for a click or due time)",
            value=snap.loaded,
        )
        queued = GaugeMetricFamily(
            "cardtable_lane_queue_depth", "Work waiting in the outbound lane", labels=["priority"]
        )
        for priority, count in snap.queued.items():
            queued.add_metric([priority], count)
        yield queued
        started = CounterMetricFamily(
            "cardtable_lane_work_started", "Work the outbound lane started", labels=["priority"]
        )
        for priority, count in snap.started.items():
            started.add_metric([priority], count)
        yield started
        yield GaugeMetricFamily(
            "cardtable_invalid_requests_window",
            "401/403/429 answers in the last 10 minutes (10,000 bring an IP ban)",
            value=snap.invalid_requests,
        )
        yield GaugeMetricFamily(
            "cardtable_invalid_request_guard_level",
            "The invalid-request guard's level (-1: nothing held back)",
            value=snap.guard_level,
        )
        latency = GaugeMetricFamily(
            "cardtable_gateway_latency_seconds", "Gateway heartbeat latency", labels=["shard"]
        )
        for shard, seconds in sorted(snap.latencies.items()):
            latency.add_metric([str(shard)], seconds)
        yield latency
        yield GaugeMetricFamily(
            "cardtable_gateway_connected",
            "1 while the gateway is connected",
            value=int(snap.connected),
        )
        yield GaugeMetricFamily(
            "cardtable_database_up",
            "1 while the database answers, 0 during an outage",
            value=int(snap.database_up),
        )


_STATE = _StateCollector()
REGISTRY.register(_STATE)


def watch(source: Callable[[], Snapshot] | None) -> None:
    """Read the gauges from ``source`` at each scrape (None: stop showing them)."""
    _STATE.source = source
