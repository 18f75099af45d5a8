"""Every IllegalMove of both engines carries its stable code and plain-JSON details."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from bot.engines.errors import IllegalMove
from bot.engines.nothanks import PASS, TAKE, MustTake, NoThanksGame, UnknownAction
from bot.engines.rage import (
    JOKER,
    AlreadyBid,
    Bid,
    Card,
    CardNotInHand,
    Colour,
    GameOver,
    IllegalBid,
    InvalidAction,
    JokerColourError,
    MustFollowSuit,
    NotYourTurn,
    Play,
    RageOptions,
    RageState,
    UnknownPlayer,
    WrongPhase,
)
from bot.engines.rage import errors as rage_errors

from .test_rage_helpers import deal, play, play_random_game

# A case builds a fresh state and returns it with the rejected (player, action) and the
# details expected, so the expected ids and cards can come from the state itself.
Case = Callable[[], tuple[Any, object, object, dict[str, object]]]

PLAYERS = ["ana", "ben", "cid"]
HANDS = [["Y5", "B1", "JOKER"], ["Y9", "R3", "NT"], ["G2", "JOKER", "CT"]]


def nothanks() -> NoThanksGame:
    """A new No Thanks! game."""
    return NoThanksGame.new(PLAYERS, seed=9)


def nothanks_not_your_turn() -> tuple[Any, object, object, dict[str, object]]:
    """A seated player who is not the active one tries to take."""
    game = nothanks()
    active = game.players[game.active]
    other = game.players[(game.active + 1) % 3]
    return game, other, TAKE, {"player": other, "players": [active]}


def nothanks_unknown_action() -> tuple[Any, object, object, dict[str, object]]:
    """The active player tries something that is neither take nor pass."""
    game = nothanks()
    active = game.players[game.active]
    return game, active, "steal", {"player": active, "action": "steal"}


def nothanks_must_take() -> tuple[Any, object, object, dict[str, object]]:
    """A player without chips tries to pass."""
    game = NoThanksGame.new(PLAYERS, seed=5)
    while game.chips[game.active] > 0:
        game.apply(game.players[game.active], PASS)
    active = game.players[game.active]
    assert game.current_card is not None
    return game, active, PASS, {"player": active, "card": game.current_card}


def nothanks_game_over() -> tuple[Any, object, object, dict[str, object]]:
    """A seated player acts after the last card is taken."""
    game = nothanks()
    while not game.is_over:
        game.apply(game.players[game.active], TAKE)
    return game, "ana", TAKE, {"player": "ana"}


def rage_bidding() -> RageState:
    """Open bidding with plus/minus one, anja to bid first (round 8, three cards)."""
    return deal(HANDS, stack=["R0"], options=RageOptions(plus_minus_one=True))


def rage_playing() -> RageState:
    """Anja has led Y5; bernd (who holds yellow) is to play."""
    state = deal(HANDS, stack=["R0"], bids=[1, 1, 0])
    play(state, "Y5")
    return state


def rage_leading() -> RageState:
    """All have bid; anja, who holds a Joker, is to lead."""
    return deal(HANDS, stack=["R0"], bids=[1, 1, 0])


def rage_last_bid() -> RageState:
    """Anja and bernd bid one each, so claudia may not bid one more (plus/minus one)."""
    state = rage_bidding()
    state.apply("anja", Bid(1))
    state.apply("bernd", Bid(1))
    return state


def rage_secret_bid() -> RageState:
    """Secret bidding in which bernd has already bid."""
    state = deal(HANDS, stack=["R0"], options=RageOptions(secret_bids=True))
    state.apply("bernd", Bid(0))
    return state


def rage(
    make: Callable[[], RageState], player: object, action: object, details: dict[str, object]
) -> Case:
    """A Rage case on a fresh state from `make`."""
    return lambda: (make(), player, action, details)


def card_play(code: str, colour: Colour | None = None) -> Play:
    """A Play of the card with this code."""
    return Play(Card.parse(code), colour)


# Plays the type checker would refuse, as a caller outside it might send them.
NOT_A_CARD = Play("nonsense")  # type: ignore[arg-type]
BAD_JOKER = Play(JOKER, "red")  # type: ignore[arg-type]
BAD_BID = Bid(None)  # type: ignore[arg-type]

CASES: list[Any] = [
    pytest.param(
        lambda: (nothanks(), "zed", TAKE, {"player": "zed"}),
        UnknownPlayer,
        "unknown_player",
        id="nothanks-unknown-player",
    ),
    pytest.param(nothanks_not_your_turn, NotYourTurn, "not_your_turn", id="nothanks-not-your-turn"),
    pytest.param(
        nothanks_unknown_action, UnknownAction, "unknown_action", id="nothanks-unknown-action"
    ),
    pytest.param(nothanks_must_take, MustTake, "must_take", id="nothanks-must-take"),
    pytest.param(nothanks_game_over, GameOver, "game_over", id="nothanks-game-over"),
    pytest.param(
        rage(rage_bidding, "zoe", Bid(1), {"player": "zoe"}),
        UnknownPlayer,
        "unknown_player",
        id="rage-unknown-player",
    ),
    pytest.param(
        rage(rage_bidding, ["anja"], Bid(1), {"player": "['anja']"}),
        UnknownPlayer,
        "unknown_player",
        id="rage-unhashable-player",
    ),
    pytest.param(
        rage(rage_bidding, True, Bid(1), {"player": "True"}),
        UnknownPlayer,
        "unknown_player",
        id="rage-bool-player",
    ),
    pytest.param(
        rage(rage_bidding, "bernd", Bid(1), {"player": "bernd", "players": ["anja"]}),
        NotYourTurn,
        "not_your_turn",
        id="rage-not-your-turn-to-bid",
    ),
    pytest.param(
        rage(rage_playing, "claudia", card_play("G2"), {"player": "claudia", "players": ["bernd"]}),
        NotYourTurn,
        "not_your_turn",
        id="rage-not-your-turn-to-play",
    ),
    pytest.param(
        rage(rage_secret_bid, "bernd", Bid(1), {"player": "bernd", "players": ["anja", "claudia"]}),
        AlreadyBid,
        "already_bid",
        id="rage-already-bid",
    ),
    pytest.param(
        rage(rage_bidding, "anja", card_play("Y5"), {"player": "anja", "phase": "bidding"}),
        WrongPhase,
        "wrong_phase",
        id="rage-play-while-bidding",
    ),
    pytest.param(
        rage(rage_playing, "bernd", Bid(1), {"player": "bernd", "phase": "playing"}),
        WrongPhase,
        "wrong_phase",
        id="rage-bid-while-playing",
    ),
    pytest.param(
        rage(rage_bidding, "anja", "bid 1", {"player": "anja", "action": "'bid 1'"}),
        InvalidAction,
        "invalid_action",
        id="rage-not-an-action",
    ),
    pytest.param(
        rage(rage_playing, "bernd", NOT_A_CARD, {"player": "bernd", "card": "'nonsense'"}),
        InvalidAction,
        "invalid_action",
        id="rage-not-a-card",
    ),
    pytest.param(
        rage(rage_bidding, "anja", Bid(4), {"player": "anja", "bid": 4, "allowed": [0, 1, 2, 3]}),
        IllegalBid,
        "illegal_bid",
        id="rage-bid-too-high",
    ),
    pytest.param(
        rage(
            rage_bidding,
            "anja",
            BAD_BID,
            {"player": "anja", "bid": "None", "allowed": [0, 1, 2, 3]},
        ),
        IllegalBid,
        "illegal_bid",
        id="rage-bid-not-a-number",
    ),
    pytest.param(
        rage(
            rage_last_bid, "claudia", Bid(1), {"player": "claudia", "bid": 1, "allowed": [0, 2, 3]}
        ),
        IllegalBid,
        "illegal_bid",
        id="rage-plus-minus-one",
    ),
    pytest.param(
        rage(rage_playing, "bernd", card_play("Y10"), {"player": "bernd", "card": "Y10"}),
        CardNotInHand,
        "card_not_in_hand",
        id="rage-card-not-in-hand",
    ),
    pytest.param(
        rage(
            rage_playing,
            "bernd",
            card_play("R3"),
            {"player": "bernd", "card": "R3", "colour": "yellow"},
        ),
        MustFollowSuit,
        "must_follow_suit",
        id="rage-must-follow-suit",
    ),
    pytest.param(
        rage(rage_leading, "anja", Play(JOKER), {"player": "anja", "card": "JOKER"}),
        JokerColourError,
        "joker_colour",
        id="rage-joker-without-colour",
    ),
    pytest.param(
        rage(
            rage_leading,
            "anja",
            BAD_JOKER,
            {"player": "anja", "card": "JOKER", "colour": "'red'"},
        ),
        JokerColourError,
        "joker_colour",
        id="rage-joker-with-a-bad-colour",
    ),
    pytest.param(
        rage(
            rage_playing,
            "bernd",
            card_play("Y9", Colour.RED),
            {"player": "bernd", "card": "Y9", "colour": "red"},
        ),
        JokerColourError,
        "joker_colour",
        id="rage-colour-for-a-plain-card",
    ),
    pytest.param(
        rage(lambda: play_random_game(3, seed=1), "anja", Bid(0), {"player": "anja"}),
        GameOver,
        "game_over",
        id="rage-game-over",
    ),
]


def is_plain(value: object) -> bool:
    """Exactly str or int, or a list of them: no enums, Cards or other subclasses."""
    if isinstance(value, list):
        return all(type(item) in (str, int) for item in value)
    return type(value) in (str, int)


@pytest.mark.parametrize(("case", "error", "code"), CASES)
def test_errors_carry_a_stable_code_and_plain_details(
    case: Case, error: type[IllegalMove], code: str
) -> None:
    """The error is raised with its own class code and exactly the expected plain details."""
    state, player, action, expected = case()
    before = json.dumps(state.to_dict(), sort_keys=True)
    with pytest.raises(error) as caught:
        state.apply(player, action)
    assert type(caught.value) is error
    assert "code" in vars(error) and caught.value.code == error.code == code
    assert caught.value.details == expected
    assert all(is_plain(value) for value in caught.value.details.values())
    assert json.loads(json.dumps(caught.value.details)) == caught.value.details
    assert json.dumps(state.to_dict(), sort_keys=True) == before


def test_every_error_class_has_a_case() -> None:
    """Each IllegalMove class either engine raises is covered by a case above."""
    covered = {param.values[1] for param in CASES}
    rage_classes = {
        cls
        for cls in vars(rage_errors).values()
        if isinstance(cls, type) and issubclass(cls, IllegalMove) and cls is not IllegalMove
    }
    nothanks_classes = {UnknownPlayer, UnknownAction, NotYourTurn, MustTake, GameOver}
    assert rage_classes | nothanks_classes <= covered
