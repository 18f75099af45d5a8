"""Computer players for Rage: bid from hand strength, then play towards the bid.

Easy and normal use the card-by-card estimate below; hard looks ahead instead: it plays
the round out over many guesses of the hidden cards (``rage_search``, ``rage_sim``),
remembering the round's cards and who is out of which colour (``rage_memory``).

Everything is decided from ``RageState.view(player)`` alone: the own hand, the trick on
the table, the last finished trick, the cards turned up from the stack, the bids the
player may see and the public counters. Cards nobody has shown are "unseen"; each other
player's hand is treated as a random draw from them.

The core is one estimate, ``card_strength``: the chance that a card in hand wins a trick
later in the round. Bidding picks the bid the trick count most likely hits; a play is
chosen by its expected round score: the chance of winning this trick with it, the
strength left in hand afterwards, the resulting chance of hitting the bid exactly, and
the "+5"/"-5" cards in the trick.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bot.ai.levels import Level
from bot.ai.rage_memory import RageMemory
from bot.ai.rage_search import search_bid, search_play
from bot.engines.rage import (
    COLOURS,
    DECK,
    JOKER,
    MINUS_FIVE,
    PLUS_FIVE,
    ROUNDS,
    Bid,
    Card,
    Colour,
    Phase,
    Play,
    RageView,
    resolve_trick,
)

# Points of a round (see RULES.md): hitting the bid is worth 15 more than missing it.
HIT_POINTS = 10
MISS_POINTS = -5

# A Joker can name the trump colour and then only the other Joker beats it; measured, it
# wins about this often (it is sometimes spent to lose, or beaten by a Change Trump).
JOKER_STRENGTH = 0.8
# Change Trump and No Trump cards (about three in a 4-player round of ten) often take a
# trump's power away before it is played: measured in play, trumps win about this share of
# what the card-by-card count promises.
TRUMP_STABILITY = 0.8
# Opponents do not always spend a higher card on a trick: how often they do, for a future
# trick and for the trick on the table. (Judging this from their bids measured no better.)
FUTURE_BEAT = 0.7
TABLE_BEAT = 0.7
# A non-trump card wins only when its colour is led while we hold it: each trick we lead
# (about one in n) or someone else leads it (about one colour in six) is a chance.
COLOUR_COUNT = 6
# A Joker held by an unseen opponent is only sometimes free to be played on our card.
JOKER_THREAT = 0.5
# A trump also wins by cutting a colour we are void in: the chance of such an opening
# per trick of the round, capped.
RUFF_PER_TRICK = 0.03
RUFF_CAP = 0.35
# Measured: even low off-trump cards win some tricks in long rounds.
LATE_WIN = 0.05
# Bidding: how much the neighbouring trick counts count, because play can steer a little.
NEIGHBOUR_WEIGHT = 0.25
# Hard: how much the game leader's round points count against our own (see rage_search),
# where it scores rounds by points rather than by the value table's chance to win.
RIVAL_WEIGHT = 0.1
# Hard's clock, a cap only (wall seconds): a search takes about 5 ms of CPU at p50 and 12
# at p95, so the cap bites only when a loaded host keeps a decision waiting for the CPU
# this long; even then every candidate has been played out in at least one guess.
HARD_TIME_BUDGET = 0.1


@dataclass(frozen=True, slots=True)
class Style:
    """How a level plays: noise, mistakes and how much it watches the other players."""

    bid_noise: float  # standard deviation added to the expected trick count when bidding
    blunder: float  # chance of a random legal play
    relative: float  # weight of the "+5"/"-5" points given to others (relative standing)
    watches_leader: bool  # "+5"/"-5" given to the leading opponent count fully
    remembers: bool  # use the memory of the round's finished tricks, when given one


# Hard does not use a Style: it searches (see choose_rage_action).
STYLES = {
    Level.EASY: Style(
        bid_noise=1.0, blunder=0.15, relative=0.0, watches_leader=False, remembers=False
    ),
    Level.NORMAL: Style(
        bid_noise=0.5, blunder=0.03, relative=0.5, watches_leader=False, remembers=False
    ),
}

_DECK_COUNTS: dict[Card, int] = {}
for _card in DECK:
    _DECK_COUNTS[_card] = _DECK_COUNTS.get(_card, 0) + 1


@dataclass(slots=True)
class Unseen:
    """The cards the viewer has not seen this round (in other hands, the stack or played)."""

    colour: list[list[int]]  # per colour: the unseen values, ascending
    jokers: int
    total: int

    @classmethod
    def from_view(cls, view: RageView, memory: RageMemory | None = None) -> Unseen:
        """Everything minus the own hand, the table, the turned-up and remembered cards."""
        counts = dict(_DECK_COUNTS)
        seen: list[Card] = [*view.hand, *view.turned_up, *(p.card for p in view.trick)]
        if memory is not None and memory.round == view.round:
            seen.extend(memory.played)
        else:
            last = view.last_trick
            if last is not None and last.round == view.round:
                seen.extend(p.card for p in last.plays)
        for card in seen:
            counts[card] -= 1
        colour: list[list[int]] = [[] for _ in COLOURS]
        for card, count in counts.items():
            suit, value = card.colour, card.value  # both None for action cards
            if count > 0 and suit is not None and value is not None:
                colour[suit].append(value)
        for values in colour:
            values.sort()
        total = sum(max(0, c) for c in counts.values())
        return cls(colour, max(0, counts[JOKER]), max(1, total))

    def higher(self, colour: Colour, value: int) -> int:
        """Unseen cards of ``colour`` above ``value``."""
        values = self.colour[colour]
        return sum(1 for v in values if v > value)

    def of(self, colour: Colour) -> int:
        """Unseen cards of ``colour``."""
        return len(self.colour[colour])

    def holds_any(self, count: float, hand_size: int) -> float:
        """Chance that a hand of ``hand_size`` unseen cards holds one of ``count`` given ones."""
        if count <= 0 or hand_size <= 0:
            return 0.0
        return 1.0 - max(0.0, 1.0 - count / self.total) ** hand_size

    def void(self, colour: Colour | None, hand_size: int) -> float:
        """Chance that a hand of ``hand_size`` unseen cards holds no card of ``colour``."""
        if colour is None:
            return 1.0
        return 1.0 - self.holds_any(self.of(colour), hand_size)


def beat_chance(
    unseen: Unseen,
    colour: Colour,
    value: int,
    trump: Colour | None,
    led: Colour | None,
    hand_size: int,
    willing: float,
    voids: frozenset[Colour] = frozenset(),
) -> float:
    """Chance that one opponent beats ``value`` of ``colour`` in the trick now.

    ``willing`` is how readily they spend a winning card they are free to keep; a card
    they must play anyway (following with only higher cards of the colour) beats us
    whatever they want. ``voids`` are the colours they have shown they do not hold.
    """

    def void(c: Colour | None) -> float:
        """Chance they hold no card of colour ``c``."""
        return 1.0 if c in voids else unseen.void(c, hand_size)

    def holds(count: float, c: Colour | None) -> float:
        """Chance they hold one of ``count`` unseen cards (of colour ``c``, if given)."""
        return 0.0 if c in voids else unseen.holds_any(count, hand_size)

    jokers = JOKER_THREAT * unseen.jokers
    if value >= 16:
        # A Joker is beaten by the other Joker named for the same colour, and a Joker of
        # a colour that is not trump by any trump; both need a player void in the colour.
        beat = unseen.holds_any(0.5 * unseen.jokers, hand_size)
        if trump is not None and colour is not trump:
            beat = min(1.0, beat + holds(unseen.of(trump), trump))
        return void(colour) * willing * beat
    if colour is not trump and colour is not led:
        return 1.0  # an off colour: anything of the led colour or trump beats it
    higher = unseen.higher(colour, value)
    lower = unseen.of(colour) - higher  # unseen cards of the colour below ours
    if colour is trump and led is not None and led is not trump:
        # Trump on a led colour: only a player void in the led colour can overtrump.
        over = min(1.0, holds(higher, trump) + unseen.holds_any(jokers, hand_size))
        return void(led) * willing * over
    # Our card is of the colour that must be followed (led, or trump led by us).
    # With no lower card of the colour to duck with, following means beating us.
    forced = 1.0 - holds(lower, colour)
    follow = holds(higher, colour) * (willing + (1.0 - willing) * forced)
    cutters = 0.0 if trump is None or colour is trump else holds(unseen.of(trump), trump)
    cut = void(colour) * willing * min(1.0, cutters + unseen.holds_any(jokers, hand_size))
    return min(1.0, follow + cut)


def card_strength(
    card: Card,
    unseen: Unseen,
    trump: Colour | None,
    opponent_sizes: Sequence[int],
) -> float:
    """Chance that ``card`` from our hand wins a trick later in the round."""
    if card == JOKER:
        return JOKER_STRENGTH
    if card.is_action:
        return 0.0  # No Trump, Change Trump, +5 and -5 never win a trick with colour in it
    colour, value = card.colour, card.value
    assert colour is not None and value is not None
    chance = 1.0
    for size in opponent_sizes:
        led = None if colour is trump else colour
        chance *= 1.0 - beat_chance(unseen, colour, value, trump, led, size, FUTURE_BEAT)
    tricks = max(opponent_sizes, default=1)
    if colour is trump:
        # Besides leading it, a trump wins by cutting a colour we no longer hold; then
        # only a player after us who is void as well and holds a higher trump beats it.
        higher = unseen.higher(colour, value) + JOKER_THREAT * unseen.jokers
        colours = [c for c in COLOURS if c is not trump]
        hold = 1.0
        for size in opponent_sizes:
            void = sum(unseen.void(c, size) for c in colours) / len(colours)
            hold *= 1.0 - 0.5 * FUTURE_BEAT * void * unseen.holds_any(higher, size)
        cut = min(RUFF_CAP, RUFF_PER_TRICK * tricks) * hold
        return TRUMP_STABILITY * (1.0 - (1.0 - chance) * (1.0 - cut))
    players = len(opponent_sizes) + 1
    per_trick = 1.0 / players + (1.0 - 1.0 / players) / COLOUR_COUNT
    chance *= 1.0 - (1.0 - per_trick) ** tricks
    # Late in a round colours run out and trumps get changed: low cards win now and then.
    return chance + (1.0 - chance) * LATE_WIN * min(1.0, tricks / ROUNDS)


def trick_distribution(chances: Sequence[float]) -> list[float]:
    """Probabilities of winning 0, 1, 2, ... tricks when each chance is independent."""
    dist = [1.0]
    for p in chances:
        nxt = [0.0] * (len(dist) + 1)
        q = 1.0 - p
        for k, mass in enumerate(dist):
            nxt[k] += mass * q
            nxt[k + 1] += mass * p
        dist = nxt
    return dist


def choose_bid(view: RageView, style: Style, rng: random.Random) -> Bid:
    """The legal bid the expected trick count most likely hits."""
    legal = [a for a in view.legal_actions if isinstance(a, Bid)]
    seat = view.players.index(view.viewer)
    unseen = Unseen.from_view(view)
    sizes = [size for s, size in enumerate(view.hand_sizes) if s != seat]
    chances = [card_strength(c, unseen, view.trump, sizes) for c in view.hand]
    dist = trick_distribution(chances)
    shift = rng.gauss(0.0, style.bid_noise) if style.bid_noise else 0.0

    def appeal(bid: Bid) -> float:
        """How likely the round ends on this bid, with a little credit for near misses."""
        k = bid.tricks - round(shift)
        at = dist[k] if 0 <= k < len(dist) else 0.0
        near = sum(dist[j] for j in (k - 1, k + 1) if 0 <= j < len(dist))
        return at + NEIGHBOUR_WEIGHT * near

    return max(legal, key=lambda bid: (appeal(bid), -bid.tricks))


def _plays_after_me(view: RageView, seat: int) -> list[int]:
    """Seats still to play in the current trick after ours."""
    n = len(view.players)
    remaining = n - len(view.trick) - 1
    return [(seat + i) % n for i in range(1, remaining + 1)]


def win_chance(
    view: RageView,
    play: Play,
    unseen: Unseen,
    memory: RageMemory | None = None,
) -> float:
    """Chance that ``play`` takes the trick on the table."""
    card = play.card
    if card.is_action and card != JOKER:
        return 0.0
    seat = view.players.index(view.viewer)
    cards = [p.card for p in view.trick] + [card]
    named = [p.colour for p in view.trick] + [play.colour]
    colour = play.colour if card == JOKER else card.colour
    assert colour is not None
    led = view.led_colour if view.led_colour is not None else colour
    trump = view.trump
    index, _ = resolve_trick(cards, named, trump, led)
    if index != len(cards) - 1:
        return 0.0
    value = 16 if card == JOKER else card.value
    assert value is not None
    chance = 1.0
    for other in _plays_after_me(view, seat):
        size = view.hand_sizes[other]
        voids = frozenset() if memory is None else memory.void_colours(view.players[other])
        chance *= 1.0 - beat_chance(unseen, colour, value, trump, led, size, TABLE_BEAT, voids)
    return chance


def _trick_bonus(cards: Sequence[Card]) -> int:
    """Points the "+5"/"-5" cards among ``cards`` give the trick's winner."""
    return 5 * (sum(1 for c in cards if c == PLUS_FIVE) - sum(1 for c in cards if c == MINUS_FIVE))


