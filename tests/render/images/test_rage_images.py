"""Rage pictures: size, the trick as it lies, the score sheet, and no hidden card or bid."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from bot.engines.rage import Phase
from bot.i18n import t
from bot.render.images import cards
from bot.render.images import rage as pictures
from tests.render.images.scenes import MAX_PNG, decode, facts, mid_trick, rage_game


def drawn_faces(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Record every Rage card the painter draws: ('colour', (colour, value)) or ('action', mark)."""
    drawn: list[tuple[str, Any]] = []
    colour_card, action_card = cards.rage_card, cards.action_card

    def colour_spy(draw: Any, box: Any, colour: str, value: int) -> None:
        drawn.append(("colour", (colour, value)))
        colour_card(draw, box, colour, value)

    def action_spy(draw: Any, box: Any, mark: str, lines: list[str], named: Any = None) -> None:
        drawn.append(("action", mark))
        action_card(draw, box, mark, lines, named)

    monkeypatch.setattr(cards, "rage_card", colour_spy)
    monkeypatch.setattr(cards, "action_card", action_spy)
    return drawn


def expected(card: Any) -> tuple[str, Any]:
    """How a card of the engine is recorded by drawn_faces."""
    if card.colour is not None:
        return ("colour", (card.colour.code, card.value))
    return ("action", pictures.ACTION_MARKS[card])


def test_trick_draws_exactly_the_trick_never_a_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight players mid-trick: the picture draws the trick's cards in play order, and no
    card that is still in anyone's hand."""
    drawn = drawn_faces(monkeypatch)
    state = rage_game(8, until=lambda s: mid_trick(s, 5))
    view = state.view(None)
    scene = pictures.trick_scene(facts("rage", 8), view, "en")
    png = pictures.trick_png(scene)
    assert drawn == [expected(play.card) for play in view.trick]
    in_hands = {expected(card) for player in state.players for card in state.hand(player)}
    in_trick = {expected(play.card) for play in view.trick}
    assert not (set(drawn) - in_trick) and not (set(drawn) & (in_hands - in_trick))
    assert [laid.name for laid in scene.cards] == [
        facts("rage", 8).plain_name(play.player) for play in view.trick
    ]
    assert sum(laid.best for laid in scene.cards) == 1
    assert decode(png).width == cards.WIDTH and len(png) <= MAX_PNG


def test_a_players_view_is_refused() -> None:
    """A view with a hand in it cannot become a public picture."""
    state = rage_game(4, until=lambda s: mid_trick(s, 1))
    player = state.players[0]
    with pytest.raises(ValueError):
        pictures.trick_scene(facts("rage", 4), state.view(player), "en")
    with pytest.raises(ValueError):
        pictures.sheet_scene(facts("rage", 4), state.view(player), "en")


def test_winning_card_is_the_rules_winner() -> None:
    """The card marked as winning so far is the one the engine's trick resolution picks."""
    from bot.engines.rage import resolve_trick

    state = rage_game(6, until=lambda s: mid_trick(s, 4), seed=11)
    view = state.view(None)
    scene = pictures.trick_scene(facts("rage", 6), view, "de")
    index, _ = resolve_trick(
        [p.card for p in view.trick], [p.colour for p in view.trick], view.trump, view.led_colour
    )
    assert [laid.best for laid in scene.cards].index(True) == index
    assert scene.trump_label == "Trumpf"


def test_between_tricks_the_last_trick_and_its_winner_are_shown() -> None:
    """Right after a trick, the picture shows that trick with the card that took it."""

    def just_after_a_trick(s: Any) -> bool:
        view = s.view(None)
        return (
            view.round >= 2
            and view.phase is Phase.PLAYING
            and not view.trick
            and view.last_trick is not None
            and view.last_trick.round == view.round
        )

    state = rage_game(5, until=just_after_a_trick)
    view = state.view(None)
    scene = pictures.trick_scene(facts("rage", 5), view, "en")
    last = view.last_trick
    assert last is not None
    assert len(scene.cards) == len(last.plays)
    assert [laid.best for laid in scene.cards].index(True) == last.winning_index
    assert scene.title.startswith("Last trick")


