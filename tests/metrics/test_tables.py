"""The tables' gauges and the timed events' figures in a real scrape: every open table is
counted from the database (in memory or not), the loaded ones apart, and each timed event
carried out is counted with how late it started (SimCord, virtual clock)."""

from __future__ import annotations

import dataclasses

import pytest
from simcord import Env

from bot.client.bot import CardtableBot
from bot.client.watching import COUNT_EVERY
from bot.runtime.settings import Settings
from tests.e2e.helpers import message_by_id, open_table
from tests.metrics.test_scrape import metrics_off_afterwards, scrape

IDLE = 60.0  # seconds a table stays in memory unused, in these tests
LONG_TURN = 600  # its ping and deadline lie past IDLE: an untouched table goes idle
RUNNING = (("game", "nothanks"), ("pace", "live"), ("status", "running"))
LOBBY = (("game", "nothanks"), ("pace", "live"), ("status", "lobby"))

__all__ = ["metrics_off_afterwards"]  # the fixture, used here by name


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Metrics on a port the kernel picks; tables leave memory after a minute unused."""
    return dataclasses.replace(settings, metrics_port=0, table_idle_seconds=IDLE)


async def test_open_tables_are_counted_in_and_out_of_memory(simcord_env: Env) -> None:
    """Two running tables: both counted while loaded; after they leave memory the gauge
    still shows both (a count from the database), the loaded gauge shows none; one
    stopped is gone from the count by the next refresh."""
    bot = simcord_env.bot
    assert isinstance(bot, CardtableBot)
    first = await open_table(simcord_env, 3, turn_seconds=LONG_TURN, channel_name="one")
    await open_table(simcord_env, 3, guild=first.guild, turn_seconds=LONG_TURN, channel_name="two")
    await simcord_env.advance_time(COUNT_EVERY + 1)  # one background count at least
    loaded = await scrape(bot)
    assert loaded["cardtable_open_tables"][RUNNING] == 2
    assert loaded["cardtable_open_tables"][LOBBY] == 0
    assert loaded["cardtable_loaded_tables"] == {(): 2.0}

    await simcord_env.advance_time(IDLE + COUNT_EVERY + 1)
    assert len(bot.tables) == 0  # both out of memory
    unloaded = await scrape(bot)
    assert unloaded["cardtable_open_tables"][RUNNING] == 2
    assert unloaded["cardtable_loaded_tables"] == {(): 0.0}

    # Stopped out of memory (its row alone changes): the next count no longer has it.
    assert await bot.storage.get_table(first.table_id) is not None
    session = await bot.tables.load(first.table_id, first.channel.id)
    assert session is not None
    await session.change(lambda draft: draft.stop(first.players[0].id, True))
    await simcord_env.advance_time(COUNT_EVERY + 1)
    after = await scrape(bot)
    assert after["cardtable_open_tables"][RUNNING] == 1
    assert simcord_env.errors == []


async def test_timed_events_are_counted_with_their_lateness(simcord_env: Env) -> None:
    """A game against two computers: each computer move is a timed event counted by kind,
    and its lateness (virtual clock: none) is in the histogram, as many as were counted."""
    bot = simcord_env.bot
    assert isinstance(bot, CardtableBot)
    await bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("with-computers")
    ana = guild.add_member(simcord_env.create_user("Ana"))
    computer = (("kind", "computer"),)
    on_time = (("kind", "computer"), ("le", "0.1"))
    before = await scrape(bot)
    result = await ana.slash(channel, "nothanks start", bots=2)
    assert result.response is not None
    await ana.click(result.response, label="Start")
    session = bot.tables.in_channel(channel.id)
    assert session is not None
    for _ in range(6):
        if str(ana.id) in session.acting_players():
            shown = message_by_id(simcord_env, channel, result.response.id)
            await ana.click(shown, label="No thanks!")  # the computers' turns come
        else:
            await simcord_env.advance_time(2.5)
    after = await scrape(bot)

    def grew(name: str, labels: tuple[tuple[str, str], ...]) -> float:
        return after[name][labels] - before[name][labels]

    done = grew("cardtable_timed_events_total", computer)
    assert done >= 1
    started = grew("cardtable_timed_event_lateness_seconds_count", computer)
    # Each started event was carried out (none failed here), and none started late.
    assert started == done
    assert grew("cardtable_timed_event_lateness_seconds_bucket", on_time) == started
    assert simcord_env.errors == []