def play_value(
    view: RageView,
    play: Play,
    unseen: Unseen,
    strengths: dict[Card, float],
    style: Style,
    memory: RageMemory | None = None,
) -> float:
    """Expected round points (plus the relative term) if we make ``play`` now."""
    seat = view.players.index(view.viewer)
    p_win = win_chance(view, play, unseen, memory)
    rest = list(view.hand)
    rest.remove(play.card)
    dist = trick_distribution([p_win, *(strengths[c] for c in rest)])
    won = view.tricks_won[seat]
    bid = view.bids[seat]
    need = (bid if bid is not None else won) - won
    hit = dist[need] if 0 <= need < len(dist) else 0.0
    expected_tricks = sum(k * mass for k, mass in enumerate(dist))
    bonus = _trick_bonus([*(p.card for p in view.trick), play.card])
    value = HIT_POINTS * hit + MISS_POINTS * (1.0 - hit) + expected_tricks + p_win * bonus
    if bonus and p_win < 1.0:
        # Bonus cards that go to someone else change our standing relative to them.
        value -= style.relative * (1.0 - p_win) * bonus * _receiver_weight(view, play, style)
    return value


def _receiver_weight(view: RageView, play: Play, style: Style) -> float:
    """How much points given to the player now winning the trick matter to us.

    Each opponent counts 1/(n-1) of our relative standing; a player who watches the
    leader weighs the leading opponent fully, because points to them decide who wins the game.
    """
    others = max(1, len(view.players) - 1)
    if not style.watches_leader or not view.trick:
        return 1.0 / others
    cards = [p.card for p in view.trick] + [play.card]
    named = [p.colour for p in view.trick] + [play.colour]
    if view.led_colour is None and play.card.is_action and play.card != JOKER:
        return 1.0 / others  # the trick's colour is not set yet: the receiver is open
    led = view.led_colour
    if led is None:
        led = play.colour if play.card == JOKER else play.card.colour
    index, _ = resolve_trick(cards, named, view.trump, led)
    if index >= len(view.trick):
        return 1.0 / others
    receiver = view.players.index(view.trick[index].player)
    seat = view.players.index(view.viewer)
    best = max(total for s, total in enumerate(view.totals) if s != seat)
    return 1.0 if view.totals[receiver] >= best else 0.5 / others


