"""Play by post across restarts: the "your turn" notices' gap, their closing and the daily
summaries are remembered in the database, and a notice owed when the bot stopped goes
out at its time, loaded by the scheduler (SimCord, virtual clock, SQLite and PostgreSQL)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import discord
import pytest
from simcord import Env

from bot.client.bot import CardtableBot
from bot.client.publishing.notices import (
    NOTICE_GAP,
    NOTICE_RETRY,
    RECENTLY,
    RETRY_DELAYS,
    SUMMARY_EVERY,
)
from bot.runtime.settings import Settings
from bot.table.timers import owed_notices
from tests.backends import Backend
from tests.e2e.helpers import Table
from tests.e2e.test_play_by_post import (
    HOUR,
    notices,
    pass_time,
    turn_based_table,
    until_unloaded,
    wait_for_notice,
)


@pytest.fixture
def idle() -> float | None:
    """Seconds a table stays in memory unused (None: the bot's default); a test may set it."""
    return None


@pytest.fixture
def settings(settings: Settings, backend: Backend, idle: float | None) -> Settings:
    """The test settings on each storage in turn: a SQLite file, then PostgreSQL."""
    changes: dict[str, object] = {}
    if backend.name == "postgres":
        changes["database_url"] = str(backend.target)
    if idle is not None:
        changes["table_idle_seconds"] = idle
    return dataclasses.replace(settings, **changes)  # type: ignore[arg-type]


async def restart(env: Env, make_bot: Callable[[], CardtableBot]) -> None:
    """The bot process ends (its database connections close, so its shard's claim is
    free) and a fresh one starts on the same database."""
    await env.bot.storage.close()
    await env.restart_bot(make_bot())


def live_notices(actor: object) -> list[discord.Message]:
    """A player's notices that still carry buttons."""
    return [m for m in notices(actor) if m.components]


def edits_of(env: Env, message: discord.Message) -> int:
    """How many times the bot edited a DM outside a click's answer (through the lane)."""
    path = f"/channels/{message.channel.id}/messages/{message.id}"
    return len([r for r in env.http_requests if r.method == "PATCH" and r.path == path])


async def advance_to(env: Env, at: float) -> None:
    """Move the virtual clock to ``at`` on the tables' clock (never backwards)."""
    await pass_time(env, max(at - env.bot.tables.clock(), 0.0))


async def sent_at(table: Table, actor: object) -> float:
    """When the actor's last notice at the table went out, as its row remembers."""
    stored = await table.reload()
    return stored.meta.notice_sent[str(actor.id)]  # type: ignore[attr-defined]


async def test_a_notice_waiting_for_its_gap_goes_out_after_a_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A player takes from their notice and goes again: the next notice waits for the gap.
    The bot restarts meanwhile; with no click and no load by the test, the notice goes out
    once the gap after the first has passed, not before; the first notice, answered by its
    click, is not edited again."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    first = await wait_for_notice(simcord_env, actor)
    sent = await sent_at(table, actor)
    answer = await actor.user.click(first, label="Take")
    assert not answer.ephemeral, answer.response.content
    assert table.game.active_player == str(actor.id)  # a Take: their turn again
    await restart(simcord_env, make_bot)
    await advance_to(simcord_env, sent + NOTICE_GAP - 10)
    assert not live_notices(actor)
    await advance_to(simcord_env, sent + NOTICE_GAP + 10)
    (second,) = live_notices(actor)
    assert second.id != first.id and len(notices(actor)) == 2
    assert "Your turn" in second.content
    done = next(m for m in notices(actor) if m.id == first.id)
    assert done.content.startswith("✅ Done") and edits_of(simcord_env, first) == 0


async def test_a_turn_after_a_restart_keeps_the_gap_of_an_earlier_notice(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A notice goes out, the bot restarts, and the player takes from the channel (their
    turn again): the next notice waits for the gap after the one sent before the restart,
    not only RECENTLY after the move."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    first = await wait_for_notice(simcord_env, actor)
    sent = await sent_at(table, actor)
    await restart(simcord_env, make_bot)
    result = await table.click(actor, "Take")
    assert not result.ephemeral, result.response.content
    assert table.game.active_player == str(actor.id)
    await simcord_env.advance_time(RECENTLY + 5)
    assert not live_notices(actor)  # within the gap of the notice before the restart
    closed = next(m for m in notices(actor) if m.id == first.id)
    assert closed.content.startswith("✅ Done") and not closed.components
    await advance_to(simcord_env, sent + NOTICE_GAP - 10)
    assert not live_notices(actor)
    await advance_to(simcord_env, sent + NOTICE_GAP + 10)
    assert len(live_notices(actor)) == 1 and len(notices(actor)) == 2


async def test_a_closed_notice_is_not_edited_again_after_a_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A notice whose turn was played from the channel is edited to "done" once; the
    table remembers it closed, so the restarted bot, loading and changing the table,
    leaves it alone (and closes the next player's notice once)."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    first = await wait_for_notice(simcord_env, actor)
    await table.click(actor, "No thanks!")
    await simcord_env.advance_time(10)
    closed = next(m for m in notices(actor) if m.id == first.id)
    assert closed.content.startswith("✅ Done") and not closed.components
    assert edits_of(simcord_env, first) == 1
    stored = await table.reload()
    assert stored.meta.turn_notices[str(actor.id)][1] == 0  # remembered closed
    following = table.active()
    second = await wait_for_notice(simcord_env, following)
    await restart(simcord_env, make_bot)
    result = await table.click(following, "No thanks!")  # loads the table, and changes it
    assert not result.ephemeral, result.response.content
    await simcord_env.advance_time(NOTICE_GAP)
    assert edits_of(simcord_env, first) == 1
    assert edits_of(simcord_env, second) == 1  # closed by the new process, once


def summaries(actor: Any) -> list[discord.Message]:
    """The daily summaries in a player's DMs."""
    return [m for m in actor.user.dm_channel.history() if "daily summary" in m.content]


async def first_daily_summary(env: Env) -> tuple[Table, Any, float]:
    """A 72 h table (its half-time reminder is 36 h away) whose first player chose daily
    summaries and got their first: the table, the player, when it went out (stored)."""
    if "cogs.cardtable" not in env.bot.extensions:
        await env.bot.load_extension("cogs.cardtable")
    table = await turn_based_table(env, 3, pace="72h")
    actor = table.active()
    await actor.user.slash("cardtable notify", when="daily")
    await env.advance_time(RECENTLY + 5)
    assert len(summaries(actor)) == 1
    first = await env.bot.storage.get_user_summary_at(actor.id)
    assert first is not None
    return table, actor, first


async def test_a_daily_summary_is_not_sent_twice_in_a_day_across_a_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A player on daily summaries gets one; after a restart their next turn sends none
    until a day after the first (its time is kept in user_settings), then one more. A
    turn whose notice goes as a summary does not keep the table due."""
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    chosen = await actor.user.slash("cardtable notify", when="daily")
    assert chosen.ephemeral

    await simcord_env.advance_time(RECENTLY + 5)
    assert len(summaries(actor)) == 1 and not notices(actor)
    first = await simcord_env.bot.storage.get_user_summary_at(actor.id)
    assert first is not None
    stored = await table.reload()
    turn = stored.meta.turn
    assert turn is not None
    assert stored.meta.turn_notices[str(actor.id)] == [0, 0, turn.since]  # none goes
    assert stored.record.due_at == turn.deadline - stored.turn_seconds() / 2  # half time
    await restart(simcord_env, make_bot)
    if "cogs.cardtable" not in simcord_env.bot.extensions:
        await simcord_env.bot.load_extension("cogs.cardtable")
    result = await table.click(actor, "Take")  # their turn again, after the restart
    assert not result.ephemeral, result.response.content
    await simcord_env.advance_time(RECENTLY + 5)
    assert len(summaries(actor)) == 1 and not notices(actor)
    await advance_to(simcord_env, first + SUMMARY_EVERY - HOUR)
    assert len(summaries(actor)) == 1
    await advance_to(simcord_env, first + SUMMARY_EVERY + 60)
    assert len(summaries(actor)) == 2 and table.session.jump_url in summaries(actor)[1].content


async def test_a_daily_summary_comes_a_day_later_after_a_restart_with_no_table_change(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """After a restart the next daily summary is planned from the stored time at start-up,
    so it comes a day after the first even though none of the person's tables changes or
    loads meanwhile (a 72 h table: its half-time reminder is 36 h away)."""
    table, actor, first = await first_daily_summary(simcord_env)
    await restart(simcord_env, make_bot)
    assert simcord_env.bot.tables.get(table.table_id) is None  # nothing of it is due soon
    await advance_to(simcord_env, first + SUMMARY_EVERY - HOUR)
    assert len(summaries(actor)) == 1
    await advance_to(simcord_env, first + SUMMARY_EVERY + 60)
    assert len(summaries(actor)) == 2 and table.session.jump_url in summaries(actor)[1].content


async def test_a_daily_summary_sent_by_another_process_moves_the_next_one(
    simcord_env: Env,
) -> None:
    """Before a daily summary goes it reads the stored time again: one sent meanwhile by
    another process (stored as that process would) puts this one off to a day after it,
    so nobody gets two summaries in a day from two processes."""
    _, actor, first = await first_daily_summary(simcord_env)
    elsewhere = first + 6 * HOUR
    await advance_to(simcord_env, elsewhere)
    await simcord_env.bot.storage.set_user_summary_at(actor.id, elsewhere)
    await advance_to(simcord_env, first + SUMMARY_EVERY + 60)
    assert len(summaries(actor)) == 1  # the other process's summary was the day's
    await advance_to(simcord_env, elsewhere + SUMMARY_EVERY + 60)
    assert len(summaries(actor)) == 2


@pytest.mark.parametrize("idle", [60.0])
async def test_an_owed_notice_of_a_table_out_of_memory_goes_out_at_its_time(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A notice owed at the end of its gap, its table out of memory when the bot
    restarts: start-up leaves the table in its row, and the scheduler loads it in time
    for the notice to go out at the end of the gap, not earlier and not at the half-time
    reminder hours later."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    await wait_for_notice(simcord_env, actor)
    sent = await sent_at(table, actor)
    await table.click(actor, "Take")
    assert table.game.active_player == str(actor.id)
    await until_unloaded(simcord_env, table)
    stored = await simcord_env.bot.storage.get_table(table.table_id)
    assert stored is not None and stored.due_at == pytest.approx(sent + NOTICE_GAP)
    await restart(simcord_env, make_bot)
    assert simcord_env.bot.tables.get(table.table_id) is None  # not due within its idle time
    await advance_to(simcord_env, sent + NOTICE_GAP - 10)
    assert simcord_env.bot.tables.get(table.table_id) is None
    assert not live_notices(actor)
    await advance_to(simcord_env, sent + NOTICE_GAP + 10)
    assert len(live_notices(actor)) == 1 and len(notices(actor)) == 2
    remembered = await table.reload()
    assert remembered.meta.notice_sent[str(actor.id)] >= sent + NOTICE_GAP


async def test_a_failed_notice_is_tried_again_and_a_refused_one_keeps_nothing_due(
    simcord_env: Env,
) -> None:
    """A notice that meets a server error is still owed and goes out RETRY_DELAYS[0] later; one
    Discord refuses for good (a 400) is not tried again for that turn, and the turn does not
    keep the table due (its stored due time is the half-time reminder)."""
    table = await turn_based_table(simcord_env, 3)
    actor = table.active()
    dm = f"/channels/{actor.user.dm_channel.id}/messages"
    simcord_env.inject_error("POST", dm, status=500)
    await simcord_env.advance_time(RECENTLY + 1)
    assert not notices(actor)
    stored = await table.reload()
    assert str(actor.id) in owed_notices(stored)  # still owed after the failure
    await simcord_env.advance_time(RETRY_DELAYS[0])
    assert len(live_notices(actor)) == 1
    seats = table.game.players
    following = table.actor(seats[(seats.index(str(actor.id)) + 1) % len(seats)])
    following_dm = f"/channels/{following.user.dm_channel.id}/messages"
    simcord_env.inject_error("POST", following_dm, status=400, code=50035, times=None)
    await table.click(actor, "No thanks!")
    assert table.active() is following
    await simcord_env.advance_time(RECENTLY + 5)
    await simcord_env.advance_time(NOTICE_RETRY * 3)
    assert not notices(following)
    stored = await table.reload()
    turn = stored.meta.turn
    assert turn is not None and stored.meta.turn_notices[str(following.id)] == [0, 0, turn.since]
    assert stored.record.due_at == turn.deadline - stored.turn_seconds() / 2
    tries = [
        r
        for r in simcord_env.http_requests
        if r.method == "POST"
        and r.path == following_dm
        and "Your turn" in (r.json or {}).get("content", "")
    ]
    assert len(tries) == 1  # refused once, never tried again for this turn
