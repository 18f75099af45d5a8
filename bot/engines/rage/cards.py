"""Rage cards: six colours of 0..15 plus five kinds of action card, as small ints."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum


class Colour(IntEnum):
    """One of the six card colours, in the rule book's order."""

    BLUE = 0
    GREEN = 1
    RED = 2
    YELLOW = 3
    VIOLET = 4
    ORANGE = 5

    def __str__(self) -> str:
        """Lower-case English name, also the stable JSON form."""
        return self.name.lower()

    @property
    def code(self) -> str:
        """Stable JSON form: the lower-case name."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Colour:
        """Colour from its JSON form (case-insensitive name) or one-letter code."""
        key = text.strip().upper()
        for colour in cls:
            if key in (colour.name, colour.name[0]):
                return colour
        raise ValueError(f"unknown colour {text!r}")


COLOURS: tuple[Colour, ...] = tuple(Colour)
VALUES_PER_COLOUR = 16
JOKER_VALUE = 16

# Card codes: colour * 16 + value for colour cards (0..95), then one code per action kind.
# Equal action cards share a code, so a hand is a multiset and a play names a kind.
_JOKER, _NO_TRUMP, _CHANGE_TRUMP, _PLUS_FIVE, _MINUS_FIVE = range(96, 101)
_ACTION_CODES = {
    _JOKER: "JOKER",
    _NO_TRUMP: "NT",
    _CHANGE_TRUMP: "CT",
    _PLUS_FIVE: "+5",
    _MINUS_FIVE: "-5",
}
_ACTION_NAMES = {
    _JOKER: "Joker",
    _NO_TRUMP: "No Trump",
    _CHANGE_TRUMP: "Change Trump",
    _PLUS_FIVE: "+5",
    _MINUS_FIVE: "-5",
}
ACTION_COUNTS = {_JOKER: 2, _NO_TRUMP: 4, _CHANGE_TRUMP: 4, _PLUS_FIVE: 3, _MINUS_FIVE: 3}


class Card(int):
    """A card kind as a small int: sorts by colour then value, action cards last."""

    __slots__ = ()

    def __new__(cls, code: int) -> Card:
        """The interned card with this numeric code (0..100)."""
        try:
            return _CARDS[code]
        except (IndexError, TypeError):
            raise ValueError(f"no Rage card has code {code!r}") from None

    @property
    def is_action(self) -> bool:
        """True for the 16 action cards (Joker included), which belong to no colour."""
        return self >= _JOKER

    @property
    def colour(self) -> Colour | None:
        """The printed colour, or None for action cards."""
        return COLOUR_OF[self]

    @property
    def value(self) -> int | None:
        """The printed value 0..15, or None for action cards."""
        return None if self >= _JOKER else self & 15

    @property
    def code(self) -> str:
        """Stable JSON form: colour letter + value ("R7") or the action code ("JOKER")."""
        return _CODES[self]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Card from its code ("R7", "b15", "JOKER", "NT", "CT", "+5", "-5")."""
        card = _BY_CODE.get(text.strip().upper())
        if card is None:
            raise ValueError(f"unknown Rage card {text!r}")
        return card

    def __str__(self) -> str:
        """Readable English name such as "red 7" or "Change Trump"."""
        return _NAMES[self]

    def __repr__(self) -> str:
        """Unambiguous form that shows the code."""
        return f"Card({self.code!r})"


_CARDS: list[Card] = [int.__new__(Card, code) for code in range(101)]
COLOUR_OF: tuple[Colour | None, ...] = tuple(
    COLOURS[code >> 4] if code < _JOKER else None for code in range(101)
)
_CODES: tuple[str, ...] = tuple(
    f"{COLOURS[code >> 4].name[0]}{code & 15}" if code < _JOKER else _ACTION_CODES[code]
    for code in range(101)
)
_NAMES: tuple[str, ...] = tuple(
    f"{COLOURS[code >> 4]} {code & 15}" if code < _JOKER else _ACTION_NAMES[code]
    for code in range(101)
)
_BY_CODE: dict[str, Card] = {code: _CARDS[i] for i, code in enumerate(_CODES)}

JOKER = _CARDS[_JOKER]
NO_TRUMP = _CARDS[_NO_TRUMP]
CHANGE_TRUMP = _CARDS[_CHANGE_TRUMP]
PLUS_FIVE = _CARDS[_PLUS_FIVE]
MINUS_FIVE = _CARDS[_MINUS_FIVE]
ACTION_CARDS: tuple[Card, ...] = (JOKER, NO_TRUMP, CHANGE_TRUMP, PLUS_FIVE, MINUS_FIVE)
ALL_CARDS: tuple[Card, ...] = tuple(_CARDS)

DECK: tuple[Card, ...] = tuple(_CARDS[:_JOKER]) + tuple(
    card for card in ACTION_CARDS for _ in range(ACTION_COUNTS[card])
)


def card(colour: Colour, value: int) -> Card:
    """The colour card of this colour and value."""
    if not 0 <= value < VALUES_PER_COLOUR:
        raise ValueError(f"colour cards have values 0..15, not {value}")
    return _CARDS[int(colour) * VALUES_PER_COLOUR + value]


def to_card(item: object) -> Card:
    """A Card from a Card, its code string or its numeric code; ValueError for anything else."""
    if isinstance(item, str):
        return Card.parse(item)
    if isinstance(item, bool) or not isinstance(item, int):
        raise ValueError(f"not a Rage card: {item!r}")
    return Card(item)


def sort_hand(cards: Iterable[Card], trump: Colour | None = None) -> list[Card]:
    """Cards sorted by colour and value, action cards last; the trump colour first if given."""
    if trump is None:
        return sorted(cards)
    return sorted(cards, key=lambda c: (COLOUR_OF[c] is not trump, c))
