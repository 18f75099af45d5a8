"""Fixed tables for the picture tests: long Cyrillic and emoji names, games played out."""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageChops

from bot.engines.nothanks import NoThanksGame, PlayerView
from bot.engines.rage import Phase, RageState
from bot.table.spec import TableFacts

GOLDEN = Path(__file__).resolve().parent / "golden"
LONG_NAMES = [
    "Дмитрий 🎲 Müller",
    "Anna-Lena Schmidt-Vogel",
    "🤖 Computer 2 (hard)",
    "Zoë 🎉🎉",
    "Giuseppe Verdi 🎻🎶",
    "Ольга Константиновна Белозерская",
    "Bob",
    "Мария-Антуанетта 👑",
]
MAX_PNG = 200 * 1024


def facts(game: str, count: int) -> TableFacts:
    """Table facts with ``count`` seats named from LONG_NAMES."""
    players = [str(100 + i) for i in range(count)]
    return TableFacts(
        id=1,
        game=game,
        status="running",
        host_id=100,
        seats=tuple(int(p) for p in players),
        options={},
        names=dict(zip(players, LONG_NAMES, strict=False)),
        computers={},
        min_players=3,
        max_players=8,
    )


def nothanks_game(count: int, moves: int, *, open_chips: bool, seed: int = 7) -> NoThanksGame:
    """A No Thanks! game after ``moves`` deterministic moves (mostly passes)."""
    players = [str(100 + i) for i in range(count)]
    game = NoThanksGame.new(players, seed, open_chips=open_chips)
    rng = random.Random(seed)
    for _ in range(moves):
        if game.is_over:
            break
        player = game.active_player
        assert player is not None
        legal = game.legal_actions(player)
        game.apply(player, legal[1] if len(legal) > 1 and rng.random() < 0.8 else legal[0])
    return game


def finished_nothanks(count: int, seed: int = 7) -> NoThanksGame:
    """A finished No Thanks! game."""
    return nothanks_game(count, 10_000, open_chips=False, seed=seed)


def many_cards_view(count: int) -> PlayerView:
    """A public view where players hold long runs and many single cards (the widest rows)."""
    players = [str(100 + i) for i in range(count)]
    deck = list(range(3, 36))
    hands: dict[str, list[int]] = {p: [] for p in players}
    for index, card in enumerate(deck[:24]):
        hands[players[(index // 2) % count]].append(card)
    return PlayerView(
        viewer=None,
        players=players,
        open_chips=True,
        current_card=35,
        chips_on_card=17,
        cards_left=0,
        active_player=players[1],
        cards=hands,
        chips={p: 11 for p in players},
        move_number=80,
        is_over=False,
        removed=None,
        history=[],
    )


def rage_game(
    count: int, *, until: Callable[[RageState], bool], seed: int = 5, **options: bool
) -> RageState:
    """A Rage game played with seeded random legal moves until ``until`` holds."""
    from bot.engines.rage import RageOptions

    players = [str(100 + i) for i in range(count)]
    state = RageState.new(players, seed=seed, options=RageOptions(**options))
    rng = random.Random(seed)
    while not until(state):
        acting = state.acting_players()
        assert acting, "the game ended before the wanted moment"
        player = acting[0]
        state.apply(player, rng.choice(state.legal_actions(player)))
    return state


def mid_trick(state: RageState, cards: int) -> bool:
    """A trick in round 2 or later with at least ``cards`` cards down."""
    view = state.view(None)
    return view.round >= 2 and view.phase is Phase.PLAYING and len(view.trick) >= cards


def decode(png: bytes) -> Image.Image:
    """A PNG as an RGB picture."""
    return Image.open(io.BytesIO(png)).convert("RGB")


def difference(a: Image.Image, b: Image.Image) -> float:
    """The mean absolute difference of two same-sized pictures, 0..255."""
    assert a.size == b.size, (a.size, b.size)
    diff = ImageChops.difference(a, b).convert("L")
    histogram = diff.histogram()
    return sum(value * count for value, count in enumerate(histogram)) / (a.width * a.height)


def strong_differences(a: Image.Image, b: Image.Image, threshold: int = 100) -> int:
    """How many pixels differ by more than ``threshold`` in some channel (not mere
    anti-aliasing): a digit drawn differently changes hundreds."""
    assert a.size == b.size, (a.size, b.size)
    diff = ImageChops.difference(a, b)
    strongest = (
        Image.merge("RGB", diff.split())
        .convert("L")
        .point(lambda value: 255 if value > threshold else 0)
    )
    histogram = strongest.histogram()
    return histogram[255]
