"""The final boards with pictures on (issue 41): the text says only what the picture does
not, and the picture's alt text says everything the picture shows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.engines.nothanks import PlayerView
from bot.i18n import t
from bot.render import nothanks, rage
from bot.render.images import nothanks as nothanks_images
from bot.render.images import rage as rage_images
from bot.render.limits import units, words
from bot.render.table import SHORT_NAME, public_message, public_picture, short_names
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


# Discord's longest display names (32 characters): words, one long word, emoji (2 UTF-16
# units each, as Discord counts), Cyrillic.
LONGEST_NAMES = [
    "Anna-Lena Schmidt-Vogelsang vonX",
    "Ольга Константиновна Белозерская",
    "🎲🎉👑🎻🎶🎲🎉👑🎻🎶🎲🎉👑🎻🎶🎲🎉👑🎻🎶🎲🎉👑🎻🎶🎲🎉👑🎻🎶🎲🎉",
    "Maximilianschneidermeisterbauer1",
    "Giuseppe 🎻 Verdi 🎶 Rossini 🎼 Puc",
    "Мария-Антуанетта 👑 Бурбон-Габсбу",
    "Zoë 🎉 Ångström Ørsted Ñúñez Çeli",
    "Bartholomew Montgomery-Smythe 3r",
]


# 32 characters that are 64 UTF-16 units each: the longest names as Discord counts.
EMOJI_NAMES = [("🎲🎉👑🎻🎶🎼🃏🂡"[i:] + "🎲🎉👑🎻🎶🎼🃏🂡"[:i]) * 4 for i in range(8)]


def longest_names(game: str, count: int, names: list[str] = LONGEST_NAMES) -> TableFacts:
    """A finished table whose ``count`` people have 32-character names and big rating
    losses ('Δ −120'), the longest a final board's rows can be."""
    table = finished(game, count)
    players = [str(p) for p in table.seats]
    assert all(len(name) == 32 for name in names[:count])
    return replace(
        table,
        names=dict(zip(players, names, strict=False)),
        rating_changes={p: -120.0 - i for i, p in enumerate(players)},
    )


def cut_mid_word(alt: str, whole: str) -> bool:
    """Whether ``alt`` (a shortened ``whole``) ends inside one of ``whole``'s words, when
    its first word would have fitted whole (a name of one long word can only be cut)."""
    head = alt.removesuffix("…")
    if units(whole.split(" ")[0]) >= SHORT_NAME:
        return not whole.startswith(head)
    return head != whole and whole[len(head) : len(head) + 1].strip() != ""


def singles_board(count: int) -> PlayerView:
    """A finished No Thanks! board with the longest rows: every card a single (dealt round
    the table in order, so no one has two in a row) and two-digit chips."""
    players = [str(100 + i) for i in range(count)]
    cards = list(range(3, 36))
    removed, dealt = cards[::11], [card for card in cards if card not in cards[::11]][:24]
    removed += [card for card in cards if card not in dealt and card not in removed]
    hands = {p: dealt[seat::count] for seat, p in enumerate(players)}
    return PlayerView(
        viewer=None,
        players=players,
        open_chips=True,
        current_card=None,
        chips_on_card=0,
        cards_left=0,
        active_player=None,
        cards=hands,
        chips={p: 10 + seat for seat, p in enumerate(players)},
        move_number=200,
        is_over=True,
        removed=sorted(removed),
        history=[],
    )


def board_rows(table: TableFacts, view: PlayerView, locale: str) -> list[str]:
    """The final board's rows as the alt text says them."""
    rows = nothanks.final_rows(table, view, locale)
    return [f"{a}: {b}".replace("\n", ", ").replace("**", "") for a, b in rows]


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("board", ["singles", 1, 7, 23])
def test_nothanks_final_alt_text_fits_with_seven_longest_names(
    locale: str, board: str | int
) -> None:
    """Seven 32-character names: the final picture's alt text is within Discord's 1,024
    (UTF-16 units) by design, whole (no cut), still ends with the removed cards and has
    every row; on the longest board (every card a single, names of 32 emoji) the names
    were shortened, each to whole words, and nothing else."""
    table = longest_names("nothanks", 7, EMOJI_NAMES if board == "singles" else LONGEST_NAMES)
    view = singles_board(7) if board == "singles" else finished_nothanks(7, board).view(None)
    picture = public_picture(PublicTable(table, view), nothanks.NoThanksRenderer(), locale)
    assert picture is not None
    alt = picture.alt
    assert units(alt) <= 1024, units(alt)
    removed = ", ".join(str(card) for card in view.removed or [])
    assert len(view.removed or []) == 9 and alt.endswith(f"{removed}."), alt
    full = all(row in alt for row in board_rows(table, view, locale))
    if board == "singles":
        assert units(". ".join(board_rows(table, view, locale))) > 1024, "needs shortening"
        assert not full
    if not full:
        assert all(row in alt for row in board_rows(short_names(table), view, locale)), alt
    for name in [*LONGEST_NAMES, *EMOJI_NAMES]:
        assert not cut_mid_word(words(name, SHORT_NAME), name)


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("seed", [5, 8, 13])
@pytest.mark.parametrize("emoji", [False, True])
def test_rage_final_alt_text_fits_with_eight_longest_names(
    locale: str, seed: int, emoji: bool
) -> None:
    """Eight 32-character names, ten rounds: the final sheet's alt text is within 1,024
    (UTF-16 units), whole, and still says every player's ten rounds and total, in rank
    order; names are shortened to whole words before anything else goes."""
    state = rage_game(8, until=lambda s: s.is_over, seed=seed)
    table = longest_names("rage", 8, EMOJI_NAMES if emoji else LONGEST_NAMES)
    view = state.view(None)
    picture = public_picture(PublicTable(table, view), rage.RageRenderer(), locale)
    assert picture is not None
    alt, scene = picture.alt, picture.scene
    assert units(alt) <= 1024, units(alt)
    assert not alt.endswith("…."), alt
    place = 0
    for name, points, total in zip(scene.names, scene.points, scene.totals, strict=True):
        assert len(points) == 10
        short = words(name, SHORT_NAME)
        assert not cut_mid_word(short, name), (short, name)
        row = f"{name}: {', '.join(points)}"
        if row not in alt:
            row = f"{short}: {', '.join(points)}"
        found = alt.find(row, place)
        assert found > place and total in alt[found:], (row, alt)
        place = found
