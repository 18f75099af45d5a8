"""No Thanks! pictures: size, where the cards are drawn, and what is never drawn."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image, ImageDraw

from bot.render.images import cards
from bot.render.images import nothanks as pictures
from tests.render.images.scenes import (
    MAX_PNG,
    decode,
    difference,
    facts,
    finished_nothanks,
    many_cards_view,
    nothanks_game,
)


def drawn_cards(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the number of every No Thanks! card the painter draws face up."""
    drawn: list[int] = []
    original = cards.number_card

    def spy(draw: Any, box: Any, number: int, size: int, **kwargs: Any) -> None:
        drawn.append(number)
        original(draw, box, number, size, **kwargs)

    monkeypatch.setattr(cards, "number_card", spy)
    return drawn


def drawn_chips(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, float]]:
    """Record where the painter draws a chip."""
    drawn: list[tuple[float, float]] = []
    original = cards.chip

    def spy(draw: Any, cx: float, cy: float, r: float) -> None:
        drawn.append((cx, cy))
        original(draw, cx, cy, r)

    monkeypatch.setattr(cards, "chip", spy)
    return drawn


def test_table_picture_is_phone_sized_and_small() -> None:
    """Seven players with long Cyrillic and emoji names and the widest rows: phone width,
    under 200 KB, and no taller than it is readable."""
    view = many_cards_view(7)
    png = pictures.table_png(pictures.table_scene(facts("nothanks", 7), view, "ru"))
    image = decode(png)
    assert image.width == cards.WIDTH
    assert image.height < 1600
    assert len(png) <= MAX_PNG


def test_face_up_card_shows_its_number_in_its_place() -> None:
    """The big card's upper half is the number 27 as the card primitive draws it, and not 28."""
    game = nothanks_game(4, 3, open_chips=False)
    scene = pictures.table_scene(facts("nothanks", 4), game.view(None), "en")
    scene = type(scene)(**{**{f: getattr(scene, f) for f in scene.__slots__}, "card": 27})
    painted = decode(pictures.table_png(scene))
    x0, y0 = pictures.BIG_X, pictures.MARGIN
    # The upper half: the number, above the chips that lie on the card.
    region = (x0, y0, x0 + pictures.BIG_W, y0 + pictures.BIG_H // 2)

    def template(number: int) -> Image.Image:
        image = Image.new("RGB", painted.size, cards.FELT_DARK)
        box = (x0, y0, x0 + pictures.BIG_W, y0 + pictures.BIG_H)
        cards.number_card(ImageDraw.Draw(image), box, number, pictures.BIG_SIZE, number_at=0.36)
        return image.crop(region)

    shown = painted.crop(region)
    assert difference(shown, template(27)) < 2.0
    assert difference(shown, template(28)) > 4 * difference(shown, template(27)) + 2.0


def test_live_table_draws_exactly_the_public_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    """The face-up card and every taken card are drawn; the nine removed cards never are."""
    drawn = drawn_cards(monkeypatch)
    game = nothanks_game(5, 40, open_chips=False)
    view = game.view(None)
    pictures.table_png(pictures.table_scene(facts("nothanks", 5), view, "en"))
    taken = [card for seat in game.cards for card in seat]
    assert sorted(drawn) == sorted([game.current_card, *taken])
    assert not set(drawn) & set(game.removed)


def test_a_players_own_view_is_refused() -> None:
    """A view holding a player's private chips cannot become a public picture."""
    game = nothanks_game(4, 10, open_chips=False)
    with pytest.raises(ValueError):
        pictures.table_scene(facts("nothanks", 4), game.view(game.players[0]), "en")
    with pytest.raises(ValueError):
        pictures.final_scene(facts("nothanks", 4), game.view(game.players[0]), "en")


def test_no_chips_are_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """No chip is drawn, private or open: the chips on the card and every open count
    change with each No thanks!, so the text says them and a pass keeps the picture."""
    chips = drawn_chips(monkeypatch)
    for open_chips in (False, True):
        game = nothanks_game(5, 13, open_chips=open_chips)
        assert game.chips_on_card
        scene = pictures.table_scene(facts("nothanks", 5), game.view(None), "en")
        pictures.table_png(scene)
        assert all(row.chips is None for row in scene.rows)
    assert chips == []


def test_runs_count_only_their_lowest_card(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's higher cards are drawn dimmed, the lowest and single cards bright."""
    calls: list[tuple[int, bool]] = []
    original = cards.number_card

    def spy(draw: Any, box: Any, number: int, size: int, **kwargs: Any) -> None:
        calls.append((number, bool(kwargs.get("dim"))))
        original(draw, box, number, size, **kwargs)

    monkeypatch.setattr(cards, "number_card", spy)
    view = many_cards_view(4)
    view.cards[view.players[0]] = [12, 13, 14, 27]
    pictures.table_png(pictures.table_scene(facts("nothanks", 4), view, "en"))
    assert (12, False) in calls and (13, True) in calls and (14, True) in calls
    assert (27, False) in calls


def test_final_board_reveals_the_removed_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    """The final board draws every card once, the nine removed ones included, ranked rows."""
    drawn = drawn_cards(monkeypatch)
    game = finished_nothanks(6)
    scene = pictures.final_scene(facts("nothanks", 6), game.view(None), "it")
    png = pictures.final_png(scene)
    assert sorted(drawn) == list(range(3, 36))
    assert scene.removed == tuple(sorted(game.removed))
    assert [row.rank for row in scene.rows] == sorted(row.rank or 0 for row in scene.rows)
    assert len(png) <= MAX_PNG
