"""Game reviews: a clearly bad decision is flagged first, the judgement sees only the
player's own views, and a review is the same for every asker, run and process.

The games are built by hand: every seat plays the normal level, except one decision of
the reviewed player, made badly on purpose.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.ai.nothanks import card_cost, choose_nothanks_action
from bot.ai.rage import choose_rage_action
from bot.ai.rage_memory import RageMemory
from bot.ai.rage_sim import sure_winners
from bot.ai.review import Ask, rage_key
from bot.engines.nothanks import PASS, TAKE, NoThanksGame
from bot.engines.rage import Bid, Phase, RageState
from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.games.rage import encode_action
from bot.table.replay import StoredGame, StoredSeat
from bot.table.review import Budget, Review, Reviews, own_decisions, review_game
from bot.table.spec import GameSpec
from bot.table.thinking import ThinkingPool

# Enough work to rank the planted mistake first, little enough for a test.
SMALL = Budget(samples=24, confirm=4, expert_iterations=1500)
PLAYERS = ["1", "2", "3"]
# A deal where the first card, for seat "1" with all eleven chips, is the 35.
NOTHANKS_SEED = 81
RAGE_SEED = 5
# A deal where seat "1" meets a card that fits its run with nine chips on it.
RUN_SEED = 30


def stored(
    spec: GameSpec, players: list[str], seed: int, moves: list[tuple[str, str]]
) -> StoredGame:
    """A stored game of these seats, seed and move log."""
    seats = tuple(
        StoredSeat(seat, player, player, f"P{player}", None, 0, 1)
        for seat, player in enumerate(players)
    )
    return StoredGame(7, 1, spec.name, "finished", str(seed), {}, 0.0, 1.0, seats, tuple(moves))


def nothanks_with_a_35_taken() -> StoredGame:
    """A No Thanks! game where seat "1" takes the 35 at once, with no chip on it and all its
    eleven chips in hand; every other move is the normal level's."""
    engine = NoThanksGame.new(PLAYERS, seed=NOTHANKS_SEED)
    assert engine.current_card == 35 and engine.chips_on_card == 0
    moves: list[tuple[str, str]] = []
    while not engine.is_over:
        (player,) = engine.acting_players()
        view = engine.view(player)
        action = choose_nothanks_action(view, "normal", random.Random(len(moves)))
        if not moves:
            assert player == "1" and engine.chips[0] == 11
            action = TAKE
        moves.append((player, action.value))
        engine.apply(player, action)
    return stored(NOTHANKS, PLAYERS, NOTHANKS_SEED, moves)


def nothanks_with_a_rich_run_passed() -> tuple[StoredGame, int]:
    """A No Thanks! game where seat "1" says no thanks to a card that fits its run (it
    costs nothing or less) with nine chips or more on it; the other moves are the normal
    level's. The pass's step too."""
    engine = NoThanksGame.new(PLAYERS, seed=RUN_SEED)
    moves: list[tuple[str, str]] = []
    planted = -1
    while not engine.is_over:
        (player,) = engine.acting_players()
        view = engine.view(player)
        action = choose_nothanks_action(view, "normal", random.Random(len(moves)))
        mask = sum(1 << card for card in engine.cards[0])
        card = engine.current_card or 0
        fits = card_cost(mask, card) <= 0 and engine.chips_on_card >= 9
        if player == "1" and planted < 0 and engine.chips[0] > 0 and fits:
            action, planted = PASS, len(moves)
        moves.append((player, action.value))
        engine.apply(player, action)
    assert planted >= 0
    return stored(NOTHANKS, PLAYERS, RUN_SEED, moves), planted