def choose_play(
    view: RageView, style: Style, rng: random.Random, memory: RageMemory | None = None
) -> Play:
    """The legal play with the best expected round value."""
    legal = [a for a in view.legal_actions if isinstance(a, Play)]
    if style.blunder and rng.random() < style.blunder:
        return rng.choice(legal)
    seat = view.players.index(view.viewer)
    unseen = Unseen.from_view(view, memory)
    sizes = [size for s, size in enumerate(view.hand_sizes) if s != seat]
    trump = None if view.no_trump_this_trick else view.trump
    strengths = {c: card_strength(c, unseen, trump, sizes) for c in set(view.hand)}
    best = legal[0]
    best_value = float("-inf")
    for play in legal:
        value = play_value(view, play, unseen, strengths, style, memory)
        if value > best_value + 1e-9:
            best, best_value = play, value
    return best


def choose_rage_action(
    view: RageView,
    level: Level | str,
    rng: random.Random,
    memory: RageMemory | None = None,
    time_budget: float | None = HARD_TIME_BUDGET,
) -> Bid | Play:
    """The computer's action for the acting player's own view (always a legal one).

    ``memory`` (optional, one per computer seat, passed on every call) lets the player
    remember the finished tricks of the round, as a person at the table would.
    ``time_budget`` (wall seconds, None for none) caps hard's search.
    """
    if view.viewer is None or not view.legal_actions:
        raise ValueError("a computer player needs its own view at a moment it may act")
    if memory is not None:
        memory.observe(view)
    if len(view.legal_actions) == 1:
        return view.legal_actions[0]
    if Level(level) is Level.HARD:
        deadline = None if time_budget is None else time.perf_counter() + time_budget
        search = search_bid if view.phase is Phase.BIDDING else search_play
        # Scored by points: the value table's chance to win measured no stronger (see
        # docs/benchmarks.md); it serves the estimates of ``play_values``/``bid_values``.
        return search(view, memory, rng, RIVAL_WEIGHT, deadline=deadline)
    style = STYLES[Level(level)]
    if not style.remembers:
        memory = None
    if view.phase is Phase.BIDDING:
        return choose_bid(view, style, rng)
    return choose_play(view, style, rng, memory)


