"""The straightforward Rage heuristic of issue 16 (benchmarks/strength/rage_heuristic.py)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.engines.rage import JOKER, Bid, Card, Colour, Play, RageOptions, RageState
from tests.benchmark_scripts import load

heuristic = load("strength/rage_heuristic")

NAMES = ("anja", "bernd", "claudia", "dieter", "emil", "frida", "gustav", "hanna")


def deal(
    hands: list[list[str]],
    stack: list[str],
    bids: list[int] | None = None,
    options: RageOptions | None = None,
) -> RageState:
    """A hand-built round; the last seat deals, so the first seat bids and leads."""
    players = list(NAMES[: len(hands)])
    return RageState.from_deal(
        players,
        {p: h for p, h in zip(players, hands, strict=True)},
        stack,
        bids=None if bids is None else dict(zip(players, bids, strict=True)),
        options=options,
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(3, 8),
    seed=st.integers(0, 2**32),
    plus_minus_one=st.booleans(),
    sweep=st.booleans(),
)
def test_every_action_is_legal_in_whole_games(
    players: int, seed: int, plus_minus_one: bool, sweep: bool
) -> None:
    """Whole games, 3-8 players, with and without plus/minus one: every action is legal."""
    options = RageOptions(plus_minus_one=plus_minus_one, sweep=sweep)
    state = RageState.new(list(NAMES[:players]), seed=seed, options=options)
    while not state.is_over:
        player = state.acting_players()[0]
        action = heuristic.heuristic_action(state.view(player))
        assert action in state.legal_actions(player)
        state.apply(player, action)
    assert len(state.rounds) == 10


def test_bid_counts_jokers_trumps_and_high_cards() -> None:
    """Joker 1, trump 11+ 1, trump 7-10 1/2, off-trump 15 0.7 and 14 0.4: 3.6 rounds to 4."""
    state = deal(
        [
            ["JOKER", "R11", "R8", "B15", "G14", "Y3"],
            ["B1", "G1", "Y1", "O1", "O2", "O3"],
            ["G2", "Y2", "O4", "B3", "B4", "B5"],
        ],
        ["R2", "G3"],  # red is trump
    )
    assert heuristic.estimate(state.hand("anja"), Colour.RED) == 3.6
    assert heuristic.heuristic_bid(state.view("anja")) == Bid(4)


def test_bid_rounds_a_half_up_and_low_cards_to_zero() -> None:
    """One trump of 7 is half a trick, bid as one; a 14 alone (0.4) is bid as zero."""
    half = deal([["R7", "B2"], ["B1", "G1"], ["G2", "Y2"]], ["R2", "G3"])
    assert heuristic.heuristic_bid(half.view("anja")) == Bid(1)
    low = deal([["B14", "B2"], ["B1", "G1"], ["G2", "Y2"]], ["R2", "G3"])
    assert heuristic.heuristic_bid(low.view("anja")) == Bid(0)


def test_plus_minus_one_moves_the_bid_to_the_nearer_side() -> None:
    """The dealer (last bidder) whose estimate is forbidden bids the nearer legal value."""
    options = RageOptions(plus_minus_one=True)
    # anja and bernd bid 0 each; claudia (dealer) estimates 2.2 -> 2, forbidden (2 tricks).
    state = deal([["B1", "G1"], ["G2", "Y2"], ["JOKER", "R12"]], ["R2", "G3"], options=options)
    state.apply("anja", Bid(0))
    state.apply("bernd", Bid(0))
    assert heuristic.heuristic_bid(state.view("claudia")) == Bid(1)


def test_below_the_bid_it_wins_as_cheaply_as_it_can() -> None:
    """Needing a trick and holding B12 and B15 over a led B10: B12 is played."""
    state = deal([["B10", "G5"], ["B12", "B15"], ["Y7", "Y8"]], ["O1", "O2"], bids=[0, 2, 0])
    state.apply("anja", Play(Card.parse("B10")))
    assert heuristic.heuristic_play(state.view("bernd")) == Play(Card.parse("B12"))


def test_at_the_bid_it_loses_with_its_strongest_loser() -> None:
    """At its bid over a led B10: B9 (the strongest card that loses) rather than B3."""
    state = deal([["B10", "G5"], ["B9", "B3"], ["Y7", "Y8"]], ["O1", "O2"], bids=[1, 0, 1])
    state.apply("anja", Play(Card.parse("B10")))
    assert heuristic.heuristic_play(state.view("bernd")) == Play(Card.parse("B9"))


def test_leads_strongest_below_the_bid_and_weakest_at_it() -> None:
    """Leading: a Joker named trump when tricks are needed, the lowest card otherwise."""
    hands = [["JOKER", "B3", "O12"], ["B1", "G1", "G7"], ["G2", "Y2", "Y4"]]
    need = deal(hands, ["O1", "O2"], bids=[2, 0, 0])
    assert heuristic.heuristic_play(need.view("anja")) == Play(JOKER, Colour.ORANGE)
    done = deal(hands, ["O1", "O2"], bids=[0, 1, 1])
    assert heuristic.heuristic_play(done.view("anja")) == Play(Card.parse("B3"))


def test_a_losing_joker_names_neither_led_colour_nor_trump() -> None:
    """At the bid and void in the led colour, a Joker is named for a colour that cannot win."""
    state = deal([["B4", "G1"], ["JOKER", "G9"], ["Y15", "B5"]], ["O1", "O2"], bids=[1, 0, 1])
    state.apply("anja", Play(Card.parse("B4")))
    play = heuristic.heuristic_play(state.view("bernd"))
    assert isinstance(play, Play)
    if play.card == JOKER:
        assert play.colour not in (Colour.BLUE, Colour.ORANGE)
    assert not heuristic.wins_now(state.view("bernd"), play)
