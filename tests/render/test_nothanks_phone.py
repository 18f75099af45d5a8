"""The live No Thanks! table at a phone's size, with pictures on: whose turn is said once."""

from __future__ import annotations

import pytest

from bot.engines.nothanks import NoThanksGame
from bot.i18n import t
from bot.render import nothanks
from bot.render.table import public_message
from bot.table.spec import PublicTable, TableFacts

LOCALES = ["en-US", "de", "ru", "it"]
PLAYERS = ["301", "302", "-1"]  # two people and a computer
NAMES = {"301": "Ana", "302": "Bo"}


def facts(names: dict[str, str] = NAMES) -> TableFacts:
    """A running three-seat table: Ana, Bo and a normal computer."""
    return TableFacts(
        id=7,
        game="nothanks",
        status="running",
        host_id=301,
        seats=(301, 302, -1),
        options={},
        names=dict(names),
        computers={"-1": "normal"},
        min_players=3,
        max_players=7,
    )


def game_at(active: str, *, open_chips: bool = False) -> NoThanksGame:
    """A new game passed along until ``active`` is to act."""
    game = NoThanksGame.new(PLAYERS, seed=11, open_chips=open_chips)
    while game.active_player != active:
        game.apply(game.active_player, "pass")
    return game


@pytest.mark.parametrize("locale", LOCALES)
def test_a_persons_turn_is_said_once_in_the_content(locale: str) -> None:
    """A person's turn: the content's line pings them, and the embed does not say it again."""
    table = facts()
    view = game_at("302").view(None)
    fields = public_message(
        PublicTable(table, view), nothanks.NoThanksRenderer(), locale, pictures=True
    )
    assert table.mention("302") in (fields["content"] or "")
    description = fields["embed"].description or ""
    assert "<@" not in description
    turn = t("nothanks.game.turn", locale, player=table.mention("302"))
    assert turn not in description


@pytest.mark.parametrize("locale", LOCALES)
def test_a_computers_turn_is_said_in_the_embed(locale: str) -> None:
    """A computer's turn pings nobody, so the embed says whose turn it is."""
    table = facts()
    view = game_at("-1").view(None)
    fields = public_message(
        PublicTable(table, view), nothanks.NoThanksRenderer(), locale, pictures=True
    )
    assert "<@" not in (fields.get("content") or "")
    description = fields["embed"].description or ""
    assert t("nothanks.game.turn", locale, player=table.mention("-1")) in description


def test_open_chips_names_are_short_enough_for_seven() -> None:
    """The open chips' line cuts a long name to its first words (the picture has it whole)."""
    long = "Anna-Lena Schmidt-Vogel von Hohenstein"
    table = facts({"301": long, "302": "Bo"})
    view = game_at("302", open_chips=True).view(None)
    lines = nothanks.moving_lines(table, view, "en-US")
    (chips,) = [line for line in lines if line.startswith("🪙")]
    assert long not in chips and "Anna-Lena" in chips and "Bo 11" in chips