# -- the benchmark's baseline player -------------------------------------------------


def _baseline_rank(play: Play) -> int:
    """Face value for "lowest card": action cards below 0, a Joker above 15."""
    if play.card == JOKER:
        return 16
    value = play.card.value
    return -1 if value is None else value


def baseline_bid(view: RageView) -> Bid:
    """Cards of 13 or more, trumps of 10 or more and Jokers (each card once), made legal."""
    count = 0
    for card in view.hand:
        if card == JOKER:
            count += 1
        elif not card.is_action:
            value = card.value
            assert value is not None
            if value >= 13 or (card.colour is view.trump and value >= 10):
                count += 1
    legal = [a for a in view.legal_actions if isinstance(a, Bid)]
    return min(legal, key=lambda bid: (abs(bid.tricks - count), bid.tricks))


def baseline_play(view: RageView) -> Play:
    """While below the bid the lowest card that wins the trick so far, else the lowest card."""
    legal = [a for a in view.legal_actions if isinstance(a, Play)]
    seat = view.players.index(view.viewer)
    bid = view.bids[seat]
    ordered = sorted(legal, key=_baseline_rank)
    if bid is not None and view.tricks_won[seat] < bid:
        for play in ordered:
            if _currently_wins(view, play):
                return play
    return ordered[0]


def _currently_wins(view: RageView, play: Play) -> bool:
    """Whether ``play`` would lead the trick as it stands (later players not considered)."""
    card = play.card
    if card.is_action and card != JOKER:
        return False
    cards = [p.card for p in view.trick] + [card]
    named = [p.colour for p in view.trick] + [play.colour]
    colour = play.colour if card == JOKER else card.colour
    led = view.led_colour if view.led_colour is not None else colour
    index, _ = resolve_trick(cards, named, view.trump, led)
    return index == len(cards) - 1


def baseline_action(view: RageView) -> Bid | Play:
    """The baseline player's action for this view."""
    if view.phase is Phase.BIDDING:
        return baseline_bid(view)
    return baseline_play(view)
