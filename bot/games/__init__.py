"""The games the bot hosts, registered in one place.

Each game is an engine, a renderer and a computer player tied together by one `GameSpec`
(bot.table.spec); the table core plays any of them, and a cog adds only its commands and
buttons. Adding a game: docs/adding-a-game.md.

Usage::

    from bot.games import GAMES
    spec = GAMES["nothanks"]
    engine = spec.new_engine(["1", "2", "3"], 7, spec.parse_options({}))
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.table.spec import GameSpec

GAMES: Mapping[str, GameSpec] = {spec.name: spec for spec in (NOTHANKS, RAGE)}

__all__ = ["GAMES", "NOTHANKS", "RAGE"]
