"""A small, fast Rage round for look-ahead: plain ints, no views, no validation.

The hard player plays many imagined rounds (see ``rage_search``); building engine views
for each imagined card would cost a hundred times more. Cards are the engine's codes
(colour * 16 + value for colour cards, then Joker, No Trump, Change Trump, "+5", "-5");
colours are 0..5 and -1 means "none". The rules are the engine's (RULES.md): following,
Jokers, No Trump and Change Trump in the order played, trick winners, round scoring.

``heuristic_card`` is the opponent model: the straightforward heuristic of issue 16
(bid the sure winners; below the bid win as cheaply as possible, at the bid lose with
the strongest card), the way many casual players play.
"""

from __future__ import annotations

from dataclasses import dataclass

JOKER = 96
NO_TRUMP = 97
CHANGE_TRUMP = 98
PLUS_FIVE = 99
MINUS_FIVE = 100
NONE = -1

HIT_POINTS = 10
MISS_POINTS = -5

# Dump order of the action cards (lowest first): a "-5" goes first, a "+5" is kept.
_ACTION_KEY = {MINUS_FIVE: 0, NO_TRUMP: 1, CHANGE_TRUMP: 2, PLUS_FIVE: 3, JOKER: 416}


def _key_table(trump: int, led: int) -> list[int]:
    """``SimRound.key`` of every card code, for one trump and led colour."""
    base = [100] * 6
    if led != NONE:
        base[led] = 200
    if trump != NONE:
        base[trump] = 300
    table = [base[card >> 4] + (card & 15) for card in range(JOKER)]
    return table + [_ACTION_KEY[card] for card in range(JOKER, MINUS_FIVE + 1)]


# The strength order for each (trump, led) pair, indexed (trump + 1) * 7 + led + 1: a
# list lookup is much cheaper than a key function in the look-ahead's inner loop.
_KEYS = [_key_table(trump, led) for trump in range(-1, 6) for led in range(-1, 6)]


def colour_of(card: int) -> int:
    """The printed colour of a card, or NONE for action cards."""
    return card >> 4 if card < JOKER else NONE


def sure_winners(hand: list[int], trump: int) -> float:
    """The heuristic's bid estimate: Jokers, high trumps and off-trump 15s and 14s."""
    total = 0.0
    for card in hand:
        if card == JOKER:
            total += 1.0
        elif card < JOKER:
            value = card & 15
            if card >> 4 == trump:
                total += 1.0 if value >= 11 else 0.5 if value >= 7 else 0.0
            elif value == 15:
                total += 0.7
            elif value == 14:
                total += 0.4
    return total


def heuristic_bid(hand: list[int], trump: int, size: int, forbidden: int) -> int:
    """The rounded estimate, moved to the nearer side when plus/minus one forbids it."""
    expected = sure_winners(hand, trump)
    bid = min(int(expected + 0.5), size)
    if bid != forbidden:
        return bid
    step = 1 if expected >= bid else -1
    for other in (bid + step, bid - step):
        if 0 <= other <= size:
            return other
    return bid


