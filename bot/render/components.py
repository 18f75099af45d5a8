"""Table components: buttons and selects whose custom_id carries the table and the move.

A click on one is routed by the bot from its custom_id alone (`parse_click`, then
bot.client.routing), so the buttons of any message, however old and across restarts, keep
answering. They are not discord.py `DynamicItem`s: for each click those rebuild the whole
message's view from the payload before calling back, work that nothing here uses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import discord

# ct:<game>:<table id>:<move number>:<action>[:<argument>]
CUSTOM_ID = re.compile(
    r"ct:(?P<game>[a-z]+):(?P<table>[0-9]+):(?P<move>[0-9]+):(?P<action>[a-z_]+)"
    r"(?::(?P<arg>[A-Za-z0-9+_-]{0,40}))?"
)


# How every table component's custom_id starts (buttons, then selects).
TABLE_PREFIXES = ("ct:", "selct:")


def custom_id(game: str, table_id: int, move: int, action: str, arg: str = "") -> str:
    """The custom_id of a table component."""
    base = f"ct:{game}:{table_id}:{move}:{action}"
    return f"{base}:{arg}" if arg else base


@dataclass(frozen=True, slots=True)
class Click:
    """A table component's custom_id, parsed, with the values a select sent."""

    game: str
    table_id: int
    move: int
    action: str
    arg: str = ""
    values: tuple[str, ...] = ()

    @classmethod
    def parse(cls, match: re.Match[str], values: Sequence[str] = ()) -> Click:
        """From a custom_id match."""
        return cls(
            match["game"],
            int(match["table"]),
            int(match["move"]),
            match["action"],
            match["arg"] or "",
            tuple(values),
        )


def parse_custom_id(raw: str, values: Sequence[str] = ()) -> Click | None:
    """A table component's custom_id (button or select), or None if it is not one."""
    match = CUSTOM_ID.fullmatch(raw) or SELECT_ID.fullmatch(raw)
    return None if match is None else Click.parse(match, values)


def parse_click(data: Mapping[str, Any] | None) -> Click | None:
    """The table click an interaction's data names (with a select's values), or None."""
    if not data:
        return None
    raw = data.get("custom_id")
    if not isinstance(raw, str) or not raw.startswith(TABLE_PREFIXES):
        return None
    values = data.get("values") or ()
    return parse_custom_id(raw, [str(value) for value in values])


class TableButton(discord.ui.Button[Any]):
    """Every table button; its custom_id carries the game, table id, move number and action."""

    @classmethod
    def make(
        cls,
        game: str,
        table_id: int,
        move: int,
        action: str,
        *,
        label: str,
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
        disabled: bool = False,
        emoji: str | None = None,
        arg: str = "",
    ) -> TableButton:
        """A button for one action of one table at one move."""
        return cls(
            label=label,
            style=style,
            disabled=disabled,
            emoji=emoji,
            custom_id=custom_id(game, table_id, move, action, arg),
        )


SELECT_ID = re.compile("sel" + CUSTOM_ID.pattern)


class TableSelect(discord.ui.Select[Any]):
    """Every table select menu (bids, cards, colours), with the same custom_id scheme."""

    @classmethod
    def make(
        cls,
        game: str,
        table_id: int,
        move: int,
        action: str,
        *,
        placeholder: str,
        options: Sequence[discord.SelectOption],
        arg: str = "",
    ) -> TableSelect:
        """A select for one action of one table at one move."""
        return cls(
            custom_id="sel" + custom_id(game, table_id, move, action, arg),
            placeholder=placeholder,
            options=list(options),
            min_values=1,
            max_values=1,
        )


# Buttons, selects: how wide each is in an action row of five (as discord.py counts).
_WIDTH = {2: 1, 3: 5, 5: 5, 6: 5, 7: 5, 8: 5}
ROWS = 5


