"""Tests of the per-player Rage view: own hand only, public table state, JSON form."""

from __future__ import annotations

import json

from bot.engines.rage import Bid, Colour, Phase, RageState

from .test_rage_helpers import deal, play


def test_view_shows_own_hand_and_hides_the_rest() -> None:
    """A player sees their own cards and only the sizes of other hands and the stack."""
    state = deal(
        [["Y5", "B1"], ["NT", "B2"], ["JOKER", "B3"]], stack=["R0", "G1", "O2"], bids=[1, 0, 1]
    )
    view = state.view("bernd")
    assert [c.code for c in view.hand] == ["B2", "NT"]
    assert view.hand_sizes == (2, 2, 2)
    assert view.stack_size == 2
    assert view.legal_actions == ()
    text = json.dumps(view.to_dict())
    assert "Y5" not in text and "G1" not in text and "O2" not in text
    assert "stack" not in view.to_dict() and "hands" not in view.to_dict()


def test_spectator_view_has_no_hand_and_no_actions() -> None:
    """view(None) is the public table."""
    state = RageState.new(["a", "b", "c"], seed=1)
    view = state.view(None)
    assert view.hand == () and view.legal_actions == ()
    assert view.viewer is None
    json.dumps(view.to_dict())


def test_view_carries_everything_the_table_shows() -> None:
    """Round, dealer, phase, trump, trick, last trick, tricks, totals and the move number."""
    state = deal(
        [["Y5", "B1"], ["NT", "B2"], ["Y9", "B3"]], stack=["R0", "G1", "O2"], bids=[1, 0, 1]
    )
    play(state, "Y5", "NT")
    view = state.view("claudia")
    assert (view.round, view.cards_per_hand, view.dealer, view.phase) == (
        9,
        2,
        "claudia",
        Phase.PLAYING,
    )
    assert view.trump is None and view.no_trump_this_trick
    assert view.led_colour is Colour.YELLOW
    assert [p.card.code for p in view.trick] == ["Y5", "NT"]
    assert view.players_to_act == ("claudia",)
    assert [str(a) for a in view.legal_actions] == ["play yellow 9"]
    assert view.move_number == 2
    assert [c.code for c in view.turned_up] == ["R0"]
    play(state, "Y9")
    view = state.view("anja")
    assert view.last_trick is not None and view.last_trick.winner == "claudia"
    assert view.trump is Colour.GREEN and not view.no_trump_this_trick
    assert view.tricks_won == (0, 0, 1)
    assert view.leader == "claudia"
    assert view.trick_number == 2
    data = json.loads(json.dumps(view.to_dict()))
    assert data["last_trick"]["reason"] == "led_colour"
    assert data["trump"] == "green"


def test_view_at_game_end_has_the_outcome() -> None:
    """The finished view reports the outcome and the full score sheet."""
    state = deal([["B9"], ["B1"], ["B2"]], stack=["R0"], bids=[1, 0, 0])
    play(state, "B9", "B1", "B2")
    view = state.view("anja")
    assert view.phase is Phase.FINISHED
    assert view.outcome is not None and view.outcome.winners == ("anja",)
    assert view.score_sheet.rows[-1].complete


def test_view_hides_bids_only_as_the_variant_says() -> None:
    """Open bids are public as soon as they are made."""
    state = RageState.new(["a", "b", "c"], seed=5)
    player = state.current_player
    assert player is not None
    state.apply(player, Bid(2))
    seat = state.seat_of(player)
    for viewer in ("a", "b", "c", None):
        assert state.view(viewer).bids[seat] == 2
