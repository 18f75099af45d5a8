"""Table components: StaticView sends what discord.py's View would, laid out as it lays out."""

from __future__ import annotations

import dataclasses
from typing import Any

import discord
import pytest
from discord.http import handle_message_parameters

from bot.engines.rage import Phase, RageState
from bot.render.components import (
    ROWS,
    StaticView,
    TableButton,
    TableSelect,
    balanced_rows,
    custom_id,
)
from bot.render.limits import BUTTON_LABEL, OPTION_TEXT, PLACEHOLDER, fit
from bot.render.rage import hand_message
from bot.render.records import ReplayButton
from bot.render.table import rating_note
from tests.render.images.scenes import facts


def options(count: int = 3) -> list[discord.SelectOption]:
    """A few select options, one with an emoji and a description."""
    found = [discord.SelectOption(label=f"Option {n}", value=f"v{n}") for n in range(count)]
    found[0] = discord.SelectOption(label="Red", value="r", emoji="🟥", description="a colour")
    return found


def items() -> list[discord.ui.Item[Any]]:
    """Buttons of each style, with and without emoji, disabled, a select and a DynamicItem."""
    return [
        TableButton.make(
            "nothanks", 12, 3, "take", label="Take", style=discord.ButtonStyle.success
        ),
        TableButton.make("nothanks", 12, 3, "pass", label="No thanks!", disabled=True),
        TableButton.make("nothanks", 12, 3, "chips", label="My chips", emoji="🪙"),
        TableSelect.make("rage", 4, 9, "bid", placeholder="Your bid", options=options()),
        ReplayButton.make(12, 5, "n", label="Next", disabled=False, emoji="⏩", row=2),
        TableButton.make("rage", 4, 9, "play", label="🟥 7", arg="r7"),
    ]


async def test_static_view_sends_what_a_view_sends() -> None:
    """Built from the same items, both send the same action rows, key for key."""
    view = discord.ui.View(timeout=None)
    static = StaticView()
    for item in items():
        view.add_item(item)
        static.add_item(item)
    assert static.to_components() == view.to_components()
    assert [list(row["components"][0]) for row in static.to_components()] == [
        list(row["components"][0]) for row in view.to_components()
    ]


async def test_add_button_writes_the_payload_a_button_writes() -> None:
    """add_button, written directly, equals TableButton.make's payload."""
    for emoji, disabled, style in ((None, False, discord.ButtonStyle.danger), ("🪙", True, None)):
        made = TableButton.make(
            "nothanks",
            7,
            2,
            "pass",
            label="No thanks!",
            emoji=emoji,
            disabled=disabled,
            style=style or discord.ButtonStyle.secondary,
        )
        static = StaticView().add_button(
            custom_id("nothanks", 7, 2, "pass"),
            label="No thanks!",
            emoji=emoji,
            disabled=disabled,
            style=style or discord.ButtonStyle.secondary,
        )
        assert static.to_components()[0]["components"] == [made.to_component_dict()]


def test_layout_follows_discord_py() -> None:
    """Five buttons a row; a select fills a row of its own; a row can be named; a full view
    refuses more, as discord.py's does."""
    static = StaticView()
    for n in range(7):
        static.add_button(f"ct:g:1:0:b{n}", label=str(n))
    static.add_item(TableSelect.make("g", 1, 0, "s", placeholder="p", options=options()))
    static.add_button("ct:g:1:0:late", label="late", row=1)
    rows = [[c["custom_id"] for c in row["components"]] for row in static.to_components()]
    assert rows == [
        [f"ct:g:1:0:b{n}" for n in range(5)],
        ["ct:g:1:0:b5", "ct:g:1:0:b6", "ct:g:1:0:late"],
        ["selct:g:1:0:s"],
    ]
    for name in ("t", "u"):  # rows 3 and 4
        static.add_item(TableSelect.make("g", 1, 0, name, placeholder="p", options=options()))
    with pytest.raises(ValueError):
        static.add_item(TableSelect.make("g", 1, 0, "v", placeholder="p", options=options()))
    full = StaticView()
    for n in range(ROWS * 5):
        full.add_button(f"ct:g:1:0:{n}", label=str(n))
    with pytest.raises(ValueError):
        full.add_button("ct:g:1:0:one_more", label="x")


