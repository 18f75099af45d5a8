"""Tests of the No Thanks! search's value function, its root values and its view-only input."""

from __future__ import annotations

import fnmatch
import math
import random
from pathlib import Path
from typing import Any

import pytest

from bot.ai import Level, choose_nothanks_action, nothanks_search
from bot.ai.nothanks import search_decision, search_view, table_from_view
from bot.ai.nothanks_search import (
    DEAL_OVERHEAD,
    VALUE_FEATURES,
    VALUE_PATH,
    VALUE_WEIGHTS,
    _playout,
    load_value_weights,
    search,
)
from bot.engines.nothanks import (
    HIGHEST_CARD,
    LOWEST_CARD,
    MAX_PLAYERS,
    MIN_PLAYERS,
    PILE_SIZE,
    TAKE,
    NoThanksGame,
    starting_chips,
)
from tests.ai.test_nothanks_ai import names, position, reshuffle_hidden_cards


def test_the_value_function_ships_for_every_player_count() -> None:
    """data/nothanks_value.json loads: one row of weights per card still to come, per count."""
    weights = load_value_weights()
    assert weights == VALUE_WEIGHTS
    assert sorted(weights) == list(range(MIN_PLAYERS, MAX_PLAYERS + 1))
    for rows in weights.values():
        assert len(rows) == PILE_SIZE
        assert all(len(row) == len(VALUE_FEATURES) for row in rows)
        assert all(math.isfinite(w) for row in rows for w in row)
        # Nothing left to come: nothing more changes.
        assert not any(rows[0])


def test_the_runtime_image_ships_the_value_function() -> None:
    """The Docker image copies the weights beside the code, where the search looks for them."""
    repo = Path(__file__).resolve().parents[2]
    relative = VALUE_PATH.relative_to(repo).as_posix()
    dockerfile = (repo / "Dockerfile").read_text(encoding="utf-8")
    copies = [line.split()[1:] for line in dockerfile.splitlines() if line.startswith("COPY ")]
    # `COPY <source> <target>`: a file, or a pattern into a folder (a target ending in /).
    assert any(
        fnmatch.fnmatch(relative, source)
        and (
            target == f"/opt/cardtable/{relative}"
            or f"{target}{VALUE_PATH.name}" == f"/opt/cardtable/{relative}"
        )
        for source, target in (copy[-2:] for copy in copies if len(copy) >= 2)
    ), dockerfile


def test_the_search_ends_its_playouts_with_the_value_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the value function on, early playouts stop after a few takes and ask it."""
    calls = []
    estimate = nothanks_search._estimate

    def counting(*args: object) -> list[float]:
        calls.append(args)
        return estimate(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(nothanks_search, "_estimate", counting)
    game = position(3, 41, 4)
    view = game.view(game.active_player)
    decision = search_decision(view, table_from_view(view))
    result = search(decision, random.Random(1), iterations=200, deadline=math.inf, value=True)
    assert result.iterations == 200
    assert len(calls) > 300
    calls.clear()
    # Off (the levels' way): every playout is played to the end.
    search(decision, random.Random(1), iterations=200, deadline=math.inf)
    assert not calls


def mean_final_scores(n: int, seed: int, runs: int, weights: object) -> list[float]:
    """Each seat's mean score at the end of playouts from a fresh deal (estimated or played)."""
    cards = list(range(LOWEST_CARD, HIGHEST_CARD + 1))
    totals = [0.0] * n
    rng = random.Random(seed)
    for _ in range(runs):
        pool = cards[:]
        rng.shuffle(pool)
        # The face-up card and the pile under it (next card last); the rest are removed.
        card, pile = pool[-1], pool[-PILE_SIZE:-1]
        unseen = sum(1 << c for c in pool) & ~(1 << card)
        scores = _playout(
            [0] * n,
            [starting_chips(n)] * n,
            pile,
            card,
            0,
            0,
            [0] * n,
            rng.random,
            6,
            unseen,
            weights,  # type: ignore[arg-type]
        )
        totals = [t + s for t, s in zip(totals, scores, strict=True)]
    return [t / runs for t in totals]


@pytest.mark.parametrize("n", [3, 5])
def test_the_value_function_predicts_what_the_playouts_score(n: int) -> None:
    """Six takes then the estimate score, on average, what playing to the end scores."""
    played = mean_final_scores(n, 7, 3000, None)
    estimated = mean_final_scores(n, 7, 3000, VALUE_WEIGHTS[n])
    assert sum(played) / n == pytest.approx(sum(estimated) / n, abs=2.0)
    # The seat that starts (it faces the most chip-free cards) is told apart as well.
    assert estimated[0] == pytest.approx(played[0], abs=3.0)


def test_the_search_input_is_the_same_whatever_the_hidden_cards() -> None:
    """The search gets only what the view shows: redealing the hidden cards changes nothing."""
    game = position(4, 43, 30)
    twin = reshuffle_hidden_cards(game, random.Random(3))
    player = game.active_player
    assert player is not None
    decisions = [
        search_decision(g.view(player), table_from_view(g.view(player))) for g in (game, twin)
    ]
    assert decisions[0] == decisions[1]
    results = [search(d, random.Random(5), iterations=300, deadline=math.inf) for d in decisions]
    assert results[0] == results[1]


