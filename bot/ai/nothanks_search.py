"""Information-set Monte-Carlo tree search for No Thanks!, on plain lists and bit masks.

The search sees only what the deciding player sees: the public cards, the chips it was
given (its own, and the others' as counted from the public moves), the unseen cards and
how many of them are still in the pile. Each iteration draws one pile from the unseen
cards (a determinisation) and, for each root action on that same pile, walks the shared
tree (by the heuristic policy at nodes seen only a few times, by UCT after that), grows
it by one edge and plays the rest of the game with that policy. A decision node belongs
to one information set of the searcher: after a take the tree branches on the card that
turns up, never on cards nobody has seen.

The search is anytime: it stops at its caps (iterations, and work: cards turned up; they
make it deterministic for a seed) or at a deadline (a safety cap on a busy machine),
whichever comes first.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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
# A decision node below the root plays as the playout policy for its first this many
# visits, and only then lets UCT try both actions: a node seen once or twice otherwise
# takes first and passes second whatever the card, which skews a small search's values
# (against a 400,000-work search it halved hard's regret at the same work).
PRIOR_VISITS = 10
# A deal's fixed cost (copying the position, the reward, the backup) in cards turned up:
# the work budget counts a playout as the cards still to come plus this.
DEAL_OVERHEAD = 3
# The value function's estimate at the end of a short playout, in cards turned up.
ESTIMATE_COST = 3
# With the value function on, a playout plays this many takes and it estimates the rest.
PLAYOUT_TAKES = 8

# The value function: a seat's score change from now to the end, as a linear function of
# these features, with weights by player count and by cards still to come (fitted from
# self-play by benchmarks/strength/nothanks_value_fit.py).
VALUE_FEATURES = (
    "one",
    "chips",
    "chips squared",
    "no chips",
    "one chip",
    "unseen next to own cards",
    "unseen gaps",
)
VALUE_PATH = Path(__file__).resolve().parents[2] / "data" / "nothanks_value.json"
Weights = tuple[tuple[float, ...], ...]


def load_value_weights(path: Path = VALUE_PATH) -> dict[int, Weights]:
    """The value function's weights by player count (none if the file is missing)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    if tuple(data["features"]) != VALUE_FEATURES:
        raise ValueError(f"{path} was fitted for other features: {data['features']}")
    return {int(n): tuple(tuple(row) for row in rows) for n, rows in data["weights"].items()}


VALUE_WEIGHTS = load_value_weights()


def value_features(mask: int, chips: int, unseen: int) -> tuple[float, ...]:
    """A seat's features for the value function (``unseen``: cards not yet turned up)."""
    near = ((mask << 1) | (mask >> 1)) & ~mask & unseen
    gaps = (mask << 1) & (mask >> 1) & ~mask & unseen
    return (
        1.0,
        float(chips),
        float(chips * chips),
        float(chips == 0),
        float(chips == 1),
        float(near.bit_count()),
        float(gaps.bit_count()),
    )


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
    # The mean final margin to the best other player (points, positive: ahead) after each
    # root action, over the iterations that tried it (NaN if none did).
    take_value: float = math.nan
    pass_value: float = math.nan
    # The deals the caps allowed; fewer were searched if the deadline came first.
    planned: int = 0


def _cost(mask: int, card: int) -> int:
    """Change in card points if a player holding ``mask`` takes ``card``."""
    if mask >> (card - 1) & 1:
        return -(card + 1) if mask >> (card + 1) & 1 else 0
    return -1 if mask >> (card + 1) & 1 else card


# The sum of the set bits' positions in a byte, for each byte and each byte position: the
# card points of a mask come from five look-ups instead of a loop over its runs.
_BYTE_SUMS = tuple(
    tuple(sum(8 * k + bit for bit in range(8) if b >> bit & 1) for b in range(256))
    for k in range(5)
)