def rage_with_a_hopeless_bid() -> tuple[StoredGame, int]:
    """A Rage game where seat "1" bids every trick of an eight-card round on a hand
    without a sure winner; every other move is the normal level's. The bid's step too."""
    players = ["1", "2", "3", "4"]
    engine = RageState.new(players, seed=RAGE_SEED)
    memories = {player: RageMemory() for player in players}
    moves: list[tuple[str, str]] = []
    planted = -1
    while not engine.is_over:
        player = str(engine.acting_players()[0])
        view = engine.view(player)
        action = choose_rage_action(view, "normal", random.Random(len(moves)), memories[player])
        if player == "1" and planted < 0 and view.phase is Phase.BIDDING:
            trump = -1 if view.trump is None else int(view.trump)
            hopeless = sure_winners([int(c) for c in view.hand], trump) < 1
            if hopeless and view.cards_per_hand >= 5:
                action = Bid(view.cards_per_hand)
                planted = len(moves)
        moves.append((player, encode_action(action)))
        engine.apply(player, action)
    assert planted >= 0
    return stored(RAGE, players, RAGE_SEED, moves), planted


async def test_taking_the_35_without_chips_at_once_is_flagged_first() -> None:
    """Taking a 35 with nothing on it while holding every chip costs the most, and the
    expert would have said no thanks."""
    review = await review_game(ThinkingPool(0), NOTHANKS, nothanks_with_a_35_taken(), "1", SMALL)
    first = review.mistakes[0]
    assert (first.step, first.made, first.better) == (0, "take", "pass")
    assert first.cost > 10
    assert 1 <= len(review.mistakes) <= 3
    assert [m.cost for m in review.mistakes] == sorted(
        (m.cost for m in review.mistakes), reverse=True
    )


async def test_passing_on_a_rich_card_that_fits_a_run_is_flagged_first() -> None:
    """Saying no thanks to a card that fits the run, with nine chips or more on it, costs
    the most, and the expert would have taken it."""
    game, planted = nothanks_with_a_rich_run_passed()
    review = await review_game(ThinkingPool(0), NOTHANKS, game, "1", SMALL)
    first = review.mistakes[0]
    assert (first.step, first.made, first.better) == (planted, "pass", "take")
    assert first.cost > 10


async def test_a_hopeless_bid_is_flagged_first() -> None:
    """Bidding all eight tricks on a hand without a sure winner is Rage's costliest
    decision, and hard would have bid less."""
    game, planted = rage_with_a_hopeless_bid()
    review = await review_game(ThinkingPool(0), RAGE, game, "1", Budget(samples=12, confirm=4))
    first = review.mistakes[0]
    assert first.step == planted and first.made == "bid 8"
    assert first.better.startswith("bid ") and int(first.better.split()[1]) < 8
    assert first.cost > 5


class RecordingPool(ThinkingPool):
    """An in-process pool that keeps what every search was given."""

    def __init__(self) -> None:
        super().__init__(0)
        self.asked: list[tuple[Any, Any, str, Any]] = []

    async def search(
        self, choose: Any, view: Any, level: str, seed: str, memory: Any
    ) -> tuple[Any, Any]:
        """Record the call, then search as the pool does."""
        self.asked.append((choose, view, seed, memory))
        return await super().search(choose, view, level, seed, memory)


@pytest.mark.parametrize("which", ["nothanks", "rage"])
async def test_the_judgement_sees_only_the_players_own_views(which: str) -> None:
    """Every search of a review gets the reviewed player's own view of that moment (no
    other hand, no removed card, no chips the view hides) and what that player
    remembered, never the engine; the same views the engine gives that player."""
    if which == "nothanks":
        spec, game = NOTHANKS, nothanks_with_a_35_taken()
    else:
        spec, game = RAGE, rage_with_a_hopeless_bid()[0]
    pool = RecordingPool()
    await review_game(pool, spec, game, "1", Budget(samples=4, confirm=2, expert_iterations=200))
    engine = spec.new_engine(game.seat_players, int(game.seed), game.options)
    own: dict[int, Any] = {}
    for step, (player, action) in enumerate(game.moves):
        if player == "1":
            own[step] = engine.view("1")
        engine.apply(player, spec.decode_action(action))
    assert pool.asked
    for choose, view, seed, ask in pool.asked:
        assert choose.__module__ == "bot.ai.review"
        step = int(seed.split(":")[-2])
        assert view == own[step] and view.viewer == "1"
        assert isinstance(ask, Ask)
        if which == "nothanks":
            assert view.removed is None  # the nine cards out of the game stay unseen
            assert all(view.chips[p] is None for p in view.players if p != "1")
            assert ask.memory is None
        else:
            assert isinstance(ask.memory, RageMemory)
            assert not hasattr(view, "hands")  # a view holds one hand: the player's


