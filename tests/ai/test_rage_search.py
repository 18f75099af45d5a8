"""Rage hard's look-ahead: the fast simulator, the guesses of hidden cards, and its play."""

from __future__ import annotations

import pickle
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.ai import Level, RageMemory, choose_rage_action
from bot.ai.rage_search import determinise, unseen_cards
from bot.ai.rage_sim import NONE, SimRound
from bot.engines.rage import Card, Colour, Phase, Play, RageOptions, RageState
from tests.benchmark_scripts import load

heuristic = load("strength/rage_heuristic")

NAMES = ("anja", "bernd", "claudia", "dieter", "emil")


def omniscient_sim(state: RageState) -> SimRound:
    """The simulator's copy of a whole engine state, hidden cards included."""
    return SimRound(
        hands=[[int(c) for c in hand] for hand in state.hands],
        stack=[int(c) for c in state.stack],
        trump=NONE if state.trump is None else int(state.trump),
        no_trump=state.no_trump_this_trick,
        bids=[-1 if b is None else b for b in state.bids],
        won=list(state.tricks_won),
        bonus=list(state.bonus),
        leader=state.leader_seat,
        turn=state.seat_of(state.acting_players()[0]),
        trick=[int(c) for c in state.trick_cards],
        named=[NONE if c is None else int(c) for c in state.trick_named],
        led=NONE if state.led_colour is None else int(state.led_colour),
        size=state.cards_per_hand,
        sweep=state.options.sweep,
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(3, 5), seed=st.integers(0, 2**32), sweep=st.booleans())
def test_the_simulator_plays_rounds_exactly_like_the_engine(
    players: int, seed: int, sweep: bool
) -> None:
    """The simulator's heuristic picks the benchmark heuristic's cards, with the same results.

    Every round of a whole game is played in the engine and in the simulator side by side:
    the same card each turn, the same trump after No Trump and Change Trump, the same
    trick winners and "+5"/"-5" points, and the same round scores.
    """
    state = RageState.new(list(NAMES[:players]), seed=seed, options=RageOptions(sweep=sweep))
    while not state.is_over:
        while state.phase is Phase.BIDDING:
            player = state.acting_players()[0]
            state.apply(player, heuristic.heuristic_action(state.view(player)))
        sim = omniscient_sim(state)
        rounds = len(state.rounds)
        while len(state.rounds) == rounds:
            player = state.acting_players()[0]
            assert sim.turn == state.seat_of(player)
            action = heuristic.heuristic_action(state.view(player))
            card, named = sim.heuristic_card(sim.turn)
            colour = NONE if action.colour is None else int(action.colour)
            assert (card, named) == (int(action.card), colour)
            sim.play(card, named)
            state.apply(player, action)
            if len(state.rounds) == rounds:
                assert sim.won == state.tricks_won and sim.bonus == state.bonus
                assert sim.trump == (NONE if state.trump is None else int(state.trump))
        assert sim.over
        record = state.rounds[-1]
        assert [sim.score(s) for s in range(players)] == [s.points for s in record.scores]


def test_a_player_who_did_not_follow_is_never_dealt_that_colour() -> None:
    """Card counting: a colour someone failed to follow is exhausted for them in every guess."""
    state = RageState.from_deal(
        ["anja", "bernd", "claudia"],
        {
            "anja": ["B10", "B2", "G5", "Y9"],
            "bernd": ["G3", "G4", "R1", "Y1"],
            "claudia": ["B12", "B13", "O2", "O3"],
        },
        ["O1", "R2", "G6"],
        bids={"anja": 1, "bernd": 0, "claudia": 2},
    )
    memory = RageMemory()
    state.apply("anja", Play(Card.parse("B10")))
    state.apply("bernd", Play(Card.parse("G3")))  # bernd cannot follow blue
    view = state.view("claudia")
    memory.observe(view)
    assert Colour.BLUE in memory.void_colours("bernd")
    unseen = unseen_cards(view, memory)
    rng = random.Random(3)
    for _ in range(200):
        sim = determinise(view, memory, unseen, rng)
        assert all(card >= 96 or card >> 4 != int(Colour.BLUE) for card in sim.hands[1])
        assert sorted(sim.hands[2]) == sorted(int(c) for c in view.hand)
        assert len(sim.hands[0]) == 3 and len(sim.hands[1]) == 3


