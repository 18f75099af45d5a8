"""A frozen copy of the No Thanks! computer players as they were before issue 16.

Freezes bot/ai/nothanks.py at commit e61a8b7b7feff9baa7a13d9df65d26ce93116339: copied from
there by 7dc66bc, which replaced the live code with the ISMCTS search (the code was last
changed by 7f1730e and stayed so on main until the merge c4e3bd4). From its imports on,
the file is that commit's line for line; this prints nothing:

    git show e61a8b7:bot/ai/nothanks.py | sed -n '/^from __future__/,$p' > /tmp/then
    sed -n '/^from __future__/,$p' benchmarks/strength/frozen/nothanks_legacy.py | diff /tmp/then -

Kept so the league can still measure "before" after bot/ai changes. Do not edit.

Original docstring: heuristics and a Monte-Carlo search on the player's view.

Everything is decided from ``NoThanksGame.view(player)`` alone. What a fair player at the
table knows is derived from it: the unseen cards (3..35 minus every taken card minus the
face-up card), which of them may still come (any ``cards_left`` of them; the other nine
are out of the game), and, with private chips, the other players' chips, which anyone
who counts the public passes and takes can work out from the move history.
"""

from __future__ import annotations

import bisect
import random
import time
from dataclasses import dataclass

from bot.ai.levels import Level
from bot.engines.nothanks import (
    HIGHEST_CARD,
    LOWEST_CARD,
    PASS,
    TAKE,
    Action,
    PlayerView,
    starting_chips,
)

ALL_CARDS = range(LOWEST_CARD, HIGHEST_CARD + 1)

# Normal heuristic: take when the card's run-aware cost minus the chips on it is at most
# BASE_THRESHOLD, plus LOW_CHIP_BONUS per chip below LOW_CHIPS (a player short of chips
# cannot afford to keep passing, so a chip is worth more than a point to them).
BASE_THRESHOLD = 3
LOW_CHIPS = 6
LOW_CHIP_BONUS = 2
# Let a card that fits a run go round again when nobody else wants it yet ("milking"),
# but only while it would still cost every other player at least this much more than
# their own threshold once the extra chips are on it.
MILK_SAFETY = 4

# Hard search: paired rollouts (take and pass on the same sampled pile) in batches, with
# a stop as soon as the mean difference is this many standard errors away from zero.
MIN_PAIRS = 24
BATCH = 6
MAX_PAIRS = 600
STOP_Z = 3.0
BUDGET_SHARE = 0.9
# Our own moves in the rollouts milk cards that fit our runs, like the normal heuristic.
ROLLOUT_MILKS = True
# Weight of the score margin next to the win share in a rollout's value. It makes the
# rollouts far less noisy than win/lose alone, and it keeps the search purposeful when
# the game is already clearly won or lost (win share alone would be flat there).
MARGIN_WEIGHT = 0.02
# Opponent model fit: candidate values and the pull towards the prior below.
FIT_BASES = range(-3, 21)
FIT_BONUSES = (0, 1, 2, 3)
FIT_PRIOR = 0.05
# The prior is a tight player: every voluntary take is evidence against it and pushes the
# fit up, while a looser prior would need rare near-threshold passes to be corrected.
PRIOR_BASE = 0
PRIOR_BONUS = 0


@dataclass(slots=True)
class Table:
    """The public facts of a No Thanks! position from one player's view, by seat."""

    n: int
    me: int
    card: int
    chips_on: int
    pile_size: int
    masks: list[int]  # bit c set: the seat holds card c
    chips: list[int | None]  # None: hidden and not derivable from the history
    unseen: list[int]  # cards neither taken nor face up: the pile plus the removed ones
    hidden_total: int  # chips held by the seats whose count is None

    @property
    def my_chips(self) -> int:
        """The deciding player's own chips (always visible to them)."""
        chips = self.chips[self.me]
        assert chips is not None
        return chips


