"""Discord's limits: every message the renderers build fits, however long the names are.

Discord refuses a whole message when one text is too long; `bot.render.limits.fit` cuts
what is too long instead. Lengths are UTF-16 code units, as Discord counts them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import discord
import pytest

from bot.engines.nothanks import NoThanksGame
from bot.engines.rage import RageState
from bot.render import nothanks, rage
from bot.render.limits import ELLIPSIS, FIELD_VALUE, fit, shorten, shorten_block, units
from bot.render.table import lobby_embed, public_message
from bot.table.spec import MessageFields, PublicTable, TableFacts

LANGUAGES = ("en", "de", "ru", "it")
# Names of 32 emoji, Discord's longest display name. A joker is one code point but two
# UTF-16 units; a family is one emoji to the eye but eleven units (joined by ZWJs).
JOKERS = "🃏" * 32
FAMILIES = "👨‍👩‍👧‍👦" * 32
NAMES = {"jokers": JOKERS, "families": FAMILIES}
PLAYERS = [str(1000 + seat) for seat in range(8)]
FENCE = "```"


# -- the checker -------------------------------------------------------------------------


def _embed_problems(embed: discord.Embed, where: str) -> Iterator[str]:
    """Every limit one embed breaks, each text measured in UTF-16 units."""
    limits = [
        ("title", embed.title, 256),
        ("description", embed.description, 4096),
        ("footer", embed.footer.text, 2048),
        ("author", embed.author.name, 256),
    ]
    if len(embed.fields) > 25:
        yield f"{where}: {len(embed.fields)} fields > 25"
    for index, field in enumerate(embed.fields):
        limits.append((f"field {index} name", field.name, 256))
        limits.append((f"field {index} value", field.value, 1024))
        value = field.value or ""
        if value.startswith(FENCE) and not (value.endswith(FENCE) and value.count(FENCE) == 2):
            yield f"{where}: field {index} is a broken code block"
    for name, text, limit in limits:
        if units(text) > limit:
            yield f"{where}: {name} {units(text)} > {limit}"


def within_limits(fields: MessageFields) -> list[str]:
    """Every Discord limit a message breaks (an empty list when it may be sent)."""
    problems = []
    content = fields.get("content")
    if units(content) > 2000:
        problems.append(f"content {units(content)} > 2000")
    embeds = [fields["embed"]] if fields.get("embed") is not None else []
    embeds += fields.get("embeds") or []
    total = 0
    for number, embed in enumerate(embeds):
        problems += _embed_problems(embed, f"embed {number}")
        total += sum(
            units(text)
            for text in [embed.title, embed.description, embed.footer.text, embed.author.name]
        )
        total += sum(units(field.name) + units(field.value) for field in embed.fields)
    if total > 6000:
        problems.append(f"embeds total {total} > 6000")
    view = fields.get("view")
    for child in view.children if view is not None else []:
        item = child.item if isinstance(child, discord.ui.DynamicItem) else child
        if isinstance(item, discord.ui.Button) and units(item.label) > 80:
            problems.append(f"button label {units(item.label)} > 80")
        if isinstance(item, discord.ui.Select):
            if units(item.placeholder) > 150:
                problems.append(f"placeholder {units(item.placeholder)} > 150")
            if len(item.options) > 25:
                problems.append(f"{len(item.options)} options > 25")
            for option in item.options:
                for text in (option.label, option.value, option.description):
                    if units(text) > 100:
                        problems.append(f"option text {units(text)} > 100")
    return problems


# -- tables with long names ----------------------------------------------------------------


def facts_for(game: str, count: int, status: str, name: str) -> TableFacts:
    """A table of `count` players all called `name`."""
    players = PLAYERS[:count]
    return TableFacts(
        id=123456,
        game=game,
        status=status,
        host_id=int(players[0]),
        seats=tuple(int(player) for player in players),
        options={"open_chips": True},
        names=dict.fromkeys(players, name),
        computers={},
        min_players=3,
        max_players=count,
        move_number=42,
    )


def nothanks_game(count: int, *, to_the_end: bool) -> NoThanksGame:
    """A No Thanks! game with open chips: 30 mixed moves, or played to its end."""
    game = NoThanksGame.new(PLAYERS[:count], seed=3, open_chips=True)
    moves = 0
    while not game.is_over and (to_the_end or moves < 30):
        assert game.active_player is not None
        legal = game.legal_actions()
        game.apply(game.active_player, legal[moves % len(legal)])
        moves += 1
    return game


def rage_game(*, to_the_end: bool) -> RageState:
    """An eight-player Rage game: mid-trick in round 4, or played to its end."""
    state = RageState.new(PLAYERS, seed=5)
    while not state.is_over and (to_the_end or state.round < 4 or not state.view(None).trick):
        player = state.acting_players()[0]
        state.apply(player, state.legal_actions(player)[0])
    return state


Render = Callable[[], MessageFields]


def scenarios(name: str, locale: str) -> dict[str, tuple[Render, Render | None]]:
    """Per message: (the message as sent, the same message before `fit`, if reachable)."""
    nt_renderer, rage_renderer = nothanks.NoThanksRenderer(), rage.RageRenderer()
    lobby_facts = facts_for("rage", 8, "lobby", name)
    lobby = PublicTable(lobby_facts, None, invited=(1, 2, 3))
    nt_running = nothanks_game(7, to_the_end=False)
    nt_over = nothanks_game(7, to_the_end=True)
    nt_facts = facts_for("nothanks", 7, "running", name)
    nt_final_facts = facts_for("nothanks", 7, "finished", name)
    rage_running = rage_game(to_the_end=False)
    rage_over = rage_game(to_the_end=True)
    rage_facts = facts_for("rage", 8, "running", name)
    rage_final_facts = facts_for("rage", 8, "finished", name)
    active = nt_running.active_player
    assert active is not None
    acting = rage_running.acting_players()[0]
    return {
        "lobby": (
            lambda: public_message(lobby, rage_renderer, locale),
            lambda: {"embed": lobby_embed(lobby, rage_renderer, locale)},
        ),
        "nothanks table": (
            lambda: public_message(
                PublicTable(nt_facts, nt_running.view(None), deadline=1.9e9, away=(active,)),
                nt_renderer,
                locale,
            ),
            lambda: {"embed": nothanks.game_embed(nt_facts, nt_running.view(None), locale)},
        ),
        "nothanks final": (
            lambda: public_message(
                PublicTable(nt_final_facts, nt_over.view(None)), nt_renderer, locale
            ),
            lambda: {"embed": nothanks.final_embed(nt_final_facts, nt_over.view(None), locale)},
        ),
        "nothanks private": (
            lambda: nt_renderer.private(nt_facts, nt_running.view(active), locale),
            None,
        ),
        "rage table": (
            lambda: public_message(
                PublicTable(rage_facts, rage_running.view(None), deadline=1.9e9),
                rage_renderer,
                locale,
            ),
            lambda: {"embed": rage.game_embed(rage_facts, rage_running.view(None), locale)},
        ),
        "rage final": (
            lambda: public_message(
                PublicTable(rage_final_facts, rage_over.view(None)), rage_renderer, locale
            ),
            lambda: {"embed": rage.final_embed(rage_final_facts, rage_over.view(None), locale)},
        ),
        "rage hand": (
            lambda: rage_renderer.private(rage_facts, rage_running.view(acting), locale),
            None,
        ),
    }


@pytest.mark.parametrize("name", sorted(NAMES))
@pytest.mark.parametrize("locale", LANGUAGES)
def test_every_message_fits_with_long_names(name: str, locale: str) -> None:
    """Lobby, both games' tables, scoreboards and private views keep every limit."""
    problems = {
        label: within_limits(sent()) for label, (sent, _) in scenarios(NAMES[name], locale).items()
    }
    assert {label: found for label, found in problems.items() if found} == {}