def test_unseen_cards_leave_out_everything_remembered() -> None:
    """Own hand, turned-up cards, the trick and remembered tricks are not in the guesses."""
    state = RageState.new(list(NAMES[:4]), seed=11)
    memory = RageMemory()
    while state.phase is Phase.BIDDING:
        player = state.acting_players()[0]
        state.apply(player, heuristic.heuristic_action(state.view(player)))
    for _ in range(6):  # one whole trick and two cards of the next
        player = state.acting_players()[0]
        view = state.view(player)
        if player == "anja":
            memory.observe(view)
        state.apply(player, heuristic.heuristic_action(view))
    view = state.view("anja")
    memory.observe(view)
    unseen = unseen_cards(view, memory)
    hidden = [int(c) for p in ("bernd", "claudia", "dieter") for c in state.hand(p)]
    hidden += [int(c) for c in state.stack]
    assert sorted(unseen) == sorted(hidden)


def test_at_its_bid_hard_ducks_instead_of_overtaking() -> None:
    """At its bid with a safe low card, hard does not take the trick with a high one."""
    state = RageState.from_deal(
        ["anja", "bernd", "claudia", "dieter"],
        {
            "anja": ["B10", "G5", "Y6"],
            "bernd": ["B14", "B2", "R3"],
            "claudia": ["Y7", "Y8", "G9"],
            "dieter": ["O4", "O5", "B7"],
        },
        ["R1", "G2", "G3"],  # red is trump
        bids={"anja": 1, "bernd": 0, "claudia": 1, "dieter": 1},
    )
    state.apply("anja", Play(Card.parse("B10")))
    for seed in range(5):
        action = choose_rage_action(state.view("bernd"), Level.HARD, random.Random(seed))
        assert action == Play(Card.parse("B2"))


def test_needing_a_trick_hard_wins_it_cheaply_when_last() -> None:
    """Last to play and needing the trick: the cheapest winning card, not the highest."""
    state = RageState.from_deal(
        ["anja", "bernd", "claudia"],
        {"anja": ["B10", "G5"], "bernd": ["B4", "G6"], "claudia": ["B12", "B15"]},
        ["O1", "O2", "O3"],
        bids={"anja": 0, "bernd": 0, "claudia": 2},
    )
    state.apply("anja", Play(Card.parse("B10")))
    state.apply("bernd", Play(Card.parse("B4")))
    action = choose_rage_action(state.view("claudia"), Level.HARD, random.Random(1))
    assert action == Play(Card.parse("B12"))


def test_the_memory_survives_a_round_trip_through_pickle() -> None:
    """The memory goes to a worker process and back: pickled, it decides the same."""
    state = RageState.new(list(NAMES[:4]), seed=5)
    memory = RageMemory()
    while state.phase is Phase.BIDDING or state.trick_number < 3:
        player = state.acting_players()[0]
        view = state.view(player)
        if player == "anja":
            action = choose_rage_action(view, Level.HARD, random.Random(1), memory)
        else:
            action = heuristic.heuristic_action(view)
        state.apply(player, action)
    while state.acting_players()[0] != "anja":
        player = state.acting_players()[0]
        state.apply(player, heuristic.heuristic_action(state.view(player)))
    copy = pickle.loads(pickle.dumps(memory))
    assert copy == memory
    view = state.view("anja")
    first = choose_rage_action(view, Level.HARD, random.Random(9), memory)
    second = choose_rage_action(view, Level.HARD, random.Random(9), copy)
    assert first == second and copy == memory


def test_a_memory_from_another_game_does_not_break_the_guesses() -> None:
    """A stale memory that claims the opponents' cards were played is not trusted."""
    state = RageState.new(list(NAMES[:4]), seed=21)
    while state.phase is Phase.BIDDING:
        player = state.acting_players()[0]
        state.apply(player, heuristic.heuristic_action(state.view(player)))
    view = state.view(state.acting_players()[0])
    memory = RageMemory(round=view.round, tricks={1, 2, 3})
    memory.played = [c for p in state.players for c in state.hand(p)] + list(state.stack)
    action = choose_rage_action(view, Level.HARD, random.Random(2), memory)
    assert action in view.legal_actions
