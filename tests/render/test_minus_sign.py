"""One minus sign for players (issue 41): every negative number a player reads, in a
message's text, its embed, its buttons, its picture or the picture's alt text, is written
with "−" (U+2212), never with a hyphen-minus ("-13 pts")."""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterator
from typing import Any

import discord
import pytest

from bot.engines.nothanks import NoThanksGame, score
from bot.engines.rage import RageState
from bot.render import nothanks, rage
from bot.render.table import public_message, public_picture
from bot.table.spec import PublicTable, TableFacts

LOCALES = ["en", "de", "ru", "it"]
# A hyphen-minus right before a digit, not inside a word or a range ('Anna-Lena', '1-2').
HYPHEN_MINUS = re.compile(r"(?<![\w\d])-\d")
TRUE_MINUS = re.compile(r"−\d")


def facts(game: str, count: int, status: str) -> TableFacts:
    """A table of ``count`` people; each loses rating at the end (a signed number shown)."""
    players = [str(100 + i) for i in range(count)]
    return TableFacts(
        id=3,
        game=game,
        status=status,
        host_id=100,
        seats=tuple(int(p) for p in players),
        options={},
        names={p: f"Player-{i}" for i, p in enumerate(players)},
        computers={},
        min_players=3,
        max_players=8,
        rating_changes={p: -7.0 - i for i, p in enumerate(players)} if status == "finished" else {},
    )


def scene_texts(scene: Any) -> Iterator[str]:
    """Every text a picture's scene draws (its strings, however deep in tuples)."""
    if isinstance(scene, str):
        yield scene
    elif dataclasses.is_dataclass(scene) and not isinstance(scene, type):
        for item in dataclasses.fields(scene):
            yield from scene_texts(getattr(scene, item.name))
    elif isinstance(scene, tuple | list):
        for item in scene:
            yield from scene_texts(item)
    elif isinstance(scene, dict):
        for item in scene.values():
            yield from scene_texts(item)


def message_texts(fields: Any) -> Iterator[str]:
    """Every text of a message a player reads: content, embeds, button and select labels."""
    yield fields.get("content") or ""
    embeds = [fields["embed"]] if isinstance(fields.get("embed"), discord.Embed) else []
    for embed in embeds + list(fields.get("embeds") or []):
        yield embed.title or ""
        yield embed.description or ""
        yield embed.footer.text or ""
        for field in embed.fields:
            yield field.name or ""
            yield field.value or ""
    view = fields.get("view")
    if isinstance(view, discord.ui.View):
        for child in view.children:
            yield str(getattr(child, "label", None) or "")
            for option in getattr(child, "options", ()):
                yield option.label
    rows = getattr(view, "rows", None)
    for row in rows or ():
        for component in row:
            yield component.get("label") or ""


def shown(public: PublicTable, renderer: Any, locale: str) -> Iterator[tuple[str, str]]:
    """(where, text) for everything the table shows: the message with pictures on and off,
    the picture's texts and its alt text."""
    for pictures in (True, False):
        for text in message_texts(public_message(public, renderer, locale, pictures=pictures)):
            yield f"message (pictures {pictures})", text
    picture = public_picture(public, renderer, locale)
    assert picture is not None
    yield "alt text", picture.alt
    for text in scene_texts(picture.scene):
        yield "picture", text


def check(found: list[tuple[str, str]], seen: list[str]) -> None:
    """No hyphen-minus before a digit in any text; the real minus signs are collected."""
    for where, text in found:
        assert not HYPHEN_MINUS.search(text), (where, text)
        seen += TRUE_MINUS.findall(text)


@pytest.mark.parametrize("locale", LOCALES)
def test_rage_shows_every_negative_number_with_a_real_minus(locale: str) -> None:
    """A whole 5-player Rage game, move by move: the table, the picture, its alt text,
    every hand and the Scores answer write negative totals and points with "−"."""
    players = [str(100 + i) for i in range(5)]
    state = RageState.new(players, seed=11)
    rng = random.Random(11)
    renderer = rage.RageRenderer()
    seen: list[str] = []
    while True:
        status = "finished" if state.is_over else "running"
        table = facts("rage", 5, status)
        view = state.view(None)
        found = list(shown(PublicTable(table, view), renderer, locale))
        found += [("scores", text) for text in message_texts(renderer.scores(table, view, locale))]
        for player in players:
            private = renderer.private(table, state.view(player), locale)
            found += [("hand", text) for text in message_texts(private)]
        check(found, seen)
        if state.is_over:
            break
        player = state.acting_players()[0]
        state.apply(player, rng.choice(state.legal_actions(player)))
    assert seen, "random play loses points: some negative number must have been shown"


@pytest.mark.parametrize("locale", LOCALES)
def test_nothanks_shows_every_negative_number_with_a_real_minus(locale: str) -> None:
    """A whole 4-player No Thanks! game in which one player hoards chips (a negative
    total): the table, the picture, its alt text, each private summary and the final
    board write it with "−"."""
    players = [str(100 + i) for i in range(4)]
    game = NoThanksGame.new(players, 1, open_chips=True)
    rng = random.Random(1)
    renderer = nothanks.NoThanksRenderer()
    seen: list[str] = []
    while True:
        status = "finished" if game.is_over else "running"
        table = facts("nothanks", 4, status)
        found = list(shown(PublicTable(table, game.view(None)), renderer, locale))
        for player in players:
            private = renderer.private(table, game.view(player), locale)
            found += [("private", text) for text in message_texts(private)]
        check(found, seen)
        if game.is_over:
            break
        player = game.active_player
        assert player is not None
        legal, view = game.legal_actions(player), game.view(None)
        if player == players[0]:
            # The hoarder takes a card only when it is cheap or pays for itself.
            cheap = view.current_card <= 5 or view.chips_on_card >= view.current_card
            game.apply(player, legal[0] if cheap or len(legal) == 1 else legal[-1])
        else:
            game.apply(player, rng.choice(legal))
    final = game.view(None)
    assert score(final.cards[players[0]], final.chips[players[0]]) < 0, "a negative total"
    assert seen
