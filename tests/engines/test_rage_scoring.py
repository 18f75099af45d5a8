"""Tests of Rage scoring: the rule book's example, sweep, totals, sheet and standings."""

from __future__ import annotations

import pytest

from bot.engines.rage import (
    Outcome,
    Phase,
    RageOptions,
    Standing,
    score_player,
)
from bot.engines.rage.scoring import rank_players

from .test_rage_helpers import deal, play, play_random_game, play_trick


@pytest.mark.parametrize(
    ("bid", "tricks", "bonus", "expected"),
    [
        (3, 3, -5, 8),  # Anja: 3 + 10 - 5
        (0, 1, 5, 1),  # Bernd: 1 - 5 + 5
        (2, 2, 0, 12),  # Claudia: 2 + 10
        (7, 4, 0, -1),  # Dieter: 4 - 5
    ],
)
def test_rule_book_example_scores(bid: int, tricks: int, bonus: int, expected: int) -> None:
    """The seed's round-1 example: Anja 8, Bernd 1, Claudia 12, Dieter -1."""
    assert score_player(bid, tricks, bonus, 10).points == expected


def test_rule_book_example_played_out() -> None:
    """The example round played trick by trick gives the same sheet row."""
    hands = {
        "anja": ["B1", "G1", "R1", "Y1", "V15", "O15", "B4", "G5", "R5", "Y14"],
        "bernd": ["B2", "G2", "R2", "Y2", "V2", "O1", "B5", "G6", "R14", "Y4"],
        "claudia": ["B3", "G3", "R3", "Y3", "V3", "O2", "B14", "G14", "+5", "-5"],
        "dieter": ["B15", "G15", "R15", "Y15", "V1", "O3", "B6", "G4", "R4", "Y5"],
    }
    state = deal(hands, stack=["NT", "O10"], bids=[3, 0, 2, 7])
    assert state.round == 1
    tricks = [
        {"anja": "B1", "bernd": "B2", "claudia": "B3", "dieter": "B15"},
        {"dieter": "G15", "anja": "G1", "bernd": "G2", "claudia": "G3"},
        {"dieter": "R15", "anja": "R1", "bernd": "R2", "claudia": "R3"},
        {"dieter": "Y15", "anja": "Y1", "bernd": "Y2", "claudia": "Y3"},
        {"dieter": "V1", "anja": "V15", "bernd": "V2", "claudia": "V3"},
        {"anja": "O15", "bernd": "O1", "claudia": "O2", "dieter": "O3"},
        {"anja": "B4", "bernd": "B5", "claudia": "B14", "dieter": "B6"},
        {"claudia": "G14", "dieter": "G4", "anja": "G5", "bernd": "G6"},
        {"claudia": "+5", "dieter": "R4", "anja": "R5", "bernd": "R14"},
        {"bernd": "Y4", "claudia": "-5", "dieter": "Y5", "anja": "Y14"},
    ]
    winners = []
    for trick in tricks:
        play_trick(state, trick)
        assert state.last_trick is not None
        winners.append(state.last_trick.winner)
    assert winners == ["dieter"] * 4 + ["anja", "anja", "claudia", "claudia", "bernd", "anja"]
    row = state.score_sheet().rows[0]
    assert row.complete
    assert [(e.bid, e.tricks, e.bonus, e.points) for e in row.entries] == [
        (3, 3, -5, 8),
        (0, 1, 5, 1),
        (2, 2, 0, 12),
        (7, 4, 0, -1),
    ]
    assert [(e.trick_points, e.bid_points) for e in row.entries] == [
        (3, 10),
        (1, -5),
        (2, 10),
        (4, -5),
    ]
    assert state.totals == [8, 1, 12, -1]
    assert state.round == 2 and state.phase is Phase.BIDDING


