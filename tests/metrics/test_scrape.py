"""`/metrics`, `/livez` and `/readyz` over HTTP from a bot playing games in SimCord."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import socket
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from simcord import Env

from bot import metrics
from bot.client.bot import CardtableBot
from bot.client.watching import COUNT_EVERY
from bot.runtime.settings import Settings
from tests.e2e.helpers import Table, choose, message_by_id, open_table
from tests.virtual_time import VirtualTimeEnv

# Families that must be in every scrape of a serving bot (units in their names).
FAMILIES = {
    "cardtable_open_tables",
    "cardtable_loaded_tables",
    "cardtable_timed_events",
    "cardtable_timed_event_lateness_seconds",
    "cardtable_moves",
    "cardtable_click_answer_seconds",
    "cardtable_lane_queue_depth",
    "cardtable_lane_work_started",
    "cardtable_rest_requests_sent",
    "cardtable_rest_429",
    "cardtable_invalid_requests_window",
    "cardtable_invalid_request_guard_level",
    "cardtable_lane_dm_staleness_seconds",
    "cardtable_database_save_seconds",
    "cardtable_database_up",
    "cardtable_database_uncertain_commits",
    "cardtable_ai_decision_cpu_seconds",
    "cardtable_ai_pool_restarts",
    "cardtable_picture_paint_cpu_seconds",
    "cardtable_gateway_latency_seconds",
    "cardtable_gateway_connected",
    "cardtable_gateway_reconnects",
    "process_cpu_seconds",
    "process_resident_memory_bytes",
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The usual test settings with the metrics server on a port the kernel picks."""
    return dataclasses.replace(settings, metrics_port=0)


@pytest.fixture(autouse=True)
def metrics_off_afterwards() -> Iterator[None]:
    """SimCord never closes the bot: stop recording, as its close() would."""
    yield
    metrics.switch_off()
    metrics.watch(None)


def get(bot: CardtableBot, path: str) -> tuple[int, str]:
    """GET a path of the bot's metrics server (blocking: call it in a thread)."""
    assert bot.metrics_server is not None
    url = f"http://127.0.0.1:{bot.metrics_server.bound_port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


