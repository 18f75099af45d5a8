"""Tests of Rage game creation: players, variants, seeds, dealing and the trump turn-up."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from bot.engines.rage import (
    DECK,
    Colour,
    InvalidSetup,
    Phase,
    RageOptions,
    RageState,
    cards_in_round,
)

from .test_rage_helpers import NAMES, deal, play, random_steps


@pytest.mark.parametrize("count", [3, 4, 5, 6, 7, 8])
def test_three_to_eight_players_can_play(count: int) -> None:
    """Every allowed table size deals ten cards each in round 1."""
    state = RageState.new(list(NAMES[:count]), seed=1)
    assert state.round == 1
    assert state.phase is Phase.BIDDING
    assert all(len(hand) == 10 for hand in state.hands)


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (["a", "b"], "3 to 8 players"),
        ([str(i) for i in range(9)], "3 to 8 players"),
        (["a", "b", "a"], "distinct"),
        (["a", "b", True], "strings or integers"),
        (["a", "b", 1.5], "strings or integers"),
        ("abc", "list of ids"),
    ],
)
def test_bad_player_lists_are_rejected(players: object, message: str) -> None:
    """Wrong counts, duplicates and non-JSON-safe ids raise InvalidSetup."""
    with pytest.raises(InvalidSetup, match=message):
        RageState.new(players, seed=1)  # type: ignore[arg-type]


def test_integer_and_string_ids_are_opaque() -> None:
    """Integer ids and string ids may even look alike; seat order is the given order."""
    state = RageState.new([7, "7", 3], seed=5)
    assert state.players == (7, "7", 3)
    assert state.seat_of("7") == 1


@pytest.mark.parametrize(
    ("pm", "hidden", "secret", "sweep"), list(itertools.product([False, True], repeat=4))
)
def test_variant_combinations(pm: bool, hidden: bool, secret: bool, sweep: bool) -> None:
    """Hidden+secret and plus/minus one with hidden or secret bids are refused; all else works."""
    forbidden = (hidden and secret) or (pm and (hidden or secret))
    if forbidden:
        with pytest.raises(InvalidSetup, match=r"exclude each other|open bidding"):
            RageOptions(pm, hidden, secret, sweep)
    else:
        options = RageOptions(pm, hidden, secret, sweep)
        assert RageState.new(["a", "b", "c"], seed=1, options=options).options == options


def test_option_values_must_be_booleans() -> None:
    """A truthy string is not a valid switch."""
    with pytest.raises(InvalidSetup, match="true or false"):
        RageOptions(sweep="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidSetup, match="unknown Rage options"):
        RageOptions.from_dict({"sweeep": True})


@pytest.mark.parametrize("seed", [1.5, True, b"x", (1, 2)])
def test_seed_must_be_json_safe(seed: object) -> None:
    """Only ints and strings are accepted as seeds, so the state stays plain JSON."""
    with pytest.raises(InvalidSetup, match="seed"):
        RageState.new(["a", "b", "c"], seed=seed)  # type: ignore[arg-type]


def test_same_seed_same_game_and_no_seed_gets_one() -> None:
    """A seed fixes dealer, hands and stack; without one a fresh seed is drawn and stored."""
    a = RageState.new(["a", "b", "c", "d"], seed="table-42")
    b = RageState.new(["a", "b", "c", "d"], seed="table-42")
    assert a.to_dict() == b.to_dict()
    c = RageState.new(["a", "b", "c", "d"])
    assert isinstance(c.seed, int)
    assert RageState.new(["a", "b", "c", "d"], seed=c.seed).to_dict() == c.to_dict()


def test_first_dealer_is_drawn_from_the_seed() -> None:
    """Different seeds give different first dealers, and bidding starts at the dealer's left."""
    dealers = set()
    for seed in range(40):
        state = RageState.new(list(NAMES[:5]), seed=seed)
        dealers.add(state.dealer)
        assert state.acting_players() == (state.players[(state.dealer_seat + 1) % 5],)
    assert dealers == set(NAMES[:5])


