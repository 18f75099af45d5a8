"""Tests of the No Thanks! computer players: legal, view-only, deterministic, fast enough."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.ai import Level, choose_nothanks_action
from bot.ai.nothanks import (
    baseline_action,
    card_cost,
    mask_points,
    normal_takes,
    search_decision,
    seat_observations,
    table_from_view,
)
from bot.ai.nothanks_search import CLOCK_EVERY, fit_looseness, search
from bot.engines.nothanks import PASS, TAKE, NoThanksGame, card_points, starting_chips

LEVELS = list(Level)
# Small budgets keep whole-game tests quick; the hard player simply searches less.
QUICK = 0.005
# Generous budget: the search stops on its own rules (clear result or rollout cap), so the
# decision is deterministic even on a slow, shared machine.
UNHURRIED = 30.0


def names(count: int) -> list[str]:
    """Player names p0, p1, ..."""
    return [f"p{i}" for i in range(count)]


def advance(game: NoThanksGame, moves: int, rng: random.Random) -> None:
    """Play up to ``moves`` actions with normal players (stop before the game ends)."""
    for _ in range(moves):
        if game.is_over or game.cards_left == 0:
            return
        player = game.active_player
        assert player is not None
        game.apply(player, choose_nothanks_action(game.view(player), Level.NORMAL, rng))


def position(players: int, seed: int, moves: int, *, open_chips: bool = False) -> NoThanksGame:
    """A seeded mid-game position."""
    game = NoThanksGame.new(names(players), seed, open_chips=open_chips)
    advance(game, moves, random.Random(seed))
    return game


@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(3, 7),
    seed=st.integers(0, 2**32),
    open_chips=st.booleans(),
    levels=st.lists(st.sampled_from(LEVELS), min_size=7, max_size=7),
)
def test_every_chosen_action_is_legal(
    players: int, seed: int, open_chips: bool, levels: list[Level]
) -> None:
    """Whole games with a random level in every seat: each action is in legal_actions."""
    game = NoThanksGame.new(names(players), seed, open_chips=open_chips)
    rng = random.Random(seed)
    steps = 0
    while not game.is_over:
        player = game.active_player
        assert player is not None
        level = levels[game.seat_of(player)]
        action = choose_nothanks_action(game.view(player), level, rng, time_budget=QUICK)
        assert action in game.legal_actions(player)
        game.apply(player, action)
        steps += 1
        assert steps < 24 + 55 * 24
    assert len(game.standings()) == players


def test_a_player_without_chips_takes() -> None:
    """Out of chips, every level takes (the only legal action)."""
    game = NoThanksGame.new(names(3), 4)
    game.chips[game.active] = 0
    game.chips[(game.active + 1) % 3] += starting_chips(3)
    view = game.view(game.active_player)
    for level in LEVELS:
        assert choose_nothanks_action(view, level, random.Random(1)) is TAKE


def reshuffle_hidden_cards(game: NoThanksGame, rng: random.Random) -> NoThanksGame:
    """A copy with the removed cards and the pile order redrawn from the same hidden cards."""
    data = game.to_dict()
    hidden = list(data["removed"]) + list(data["pile"])
    while True:
        rng.shuffle(hidden)
        removed, pile = sorted(hidden[:9]), hidden[9:]
        if removed != data["removed"] or pile != data["pile"]:
            break
    data["removed"], data["pile"] = removed, pile
    return NoThanksGame.from_dict(data)


@pytest.mark.parametrize(
    ("players", "seed", "moves"), [(3, 1, 0), (3, 2, 25), (4, 3, 40), (5, 4, 12), (7, 5, 60)]
)
def test_decisions_ignore_the_removed_cards_and_the_pile_order(
    players: int, seed: int, moves: int
) -> None:
    """Same view, different hidden cards: every level decides the same with the same seed."""
    game = position(players, seed, moves)
    twin = reshuffle_hidden_cards(game, random.Random(seed))
    player = game.active_player
    assert player is not None
    assert twin.view(player) == game.view(player)
    assert twin.to_dict() != game.to_dict()
    for level in LEVELS:
        first = choose_nothanks_action(
            game.view(player), level, random.Random(9), time_budget=UNHURRIED
        )
        second = choose_nothanks_action(
            twin.view(player), level, random.Random(9), time_budget=UNHURRIED
        )
        assert first is second


@pytest.mark.parametrize(("players", "seed", "moves"), [(3, 6, 20), (4, 7, 35), (6, 8, 50)])
def test_decisions_ignore_the_other_players_hidden_chips(
    players: int, seed: int, moves: int
) -> None:
    """Same view, other players' private chips moved around: the same decision.

    With the full move history a player can count everyone's chips (the passes and takes
    are public), so both states drop the history: then the view no longer fixes them.
    """
    game = position(players, seed, moves)
    data = game.to_dict()
    data["history"] = []
    data["pile"] = list(data["pile"])  # keep the pile: only chips differ
    original = NoThanksGame.from_dict(data)
    player = original.active_player
    assert player is not None
    me = original.seat_of(player)
    others = [s for s in range(players) if s != me]
    giver = max(others, key=lambda s: data["chips"][s])
    taker = next(s for s in others if s != giver)
    moved = dict(data, chips=list(data["chips"]))
    moved["chips"][giver] -= 1
    moved["chips"][taker] += 1
    twin = NoThanksGame.from_dict(moved)
    assert twin.view(player) == original.view(player)
    assert twin.chips != original.chips
    for level in LEVELS:
        first = choose_nothanks_action(
            original.view(player), level, random.Random(3), time_budget=UNHURRIED
        )
        second = choose_nothanks_action(
            twin.view(player), level, random.Random(3), time_budget=UNHURRIED
        )
        assert first is second


@pytest.mark.parametrize("level", LEVELS)
def test_decisions_are_deterministic_for_a_seed(level: Level) -> None:
    """The same view and the same seed give the same action, at every level."""
    for seed, moves in [(11, 5), (12, 30), (13, 55)]:
        game = position(4, seed, moves)
        view = game.view(game.active_player)
        actions = {
            choose_nothanks_action(view, level, random.Random(seed), time_budget=UNHURRIED)
            for _ in range(2)
        }
        assert len(actions) == 1


def test_the_hard_player_keeps_within_its_time_budget() -> None:
    """Hard decisions with the default 250 ms budget return well within a second."""
    slowest = 0.0
    for seed in range(6):
        game = position(3 + seed % 5, 100 + seed, 7 * seed)
        view = game.view(game.active_player)
        start = time.perf_counter()
        action = choose_nothanks_action(view, Level.HARD, random.Random(seed))
        slowest = max(slowest, time.perf_counter() - start)
        assert action in game.legal_actions()
    assert slowest < 1.0


def test_three_computer_players_finish_a_game() -> None:
    """An easy, a normal and a hard player play a whole game through the engine."""
    game = NoThanksGame.new(["easy", "normal", "hard"], 2024)
    rng = random.Random(2024)
    while not game.is_over:
        player = game.active_player
        assert player is not None
        action = choose_nothanks_action(game.view(player), Level(player), rng, time_budget=0.02)
        game.apply(player, action)
    assert sum(len(cards) for cards in game.cards) == 24
    assert game.total_chips() == 3 * starting_chips(3)


def test_the_hard_player_beats_the_baseline_over_a_few_games() -> None:
    """A smoke test of strength: hard wins most of a handful of games against baselines."""
    wins = 0.0
    for seed in range(6):
        game = NoThanksGame.new(names(3), 500 + seed)
        hard = f"p{seed % 3}"
        rng = random.Random(seed)
        while not game.is_over:
            player = game.active_player
            assert player is not None
            view = game.view(player)
            if player == hard:
                # An iteration cap, not the clock, ends the search: the same games every run.
                action = choose_nothanks_action(
                    view, Level.HARD, rng, time_budget=UNHURRIED, iterations=300
                )
            else:
                action = baseline_action(view)
            game.apply(player, action)
        winners = game.winners()
        wins += 1 / len(winners) if hard in winners else 0
    assert wins >= 4


@settings(max_examples=300, deadline=None)
@given(st.sets(st.integers(3, 35), max_size=20), st.integers(3, 35))
def test_card_cost_is_the_change_in_card_points(cards: set[int], card: int) -> None:
    """The run-aware cost equals the difference of card_points with and without the card."""
    if card in cards:
        cards.discard(card)
    mask = sum(1 << c for c in cards)
    assert mask_points(mask) == card_points(sorted(cards))
    assert card_cost(mask, card) == card_points([*cards, card]) - card_points(sorted(cards))


def test_the_view_yields_the_unseen_cards_and_the_counted_chips() -> None:
    """Unseen = 3..35 minus taken minus face up; private chips are counted from the moves."""
    game = position(4, 21, 45)
    player = game.active_player
    assert player is not None
    view = game.view(player)
    assert None in view.chips.values()
    table = table_from_view(view)
    taken = {c for cards in game.cards for c in cards}
    assert set(table.unseen) == set(range(3, 36)) - taken - {game.current_card}
    assert set(table.unseen) == set(game.removed) | set(game.pile)
    assert table.chips == game.chips
    assert table.pile_size == len(game.pile)


def test_only_the_acting_player_is_advised() -> None:
    """A view of someone who is not to act, or a spectator's view, is refused."""
    game = NoThanksGame.new(names(3), 1)
    waiting = next(p for p in game.players if p != game.active_player)
    for view in (game.view(waiting), game.view(None)):
        with pytest.raises(ValueError):
            choose_nothanks_action(view, Level.NORMAL, random.Random(1))


