"""Rage's table on a phone (issue 41): the turn said once, labelled score rows, one minus
sign, colour tokens that never break across lines, and red's own shape."""

from __future__ import annotations

import re

import pytest
from PIL import Image, ImageDraw

from bot.engines.rage import JOKER, Colour, Phase, RageOptions, RageState, card
from bot.i18n import t
from bot.render import rage
from bot.render.images import cards
from bot.render.images.cards import RAGE_SHAPE
from bot.render.table import public_message
from bot.table.spec import PublicTable, TableFacts

LOCALES = ["en", "de", "ru", "it"]
PLAYERS = ["301", "302", "303", "304"]
NAMES = {"301": "Ana", "302": "Bo", "303": "Cy", "304": "Di"}


def facts(status: str = "running") -> TableFacts:
    return TableFacts(
        id=5,
        game="rage",
        status=status,
        host_id=301,
        seats=tuple(int(p) for p in PLAYERS),
        options={},
        names=dict(NAMES),
        computers={},
        min_players=3,
        max_players=8,
    )


def playing(rounds: int = 1) -> RageState:
    """A game in play (a card to play, not a bid) after ``rounds`` scored rounds."""
    state = RageState.new(PLAYERS, seed=3)
    while state.round <= rounds or state.view(None).phase is not Phase.PLAYING:
        player = state.acting_players()[0]
        state.apply(player, state.legal_actions(player)[0])
    return state


# -- 1. the turn is said once ---------------------------------------------------------------


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("images", [True, False])
def test_the_turn_is_said_in_the_content_not_again_in_the_embed(locale: str, images: bool) -> None:
    """The content's line pings the player; the embed only marks their row with ▶."""
    table = facts()
    view = playing().view(None)
    active = view.players_to_act[0]
    fields = public_message(PublicTable(table, view), rage.RageRenderer(), locale, pictures=images)
    mention = table.mention(active)
    assert mention in (fields["content"] or "")
    description = fields["embed"].description or ""
    assert mention not in description
    assert t("rage.game.turn", locale, player=mention) not in description
    marked = [line for line in description.splitlines() if line.startswith("▶ ")]
    assert len(marked) == 1 and NAMES[active] in marked[0]


@pytest.mark.parametrize("locale", LOCALES)
def test_the_alt_text_still_says_whose_turn_it_is(locale: str) -> None:
    """A screen reader hears whose turn it is from the picture's alt text, by name."""
    view = playing().view(None)
    active = view.players_to_act[0]
    alt = rage.table_alt(facts(), view, locale)
    assert t("rage.game.turn", locale, player=NAMES[active]).rstrip(".") in alt


# -- 2. the Scores answer: labelled rounds, one minus sign -----------------------------------


def scored(rounds: int) -> RageState:
    """A game where some points, bonuses and totals are negative after ``rounds`` rounds."""
    state = playing(rounds)
    sheet = state.view(None).score_sheet
    assert any(total < 0 for total in sheet.totals)
    return state


@pytest.mark.parametrize("locale", LOCALES)
def test_scores_rows_are_labelled_with_their_rounds(locale: str) -> None:
    """Every player's row names each round its points belong to, in the reader's language."""
    state = scored(3)
    embed = rage.scores_message(facts(), state.view(None), locale)["embed"]
    rows = (embed.description or "").splitlines()
    assert len(rows) == len(PLAYERS)
    sheet = state.view(None).score_sheet
    for seat, row in enumerate(rows):
        for number in (1, 2, 3):
            entry = sheet.rows[number - 1].entries[seat]
            assert entry.points is not None
            points = rage.signed(entry.points)
            label = t("rage.sheet.round_points", locale, round=number, points=points)
            assert label.replace(" ", "\u00a0") in row, (label, row)


@pytest.mark.parametrize("locale", LOCALES)
def test_scores_answer_uses_one_minus_sign(locale: str) -> None:
    """Points, bonuses and totals below zero all show '−' (U+2212), never a hyphen-minus."""
    embed = rage.scores_message(facts(), scored(3).view(None), locale)["embed"]
    texts = [embed.description or ""] + [field.value or "" for field in embed.fields]
    text = "\n".join(texts)
    assert "−" in text
    assert re.search(r"-\d", text) is None, text


# -- 3. a card token never breaks across lines -----------------------------------------------


def breakable(text: str) -> list[str]:
    """The characters a line may break at: every space but a no-break one."""
    return [char for char in text if char.isspace() and char != "\u00a0"]


@pytest.mark.parametrize("locale", LOCALES)
def test_no_card_token_contains_a_breakable_space(locale: str) -> None:
    """Square, shape and number (or colour name) are joined: a phone keeps them on a line."""
    for colour in Colour:
        square, shape = rage.SQUARES[colour], rage.SHAPES[colour]
        assert rage.TOKENS[colour] == f"{square}\u2060{shape}"  # no break between the two
        names = [rage.colour_name(colour, locale), rage.card_name(JOKER, locale, colour)]
        names += [rage.card_name(card(colour, value), locale) for value in range(0, 16)]
        for name in names:
            assert rage.TOKENS[colour] in name
            assert breakable(name) == [], repr(name)


def test_a_hand_breaks_only_between_cards() -> None:
    """A hand wraps at the ' · ' between cards, never inside one."""
    cards = [card(colour, value) for colour in Colour for value in (1, 9)]
    text = rage.hand_text(cards, "en")
    assert all(breakable(token) == [] for token in text.split(" · "))
    assert len(text.split(" · ")) == len(cards)


