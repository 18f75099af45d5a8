"""No Thanks! as the table core plays it: the spec that ties its engine, renderer and
computer player together, with its DMs, move log form and records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.ai.levels import ALL_LEVELS
from bot.ai.nothanks import seat_choice
from bot.ai.review import nothanks_expert, nothanks_values
from bot.engines.contract import GameEngine
from bot.engines.nothanks import MAX_PLAYERS, MIN_PLAYERS, PASS, Action, Move, NoThanksGame
from bot.render.nothanks import NoThanksRenderer
from bot.table.spec import GameSpec, Letter, ResultRow, Reviewer

GAME = "nothanks"


def new_game(players: Sequence[str], seed: int, options: Mapping[str, Any]) -> NoThanksGame:
    """Deal a game for the seated players (seat order = join order)."""
    return NoThanksGame.new(list(players), seed=seed, open_chips=bool(options.get("open_chips")))


def letters_for(engine: GameEngine[Any], player: str, applied: Move) -> list[Letter]:
    """What a move changes in the mover's living DM (chips, cards or both)."""
    assert isinstance(engine, NoThanksGame)
    chips = engine.chips[applied.seat]
    if applied.action is PASS:
        return [Letter(player, "nothanks.dm.passed", {"card": applied.card, "count": chips})]
    # A take changes the cards and the score even without chips: the living DM shows them.
    params = {"card": applied.card, "gained": applied.chips_on_card, "count": chips}
    return [Letter(player, "nothanks.dm.took", params)]


def start_letters(engine: GameEngine[Any]) -> list[Letter]:
    """Everybody learns their starting chips by DM."""
    assert isinstance(engine, NoThanksGame)
    return [
        Letter(player, "nothanks.dm.started", {"count": engine.chips[seat]})
        for seat, player in enumerate(engine.players)
    ]


def result_rows(engine: GameEngine[Any]) -> list[ResultRow]:
    """Each seat's total, rank and figures for the records (lower totals are better)."""
    assert isinstance(engine, NoThanksGame)
    return [
        (
            row.player,
            row.total,
            row.rank,
            {
                "card_points": row.card_points,
                "chips": row.chips,
                "cards": sum(len(run) for run in row.runs),
                "longest_run": max((len(run) for run in row.runs), default=0),
            },
        )
        for row in engine.standings()
    ]


SPEC = GameSpec(
    name=GAME,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    new_engine=new_game,
    engine_from_dict=NoThanksGame.from_dict,
    renderer=NoThanksRenderer(),
    choose=seat_choice,
    letters=letters_for,
    start_letters=start_letters,
    encode_action=lambda action: Action(action).value,
    decode_action=Action,
    result_rows=result_rows,
    # No Thanks! has a fourth, slower level (Rage stops at hard).
    levels=ALL_LEVELS,
    # A review judges each decision by 64 playouts per choice, and asks the expert.
    reviewer=Reviewer(values=nothanks_values, expert=nothanks_expert, level="expert", samples=64),
)