def test_score_sheet_after_rounds_and_at_the_end() -> None:
    """The sheet lists each scored round's bid/tricks/bonus/points for 8 long names, with
    totals; it is what the table shows while the next round is bid, and at the end."""
    state = rage_game(8, until=lambda s: s.view(None).round == 4 and s.phase is Phase.BIDDING)
    view = state.view(None)
    scene = pictures.table_scene(facts("rage", 8), view, "ru")
    assert isinstance(scene, pictures.SheetScene)
    assert [number for number, _ in scene.rounds] == [1, 2, 3]
    assert scene.totals == view.totals
    row = view.score_sheet.rows[0]
    first = scene.rounds[0][1]
    for cell, entry in zip(first, row.entries, strict=True):
        assert cell.bid == str(entry.bid) and cell.tricks == entry.tricks
        assert cell.bonus == entry.bonus
    png = pictures.sheet_png(scene)
    assert len(png) <= MAX_PNG
    ended = rage_game(8, until=lambda s: s.is_over)
    final = pictures.sheet_scene(facts("rage", 8), ended.view(None), "en")
    assert len(final.rounds) == 10
    big = pictures.sheet_png(final)
    assert decode(big).width == cards.WIDTH and len(big) <= MAX_PNG


def test_secret_bids_stay_secret_until_the_round_is_scored() -> None:
    """With secret bids, the sheet shows only scored rounds, whose bids are public by then."""
    state = rage_game(
        4,
        until=lambda s: s.view(None).round == 2 and s.phase is Phase.PLAYING,
        secret_bids=True,
    )
    view = state.view(None)
    assert all(bid is None for bid in view.bids)  # the round's bids are secret
    scene = pictures.sheet_scene(facts("rage", 4), view, "en")
    assert [number for number, _ in scene.rounds] == [1]
    assert all(cell.bid != "?" for cell in scene.rounds[0][1])


def test_the_trump_is_public_while_a_later_round_is_bid() -> None:
    """Round 2+ while bidding, pictures on: the text says the trump, the picture (the score
    sheet) draws it labelled with its token and colour word, and the alt text says both."""
    from bot.render.rage import RageRenderer, game_embed, trump_line

    state = rage_game(4, until=lambda s: s.view(None).round == 3 and s.phase is Phase.BIDDING)
    view = state.view(None)
    table = facts("rage", 4)
    assert view.trump is not None
    for locale in ("en", "de", "ru", "it"):
        line = trump_line(view, locale)
        text = game_embed(table, view, locale, pictures=True).description or ""
        assert line in text.splitlines()
        picture = RageRenderer().picture(table, view, locale)
        scene = picture.scene
        assert isinstance(scene, pictures.SheetScene)
        assert scene.trump == view.trump.code
        assert scene.trump_label == t("images.rage.trump", locale)
        assert scene.trump_name == t(f"rage.colour.{view.trump.code}", locale)
        assert line in picture.alt and "says the same" not in picture.alt
    en = RageRenderer().picture(table, view, "en")
    assert en.alt.startswith("Picture of the Rage score sheet and the trump")
    assert "Trump: " in en.alt and "bid " in en.alt
    png = pictures.sheet_png(en.scene)
    assert decode(png).width == cards.WIDTH and len(png) <= MAX_PNG
    # At the end the sheet has no trump line: there is no next round.
    ended = rage_game(4, until=lambda s: s.is_over)
    final = pictures.sheet_scene(table, ended.view(None), "en")
    assert final.trump_label is None


def test_no_trump_round_is_said_while_bidding() -> None:
    """A round without trump shows an empty token and the word for none, not a colour."""
    state = rage_game(4, until=lambda s: s.view(None).round == 2 and s.phase is Phase.BIDDING)
    view = state.view(None)
    scene = pictures.table_scene(facts("rage", 4), replace(view, trump=None), "en")
    assert isinstance(scene, pictures.SheetScene)
    assert scene.trump is None and scene.trump_name == "none"
    assert len(pictures.sheet_png(scene)) <= MAX_PNG