def test_each_round_deals_the_full_deck_and_the_deal_rotates() -> None:
    """Round r deals 11 - r cards each; hands, stack and turned cards make up the deck."""
    state = RageState.new(list(NAMES[:6]), seed=99)
    first_dealer = state.dealer_seat
    seen_rounds = set()
    for _ in random_steps(state, random.Random(3)):
        if state.round in seen_rounds or state.phase is not Phase.BIDDING:
            continue
        if any(b is not None for b in state.bids):
            continue
        seen_rounds.add(state.round)
        size = cards_in_round(state.round)
        assert all(len(hand) == size for hand in state.hands)
        everything = [c for hand in state.hands for c in hand] + state.stack + state.turned_up
        assert Counter(everything) == Counter(DECK)
        assert state.dealer_seat == (first_dealer + state.round - 1) % 6
        assert state.leader_seat == (state.dealer_seat + 1) % 6
    assert seen_rounds == set(range(1, 11))
    assert [rec.dealer for rec in state.rounds] == [(first_dealer + r) % 6 for r in range(10)]


def test_trump_is_turned_skipping_action_cards() -> None:
    """Action cards on top of the stack are turned aside until a colour card sets trump."""
    state = deal([["B1"], ["B2"], ["B3"]], stack=["NT", "+5", "JOKER", "R3", "G7"])
    assert state.trump is Colour.RED
    assert [c.code for c in state.turned_up] == ["NT", "+5", "JOKER", "R3"]
    assert [c.code for c in state.stack] == ["G7"]


@pytest.mark.parametrize("stack", [[], ["CT", "-5", "NT"]])
def test_no_colour_card_in_the_stack_means_no_trump(stack: list[str]) -> None:
    """With no colour card left to turn, the round has no trump."""
    state = deal([["B1"], ["B2"], ["B3"]], stack=stack)
    assert state.trump is None
    assert [c.code for c in state.turned_up] == stack


def test_from_deal_defaults() -> None:
    """The last seat deals, the round follows from the hand size, bids start the play."""
    state = deal([["B1", "G1"], ["B2", "G2"], ["B3", "G3"]], stack=["Y0"], bids=[1, 0, 0])
    assert state.round == 9
    assert state.dealer == "claudia"
    assert state.phase is Phase.PLAYING
    assert state.current_player == "anja"
    assert state.move_number == 0
    assert state.bids == [1, 0, 0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hands": [["B1"], ["B2", "B4"], ["B3"]]}, "same number of cards"),
        ({"hands": [["B1"], ["B1"], ["B3"]]}, "more cards than the deck"),
        ({"hands": [["JOKER"], ["JOKER"], ["JOKER"]]}, "more cards than the deck"),
        ({"hands": [["B1"], ["B2"], ["X9"]]}, "unknown Rage card"),
        ({"hands": [["B1"], ["B2"], ["B3"]], "round": 3}, "round 3 deals 8 cards"),
        ({"hands": [["B1"], ["B2"], ["B3"]], "dealer": "zoe"}, "not one of the players"),
        ({"hands": [["B1"], ["B2"], ["B3"]], "bids": [1, 1, 2]}, "from 0 to 1"),
        ({"hands": [[], [], []]}, "1 to 10"),
    ],
)
def test_from_deal_rejects_impossible_deals(kwargs: dict[str, object], message: str) -> None:
    """Hand-built deals must be possible with the real deck and rules."""
    with pytest.raises(InvalidSetup, match=message):
        deal(**kwargs)  # type: ignore[arg-type]


def test_from_deal_bids_respect_plus_minus_one() -> None:
    """Given bids go through the same checks as real bids."""
    with pytest.raises(InvalidSetup, match="plus/minus one"):
        deal(
            [["B1"], ["B2"], ["B3"]],
            bids=[0, 0, 1],
            options=RageOptions(plus_minus_one=True),
        )


def test_from_deal_needs_one_hand_per_player() -> None:
    """A missing or extra hand is a setup error."""
    with pytest.raises(InvalidSetup, match="one hand for every player"):
        RageState.from_deal(["a", "b", "c"], {"a": ["B1"], "b": ["B2"]})


def test_hand_built_round_continues_with_seeded_deals() -> None:
    """After a hand-built round 9 the game deals round 10 from the seed, dealer moved on."""
    state = deal([["B1", "G1"], ["B2", "G2"], ["B3", "G3"]], stack=["R0"], bids=[0, 0, 0], seed=11)
    play(state, "B1", "B2", "B3", "G3", "G1", "G2")
    assert state.round == 10
    assert state.dealer == "anja"
    assert state.phase is Phase.BIDDING
    assert all(len(hand) == 1 for hand in state.hands)
    assert state.totals == [10, 10, -3]
