"""Tests of Rage bidding: open order, plus/minus one, hidden and secret bids."""

from __future__ import annotations

import pytest

from bot.engines.rage import (
    AlreadyBid,
    Bid,
    Card,
    IllegalBid,
    NotYourTurn,
    Phase,
    Play,
    RageOptions,
    RageState,
    WrongPhase,
)

from .test_rage_helpers import assert_rejected, deal, play

HANDS = [["B1", "G1", "R1"], ["B2", "G2", "R2"], ["B3", "G3", "R3"], ["B4", "G4", "R4"]]


def test_open_bids_go_round_from_the_dealers_left() -> None:
    """Each player bids in seat order starting left of the dealer, 0..hand size."""
    state = deal(HANDS, stack=["Y5"], dealer="bernd")
    order = []
    for tricks in (1, 0, 3, 2):
        player = state.current_player
        assert player is not None
        assert state.legal_actions(player) == [Bid(n) for n in range(4)]
        order.append(player)
        state.apply(player, Bid(tricks))
    assert order == ["claudia", "dieter", "anja", "bernd"]
    assert state.phase is Phase.PLAYING
    assert state.current_player == "claudia"  # the dealer's left leads the first trick
    assert state.bids == [3, 2, 1, 0]


def test_only_the_player_to_bid_may_bid() -> None:
    """Bidding out of turn raises NotYourTurn and others have no legal actions."""
    state = deal(HANDS)
    assert state.legal_actions("bernd") == []
    error = assert_rejected(state, "bernd", Bid(1), NotYourTurn)
    assert "anja" in str(error)


@pytest.mark.parametrize("tricks", [-1, 4, True, "2", 1.0])
def test_bids_outside_zero_to_hand_size_are_illegal(tricks: object) -> None:
    """Only whole numbers 0..hand size are bids."""
    state = deal(HANDS)
    error = assert_rejected(state, "anja", Bid(tricks), IllegalBid)  # type: ignore[arg-type]
    assert "0 to 3" in str(error)


def test_plus_minus_one_forbids_exactly_one_bid_for_the_last_bidder() -> None:
    """The dealer may not make the bids add up to the number of tricks; others are free."""
    state = deal(HANDS, options=RageOptions(plus_minus_one=True))
    for player, tricks in (("anja", 1), ("bernd", 0), ("claudia", 1)):
        assert len(state.legal_actions(player)) == 4
        state.apply(player, Bid(tricks))
    assert state.legal_actions("dieter") == [Bid(0), Bid(2), Bid(3)]
    error = assert_rejected(state, "dieter", Bid(1), IllegalBid)
    assert "plus/minus one" in str(error)
    state.apply("dieter", Bid(3))
    assert state.phase is Phase.PLAYING


def test_plus_minus_one_forbids_nothing_when_the_sum_is_already_over() -> None:
    """If the other bids already exceed the tricks, every bid is allowed to the dealer."""
    state = deal(HANDS, options=RageOptions(plus_minus_one=True, sweep=True))
    for player in ("anja", "bernd", "claudia"):
        state.apply(player, Bid(2))
    assert state.legal_actions("dieter") == [Bid(n) for n in range(4)]


def test_without_plus_minus_one_the_bids_may_add_up() -> None:
    """The base game lets the last bidder make the sum equal the tricks."""
    state = deal(HANDS)
    for player, tricks in (("anja", 1), ("bernd", 0), ("claudia", 1)):
        state.apply(player, Bid(tricks))
    assert Bid(1) in state.legal_actions("dieter")


@pytest.mark.parametrize("variant", ["hidden_bids", "secret_bids"])
def test_simultaneous_bids_in_any_order(variant: str) -> None:
    """Everyone who has not bid may bid, in any order, exactly once."""
    state = deal(HANDS, options=RageOptions(**{variant: True}))
    assert state.acting_players() == ("anja", "bernd", "claudia", "dieter")
    assert state.current_player is None
    with pytest.raises(ValueError, match="several players"):
        state.legal_actions()
    state.apply("dieter", Bid(2))
    assert state.legal_actions("dieter") == []
    assert_rejected(state, "dieter", Bid(1), AlreadyBid)
    state.apply("bernd", Bid(0))
    assert state.acting_players() == ("anja", "claudia")
    state.apply("claudia", Bid(3))
    assert state.acting_players() == ("anja",)
    assert state.legal_actions() == [Bid(n) for n in range(4)]
    state.apply("anja", Bid(1))
    assert state.phase is Phase.PLAYING
    assert state.acting_players() == ("anja",)


def test_hidden_bids_are_revealed_when_everyone_has_bid() -> None:
    """During hidden bidding each player sees only their own bid; then all are shown."""
    state = deal(HANDS, options=RageOptions(hidden_bids=True))
    state.apply("claudia", Bid(3))
    state.apply("anja", Bid(1))
    bernd = state.view("bernd")
    assert bernd.bids == (None, None, None, None)
    assert bernd.has_bid == (True, False, True, False)
    assert state.view("claudia").bids == (None, None, 3, None)
    assert state.view(None).bids == (None, None, None, None)
    assert all(entry.bid is None for entry in bernd.score_sheet.rows[-1].entries)
    state.apply("bernd", Bid(0))
    state.apply("dieter", Bid(0))
    for viewer in (*state.players, None):
        assert state.view(viewer).bids == (1, 0, 3, 0)


def test_secret_bids_stay_secret_until_the_round_is_scored() -> None:
    """Secret bids are shown to their owner only, until the round's score is on the sheet."""
    state = deal(
        [["B1"], ["B2"], ["B3"]],
        stack=["R0"],
        bids=[0, 1, 0],
        options=RageOptions(secret_bids=True),
    )
    assert state.view("anja").bids == (0, None, None)
    assert state.view("bernd").bids == (None, 1, None)
    assert state.view(None).bids == (None, None, None)
    play(state, "B1", "B2")
    assert state.view("claudia").bids == (None, None, 0)
    play(state, "B3")
    # Round 10 was the last: the game is over and everything is revealed.
    assert state.phase is Phase.FINISHED
    assert state.view("anja").bids == (0, 1, 0)
    assert state.view("anja").score_sheet.rows[-1].entries[1].bid == 1


def test_secret_bids_on_the_sheet_after_each_round() -> None:
    """Once a round is scored its bids appear on everyone's sheet; the new round's do not."""
    state = deal(
        [["B1", "G1"], ["B2", "G2"], ["B3", "G3"]],
        stack=["R0"],
        bids=[2, 0, 1],
        options=RageOptions(secret_bids=True),
    )
    play(state, "B1", "B2", "B3", "G3", "G1", "G2")
    assert state.round == 10
    sheet = state.view("anja").score_sheet
    assert [e.bid for e in sheet.rows[0].entries] == [2, 0, 1]
    for player in state.players:
        state.apply(player, Bid(0))
    assert state.view("anja").score_sheet.rows[-1].entries[1].bid is None
    assert state.view("anja").score_sheet.rows[-1].entries[0].bid == 0


def test_playing_during_bidding_is_the_wrong_phase() -> None:
    """A card play while bids are open names the phase."""
    state = deal(HANDS)
    error = assert_rejected(state, "anja", Play(Card.parse("B1")), WrongPhase)
    assert "bidding" in str(error)


def test_new_game_bidding_in_a_real_deal() -> None:
    """A seeded game opens with bids 0..10 for the dealer's left neighbour."""
    state = RageState.new(["x", "y", "z"], seed=3)
    player = state.current_player
    assert player is not None
    assert state.legal_actions(player) == [Bid(n) for n in range(11)]