def test_children_read_as_items() -> None:
    """children gives discord.py items equal to the payloads, in their rows."""
    static = StaticView()
    for item in items():
        static.add_item(item)
    children = static.children
    assert [type(child) for child in children] == [
        discord.ui.Button,
        discord.ui.Button,
        discord.ui.Button,
        discord.ui.Button,
        discord.ui.Select,
        discord.ui.Button,
    ]
    labels = [child.label for child in children if isinstance(child, discord.ui.Button)]
    assert labels == ["Take", "No thanks!", "My chips", "🟥 7", "Next"]
    select = next(child for child in children if isinstance(child, discord.ui.Select))
    assert [option.label for option in select.options] == ["Red", "Option 1", "Option 2"]
    assert [child.to_component_dict() for child in children] == [
        component for row in static.to_components() for component in row["components"]
    ]


def test_never_kept_by_discord_py() -> None:
    """Stopped from the start, not dispatchable, no timeout: discord.py stores it nowhere."""
    static = StaticView().add_button("ct:g:1:0:a", label="a")
    assert isinstance(static, discord.ui.View)
    assert static.is_finished() and not static.is_dispatchable() and not static.is_persistent()
    assert static.timeout is None and not static.has_components_v2()
    static.timeout = 900.0  # what discord.py does to an ephemeral message's view it keeps
    assert static.timeout is None
    with handle_message_parameters(content="x", view=static) as params:
        assert params.payload["components"] == static.to_components()


def test_fit_shortens_a_static_views_texts() -> None:
    """Labels, placeholders and option texts past Discord's limits are cut in the payload."""
    long = "x" * 200
    static = StaticView().add_button("ct:g:1:0:a", label=long)
    select = TableSelect.make(
        "g",
        1,
        0,
        "s",
        placeholder=long,
        options=[discord.SelectOption(label=long, value=f"v{n}") for n in range(25)],
    )
    static.add_item(select)
    payload = static.to_components()[1]["components"][0]
    payload["options"].append({"label": "26th", "value": "26", "default": False})
    fit({"view": static})
    button, menu = (row["components"][0] for row in static.to_components())
    assert len(button["label"]) == BUTTON_LABEL and button["label"].endswith("…")
    assert len(menu["placeholder"]) == PLACEHOLDER
    assert len(menu["options"]) == 25
    assert all(len(option["label"]) == OPTION_TEXT for option in menu["options"])


@pytest.mark.parametrize(
    ("count", "per_row", "sizes"),
    [
        (0, 4, []),
        (1, 4, [1]),
        (4, 4, [4]),
        (5, 4, [3, 2]),
        (9, 4, [3, 3, 3]),
        (9, 5, [5, 4]),
        (10, 4, [4, 3, 3]),
        (11, 5, [4, 4, 3]),
        (7, 3, [3, 2, 2]),
    ],
)
def test_balanced_rows_never_leave_a_button_alone(
    count: int, per_row: int, sizes: list[int]
) -> None:
    """Buttons fill rows of at most per_row as evenly as they can (9 cards: 3 + 3 + 3)."""
    rows = balanced_rows(count, per_row)
    assert [rows.count(row) for row in sorted(set(rows))] == sizes
    assert rows == sorted(rows)


@pytest.mark.parametrize("round_number", range(1, 11))
def test_the_rage_panel_leaves_no_card_alone_on_a_row(round_number: int) -> None:
    """Every round's hand sits in rows of two to four card buttons (one card: one row)."""
    players = ["100", "101", "102"]
    state = RageState.new(players, seed=round_number)
    while state.round < round_number or state.phase is not Phase.PLAYING:
        (player,) = state.acting_players()
        state.apply(player, state.legal_actions(player)[0])
    player = str(state.acting_players()[0])
    fields = hand_message(facts("rage", 3), state.view(player), "en")
    rows = [len(row["components"]) for row in fields["view"].to_components()]
    assert sum(rows) == len(state.hand(player))
    assert all(2 <= size <= 4 for size in rows) or rows == [1]
    assert max(rows) - min(rows) <= 1


def test_the_final_board_shows_the_rating_change_not_a_rating() -> None:
    """A finished game's row ends in the change on the displayed scale ("Δ +36")."""
    table = dataclasses.replace(facts("nothanks", 3), rating_changes={"100": 1.8, "101": -0.6})
    assert rating_note(table, "100", "en") == " · Δ +36"
    assert rating_note(table, "101", "de") == " · Δ −12"
    assert rating_note(table, "102", "en") == ""


def test_table_lines_name_a_computer_without_its_level() -> None:
    """'🤖 Computer 1 (normal)' on every line wrapped on a phone: the lines say '🤖 Computer 1'."""
    table = dataclasses.replace(
        facts("rage", 3),
        names={"100": "ana", "-1": "🤖 Computer 1 (normal)"},
        computers={"-1": "normal"},
    )
    assert table.short_name("-1") == "🤖 Computer 1"
    assert table.name("-1") == "🤖 Computer 1 (normal)"  # the lobby and final board say it
    assert table.short_name("100") == "ana"
