"""Rounds, seeds and the deal: everything random in Rage comes from here."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable

from bot.engines.errors import InvalidSetup

from .cards import ALL_CARDS, DECK, Card

ROUNDS = 10


def cards_in_round(round_number: int) -> int:
    """Hand size in round 1..10: 10, 9, ..., 1."""
    return ROUNDS + 1 - round_number


def check_seed(seed: object) -> int | str:
    """The seed if it survives a JSON round trip unchanged (int or str); else InvalidSetup."""
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise InvalidSetup(f"the seed must be an integer or a string, not {seed!r}")
    return seed


def seed_stream(seed: int | str, n_players: int) -> tuple[int, tuple[int, ...]]:
    """First dealer's seat and one shuffle seed per round, all drawn from random.Random(seed)."""
    rng = random.Random(seed)
    first_dealer = rng.randrange(n_players)
    return first_dealer, tuple(rng.getrandbits(64) for _ in range(ROUNDS))


def shuffled_deck(round_seed: int) -> list[Card]:
    """The 112 cards in the order this round's seed gives them."""
    # Sorting by random keys is a uniform shuffle and twice as fast as random.shuffle,
    # which matters because a deal happens every round.
    draw = random.Random(round_seed).random
    return sorted(DECK, key=lambda _: draw())


def deal_hands(
    deck: list[Card], n_players: int, size: int, first_seat: int
) -> tuple[list[list[Card]], list[Card]]:
    """Sorted hands by seat (dealt from `first_seat` on) and the rest as the stack, top first."""
    hands: list[list[Card]] = [[] for _ in range(n_players)]
    for i in range(n_players):
        hands[(first_seat + i) % n_players] = sorted(deck[i * size : (i + 1) * size])
    return hands, deck[n_players * size :]


def check_card_counts(cards: Iterable[Card]) -> None:
    """InvalidSetup if the cards hold more copies of a card than the deck has."""
    have = Counter(cards)
    deck = Counter(DECK)
    extra = [f"{have[c] - deck[c]} x {c}" for c in ALL_CARDS if have[c] > deck[c]]
    if extra:
        raise InvalidSetup(f"more cards than the deck holds: {', '.join(extra)}")
