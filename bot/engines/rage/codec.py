"""Plain-JSON encoding of a Rage state, with validation on the way back in."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from bot.engines.errors import InvalidSetup

from .cards import DECK, Card, Colour
from .dealing import ROUNDS, cards_in_round
from .options import RageOptions
from .phase import Phase
from .players import validate_players
from .scoring import RoundRecord
from .trick import TrickRecord

FORMAT = "rage"
VERSION = 1


def card_codes(cards: list[Card]) -> list[str]:
    """Card codes for a list of cards."""
    return [card.code for card in cards]


def colour_code(colour: Colour | None) -> str | None:
    """Colour name or None."""
    return None if colour is None else colour.code


def decode_state(data: Mapping[str, Any]) -> dict[str, Any]:
    """Constructor arguments for RageState from encode_state output; InvalidSetup if malformed."""
    if not isinstance(data, Mapping):
        raise InvalidSetup(f"a Rage state must be a JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise InvalidSetup(
            f"not a Rage state of version {VERSION}: format={data.get('format')!r}, "
            f"version={data.get('version')!r}"
        )
    try:
        fields = _decode_fields(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidSetup(f"malformed Rage state: {exc!r}") from None
    _check_consistency(fields)
    return fields


def _decode_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """Field-by-field decoding; lets KeyError/TypeError/ValueError escape for the caller."""

    def colour(value: str | None) -> Colour | None:
        """Colour from its name, or None."""
        return None if value is None else Colour.parse(value)

    def cards(values: list[str]) -> list[Card]:
        """Cards from their codes."""
        return [Card.parse(code) for code in values]

    trick = data["trick"]
    return {
        "players": validate_players(data["players"]),
        "options": RageOptions.from_dict(data["options"]),
        "seed": data["seed"],
        "deal_seeds": tuple(int(s) for s in data["deal_seeds"]),
        "round": data["round"],
        "dealer_seat": data["dealer"],
        "phase": Phase(data["phase"]),
        # Hands are kept sorted: legal_actions relies on equal cards sitting together.
        "hands": [sorted(cards(hand)) for hand in data["hands"]],
        "stack": cards(data["stack"]),
        "turned_up": cards(data["turned_up"]),
        "trump": colour(data["trump"]),
        "no_trump_this_trick": data["no_trump_this_trick"],
        "bids": list(data["bids"]),
        "tricks_won": list(data["tricks_won"]),
        "bonus": list(data["bonus"]),
        "leader_seat": data["leader"],
        "trick_cards": [Card.parse(play["card"]) for play in trick],
        "trick_named": [colour(play["colour"]) for play in trick],
        "trick_number": data["trick_number"],
        "last_trick_record": (
            None if data["last_trick"] is None else TrickRecord.from_dict(data["last_trick"])
        ),
        "totals": list(data["totals"]),
        "rounds": [RoundRecord.from_dict(rec) for rec in data["rounds"]],
        "move_number": data["move_number"],
    }


def _is_int(value: object) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _check_consistency(f: dict[str, Any]) -> None:
    """The checks a hand-edited or corrupted state is most likely to fail."""
    n = len(f["players"])
    problems: list[str] = []
    if not isinstance(f["seed"], int | str) or isinstance(f["seed"], bool):
        problems.append("seed must be an integer or a string")
    if len(f["deal_seeds"]) != ROUNDS:
        problems.append(f"deal_seeds must hold {ROUNDS} seeds")
    if not _is_int(f["round"]) or not 1 <= f["round"] <= ROUNDS:
        problems.append("round must be 1..10")
    for name in ("dealer_seat", "leader_seat"):
        if not _is_int(f[name]) or not 0 <= f[name] < n:
            problems.append(f"{name.removesuffix('_seat')} must be a seat 0..{n - 1}")
    for name in ("hands", "bids", "tricks_won", "bonus", "totals"):
        if len(f[name]) != n:
            problems.append(f"{name} must have one entry per player")
    for name in ("tricks_won", "bonus", "totals", "trick_number", "move_number"):
        values = f[name] if isinstance(f[name], list) else [f[name]]
        if not all(_is_int(v) for v in values):
            problems.append(f"{name} must hold integers")
    if not isinstance(f["no_trump_this_trick"], bool):
        problems.append("no_trump_this_trick must be true or false")
    if problems:
        raise InvalidSetup("malformed Rage state: " + "; ".join(problems))

    size = cards_in_round(f["round"])
    bids = f["bids"]
    if not all(b is None or (_is_int(b) and 0 <= b <= size) for b in bids):
        problems.append(f"bids must be null or 0..{size}")
    phase = f["phase"]
    if phase is Phase.PLAYING and None in bids:
        problems.append("every player must have bid before the playing phase")
    if phase is Phase.BIDDING and (f["trick_cards"] or any(f["tricks_won"])):
        problems.append("no card may be played during bidding")
    if len(f["trick_cards"]) >= n:
        problems.append("the trick in play must be incomplete")
    in_play = len(f["trick_cards"])
    played = sum(f["tricks_won"])
    for seat, hand in enumerate(f["hands"]):
        already = (seat - f["leader_seat"]) % n < in_play
        if phase is not Phase.FINISHED and len(hand) != size - played - already:
            problems.append(f"seat {seat} holds {len(hand)} cards, which does not fit the round")
    live = [c for hand in f["hands"] for c in hand]
    live += f["stack"] + f["turned_up"] + f["trick_cards"]
    have, deck = Counter(live), Counter(DECK)
    if any(have[c] > deck[c] for c in have):
        problems.append("the cards in play hold more copies of a card than the deck has")
    if problems:
        raise InvalidSetup("inconsistent Rage state: " + "; ".join(problems))