def test_normal_takes_a_card_that_joins_a_run_when_someone_else_wants_it() -> None:
    """A card extending our run is taken when passing it would let an opponent have it."""
    masks = [1 << 20, 1 << 22, 0]
    # Card 21 joins our 20 (cost 0) and would join the next player's 22 (cost -1).
    assert normal_takes(masks, [5, 5, 5], 0, 21, 0)


def test_normal_passes_an_expensive_card_with_few_chips_on_it() -> None:
    """A lone 30 with one chip on it is passed while we have chips."""
    assert not normal_takes([0, 0, 0], [8, 8, 8], 0, 30, 1)


def test_baseline_follows_its_threshold_rule() -> None:
    """The baseline takes when cost minus chips is at most zero, or when broke."""
    game = NoThanksGame.new(names(3), 3)
    view = game.view(game.active_player)
    card = game.current_card
    assert card is not None
    assert baseline_action(view) is PASS
    game.chips_on_card = card  # the rule looks only at the card, its chips and our chips
    assert baseline_action(game.view(game.active_player)) is TAKE


def test_the_opponent_model_reads_a_tight_player_as_tight() -> None:
    """A seat short of chips that still refuses cheap cards plays tighter than the playouts."""
    # With 4 chips and 20 cards to come the playouts take anything up to 4.5 points net.
    tight = [(0, 4, card, card - net, 20, False) for card, net in ((15, 3), (19, 4), (22, 3))]
    tight += [(0, 4, card, card, 20, True) for card in (3, 4)]  # free cards it did take
    assert fit_looseness(tight) <= -2


