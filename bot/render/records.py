"""The records' messages: the history list, a replay step, forget-me's confirmation.

Their components are `DynamicItem`s whose custom_id carries all they need (a page, a
table and a step), so they answer after a restart too; a click is handed to the cog
registered under `RECORDS_COG`, never imported here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import discord

from bot.i18n import t
from bot.render.components import static_view
from bot.render.images.cache import Picture
from bot.render.limits import fit
from bot.render.table import played_for, public_picture
from bot.table.replay import GameSummary, Position, StoredGame, StoredSeat, is_anonymous
from bot.table.spec import (
    GameRenderer,
    GameSpec,
    MessageFields,
    PublicTable,
    TableFacts,
    escape_name,
)

# The cog that answers these components (cogs/cardtable.py registers under this name).
RECORDS_COG = "Cardtable"
PAGE_SIZE = 10  # games per history page (a select holds at most 25)
MEDAL = "🏆"

# hp:<page>:<p|n>  (previous/next: two buttons may name one page, ids must differ)
HISTORY_PAGE = re.compile(r"hp:(?P<page>[0-9]{1,6}):(?P<tag>[a-z])")
# hs:<page>, the select of one page; its value is the chosen table id
HISTORY_CHOICE = re.compile(r"hs:(?P<page>[0-9]{1,6})")
# rp:<table>:<step>:<tag>  (first, previous, next, last, previous/next round)
REPLAY_STEP = re.compile(r"rp:(?P<table>[0-9]{1,18}):(?P<step>[0-9]{1,6}):(?P<tag>[a-z])")
# fm:<yes|no>: forget-me's confirmation; it forgets whoever clicks, so it carries no id
FORGET = re.compile(r"fm:(?P<answer>yes|no)")


class RecordsHandler(Protocol):
    """Whoever answers the records' components (the settings cog)."""

    async def show_history_page(self, interaction: discord.Interaction, page: int) -> None:
        """Edit the history list to another page."""
        ...

    async def open_replay(self, interaction: discord.Interaction, table_id: int) -> None:
        """Open a private replay of a chosen game."""
        ...

    async def show_replay_step(
        self, interaction: discord.Interaction, table_id: int, step: int
    ) -> None:
        """Edit a replay to another step."""
        ...

    async def answer_forget(self, interaction: discord.Interaction, confirmed: bool) -> None:
        """Carry out or drop a confirmed forget-me."""
        ...


async def _handler(interaction: discord.Interaction) -> RecordsHandler | None:
    """The cog that answers, or None (answered as unavailable) while it is not loaded."""
    client = cast(Any, interaction.client)
    cog = client.get_cog(RECORDS_COG) if hasattr(client, "get_cog") else None
    if cog is None:
        await interaction.response.send_message(
            t("error.unavailable", interaction.locale), ephemeral=True
        )
        return None
    return cast(RecordsHandler, cog)