async def scrape(bot: CardtableBot) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Every sample of a scrape over HTTP, parsed by prometheus_client's own parser:
    sample name -> sorted labels -> value."""
    status, text = await asyncio.to_thread(get, bot, "/metrics")
    assert status == 200
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def families(samples: dict[str, dict[tuple[tuple[str, str], ...], float]]) -> set[str]:
    """The family names behind the sample names (suffixes of counters and histograms off)."""
    return {re.sub(r"_(total|created|bucket|count|sum)$", "", name) for name in samples}


def total(samples: dict[str, dict[tuple[tuple[str, str], ...], float]], name: str) -> float:
    """The sum of a sample over all its labels (0 if absent)."""
    return sum(samples.get(name, {}).values())


async def play_to_end(table: Table) -> int:
    """Click through the game; the number of clicks."""
    clicks = 0
    while table.running:
        result = await table.click(table.active(), choose(table.game))
        assert result.acknowledged and not result.ephemeral
        clicks += 1
    return clicks


async def test_a_game_moves_the_metrics(simcord_env: Env) -> None:
    """After a No Thanks! game and a few moves against a computer, a scrape over HTTP (parsed
    by the library's parser) shows the moves counted, the click histogram filled, the
    pictures painted, the computer's decisions, the saves and every family; labels carry
    no ids."""
    bot = simcord_env.bot
    assert isinstance(bot, CardtableBot)
    before = await scrape(bot)
    assert families(before) >= FAMILIES, FAMILIES - families(before)
    table = await open_table(simcord_env, 3)
    clicks = await play_to_end(table)
    # A second table with two computers (a searching level): their decisions are timed.
    channel = table.guild.create_text_channel("with-computers")
    ana = table.players[0]
    result = await ana.slash(channel, "nothanks start", bots=2, bot_level="hard")
    assert result.response is not None
    await ana.click(result.response, label="Start")
    session = bot.tables.in_channel(channel.id)
    assert session is not None
    for _ in range(6):
        if str(ana.id) in session.acting_players():
            shown = message_by_id(simcord_env, channel, result.response.id)
            await ana.click(shown, label="No thanks!")  # the turn passes on
        else:
            await simcord_env.advance_time(2.5)
    after = await scrape(bot)

    moves = total(after, "cardtable_moves_total") - total(before, "cardtable_moves_total")
    # Every click of the game was a saved change, and so were the joins and the starts.
    assert moves >= clicks + 4
    answered = total(after, "cardtable_click_answer_seconds_count") - total(
        before, "cardtable_click_answer_seconds_count"
    )
    assert answered >= clicks
    saves = total(after, "cardtable_database_save_seconds_count") - total(
        before, "cardtable_database_save_seconds_count"
    )
    assert saves >= moves
    assert total(after, "cardtable_picture_paint_cpu_seconds_count") > total(
        before, "cardtable_picture_paint_cpu_seconds_count"
    )
    decisions = after.get("cardtable_ai_decision_cpu_seconds_count", {})
    assert decisions.get((("game", "nothanks"), ("level", "hard")), 0) >= 1
    open_tables = after["cardtable_open_tables"]
    assert open_tables[(("game", "nothanks"), ("pace", "live"), ("status", "running"))] >= 1
    assert after["cardtable_database_up"] == {(): 1.0}
    assert after["cardtable_gateway_connected"] == {(): 1.0}
    # Bounded labels: no snowflake (a table, channel, guild or user id) anywhere.
    for name, series in after.items():
        for labels in series:
            for key, value in labels:
                assert not re.fullmatch(r"\d{6,}", value), (name, key, value)
    assert simcord_env.errors == []


async def test_liveness_and_readiness_over_http(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/livez answers 200 while the loop runs; /readyz 200 when ready, 503 naming the
    database during an outage, and 200 again once it is back."""
    bot = simcord_env.bot
    assert isinstance(bot, CardtableBot)
    await simcord_env.settle()
    assert await asyncio.to_thread(get, bot, "/livez") == (200, "alive\n")
    assert await asyncio.to_thread(get, bot, "/readyz") == (200, "ready\n")

    async def locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    # The beat an outage triggers probes the database: it must stay down meanwhile.
    monkeypatch.setattr(bot.storage, "probe", locked)
    bot.storage.mark_down(sqlite3.OperationalError("database is locked"))
    assert await asyncio.to_thread(get, bot, "/livez") == (200, "alive\n")
    assert await asyncio.to_thread(get, bot, "/readyz") == (503, "not ready: database down\n")
    assert (await scrape(bot))["cardtable_database_up"] == {(): 0.0}
    monkeypatch.undo()
    bot.storage.mark_up()
    assert await asyncio.to_thread(get, bot, "/readyz") == (200, "ready\n")


def test_no_port_no_server_and_nothing_recorded(settings: Settings) -> None:
    """Without CARDTABLE_METRICS_PORT nothing listens and the hooks record nothing."""
    plain = dataclasses.replace(settings, metrics_port=None)
    assert plain.metrics_port is None
    metrics.switch_off()
    before = metrics.MOVES.labels("nothanks")._value.get()
    metrics.moved("nothanks")
    assert metrics.MOVES.labels("nothanks")._value.get() == before
    metrics.switch_on()
    metrics.moved("nothanks")
    assert metrics.MOVES.labels("nothanks")._value.get() == before + 1


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another socket listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


async def test_a_taken_port_leaves_the_bot_running_without_metrics(
    make_bot: Callable[[], CardtableBot], taken_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """A metrics port another process holds: one error line naming it, and the bot plays
    on without a metrics server (its tables matter more than their figures)."""
    bot = make_bot()
    bot.settings = dataclasses.replace(bot.settings, metrics_port=taken_port)
    env = VirtualTimeEnv(bot, shard_count=1)
    await env.start()
    try:
        assert bot.metrics_server is None
        assert not metrics.recording()
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1
        assert errors[0].startswith(f"cannot serve metrics on 127.0.0.1:{taken_port} (")
        assert errors[0].endswith("): running without them")
        assert bot.is_ready() and bot.gateway_connected()
    finally:
        await env.shutdown()


async def test_open_tables_are_counted_by_their_pace(simcord_env: Env) -> None:
    """A live table and a 24 h table are counted (from the database) under pace "live" and
    "turn_based": bounded labels, never a number of seconds."""
    bot = simcord_env.bot
    assert isinstance(bot, CardtableBot)
    await bot.tree.sync()
    guild = simcord_env.create_guild()
    members = [guild.add_member(simcord_env.create_user(n)) for n in ("ana", "ben")]
    for name, pace in (("live-games", "live"), ("slow-games", "24h")):
        channel = guild.create_text_channel(name)
        result = await members[0].slash(channel, "nothanks start", pace=pace, bots=1)
        assert result.response is not None and not result.ephemeral
        await members[1].click(result.response, label="Join")
        await members[0].click(result.response, label="Start")
    await simcord_env.advance_time(COUNT_EVERY + 1)  # one background count at least
    samples = (await scrape(bot))["cardtable_open_tables"]
    running = {
        dict(labels)["pace"]: count
        for labels, count in samples.items()
        if dict(labels)["status"] == "running" and dict(labels)["game"] == "nothanks"
    }
    assert running == {"live": 1, "turn_based": 1}
    assert simcord_env.errors == []