def test_the_opponent_model_reads_an_eager_taker_as_loose() -> None:
    """A seat that took lone cards at 5-7 points net with plenty of chips plays loose."""
    # With 11 chips and 20 cards to come the playouts' mean threshold is 0.5 points net.
    eager = [(0, 11, card, card - net, 20, True) for card, net in ((20, 5), (24, 6), (28, 7))]
    eager.append((0, 11, 30, 2, 20, False))
    assert fit_looseness(eager) >= 5
    # One observation barely moves the model away from the playout policy.
    assert abs(fit_looseness(eager[:1])) <= fit_looseness(eager)


def test_the_search_stops_at_its_iteration_cap_or_its_deadline() -> None:
    """The cap is exact with time to spare; a deadline already past stops it at once."""
    game = position(3, 31, 20)
    view = game.view(game.active_player)
    decision = search_decision(view, table_from_view(view))
    capped = search(decision, random.Random(1), iterations=321, deadline=float("inf"))
    assert capped.iterations == capped.planned == 321
    hurried = search(decision, random.Random(1), iterations=10_000, deadline=0.0)
    assert hurried.iterations <= CLOCK_EVERY < hurried.planned


def test_hard_takes_a_card_that_closes_a_gap_in_its_runs() -> None:
    """With 10-11 and 13-14, card 12 merges the runs (it gains 13 points): hard takes it."""
    data = NoThanksGame.new(names(3), 1).to_dict()
    mine = [10, 11, 13, 14]
    data["cards"][data["active"]] = mine
    # The cards in hand and the face-up 12 leave the hidden cards; the old face-up card
    # goes back into the pile, so every card is still somewhere exactly once.
    hidden = [c for c in data["removed"] + data["pile"] if c not in (*mine, 12)]
    hidden.append(data["current_card"])
    data["removed"], data["pile"] = sorted(hidden[:9]), hidden[9:]
    data["current_card"] = 12
    game = NoThanksGame.from_dict(data)
    view = game.view(game.active_player)
    for level in (Level.HARD, Level.EXPERT):
        action = choose_nothanks_action(view, level, random.Random(2), iterations=400)
        assert action is TAKE


