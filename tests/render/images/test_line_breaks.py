"""A name or a sum in a picture never breaks inside a word (issue 41: '🤖 Compu' / 'ter 3'
under a Rage card, '46 − 14 chips =' / '32' and 'Computer' / '1 (normal)' on the No Thanks!
final board): it is set in whole words, in the regular weight where bold is too wide, and
a word too wide for its place ends in an ellipsis."""

from __future__ import annotations

from typing import Any

import pytest

from bot.render.images import fonts, nothanks, rage
from bot.render.images.fonts import ELLIPSIS
from bot.table.spec import TableFacts
from tests.render.images.scenes import finished_nothanks, mid_trick, rage_game
from tests.render.images.test_phone_readable import painted_texts

LOCALES = ["en", "de", "ru", "it"]
# Eight long names as a phone meets them: computers (as the trick names them, without
# their level), hyphens, emoji, Cyrillic words wider than a card's slot.
RAGE_NAMES = [
    "🤖 Computer 3",
    "🤖 Компьютер 5",
    "Мария-Антуанетта 👑",
    "Ольга Константиновна Белозерская",
    "Anna-Lena Schmidt-Vogel",
    "🤖 Computer 7",
    "Дмитрий 🎲 Müller",
    "Giuseppe Verdi 🎻🎶",
]
# The final board names computers with their level.
NOTHANKS_NAMES = [
    "🤖 Computer 1 (normal)",
    "🤖 Компьютер 2 (эксперт)",
    "Anna-Lena Schmidt-Vogel",
    "Ольга Константиновна Белозерская",
    "Giuseppe Verdi 🎻🎶",
    "🤖 Computer 6 (normal)",
    "Мария-Антуанетта 👑",
]
COMPUTERS = ("🤖 Computer", "🤖 Компьютер")


def named(game: str, names: list[str]) -> TableFacts:
    """Table facts whose seats carry these names."""
    players = [str(100 + i) for i in range(len(names))]
    return TableFacts(
        id=1,
        game=game,
        status="running",
        host_id=100,
        seats=tuple(int(p) for p in players),
        options={},
        names=dict(zip(players, names, strict=True)),
        computers={},
        min_players=3,
        max_players=8,
    )


def set_in_lines(name: str, drawn: list[str]) -> list[str] | None:
    """The consecutive drawn lines that set this name, if the picture sets it in whole
    words: each break after a space (dropped) or a hyphen, and only the last line may be
    cut short, with an ellipsis; None if no run of drawn lines does."""
    for start in range(len(drawn)):
        shown = ""
        for count in range(1, 4):
            if start + count > len(drawn):
                break
            line = drawn[start + count - 1]
            joined = shown + ("" if not shown or shown.endswith("-") else " ") + line
            if line.endswith(ELLIPSIS):
                core = joined.removesuffix(ELLIPSIS).rstrip()
                if core and name.startswith(core) and len(core) < len(name):
                    return drawn[start : start + count]
                break
            if joined == name:
                return drawn[start : start + count]
            rest = name[len(joined) :]
            if not name.startswith(joined) or not (rest.startswith(" ") or joined[-1] == "-"):
                break
            shown = joined
    return None


def trick_painting(locale: str) -> tuple[Any, Any]:
    """Eight players with long names, a trick of seven cards (two lines of cards)."""
    state = rage_game(8, until=lambda s: mid_trick(s, 7))
    return rage.trick_scene(named("rage", RAGE_NAMES), state.view(None), locale), rage.trick_png


@pytest.mark.parametrize("locale", LOCALES)
def test_names_under_rage_cards_break_only_between_words(
    monkeypatch: pytest.MonkeyPatch, locale: str
) -> None:
    """At 8 players every name under a card is set in whole words; a computer's name shows
    whole ('🤖' / 'Computer 3'), number included."""
    painting = trick_painting(locale)
    drawn, _ = painted_texts(monkeypatch, painting)
    texts = [text for text, _ in drawn]
    names = [laid.name for laid in painting[0].cards]
    assert len(names) >= 7
    for name in names:
        lines = set_in_lines(name, texts)
        assert lines is not None, (name, texts)
        if name.startswith(COMPUTERS):
            assert not lines[-1].endswith(ELLIPSIS), (name, lines)
        for line in lines:
            width = fonts.text_width(line, rage.TEXT, False)
            assert width <= rage.SLOT_W, (line, width)


def test_a_word_wider_than_its_place_is_cut_with_an_ellipsis_not_broken() -> None:
    """'Константиновна' is wider than a card's slot: it ends in '…' on its line, and the
    name never continues with the rest of the word on the next."""
    lines, _ = rage.name_lines("Ольга Константиновна Белозерская")
    assert lines[0] == "Ольга" and lines[-1].endswith(ELLIPSIS)
    assert "Константиновна".startswith(lines[1].removesuffix(ELLIPSIS))
    assert len(lines) == 2


@pytest.mark.parametrize("locale", LOCALES)
def test_nothanks_final_names_and_sums_are_one_line_each(
    monkeypatch: pytest.MonkeyPatch, locale: str
) -> None:
    """On the final board of seven long-named players each name is one line (cut with an
    ellipsis if it must be) and each sum ('46 − 14 chips = 32') is drawn whole, on one line."""
    view = finished_nothanks(7).view(None)
    scene = nothanks.final_scene(named("nothanks", NOTHANKS_NAMES), view, locale)
    drawn, _ = painted_texts(monkeypatch, (scene, nothanks.final_png))
    texts = [text for text, _ in drawn]
    for row in scene.rows:
        assert row.right in texts, (row.right, texts)
        lines = set_in_lines(row.name, texts)
        assert lines is not None and len(lines) == 1, (row.name, lines)
        if row.name.startswith(COMPUTERS):
            assert lines == [row.name], lines  # '🤖 Computer 1 (normal)' whole