# -- 4. red's mark is not a square -----------------------------------------------------------

SQUARE_GLYPHS = "■□▪▫◼◻◾◽⬛⬜🟥🟦🟩🟨🟪🟧"


def test_every_colour_has_its_own_shape_and_red_no_square() -> None:
    """'🟥■' read as two squares (and as a grey square on a disabled button): red's shape is
    a heart, which no other colour has, in text as in the pictures."""
    assert len(set(rage.SHAPES.values())) == len(Colour)
    assert len(set(RAGE_SHAPE.values())) == len(Colour)
    assert RAGE_SHAPE["red"] == "heart" and rage.SHAPES[Colour.RED] == "♥"
    assert all(shape not in SQUARE_GLYPHS for shape in rage.SHAPES.values())


@pytest.mark.parametrize("locale", LOCALES)
def test_red_buttons_and_text_show_the_heart(locale: str) -> None:
    """Buttons and text take red's token from one place: the square, then the heart."""
    assert rage.card_name(card(Colour.RED, 7), locale) == "🟥\u2060♥\u00a07"
    assert rage.colour_name(Colour.RED, locale).startswith("🟥\u2060♥\u00a0")


def test_the_heart_is_drawn_as_a_heart_not_a_square() -> None:
    """The pictures' heart leaves the corners of its box empty below, where a square fills."""
    image = Image.new("RGB", (101, 101), (0, 0, 0))
    cards.shape(ImageDraw.Draw(image), "heart", 50, 50, 40, (255, 255, 255))
    assert image.getpixel((50, 50)) == (255, 255, 255)  # the middle is filled
    assert image.getpixel((50, 86)) == (255, 255, 255)  # the point at the bottom
    assert image.getpixel((15, 85)) == (0, 0, 0)  # the bottom corners are empty
    assert image.getpixel((85, 85)) == (0, 0, 0)
    assert image.getpixel((50, 14)) == (0, 0, 0)  # the notch between the lobes


# -- 5. while bidding, the awaited players are named once -----------------------------------


def bidding(bids: int, **options: bool) -> RageState:
    """Round 2 being bid, after ``bids`` bids of it."""
    state = RageState.new(PLAYERS, seed=3, options=RageOptions(**options))
    while state.round < 2 or state.view(None).phase is not Phase.BIDDING:
        player = state.acting_players()[0]
        state.apply(player, state.legal_actions(player)[0])
    for _ in range(bids):
        player = state.acting_players()[0]
        state.apply(player, state.legal_actions(player)[0])
    return state


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("images", [True, False])
@pytest.mark.parametrize("variant", [{}, {"hidden_bids": True}], ids=["in-turn", "at-once"])
def test_while_bidding_the_awaited_players_are_named_once(
    locale: str, images: bool, variant: dict[str, bool]
) -> None:
    """The content's line pings whoever still bids; the embed names nobody again, it marks
    their rows with ▶ (and only theirs); the picture's alt text, like the picture, does not
    change with a bid (the content line says whom the table waits for)."""
    table = facts()
    view = bidding(1, **variant).view(None)
    waiting = list(view.players_to_act)
    assert 1 <= len(waiting) < len(PLAYERS)
    assert len(waiting) > 1 or not variant
    fields = public_message(PublicTable(table, view), rage.RageRenderer(), locale, pictures=images)
    content = fields["content"] or ""
    assert all(table.mention(player) in content for player in waiting)
    description = fields["embed"].description or ""
    assert "<@" not in description
    assert all(table.mention(player) not in description for player in waiting)
    marked = [line for line in description.splitlines() if line.startswith("▶ ")]
    assert sorted(marked) == sorted(
        "▶ " + rage.player_line(table, view, PLAYERS.index(player), locale) for player in waiting
    )
    alt = rage.table_alt(table, view, locale)
    assert alt == rage.table_alt(table, bidding(0, **variant).view(None), locale)


# -- 6. the trump in the trick picture has its word ------------------------------------------


@pytest.mark.parametrize("locale", LOCALES)
def test_the_trick_picture_names_the_trump_in_words(
    monkeypatch: pytest.MonkeyPatch, locale: str
) -> None:
    """Beside its token the trick picture writes the trump's colour (and the led colour's)
    in the table's language, at least 12 CSS px as a phone shows it, and the token is
    20 CSS px across (it was a 19-px badge with no word)."""
    from bot.render.images import rage as images
    from tests.render.images.test_phone_readable import painted_texts

    state = playing(2)
    while state.view(None).trump is None or not state.view(None).trick:
        player = state.acting_players()[0]
        state.apply(player, state.legal_actions(player)[0])
    view = state.view(None)
    scene = images.trick_scene(facts(), view, locale)
    assert view.trump is not None and scene.trump == view.trump.code
    word = t(f"rage.colour.{view.trump.code}", locale)
    assert scene.trump_name == word
    drawn, width = painted_texts(monkeypatch, (scene, images.trick_png))
    sizes = {text: size for text, size in drawn}
    assert word in sizes, drawn
    assert sizes[word] * cards.SHOWN_WIDTH / width >= 12
    if scene.led is not None:
        assert t(f"rage.colour.{scene.led}", locale) in sizes
    assert 2 * images.SWATCH_R / cards.SCALE >= 20
