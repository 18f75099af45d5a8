"""Both rules engines meet the GameEngine contract, at run time and for the type checker."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any, TypeVar

import pytest

from bot.engines.contract import GameEngine
from bot.engines.nothanks import Action as NoThanksAction
from bot.engines.nothanks import Move, NoThanksGame
from bot.engines.rage import JOKER, Bid, Card, Colour, Play, RageState

from .test_rage_helpers import deal

P = TypeVar("P")


def _check(e: NoThanksGame, r: RageState) -> list[GameEngine]:
    """Type-checked only: mypy accepts both engines as GameEngine values."""
    return [e, r]


def _check_typed(e: NoThanksGame, r: RageState) -> tuple[GameEngine[str], GameEngine[str | int]]:
    """Type-checked only: each engine is a GameEngine of its own player id type."""
    return e, r


def _restore(kind: type[GameEngine[Any]], data: Mapping[str, Any]) -> GameEngine[Any]:
    """Rebuild any engine from its to_dict data through the contract's from_dict."""
    return kind.from_dict(data)


def new_engines() -> list[GameEngine[Any]]:
    """A fresh game of each engine, seated with string ids as the table layer does."""
    return [
        NoThanksGame.new(["ana", "ben", "cid"], seed=7),
        RageState.new(["ana", "ben", "cid", "dan"], seed=7),
    ]


def play_to_end(engine: GameEngine[P], rng: random.Random) -> int:
    """Play random legal actions through the contract alone; return how many were applied."""
    moves = 0
    while not engine.is_over:
        actors = engine.acting_players()
        assert actors
        player = rng.choice(actors)
        legal = engine.legal_actions(player)
        assert legal
        engine.apply(player, rng.choice(legal))
        moves += 1
        assert engine.move_number == moves
    return moves


@pytest.mark.parametrize("engine", new_engines(), ids=["nothanks", "rage"])
def test_new_games_are_game_engines(engine: GameEngine[Any]) -> None:
    """A new game of either engine passes the runtime protocol check."""
    assert isinstance(engine, GameEngine)


def test_other_objects_are_not_game_engines() -> None:
    """The runtime check is not vacuous."""
    assert not isinstance(object(), GameEngine)
    assert not isinstance(Bid(1), GameEngine)


@pytest.mark.parametrize("index", [0, 1], ids=["nothanks", "rage"])
def test_a_game_runs_to_the_end_through_the_contract(index: int) -> None:
    """acting_players, legal_actions and apply drive a whole game; the state round-trips."""
    engine = new_engines()[index]
    assert engine.seat_of(engine.players[1]) == 1
    assert engine.move_number == 0 and not engine.is_over
    restored = _restore(type(engine), json.loads(json.dumps(engine.to_dict())))
    assert restored.to_dict() == engine.to_dict()
    assert play_to_end(engine, random.Random(index)) > 0
    assert engine.acting_players() == ()
    assert list(engine.legal_actions()) == []
    assert len(engine.standings()) == len(engine.players)
    assert engine.view() is not None
    assert _restore(type(engine), engine.to_dict()).to_dict() == engine.to_dict()


def test_nothanks_acting_players_is_the_active_player() -> None:
    """No Thanks! has exactly one player to act until the last card is taken."""
    game = NoThanksGame.new(["ana", "ben", "cid"], seed=3)
    assert game.acting_players() == (game.active_player,)
    move = game.apply(game.players[game.active], "pass")
    assert isinstance(move, Move) and move.action is NoThanksAction.PASS


def test_rage_apply_returns_the_action_as_applied() -> None:
    """A bid comes back as given; a Joker play keeps its colour; a card code becomes a Card."""
    state = deal([["Y5", "JOKER"], ["Y9", "R3"], ["G2", "B4"]], stack=["R0"])
    assert state.apply("anja", Bid(1)) == Bid(1)
    state.apply("bernd", Bid(0))
    state.apply("claudia", Bid(0))
    assert state.apply("anja", Play(JOKER, Colour.RED)) == Play(JOKER, Colour.RED)
    applied = state.apply("bernd", Play("R3"))  # type: ignore[arg-type]
    assert applied == Play(Card.parse("R3"))
    assert type(applied) is Play and type(applied.card) is Card


def test_rage_view_defaults_to_the_public_view() -> None:
    """view() with no player is the spectator's view."""
    state = RageState.new(["a", "b", "c"], seed=1)
    assert state.view() == state.view(None)
    assert state.view().hand == ()


def test_clone_is_independent() -> None:
    """A move applied to a clone leaves the original as it was, for both engines."""
    engines: list[GameEngine[Any]] = [
        NoThanksGame.new(["a", "b", "c"], seed=3),
        RageState.new(["a", "b", "c"], seed=3),
    ]
    for engine in engines:
        before = engine.to_dict()
        copy = engine.clone()
        player = copy.acting_players()[0]
        copy.apply(player, copy.legal_actions(player)[0])
        assert engine.to_dict() == before
        assert copy.to_dict() != before
        assert copy.clone().to_dict() == copy.to_dict()
