"""A game review is worked out in the thinking pool's worker process, not in the bot's."""

from __future__ import annotations

import dataclasses

import pytest
from simcord import Env

from bot.runtime.settings import Settings
from bot.table.review import Budget
from tests.e2e.helpers import choose, open_table


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The test settings with one thinking worker process, as on a two-core machine."""
    return dataclasses.replace(settings, ai_workers=1)


async def test_a_review_thinks_in_the_worker_process(simcord_env: Env) -> None:
    """Every judgement of a review is answered by the worker: one per decision judged,
    and one per decision the expert looked at."""
    thinking = simcord_env.bot.tables.thinking  # type: ignore[attr-defined]
    await thinking.ready()
    assert not thinking.in_process
    reviews = simcord_env.bot.reviews  # type: ignore[attr-defined]
    reviews.budget = Budget(samples=8, confirm=2, expert_iterations=300)
    table = await open_table(simcord_env, 3)
    while table.running:
        await table.click(table.active(), choose(table.game))
    before = thinking.answered
    asked = await table.players[0].slash(table.channel, "nothanks review")
    assert asked.ephemeral and asked.response.embeds
    review = reviews.cached(table.table_id, str(table.players[0].id))
    assert review is not None and review.decisions > 0
    judged = thinking.answered - before
    assert review.decisions <= judged <= review.decisions + 2
    assert thinking.replacements == 0
    assert simcord_env.errors == []
