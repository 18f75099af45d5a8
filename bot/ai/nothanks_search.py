"""Information-set Monte-Carlo tree search for No Thanks!, on plain lists and bit masks.

The search sees only what the deciding player sees: the public cards, the chips it was
given (its own, and the others' as counted from the public moves), the unseen cards and
how many of them are still in the pile. Each iteration draws one pile from the unseen
cards (a determinisation), walks the shared tree by UCT, grows it by one edge and plays
the rest of the game with a heuristic policy. A decision node belongs to one information
set of the searcher: after a take the tree branches on the card that turns up, never on
cards nobody has seen.

The search is anytime: it stops at an iteration cap (which makes it deterministic for a
seed) or at a deadline (a safety cap on a busy machine), whichever comes first.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

# UCT exploration on the reward scale below (points, roughly -60..+60).
EXPLORATION = 24.0
# The reward is the margin to the best other player plus this much for a win (shared
# wins split it), so the search cares about winning, not only about the margin.
WIN_BONUS = 12.0
# Check the clock every this many iterations (a clock read costs about an iteration's
# hundredth, but there is no need to pay it every time).
CLOCK_EVERY = 16
# Fitted looseness of the other seats: the shifts tried, and the pull towards none.
LOOSENESS_RANGE = range(-6, 9)
LOOSENESS_PRIOR = 0.3


@dataclass(slots=True)
class Edge:
    """One action out of a decision node, with its UCT statistics."""

    visits: int = 0
    reward: float = 0.0
    avail: int = 0
    after_pass: Node | None = None
    after_take: dict[int, Node] = field(default_factory=dict)


@dataclass(slots=True)
class Node:
    """A decision node with its two edges (take, pass)."""

    take: Edge = field(default_factory=Edge)
    pass_: Edge = field(default_factory=Edge)


@dataclass(frozen=True, slots=True)
class Decision:
    """The public facts of one decision, by seat, as the search needs them."""

    me: int
    card: int
    chips_on: int
    masks: tuple[int, ...]
    chips: tuple[int, ...]
    unseen: tuple[int, ...]
    pile_size: int
    # Per seat: how much looser (positive) or tighter than the playout policy the seat has
    # played so far; the playouts add it to that seat's take threshold.
    looseness: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The chosen action (True: take) and how much search backed it."""

    take: bool
    iterations: int
    take_visits: int
    pass_visits: int


def _cost(mask: int, card: int) -> int:
    """Change in card points if a player holding ``mask`` takes ``card``."""
    if mask >> (card - 1) & 1:
        return -(card + 1) if mask >> (card + 1) & 1 else 0
    return -1 if mask >> (card + 1) & 1 else card


def _points(mask: int) -> int:
    """Card points of a mask: the lowest card of each run."""
    starts = mask & ~(mask << 1)
    total = 0
    while starts:
        low = starts & -starts
        total += low.bit_length() - 1
        starts ^= low
    return total


def policy_takes(
    mask: int, mine: int, card: int, on: int, pile_left: int, loose: int, noise: float
) -> bool:
    """The playout policy: a run-aware threshold that rises as chips run short.

    ``noise`` is uniform in [0, 1): it spreads the threshold a little so that playouts
    cover the plausible range of play rather than one fixed line.
    """
    if mine == 0:
        return True
    cost = _cost(mask, card)
    if cost <= 0:
        # A card that fits a run goes round once or twice for chips, then is taken.
        return on >= 2 or mine <= 2 or noise < 0.45
    limit = 2 + (7 - mine) * 2 if mine < 7 else 2
    limit += loose + int(noise * 6) - 2 - (pile_left >> 3)
    return cost - on <= limit


def playout_policy_takes(
    mask: int, mine: int, card: int, on: int, pile_left: int, noise: float
) -> bool:
    """The playout policy with no looseness: what the model expects of an average seat."""
    return policy_takes(mask, mine, card, on, pile_left, 0, noise)


def _playout(
    masks: list[int],
    chips: list[int],
    pile: list[int],
    card: int,
    on: int,
    active: int,
    looseness: Sequence[int],
    rand: random.Random,
) -> None:
    """Play to the end with ``policy_takes`` (the lists are changed in place).

    The policy is inlined here, because playouts are most of the search's time.
    """
    n = len(masks)
    draw = rand.random
    left = len(pile)
    while True:
        mine = chips[active]
        if mine == 0:
            take = True
        else:
            mask = masks[active]
            if mask >> (card - 1) & 1:
                cost = -(card + 1) if mask >> (card + 1) & 1 else 0
            else:
                cost = -1 if mask >> (card + 1) & 1 else card
            if cost <= 0:
                take = on >= 2 or mine <= 2 or draw() < 0.45
            else:
                limit = 2 + (7 - mine) * 2 if mine < 7 else 2
                limit += looseness[active] + int(draw() * 6) - 2 - (left >> 3)
                take = cost - on <= limit
        if take:
            masks[active] |= 1 << card
            chips[active] = mine + on
            on = 0
            if not left:
                return
            card = pile.pop()
            left -= 1
        else:
            chips[active] = mine - 1
            on += 1
            active += 1
            if active == n:
                active = 0


