"""Table components: buttons and selects whose custom_id carries the table and the move.

A click on one is routed by the bot from its custom_id alone (`parse_click`, then the
bot's `route_click`), so the buttons of any message, however old and across restarts, keep
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
    if not isinstance(raw, str) or not raw.startswith(("ct:", "selct:")):
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


def static_view() -> discord.ui.View:
    """A view for components the bot routes itself: discord.py need not keep it.

    Stopping it before it is sent keeps discord.py from storing it per message (and, for
    ephemeral messages, from starting a 15-minute expiry timer for each one).
    """
    view = discord.ui.View(timeout=None)
    view.stop()
    return view
