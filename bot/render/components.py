"""Table components: buttons and selects whose custom_id carries the table and the move.

They are `DynamicItem`s, so they answer after a restart too; a click is handed to the
bot's router (`route_click`), never to a cog directly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import discord

from bot.i18n import t

# ct:<game>:<table id>:<move number>:<action>[:<argument>]
CUSTOM_ID = re.compile(
    r"ct:(?P<game>[a-z]+):(?P<table>[0-9]+):(?P<move>[0-9]+):(?P<action>[a-z_]+)"
    r"(?::(?P<arg>[A-Za-z0-9+_-]{0,40}))?"
)


def custom_id(game: str, table_id: int, move: int, action: str, arg: str = "") -> str:
    """The custom_id of a table component."""
    base = f"ct:{game}:{table_id}:{move}:{action}"
    return f"{base}:{arg}" if arg else base


class ClickRouter(Protocol):
    """Whoever answers table components (the bot); render never imports the cog layer."""

    async def route_click(self, interaction: discord.Interaction, click: Click) -> None:
        """Handle one click or choice."""
        ...


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


def parse_custom_id(raw: str) -> Click | None:
    """A table component's custom_id (button or select), or None if it is not one."""
    match = CUSTOM_ID.fullmatch(raw) or SELECT_ID.fullmatch(raw)
    return None if match is None else Click.parse(match)


async def _dispatch(
    interaction: discord.Interaction, match: re.Match[str], values: list[str]
) -> None:
    router = interaction.client
    click = Click.parse(match, values)
    if not hasattr(router, "route_click"):
        await interaction.response.send_message(
            t("error.unavailable", interaction.locale), ephemeral=True
        )
        return
    await cast(ClickRouter, router).route_click(interaction, click)


class TableButton(discord.ui.DynamicItem[discord.ui.Button], template=CUSTOM_ID.pattern):
    """Every table button; its custom_id carries the game, table id, move number and action."""

    def __init__(self, button: discord.ui.Button, match: re.Match[str] | None = None) -> None:
        super().__init__(button)
        self.match = match or CUSTOM_ID.fullmatch(button.custom_id or "")

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
            discord.ui.Button(
                label=label,
                style=style,
                disabled=disabled,
                emoji=emoji,
                custom_id=custom_id(game, table_id, move, action, arg),
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> TableButton:
        """Rebuild the button from a click, after a restart too."""
        assert isinstance(item, discord.ui.Button)
        return cls(item, match)

    async def callback(self, interaction: discord.Interaction) -> None:
        """Hand the click to the router."""
        assert self.match is not None
        await _dispatch(interaction, self.match, [])


SELECT_ID = re.compile("sel" + CUSTOM_ID.pattern)


class TableSelect(discord.ui.DynamicItem[discord.ui.Select], template=SELECT_ID.pattern):
    """Every table select menu (bids, cards, colours), with the same custom_id scheme."""

    def __init__(self, select: discord.ui.Select, match: re.Match[str] | None = None) -> None:
        super().__init__(select)
        self.match = match or SELECT_ID.fullmatch(select.custom_id or "")

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
            discord.ui.Select(
                custom_id="sel" + custom_id(game, table_id, move, action, arg),
                placeholder=placeholder,
                options=list(options),
                min_values=1,
                max_values=1,
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> TableSelect:
        """Rebuild the select from a choice, after a restart too."""
        assert isinstance(item, discord.ui.Select)
        return cls(item, match)

    async def callback(self, interaction: discord.Interaction) -> None:
        """Hand the choice to the router."""
        assert self.match is not None
        await _dispatch(interaction, self.match, list(self.item.values))


def static_view() -> discord.ui.View:
    """A view for components that DynamicItems answer: discord.py need not keep it.

    Stopping it before it is sent keeps discord.py from storing it per message (and, for
    ephemeral messages, from starting a 15-minute expiry timer for each one).
    """
    view = discord.ui.View(timeout=None)
    view.stop()
    return view