def table_from_view(view: PlayerView) -> Table:
    """Derive the decision's public facts from the acting player's own view."""
    if view.viewer is None or view.is_over or view.current_card is None:
        raise ValueError("a computer player needs its own view of a game in progress")
    if view.active_player != view.viewer:
        raise ValueError(f"it is not {view.viewer}'s turn")
    players = view.players
    n = len(players)
    me = players.index(view.viewer)
    masks = [0] * n
    taken: set[int] = set()
    for seat, name in enumerate(players):
        for card in view.cards[name]:
            masks[seat] |= 1 << card
            taken.add(card)
    unseen = [c for c in ALL_CARDS if c not in taken and c != view.current_card]
    chips: list[int | None] = [view.chips[name] for name in players]
    start = starting_chips(n)
    total = n * start
    if None in chips:
        counted = _chips_from_history(view, n, start)
        # Trust the count only if it agrees with everything the view shows.
        if counted is not None and all(
            known is None or known == c for known, c in zip(chips, counted, strict=True)
        ):
            chips = list(counted)
    hidden_total = total - view.chips_on_card - sum(c for c in chips if c is not None)
    return Table(
        n=n,
        me=me,
        card=view.current_card,
        chips_on=view.chips_on_card,
        pile_size=view.cards_left,
        masks=masks,
        chips=chips,
        unseen=unseen,
        hidden_total=max(0, hidden_total),
    )


def _chips_from_history(view: PlayerView, n: int, start: int) -> list[int] | None:
    """Everyone's chips counted from the public moves, or None if the history is incomplete."""
    chips = [start] * n
    for move in view.history:
        if move.action is PASS:
            chips[move.seat] -= 1
        else:
            chips[move.seat] += move.chips_on_card
    if min(chips) < 0 or sum(chips) + view.chips_on_card != n * start:
        return None
    return chips


def model_thresholds(view: PlayerView, n: int, start: int) -> list[tuple[int, int]]:
    """Fit each seat's take threshold (base, low-chip bonus) to its public decisions so far.

    The model: a seat takes when cost minus chips on the card is at most
    ``base + bonus * max(0, LOW_CHIPS - chips)``. Each voluntary take or pass in the
    history is one observation; the fit minimises the decisions it gets wrong, with a
    slight pull towards the normal heuristic's values so that little evidence changes little.
    """
    observations: list[list[tuple[int, int, bool]]] = [[] for _ in range(n)]
    masks = [0] * n
    chips = [start] * n
    for move in view.history:
        seat, card = move.seat, move.card
        if chips[seat] > 0:
            net = card_cost(masks[seat], card) - move.chips_on_card
            observations[seat].append((net, chips[seat], move.action is TAKE))
        if move.action is PASS:
            chips[seat] -= 1
        else:
            chips[seat] += move.chips_on_card
            masks[seat] |= 1 << card
    return [_fit_threshold(seen) for seen in observations]


def _fit_threshold(observations: list[tuple[int, int, bool]]) -> tuple[int, int]:
    """The (base, bonus) that explains the most of one seat's observed decisions."""
    if not observations:
        return PRIOR_BASE, PRIOR_BONUS
    best = (PRIOR_BASE, PRIOR_BONUS)
    best_cost = float("inf")
    for bonus in FIT_BONUSES:
        takes: list[int] = []
        passes: list[int] = []
        for net, chips, took in observations:
            adjusted = net - bonus * max(0, LOW_CHIPS - chips)
            (takes if took else passes).append(adjusted)
        takes.sort()
        passes.sort()
        for base in FIT_BASES:
            # Wrong calls: takes above the threshold, passes at or below it.
            wrong = len(takes) - bisect.bisect_right(takes, base)
            wrong += bisect.bisect_right(passes, base)
            cost = wrong + FIT_PRIOR * (abs(base - PRIOR_BASE) + abs(bonus - PRIOR_BONUS))
            if cost < best_cost:
                best, best_cost = (base, bonus), cost
    return best


def card_cost(mask: int, card: int) -> int:
    """How much a player's card points change if they take ``card`` (runs count lowest only)."""
    below = mask >> (card - 1) & 1
    above = mask >> (card + 1) & 1
    if below:
        # Extending a run upwards is free; closing a gap drops the upper run's low card.
        return -(card + 1) if above else 0
    # Extending a run downwards swaps its low card for one lower.
    return -1 if above else card


def mask_points(mask: int) -> int:
    """Card points of a bit set of cards: the lowest card of every run."""
    starts = mask & ~(mask << 1)
    total = 0
    while starts:
        low = starts & -starts
        total += low.bit_length() - 1
        starts ^= low
    return total


