"""Rage hard's look-ahead: the fast simulator, the guesses of hidden cards, and its play."""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.ai import Level, RageMemory, choose_rage_action
from bot.ai.rage_search import (
    Dealer,
    bid_values,
    determinise,
    play_values,
    same_as,
    search_play,
    unseen_cards,
)
from bot.ai.rage_sim import NONE, SimRound
from bot.ai.rage_value import FEATURES, WinModel, win_model
from bot.engines.rage import (
    Bid,
    Card,
    Colour,
    Phase,
    Play,
    PlayerId,
    RageOptions,
    RageState,
)
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
    first = choose_rage_action(view, Level.HARD, random.Random(9), memory, time_budget=None)
    second = choose_rage_action(view, Level.HARD, random.Random(9), copy, time_budget=None)
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


def play_bids(state: RageState) -> None:
    """Let the heuristic bid for everyone."""
    while state.phase is Phase.BIDDING:
        player = state.acting_players()[0]
        state.apply(player, heuristic.heuristic_action(state.view(player)))


def test_the_value_table_is_read_from_data_and_makes_sense() -> None:
    """data/rage_value.json loads: a bigger lead is a better chance, and the end is exact."""
    model = win_model()
    assert sorted(model.weights) == list(range(1, 10))
    for left in range(1, 10):
        behind = model.chance([0, 20, 0, 0], 0, left)
        level = model.chance([0, 0, 0, 0], 0, left)
        ahead = model.chance([20, 0, 0, 0], 0, left)
        assert 0.0 < behind < level < ahead < 1.0
    # A lead matters more the fewer rounds are left to catch up.
    assert model.chance([20, 0, 0, 0], 0, 1) > model.chance([20, 0, 0, 0], 0, 9)
    assert model.chance([30, 10, 30, 0], 0, 0) == 0.5
    assert model.chance([29, 30, 0, 0], 0, 0) == 0.0


def test_the_estimates_read_the_value_table() -> None:
    """A review's chance to win comes from the value table: a table that wants to fall
    behind ranks the two plays the other way round, while the points stay the same."""
    state = RageState.from_deal(
        ["anja", "bernd", "claudia"],
        {"anja": ["B10", "G5"], "bernd": ["B12", "B3"], "claudia": ["Y7", "Y8"]},
        ["O1", "O2", "O3"],
        bids={"anja": 1, "bernd": 0, "claudia": 1},
    )
    state.totals = [20, 15, 10]
    state.apply("anja", Play(Card.parse("B10")))
    view = state.view("bernd")
    real = win_model()
    backwards = WinModel({left: tuple(-w for w in ws) for left, ws in real.weights.items()})
    duck, overtake = Play(Card.parse("B3")), Play(Card.parse("B12"))
    right = play_values(view, None, random.Random(5), 30, real)
    wrong = play_values(view, None, random.Random(5), 30, backwards)
    assert right[duck].win > right[overtake].win
    assert wrong[duck].win < wrong[overtake].win
    assert right[duck].points == wrong[duck].points


def test_hard_with_the_value_table_plays_for_it() -> None:
    """The search scores imagined rounds with a value table when given one (hard-win in the
    league): a table that wants to fall behind makes it overtake where it would duck."""
    state = RageState.from_deal(
        ["anja", "bernd", "claudia"],
        {"anja": ["B10", "G5"], "bernd": ["B12", "B3"], "claudia": ["Y7", "Y8"]},
        ["O1", "O2", "O3"],
        bids={"anja": 1, "bernd": 0, "claudia": 1},
    )
    state.totals = [20, 15, 10]
    state.apply("anja", Play(Card.parse("B10")))
    view = state.view("bernd")
    real = win_model()
    backwards = WinModel({left: tuple(-w for w in ws) for left, ws in real.weights.items()})
    assert search_play(view, None, random.Random(1), 0.1, model=real) == Play(Card.parse("B3"))
    assert search_play(view, None, random.Random(1), 0.1, model=backwards) == Play(
        Card.parse("B12")
    )


def test_a_table_fitted_for_other_features_is_refused(tmp_path: Path) -> None:
    """A value file that does not match the features the code computes is an error."""
    path = tmp_path / "value.json"
    path.write_text(
        json.dumps({"features": ["margin"], "rounds_left": {"1": [0.0, 1.0]}}), encoding="utf-8"
    )
    with pytest.raises(ValueError, match="other features"):
        win_model(path)
    path.write_text(
        json.dumps({"features": list(FEATURES), "rounds_left": {"1": [0.0, 1.0]}}),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="coefficients"):
        win_model(path)


def test_the_search_sees_only_the_players_view() -> None:
    """Two deals that look the same to bernd (other hands and stack differ) get the same
    estimates for every bid and play, card for card."""
    hands: dict[PlayerId, list[Card | str]] = {
        "anja": ["B10", "G5", "Y6", "JOKER"],
        "bernd": ["B14", "B2", "R3", "O9"],
        "claudia": ["Y7", "Y8", "G9", "+5"],
        "dieter": ["O4", "O5", "B7", "R12"],
    }
    twin_hands: dict[PlayerId, list[Card | str]] = {
        "anja": ["O4", "G9", "Y6", "R12"],
        "bernd": hands["bernd"],
        "claudia": ["Y7", "B10", "JOKER", "+5"],
        "dieter": ["Y8", "O5", "B7", "G5"],
    }
    stack = ["R1", "G2", "G3", "V7", "V8"]
    twin_stack = ["R1", "V8", "V7", "G3", "G2"]  # the turned-up trump is the same
    players = ["anja", "bernd", "claudia", "dieter"]
    first = RageState.from_deal(players, hands, stack)
    twin = RageState.from_deal(players, twin_hands, twin_stack)
    first.apply("anja", Bid(1))
    twin.apply("anja", Bid(1))
    assert first.view("bernd") == twin.view("bernd")
    model = win_model()
    bids = bid_values(first.view("bernd"), None, random.Random(4), 20, model)
    assert bids == bid_values(twin.view("bernd"), None, random.Random(4), 20, model)
    for state in (first, twin):
        for player, tricks in (("bernd", 0), ("claudia", 1), ("dieter", 2)):
            state.apply(player, Bid(tricks))
        state.apply("anja", Play(Card.parse("Y6")))
    assert first.view("bernd") == twin.view("bernd")
    plays = play_values(first.view("bernd"), None, random.Random(4), 20, model)
    assert plays == play_values(twin.view("bernd"), None, random.Random(4), 20, model)
    assert set(plays) == set(first.view("bernd").legal_actions)


