"""Game reviews: the three decisions of a finished game that cost a player the most points.

The game is dealt again from its seed and move log, and at each of the player's own
decisions (those with more than one legal choice) the player's own view is kept, with
what they remembered from their earlier views: never the engine, so the judgement can
see nothing the player could not. Each decision is then judged in the thinking pool,
one decision at a time (a review never holds more than one worker, and never the event
loop):

1. every choice's expected points (``Reviewer.values``: playouts from the view);
2. for the decisions where the choice made looks costliest, the strongest level's choice
   (``Reviewer.expert``). A decision counts as a mistake only where that level would
   have chosen differently; its cost is the expected points between the two choices.

Everything is seeded by the game (table, seed) and the player, so a review is the same
whoever asks and whenever. `Reviews` keeps the latest results in memory (bounded), and
shares one computation between people asking for the same review at once.
"""

from __future__ import annotations

import asyncio
import copy
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.ai.review import Ask
from bot.table.replay import StoredGame
from bot.table.spec import GameSpec, Reviewer
from bot.table.thinking import ThinkingPool

# How many decisions a review shows.
SHOWN = 3
# Differences smaller than this many points are playout noise, not mistakes.
MIN_COST = 0.5
# Reviews kept in memory: a review is small (three positions), and one asked again after
# a restart is worked out again, the same as before.
KEPT = 256


class BrokenLog(Exception):
    """The stored move log does not replay (a hand edit, an older form): no review."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much work a review does (the tests use less)."""

    samples: int | None = None  # playouts per choice (None: the game's reviewer decides)
    confirm: int = 6  # decisions the strongest level looks at, costliest first
    expert_iterations: int | None = None  # None: the level's own search


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of the player: the step it was made at, their view, the choice made."""

    step: int  # moves made before it (the replay's step that shows the position)
    view: Any  # the player's own view then
    public: Any  # what everyone saw then (the replay's picture)
    made: Any  # the action chosen
    memory: Any  # what the player remembered then (a copy)


@dataclass(frozen=True, slots=True)
class Mistake:
    """A decision that cost expected points, with what the strongest level would have done."""

    step: int
    made: str  # as the move log writes it
    better: str
    cost: float  # expected points lost
    view: Any  # the player's own view at the decision
    public: Any  # the public view at the decision


@dataclass(frozen=True, slots=True)
class Review:
    """A player's review of one game: how many decisions were judged, the costliest ones."""

    table_id: int
    player: str  # the engine's id of the reviewed seat
    decisions: int
    mistakes: tuple[Mistake, ...]


def own_decisions(spec: GameSpec, game: StoredGame, player: str) -> list[Decision]:
    """Deal the game again and keep the player's own view at each of their real choices.

    What the player remembers is built from their views after every move, as someone
    watching the table would; the engine (which knows every card) stays here. BrokenLog
    if the log does not replay.
    """
    try:
        return _own_decisions(spec, game, player)
    except Exception as error:
        raise BrokenLog(f"game {game.table_id} does not replay") from error


def _own_decisions(spec: GameSpec, game: StoredGame, player: str) -> list[Decision]:
    reviewer = spec.reviewer
    engine = spec.new_engine(game.seat_players, int(game.seed), game.options)
    memory = spec.new_memory()
    observe = reviewer.observe if reviewer is not None else None
    found: list[Decision] = []
    for step, (mover, encoded) in enumerate(game.moves):
        action = spec.decode_action(encoded)
        if mover == player and len(engine.legal_actions(player)) > 1:
            view = engine.view(player)
            if observe is not None:
                observe(memory, view)
            found.append(Decision(step, view, engine.view(None), action, copy.deepcopy(memory)))
        engine.apply(mover, action)
        if observe is not None and not engine.is_over:
            observe(memory, engine.view(player))
    return found


def seed_of(game: StoredGame, player: str) -> str:
    """The seed every random choice of a review is drawn from: the game's and the player's."""
    return f"review:{game.table_id}:{game.seed}:{player}"