def threshold(chips: int) -> int:
    """The net cost (cost minus chips on the card) a normal player accepts with ``chips``."""
    return BASE_THRESHOLD + LOW_CHIP_BONUS * max(0, LOW_CHIPS - chips)


def normal_takes(
    masks: list[int],
    chips: list[int],
    seat: int,
    card: int,
    chips_on: int,
) -> bool:
    """The run-aware threshold heuristic: whether ``seat`` takes ``card`` now."""
    mine = chips[seat]
    if mine == 0:
        return True
    cost = card_cost(masks[seat], card)
    if cost - chips_on > threshold(mine):
        return False
    if cost <= 0 and mine >= 2:
        normal = [(BASE_THRESHOLD, LOW_CHIP_BONUS)] * len(masks)
        return not milk_is_safe(masks, chips, normal, seat, card, chips_on)
    return True


def milk_is_safe(
    masks: list[int],
    chips: list[int],
    limits: list[tuple[int, int]],
    seat: int,
    card: int,
    chips_on: int,
) -> bool:
    """Whether a card that helps ``seat`` can go round once more without anyone taking it.

    It costs the others its face value (unless it fits their runs), so with one more
    chip from each of them it must stay well above every other player's threshold.
    """
    n = len(masks)
    for step in range(1, n):
        other = (seat + step) % n
        theirs = chips[other]
        if theirs == 0:
            return False
        base, bonus = limits[other]
        limit = base + (bonus * (LOW_CHIPS - theirs) if theirs < LOW_CHIPS else 0)
        if card_cost(masks[other], card) - (chips_on + step) < limit + MILK_SAFETY:
            return False
    return True


def baseline_takes(mask: int, chips: int, card: int, chips_on: int) -> bool:
    """The benchmark's baseline: take when run-aware cost minus chips is <= 0, or when broke."""
    return chips == 0 or card_cost(mask, card) - chips_on <= 0


def baseline_action(view: PlayerView) -> Action:
    """The baseline threshold player's action for this view."""
    table = table_from_view(view)
    mask = table.masks[table.me]
    return TAKE if baseline_takes(mask, table.my_chips, table.card, table.chips_on) else PASS


