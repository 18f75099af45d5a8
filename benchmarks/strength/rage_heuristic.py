"""The straightforward Rage heuristic of issue 16: a sparring partner, not a bot level.

Bid the expected sure winners (a Joker counts 1, a trump of 11+ counts 1, a trump of
7-10 counts 1/2, an off-trump 15 counts 0.7, a 14 counts 0.4), rounded half up. While
below the bid, play the cheapest card that wins the trick as it stands, or lead the
strongest card; at (or above) the bid, play the strongest card that loses, or lead the
weakest. It sees only its own player view and keeps no memory.

The issue leaves details open; this player settles them as follows.

- **Strength order** (strongest first): a Joker; trumps by value; the led colour by
  value; other colours by value; then the action cards. Among the action cards the
  order is "+5", Change Trump, No Trump, "-5", so the player keeps a "+5" longest and
  gets rid of a "-5" first whenever it dumps its weakest card.
- **Winning** means winning the trick as it stands now (the players still to act are
  not considered), with the trump in force now (after any No Trump or Change Trump
  already in the trick). No Trump, Change Trump, "+5" and "-5" never win, since
  what they do depends on cards still to come; "cheapest" is the lowest winning
  card in the strength order.
- **A Joker** names the trump colour when it is meant to win (the led colour when
  there is no trump in force, and when leading without trump the colour it holds most
  of), and a colour that is neither led nor trump when it is meant to lose.
- **Following colour** is the engine's rule: the candidates are the legal plays only.
- **Must win anyway**: at the bid with no losing card, it plays its cheapest card.
- **Plus/minus one**: when the rounded estimate is the forbidden bid, it bids one
  more if the unrounded estimate is at least the forbidden bid, else one less.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bot.engines.rage import (
    CHANGE_TRUMP,
    COLOURS,
    JOKER,
    MINUS_FIVE,
    NO_TRUMP,
    PLUS_FIVE,
    Bid,
    Card,
    Colour,
    Phase,
    Play,
    RageView,
    resolve_trick,
)

# Rank of the action cards when they are dumped: lowest goes first.
_ACTION_RANK = {MINUS_FIVE: 0, NO_TRUMP: 1, CHANGE_TRUMP: 2, PLUS_FIVE: 3}


def card_estimate(card: Card, trump: Colour | None) -> float:
    """What one card adds to the expected number of sure winners."""
    if card == JOKER:
        return 1.0
    value = card.value
    if value is None:
        return 0.0
    if card.colour is trump:
        if value >= 11:
            return 1.0
        return 0.5 if value >= 7 else 0.0
    if value == 15:
        return 0.7
    return 0.4 if value == 14 else 0.0


def estimate(hand: Sequence[Card], trump: Colour | None) -> float:
    """The expected number of sure winners in ``hand``."""
    return sum(card_estimate(card, trump) for card in hand)


def heuristic_bid(view: RageView) -> Bid:
    """The rounded estimate, moved to the nearer side if plus/minus one forbids it."""
    legal = {a.tricks for a in view.legal_actions if isinstance(a, Bid)}
    expected = estimate(view.hand, view.trump)
    wanted = min(math.floor(expected + 0.5), max(legal))
    if wanted in legal:
        return Bid(wanted)
    step = 1 if expected >= wanted else -1
    for tricks in (wanted + step, wanted - step):
        if tricks in legal:
            return Bid(tricks)
    return Bid(min(legal, key=lambda t: (abs(t - wanted), t)))


def strength(play: Play, view: RageView) -> tuple[int, int]:
    """Where a play stands in the strength order (higher is stronger)."""
    card = play.card
    if card == JOKER:
        return 4, 16
    value = card.value
    if value is None:
        return 0, _ACTION_RANK[card]
    if card.colour is view.trump:
        return 3, value
    if card.colour is view.led_colour:
        return 2, value
    return 1, value


def wins_now(view: RageView, play: Play) -> bool:
    """Whether ``play`` would take the trick as it stands (later players not considered)."""
    card = play.card
    if card.is_action and card != JOKER:
        return False
    cards = [p.card for p in view.trick] + [card]
    named = [p.colour for p in view.trick] + [play.colour]
    colour = play.colour if card == JOKER else card.colour
    led = view.led_colour if view.led_colour is not None else colour
    index, _ = resolve_trick(cards, named, view.trump, led)
    return index == len(cards) - 1


def _joker_colour(view: RageView, win: bool) -> Colour:
    """The colour a Joker names: one that wins the trick, or one that cannot."""
    hand_colours = [c.colour for c in view.hand if c.colour is not None]
    if win:
        if view.trump is not None:
            return view.trump
        if view.led_colour is not None:
            return view.led_colour
        return max(COLOURS, key=lambda c: (hand_colours.count(c), -int(c)))
    for colour in COLOURS:
        if colour is not view.trump and colour is not view.led_colour:
            return colour
    return COLOURS[0]  # unreachable: six colours, at most two excluded


def _candidates(view: RageView, win: bool) -> list[Play]:
    """The legal plays with the Joker reduced to the one colour it would name."""
    plays: list[Play] = []
    joker = False
    for action in view.legal_actions:
        if not isinstance(action, Play):
            continue
        if action.card == JOKER:
            joker = True
        else:
            plays.append(action)
    if joker:
        plays.append(Play(JOKER, _joker_colour(view, win)))
    return plays


def heuristic_play(view: RageView) -> Play:
    """Cheapest winner or strongest lead below the bid; strongest loser or weakest lead at it."""
    seat = view.players.index(view.viewer) if view.viewer is not None else 0
    bid = view.bids[seat]
    needs = bid is not None and view.tricks_won[seat] < bid
    plays = _candidates(view, win=needs)
    key = lambda play: strength(play, view)  # noqa: E731 - a sort key, used three times
    if not view.trick:
        return max(plays, key=key) if needs else min(plays, key=key)
    if needs:
        winners = [p for p in plays if wins_now(view, p)]
        return min(winners, key=key) if winners else min(plays, key=key)
    losers = [p for p in plays if not wins_now(view, p)]
    return max(losers, key=key) if losers else min(plays, key=key)


def heuristic_action(view: RageView) -> Bid | Play:
    """The heuristic player's action for its own view."""
    if view.phase is Phase.BIDDING:
        return heuristic_bid(view)
    return heuristic_play(view)
