"""Rage "hard": look-ahead over dealt-out guesses of the unseen cards.

A decision is made by imagining the round's hidden cards many times ("determinising"):
the cards the player has not seen (deck minus own hand, turned-up cards, the trick on
the table and every card remembered from this round's finished tricks) are dealt to the
other players, respecting the colours each has shown to be out of (a player who did not
follow is void), and the rest form the stack in a random order, so Change Trump and No
Trump turn up a guessed card. In each guess, every candidate is played and the round is
played out with the heuristic opponent model of ``rage_sim``; the candidate with the best
average round value wins. The same guesses are used for every candidate, so their
comparison is not blurred by luck.

Bidding works the same way: for each candidate bid, the round is played out with the
player aiming at that bid, and the bid with the best average value is chosen.
The number of guesses scales with the work a guess costs (a fixed budget of imagined
card plays), so decisions are deterministic for a seed and stay fast in the long rounds;
a deadline (the level's clock) is only a cap for a loaded host.

An imagined round's end is valued by the chance to win the game from the totals it
leaves (the value table of ``rage_value``, learned from self-play), or by its points.
Cards that are certainly worth the same (``same_as``) are played out once. ``play_values``
and ``bid_values`` give every legal action's estimate over the same guesses, for reviews.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.ai.rage_memory import RageMemory
from bot.ai.rage_sim import JOKER, NONE, SimRound, heuristic_bid, sure_winners
from bot.ai.rage_value import WinModel
from bot.engines.rage import DECK, ROUNDS, Bid, Colour, Play, RageView

_DECK_COUNTS: dict[int, int] = {}
for _card in DECK:
    _DECK_COUNTS[int(_card)] = _DECK_COUNTS.get(int(_card), 0) + 1

# Imagined card plays per decision; guesses = budget / (candidates x plays left), within
# these bounds. (Sequential halving, fewer guesses for the clearly worse candidates, was
# measured weaker at half this budget: 45.4% against 48.8% of 1,000 games.)
PLAY_BUDGET = 3000
MIN_GUESSES = 6
MAX_GUESSES = 60
# Bids tried on each side of the heuristic estimate of the own hand.
BID_WINDOW = 2


def unseen_cards(view: RageView, memory: RageMemory | None) -> list[int]:
    """The cards the viewer has not seen this round, one entry per copy, in code order."""
    counts = dict(_DECK_COUNTS)
    seen: list[int] = [*map(int, view.hand), *map(int, view.turned_up)]
    seen.extend(int(p.card) for p in view.trick)
    if memory is not None and memory.round == view.round:
        seen.extend(map(int, memory.played))
    else:
        last = view.last_trick
        if last is not None and last.round == view.round:
            seen.extend(int(p.card) for p in last.plays)
    for card in seen:
        counts[card] -= 1
    return [card for card, count in sorted(counts.items()) for _ in range(max(0, count))]


def hidden_pool(view: RageView, memory: RageMemory | None) -> list[int]:
    """The unseen cards, or those from the view alone if the memory leaves too few.

    A memory that does not belong to this round (say, kept from another game) could
    count cards as played that are still in the other hands; the guesses then fall back
    to what the view shows.
    """
    unseen = unseen_cards(view, memory)
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    hidden = sum(size for s, size in enumerate(view.hand_sizes) if s != seat)
    if memory is not None and len(unseen) < hidden:
        return unseen_cards(view, None)
    return unseen


def _colour(colour: Colour | None) -> int:
    """A colour as the simulator's int."""
    return NONE if colour is None else int(colour)


def bidding_order(view: RageView) -> list[int]:
    """Seats in the order they bid this round: from the dealer's left round the table."""
    n = len(view.players)
    first = (view.players.index(view.dealer) + 1) % n
    return [(first + i) % n for i in range(n)]


# Stack cards that can ever be turned up in a round: each of the 4 Change Trump and 4 No
# Trump cards turns up one colour card, skipping at most the 16 action cards.
TURNED_UP_AT_MOST = 24


