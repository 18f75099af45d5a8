"""Pictures compared with golden copies kept in tests/render/images/golden.

A few strongly different pixels are tolerated (anti-aliasing of another FreeType build);
a card, a name or a number drawn elsewhere or differently changes hundreds. To accept a deliberate
change of the pictures, run with UPDATE_GOLDEN=1 and look at the new files.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from bot.render.images import nothanks, rage
from tests.render.images.scenes import (
    GOLDEN,
    decode,
    facts,
    finished_nothanks,
    many_cards_view,
    mid_trick,
    rage_game,
    strong_differences,
)


def nothanks_table() -> bytes:
    """Five players with runs, open chips, English."""
    view = many_cards_view(5)
    return nothanks.table_png(nothanks.table_scene(facts("nothanks", 5), view, "en"))


def rage_trick() -> bytes:
    """Eight players, a trick of five cards, German."""
    state = rage_game(8, until=lambda s: mid_trick(s, 5))
    return rage.trick_png(rage.trick_scene(facts("rage", 8), state.view(None), "de"))


def rage_sheet() -> bytes:
    """Eight players after a whole game, Russian."""
    state = rage_game(8, until=lambda s: s.is_over)
    return rage.sheet_png(rage.sheet_scene(facts("rage", 8), state.view(None), "ru"))


def rage_final() -> bytes:
    """Eight players' whole score sheet after the game, German."""
    state = rage_game(8, until=lambda s: s.is_over)
    return rage.final_sheet_png(rage.final_sheet_scene(facts("rage", 8), state.view(None), "de"))


def nothanks_final() -> bytes:
    """The final board of seven players, Russian."""
    view = finished_nothanks(7).view(None)
    return nothanks.final_png(nothanks.final_scene(facts("nothanks", 7), view, "ru"))


CASES: dict[str, Callable[[], bytes]] = {
    "nothanks-table": nothanks_table,
    "rage-trick": rage_trick,
    "rage-sheet": rage_sheet,
    "rage-final": rage_final,
    "nothanks-final": nothanks_final,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_picture_matches_its_golden_copy(name: str) -> None:
    """The picture is its golden copy within anti-aliasing tolerance."""
    png = CASES[name]()
    path = GOLDEN / f"{name}.png"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_bytes(png)
    golden = decode(path.read_bytes())
    assert strong_differences(decode(png), golden) <= 40