def two_trick_round(sweep: bool) -> list[int]:
    """Anja wins both tricks of round 9 (bid 2); returns the totals."""
    state = deal(
        [["B9", "G9"], ["B1", "G1"], ["B2", "G2"]],
        stack=["R0"],
        bids=[2, 0, 0],
        options=RageOptions(sweep=sweep),
    )
    play(state, "B9", "B1", "B2", "G9", "G1", "G2")
    return state.totals


def test_sweep_doubles_trick_points_for_winning_every_trick() -> None:
    """With sweep, two tricks of two score 4 instead of 2; the others are unaffected."""
    assert two_trick_round(sweep=False) == [2 + 10, 10, 10]
    assert two_trick_round(sweep=True) == [4 + 10, 10, 10]


def test_sweep_does_not_count_in_round_ten() -> None:
    """The single trick of round 10 scores one point even with sweep."""
    state = deal(
        [["B9"], ["B1"], ["B2"]], stack=["R0"], bids=[1, 0, 0], options=RageOptions(sweep=True)
    )
    assert state.round == 10
    play(state, "B9", "B1", "B2")
    assert state.totals == [1 + 10, 10, 10]
    assert score_player(1, 1, 0, 1, sweep=True).trick_points == 1
    assert score_player(3, 3, 0, 3, sweep=True).trick_points == 6
    assert score_player(2, 2, 0, 3, sweep=True).trick_points == 2


def test_game_total_is_the_sum_of_ten_rounds() -> None:
    """After round 10 the totals are the round scores added up, and the sheet agrees."""
    state = play_random_game(5, seed=8, policy_seed=2)
    assert state.phase is Phase.FINISHED
    sheet = state.score_sheet()
    assert [row.round for row in sheet.rows] == list(range(1, 11))
    assert [row.cards for row in sheet.rows] == list(range(10, 0, -1))
    for seat in range(5):
        running = 0
        for row in sheet.rows:
            entry = row.entries[seat]
            # A scored row knows every part of the score.
            assert entry.points is not None
            assert entry.trick_points is not None and entry.bid_points is not None
            assert entry.points == entry.trick_points + entry.bonus + entry.bid_points
            running += entry.points
            assert entry.total == running
        assert sheet.totals[seat] == running == state.totals[seat]


def test_score_sheet_shows_the_round_in_play() -> None:
    """The open row has bids and tricks so far but no points yet."""
    state = deal([["B9", "G9"], ["B1", "G1"], ["B2", "G2"]], stack=["R0"], bids=[2, 0, 1])
    play(state, "B9", "B1", "B2")
    row = state.score_sheet().rows[-1]
    assert not row.complete
    assert (row.round, row.cards, row.dealer) == (9, 2, "claudia")
    assert [(e.bid, e.tricks, e.points) for e in row.entries] == [
        (2, 1, None),
        (0, 0, None),
        (1, 0, None),
    ]
    assert state.score_sheet().to_dict()["rows"][0]["entries"][0]["tricks"] == 1


def test_ties_share_the_win() -> None:
    """Equal totals share a rank (1, 1, 3); all top scorers are winners."""
    standings = rank_players(["a", "b", "c", "d"], [10, 12, 12, -3])
    assert standings == (
        Standing(1, "b", 12),
        Standing(1, "c", 12),
        Standing(3, "a", 10),
        Standing(4, "d", -3),
    )


def test_outcome_only_when_finished_and_with_shared_winners() -> None:
    """outcome() is None during play and names every tied winner at the end."""
    state = deal([["B9"], ["B1"], ["B2"]], stack=["R0"], bids=[0, 0, 0])
    assert state.outcome() is None
    play(state, "B9", "B1", "B2")
    outcome = state.outcome()
    assert outcome == Outcome(
        winners=("bernd", "claudia"),
        standings=(Standing(1, "bernd", 10), Standing(1, "claudia", 10), Standing(3, "anja", -4)),
    )
    assert outcome.to_dict()["winners"] == ["bernd", "claudia"]