async def review_game(
    pool: ThinkingPool,
    spec: GameSpec,
    game: StoredGame,
    player: str,
    budget: Budget = Budget(),
) -> Review:
    """Judge the player's decisions of a stored game (see the module's docstring)."""
    reviewer = spec.reviewer
    if reviewer is None:
        raise ValueError(f"{spec.name} has no game review")
    decisions = await asyncio.to_thread(own_decisions, spec, game, player)
    samples = budget.samples or reviewer.samples
    seed = seed_of(game, player)
    judged: list[tuple[float, Decision, dict[str, float]]] = []
    for decision in decisions:
        ask = Ask(made=decision.made, samples=samples, memory=decision.memory)
        values, _ = await pool.search(
            reviewer.values, decision.view, reviewer.level, f"{seed}:{decision.step}:v", ask
        )
        made = spec.encode_action(decision.made)
        judged.append((max(values.values()) - values[made], decision, values))
    mistakes = await _confirm(pool, spec, reviewer, judged, seed, budget, samples)
    return Review(game.table_id, player, len(decisions), mistakes)


async def _confirm(
    pool: ThinkingPool,
    spec: GameSpec,
    reviewer: Reviewer,
    judged: Sequence[tuple[float, Decision, dict[str, float]]],
    seed: str,
    budget: Budget,
    samples: int,
) -> tuple[Mistake, ...]:
    """Ask the strongest level about the costliest-looking decisions, until no other one
    could cost more than the three found."""
    ranked = sorted(
        (entry for entry in judged if entry[0] >= MIN_COST), key=lambda e: (-e[0], e[1].step)
    )
    found: list[Mistake] = []
    for regret, decision, values in ranked[: budget.confirm]:
        if len(found) >= SHOWN and regret <= min(m.cost for m in found):
            break  # a cost is at most its decision's regret: none left can enter
        ask = Ask(
            made=decision.made,
            samples=samples,
            memory=decision.memory,
            expert_iterations=budget.expert_iterations,
        )
        better, _ = await pool.search(
            reviewer.expert, decision.view, reviewer.level, f"{seed}:{decision.step}:e", ask
        )
        made = spec.encode_action(decision.made)
        if better == made or better not in values:
            continue
        cost = values[better] - values[made]
        if cost < MIN_COST:
            continue
        found.append(Mistake(decision.step, made, better, cost, decision.view, decision.public))
        found.sort(key=lambda m: (-m.cost, m.step))
        del found[SHOWN:]
    return tuple(found)


class Reviews:
    """The reviews asked for lately, worked out once each (per game and player).

    Kept in memory, the latest `KEPT`: a review costs seconds of a worker's time, and
    asking again (or a second person asking about the same game) should cost none. A
    restart forgets them; asked again, a review is worked out again to the same result.
    """

    def __init__(self, pool: ThinkingPool, *, budget: Budget = Budget(), kept: int = KEPT) -> None:
        self.pool = pool
        self.budget = budget
        self.kept = kept
        self.computed = 0  # reviews worked out (not served from memory), for the tests
        self._done: OrderedDict[tuple[int, str], Review] = OrderedDict()
        self._running: dict[tuple[int, str], asyncio.Task[Review]] = {}
        # One review at a time: the computers at the tables keep the other workers.
        self._turn = asyncio.Semaphore(1)

    def cached(self, table_id: int, player: str) -> Review | None:
        """A review already worked out, if it is still kept."""
        return self._done.get((table_id, player))

    async def review(self, spec: GameSpec, game: StoredGame, player: str) -> Review:
        """The player's review of the game: kept, being worked out, or worked out now."""
        key = (game.table_id, player)
        done = self._done.get(key)
        if done is not None:
            self._done.move_to_end(key)
            return done
        task = self._running.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._work(spec, game, player))
            self._running[key] = task
        # Shielded: a person who stops waiting leaves the review to finish for the next.
        return await asyncio.shield(task)

    async def _work(self, spec: GameSpec, game: StoredGame, player: str) -> Review:
        key = (game.table_id, player)
        try:
            async with self._turn:
                review = await review_game(self.pool, spec, game, player, self.budget)
            self.computed += 1
            self._done[key] = review
            while len(self._done) > self.kept:
                self._done.popitem(last=False)
            return review
        finally:
            self._running.pop(key, None)