def _points(mask: int) -> int:
    """Card points of a mask: the lowest card of each run."""
    s = mask & ~(mask << 1)
    b0, b1, b2, b3, b4 = _BYTE_SUMS
    return b0[s & 255] + b1[s >> 8 & 255] + b2[s >> 16 & 255] + b3[s >> 24 & 255] + b4[s >> 32]


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
    rand: Callable[[], float],
    takes: int,
    unseen: int,
    weights: Weights | None,
) -> list[float]:
    """Play on with ``policy_takes``: each seat's final score (the lists change in place).

    After ``takes`` takes the value function (``weights`` by cards still to come; None:
    play to the end) estimates the rest from the seats' features, ``unseen`` giving the
    cards that were unseen at the start of the playout.

    ``pile`` holds the cards still to turn up, the next one last (it changes too). The
    policy is inlined here, because playouts are most of the search's time, and the noise
    is drawn only when it can change the answer: the same distribution of play for fewer
    calls.
    """
    n = len(masks)
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
                take = on >= 2 or mine <= 2 or rand() < 0.45
            else:
                # The noise adds 0..5 to this limit.
                limit = (
                    (2 + (7 - mine) * 2 if mine < 7 else 2) + looseness[active] - 2 - (left >> 3)
                )
                net = cost - on
                if net <= limit:
                    take = True
                elif net > limit + 5:
                    take = False
                else:
                    take = net <= limit + int(rand() * 6)
        if take:
            masks[active] |= 1 << card
            chips[active] = mine + on
            on = 0
            if not left:
                return [float(_points(m) - c) for m, c in zip(masks, chips, strict=True)]
            takes -= 1
            if not takes and weights is not None:
                return _estimate(masks, chips, unseen, weights[left])
            card = pile.pop()
            left -= 1
        else:
            chips[active] = mine - 1
            on += 1
            active += 1
            if active == n:
                active = 0


def _estimate(masks: list[int], chips: list[int], unseen: int, w: tuple[float, ...]) -> list[float]:
    """Each seat's estimated final score: its score now plus the value function's change."""
    held = 0
    for m in masks:
        held |= m
    rest = unseen & ~held
    w0, w1, w2, w3, w4, w5, w6 = w
    scores = []
    for m, c in zip(masks, chips, strict=True):
        near = ((m << 1) | (m >> 1)) & ~m & rest
        gaps = (m << 1) & (m >> 1) & ~m & rest
        # A seat out of chips (or nearly) must take what comes: a cliff, not a curve.
        cliff = w3 if c == 0 else w4 if c == 1 else 0.0
        scores.append(
            _points(m)
            - c
            + w0
            + (w1 + w2 * c) * c
            + cliff
            + w5 * near.bit_count()
            + w6 * gaps.bit_count()
        )
    return scores


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


def _rewards(scores: list[float]) -> tuple[list[float], list[float]]:
    """Each seat's margin to the best other seat, and that plus the win bonus (split on a tie)."""
    ordered = sorted(scores)
    best, second = ordered[0], ordered[1]
    bonus = WIN_BONUS / scores.count(best)
    margins = [(second if s == best else best) - s for s in scores]
    return margins, [m + bonus if s == best else m for m, s in zip(margins, scores, strict=True)]


_SPREAD: list[float] = [0.0]
_SHRINK: list[float] = [0.0]


def _uct_tables(size: int) -> tuple[list[float], list[float]]:
    """UCT's exploration term as two look-ups: EXPLORATION * sqrt(ln a) and 1 / sqrt(v).

    Table look-ups cost less than the log and square root that each selection needs.
    """
    for k in range(len(_SPREAD), size + 1):
        _SPREAD.append(EXPLORATION * math.sqrt(math.log(k)))
        _SHRINK.append(1 / math.sqrt(k))
    return _SPREAD, _SHRINK


