"""Every table picture reads on a phone: at the width a phone shows it (cards.SHOWN_WIDTH,
measured in tests/e2e/test_picture_width.py), no text is smaller than 12 CSS px and no
name is cut below 12 characters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.render.images import cards, fonts, nothanks, rage
from tests.render.images.scenes import (
    decode,
    facts,
    finished_nothanks,
    many_cards_view,
    mid_trick,
    nothanks_game,
    rage_game,
)

SMALLEST_CSS_PX = 12
NAME_KEPT = 12  # characters of a name that are always shown


Painting = tuple[Any, Callable[[Any], bytes]]  # a scene and its painter


def nothanks_table(locale: str) -> Painting:
    """Seven players, the widest rows, open chips."""
    view = many_cards_view(7)
    return nothanks.table_scene(facts("nothanks", 7), view, locale), nothanks.table_png


def nothanks_early(locale: str) -> Painting:
    """Four players early on, chips hidden."""
    view = nothanks_game(4, 9, open_chips=False).view(None)
    return nothanks.table_scene(facts("nothanks", 4), view, locale), nothanks.table_png


def nothanks_final(locale: str) -> Painting:
    """The final board of five players."""
    view = finished_nothanks(5).view(None)
    return nothanks.final_scene(facts("nothanks", 5), view, locale), nothanks.final_png


def rage_trick(locale: str) -> Painting:
    """Eight players, a trick of seven cards (two lines)."""
    state = rage_game(8, until=lambda s: mid_trick(s, 7))
    return rage.trick_scene(facts("rage", 8), state.view(None), locale), rage.trick_png


def rage_sheet(locale: str) -> Painting:
    """Eight players after the whole game."""
    state = rage_game(8, until=lambda s: s.is_over)
    return rage.sheet_scene(facts("rage", 8), state.view(None), locale), rage.sheet_png


def rage_final(locale: str) -> Painting:
    """The final picture of eight players: the whole score sheet."""
    state = rage_game(8, until=lambda s: s.is_over)
    return rage.final_sheet_scene(facts("rage", 8), state.view(None), locale), rage.final_sheet_png


PICTURES: dict[str, Callable[[str], Painting]] = {
    "nothanks-table": nothanks_table,
    "nothanks-early": nothanks_early,
    "nothanks-final": nothanks_final,
    "rage-trick": rage_trick,
    "rage-sheet": rage_sheet,
    "rage-final": rage_final,
}


def names_in(scene: Any) -> list[str]:
    """The players' names a scene shows."""
    if isinstance(scene, rage.TrickScene):
        return [laid.name for laid in scene.cards]
    if isinstance(scene, rage.SheetScene | rage.FinalSheetScene):
        return list(scene.names)
    return [row.name for row in scene.rows]


def painted_texts(
    monkeypatch: pytest.MonkeyPatch, painting: Painting
) -> tuple[list[tuple[str, int]], int]:
    """Every text a picture draws (as drawn, after fitting) with its pixel size, and the
    picture's width."""
    drawn: list[tuple[str, int]] = []
    original = fonts.draw_text

    def spy(draw: Any, xy: Any, text: str, size: int, fill: Any, **kwargs: Any) -> float:
        max_width = kwargs.get("max_width")
        bold = bool(kwargs.get("bold"))
        shown = text if max_width is None else fonts.fit_text(text, size, max_width, bold)
        drawn.append((shown, size))
        return original(draw, xy, text, size, fill, **kwargs)

    for module in (fonts, cards, nothanks, rage):
        monkeypatch.setattr(module, "draw_text", spy)
    cards._sprite.cache_clear()  # cards drawn before the spy was in place
    scene, paint = painting
    png = paint(scene)
    return drawn, decode(png).width


def kept(name: str, drawn: list[str]) -> int:
    """How many leading characters of a name the picture shows, on one to three lines."""
    best = 0
    for index, first in enumerate(drawn):
        # A name takes up to three lines (under a Rage card), joined by a space or not
        # (after a hyphen).
        candidates = [first]
        for more in range(1, 3):
            following = drawn[index + 1 : index + 1 + more]
            if len(following) < more:
                break
            for joined in list(candidates):
                candidates += [joined + following[-1], joined + " " + following[-1]]
        for candidate in candidates:
            candidate = candidate.removesuffix(fonts.ELLIPSIS)
            length = 0
            while length < min(len(name), len(candidate)) and name[length] == candidate[length]:
                length += 1
            if length == len(candidate) or candidate.startswith(name):
                best = max(best, length)
    return best


@pytest.mark.parametrize("locale", ["en", "de", "ru", "it"])
@pytest.mark.parametrize("kind", sorted(PICTURES))
def test_smallest_text_is_12_css_px_on_a_phone(
    monkeypatch: pytest.MonkeyPatch, kind: str, locale: str
) -> None:
    """Each text a picture draws is at least 12 CSS px at the width a phone shows it."""
    drawn, width = painted_texts(monkeypatch, PICTURES[kind](locale))
    assert drawn and width == cards.WIDTH
    for text, size in drawn:
        shown = size * cards.SHOWN_WIDTH / width
        assert shown >= SMALLEST_CSS_PX, (text, size, round(shown, 1))


@pytest.mark.parametrize("kind", sorted(PICTURES))
def test_a_name_is_never_cut_below_12_characters(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Every player's name shows at least its first 12 characters (or all of it)."""
    painting = PICTURES[kind]("en")
    drawn, _ = painted_texts(monkeypatch, painting)
    texts = [text for text, _ in drawn]
    names = names_in(painting[0])
    assert len(names) >= 4 and any(len(name) > 20 for name in names)
    for name in names:
        assert kept(name, texts) >= min(NAME_KEPT, len(name)), (name, texts)