@pytest.mark.parametrize("locale", LANGUAGES)
def test_long_names_overflowed_before_fit(locale: str) -> None:
    """Unfitted, the names break Discord's limits: the test above is not vacuous. The live
    Rage table is the exception by design: its lines cut each name to whole words within
    24 characters (`line_name`), so it keeps within the limits even before `fit`."""
    broken = {
        label: within_limits(unfitted())
        for label, (_, unfitted) in scenarios(FAMILIES, locale).items()
        if unfitted is not None
    }
    assert broken["lobby"], broken
    assert broken["rage table"] == [], broken
    assert broken["rage final"] or broken["nothanks final"], broken


@pytest.mark.parametrize("locale", LANGUAGES)
def test_fitted_table_keeps_what_fits(locale: str) -> None:
    """Shortening cuts only what is too long: the rest of a message is left as it was."""
    facts = facts_for("rage", 8, "running", FAMILIES)
    state = rage_game(to_the_end=False)
    before = rage.game_embed(facts, state.view(None), locale)
    after = public_message(PublicTable(facts, state.view(None)), rage.RageRenderer(), locale)
    embed = after["embed"]
    assert embed.title == before.title
    assert embed.footer.text == before.footer.text
    for old, new in zip(before.fields, embed.fields, strict=True):
        if units(old.value) <= FIELD_VALUE:
            assert new.value == old.value
        else:
            assert new.value.endswith(ELLIPSIS)
            assert old.value.startswith(new.value[: -len(ELLIPSIS)])