class Dealer:
    """Deals guesses of the hidden cards for one decision, consistent with the viewer's view.

    What stays the same between guesses (the voids, the known part of the round) is
    worked out once. A guess draws the other hands by a partial Fisher-Yates shuffle of
    the unseen cards, the most constrained player first so that their voids can be kept
    (a player who did not follow is void in that colour), then the top of the stack in a
    random order; the rest of the stack can never be turned up.
    """

    def __init__(self, view: RageView, memory: RageMemory | None, unseen: Sequence[int]) -> None:
        seat = view.players.index(view.viewer) if view.viewer is not None else 0
        n = len(view.players)
        self.unseen = list(unseen)
        voids = [
            frozenset(int(c) for c in memory.void_colours(view.players[s]))
            if memory is not None
            else frozenset()
            for s in range(n)
        ]
        others = sorted((s for s in range(n) if s != seat), key=lambda s: -len(voids[s]))
        self.deals = [(s, view.hand_sizes[s], voids[s]) for s in others]
        hands: list[list[int]] = [[] for _ in range(n)]
        hands[seat] = [int(c) for c in view.hand]
        self.template = SimRound(
            hands=hands,
            stack=[],
            trump=_colour(view.trump),
            no_trump=view.no_trump_this_trick,
            bids=[NONE if b is None else b for b in view.bids],
            won=list(view.tricks_won),
            bonus=list(view.bonus),
            leader=view.players.index(view.leader),
            turn=seat,
            trick=[int(p.card) for p in view.trick],
            named=[_colour(p.colour) for p in view.trick],
            led=_colour(view.led_colour),
            size=view.cards_per_hand,
            sweep=view.options.sweep,
        )

    def deal(self, rng: random.Random) -> SimRound:
        """One guess at the hidden cards."""
        draw = rng.random
        pool = list(self.unseen)
        end = len(pool)
        pos = 0
        sim = self.template.copy()
        for other, need, void in self.deals:
            hand = sim.hands[other]
            rejected: list[int] = []
            while len(hand) < need and pos < end:
                j = pos + int(draw() * (end - pos))
                card = pool[j]
                if void and card < JOKER and card >> 4 in void:
                    # Set aside for the others: out of this player's draws.
                    end -= 1
                    pool[j] = pool[end]
                    rejected.append(card)
                    continue
                pool[j] = pool[pos]
                pool[pos] = card
                hand.append(card)
                pos += 1
            # A memory that missed a trick can leave too few allowed cards: fill with any.
            while len(hand) < need and rejected:
                hand.append(rejected.pop())
            if end != len(pool):
                # Past ``end`` lie stale copies: the pool is what is left plus the set-aside.
                pool = pool[pos:end] + rejected
                end, pos = len(pool), 0
        top = min(end, pos + TURNED_UP_AT_MOST)
        for i in range(pos, top):
            j = i + int(draw() * (end - i))
            pool[i], pool[j] = pool[j], pool[i]
        sim.stack = pool[pos:]
        return sim


def determinise(
    view: RageView, memory: RageMemory | None, unseen: Sequence[int], rng: random.Random
) -> SimRound:
    """One guess at the hidden cards, consistent with everything the viewer knows."""
    return Dealer(view, memory, unseen).deal(rng)


def _guess_bids(sim: SimRound, view: RageView, seat: int, own: int | None) -> None:
    """Fill in the bids the viewer cannot see with the heuristic's bid on the guessed hand.

    During bidding, players after the viewer bid on their guessed hands (the last one
    kept off the forbidden total under plus/minus one); later in the round, a secret bid
    is guessed from the tricks won so far plus the guessed hand's sure winners.
    """
    if own is not None:
        sim.bids[seat] = own
    order = bidding_order(view)
    if view.phase.value == "bidding":
        plus_minus_one = view.options.plus_minus_one
        for position, other in enumerate(order):
            if sim.bids[other] != NONE:
                continue
            forbidden = -1
            if plus_minus_one and position == len(order) - 1:
                forbidden = sim.size - sum(b for s, b in enumerate(sim.bids) if s != other)
            sim.bids[other] = heuristic_bid(sim.hands[other], sim.trump, sim.size, forbidden)
        return
    for other in order:
        if sim.bids[other] == NONE:
            guess = sim.won[other] + heuristic_bid(sim.hands[other], sim.trump, sim.size, -1)
            sim.bids[other] = min(sim.size, guess)