def _estimated_chips(table: Table, rng: random.Random | None) -> list[int]:
    """Everyone's chips: the known counts, hidden ones shared out (randomly if rng is given)."""
    hidden = table.chips.count(None)
    if not hidden:
        return [c for c in table.chips if c is not None]
    share, extra = divmod(table.hidden_total, hidden)
    counts = [share] * hidden
    for i in range(extra):
        counts[i] += 1
    if rng is not None:
        # A plausible spread around the even share: move chips one at a time.
        for _ in range(table.hidden_total // 2):
            a, b = rng.randrange(hidden), rng.randrange(hidden)
            if counts[a] > 0:
                counts[a] -= 1
                counts[b] += 1
    # The estimates fill the hidden seats in seat order.
    estimates = iter(counts)
    return [next(estimates) if c is None else c for c in table.chips]


def _normal(table: Table) -> Action:
    """The normal level's choice."""
    chips = _estimated_chips(table, None)
    takes = normal_takes(table.masks, chips, table.me, table.card, table.chips_on)
    return TAKE if takes else PASS


def _easy(table: Table, rng: random.Random) -> Action:
    """The easy level: a noisy threshold that sometimes forgets about runs."""
    mine = table.my_chips
    if mine == 0:
        return TAKE
    if rng.random() < 0.05:
        return rng.choice((TAKE, PASS))
    cost = table.card
    if rng.random() < 0.7:
        cost = card_cost(table.masks[table.me], table.card)
    limit = BASE_THRESHOLD + max(0, 4 - mine) * 3 + rng.gauss(0.0, 4.0)
    return TAKE if cost - table.chips_on <= limit else PASS


def _rollout(
    masks: list[int],
    chips: list[int],
    pile: list[int],
    card: int,
    chips_on: int,
    active: int,
    me: int,
    limits: list[tuple[int, int]],
) -> float:
    """Play to the end with each seat's modelled threshold; the value of the end for ``me``.

    The lists are consumed (the caller passes copies). Value: 1 for a sole win, 1/k for a
    k-way tie for first, 0 otherwise, plus a small score-margin term.
    """
    n = len(masks)
    while True:
        mask = masks[active]
        mine = chips[active]
        if mine == 0:
            take = True
        else:
            # The threshold rule inlined, because rollouts must be fast.
            below = mask >> (card - 1) & 1
            above = mask >> (card + 1) & 1
            cost = (-(card + 1) if above else 0) if below else -1 if above else card
            base, bonus = limits[active]
            limit = base + (bonus * (LOW_CHIPS - mine) if mine < LOW_CHIPS else 0)
            take = cost - chips_on <= limit
            if take and ROLLOUT_MILKS and active == me and cost <= 0 and mine >= 2:
                # We milk cards that fit our runs, as the normal heuristic does; the
                # others are modelled by their thresholds alone.
                take = not milk_is_safe(masks, chips, limits, me, card, chips_on)
        if take:
            masks[active] = mask | 1 << card
            chips[active] = mine + chips_on
            chips_on = 0
            if not pile:
                break
            card = pile.pop()
        else:
            chips[active] = mine - 1
            chips_on += 1
            active = active + 1 if active + 1 < n else 0
    return _final_value(masks, chips, me)


def _hard(
    table: Table, limits: list[tuple[int, int]], rng: random.Random, deadline: float
) -> Action:
    """Monte-Carlo search: paired take/pass rollouts on piles sampled from the unseen cards."""
    me, n, card, chips_on = table.me, table.n, table.card, table.chips_on
    unseen = list(table.unseen)
    pile_size = table.pile_size
    total = total_sq = 0.0
    pairs = 0
    while pairs < MAX_PAIRS:
        rng.shuffle(unseen)
        pile = unseen[:pile_size]
        chips = _estimated_chips(table, rng)
        # Take: the chips come to us, the next card turns up and we act again.
        masks_t = list(table.masks)
        masks_t[me] |= 1 << card
        chips_t = list(chips)
        chips_t[me] += chips_on
        if pile:
            pile_t = list(pile)
            next_card = pile_t.pop()
            take_value = _rollout(masks_t, chips_t, pile_t, next_card, 0, me, me, limits)
        else:
            take_value = _final_value(masks_t, chips_t, me)
        # Pass: one chip onto the card, the next seat decides.
        chips_p = list(chips)
        chips_p[me] -= 1
        pass_value = _rollout(
            list(table.masks), chips_p, list(pile), card, chips_on + 1, (me + 1) % n, me, limits
        )
        diff = take_value - pass_value
        total += diff
        total_sq += diff * diff
        pairs += 1
        if time.perf_counter() >= deadline:
            break
        if pairs >= MIN_PAIRS and pairs % BATCH == 0:
            mean = total / pairs
            variance = max(0.0, total_sq / pairs - mean * mean)
            if mean * mean * pairs > STOP_Z * STOP_Z * variance:
                break
    if total == 0:
        return _normal(table)
    return TAKE if total > 0 else PASS


def _final_value(masks: list[int], chips: list[int], me: int) -> float:
    """Win share plus the score-margin term for a finished game."""
    scores = [mask_points(m) - c for m, c in zip(masks, chips, strict=True)]
    mine = scores[me]
    others = [s for seat, s in enumerate(scores) if seat != me]
    best_other = min(others)
    margin = best_other - mine
    if margin > 0:
        value = 1.0
    elif margin < 0:
        value = 0.0
    else:
        value = 1.0 / (1 + others.count(mine))
    return value + MARGIN_WEIGHT * margin


def choose_nothanks_action(
    view: PlayerView,
    level: Level | str,
    rng: random.Random,
    *,
    time_budget: float = 0.25,
) -> Action:
    """The computer's action for the acting player's own view (always a legal one).

    ``time_budget`` (seconds) caps the hard level's search; the search is deterministic
    for a given ``rng`` state unless the budget is what stops it.
    """
    # The budget covers the whole call; a slice is kept for the work after the search.
    deadline = time.perf_counter() + time_budget * BUDGET_SHARE
    table = table_from_view(view)
    if table.my_chips == 0:
        return TAKE
    level = Level(level)
    if level is Level.EASY:
        return _easy(table, rng)
    if level is Level.NORMAL:
        return _normal(table)
    # Others play as their public decisions so far suggest; we play the normal heuristic.
    limits = model_thresholds(view, table.n, starting_chips(table.n))
    limits[table.me] = (BASE_THRESHOLD, LOW_CHIP_BONUS)
    return _hard(table, limits, rng, deadline)