# -- fit itself ----------------------------------------------------------------------------


def test_shorten_counts_utf16_and_keeps_pairs_whole() -> None:
    """An emoji outside the BMP counts 2 and is never cut in half."""
    assert shorten("🃏" * 5, 10) == "🃏" * 5
    cut = shorten("🃏" * 5, 9)
    assert cut == "🃏" * 4 + ELLIPSIS
    assert units(cut) == 9
    cut = shorten("a" + "🃏" * 5, 9)  # the 9th unit is half a joker: it goes whole
    assert cut == "a" + "🃏" * 3 + ELLIPSIS
    assert units(cut) == 8


def test_shorten_drops_a_dangling_backslash() -> None:
    """A cut after an escaping backslash would escape the ellipsis: the backslash goes too."""
    assert shorten("ab\\*cd", 4) == "ab" + ELLIPSIS


def test_code_block_stays_closed() -> None:
    """A score sheet cut to size keeps its header, its totals and its closing fence."""
    rows = [f"{n:<2} {'+10'.rjust(6)} {'-5'.rjust(6)}" for n in range(1, 11)]
    block = "\n".join([FENCE, "R  " + "name".rjust(6) * 2, *rows, "Σ  " + "100".rjust(6), FENCE])
    cut = shorten(block, 120)
    assert units(cut) <= 120
    lines = cut.split("\n")
    assert lines[0] == FENCE and lines[-1] == FENCE and cut.count(FENCE) == 2
    assert lines[1].startswith("R  ") and lines[-2].startswith("Σ  ")
    assert ELLIPSIS in lines
    assert shorten_block(block, 1000) == block


def test_fit_shortens_components_and_content() -> None:
    """Labels, placeholders, options and content are cut; extra options are dropped."""
    view = discord.ui.View()
    view.add_item(discord.ui.Button(label="🃏" * 60, custom_id="b"))
    select: discord.ui.Select[Any] = discord.ui.Select(
        custom_id="s",
        placeholder="p" * 200,
        options=[discord.SelectOption(label=f"{n}" + "x" * 120, value=str(n)) for n in range(26)],
    )
    view.add_item(select)
    fields: MessageFields = {"content": "c" * 2500, "view": view}
    assert within_limits(fields)
    assert within_limits(fit(fields)) == []
    assert fields["content"].endswith(ELLIPSIS)
    assert [option.value for option in select.options] == [str(n) for n in range(25)]


def test_fit_keeps_the_embed_total() -> None:
    """Many full fields are shortened until all embed texts together fit in 6,000."""
    embed = discord.Embed(title="t", description="d" * 4000)
    for number in range(25):
        embed.add_field(name=f"field {number}", value="v" * 1000)
    fields = fit({"embed": embed})
    assert within_limits(fields) == []
    assert embed.fields[0].name == "field 0"