def search(
    decision: Decision,
    rng: random.Random,
    *,
    iterations: int,
    deadline: float,
    work: int | None = None,
    value: bool = False,
    prior_visits: int = PRIOR_VISITS,
) -> SearchResult:
    """ISMCTS from the decision: the root action with the better mean reward.

    Each iteration deals one pile and plays both root actions on it (the same cards in the
    same order), so the two are compared on the same luck: the difference between them
    has a fraction of the variance of two independent samples, and neither action can be
    starved by a few unlucky early deals. Below the root, UCT walks one shared tree per
    action, and a node plays as the playout policy for its first ``prior_visits`` visits
    (so a small search's opponents and later selves play as the policy expects, not by
    UCT's take-first-then-pass start). ``work`` caps the cards the playouts may turn up
    in all (each playout turns up every card still to come; ``DEAL_OVERHEAD`` more stand
    for its fixed cost), so a decision costs about the same CPU early in a game, when
    playouts are long, as late, when they are short; ``iterations`` caps the deals either
    way. ``value``: playouts stop after a few takes and the value function learned from
    self-play estimates the rest (cheaper per deal, but it measured weaker than playing
    to the end).

        result = search(decision, random.Random(7), iterations=4000, deadline=math.inf,
                        work=9_000)
        result.take  # True: take the card
    """
    n = len(decision.masks)
    root = Node()
    unseen = decision.unseen
    pile_size = decision.pile_size
    looseness = decision.looseness
    me = decision.me
    can_pass_root = decision.chips[me] > 0
    branches = (True, False) if can_pass_root else (True,)
    weights = VALUE_WEIGHTS.get(n) if value else None
    if work is not None:
        cards = pile_size + 1
        if weights is not None and cards > PLAYOUT_TAKES:
            cards = PLAYOUT_TAKES + ESTIMATE_COST
        per_deal = len(branches) * (cards + DEAL_OVERHEAD)
        iterations = min(iterations, max(1, work // per_deal))
    spread, shrink = _uct_tables(iterations + 1)
    rand = rng.random
    clock = time.perf_counter
    takes_before_estimate = PLAYOUT_TAKES if weights is not None else -1
    unseen_mask = 0
    for c in unseen:
        unseen_mask |= 1 << c
    size = len(unseen)
    # The root's margins without the win bonus: what each action is worth in points.
    margin_sums = [0.0, 0.0]
    done = 0
    while done < iterations:
        if done % CLOCK_EVERY == 0 and done and clock() >= deadline:
            break
        done += 1
        # One deal for both root actions: the pile's order, drawn by a partial shuffle.
        deal = list(unseen)
        for k in range(pile_size):
            j = k + int(rand() * (size - k))
            deal[k], deal[j] = deal[j], deal[k]
        for first in branches:
            masks = list(decision.masks)
            chips = list(decision.chips)
            card, on, active = decision.card, decision.chips_on, me
            drawn = 0
            node: Node | None = root
            path: list[tuple[Edge, int]] = []
            over = False
            while node is not None:
                take, pass_ = node.take, node.pass_
                can_pass = chips[active] > 0
                if node is root:
                    edge, chose_take = (take, True) if first else (pass_, False)
                else:
                    take.avail += 1
                    if can_pass:
                        pass_.avail += 1
                    if not can_pass:
                        edge, chose_take = take, True
                    elif take.visits + pass_.visits < prior_visits:
                        chose_take = policy_takes(
                            masks[active],
                            chips[active],
                            card,
                            on,
                            pile_size - drawn,
                            looseness[active],
                            rand(),
                        )
                        edge = take if chose_take else pass_
                    elif take.visits == 0:
                        edge, chose_take = take, True
                    elif pass_.visits == 0:
                        edge, chose_take = pass_, False
                    else:
                        tv, pv = take.visits, pass_.visits
                        t = take.reward / tv + spread[take.avail] * shrink[tv]
                        p = pass_.reward / pv + spread[pass_.avail] * shrink[pv]
                        edge, chose_take = (take, True) if t >= p else (pass_, False)
                expanding = edge.visits == 0
                path.append((edge, active))
                nxt: Node | None
                if chose_take:
                    masks[active] |= 1 << card
                    chips[active] += on
                    on = 0
                    if drawn == pile_size:
                        over = True
                        break
                    card = deal[drawn]
                    drawn += 1
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
            if over:
                scores = [float(_points(m) - c) for m, c in zip(masks, chips, strict=True)]
            else:
                # The rest of the deal, reversed: the playouts draw from the end.
                pile = deal[pile_size - 1 : drawn - 1 if drawn else None : -1]
                scores = _playout(
                    masks,
                    chips,
                    pile,
                    card,
                    on,
                    active,
                    looseness,
                    rand,
                    takes_before_estimate,
                    unseen_mask,
                    weights,
                )
            margins, rewards = _rewards(scores)
            margin_sums[first] += margins[me]
            for edge, seat in path:
                edge.visits += 1
                edge.reward += rewards[seat]
    take, pass_ = root.take, root.pass_
    take_mean = take.reward / take.visits if take.visits else -math.inf
    pass_mean = pass_.reward / pass_.visits if pass_.visits else -math.inf
    return SearchResult(
        take=take_mean >= pass_mean,
        iterations=done,
        take_visits=take.visits,
        pass_visits=pass_.visits,
        take_value=margin_sums[True] / take.visits if take.visits else math.nan,
        pass_value=margin_sums[False] / pass_.visits if pass_.visits else math.nan,
        planned=iterations,
    )
