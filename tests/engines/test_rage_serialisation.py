"""Tests that a Rage state survives plain JSON without loss and rejects corrupt input."""

from __future__ import annotations

import json
import random

import pytest

from bot.engines.rage import Bid, InvalidSetup, RageOptions, RageState

from .test_rage_helpers import deal, play, random_steps


def round_trip(state: RageState) -> RageState:
    """to_dict -> json.dumps -> json.loads -> from_dict."""
    return RageState.from_dict(json.loads(json.dumps(state.to_dict())))


def test_new_game_round_trips() -> None:
    """A fresh game with int ids and a string seed comes back equal."""
    state = RageState.new([10, 20, 30, 40], seed="abc", options=RageOptions(sweep=True))
    copy = round_trip(state)
    assert copy == state
    assert copy.to_dict() == state.to_dict()
    assert copy.players == (10, 20, 30, 40)
    assert copy.seed == "abc"


def test_mid_trick_state_with_no_trump_and_joker_round_trips() -> None:
    """Trick in play, No Trump in force and a Joker's colour all survive and play on alike."""
    state = deal(
        [["Y5", "B1"], ["NT", "B2"], ["JOKER", "B3"], ["Y7", "B4"]],
        stack=["R0", "G1", "O2"],
        bids=[1, 0, 1, 0],
    )
    play(state, "Y5", "NT", "JOKER:yellow")
    copy = round_trip(state)
    assert copy == state
    assert copy.no_trump_this_trick and copy.trump is None
    assert copy.current_trick == state.current_trick
    assert copy.legal_actions() == state.legal_actions()
    play(state, "Y7")
    play(copy, "Y7")
    assert copy.to_dict() == state.to_dict()
    assert copy.last_trick == state.last_trick


def test_restored_game_plays_on_exactly_like_the_original() -> None:
    """Serialise mid-game, then the same moves give the same finished game."""
    original = RageState.new(
        ["a", "b", "c", "d", "e"], seed=77, options=RageOptions(hidden_bids=True)
    )
    for i, _ in enumerate(random_steps(original, random.Random(5))):
        if i == 123:
            break
    restored = round_trip(original)
    for state in (original, restored):
        for _ in random_steps(state, random.Random(6)):
            pass
    assert restored.to_dict() == original.to_dict()
    assert restored.outcome() == original.outcome()


def test_clone_is_independent() -> None:
    """Changing a clone leaves the original as it was."""
    state = RageState.new(["a", "b", "c"], seed=2)
    before = state.to_dict()
    copy = state.clone()
    assert copy == state
    player = copy.current_player
    assert player is not None
    copy.apply(player, Bid(0))
    assert state.to_dict() == before
    assert copy != state


def corrupt(change: str) -> dict[str, object]:
    """A serialised deal with one field broken."""
    data = deal([["B1", "G1"], ["B2", "G2"], ["B3", "G3"]], stack=["R0"]).to_dict()
    if change == "version":
        data["version"] = 99
    elif change == "missing":
        del data["hands"]
    elif change == "hand":
        data["hands"][0].append("Y9")
    elif change == "copies":
        data["stack"] = ["B1"]
    elif change == "bid":
        data["bids"] = [5, None, None]
    elif change == "card":
        data["stack"] = ["Z1"]
    elif change == "seat":
        data["dealer"] = 7
    elif change == "players":
        data["players"] = ["a", "a", "b"]
    elif change == "option":
        data["options"] = {"hidden_bids": True, "secret_bids": True}
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("version", "version 1"),
        ("missing", "malformed"),
        ("hand", "does not fit the round"),
        ("copies", "more copies"),
        ("bid", "bids must be null or 0..2"),
        ("card", "malformed"),
        ("seat", "dealer must be a seat"),
        ("players", "distinct"),
        ("option", "exclude each other"),
    ],
)
def test_corrupt_states_are_rejected(change: str, message: str) -> None:
    """from_dict raises InvalidSetup with a pointer to what is wrong."""
    with pytest.raises(InvalidSetup, match=message):
        RageState.from_dict(corrupt(change))


def test_non_object_is_rejected() -> None:
    """A list is not a state."""
    with pytest.raises(InvalidSetup, match="JSON object"):
        RageState.from_dict([])  # type: ignore[arg-type]
