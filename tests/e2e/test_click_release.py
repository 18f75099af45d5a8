"""A handled table click leaves no reference cycle behind for the cyclic collector."""

from __future__ import annotations

import gc
from typing import Any

import discord
import pytest
from simcord import Env

from tests.e2e.helpers import choose, open_table


async def test_a_handled_click_is_freed_by_reference_counting(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a move the click's response no longer points back at its interaction."""
    table = await open_table(simcord_env, 3)
    bot = simcord_env.bot
    seen: list[discord.Interaction] = []
    route = bot.router.route

    async def recording(interaction: discord.Interaction, click: Any, **how: Any) -> None:
        seen.append(interaction)
        await route(interaction, click, **how)

    monkeypatch.setattr(bot.router, "route", recording)
    moves = table.session.meta.turn.move
    result = await table.click(table.active(), choose(table.game))
    assert result.acknowledged and not result.ephemeral
    assert table.session.meta.turn.move == moves + 1  # the move was made, then released
    [interaction] = seen
    response = interaction.response
    assert response.is_done()  # still answered: a late reply must be a follow-up
    assert response._parent is None
    assert not any(referent is interaction for referent in gc.get_referents(response))