def test_estimates_tell_a_bad_play_from_a_good_one() -> None:
    """The estimates a game review reads: at bid 0, ducking under the lead is worth
    clearly more points than taking the trick, and a better chance to win."""
    state = RageState.from_deal(
        ["anja", "bernd", "claudia"],
        {"anja": ["B10", "G5"], "bernd": ["B12", "B3"], "claudia": ["Y7", "Y8"]},
        ["O1", "O2", "O3"],
        bids={"anja": 1, "bernd": 0, "claudia": 1},
    )
    state.apply("anja", Play(Card.parse("B10")))
    values = play_values(state.view("bernd"), None, random.Random(2), 30, win_model())
    duck, overtake = values[Play(Card.parse("B3"))], values[Play(Card.parse("B12"))]
    assert duck.points > overtake.points + 5 and duck.win > overtake.win


def test_guesses_deal_every_unseen_card_once_and_evenly() -> None:
    """Each guess gives the others exactly their hand sizes from the unseen cards, the rest
    to the stack, and over many guesses every unseen card lands in each hand about equally."""
    state = RageState.new(list(NAMES[:4]), seed=8)
    play_bids(state)
    view = state.view(state.acting_players()[0])
    seat = view.players.index(view.viewer)
    unseen = unseen_cards(view, None)
    dealer = Dealer(view, None, unseen)
    rng = random.Random(1)
    counts: dict[tuple[int, int], int] = {}
    guesses = 3000
    for _ in range(guesses):
        sim = dealer.deal(rng)
        others = [s for s in range(4) if s != seat]
        dealt = [c for s in others for c in sim.hands[s]] + sim.stack
        assert sorted(dealt) == sorted(unseen)
        for s in others:
            assert len(sim.hands[s]) == view.hand_sizes[s]
            for card in sim.hands[s]:
                counts[s, card] = counts.get((s, card), 0) + 1
    share = view.hand_sizes[(seat + 1) % 4] / len(unseen)
    for (_, card), count in counts.items():
        copies = unseen.count(card)
        assert abs(count / guesses - share * copies) < 0.05 * copies


def test_interchangeable_cards_are_searched_once() -> None:
    """Two cards of a colour with nothing unseen between them are one play; a card between
    them that someone may hold, or on the table, keeps them apart."""
    state = RageState.from_deal(
        ["anja", "bernd", "claudia"],
        {
            "anja": ["B5", "B7", "G6", "G9"],
            "bernd": ["B6", "R1", "R2", "R3"],
            "claudia": ["O1", "O2", "O3", "G7"],
        },
        ["V1", "V2", "V3"],
        bids={"anja": 1, "bernd": 1, "claudia": 1},
    )
    view = state.view("anja")
    plays = [a for a in view.legal_actions if isinstance(a, Play)]
    # Blue 6 is unseen to anja: 5 and 7 differ. Green 7 and 8 are unseen: 6 and 9 differ.
    links = same_as(plays, view, unseen_cards(view, None))
    assert links == list(range(len(plays)))
    # Once green 7 and 8 are counted as gone, green 6 and 9 are the same play.
    gone = [
        c
        for c in unseen_cards(view, None)
        if c not in (int(Card.parse("G7")), int(Card.parse("G8")))
    ]
    links = same_as(plays, view, gone)
    g6, g9 = plays.index(Play(Card.parse("G6"))), plays.index(Play(Card.parse("G9")))
    assert links[g9] == g6 and links[g6] == g6
    assert links[plays.index(Play(Card.parse("B7")))] == plays.index(Play(Card.parse("B7")))


def test_a_card_on_the_table_keeps_two_cards_apart() -> None:
    """Blue 6 on the table: blue 5 loses to it and blue 7 beats it, so both are searched."""
    state = RageState.from_deal(
        ["anja", "bernd", "claudia"],
        {"anja": ["B6", "R1", "R2"], "bernd": ["B5", "B7", "G1"], "claudia": ["O1", "O2", "G7"]},
        ["V1", "V2", "V3"],
        bids={"anja": 1, "bernd": 1, "claudia": 1},
    )
    state.apply("anja", Play(Card.parse("B6")))
    view = state.view("bernd")
    plays = [a for a in view.legal_actions if isinstance(a, Play)]
    gone = [c for c in unseen_cards(view, None) if c != int(Card.parse("B6"))]
    assert same_as(plays, view, gone) == [0, 1]


def test_a_search_out_of_time_still_answers_legally() -> None:
    """A deadline already past: every candidate gets one guess and the answer is legal."""
    state = RageState.new(list(NAMES[:4]), seed=12)
    play_bids(state)
    view = state.view(state.acting_players()[0])
    action = search_play(view, None, random.Random(1), 0.1, deadline=0.0, model=win_model())
    assert action in view.legal_actions