def round_value(sim: SimRound, seat: int, rivals: Sequence[float]) -> float:
    """The round's worth to ``seat``: its points minus weighted points of the others."""
    value = float(sim.score(seat))
    for other, weight in enumerate(rivals):
        if weight:
            value -= weight * sim.score(other)
    return value


Objective = Callable[[SimRound], float]


# With a value table, what a round point (the rivals' weighed in) adds to the chance to
# win: little, but it keeps the play sensible where the game is as good as decided and
# the chance barely moves (in the middle of a game a point moves it about 0.01-0.02).
POINT_WORTH = 0.002


def objective(view: RageView, weight: float, model: WinModel | None) -> Objective:
    """What an imagined round's end is worth to the viewer.

    With a value table, the chance to win the game from the totals it leaves (see
    ``rage_value``), plus a little for the round's points; without, the round's points
    minus the rivals' (``round_value``).
    """
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    rivals = rival_weights(view, seat, weight)
    if model is None:
        return lambda sim: round_value(sim, seat, rivals)
    totals = list(view.totals)
    left = ROUNDS - view.round
    chance = model.chance
    seats = range(len(totals))

    def win(sim: SimRound) -> float:
        """The chance to win the game once this round is scored, and a little for points."""
        after = [totals[s] + sim.score(s) for s in seats]
        return chance(after, seat, left) + POINT_WORTH * round_value(sim, seat, rivals)

    return win


def rival_weights(view: RageView, seat: int, weight: float) -> list[float]:
    """How much each opponent's round points count against ours: the game leader's most.

    Points to the opponent leading the game matter most, because they decide who wins.
    """
    totals = view.totals
    others = [s for s in range(len(totals)) if s != seat]
    if not others or weight == 0.0:
        return [0.0] * len(totals)
    best = max(totals[s] for s in others)
    weights = [0.0] * len(totals)
    for s in others:
        weights[s] = weight if totals[s] == best else weight / 4
    return weights