class StaticView(discord.ui.View):
    """Components the bot routes itself (`parse_click`): discord.py sends them, never keeps
    them, never times them out.

    They are held as the component payloads discord.py would send, laid out in rows as it
    lays them out. A view is built for every table message of every move, and discord.py's
    own (a future, a random id, item objects with their weights) cost more to build than
    the rest of the message's components. ``children`` gives item objects built from
    those payloads, to read.
    """

    # View.__init__ is not called on purpose: all it sets up serves a view discord.py
    # keeps and dispatches to, and every method that would use it is overridden here.
    def __init__(self) -> None:
        self.rows: list[list[dict[str, Any]]] = [[] for _ in range(ROWS)]

    def __repr__(self) -> str:
        return f"<StaticView components={sum(len(row) for row in self.rows)}>"

    def add(self, component: dict[str, Any], *, row: int | None = None) -> StaticView:
        """Add one component's payload where discord.py would put it (the first row with
        room, or ``row``); ValueError when there is no room."""
        width = _WIDTH.get(component["type"], 1)
        candidates = range(ROWS) if row is None else (row,)
        for index in candidates:
            used = sum(_WIDTH.get(c["type"], 1) for c in self.rows[index])
            if used + width <= ROWS:
                self.rows[index].append(component)
                return self
        raise ValueError("no room left for this component")

    def add_item(self, item: discord.ui.Item[Any]) -> StaticView:
        """Add a discord.py item (a button, a select, a DynamicItem) by its payload."""
        return self.add(dict(item.to_component_dict()), row=item.row)

    def add_button(
        self,
        custom_id: str,
        *,
        label: str,
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
        disabled: bool = False,
        emoji: str | None = None,
        row: int | None = None,
    ) -> StaticView:
        """Add a button, written directly as its payload."""
        # The keys and their order as discord.py's Button writes them.
        component: dict[str, Any] = {"type": 2, "style": style.value, "disabled": disabled}
        if label:
            component["label"] = label
        component["custom_id"] = custom_id
        if emoji:
            component["emoji"] = {"id": None, "name": emoji}
        return self.add(component, row=row)

    @property
    def children(self) -> list[discord.ui.Item[Any]]:
        """The components as discord.py items, built afresh from their payloads (to read)."""
        items: list[discord.ui.Item[Any]] = []
        for index, row in enumerate(self.rows):
            for component in row:
                items.append(_item_of(component, index))
        return items

    @property
    def timeout(self) -> float | None:
        """Never: nothing waits on this view."""
        return None

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        pass  # discord.py sets one only on views it keeps

    def to_components(self) -> list[dict[str, Any]]:
        """The action rows, as discord.py's View sends them."""
        return [{"type": 1, "components": list(row)} for row in self.rows if row]

    def has_components_v2(self) -> bool:
        """Plain action rows only."""
        return False

    def is_dispatchable(self) -> bool:
        """discord.py must not keep it: the bot routes the clicks itself."""
        return False

    def is_finished(self) -> bool:
        """Stopped from the start."""
        return True

    def is_persistent(self) -> bool:
        """Not registered with discord.py (its clicks are routed by custom id)."""
        return False

    def stop(self) -> None:
        """Nothing to stop."""

    def walk_children(self) -> Any:
        """Every component, as items."""
        yield from self.children

    def clear_items(self) -> StaticView:
        """Remove every component."""
        self.rows = [[] for _ in range(ROWS)]
        return self


def _item_of(component: dict[str, Any], row: int) -> discord.ui.Item[Any]:
    """A discord.py item equal to a component payload (buttons and string selects)."""
    emoji = component.get("emoji")
    if component["type"] == 2:
        return discord.ui.Button(
            label=component.get("label"),
            custom_id=component.get("custom_id"),
            url=component.get("url"),
            style=discord.ButtonStyle(component.get("style", 2)),
            disabled=bool(component.get("disabled")),
            emoji=discord.PartialEmoji.from_dict(emoji) if emoji else None,
            row=row,
        )
    return discord.ui.Select(
        custom_id=component.get("custom_id", ""),
        placeholder=component.get("placeholder"),
        min_values=component.get("min_values", 1),
        max_values=component.get("max_values", 1),
        disabled=bool(component.get("disabled")),
        options=[
            discord.SelectOption(
                label=option["label"],
                value=option.get("value", option["label"]),
                description=option.get("description"),
                emoji=discord.PartialEmoji.from_dict(option["emoji"])
                if option.get("emoji")
                else None,
                default=bool(option.get("default")),
            )
            for option in component.get("options", [])
        ],
        row=row,
    )


def balanced_rows(count: int, per_row: int) -> list[int]:
    """The row of each of ``count`` buttons, at most ``per_row`` a row and rows as even as
    they can be, so that no button is left alone on a row (Discord's phone app wraps a row
    by width, not by five: 9 cards in rows of 5 showed as 4 + 1 + 4)."""
    if count <= 0:
        return []
    rows = -(-count // per_row)
    base, extra = divmod(count, rows)
    sizes = [base + 1] * extra + [base] * (rows - extra)
    return [row for row, size in enumerate(sizes) for _ in range(size)]


def static_view() -> StaticView:
    """A view for components the bot routes itself: discord.py never keeps it."""
    return StaticView()
