"""High card as the table core plays it: the spec that ties its engine, renderer and
computer player together (in the bot, this file would be bot/games/highcard.py)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from bot.table.spec import GameSpec
from tests.highcard.engine import MAX_PLAYERS, MIN_PLAYERS, HighCardGame, HighCardView
from tests.highcard.render import HighCardRenderer

GAME = "highcard"


def new_game(players: Sequence[str], seed: int, options: Mapping[str, Any]) -> HighCardGame:
    """Deal a game for the seated players."""
    return HighCardGame.new(players, seed)


def choose(view: Any, level: str, rng: random.Random, memory: Any) -> int:
    """A trivial computer: the highest card it may play, from its own view."""
    assert isinstance(view, HighCardView) and view.legal
    return max(view.legal)


SPEC = GameSpec(
    name=GAME,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    new_engine=new_game,
    engine_from_dict=HighCardGame.from_dict,
    renderer=HighCardRenderer(),
    choose=choose,
)
