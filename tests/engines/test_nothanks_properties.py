"""Hypothesis property tests of the No Thanks! invariants in RULES.md."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engines.errors import IllegalMove
from bot.engines.nothanks import PASS, TAKE, NoThanksGame, starting_chips

from .test_nothanks import actor

MAX_MOVES = 24 + 55 * 24  # every card may collect at most every chip once


@st.composite
def random_games(draw: st.DrawFn) -> tuple[NoThanksGame, list[bool]]:
    """A fresh game with 3..7 players and a stream of take/pass preferences."""
    count = draw(st.integers(3, 7))
    seed = draw(st.integers(0, 2**32))
    open_chips = draw(st.booleans())
    prefs = draw(st.lists(st.booleans(), min_size=0, max_size=400))
    return NoThanksGame.new([f"p{i}" for i in range(count)], seed, open_chips=open_chips), prefs


def play_out(game: NoThanksGame, prefs: list[bool], check: bool = False) -> list[str]:
    """Play to the end (taking once prefs run out); optionally check invariants each step."""
    total = game.total_chips()
    actions: list[str] = []
    step = 0
    while not game.is_over:
        assert step <= MAX_MOVES, "the game did not end"
        wants_take = prefs[step] if step < len(prefs) else True
        action = TAKE if wants_take or game.chips[game.active] == 0 else PASS
        assert action in game.legal_actions()
        game.apply(actor(game), action)
        actions.append(action.value)
        step += 1
        if check:
            assert game.total_chips() == total
            assert min(game.chips) >= 0
            assert NoThanksGame.from_dict(json.loads(json.dumps(game.to_dict()))) == game
    return actions


@settings(max_examples=3000, deadline=None)
@given(random_games())
def test_invariants_hold_in_random_games(case: tuple[NoThanksGame, list[bool]]) -> None:
    """Chips are conserved and never negative, cards end with one player, the game ends."""
    game, prefs = case
    n = len(game.players)
    assert game.current_card is not None
    in_play = sorted([*game.pile, game.current_card])
    play_out(game, prefs)
    assert game.total_chips() == n * starting_chips(n)
    assert game.chips_on_card == 0
    held = sorted(card for cards in game.cards for card in cards)
    assert held == in_play
    assert len(held) == 24
    assert min(game.chips) >= 0
    standings = game.standings()
    assert min(s.rank for s in standings) == 1
    assert {s.player for s in standings if s.rank == 1} == set(game.winners())


@settings(max_examples=300, deadline=None)
@given(random_games())
def test_round_trip_and_invariants_every_step(case: tuple[NoThanksGame, list[bool]]) -> None:
    """Every intermediate state survives a JSON round trip and keeps the invariants."""
    game, prefs = case
    play_out(game, prefs, check=True)


@settings(max_examples=500, deadline=None)
@given(random_games())
def test_replay_is_deterministic(case: tuple[NoThanksGame, list[bool]]) -> None:
    """Seed plus action log reproduces the exact final state."""
    game, prefs = case
    actions = play_out(game, prefs)
    again = NoThanksGame.replay(game.players, game.seed, actions, open_chips=game.open_chips)
    assert again.to_dict() == game.to_dict()


@settings(max_examples=300, deadline=None)
@given(random_games(), st.integers(0, 6), st.sampled_from(["take", "pass", "bogus"]))
def test_illegal_actions_never_change_state(
    case: tuple[NoThanksGame, list[bool]], seat: int, action: str
) -> None:
    """Any refused action, at any point of a game, leaves the state exactly as it was."""
    game, prefs = case
    cut = len(prefs) // 2
    play_out_steps = prefs[:cut]
    for wants_take in play_out_steps:
        if game.is_over:
            break
        legal = game.legal_actions()
        game.apply(actor(game), TAKE if wants_take or PASS not in legal else PASS)
    player = f"p{seat}"
    before = game.to_dict()
    try:
        game.apply(player, action)
    except IllegalMove:
        assert game.to_dict() == before
    else:
        assert game.move_number == len(before["history"]) + 1


@settings(max_examples=300, deadline=None)
@given(random_games(), st.integers(0, 6))
def test_views_never_leak(case: tuple[NoThanksGame, list[bool]], seat: int) -> None:
    """A running game's view never holds the removed cards, the pile or hidden chips."""
    game, prefs = case
    for wants_take in prefs[: len(prefs) // 3]:
        if game.is_over:
            break
        legal = game.legal_actions()
        game.apply(actor(game), TAKE if wants_take or PASS not in legal else PASS)
    seat %= len(game.players)
    view = game.view(game.players[seat]).to_dict()
    if game.is_over:
        assert view["removed"] == game.removed
        return
    assert view["removed"] is None
    assert "pile" not in view
    for index, name in enumerate(game.players):
        if index != seat and not game.open_chips:
            assert view["chips"][name] is None
        else:
            assert view["chips"][name] == game.chips[index]


@given(random_games(), st.integers(0, 60))
@settings(max_examples=60, deadline=None)
def test_history_rows_follow_every_copy(case: tuple[NoThanksGame, list[bool]], split: int) -> None:
    """to_dict writes the history as it stands, saved at any point, for the game and for a
    clone played on apart: the rows it keeps between saves never leak between them."""
    game, prefs = case
    for step, wants_take in enumerate(prefs[:split]):
        if game.is_over:
            break
        action = TAKE if wants_take or game.chips[game.active] == 0 else PASS
        game.apply(actor(game), action)
        if step % 7 == 0:
            game.to_dict()  # a save in between: the rows so far are kept
    before = game.to_dict()
    before["history"].append(["not", "a", "move"])  # a reader changing its copy
    clone = game.clone()
    play_out(clone, prefs[split:])
    expected = [[m.seat, m.action.value, m.card, m.chips_on_card] for m in game.history]
    assert game.to_dict()["history"] == expected
    assert clone.to_dict()["history"] == [
        [m.seat, m.action.value, m.card, m.chips_on_card] for m in clone.history
    ]
    assert NoThanksGame.from_dict(clone.to_dict()) == clone
