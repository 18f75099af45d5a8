"""The final boards with pictures on (issue 41): the text says only what the picture does
not, and the picture's alt text says everything the picture shows."""

from __future__ import annotations

import pytest

from bot.i18n import t
from bot.render import nothanks, rage
from bot.render.images import nothanks as nothanks_images
from bot.render.images import rage as rage_images
from bot.render.table import public_message, public_picture
from bot.table.spec import PublicTable, TableFacts
from tests.render.images.scenes import finished_nothanks, rage_game

LOCALES = ["en", "de", "ru", "it"]


def finished(game: str, count: int) -> TableFacts:
    """A finished table of ``count`` people, every one of them rated."""
    players = [str(100 + i) for i in range(count)]  # as the games of scenes.py seat them
    return TableFacts(
        id=9,
        game=game,
        status="finished",
        host_id=100,
        seats=tuple(int(p) for p in players),
        options={},
        names={p: f"Player {i}" for i, p in enumerate(players)},
        computers={},
        min_players=3,
        max_players=8,
        rating_changes={p: 10.0 - 3 * i for i, p in enumerate(players)},
    )


@pytest.mark.parametrize("locale", LOCALES)
def test_nothanks_final_text_is_who_won_and_the_alt_text_is_the_board(locale: str) -> None:
    """Pictures on: the text is the title, who won and the footer (no row the picture has);
    the alt text has every row as the text-only board says it (rank, name, rating change,
    cards, card points − chips = total) and the removed cards. Pictures off: the rows are
    in the text."""
    facts, view = finished("nothanks", 7), finished_nothanks(7).view(None)
    renderer = nothanks.NoThanksRenderer()
    public = PublicTable(facts, view)
    short = public_message(public, renderer, locale, pictures=True)["embed"]
    full = public_message(public, renderer, locale, pictures=False)["embed"]
    assert short.fields == [] and short.description == full.description
    assert len(full.fields) == 7 + 1
    picture = public_picture(public, renderer, locale)
    assert picture is not None and picture.paint is nothanks_images.final_png
    for field in full.fields:
        assert (
            f"{field.name}: {(field.value or '').replace(chr(10), ', ')}".replace("**", "")
            in picture.alt
        ), (field.name, picture.alt)
    for row in picture.scene.rows:
        assert row.name in picture.alt and row.note and row.note in picture.alt


@pytest.mark.parametrize("locale", LOCALES)
def test_rage_final_text_is_the_standings_and_the_picture_the_whole_sheet(locale: str) -> None:
    """Pictures on: the text is who won; the picture is the whole board (rank, name,
    rating change, every round of the sheet, total), and its alt text says each player's
    points round by round, total and rating change. Pictures off: standings and sheet in
    text."""
    state = rage_game(8, until=lambda s: s.is_over)
    facts, view = finished("rage", 8), state.view(None)
    renderer = rage.RageRenderer()
    public = PublicTable(facts, view)
    short = public_message(public, renderer, locale, pictures=True)["embed"]
    full = public_message(public, renderer, locale, pictures=False)["embed"]
    assert short.fields == [] and short.description == full.description
    assert [f.name for f in full.fields][:2] == [
        t("rage.final.standings", locale),
        t("rage.game.sheet", locale),
    ]
    picture = public_picture(public, renderer, locale)
    assert picture is not None and picture.paint is rage_images.final_sheet_png
    scene = picture.scene
    assert scene.rounds == tuple(range(1, 11)) and len(scene.names) == 8
    sheet = view.score_sheet
    assert all(scene.notes)
    for name, points, total, note in zip(
        scene.names, scene.points, scene.totals, scene.notes, strict=True
    ):
        seat = [facts.short_plain_name(p) for p in sheet.players].index(name)
        expected = [row.entries[seat].points for row in sheet.rows]
        assert [int(p.replace("−", "-")) for p in points] == expected
        assert int(total.replace("−", "-")) == sheet.totals[seat]
        assert f"{name}: {', '.join(points)}" in picture.alt
        assert f"{total} · {note}" in picture.alt
    assert len(picture.alt) <= 1024
