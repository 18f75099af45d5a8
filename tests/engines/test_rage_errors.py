"""Every illegal Rage action raises a specific IllegalMove and leaves the state unchanged."""

from __future__ import annotations

import pytest

from bot.engines.errors import GameOver, IllegalMove, NotYourTurn, UnknownPlayer
from bot.engines.rage import (
    JOKER,
    AlreadyBid,
    Bid,
    Card,
    CardNotInHand,
    Colour,
    IllegalBid,
    InvalidAction,
    JokerColourError,
    MustFollowSuit,
    Play,
    RageOptions,
    RageState,
    WrongPhase,
)

from .test_rage_helpers import assert_rejected, deal, play, play_random_game

HANDS = [["Y5", "B1", "JOKER"], ["Y9", "R3", "NT"], ["G2", "JOKER", "CT"]]


def bidding() -> RageState:
    """Open bidding, anja to bid first (round 8)."""
    return deal(HANDS, stack=["R0"], options=RageOptions(plus_minus_one=True))


def playing() -> RageState:
    """Anja has led Y5; bernd (who holds yellow) is to play."""
    state = deal(HANDS, stack=["R0"], bids=[1, 1, 0])
    play(state, "Y5")
    return state


CASES = [
    (bidding, "zoe", Bid(1), UnknownPlayer),
    (bidding, ["anja"], Bid(1), UnknownPlayer),
    (bidding, "bernd", Bid(1), NotYourTurn),
    (bidding, "anja", Play(Card.parse("Y5")), WrongPhase),
    (bidding, "anja", "bid 1", InvalidAction),
    (bidding, "anja", Bid(4), IllegalBid),
    (bidding, "anja", Bid(-1), IllegalBid),
    (bidding, "anja", Bid(None), IllegalBid),  # type: ignore[arg-type]
    (playing, "claudia", Play(Card.parse("G2")), NotYourTurn),
    (playing, "bernd", Bid(1), WrongPhase),
    (playing, "bernd", None, InvalidAction),
    (playing, "bernd", Play(Card.parse("Y10")), CardNotInHand),
    (playing, "bernd", Play("Y10"), CardNotInHand),  # type: ignore[arg-type]
    (playing, "bernd", Play("nonsense"), InvalidAction),  # type: ignore[arg-type]
    (playing, "bernd", Play(Card.parse("R3")), MustFollowSuit),
    (playing, "bernd", Play(Card.parse("NT")), MustFollowSuit),
    (playing, "bernd", Play(Card.parse("Y9"), Colour.RED), JokerColourError),
]


@pytest.mark.parametrize(("make", "player", "action", "error"), CASES)
def test_illegal_actions_leave_the_state_unchanged(
    make: object, player: object, action: object, error: type[IllegalMove]
) -> None:
    """Each illegal action raises its own error, with a message and details, and changes nothing."""
    state = make()  # type: ignore[operator]
    caught = assert_rejected(state, player, action, error)
    assert isinstance(caught, IllegalMove)
    assert caught.code != IllegalMove.code or error is IllegalMove
    assert isinstance(caught.details, dict)


def test_joker_without_colour_or_with_a_bad_colour() -> None:
    """A Joker must name one of the six colours."""
    state = deal(HANDS, stack=["R0"], bids=[1, 1, 0])
    assert_rejected(state, "anja", Play(JOKER), JokerColourError)
    assert_rejected(state, "anja", Play(JOKER, "red"), JokerColourError)  # type: ignore[arg-type]
    state.apply("anja", Play(JOKER, Colour.RED))
    assert state.led_colour is Colour.RED


def test_plus_minus_one_violation_is_an_illegal_bid() -> None:
    """The forbidden last bid is refused without touching the other bids."""
    state = bidding()
    play_bids = [("anja", 1), ("bernd", 1)]
    for player, tricks in play_bids:
        state.apply(player, Bid(tricks))
    error = assert_rejected(state, "claudia", Bid(1), IllegalBid)
    assert error.details["bid"] == 1


def test_second_simultaneous_bid_is_already_bid() -> None:
    """AlreadyBid is a NotYourTurn, so a UI may treat both alike."""
    state = deal(HANDS, stack=["R0"], options=RageOptions(secret_bids=True))
    state.apply("bernd", Bid(0))
    error = assert_rejected(state, "bernd", Bid(1), AlreadyBid)
    assert isinstance(error, NotYourTurn)


def test_unknown_player_cannot_query_legal_actions_or_views() -> None:
    """Strangers are told they have no seat; True is not the player whose id is 1."""
    state = RageState.new([0, 1, 2], seed=4)
    with pytest.raises(UnknownPlayer):
        state.legal_actions("zoe")
    with pytest.raises(UnknownPlayer):
        state.view("zoe")
    assert_rejected(state, True, Bid(0), UnknownPlayer)


def test_actions_after_the_game_are_game_over() -> None:
    """Once round 10 is scored every action by a seated player is GameOver."""
    state = play_random_game(3, seed=1)
    assert state.legal_actions("anja") == []
    assert state.acting_players() == ()
    error = assert_rejected(state, "anja", Bid(0), GameOver)
    assert "over" in str(error)
    assert_rejected(state, "zoe", Bid(0), UnknownPlayer)


def test_move_number_counts_only_applied_actions() -> None:
    """Rejected actions do not advance the move number; accepted ones do."""
    state = deal(HANDS, stack=["R0"])
    assert state.move_number == 0
    assert_rejected(state, "bernd", Bid(0), NotYourTurn)
    state.apply("anja", Bid(0))
    assert state.move_number == 1