def summary(review: Review) -> list[tuple[int, str, str, float]]:
    """What a review shows, without the views it draws."""
    return [(m.step, m.made, m.better, m.cost) for m in review.mistakes]


async def test_a_review_is_the_same_for_every_asker_and_run() -> None:
    """Two separate reviewers (two asks, a restart) find the same mistakes at the same
    costs; asked again, or twice at once, a review is worked out only once."""
    game = nothanks_with_a_35_taken()
    first = Reviews(ThinkingPool(0), budget=SMALL)
    second = Reviews(ThinkingPool(0), budget=SMALL)
    together = await asyncio.gather(
        first.review(NOTHANKS, game, "1"), first.review(NOTHANKS, game, "1")
    )
    assert together[0] is together[1] and first.computed == 1
    again = await first.review(NOTHANKS, game, "1")
    assert again is together[0] and first.computed == 1
    elsewhere = await second.review(NOTHANKS, game, "1")
    assert summary(elsewhere) == summary(again) and summary(again)


async def test_the_memory_keeps_only_the_latest_reviews() -> None:
    """Past its size the oldest review is forgotten, and asked again it is worked out
    again, to the same result."""
    reviews = Reviews(
        ThinkingPool(0), budget=Budget(samples=4, confirm=2, expert_iterations=200), kept=1
    )
    game = nothanks_with_a_35_taken()
    other = dataclasses.replace(game, table_id=game.table_id + 1)
    first = await reviews.review(NOTHANKS, game, "1")
    await reviews.review(NOTHANKS, other, "1")
    assert reviews.cached(game.table_id, "1") is None and reviews.computed == 2
    again = await reviews.review(NOTHANKS, game, "1")
    assert reviews.computed == 3 and summary(again) == summary(first)


def test_reviewed_decisions_are_the_players_real_choices() -> None:
    """Only the reviewed seat's decisions with more than one legal choice are judged; a
    seat without chips (which must take) has none there."""
    game = nothanks_with_a_35_taken()
    decisions = own_decisions(NOTHANKS, game, "1")
    engine = NoThanksGame.new(PLAYERS, seed=NOTHANKS_SEED)
    expected = []
    for step, (player, action) in enumerate(game.moves):
        if player == "1" and engine.chips[0] > 0:
            expected.append(step)
        engine.apply(player, NOTHANKS.decode_action(action))
    assert [d.step for d in decisions] == expected
    assert all(d.public.viewer is None for d in decisions)


def test_rage_keys_are_the_move_logs() -> None:
    """The review names Rage's choices as the move log does (bids, cards, Jokers with
    their colour), so the choice made and the choices judged can be compared."""
    engine = RageState.new(["1", "2", "3"], seed=2)
    rng = random.Random(2)
    seen = set()
    while not engine.is_over:
        player = engine.acting_players()[0]
        legal = list(engine.legal_actions(player))
        for action in legal:
            assert rage_key(action) == encode_action(action)
            seen.add(rage_key(action).split()[1][:5] if "JOKER" in rage_key(action) else "")
        engine.apply(player, rng.choice(legal))
    assert "JOKER" in seen


@pytest.fixture
async def worker() -> AsyncIterator[ThinkingPool]:
    """One real worker process, as the bot runs reviews."""
    pool = ThinkingPool(1, timeout=30.0)
    await pool.start(("bot.ai.review",))
    await pool.ready()
    try:
        yield pool
    finally:
        await pool.close()


async def test_a_worker_process_reviews_the_same(worker: ThinkingPool) -> None:
    """A review thought out in a worker process equals one thought out here."""
    game, _ = rage_with_a_hopeless_bid()
    budget = Budget(samples=6, confirm=3)
    there = await review_game(worker, RAGE, game, "1", budget)
    here = await review_game(ThinkingPool(0), RAGE, game, "1", budget)
    assert worker.answered > 0 and worker.replacements == 0
    assert summary(there) == summary(here)
    assert (
        dataclasses.asdict(there.mistakes[0])["view"]
        == dataclasses.asdict(here.mistakes[0])["view"]
    )
