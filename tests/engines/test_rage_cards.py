"""Tests of Rage cards, colours, actions and the hand-sorting helper."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bot.engines.rage import (
    ACTION_CARDS,
    CHANGE_TRUMP,
    COLOURS,
    DECK,
    JOKER,
    MINUS_FIVE,
    NO_TRUMP,
    PLUS_FIVE,
    Bid,
    Card,
    Colour,
    Play,
    action_from_dict,
    card,
    sort_hand,
)


def test_deck_has_the_112_cards_of_the_box() -> None:
    """96 colour cards (six colours, 0..15) and 16 action cards in the printed numbers."""
    counts = Counter(DECK)
    assert len(DECK) == 112
    colour_cards = [c for c in DECK if not c.is_action]
    assert len(colour_cards) == 96 == len(set(colour_cards))
    assert {c.colour for c in colour_cards} == set(COLOURS)
    assert {c.value for c in colour_cards} == set(range(16))
    assert counts[JOKER] == 2
    assert counts[NO_TRUMP] == 4
    assert counts[CHANGE_TRUMP] == 4
    assert counts[PLUS_FIVE] == 3
    assert counts[MINUS_FIVE] == 3


def test_colours_are_in_rule_book_order() -> None:
    """Blue, green, red, yellow, violet, orange; the JSON form is the lower-case name."""
    assert [c.code for c in COLOURS] == ["blue", "green", "red", "yellow", "violet", "orange"]
    assert Colour.parse("Violet") is Colour.VIOLET
    assert Colour.parse("o") is Colour.ORANGE
    with pytest.raises(ValueError, match="unknown colour"):
        Colour.parse("pink")


@pytest.mark.parametrize("item", sorted(set(DECK)))
def test_card_code_round_trips(item: Card) -> None:
    """Every card survives code -> parse and a JSON round trip of its code."""
    assert Card.parse(item.code) is item
    assert Card.parse(json.loads(json.dumps(item.code))) is item
    assert Card(int(item)) is item


def test_card_names_are_readable() -> None:
    """str gives English names, repr shows the code."""
    assert str(card(Colour.RED, 7)) == "red 7"
    assert str(JOKER) == "Joker"
    assert str(NO_TRUMP) == "No Trump"
    assert str(CHANGE_TRUMP) == "Change Trump"
    assert (str(PLUS_FIVE), str(MINUS_FIVE)) == ("+5", "-5")
    assert repr(card(Colour.BLUE, 15)) == "Card('B15')"
    assert Card.parse(" g0 ") == card(Colour.GREEN, 0)


def test_card_properties() -> None:
    """Colour cards report colour and value; action cards report neither."""
    red7 = card(Colour.RED, 7)
    assert (red7.colour, red7.value, red7.is_action) == (Colour.RED, 7, False)
    for action in ACTION_CARDS:
        assert (action.colour, action.value, action.is_action) == (None, None, True)


@pytest.mark.parametrize("bad", ["R16", "X3", "", "joker!"])
def test_bad_card_codes_raise(bad: str) -> None:
    """Unknown codes raise ValueError."""
    with pytest.raises(ValueError, match="unknown Rage card"):
        Card.parse(bad)


def test_bad_numeric_codes_raise() -> None:
    """Only 0..100 are card codes; colour values stop at 15."""
    with pytest.raises(ValueError, match="no Rage card"):
        Card(101)
    with pytest.raises(ValueError, match=r"values 0\.\.15"):
        card(Colour.RED, 16)


def test_sort_hand_orders_colour_then_value_with_actions_last() -> None:
    """The UI helper sorts by colour and value and puts action cards last."""
    hand = [Card.parse(c) for c in ("-5", "R3", "B9", "JOKER", "R1", "O0", "B2", "NT")]
    assert [c.code for c in sort_hand(hand)] == ["B2", "B9", "R1", "R3", "O0", "JOKER", "NT", "-5"]
    trump_first = sort_hand(hand, trump=Colour.RED)
    assert [c.code for c in trump_first] == ["R1", "R3", "B2", "B9", "O0", "JOKER", "NT", "-5"]


def test_actions_round_trip_through_json() -> None:
    """Bids and plays (Joker colour included) survive to_dict -> JSON -> action_from_dict."""
    for action in (Bid(0), Bid(7), Play(card(Colour.RED, 7)), Play(JOKER, Colour.VIOLET)):
        data = json.loads(json.dumps(action.to_dict()))
        assert action_from_dict(data) == action
    assert str(Play(JOKER, Colour.RED)) == "play Joker as red"
    assert str(Bid(3)) == "bid 3"


@pytest.mark.parametrize(
    "data", [{"type": "pass"}, {"type": "bid", "tricks": "2"}, {"type": "bid", "tricks": True}]
)
def test_malformed_actions_raise(data: dict[str, object]) -> None:
    """Unknown types and non-integer bids are rejected."""
    with pytest.raises(ValueError):
        action_from_dict(data)