def _guesses(candidates: int, plays_left: int, budget: int) -> int:
    """How many guesses fit the budget for this many candidates and remaining plays."""
    work = max(1, candidates * plays_left)
    return max(MIN_GUESSES, min(MAX_GUESSES, budget // work))


def _compare(
    count: int,
    new_guess: Callable[[], SimRound],
    rollout: Callable[[SimRound, int], SimRound],
    value: Objective,
    guesses: int,
    deadline: float | None,
    order: Callable[[int], tuple[float, ...]],
) -> Comparison:
    """Every candidate played out in the same ``guesses`` guesses; the best mean wins.

    The same guesses for every candidate keep their comparison free of the deal's luck.
    A ``deadline`` (perf_counter seconds) ends the search early, but never before every
    candidate has been played in one guess.
    """
    totals = [0.0] * count
    done = 0
    clock = time.perf_counter
    stopped = False
    for _ in range(guesses):
        if done and deadline is not None and clock() >= deadline:
            stopped = True
            break
        base = new_guess()
        for i in range(count):
            totals[i] += value(rollout(base, i))
        done += 1
    means = [total / done for total in totals]
    best = max(range(count), key=lambda i: (means[i], *order(i)))
    return Comparison(best, means, done, stopped)


@dataclass(frozen=True, slots=True)
class Comparison:
    """How a comparison of candidates ended: the winner and every candidate's mean value."""

    best: int  # index of the chosen candidate
    means: list[float]  # mean value per candidate over the guesses
    guesses: int  # guesses played (every candidate in each)
    stopped: bool  # the deadline ended the comparison early


def _bid_rollout(
    view: RageView, seat: int, window: Sequence[int]
) -> Callable[[SimRound, int], SimRound]:
    """Play a guessed round out with the viewer bidding ``window[i]``."""

    def rollout(base: SimRound, i: int) -> SimRound:
        sim = base.copy()
        _guess_bids(sim, view, seat, window[i])
        sim.turn = sim.leader
        sim.play_out()
        return sim

    return rollout


def search_bid(
    view: RageView,
    memory: RageMemory | None,
    rng: random.Random,
    weight: float,
    *,
    budget: int = PLAY_BUDGET,
    deadline: float | None = None,
    model: WinModel | None = None,
) -> Bid:
    """The legal bid with the best average value (see ``objective``) over the guesses."""
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    legal = [a.tricks for a in view.legal_actions if isinstance(a, Bid)]
    hand = [int(c) for c in view.hand]
    centre = int(0.5 + _own_estimate(hand, view))
    window = [b for b in legal if abs(b - centre) <= BID_WINDOW] or legal
    if len(window) == 1:
        return Bid(window[0])
    found = _compare(
        len(window),
        functools.partial(Dealer(view, memory, hidden_pool(view, memory)).deal, rng),
        _bid_rollout(view, seat, window),
        objective(view, weight, model),
        _guesses(len(window), sum(view.hand_sizes), budget),
        deadline,
        lambda i: (-abs(window[i] - centre),),
    )
    return Bid(window[found.best])


@dataclass(frozen=True, slots=True)
class Estimate:
    """What a candidate action is worth to the viewer, averaged over the same guesses."""

    points: float  # the viewer's round points
    win: float  # the chance to win the game afterwards (from the value table)


def _estimates(
    view: RageView,
    count: int,
    new_guess: Callable[[], SimRound],
    rollout: Callable[[SimRound, int], SimRound],
    links: Sequence[int],
    guesses: int,
    model: WinModel,
) -> list[Estimate]:
    """Every candidate played in the same guesses; linked candidates share their estimate."""
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    win = objective(view, 0.0, model)
    points = [0.0] * count
    chances = [0.0] * count
    guesses = max(1, guesses)
    for _ in range(guesses):
        base = new_guess()
        for i in range(count):
            if links[i] == i:
                sim = rollout(base, i)
                points[i] += sim.score(seat)
                chances[i] += win(sim)
    return [Estimate(points[j] / guesses, chances[j] / guesses) for j in links]


def bid_values(
    view: RageView,
    memory: RageMemory | None,
    rng: random.Random,
    guesses: int,
    model: WinModel,
) -> dict[Bid, Estimate]:
    """Every legal bid's mean round points and win chance over the same guesses (reviews)."""
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    legal = [a.tricks for a in view.legal_actions if isinstance(a, Bid)]
    deal = functools.partial(Dealer(view, memory, hidden_pool(view, memory)).deal, rng)
    rollout = _bid_rollout(view, seat, legal)
    found = _estimates(view, len(legal), deal, rollout, range(len(legal)), guesses, model)
    return {Bid(b): found[i] for i, b in enumerate(legal)}


def _own_estimate(hand: list[int], view: RageView) -> float:
    """A rough expected trick count to centre the bids tried on."""
    return sure_winners(hand, _colour(view.trump))


def candidate_plays(view: RageView) -> list[Play]:
    """The legal plays, with a Joker offered only under colours that play differently."""
    plays: list[Play] = []
    jokers: list[Play] = []
    for action in view.legal_actions:
        if isinstance(action, Play):
            (jokers if action.card == JOKER else plays).append(action)
    if jokers:
        useful: set[Colour] = set()
        if view.trump is not None:
            useful.add(view.trump)
        if view.led_colour is not None:
            useful.add(view.led_colour)
        held = [c.colour for c in view.hand if c.colour is not None]
        if held:
            useful.add(max(set(held), key=lambda c: (held.count(c), -int(c))))
        # A colour that can lose: neither trump nor led, one we hold none of if possible.
        losing = [c for c in Colour if c is not view.trump and c is not view.led_colour]
        losing.sort(key=lambda c: (c in held, int(c)))
        useful.add(losing[0])
        plays.extend(p for p in jokers if p.colour in useful)
    return plays


def same_as(plays: Sequence[Play], view: RageView, unseen: Sequence[int]) -> list[int]:
    """For each play, the index of the first play that is certainly worth the same.

    Two cards of one colour are interchangeable when every card of that colour between
    them is in the own hand or gone for the round (played in an earlier trick or turned
    up): nobody else can hold a card that one beats and the other does not. A card on the
    table in this trick does separate them. The copies of an action card are one play.
    """
    between: set[int] = set(unseen)
    between.update(int(p.card) for p in view.trick)
    first: dict[int, int] = {}
    result: list[int] = []
    for i, play in enumerate(plays):
        code = int(play.card)
        if code >= JOKER:
            key = code * 8 + (NONE if play.colour is None else int(play.colour)) + 1
            result.append(first.setdefault(-1 - key, i))
            continue
        match = i
        for j in range(i):
            other = int(plays[j].card)
            if other < JOKER and other >> 4 == code >> 4 and result[j] == j:
                low, high = min(code, other), max(code, other)
                if not any(c in between for c in range(low + 1, high)):
                    match = j
                    break
        result.append(match)
    return result


def _play_rollout(candidates: Sequence[Play]) -> Callable[[SimRound, int], SimRound]:
    """Play ``candidates[i]`` in a guessed round, then the round out."""
    cards = [int(p.card) for p in candidates]
    named = [_colour(p.colour) for p in candidates]

    def rollout(base: SimRound, i: int) -> SimRound:
        sim = base.copy()
        sim.play(cards[i], named[i])
        sim.play_out()
        return sim

    return rollout


def _play_guesses(
    view: RageView, memory: RageMemory | None, unseen: Sequence[int], rng: random.Random
) -> Callable[[], SimRound]:
    """Guesses of the hidden cards with the bids the viewer cannot see filled in."""
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    dealer = Dealer(view, memory, unseen)

    def new_guess() -> SimRound:
        """One guess."""
        base = dealer.deal(rng)
        _guess_bids(base, view, seat, None)
        return base

    return new_guess


def search_play(
    view: RageView,
    memory: RageMemory | None,
    rng: random.Random,
    weight: float,
    *,
    budget: int = PLAY_BUDGET,
    deadline: float | None = None,
    model: WinModel | None = None,
) -> Play:
    """The candidate play with the best average value (see ``objective``) over the guesses."""
    candidates = candidate_plays(view)
    if len(candidates) == 1:
        return candidates[0]
    unseen = hidden_pool(view, memory)
    links = same_as(candidates, view, unseen)
    distinct = [p for i, p in enumerate(candidates) if links[i] == i]
    if len(distinct) == 1:
        return distinct[0]
    found = _compare(
        len(distinct),
        _play_guesses(view, memory, unseen, rng),
        _play_rollout(distinct),
        objective(view, weight, model),
        _guesses(len(distinct), sum(view.hand_sizes), budget),
        deadline,
        lambda i: (-i,),
    )
    return distinct[found.best]


def play_values(
    view: RageView,
    memory: RageMemory | None,
    rng: random.Random,
    guesses: int,
    model: WinModel,
) -> dict[Play, Estimate]:
    """Every legal play's mean round points and win chance over the same guesses (reviews).

    Interchangeable cards (see ``same_as``) share one estimate.
    """
    plays = [a for a in view.legal_actions if isinstance(a, Play)]
    unseen = hidden_pool(view, memory)
    links = same_as(plays, view, unseen)
    new_guess = _play_guesses(view, memory, unseen, rng)
    found = _estimates(view, len(plays), new_guess, _play_rollout(plays), links, guesses, model)
    return dict(zip(plays, found, strict=True))
