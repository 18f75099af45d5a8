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
player aiming at that bid, and the bid with the best average round score is chosen.
The number of guesses scales with the work a guess costs (a fixed budget of imagined
card plays), so decisions are deterministic for a seed and stay fast in the long rounds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from bot.ai.rage_memory import RageMemory
from bot.ai.rage_sim import JOKER, NONE, SimRound, heuristic_bid, sure_winners
from bot.engines.rage import DECK, Bid, Colour, Play, RageView

_DECK_COUNTS: dict[int, int] = {}
for _card in DECK:
    _DECK_COUNTS[int(_card)] = _DECK_COUNTS.get(int(_card), 0) + 1

# Imagined card plays per decision; guesses = budget / (candidates x plays left).
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


def determinise(
    view: RageView, memory: RageMemory | None, unseen: Sequence[int], rng: random.Random
) -> SimRound:
    """One guess at the hidden cards, consistent with everything the viewer knows."""
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    n = len(view.players)
    # Sorting by random keys is a uniform shuffle, and cheaper than random.shuffle.
    draw = rng.random
    pool = sorted(unseen, key=lambda _: draw())
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[seat] = [int(c) for c in view.hand]
    voids = {
        s: {int(c) for c in memory.void_colours(view.players[s])} if memory is not None else set()
        for s in range(n)
    }
    # The most constrained players are dealt first, so their voids can be kept.
    others = sorted((s for s in range(n) if s != seat), key=lambda s: -len(voids[s]))
    for other in others:
        need = view.hand_sizes[other]
        void = voids[other]
        if not void:
            hands[other] = pool[:need]
            pool = pool[need:]
            continue
        taken: list[int] = []
        rest: list[int] = []
        for card in pool:
            if len(taken) < need and (card >= JOKER or card >> 4 not in void):
                taken.append(card)
            else:
                rest.append(card)
        # A memory that missed a trick can leave too few allowed cards: fill with any.
        while len(taken) < need and rest:
            taken.append(rest.pop())
        hands[other] = taken
        pool = rest
    bids = [NONE if b is None else b for b in view.bids]
    leader = view.players.index(view.leader)
    trick = [int(p.card) for p in view.trick]
    named = [_colour(p.colour) for p in view.trick]
    sim = SimRound(
        hands=hands,
        stack=pool,
        trump=_colour(view.trump),
        no_trump=view.no_trump_this_trick,
        bids=bids,
        won=list(view.tricks_won),
        bonus=list(view.bonus),
        leader=leader,
        turn=seat,
        trick=trick,
        named=named,
        led=_colour(view.led_colour),
        size=view.cards_per_hand,
        sweep=view.options.sweep,
    )
    return sim


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


def _guesses(candidates: int, plays_left: int) -> int:
    """How many guesses fit the budget for this many candidates and remaining plays."""
    work = max(1, candidates * plays_left)
    return max(MIN_GUESSES, min(MAX_GUESSES, PLAY_BUDGET // work))


def search_bid(
    view: RageView,
    memory: RageMemory | None,
    rng: random.Random,
    weight: float,
) -> Bid:
    """The legal bid with the best average round value over the guesses."""
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    legal = [a.tricks for a in view.legal_actions if isinstance(a, Bid)]
    hand = [int(c) for c in view.hand]
    centre = int(0.5 + _own_estimate(hand, view))
    window = [b for b in legal if abs(b - centre) <= BID_WINDOW] or legal
    if len(window) == 1:
        return Bid(window[0])
    unseen = hidden_pool(view, memory)
    plays_left = sum(view.hand_sizes)
    rivals = rival_weights(view, seat, weight)
    totals = dict.fromkeys(window, 0.0)
    for _ in range(_guesses(len(window), plays_left)):
        base = determinise(view, memory, unseen, rng)
        for bid in window:
            sim = base.copy()
            _guess_bids(sim, view, seat, bid)
            sim.turn = sim.leader
            sim.play_out()
            totals[bid] += round_value(sim, seat, rivals)
    return Bid(max(window, key=lambda b: (totals[b], -abs(b - centre))))


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


def search_play(
    view: RageView,
    memory: RageMemory | None,
    rng: random.Random,
    weight: float,
) -> Play:
    """The candidate play with the best average round value over the guesses."""
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    candidates = candidate_plays(view)
    if len(candidates) == 1:
        return candidates[0]
    unseen = hidden_pool(view, memory)
    plays_left = sum(view.hand_sizes)
    rivals = rival_weights(view, seat, weight)
    totals = [0.0] * len(candidates)
    for _ in range(_guesses(len(candidates), plays_left)):
        base = determinise(view, memory, unseen, rng)
        _guess_bids(base, view, seat, None)
        for i, play in enumerate(candidates):
            sim = base.copy()
            sim.play(int(play.card), _colour(play.colour))
            sim.play_out()
            totals[i] += round_value(sim, seat, rivals)
    best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
    return candidates[best]