def easy_takes(card: int, chips_on: int, mine: int, cards: list[int], tries: int = 200) -> float:
    """How often easy takes ``card`` (with ``chips_on``) holding ``cards`` and ``mine`` chips."""
    data = NoThanksGame.new(names(3), 5).to_dict()
    seat = data["active"]
    hidden = [c for c in data["removed"] + data["pile"] if c not in (*cards, card)]
    hidden.append(data["current_card"])
    data["removed"], data["pile"] = sorted(hidden[:9]), hidden[9:]
    data["current_card"], data["chips_on_card"] = card, chips_on
    data["cards"][seat] = cards
    spare = data["chips"][seat] - mine
    data["chips"][seat] = mine
    data["chips"][(seat + 1) % 3] += spare - chips_on
    game = NoThanksGame.from_dict(data)
    view = game.view(game.active_player)
    takes = sum(
        choose_nothanks_action(view, Level.EASY, random.Random(i)) is TAKE for i in range(tries)
    )
    return takes / tries


def test_easy_makes_a_newcomers_mistakes_not_random_ones() -> None:
    """Easy grabs a low card for nothing and misses runs, but never refuses a paying card."""
    # A lone 8 with no chips on it: normal passes, easy often grabs it.
    assert 0.25 < easy_takes(8, 0, 9, []) < 0.9
    # 25 joins 24 (it costs nothing): normal would take or milk it; easy sometimes misses it.
    assert 0.5 < easy_takes(25, 0, 9, [24]) < 1.0
    # Ten chips on a 9: it pays, and easy always sees that.
    assert easy_takes(9, 10, 6, []) == 1.0
    # A lone 33 with three chips on it: even easy passes while it has plenty of chips.
    assert easy_takes(33, 3, 9, []) == 0.0


def test_each_seat_is_observed_at_its_own_voluntary_decisions() -> None:
    """A pass and a take are read from the history with the chips and pile size of the time."""
    game = NoThanksGame.new(names(3), 12)
    card = game.current_card
    first = game.active
    game.apply(game.players[first], PASS)
    second = game.active
    game.apply(game.players[second], TAKE)
    observations = seat_observations(game.view(game.active_player), 3, starting_chips(3))
    assert observations[first] == [(0, 11, card, 0, 23, False)]
    assert observations[second] == [(0, 11, card, 1, 23, True)]
