"""The High card engine meets the GameEngine contract; the spec and renderer fit the table."""

from __future__ import annotations

import json
import random

import pytest

from bot.engines.contract import GameEngine
from bot.engines.errors import GameOver, NotYourTurn, UnknownPlayer
from bot.i18n import catalogues
from bot.table.spec import GameRenderer
from tests.highcard.engine import HighCardGame, NotInHand
from tests.highcard.render import HighCardRenderer
from tests.highcard.spec import SPEC, choose

PLAYERS = ["ana", "ben", "cid"]


def _typed(game: HighCardGame) -> GameEngine[str]:
    """Type-checked only: mypy accepts High card as a GameEngine of string ids."""
    return game


def _renderer(renderer: HighCardRenderer) -> GameRenderer:
    """Type-checked only: mypy accepts the renderer as a GameRenderer."""
    return renderer


def test_is_a_game_engine() -> None:
    """A new game passes the runtime protocol check and deals two cards each from 1..20."""
    game = HighCardGame.new(PLAYERS, seed=3)
    assert isinstance(_typed(game), GameEngine)
    assert all(len(hand) == 2 for hand in game.hands)
    cards = [card for hand in game.hands for card in hand]
    assert len(set(cards)) == 6 and all(1 <= card <= 20 for card in cards)
    assert HighCardGame.new(PLAYERS, seed=3).hands == game.hands
    assert game.players == PLAYERS and game.seed == 3 and game.seat_of("ben") == 1


def test_plays_to_the_end_through_the_contract() -> None:
    """Seat order, one card per player per round, a point for each round's highest card."""
    game = HighCardGame.new(PLAYERS, seed=5)
    rng = random.Random(1)
    expected = 0
    for _ in range(2):
        for player in PLAYERS:
            assert game.acting_players() == (player,)
            assert game.legal_actions("ana" if player != "ana" else "ben") == []
            card = rng.choice(game.legal_actions(player))
            assert game.apply(player, card).card == card
            expected += 1
            assert game.move_number == expected
            restored = HighCardGame.from_dict(json.loads(json.dumps(game.to_dict())))
            assert restored.to_dict() == game.to_dict()
    assert game.is_over and game.acting_players() == () and game.legal_actions() == []
    assert sum(game.points) == 2
    assert game.standings()[0].rank == 1 and game.standings()[0].points >= 1


def test_illegal_moves_raise_with_details() -> None:
    """Wrong player, stranger, card not held and moves after the end raise; nothing changes."""
    game = HighCardGame.new(["ana", "ben"], seed=1)
    before = game.to_dict()
    with pytest.raises(NotYourTurn) as turn:
        game.apply("ben", game.hands[1][0])
    assert turn.value.details == {"player": "ben", "players": ["ana"]}
    with pytest.raises(UnknownPlayer):
        game.apply("zed", 1)
    missing = next(card for card in range(1, 21) if card not in game.hands[0])
    with pytest.raises(NotInHand) as not_held:
        game.apply("ana", missing)
    assert not_held.value.code == "card_not_in_hand"
    assert "error.card_not_in_hand" in catalogues()["en"].messages
    with pytest.raises(NotInHand):
        game.apply("ana", True)
    assert game.to_dict() == before
    while not game.is_over:
        player = game.acting_players()[0]
        game.apply(player, game.legal_actions(player)[0])
    with pytest.raises(GameOver):
        game.apply("ana", 1)


def test_views_hide_other_hands() -> None:
    """A player sees only their own hand; the public view holds no hand at all."""
    game = HighCardGame.new(PLAYERS, seed=9)
    public = game.view()
    assert public.hand is None and public.legal == ()
    ana, ben = game.view("ana"), game.view("ben")
    assert ana.hand == tuple(game.hands[0]) and ana.legal == ana.hand
    assert ben.hand == tuple(game.hands[1]) and ben.legal == ()
    for card in game.hands[1]:
        assert str(card) not in repr(ana.hand)


def test_standings_share_ranks() -> None:
    """Most points first; tied players share a rank."""
    game = HighCardGame.new(PLAYERS, seed=2)
    game.points = [1, 1, 0]
    assert [(s.player, s.rank) for s in game.standings()] == [("ana", 1), ("ben", 1), ("cid", 3)]


def test_spec_and_computer() -> None:
    """The spec deals a High card game; the computer plays its highest legal card."""
    game = SPEC.new_engine(PLAYERS, 4, {})
    assert isinstance(game, HighCardGame)
    assert SPEC.engine_from_dict(game.to_dict()).to_dict() == game.to_dict()
    view = game.view("ana")
    assert choose(view, "normal", random.Random(0), None) == max(game.hands[0])
    assert isinstance(_renderer(HighCardRenderer()).colour, int)
