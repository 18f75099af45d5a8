"""Shared helpers for the Rage tests: hand-built deals, scripted plays, random games.

This module holds no tests; its name only keeps it inside the Rage test files.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence

import pytest

from bot.engines.errors import IllegalMove
from bot.engines.rage import (
    Action,
    Bid,
    Card,
    Colour,
    Play,
    PlayerId,
    RageOptions,
    RageState,
)

NAMES: tuple[str, ...] = ("anja", "bernd", "claudia", "dieter", "emil", "frida", "gustav", "hanna")

ALLOWED_OPTIONS: tuple[RageOptions, ...] = tuple(
    RageOptions(plus_minus_one=pm, hidden_bids=hidden, secret_bids=secret, sweep=sweep)
    for pm in (False, True)
    for hidden in (False, True)
    for secret in (False, True)
    for sweep in (False, True)
    if not (hidden and secret) and not (pm and (hidden or secret))
)


def deal(
    hands: Mapping[str, Sequence[str]] | Sequence[Sequence[str]],
    stack: Sequence[str] = (),
    *,
    bids: Sequence[int] | None = None,
    options: RageOptions | None = None,
    **kwargs: object,
) -> RageState:
    """A hand-built round; hands in seat order (anja, bernd, ...); the last seat deals."""
    if isinstance(hands, Mapping):
        players = list(hands)
        hand_lists = list(hands.values())
    else:
        players = list(NAMES[: len(hands)])
        hand_lists = list(hands)
    return RageState.from_deal(
        players,
        dict(zip(players, hand_lists, strict=True)),
        stack,
        bids=None if bids is None else dict(zip(players, bids, strict=True)),
        options=options,
        **kwargs,  # type: ignore[arg-type]
    )


def play_action(text: str) -> Play:
    """A Play from a code such as "R7", "NT" or "JOKER:red"."""
    if ":" in text:
        code, colour = text.split(":")
        return Play(Card.parse(code), Colour.parse(colour))
    return Play(Card.parse(text))


def play(state: RageState, *cards: str) -> None:
    """Play the given cards, one per turn, for whoever is to play."""
    for text in cards:
        player = state.current_player
        assert player is not None, "nobody is to play"
        state.apply(player, play_action(text))


def play_trick(state: RageState, by_player: Mapping[str, str]) -> None:
    """Play one full trick, each player's card given by name, in turn order."""
    for _ in range(len(state.players)):
        player = state.current_player
        assert isinstance(player, str), "the scripted tricks name their players"
        state.apply(player, play_action(by_player[player]))


def bid_all(state: RageState, bids: Sequence[int]) -> None:
    """Enter bids in seat order (simultaneous) or in turn (open bidding)."""
    if state.options.simultaneous_bids:
        for player, tricks in zip(state.players, bids, strict=True):
            state.apply(player, Bid(tricks))
        return
    for _ in bids:
        bidder = state.current_player
        assert bidder is not None
        state.apply(bidder, Bid(bids[state.seat_of(bidder)]))


def snapshot(state: RageState) -> str:
    """The full state as canonical JSON, to detect any change."""
    return json.dumps(state.to_dict(), sort_keys=True)


def assert_rejected(
    state: RageState, player: object, action: object, error: type[IllegalMove]
) -> IllegalMove:
    """The action raises `error` with a message and leaves the state exactly as it was."""
    before = snapshot(state)
    with pytest.raises(error) as caught:
        state.apply(player, action)  # type: ignore[arg-type]
    assert snapshot(state) == before
    assert str(caught.value)
    return caught.value


def random_steps(
    state: RageState, rng: random.Random
) -> Iterator[tuple[PlayerId, Action, list[Action]]]:
    """Play random legal actions to the end, yielding (player, action, legal) before each."""
    while not state.is_over:
        player = rng.choice(state.acting_players())
        legal = state.legal_actions(player)
        action = rng.choice(legal)
        yield player, action, legal
        state.apply(player, action)


def play_random_game(
    n_players: int, seed: int, options: RageOptions | None = None, policy_seed: int = 0
) -> RageState:
    """A finished game of random legal moves."""
    state = RageState.new(list(NAMES[:n_players]), seed=seed, options=options)
    for _ in random_steps(state, random.Random(policy_seed)):
        pass
    return state