def fit_looseness(
    observations: Sequence[tuple[int, int, int, int, int, bool]],
) -> int:
    """How much looser than the playout policy one seat has played so far.

    Each observation is one voluntary decision on a card that did not fit the seat's runs:
    (mask, chips, card, chips on it, cards left in the pile, took). The fit is the shift
    of the policy's mean threshold that gets the fewest of them wrong, pulled slightly
    towards no shift so that little evidence changes little.
    """
    best, best_cost = 0, float("inf")
    for shift in LOOSENESS_RANGE:
        wrong = 0
        for mask, mine, card, on, pile_left, took in observations:
            limit = (2 + (7 - mine) * 2 if mine < 7 else 2) - (pile_left >> 3) + shift
            # The policy's noise adds 0..5 - 2: its midpoint is +0.5.
            predicted = _cost(mask, card) - on <= limit + 0.5
            wrong += predicted != took
        cost = wrong + LOOSENESS_PRIOR * abs(shift)
        if cost < best_cost:
            best, best_cost = shift, cost
    return best


def _rewards(masks: list[int], chips: list[int]) -> list[float]:
    """Each seat's margin to the best other seat, plus the win bonus (split on a tie)."""
    scores = [_points(m) - c for m, c in zip(masks, chips, strict=True)]
    best = min(scores)
    winners = scores.count(best)
    ordered = sorted(scores)
    second = ordered[1]
    rewards = []
    for s in scores:
        if s == best:
            rewards.append(float(second - s) + WIN_BONUS / winners)
        else:
            rewards.append(float(best - s))
    return rewards


def search(
    decision: Decision, rng: random.Random, *, iterations: int, deadline: float
) -> SearchResult:
    """ISMCTS from the decision: the most visited root action after the search."""
    n = len(decision.masks)
    root = Node()
    unseen = list(decision.unseen)
    pile_size = decision.pile_size
    looseness = decision.looseness
    log, sqrt = math.log, math.sqrt
    explore = EXPLORATION
    clock = time.perf_counter
    done = 0
    while done < iterations:
        if done % CLOCK_EVERY == 0 and done and clock() >= deadline:
            break
        done += 1
        rng.shuffle(unseen)
        pile = unseen[:pile_size]
        masks = list(decision.masks)
        chips = list(decision.chips)
        card, on, active = decision.card, decision.chips_on, decision.me
        node: Node | None = root
        path: list[tuple[Edge, int]] = []
        over = False
        while node is not None:
            take, pass_ = node.take, node.pass_
            take.avail += 1
            can_pass = chips[active] > 0
            if can_pass:
                pass_.avail += 1
            chose_take: bool
            if take.visits == 0 or not can_pass:
                edge, chose_take = take, True
            elif pass_.visits == 0:
                edge, chose_take = pass_, False
            else:
                t = take.reward / take.visits + explore * sqrt(log(take.avail) / take.visits)
                p = pass_.reward / pass_.visits + explore * sqrt(log(pass_.avail) / pass_.visits)
                edge, chose_take = (take, True) if t >= p else (pass_, False)
            expanding = edge.visits == 0
            path.append((edge, active))
            nxt: Node | None
            if chose_take:
                masks[active] |= 1 << card
                chips[active] += on
                on = 0
                if not pile:
                    over = True
                    break
                card = pile.pop()
                nxt = edge.after_take.get(card)
                if nxt is None and not expanding:
                    nxt = edge.after_take[card] = Node()
                    expanding = True
            else:
                chips[active] -= 1
                on += 1
                active = active + 1 if active + 1 < n else 0
                nxt = edge.after_pass
                if nxt is None and not expanding:
                    nxt = edge.after_pass = Node()
                    expanding = True
            if expanding:
                break
            node = nxt
        if not over:
            _playout(masks, chips, pile, card, on, active, looseness, rng)
        rewards = _rewards(masks, chips)
        for edge, seat in path:
            edge.visits += 1
            edge.reward += rewards[seat]
    take_visits, pass_visits = root.take.visits, root.pass_.visits
    return SearchResult(
        take=take_visits >= pass_visits,
        iterations=done,
        take_visits=take_visits,
        pass_visits=pass_visits,
    )
