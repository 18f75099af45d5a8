"""The league's independent No Thanks! opponent (benchmarks/strength/nothanks_ismcts.py)."""

from __future__ import annotations

import random

import pytest

from bot.ai.nothanks import baseline_action
from bot.engines.nothanks import NoThanksGame, starting_chips
from tests.benchmark_scripts import load

ismcts = load("strength/nothanks_ismcts")
NAMES = ["p0", "p1", "p2", "p3"]


def midgame(players: int, seed: int, moves: int) -> NoThanksGame:
    """A seeded position after some baseline moves, with cards still in the pile."""
    game = NoThanksGame.new(NAMES[:players], seed)
    for _ in range(moves):
        if game.cards_left == 0:
            break
        player = game.active_player
        assert player is not None
        game.apply(player, baseline_action(game.view(player)))
    return game


def test_whole_games_make_only_legal_moves() -> None:
    """Three and four ISMCTS seats play games through: every action is legal, chips add up."""
    for players, seed in [(3, 1), (4, 2)]:
        game = NoThanksGame.new(NAMES[:players], seed)
        rng = random.Random(seed)
        while not game.is_over:
            player = game.active_player
            assert player is not None
            action = ismcts.ismcts_action(game.view(player), 25, rng)
            assert action in game.legal_actions(player)
            game.apply(player, action)
        assert sum(len(cards) for cards in game.cards) == 24
        assert game.total_chips() == players * starting_chips(players)


def test_a_player_without_chips_takes() -> None:
    """Out of chips, the only legal action comes back."""
    game = NoThanksGame.new(NAMES[:3], 4)
    game.chips[game.active] = 0
    game.chips[(game.active + 1) % 3] += starting_chips(3)
    view = game.view(game.active_player)
    assert ismcts.ismcts_action(view, 100, random.Random(1)) == "take"


@pytest.mark.parametrize(("players", "seed", "moves"), [(3, 1, 0), (3, 2, 25), (4, 3, 40)])
def test_decisions_ignore_the_hidden_cards(players: int, seed: int, moves: int) -> None:
    """Two games that differ only in the removed cards and the pile order, seen from the
    same view with the same seed, get the same decision (and the same search)."""
    game = midgame(players, seed, moves)
    data = game.to_dict()
    hidden = list(data["removed"]) + list(data["pile"])
    random.Random(seed).shuffle(hidden)
    data["removed"], data["pile"] = sorted(hidden[:9]), hidden[9:]
    twin = NoThanksGame.from_dict(data)
    player = game.active_player
    assert player is not None
    assert twin.view(player) == game.view(player)
    assert (twin.removed, twin.pile) != (game.removed, game.pile)
    for iterations in (25, 400):
        first = ismcts.ismcts_action(game.view(player), iterations, random.Random(7))
        second = ismcts.ismcts_action(twin.view(player), iterations, random.Random(7))
        assert first == second


def test_hidden_chips_are_counted_from_the_public_moves() -> None:
    """Others' private chips are not in the view; the player counts them from the history."""
    game = midgame(3, 5, 30)
    player = game.active_player
    assert player is not None
    view = game.view(player)
    assert sum(chips is None for chips in view.chips.values()) == 2
    position = ismcts.position_from_view(view)
    assert position.chips == game.chips
    assert position.pile_size == len(game.pile)
    assert sorted(position.unseen) == sorted(game.pile + game.removed)


def test_400_iterations_beat_two_baseline_players() -> None:
    """A seeded sample: ISMCTS-400 against two threshold baselines wins well above parity."""
    wins = 0.0
    games = 9
    for index in range(games):
        game = NoThanksGame.new(NAMES[:3], 900 + index // 3)
        hero = NAMES[index % 3]
        rng = random.Random(index)
        while not game.is_over:
            player = game.active_player
            assert player is not None
            view = game.view(player)
            if player == hero:
                action = ismcts.ismcts_action(view, 400, rng)
            else:
                action = baseline_action(view)
            game.apply(player, action)
        winners = game.winners()
        wins += 1 / len(winners) if hero in winners else 0.0
    # Parity is 3 of 9.
    assert wins >= 6
