"""A strong, independent No Thanks! opponent for the league: information-set MCTS.

Benchmark-only code: it never ships in the bot and imports nothing from ``bot.ai``. It
decides from one player's own ``PlayerView``:

- the determinisations sample only what that player cannot see: which of the unseen cards
  (3..35 minus every taken card and the face-up one) make up the pile, and in what order
  (the nine removed cards are among the unseen). Chips the view hides are counted from
  the public move history, or shared out evenly if that count fails;
- the tree is a single-observer ISMCTS tree: decision nodes hold one edge per action
  (take, pass) with visit, reward and availability counts; a take leads through a chance
  layer keyed by the card that turns up next, so one decision node is one information set
  of the searching player whatever the determinisation;
- selection is UCT with exploration constant 30 over rewards on the point-difference
  scale (the player's margin to the best other player, positive when ahead), which is
  what the issue's external opponent uses;
- playouts are heuristic, not random: a run-aware take threshold that rises as a player
  runs short of chips, with a little noise and some milking of cards that fit a run.

Everything lives in plain lists and bit masks: an iteration copies four short lists and
never touches the engine.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from bot.engines.nothanks import (
    HIGHEST_CARD,
    LOWEST_CARD,
    PASS,
    TAKE,
    Action,
    PlayerView,
    starting_chips,
)

EXPLORATION = 30.0
ALL_CARDS = range(LOWEST_CARD, HIGHEST_CARD + 1)


@dataclass(slots=True)
class Edge:
    """One action out of a decision node, with its UCT statistics."""

    visits: int = 0
    reward: float = 0.0
    avail: int = 0
    # A pass leads to one decision node; a take to one per card that turns up next.
    after_pass: Node | None = None
    after_take: dict[int, Node] = field(default_factory=dict)


@dataclass(slots=True)
class Node:
    """A decision node: the edges are (take, pass)."""

    take: Edge = field(default_factory=Edge)
    pass_: Edge = field(default_factory=Edge)


@dataclass(slots=True)
class Position:
    """The public facts of one decision, from the acting player's view."""

    me: int
    card: int
    chips_on: int
    masks: list[int]
    chips: list[int]
    unseen: list[int]
    pile_size: int


def position_from_view(view: PlayerView) -> Position:
    """What the acting player knows; hidden chips counted from the public history."""
    if view.viewer is None or view.current_card is None or view.active_player != view.viewer:
        raise ValueError("ISMCTS needs the acting player's own view of a game in progress")
    players = view.players
    n = len(players)
    masks = [0] * n
    taken = 0
    for seat, name in enumerate(players):
        for card in view.cards[name]:
            masks[seat] |= 1 << card
            taken |= 1 << card
    unseen = [c for c in ALL_CARDS if not taken >> c & 1 and c != view.current_card]
    start = starting_chips(n)
    counted = [start] * n
    for move in view.history:
        if move.action is PASS:
            counted[move.seat] -= 1
        else:
            counted[move.seat] += move.chips_on_card
    shown = [view.chips[name] for name in players]
    consistent = sum(counted) + view.chips_on_card == n * start and all(
        s is None or s == c for s, c in zip(shown, counted, strict=True)
    )
    if consistent:
        chips = counted
    else:
        hidden = [seat for seat, s in enumerate(shown) if s is None]
        rest = n * start - view.chips_on_card - sum(s for s in shown if s is not None)
        chips = [s if s is not None else 0 for s in shown]
        for i, seat in enumerate(hidden):
            chips[seat] = max(0, rest // len(hidden) + (1 if i < rest % len(hidden) else 0))
    return Position(
        me=players.index(view.viewer),
        card=view.current_card,
        chips_on=view.chips_on_card,
        masks=masks,
        chips=chips,
        unseen=unseen,
        pile_size=view.cards_left,
    )


def _cost(mask: int, card: int) -> int:
    """Change in card points if a player with ``mask`` takes ``card``."""
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


def _heuristic_takes(mask: int, mine: int, card: int, on: int, pile_left: int, rnd: float) -> bool:
    """The playout policy: a run-aware threshold, higher when short of chips."""
    if mine == 0:
        return True
    cost = _cost(mask, card)
    if cost <= 0:
        # A card that fits a run: let it go round once or twice for chips, then take it.
        return on >= 2 or mine <= 2 or rnd < 0.45
    limit = 2 + (7 - mine) * 2 if mine < 7 else 2
    # Early cards are cheaper to refuse (more chips will come); noise keeps playouts varied.
    limit += int(rnd * 6) - 2 - (pile_left >> 3)
    return cost - on <= limit


def _playout(
    masks: list[int],
    chips: list[int],
    pile: list[int],
    card: int,
    on: int,
    active: int,
    rng: random.Random,
) -> None:
    """Play to the end with the heuristic policy (the lists are changed in place).

    The policy is ``_heuristic_takes``, inlined: playouts are most of the search's time.
    """
    n = len(masks)
    rand = rng.random
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
                limit = 2 + (7 - mine) * 2 if mine < 7 else 2
                take = cost - on <= limit + int(rand() * 6) - 2 - (left >> 3)
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


def _rewards(masks: list[int], chips: list[int]) -> list[float]:
    """Each seat's margin to the best other seat (positive: ahead)."""
    scores = [_points(m) - c for m, c in zip(masks, chips, strict=True)]
    ordered = sorted(scores)
    best, second = ordered[0], ordered[1]
    return [float((second if s == best else best) - s) for s in scores]


def search(position: Position, iterations: int, rng: random.Random) -> Action:
    """Run ``iterations`` ISMCTS iterations and return the most visited root action."""
    if position.chips[position.me] == 0:
        return TAKE
    n = len(position.masks)
    root = Node()
    unseen = list(position.unseen)
    log = math.log
    sqrt = math.sqrt
    for _ in range(iterations):
        rng.shuffle(unseen)
        pile = unseen[: position.pile_size]
        masks = list(position.masks)
        chips = list(position.chips)
        card, on, active = position.card, position.chips_on, position.me
        node: Node | None = root
        # (edge, seat that chose it) along the path.
        path: list[tuple[Edge, int]] = []
        over = False
        while node is not None:
            take, pass_ = node.take, node.pass_
            take.avail += 1
            can_pass = chips[active] > 0
            if can_pass:
                pass_.avail += 1
            if take.visits == 0:
                edge, chosen = take, TAKE
            elif can_pass and pass_.visits == 0:
                edge, chosen = pass_, PASS
            elif not can_pass:
                edge, chosen = take, TAKE
            else:
                t = take.reward / take.visits + EXPLORATION * sqrt(log(take.avail) / take.visits)
                p = pass_.reward / pass_.visits + EXPLORATION * sqrt(
                    log(pass_.avail) / pass_.visits
                )
                edge, chosen = (take, TAKE) if t >= p else (pass_, PASS)
            expanding = edge.visits == 0
            path.append((edge, active))
            if chosen is TAKE:
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
                active = (active + 1) % n
                nxt = edge.after_pass
                if nxt is None and not expanding:
                    nxt = edge.after_pass = Node()
                    expanding = True
            if expanding:
                break
            node = nxt
        if not over:
            _playout(masks, chips, pile, card, on, active, rng)
        rewards = _rewards(masks, chips)
        for edge, seat in path:
            edge.visits += 1
            edge.reward += rewards[seat]
    return TAKE if root.take.visits >= root.pass_.visits else PASS


def ismcts_action(view: PlayerView, iterations: int, rng: random.Random) -> Action:
    """The ISMCTS player's action for the acting player's own view."""
    return search(position_from_view(view), iterations, rng)
