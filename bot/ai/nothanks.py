"""Computer players for No Thanks!: heuristics and a Monte-Carlo search on the player's view.

Everything is decided from ``NoThanksGame.view(player)`` alone. What a fair player at the
table knows is derived from it: the unseen cards (3..35 minus every taken card minus the
face-up card), which of them may still come (any ``cards_left`` of them; the other nine
are out of the game), and, with private chips, the other players' chips, which anyone
who counts the public passes and takes can work out from the move history.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from bot.ai.levels import Level
from bot.ai.nothanks_search import Decision, SearchResult, fit_looseness, search
from bot.engines.nothanks import (
    HIGHEST_CARD,
    LOWEST_CARD,
    PASS,
    PILE_SIZE,
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
# Easy: the share of runs it notices, the "cheap" cards it grabs and how often, how
# short of chips it must be before it starts to worry (and how much), and its noise.
EASY_SEES_RUNS = 0.6
EASY_CHEAP_CARD = 12
EASY_GRABS_CHEAP = 0.4
EASY_PANIC_CHIPS = 2
EASY_PANIC_BONUS = 8
EASY_NOISE = 3.0

# Hard and expert: information-set MCTS (bot.ai.nothanks_search) that plays each imagined
# game to the end and compares taking with passing on the same deals. The work budgets
# cap the cards the playouts turn up (a playout turns up every card still to come), so a
# decision costs about the same CPU early and late in a game; the iteration caps bound
# the late game, when playouts are short. Both make a decision deterministic for its
# seed. They are sized by CPU time on one quiet core: hard about 37 ms a decision at p95
# (target 40 ms), expert about 210-250 ms (target 250 ms). The clock budgets are caps several
# times larger, so a loaded host still finishes most searches.
HARD_WORK = 9_000
HARD_ITERATIONS = 4000
HARD_BUDGET = 0.25
EXPERT_WORK = 55_000
EXPERT_ITERATIONS = 16_000
EXPERT_BUDGET = 1.0

# The share of the time budget the search may use; the rest covers the work around it.
BUDGET_SHARE = 0.9


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
    """The easy level: a newcomer's habits, not random clicks.

    It grabs low cards too eagerly, notices only most of the runs it could extend, never
    lets a card go round for more chips, and watches its chips only once they are nearly
    gone. It never refuses a card that pays more chips than it costs.
    """
    mine = table.my_chips
    if mine == 0:
        return TAKE
    sees_run = rng.random() < EASY_SEES_RUNS
    cost = card_cost(table.masks[table.me], table.card) if sees_run else table.card
    net = cost - table.chips_on
    if net <= 0:
        return TAKE
    if table.card <= EASY_CHEAP_CARD and rng.random() < EASY_GRABS_CHEAP:
        # "Only an 8, that hardly hurts": taken without waiting for chips.
        return TAKE
    panic = EASY_PANIC_BONUS if mine <= EASY_PANIC_CHIPS else 0
    limit = max(0.0, BASE_THRESHOLD + panic + rng.gauss(0.0, EASY_NOISE))
    return TAKE if net <= limit else PASS


def choose_nothanks_action(
    view: PlayerView,
    level: Level | str,
    rng: random.Random,
    *,
    time_budget: float | None = None,
    iterations: int | None = None,
) -> Action:
    """The computer's action for the acting player's own view (always a legal one).

    ``time_budget`` (seconds; default 0.25 for hard, 1.0 for expert) caps the search, and
    ``iterations`` replaces the level's iteration cap (the league uses it). The search is
    deterministic for a given ``rng`` state unless the budget is what stops it.
    """
    level = Level(level)
    # The budget covers the whole call; a slice is kept for the work after the search.
    started = time.perf_counter()
    table = table_from_view(view)
    if table.my_chips == 0:
        return TAKE
    if level is Level.EASY:
        return _easy(table, rng)
    if level is Level.NORMAL:
        return _normal(table)
    result = search_view(
        view, level, rng, time_budget=time_budget, iterations=iterations, started=started
    )
    return TAKE if result.take else PASS


def search_view(
    view: PlayerView,
    level: Level | str,
    rng: random.Random,
    *,
    time_budget: float | None = None,
    iterations: int | None = None,
    started: float | None = None,
) -> SearchResult:
    """The hard or expert search from the acting player's own view, with its root values.

    The same search as ``choose_nothanks_action`` (same defaults, same random draws), for
    callers that want the values of both actions or how many iterations the clock allowed.
    """
    level = Level(level)
    expert = level is Level.EXPERT
    if time_budget is None:
        time_budget = EXPERT_BUDGET if expert else HARD_BUDGET
    work: int | None = EXPERT_WORK if expert else HARD_WORK
    if iterations is None:
        iterations = EXPERT_ITERATIONS if expert else HARD_ITERATIONS
    else:
        # An explicit cap (the league's hard@N, a review's) counts deals, not work.
        work = None
    if started is None:
        started = time.perf_counter()
    deadline = started + time_budget * BUDGET_SHARE
    table = table_from_view(view)
    if table.my_chips == 0:
        # The only legal action; nothing to search.
        return SearchResult(take=True, iterations=0, take_visits=0, pass_visits=0)
    return search(
        search_decision(view, table), rng, iterations=iterations, deadline=deadline, work=work
    )


def search_decision(view: PlayerView, table: Table) -> Decision:
    """The search's input: the public facts, counted chips and each seat's fitted looseness."""
    chips = _estimated_chips(table, None)
    observations = seat_observations(view, table.n, starting_chips(table.n))
    looseness = tuple(
        0 if seat == table.me else fit_looseness(seen) for seat, seen in enumerate(observations)
    )
    return Decision(
        me=table.me,
        card=table.card,
        chips_on=table.chips_on,
        masks=tuple(table.masks),
        chips=tuple(chips),
        unseen=tuple(table.unseen),
        pile_size=table.pile_size,
        looseness=looseness,
    )


def seat_observations(
    view: PlayerView, n: int, start: int
) -> list[list[tuple[int, int, int, int, int, bool]]]:
    """Each seat's voluntary decisions on cards that did not fit its runs, from the history.

    One observation: (cards as a mask, chips, card, chips on it, cards left in the pile,
    took). Cards that fit a run are left out: there the policy milks rather than thresholds.
    """
    observations: list[list[tuple[int, int, int, int, int, bool]]] = [[] for _ in range(n)]
    masks = [0] * n
    chips = [start] * n
    # The pile held 23 cards when the first card was turned up; each take turns up one.
    pile_left = PILE_SIZE - 1
    for move in view.history:
        seat, card = move.seat, move.card
        mine = chips[seat]
        if mine > 0 and card_cost(masks[seat], card) > 0:
            took = move.action is TAKE
            observations[seat].append(
                (masks[seat], mine, card, move.chips_on_card, pile_left, took)
            )
        if move.action is PASS:
            chips[seat] = mine - 1
        else:
            chips[seat] = mine + move.chips_on_card
            masks[seat] |= 1 << card
            pile_left -= 1
    return observations


def seat_choice(view: PlayerView, level: str, rng: random.Random, memory: object = None) -> Action:
    """The table's entry point: a computer's take-or-pass from the seat's own view.

    It lives here, not in the cog, so a thinking worker imports only the AI (no discord.py);
    No Thanks! computers keep no memory between moves, so ``memory`` is unused.
    """
    return choose_nothanks_action(view, level, rng)
