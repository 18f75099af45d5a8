"""Paint the README's table pictures: computer players play seeded games, and the
pictures of chosen moments are written as PNG files.

Run: ``uv run python tools/pictures.py docs``
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.engines.nothanks import NoThanksGame
from bot.engines.rage import Phase, RageState
from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.render.images import nothanks, rage
from bot.table.spec import TableFacts

NAMES = ["Ana", "Дмитрий 🎲", "Giulia", "🤖 Computer 1 (hard)", "Lena 🎉", "Ben", "Zoë", "Олег"]


def facts(game: str, players: list[str]) -> TableFacts:
    """A table's facts with the sample names."""
    return TableFacts(
        id=7,
        game=game,
        status="running",
        host_id=int(players[0]),
        seats=tuple(int(p) for p in players),
        options={},
        names=dict(zip(players, NAMES, strict=False)),
        computers={},
        min_players=3,
        max_players=8,
    )


def play_nothanks(out: Path) -> None:
    """Five normal computers play No Thanks! with open chips; the table with seven cards left."""
    players = [str(100 + i) for i in range(5)]
    game = NoThanksGame.new(players, 2024, open_chips=True)
    rng = random.Random(1)
    memory: dict[str, Any] = {p: NOTHANKS.new_memory() for p in players}
    while game.cards_left > 7:
        player = game.active_player
        assert player is not None
        game.apply(player, NOTHANKS.choose(game.view(player), "normal", rng, memory[player]))
    scene = nothanks.table_scene(facts("nothanks", players), game.view(None), "en")
    (out / "nothanks-table-image.png").write_bytes(nothanks.table_png(scene))


def play_rage(out: Path) -> None:
    """Six normal computers play Rage: a trick of round 3 with an action card; the sheet."""
    players = [str(100 + i) for i in range(6)]
    state = RageState.new(players, seed=31)
    rng = random.Random(3)
    memory: dict[str, Any] = {p: RAGE.new_memory() for p in players}
    table = facts("rage", players)
    trick_written = False
    while not state.is_over:
        view = state.view(None)
        if (
            not trick_written
            and view.round >= 3
            and view.phase is Phase.PLAYING
            and len(view.trick) == 5
            and any(play.card.is_action for play in view.trick)
        ):
            png = rage.trick_png(rage.trick_scene(table, view, "en"))
            (out / "rage-trick-image.png").write_bytes(png)
            trick_written = True
        player = state.acting_players()[0]
        state.apply(player, RAGE.choose(state.view(player), "normal", rng, memory[player]))
    png = rage.sheet_png(rage.sheet_scene(table, state.view(None), "en"))
    (out / "rage-scores-image.png").write_bytes(png)
    if not trick_written:
        raise SystemExit("no trick with an action card in this game: change the seed")


def main() -> None:
    """Write the pictures into the folder named on the command line."""
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs")
    out.mkdir(parents=True, exist_ok=True)
    play_nothanks(out)
    play_rage(out)


if __name__ == "__main__":
    main()
