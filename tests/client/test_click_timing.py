"""Every click's answer is timed once in the click histogram: the ones a `Reply` sends and
the ones sent straight away (a refusal, a stopped table, a private view)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from simcord import Env

from bot import metrics
from tests.e2e.helpers import click_stored, open_table, snapshot


@pytest.fixture(autouse=True)
def recording() -> Iterator[None]:
    """Record metrics in these tests (a bot without a metrics server records nothing)."""
    metrics.switch_on()
    yield
    metrics.switch_off()


def answers_timed() -> float:
    """How many click answers the histogram holds so far."""
    for family in metrics.CLICK_ANSWER.collect():
        for sample in family.samples:
            if sample.name.endswith("_count"):
                return sample.value
    raise AssertionError("no count in the click histogram")


async def test_refusals_and_moves_are_each_timed_once(simcord_env: Env) -> None:
    """An out-of-turn click (answered by the error handler), a stranger's click and a
    move (answered through a Reply) and a private view each add exactly one answer to the
    histogram; a click on a stopped table's old message too."""
    table = await open_table(simcord_env, 3)
    other = next(p for p in table.players if str(p.id) != table.game.active_player)

    before = answers_timed()
    result = await table.click(other, "Take")
    assert result.ephemeral and result.response.content.startswith("It is not your turn")
    assert answers_timed() == before + 1

    stranger = table.guild.add_member(simcord_env.create_user("zed"))
    result = await table.click(stranger, "No thanks!")
    assert result.ephemeral and result.response.content.startswith("You are not at this table.")
    assert answers_timed() == before + 2

    result = await table.click(table.active(), "Take")
    assert result.acknowledged and not result.ephemeral
    assert answers_timed() == before + 3

    result = await table.click(other, "My chips")  # a private view, answered straight away
    assert result.ephemeral and "chips" in result.response.content.lower()
    assert answers_timed() == before + 4

    stale = snapshot(simcord_env, table.message)
    ids = {
        item["label"]: item["custom_id"] for row in stale.components for item in row["components"]
    }
    stopped = await table.players[0].slash(table.channel, "nothanks stop")
    assert stopped.response.content == "The table has been stopped."
    after_stop = answers_timed()
    late = await click_stored(table.players[1], stale, ids["Take"])
    assert late.ephemeral and late.response.content.startswith("This table was stopped by")
    assert answers_timed() == after_stop + 1
    assert simcord_env.errors == []
