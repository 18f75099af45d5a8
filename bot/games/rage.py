"""Rage as the table core plays it: the spec that ties its engine, renderer and computer
player together, with its options, move log form and records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.ai import RageMemory, choose_rage_action
from bot.ai.review import rage_expert, rage_values
from bot.engines.contract import GameEngine
from bot.engines.errors import InvalidSetup
from bot.engines.rage import ALL_CARDS, Bid, Card, Colour, Play, RageOptions, RageState
from bot.render.rage import OPTION_NAMES, RageRenderer
from bot.table.errors import UserError
from bot.table.spec import GameSpec, ResultRow, Reviewer

GAME = "rage"


def parse_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Check the variants: hidden and secret bids exclude each other, ±1 needs open bids."""
    variants = {name: bool(options.get(name)) for name in OPTION_NAMES}
    try:
        RageOptions(**variants)
    except InvalidSetup:
        key = (
            "rage.options.hidden_and_secret"
            if variants["hidden_bids"] and variants["secret_bids"]
            else "rage.options.plus_minus_open"
        )
        raise UserError(key) from None
    return {**dict(options), **variants}


def new_game(players: Sequence[str], seed: int, options: Mapping[str, Any]) -> RageState:
    """Deal round 1 for the seated players with the table's variants."""
    variants = RageOptions(**{name: bool(options.get(name)) for name in OPTION_NAMES})
    return RageState.new(list(players), seed=seed, options=variants)


# Old move logs wrote cards by their English names ("play red 7", "play Joker as red").
CARDS_BY_NAME = {str(card): card for card in ALL_CARDS}


def encode_action(action: Bid | Play) -> str:
    """A move as the move log keeps it: "bid 3", "play R7", "play JOKER r"."""
    if isinstance(action, Bid):
        return f"bid {action.tricks}"
    colour = f" {action.colour.code}" if action.colour is not None else ""
    return f"play {action.card.code}{colour}"


def decode_action(text: str) -> Bid | Play:
    """A move from the move log, in this or the older readable form."""
    kind, _, rest = text.partition(" ")
    if kind == "bid":
        return Bid(int(rest))
    if kind != "play":
        raise ValueError(f"not a Rage move: {text!r}")
    if " as " in rest:
        name, _, colour = rest.partition(" as ")
        return Play(CARDS_BY_NAME[name], Colour.parse(colour))
    if rest in CARDS_BY_NAME:
        return Play(CARDS_BY_NAME[rest])
    code, _, colour = rest.partition(" ")
    return Play(Card.parse(code), Colour.parse(colour) if colour else None)


def result_rows(engine: GameEngine[Any]) -> list[ResultRow]:
    """Each seat's score, rank and figures (exact bids, rounds) for the records."""
    assert isinstance(engine, RageState)
    outcome = engine.outcome()
    assert outcome is not None
    sheet = engine.score_sheet(None)
    exact: dict[str, int] = {}
    rounds: dict[str, int] = {}
    for row in sheet.rows:
        if not row.complete:
            continue
        for entry in row.entries:
            player = str(entry.player)
            rounds[player] = rounds.get(player, 0) + 1
            exact[player] = exact.get(player, 0) + int(entry.bid == entry.tricks)
    return [
        (
            str(s.player),
            s.score,
            s.rank,
            {"exact_bids": exact.get(str(s.player), 0), "rounds": rounds.get(str(s.player), 0)},
        )
        for s in outcome.standings
    ]


SPEC = GameSpec(
    name=GAME,
    min_players=3,
    max_players=8,
    new_engine=new_game,
    engine_from_dict=RageState.from_dict,
    renderer=RageRenderer(),
    choose=choose_rage_action,
    parse_options=parse_options,
    # One memory per seat, built only from that seat's views; after a restart it starts
    # again from the last finished trick, as a player who looked away would.
    new_memory=RageMemory,
    encode_action=encode_action,
    decode_action=decode_action,
    result_rows=result_rows,
    # A review judges each decision on 24 guessed deals per choice, and asks hard (Rage's
    # strongest level); the player's memory is built from their own views.
    reviewer=Reviewer(
        values=rage_values,
        expert=rage_expert,
        level="hard",
        samples=24,
        observe=RageMemory.observe,
    ),
)