class HistoryPageButton(discord.ui.DynamicItem[discord.ui.Button], template=HISTORY_PAGE.pattern):
    """◀ ▶ under the history list."""

    def __init__(self, button: discord.ui.Button, page: int) -> None:
        super().__init__(button)
        self.page = page

    @classmethod
    def make(cls, page: int, tag: str, label: str, disabled: bool) -> HistoryPageButton:
        """A button that shows page ``page``."""
        button: discord.ui.Button = discord.ui.Button(
            label=label, custom_id=f"hp:{page}:{tag}", disabled=disabled
        )
        return cls(button, page)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> HistoryPageButton:
        """Rebuild the button from a click."""
        assert isinstance(item, discord.ui.Button)
        return cls(item, int(match["page"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        """Show the page."""
        handler = await _handler(interaction)
        if handler is not None:
            await handler.show_history_page(interaction, self.page)


class HistorySelect(discord.ui.DynamicItem[discord.ui.Select], template=HISTORY_CHOICE.pattern):
    """The games of one history page; choosing one opens its replay."""

    @classmethod
    def make(
        cls, page: int, placeholder: str, options: Sequence[discord.SelectOption]
    ) -> HistorySelect:
        """The select of one page."""
        select: discord.ui.Select = discord.ui.Select(
            custom_id=f"hs:{page}", placeholder=placeholder, options=list(options)
        )
        return cls(select)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> HistorySelect:
        """Rebuild the select from a choice."""
        assert isinstance(item, discord.ui.Select)
        return cls(item)

    async def callback(self, interaction: discord.Interaction) -> None:
        """Open the chosen game (a forged value that is no table id is ignored)."""
        values = self.item.values
        if not values or not values[0].isdigit():
            await interaction.response.defer()
            return
        handler = await _handler(interaction)
        if handler is not None:
            await handler.open_replay(interaction, int(values[0]))


class ReplayButton(discord.ui.DynamicItem[discord.ui.Button], template=REPLAY_STEP.pattern):
    """⏮ ◀ ▶ ⏭ and the round jumps of a replay: each names the step it shows."""

    def __init__(self, button: discord.ui.Button, table_id: int, step: int) -> None:
        super().__init__(button)
        self.table_id = table_id
        self.step = step

    @classmethod
    def make(
        cls,
        table_id: int,
        step: int,
        tag: str,
        *,
        label: str,
        disabled: bool,
        emoji: str | None = None,
        row: int = 0,
    ) -> ReplayButton:
        """A button that shows step ``step`` of table ``table_id``'s replay."""
        button: discord.ui.Button = discord.ui.Button(
            label=label,
            emoji=emoji,
            custom_id=f"rp:{table_id}:{step}:{tag}",
            disabled=disabled,
            row=row,
        )
        return cls(button, table_id, step)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ReplayButton:
        """Rebuild the button from a click."""
        assert isinstance(item, discord.ui.Button)
        return cls(item, int(match["table"]), int(match["step"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        """Show the step."""
        handler = await _handler(interaction)
        if handler is not None:
            await handler.show_replay_step(interaction, self.table_id, self.step)


class ForgetButton(discord.ui.DynamicItem[discord.ui.Button], template=FORGET.pattern):
    """Forget-me's confirmation: yes or no."""

    def __init__(self, button: discord.ui.Button, confirmed: bool) -> None:
        super().__init__(button)
        self.confirmed = confirmed

    @classmethod
    def make(cls, confirmed: bool, label: str) -> ForgetButton:
        """The confirming (danger) or the cancelling button."""
        button: discord.ui.Button = discord.ui.Button(
            label=label,
            custom_id=f"fm:{'yes' if confirmed else 'no'}",
            style=discord.ButtonStyle.danger if confirmed else discord.ButtonStyle.secondary,
        )
        return cls(button, confirmed)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ForgetButton:
        """Rebuild the button from a click."""
        assert isinstance(item, discord.ui.Button)
        return cls(item, match["answer"] == "yes")

    async def callback(self, interaction: discord.Interaction) -> None:
        """Forget the clicker, or not."""
        handler = await _handler(interaction)
        if handler is not None:
            await handler.answer_forget(interaction, self.confirmed)


ITEMS = (HistoryPageButton, HistorySelect, ReplayButton, ForgetButton)


# -- names ---------------------------------------------------------------------------------


def seat_name(seat: StoredSeat, locale: object) -> str:
    """A seat's name as stored; a forgotten person is a 'former player' in any language."""
    if is_anonymous(seat.player) or is_anonymous(seat.seat_player):
        return t("history.former_player", locale)
    return seat.name


@dataclass(frozen=True, slots=True)
class ReplayFacts(TableFacts):
    """A stored table's facts: people are named, never mentioned (they may have left)."""

    def mention(self, player: str | int) -> str:
        """The name the player had at the table."""
        return self.name(player)


def replay_facts(spec: GameSpec, game: StoredGame, locale: object, *, final: bool) -> TableFacts:
    """What the game's renderer may show about a stored game at one step."""
    seats = game.seats
    return ReplayFacts(
        id=game.table_id,
        game=game.game,
        status=game.status if final else "running",
        host_id=0,
        seats=tuple(int(seat.seat_player) for seat in seats),
        options=dict(game.options),
        names={seat.seat_player: seat_name(seat, locale) for seat in seats},
        computers={seat.seat_player: seat.level for seat in seats if seat.level is not None},
        min_players=spec.min_players,
        max_players=spec.max_players,
        move_number=len(game.moves),
        rating_changes={
            seat.player: seat.rating_change for seat in seats if seat.rating_change is not None
        },
    )


# -- the history list ----------------------------------------------------------------------


def _names(seats: Sequence[StoredSeat], locale: object) -> str:
    return ", ".join(escape_name(seat_name(seat, locale)) for seat in seats)


def _plain_names(seats: Sequence[StoredSeat], locale: object) -> str:
    # Select options show text as written: no markdown to escape.
    return ", ".join(" ".join(seat_name(seat, locale).split()) for seat in seats)


def _pace_note(game: GameSummary, locale: object) -> str:
    """' · 📮 24 h per move · played over 3 days' after a turn-based game's line."""
    if not game.pace:
        return ""
    note = " · " + t("table.pace", locale, hours=max(game.pace // 3600, 1))
    if game.started_at is not None:
        note += " · " + played_for(game.ended_at - game.started_at, locale)
    return note


def history_message(
    games: Sequence[GameSummary],
    page: int,
    has_more: bool,
    renderers: Mapping[str, GameRenderer],
    locale: object,
) -> MessageFields:
    """One page of the server's recent games, with ◀ ▶ and a select to open a replay."""
    embed = discord.Embed(title=t("history.title", locale), colour=discord.Colour.blurple())
    lines = []
    options = []
    for number, game in enumerate(games, start=page * PAGE_SIZE + 1):
        renderer = renderers.get(game.game)
        title = renderer.title(locale) if renderer is not None else game.game
        winners = _names(game.winners, locale)
        lines.append(
            t(
                "history.line",
                locale,
                number=number,
                date=f"<t:{int(game.ended_at)}:d>",
                game=title,
                players=_names(game.seats, locale),
            )
            + _pace_note(game, locale)
            + (" · " + t("history.stalled", locale) if game.status == "stalled" else "")
            + (f"\n{MEDAL} {winners}" if winners else "")
        )
        label = f"{number}. {title}"
        if game.winners:
            label += f" · {MEDAL} {_plain_names(game.winners, locale)}"
        options.append(
            discord.SelectOption(
                label=label,
                value=str(game.table_id),
                description=_plain_names(game.seats, locale) or None,
            )
        )
    embed.description = "\n".join(lines) if lines else t("history.empty", locale)
    embed.set_footer(text=t("history.page", locale, page=page + 1))
    view = static_view()
    if options:
        view.add_item(HistorySelect.make(page, t("history.choose", locale), options))
    if page > 0 or has_more:
        view.add_item(HistoryPageButton.make(max(page - 1, 0), "p", "◀", disabled=page == 0))
        view.add_item(HistoryPageButton.make(page + 1, "n", "▶", disabled=not has_more))
    return fit({"content": None, "embed": embed, "view": view})


# -- a replay step -------------------------------------------------------------------------


# How far ⏪ and ⏩ jump in a game without rounds (a No Thanks! game has about 36 moves).
JUMP = 10


def replay_view(game: StoredGame, position: Position, locale: object) -> discord.ui.View:
    """⏮ ◀ ▶ ⏭, and ⏪ ⏩ by round (or by ten moves in a game without rounds)."""
    table, step, last = game.table_id, position.step, position.last
    view = static_view()
    for tag, target, label, disabled in (
        ("f", 0, "⏮", step == 0),
        ("p", max(step - 1, 0), "◀", step == 0),
        ("n", min(step + 1, last), "▶", step == last),
        ("l", last, "⏭", step == last),
    ):
        view.add_item(ReplayButton.make(table, target, tag, label=label, disabled=disabled))
    if not position.rounds:
        for tag, target, label, disabled in (
            ("b", max(step - JUMP, 0), f"⏪ −{JUMP}", step == 0),
            ("c", min(step + JUMP, last), f"+{JUMP} ⏩", step == last),
        ):
            view.add_item(
                ReplayButton.make(table, target, tag, label=label, disabled=disabled, row=1)
            )
    if position.rounds:
        view.add_item(
            ReplayButton.make(
                table,
                position.previous_round(),
                "r",
                label=t("replay.button.previous_round", locale),
                emoji="⏪",
                disabled=step == 0,
                row=1,
            )
        )
        view.add_item(
            ReplayButton.make(
                table,
                position.next_round(),
                "s",
                label=t("replay.button.next_round", locale),
                emoji="⏩",
                disabled=step == last,
                row=1,
            )
        )
    return view


def replay_picture(
    spec: GameSpec, game: StoredGame, position: Position, locale: object
) -> Picture | None:
    """The picture of a replay's step, as the table showed it (None: the game has none)."""
    facts = replay_facts(spec, game, locale, final=position.is_final)
    return public_picture(PublicTable(facts, position.view), spec.renderer, locale)


def replay_message(
    spec: GameSpec,
    game: StoredGame,
    position: Position,
    locale: object,
    *,
    pictures: bool = False,
) -> MessageFields:
    """One step of a replay, drawn by the game's own renderer from the public view.

    The final position of a finished game is its final board, everything revealed as the
    table showed it at the end; every other step is the live table a spectator saw (with
    ``pictures``, as the server shows it: the picture, attached by the caller, and the
    short text).
    """
    renderer = spec.renderer
    facts = replay_facts(spec, game, locale, final=position.is_final)
    if position.is_final:
        fields = renderer.final(facts, position.view, locale, pictures=pictures)
    else:
        fields = renderer.table(facts, position.view, locale, pictures=pictures)
    header = t(
        "replay.header",
        locale,
        game=renderer.title(locale),
        table=game.table_id,
        date=f"<t:{int(game.ended_at)}:d>",
    )
    where = t("replay.step", locale, step=position.step, last=position.last)
    if position.rounds:
        where += " · " + t("replay.round", locale, round=position.round)
    content = fields.get("content")
    fields["content"] = "\n".join(part for part in (header, where, content) if part)
    embed = fields.get("embed")
    if isinstance(embed, discord.Embed) and not position.is_final:
        # The live footer tells players how to act; a replay says where it stands.
        embed.set_footer(text=t("replay.footer", locale, table=game.table_id))
    fields["view"] = replay_view(game, position, locale)
    # A replay pings nobody, whatever the live message once did.
    fields["allowed_mentions"] = discord.AllowedMentions.none()
    return fit(fields)


def forget_confirmation(locale: object) -> MessageFields:
    """What forget-me does, with the button that does it (it cannot be undone)."""
    view = static_view()
    view.add_item(ForgetButton.make(True, t("forget.button.confirm", locale)))
    view.add_item(ForgetButton.make(False, t("button.cancel", locale)))
    return {"content": t("forget.confirm", locale), "view": view}