def test_the_root_values_say_what_each_action_is_worth() -> None:
    """A 5 with six chips on it pays: taking is worth points more than passing it on."""
    data = NoThanksGame.new(names(3), 5).to_dict()
    seat = data["active"]
    hidden = [c for c in data["removed"] + data["pile"] if c != 5]
    hidden.append(data["current_card"])
    data["removed"], data["pile"] = sorted(hidden[:9]), hidden[9:]
    data["current_card"], data["chips_on_card"] = 5, 6
    data["chips"][seat] -= 6
    game = NoThanksGame.from_dict(data)
    view = game.view(game.active_player)
    result = search(
        search_decision(view, table_from_view(view)),
        random.Random(2),
        iterations=600,
        deadline=math.inf,
    )
    assert result.take
    assert math.isfinite(result.take_value) and math.isfinite(result.pass_value)
    assert result.take_value > result.pass_value + 1


def test_both_root_actions_are_played_on_every_deal() -> None:
    """Taking and passing are compared on the same deals, so neither can be starved."""
    game = position(3, 47, 10)
    view = game.view(game.active_player)
    decision = search_decision(view, table_from_view(view))
    assert decision.chips[decision.me] > 0
    result = search(decision, random.Random(4), iterations=300, deadline=math.inf)
    assert result.take_visits == result.pass_visits == result.iterations == 300


def test_the_same_deal_backs_both_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deal's take and its pass play on with the same cards in the same order."""
    calls: list[tuple[int, list[int]]] = []
    playout = nothanks_search._playout

    def recording(*args: Any, **kwargs: Any) -> list[float]:
        card, pool = args[3], args[2]
        calls.append((card, list(pool)))
        return playout(*args, **kwargs)

    monkeypatch.setattr(nothanks_search, "_playout", recording)
    game = position(3, 47, 10)
    view = game.view(game.active_player)
    decision = search_decision(view, table_from_view(view))
    search(decision, random.Random(4), iterations=1, deadline=math.inf)
    # The first deal: taking turns up the pile's first card, passing leaves it face up.
    (take_card, take_pool), (pass_card, pass_pool) = calls
    assert pass_card == decision.card
    assert [take_card, *reversed(take_pool)] == list(reversed(pass_pool))
    assert len(pass_pool) == decision.pile_size


def test_the_work_budget_sizes_the_search_by_the_cards_still_to_come() -> None:
    """Early (long playouts) the work budget allows fewer deals than late (short ones)."""
    budget = 12_000
    planned = []
    for moves in (2, 60):
        game = position(3, 61, moves)
        view = game.view(game.active_player)
        decision = search_decision(view, table_from_view(view))
        assert decision.chips[decision.me] > 0
        result = search(
            decision, random.Random(1), iterations=100_000, deadline=math.inf, work=budget
        )
        expected = budget // (2 * (decision.pile_size + 1 + DEAL_OVERHEAD))
        assert result.iterations == result.planned == expected
        planned.append(expected)
    assert planned[0] < planned[1]
    # The deal cap still bounds the search.
    capped = search(decision, random.Random(1), iterations=10, deadline=math.inf, work=budget)
    assert capped.iterations == capped.planned == 10


def test_search_view_is_the_search_behind_the_levels_choice() -> None:
    """search_view gives the action choose_nothanks_action plays, with the same random draws."""
    for seed, moves in [(51, 3), (52, 28), (53, 50)]:
        game = position(3, seed, moves)
        view = game.view(game.active_player)
        for level in (Level.HARD, Level.EXPERT):
            result = search_view(view, level, random.Random(seed), iterations=200, time_budget=30)
            action = choose_nothanks_action(
                view, level, random.Random(seed), iterations=200, time_budget=30
            )
            assert (action is TAKE) == result.take
            assert result.iterations == 200 or not table_from_view(view).my_chips


@pytest.mark.parametrize("prior_visits", [0, 4, 10])
def test_a_node_plays_as_the_policy_for_its_first_visits(
    monkeypatch: pytest.MonkeyPatch, prior_visits: int
) -> None:
    """Below the root, a node asks the policy for its first prior_visits visits, then UCT."""
    asked: list[tuple[int, int]] = []

    def passing(mask: int, mine: int, card: int, on: int, *rest: object) -> bool:
        asked.append((card, on))
        return False

    monkeypatch.setattr(nothanks_search, "policy_takes", passing)
    game = position(3, 47, 10)
    view = game.view(game.active_player)
    decision = search_decision(view, table_from_view(view))
    assert decision.chips[decision.me] > 0
    # The first deal opens the root's pass; every later one visits the next seat's node.
    visits = 30
    result = search(
        decision,
        random.Random(4),
        iterations=visits + 1,
        deadline=math.inf,
        prior_visits=prior_visits,
    )
    assert result.pass_visits == visits + 1
    # The next seat's node: the same card with one chip more on it.
    next_seat = [a for a in asked if a == (decision.card, decision.chips_on + 1)]
    assert len(next_seat) == prior_visits