@dataclass(slots=True)
class SimRound:
    """One round in play, seen by an imaginary referee who knows every card."""

    hands: list[list[int]]
    stack: list[int]  # top first
    trump: int
    no_trump: bool  # a No Trump was played this trick: turn up a card after it
    bids: list[int]
    won: list[int]
    bonus: list[int]
    leader: int
    turn: int
    trick: list[int]
    named: list[int]  # the colour named for each Joker in the trick, NONE for other cards
    led: int
    size: int  # tricks in the round
    sweep: bool

    def copy(self) -> SimRound:
        """An independent copy."""
        return SimRound(
            [list(h) for h in self.hands],
            list(self.stack),
            self.trump,
            self.no_trump,
            list(self.bids),
            list(self.won),
            list(self.bonus),
            self.leader,
            self.turn,
            list(self.trick),
            list(self.named),
            self.led,
            self.size,
            self.sweep,
        )

    @property
    def over(self) -> bool:
        """True once every card has been played."""
        return not self.trick and not self.hands[self.turn]

    def legal(self, seat: int) -> list[int]:
        """The cards ``seat`` may play (a Joker once; its colour is chosen separately)."""
        hand = self.hands[seat]
        led = self.led
        if led != NONE:
            follow = [c for c in hand if c < JOKER and c >> 4 == led]
            if follow:
                return follow
        return hand

    def play(self, card: int, named: int = NONE) -> None:
        """The player to act plays ``card`` (naming ``named`` if it is a Joker)."""
        seat = self.turn
        self.hands[seat].remove(card)
        self.trick.append(card)
        self.named.append(named)
        if card < JOKER:
            if self.led == NONE:
                self.led = card >> 4
        elif card == JOKER:
            if self.led == NONE:
                self.led = named
        elif card == NO_TRUMP:
            self.trump = NONE
            self.no_trump = True
        elif card == CHANGE_TRUMP:
            self.trump = self._turn_up()
            self.no_trump = False
        n = len(self.hands)
        if len(self.trick) == n:
            self._finish_trick()
        else:
            self.turn = (seat + 1) % n

    def _turn_up(self) -> int:
        """Turn up stack cards until a colour shows; its colour, or NONE."""
        stack = self.stack
        while stack:
            card = stack.pop(0)
            if card < JOKER:
                return card >> 4
        return NONE

    def winner_index(self) -> int:
        """Index in the trick of the card that takes it, with the trump in force now."""
        trick, named = self.trick, self.named
        for target in (self.trump, self.led):
            if target == NONE:
                continue
            best = -1
            best_value = -1
            for i, card in enumerate(trick):
                if card == JOKER:
                    if named[i] != target:
                        continue
                    value = 16
                elif card < JOKER and card >> 4 == target:
                    value = card & 15
                else:
                    continue
                if value >= best_value:
                    best, best_value = i, value
            if best >= 0:
                return best
        return 0

    def _finish_trick(self) -> None:
        """Give the trick to its winner and turn up a trump after a No Trump."""
        n = len(self.hands)
        winner = (self.leader + self.winner_index()) % n
        self.won[winner] += 1
        bonus = 0
        for card in self.trick:
            if card == PLUS_FIVE:
                bonus += 5
            elif card == MINUS_FIVE:
                bonus -= 5
        self.bonus[winner] += bonus
        self.trick = []
        self.named = []
        self.led = NONE
        if self.no_trump:
            self.no_trump = False
            self.trump = self._turn_up()
        self.leader = winner
        self.turn = winner

    def score(self, seat: int) -> int:
        """The round points ``seat`` has once the round is over."""
        won = self.won[seat]
        per_trick = 2 if self.sweep and self.size > 1 and won == self.size else 1
        bid_points = HIT_POINTS if won == self.bids[seat] else MISS_POINTS
        return won * per_trick + self.bonus[seat] + bid_points

    def best_so_far(self) -> tuple[int, int]:
        """Highest trump and highest led-colour value in the trick so far (-1: none)."""
        trump, led = self.trump, self.led
        best_trump = best_led = -1
        for i, card in enumerate(self.trick):
            if card == JOKER:
                colour, value = self.named[i], 16
            elif card < JOKER:
                colour, value = card >> 4, card & 15
            else:
                continue
            if colour == trump and trump != NONE:
                best_trump = max(best_trump, value)
            elif colour == led:
                best_led = max(best_led, value)
        return best_trump, best_led

    def wins_now(self, card: int, named: int, best: tuple[int, int]) -> bool:
        """Whether ``card`` would take the trick as it stands (later players ignored)."""
        if card == JOKER:
            colour, value = named, 16
        elif card < JOKER:
            colour, value = card >> 4, card & 15
        else:
            return False
        best_trump, best_led = best
        trump = self.trump
        if trump != NONE:
            if colour == trump:
                return value > best_trump or value == 16
            if best_trump >= 0:
                return False
        led = self.led if self.led != NONE else colour
        if colour != led:
            return False
        return value > best_led or value == 16

    def joker_colour(self, seat: int, win: bool) -> int:
        """The colour a Joker names to win (trump, led, most held) or to lose."""
        if win:
            if self.trump != NONE:
                return self.trump
            if self.led != NONE:
                return self.led
            counts = [0] * 6
            for card in self.hands[seat]:
                if card < JOKER:
                    counts[card >> 4] += 1
            return max(range(6), key=lambda c: (counts[c], -c))
        for colour in range(6):
            if colour != self.trump and colour != self.led:
                return colour
        return 0

    def key(self, card: int) -> int:
        """The heuristic's strength order: Joker, trumps, led colour, other colours, actions."""
        if card >= JOKER:
            return _ACTION_KEY[card]
        colour = card >> 4
        if colour == self.trump:
            return 300 + (card & 15)
        if colour == self.led:
            return 200 + (card & 15)
        return 100 + (card & 15)

    def heuristic_card(self, seat: int) -> tuple[int, int]:
        """The heuristic player's card (and Joker colour) for ``seat``, who is to act."""
        plays = self.hands[seat]
        led = self.led
        if led != NONE:
            follow = [c for c in plays if c < JOKER and c >> 4 == led]
            if follow:
                plays = follow
        needs = self.won[seat] < self.bids[seat]
        if len(plays) == 1:
            card = plays[0]
            return card, self.joker_colour(seat, needs) if card == JOKER else NONE
        key = _KEYS[(self.trump + 1) * 7 + led + 1].__getitem__
        if not self.trick:
            card = max(plays, key=key) if needs else min(plays, key=key)
            return card, self.joker_colour(seat, needs) if card == JOKER else NONE
        # What ``wins_now`` decides, as one bar per colour: a colour card wins the trick as
        # it stands when its value is above its colour's bar, a Joker (the second beats
        # the first) whenever its colour's bar is not 99, which no card can clear.
        best_trump, best_led = self.best_so_far()
        trump = self.trump
        if trump == NONE or best_trump < 0:
            bar = [-1] * 6 if led == NONE else [99] * 6
            if led != NONE:
                bar[led] = best_led
        else:
            bar = [99] * 6
        if trump != NONE:
            bar[trump] = best_trump
        joker = JOKER in plays
        win_colour = self.joker_colour(seat, True) if joker else NONE
        lose_colour = self.joker_colour(seat, False) if joker else NONE
        if needs:
            winners = [
                c
                for c in plays
                if (c < JOKER and c & 15 > bar[c >> 4]) or (c == JOKER and bar[win_colour] < 99)
            ]
            if winners:
                card = min(winners, key=key)
                return card, win_colour if card == JOKER else NONE
            card = min(plays, key=key)
            return card, lose_colour if card == JOKER else NONE
        losers = [
            c
            for c in plays
            if not ((c < JOKER and c & 15 > bar[c >> 4]) or (c == JOKER and bar[lose_colour] < 99))
        ]
        card = max(losers, key=key) if losers else min(plays, key=key)
        return card, lose_colour if card == JOKER else NONE

    def play_out(self) -> None:
        """Play the round to its end with every seat playing the heuristic.

        ``play`` is written out in the loop: this is the look-ahead's innermost loop, and
        a method call per card costs more than the rest of the card's work.
        """
        hands = self.hands
        n = len(hands)
        choose = self.heuristic_card
        while self.trick or hands[self.turn]:
            seat = self.turn
            card, named = choose(seat)
            hands[seat].remove(card)
            trick = self.trick
            trick.append(card)
            self.named.append(named)
            if card < JOKER:
                if self.led == NONE:
                    self.led = card >> 4
            elif card == JOKER:
                if self.led == NONE:
                    self.led = named
            elif card == NO_TRUMP:
                self.trump = NONE
                self.no_trump = True
            elif card == CHANGE_TRUMP:
                self.trump = self._turn_up()
                self.no_trump = False
            if len(trick) == n:
                self._finish_trick()
            else:
                self.turn = (seat + 1) % n
