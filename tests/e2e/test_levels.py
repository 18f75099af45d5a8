"""Computer levels per game: No Thanks! offers expert, Rage stops at hard."""

from __future__ import annotations

from simcord import Env

from tests.e2e.helpers import message_by_id


def select_values(message: object) -> list[str]:
    """The option values of the first select menu on a message."""
    for row in message.components:  # type: ignore[attr-defined]
        for item in row.children:
            if item.type.value == 3:
                return [option.value for option in item.options]
    raise AssertionError("the message has no select menu")


async def test_expert_computers_are_offered_at_no_thanks_tables_only(simcord_env: Env) -> None:
    """`/nothanks start` seats an expert computer and its lobby offers expert; Rage's does not."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    games, cards = guild.create_text_channel("games"), guild.create_text_channel("cards")
    ana = guild.add_member(simcord_env.create_user("ana"))
    result = await ana.slash(games, "nothanks start", bots=1, bot_level="expert")
    session = simcord_env.bot.tables.in_channel(games.id)
    assert session is not None and session.meta.computers == {"-1": "expert"}
    lobby = message_by_id(simcord_env, games, result.response.id)
    assert select_values(lobby) == ["easy", "normal", "hard", "expert"]
    rage = await ana.slash(cards, "rage start")
    rage_lobby = message_by_id(simcord_env, cards, rage.response.id)
    assert select_values(rage_lobby) == ["easy", "normal", "hard"]
    assert simcord_env.errors == []
