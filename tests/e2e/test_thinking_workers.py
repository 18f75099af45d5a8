"""The bot thinks in worker processes when it is configured to (SimCord, a real pool)."""

from __future__ import annotations

import dataclasses

import pytest
from simcord import Env

from bot.runtime.settings import Settings
from tests.e2e.helpers import choose
from tests.e2e.test_turns import start_table


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The test settings with one thinking worker process, as on a two-core machine."""
    return dataclasses.replace(settings, ai_workers=1)


async def test_hard_computers_move_through_the_worker_process(simcord_env: Env) -> None:
    """The bot starts its worker with itself; hard computers' moves are thought out there."""
    thinking = simcord_env.bot.tables.thinking  # type: ignore[attr-defined]
    await thinking.ready()
    assert not thinking.in_process
    (worker,) = thinking.processes()
    assert worker.is_alive()
    table = await start_table(simcord_env, 1, bots=2, bot_level="hard", turn_seconds=600)
    human = str(table.players[0].id)

    def computer_moves() -> int:
        return sum(1 for move in table.game.history if table.game.players[move.seat] != human)

    while computer_moves() < 6:
        assert table.running
        if table.game.active_player == human:
            await table.click(table.players[0], choose(table.game))
        else:
            await simcord_env.advance_time(2.5)
    assert thinking.answered == computer_moves() and thinking.replacements == 0
    await simcord_env.bot.close()
    assert thinking.in_process and not worker.is_alive()
