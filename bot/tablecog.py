"""The Discord side every game shares: lobby, seats, persistent buttons, locks, DMs, errors.

A game adds an engine and a subclass of `GameTableCog` that says how to create the
engine, render the table and apply its own actions; everything else lives here.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.i18n import t
from bot.storage import ChannelBusy, TableRecord
from bot.table import TableMovedOn, Tables, UserError, answer_error, jump_url, reply_ephemeral
from bot.turns import LEVELS, Autoplay, away_players, is_computer_id, now

if TYPE_CHECKING:
    from bot.app import CardtableBot

log = logging.getLogger(__name__)

# ct:<game>:<table id>:<move number>:<action>[:<argument>]
CUSTOM_ID = re.compile(
    r"ct:(?P<game>[a-z]+):(?P<table>[0-9]+):(?P<move>[0-9]+):(?P<action>[a-z_]+)"
    r"(?::(?P<arg>[A-Za-z0-9+_-]{0,40}))?"
)
LOBBY_ACTIONS = ("join", "leave", "start", "cancel")
# The bot_level choices of every game's `start` command.
LEVEL_CHOICES = [app_commands.Choice(name=level, value=level) for level in LEVELS]
# A DM to send once the move is committed: (player id, message key, placeholders).
Letter = tuple[str, str, dict[str, Any]]


def custom_id(game: str, table_id: int, move: int, action: str, arg: str = "") -> str:
    """The custom_id of a table component."""
    base = f"ct:{game}:{table_id}:{move}:{action}"
    return f"{base}:{arg}" if arg else base


async def _dispatch(
    interaction: discord.Interaction, match: re.Match[str], values: list[str]
) -> None:
    cogs: dict[str, GameTableCog] = getattr(interaction.client, "table_cogs", {})
    cog = cogs.get(match["game"])
    if cog is None:
        await reply_ephemeral(interaction, t("error.unavailable", interaction.locale))
        return
    await cog.on_click(
        interaction,
        int(match["table"]),
        int(match["move"]),
        match["action"],
        match["arg"] or "",
        values,
    )


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
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /
    ) -> TableButton:
        """Rebuild the button from a click, after a restart too."""
        return cls(item, match)

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        """Hand the click to the game's cog."""
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
        cls, interaction: discord.Interaction, item: discord.ui.Select, match: re.Match[str], /
    ) -> TableSelect:
        """Rebuild the select from a choice, after a restart too."""
        return cls(item, match)

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        """Hand the choice to the game's cog."""
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


def can_manage(interaction: discord.Interaction, record: TableRecord) -> bool:
    """Whether the user is the host or may manage messages in this channel."""
    if interaction.user.id == record.host_id:
        return True
    permissions = interaction.permissions
    return bool(permissions.manage_messages or permissions.administrator)


def remember_locale(record: TableRecord, interaction: discord.Interaction) -> None:
    """Note the user's Discord language, so their DMs can use it."""
    record.extra.setdefault("user_locales", {})[str(interaction.user.id)] = str(
        interaction.locale.value
    )


def user_locale(record: TableRecord, player: str) -> object:
    """The language a player last used with this table, for DMs."""
    return record.extra.get("user_locales", {}).get(player)


def name_of(record: TableRecord, player: str | int) -> str:
    """The display name a player had when they sat down."""
    return record.extra.get("names", {}).get(str(player), f"<@{player}>")


def mention(record: TableRecord, player: str | int) -> str:
    """A mention for people, the name for computer players (who cannot be mentioned)."""
    return name_of(record, player) if is_computer_id(player) else f"<@{player}>"


class GameTableCog(Autoplay, commands.Cog):
    """One game's tables: the lobby, persistence, routing and errors; subclasses add the game."""

    game: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]

    def __init__(self, bot: CardtableBot) -> None:
        self.bot = bot
        self.tables = Tables(bot.storage)
        self.engines: dict[int, Any] = {}
        self.timers: dict[int, asyncio.Task[None]] = {}

    # -- what a game provides ---------------------------------------------------------

    @abstractmethod
    def create_engine(self, record: TableRecord, seed: int) -> Any:
        """A new engine for the seated players and the table's options."""

    @abstractmethod
    def engine_from_dict(self, state: dict[str, Any]) -> Any:
        """Rebuild an engine from its stored state."""

    @abstractmethod
    def option_lines(self, record: TableRecord, locale: object) -> list[str]:
        """The table's options in words, for the lobby."""

    @abstractmethod
    def render_table(self, record: TableRecord, engine: Any, locale: object) -> dict[str, Any]:
        """The public message (content, embed, view) for a running or finished game."""

    @abstractmethod
    async def game_action(
        self,
        interaction: discord.Interaction,
        record: TableRecord,
        engine: Any,
        move: int,
        action: str,
        arg: str,
        values: list[str],
    ) -> list[Letter]:
        """Apply one of the game's own actions (under the channel lock)."""

    def start_letters(self, record: TableRecord, engine: Any) -> list[Letter]:
        """DMs to send when a game starts (none by default)."""
        return []

    async def unlocked_action(
        self, interaction: discord.Interaction, record: TableRecord, action: str
    ) -> bool:
        """Handle a read-only action without the lock; return False if it is not one."""
        return False

    # -- restore, errors, stale clicks ------------------------------------------------

    async def cog_load(self) -> None:
        """Reload every open lobby and running game, so old buttons keep working."""
        self.bot.table_cogs[self.game] = self
        records = await self.tables.restore(self.game)
        for record in records:
            if record.status == "running" and record.state is not None:
                assert record.id is not None
                self.engines[record.id] = self.engine_from_dict(record.state)
        for record in records:
            # Overdue turns and lobbies are handled at once, as soon as the bot is ready.
            self.schedule(record)
        log.info("restored %d %s tables", len(records), self.game)

    async def cog_unload(self) -> None:
        """Stop routing clicks to this cog."""
        self.bot.table_cogs.pop(self.game, None)
        for record in self.tables:
            self.cancel_timer(record)

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Answer clicks on components the message no longer shows (discord.py drops those)."""
        if interaction.type is not discord.InteractionType.component or interaction.message is None:
            return
        raw = (interaction.data or {}).get("custom_id", "")
        if not isinstance(raw, str):
            return
        match = CUSTOM_ID.fullmatch(raw) or SELECT_ID.fullmatch(raw)
        if match is None or match["game"] != self.game:
            return
        for row in interaction.message.components:
            for component in getattr(row, "children", [row]):
                if getattr(component, "custom_id", None) == raw:
                    return  # the DynamicItem handles it
        await self.stale_component(interaction, int(match["table"]), match["action"])

    async def stale_component(
        self, interaction: discord.Interaction, table_id: int, action: str
    ) -> None:
        """A component the message no longer shows was used."""
        await answer_error(interaction, TableMovedOn())

    async def on_click(
        self,
        interaction: discord.Interaction,
        table_id: int,
        move: int,
        action: str,
        arg: str = "",
        values: list[str] | None = None,
    ) -> None:
        """Every button click or select choice: route it, answer errors in one place."""
        try:
            await self._route(interaction, table_id, move, action, arg, values or [])
        except Exception as error:
            await answer_error(
                interaction, error, context=f"{self.game} table {table_id} ({action})"
            )

    async def _route(
        self,
        interaction: discord.Interaction,
        table_id: int,
        move: int,
        action: str,
        arg: str,
        values: list[str],
    ) -> None:
        channel_id = interaction.channel_id
        assert channel_id is not None
        if action == "rematch":
            await self._rematch(interaction, table_id)
            return
        record = self.tables.get(table_id)
        if record is not None and await self.unlocked_action(interaction, record, action):
            return
        letters: list[Letter] | None = None
        async with self.tables.lock(channel_id):
            record = self.tables.get(table_id)
            if record is None:
                raise TableMovedOn()
            if action in LOBBY_ACTIONS:
                if record.status != "lobby":
                    raise TableMovedOn()
                letters = await getattr(self, f"_lobby_{action}")(interaction, record)
            elif action == "addbot":
                if record.status != "lobby":
                    raise TableMovedOn()
                await self._lobby_addbot(interaction, record, values[0] if values else "normal")
            elif action == "back":
                await self._back(interaction, record)
            else:
                engine = self.engines.get(table_id)
                if record.status != "running" or engine is None:
                    raise TableMovedOn()
                letters = await self.game_action(
                    interaction, record, engine, move, action, arg, values
                )
        # DMs go out after the lock is released: a rate-limited DM must not hold up the
        # next click at this table.
        if letters:
            await self.deliver(record, letters)
            await self.hint_if_dm_closed(interaction, record)

    async def _back(self, interaction: discord.Interaction, record: TableRecord) -> None:
        """'I'm back': the player takes their seat back from the computer."""
        player = self.seat_check(interaction, record)
        away = away_players(record)
        engine = self.engines.get(record.id or 0)
        if engine is None or record.status != "running":
            raise TableMovedOn()
        if player not in away:
            raise UserError("table.not_away")
        away.remove(player)
        record.extra.get("timeouts", {}).pop(player, None)
        self.stamp_turn(record, engine)
        await self.tables.save(record)
        self.schedule(record)
        await interaction.response.edit_message(**self.publish(record, engine))

    def seat_check(self, interaction: discord.Interaction, record: TableRecord) -> str:
        """The clicking player's id, or a UserError if they have no seat."""
        player = interaction.user.id
        if player not in record.seats:
            raise UserError("table.not_seated")
        return str(player)

    # -- commit -----------------------------------------------------------------------

    async def commit(
        self, record: TableRecord, engine: Any, player: str, action: str, *, by_human: bool = True
    ) -> None:
        """Commit the engine's new state and the move; on failure put memory back as it was."""
        assert record.id is not None
        before, before_status = record.state, record.status
        record.state = engine.to_dict()
        record.move_number = engine.move_number
        if engine.is_over:
            record.status = "finished"
        if by_human:
            record.extra.get("timeouts", {}).pop(player, None)
            record.extra.pop("notice", None)
        self.stamp_turn(record, engine)
        try:
            await self.tables.save(record, (player, action))
        except BaseException:
            assert before is not None
            self.engines[record.id] = self.engine_from_dict(before)
            record.state, record.status = before, before_status
            record.move_number = self.engines[record.id].move_number
            raise
        if engine.is_over:
            self.engines.pop(record.id, None)
        self.schedule(record)

    def publish(self, record: TableRecord, engine: Any) -> dict[str, Any]:
        """The public message with what every game shares: notices, deadline, I'm back."""
        locale = self.table_locale(record)
        fields = self.render_table(record, engine, locale)
        notice = record.extra.get("notice")
        if notice:
            key, params = notice
            params = {**params, "player": mention(record, params.get("player", ""))}
            fields["content"] = t(key, locale, **params)
        turn = record.extra.get("turn")
        embed = fields.get("embed")
        if turn and embed is not None and not engine.is_over:
            deadline = t("table.deadline", locale, deadline=int(turn["deadline"]))
            embed.description = f"{embed.description or ''}\n{deadline}".strip()
        away = record.extra.get("away", [])
        if away and not engine.is_over and fields.get("view") is not None:
            assert record.id is not None
            fields["view"].add_item(
                TableButton.make(
                    self.game,
                    record.id,
                    0,
                    "back",
                    label=t("table.button.back", locale),
                    emoji="👋",
                )
            )
        return fields

    async def deliver(self, record: TableRecord, letters: list[Letter]) -> None:
        """Send the DMs a move caused (never to computer players)."""
        for player, key, params in letters:
            if not is_computer_id(player):
                await self.send_dm(record, player, key, **params)

    # -- lobby ------------------------------------------------------------------------

    def table_locale(
        self, record: TableRecord, interaction: discord.Interaction | None = None
    ) -> object:
        """The language of public table messages: the server's setting, else its locale."""
        chosen = getattr(self.bot, "guild_language", None)
        if chosen is not None and record.guild_id is not None:
            language = chosen(record.guild_id)
            if language:
                return language
        stored = record.extra.get("locale")
        if stored:
            return stored
        if interaction is not None and interaction.guild_locale is not None:
            return interaction.guild_locale
        return None

    def lobby_embed(self, record: TableRecord, locale: object) -> discord.Embed:
        """The lobby: host, seats, options, what is still needed."""
        g = self.game
        embed = discord.Embed(title=t(f"{g}.lobby.title", locale), colour=self.colour)
        embed.description = t(f"{g}.lobby.host", locale, host=f"<@{record.host_id}>")
        seats = "\n".join(
            f"{index}. {name_of(record, player)}" for index, player in enumerate(record.seats, 1)
        )
        embed.add_field(
            name=t(f"{g}.lobby.players", locale, count=len(record.seats), max=self.max_players),
            value=seats or t(f"{g}.lobby.empty", locale),
            inline=False,
        )
        lines = [
            *self.option_lines(record, locale),
            t("table.turn_time", locale, count=self.turn_seconds(record)),
        ]
        embed.add_field(name=t(f"{g}.lobby.options", locale), value="\n".join(lines), inline=False)
        missing = self.min_players - len(record.seats)
        footer = (
            t(f"{g}.lobby.need_more", locale, count=missing)
            if missing > 0
            else t(f"{g}.lobby.ready", locale)
        )
        embed.set_footer(text=f"{footer} · #{record.id}")
        return embed

    colour: ClassVar[discord.Colour] = discord.Colour.blurple()

    def lobby_view(self, record: TableRecord, locale: object) -> discord.ui.View:
        """Join, Leave, Start (enabled with enough players) and Cancel."""
        assert record.id is not None
        g, table_id = self.game, record.id
        view = static_view()
        view.add_item(
            TableButton.make(
                g,
                table_id,
                0,
                "join",
                label=t(f"{g}.button.join", locale),
                style=discord.ButtonStyle.success,
                disabled=len(record.seats) >= self.max_players,
            )
        )
        view.add_item(
            TableButton.make(g, table_id, 0, "leave", label=t(f"{g}.button.leave", locale))
        )
        view.add_item(
            TableButton.make(
                g,
                table_id,
                0,
                "start",
                label=t(f"{g}.button.start", locale),
                style=discord.ButtonStyle.primary,
                disabled=len(record.seats) < self.min_players,
            )
        )
        if len(record.seats) < self.max_players:
            view.add_item(
                TableSelect.make(
                    g,
                    table_id,
                    0,
                    "addbot",
                    placeholder=t("table.add_computer", locale),
                    options=[
                        discord.SelectOption(label=t(f"table.level.{level}", locale), value=level)
                        for level in LEVELS
                    ],
                )
            )
        view.add_item(
            TableButton.make(
                g,
                table_id,
                0,
                "cancel",
                label=t(f"{g}.button.cancel", locale),
                style=discord.ButtonStyle.danger,
            )
        )
        return view

    def final_view(self, record: TableRecord, locale: object) -> discord.ui.View:
        """The Rematch button under the final standings."""
        assert record.id is not None
        view = static_view()
        view.add_item(
            TableButton.make(
                self.game,
                record.id,
                0,
                "rematch",
                label=t(f"{self.game}.button.rematch", locale),
                style=discord.ButtonStyle.primary,
            )
        )
        return view

    def closed_embed(self, record: TableRecord, locale: object, *, by: int) -> discord.Embed:
        """A lobby cancelled or a game stopped before its end."""
        g = self.game
        how = "cancelled" if record.status == "cancelled" else "abandoned"
        if record.extra.get("expired"):
            how = "expired"
        return discord.Embed(
            title=t(f"{g}.closed.title", locale),
            description=t(f"{g}.closed.{how}", locale, user=f"<@{by}>"),
            colour=discord.Colour.dark_grey(),
        )

    async def open_table(
        self,
        interaction: discord.Interaction,
        options: dict[str, Any],
        *,
        bots: int = 0,
        level: str = "normal",
    ) -> None:
        """`/<game> start`: open a lobby in this channel with the caller as host and first seat."""
        channel_id = interaction.channel_id
        assert channel_id is not None
        async with self.tables.lock(channel_id):
            self._refuse_busy_channel(channel_id)
            record = TableRecord(
                game=self.game,
                guild_id=interaction.guild_id,
                channel_id=channel_id,
                host_id=interaction.user.id,
                options=options,
                seats=[interaction.user.id],
                extra={"names": {str(interaction.user.id): interaction.user.display_name}},
            )
            remember_locale(record, interaction)
            locale = self.table_locale(record, interaction)
            for _ in range(bots):
                self.add_computer(record, level, locale)
            await self._open_lobby(interaction, record)

    def _refuse_busy_channel(self, channel_id: int) -> None:
        for cog in self.bot.table_cogs.values():
            existing = cog.tables.in_channel(channel_id)
            if existing is not None:
                raise UserError("table.channel_busy", link=jump_url(existing))

    async def _open_lobby(self, interaction: discord.Interaction, record: TableRecord) -> None:
        try:
            await self.tables.storage.create_table(record)
        except ChannelBusy:
            raise UserError("table.channel_busy_unknown") from None
        guild_locale = interaction.guild_locale
        record.extra["locale"] = str(guild_locale.value) if guild_locale is not None else None
        record.extra["opened_at"] = now()
        locale = self.table_locale(record, interaction)
        await interaction.response.send_message(
            embed=self.lobby_embed(record, locale), view=self.lobby_view(record, locale)
        )
        message = await interaction.original_response()
        record.message_id = message.id
        await self.tables.save(record)
        self.schedule(record)

    def add_computer(self, record: TableRecord, level: str, locale: object) -> None:
        """Seat a computer player of this level (a negative id; never mentioned or DMed)."""
        if level not in LEVELS:
            raise UserError("lobby.bad_level")
        if len(record.seats) >= self.max_players:
            raise UserError("lobby.full", max=self.max_players)
        bots: dict[str, str] = record.extra.setdefault("bots", {})
        seat = -(len(bots) + 1)
        record.seats.append(seat)
        bots[str(seat)] = level
        name = t(
            "table.computer_name", locale, number=len(bots), level=t(f"table.level.{level}", locale)
        )
        record.extra.setdefault("names", {})[str(seat)] = name

    async def _lobby_addbot(
        self, interaction: discord.Interaction, record: TableRecord, level: str
    ) -> None:
        if interaction.user.id != record.host_id:
            raise UserError("lobby.not_host_addbot")
        self.add_computer(record, level, self.table_locale(record))
        await self._save_lobby(interaction, record)

    async def _lobby_join(self, interaction: discord.Interaction, record: TableRecord) -> None:
        user = interaction.user
        if user.id in record.seats:
            raise UserError("lobby.already_seated")
        if len(record.seats) >= self.max_players:
            raise UserError("lobby.full", max=self.max_players)
        record.seats.append(user.id)
        record.extra.setdefault("names", {})[str(user.id)] = user.display_name
        remember_locale(record, interaction)
        await self._save_lobby(interaction, record)

    async def _lobby_leave(self, interaction: discord.Interaction, record: TableRecord) -> None:
        user_id = interaction.user.id
        if user_id not in record.seats:
            raise UserError("lobby.not_seated")
        record.seats.remove(user_id)
        if not any(not is_computer_id(seat) for seat in record.seats):
            record.status = "cancelled"
            await self.tables.save(record)
            await interaction.response.edit_message(
                embed=self.closed_embed(record, self.table_locale(record), by=user_id), view=None
            )
            return
        if record.host_id == user_id:
            # The table stays open: the longest-seated person becomes host.
            record.host_id = next(seat for seat in record.seats if not is_computer_id(seat))
        await self._save_lobby(interaction, record)

    async def _lobby_cancel(self, interaction: discord.Interaction, record: TableRecord) -> None:
        if not can_manage(interaction, record):
            raise UserError("lobby.not_host_cancel")
        record.status = "cancelled"
        await self.tables.save(record)
        await interaction.response.edit_message(
            embed=self.closed_embed(record, self.table_locale(record), by=interaction.user.id),
            view=None,
        )

    async def _save_lobby(self, interaction: discord.Interaction, record: TableRecord) -> None:
        await self.tables.save(record)
        locale = self.table_locale(record)
        await interaction.response.edit_message(
            embed=self.lobby_embed(record, locale), view=self.lobby_view(record, locale)
        )

    async def _lobby_start(
        self, interaction: discord.Interaction, record: TableRecord
    ) -> list[Letter]:
        if interaction.user.id != record.host_id:
            raise UserError("lobby.not_host_start")
        if len(record.seats) < self.min_players:
            raise UserError("lobby.too_few", min=self.min_players, count=len(record.seats))
        engine = self.create_engine(record, secrets.randbits(63))
        record.status = "running"
        record.state = engine.to_dict()
        record.move_number = engine.move_number
        self.stamp_turn(record, engine)
        await self.tables.save(record)
        assert record.id is not None
        self.engines[record.id] = engine
        self.schedule(record)
        await interaction.response.edit_message(**self.publish(record, engine))
        return self.start_letters(record, engine)

    async def _rematch(self, interaction: discord.Interaction, table_id: int) -> None:
        channel_id = interaction.channel_id
        assert channel_id is not None
        old = await self.tables.storage.get_table(table_id)
        if old is None or old.status != "finished":
            raise TableMovedOn()
        if interaction.user.id not in old.seats:
            raise UserError(f"{self.game}.rematch_not_player")
        async with self.tables.lock(channel_id):
            self._refuse_busy_channel(channel_id)
            # The clicker hosts the rematch; everybody keeps their seat in the old order.
            record = TableRecord(
                game=self.game,
                guild_id=old.guild_id,
                channel_id=channel_id,
                host_id=interaction.user.id,
                options=dict(old.options),
                seats=list(old.seats),
                extra={
                    "names": dict(old.extra.get("names", {})),
                    "user_locales": dict(old.extra.get("user_locales", {})),
                    "rematch_of": table_id,
                },
            )
            await self._open_lobby(interaction, record)

    async def stop_table(self, interaction: discord.Interaction) -> None:
        """`/<game> stop`: end this channel's lobby or game (host, or Manage Messages)."""
        channel_id = interaction.channel_id
        assert channel_id is not None
        async with self.tables.lock(channel_id):
            record = self.tables.in_channel(channel_id)
            if record is None:
                raise UserError("table.none_here")
            if not can_manage(interaction, record):
                raise UserError("table.not_host_stop")
            record.status = "abandoned" if record.status == "running" else "cancelled"
            await self.tables.save(record)
            self.cancel_timer(record)
            assert record.id is not None
            self.engines.pop(record.id, None)
            await interaction.response.send_message(
                t("table.stopped", interaction.locale), ephemeral=True
            )
            await self.edit_table_message(
                record,
                embed=self.closed_embed(record, self.table_locale(record), by=interaction.user.id),
                view=None,
                content=None,
            )

    def running_record(self, interaction: discord.Interaction) -> TableRecord:
        """This channel's running game of this cog's game, or a UserError."""
        assert interaction.channel_id is not None
        record = self.tables.in_channel(interaction.channel_id)
        if record is None or record.status != "running":
            raise UserError(f"{self.game}.no_game_here")
        return record

    # -- messages and DMs -------------------------------------------------------------

    async def edit_table_message(self, record: TableRecord, **fields: Any) -> None:
        """Edit the public table message outside its own interaction."""
        if record.message_id is None:
            return
        channel = self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)
        try:
            await channel.get_partial_message(record.message_id).edit(**fields)
        except discord.HTTPException:
            log.warning("could not edit the message of table %s", record.id, exc_info=True)

    async def send_dm(self, record: TableRecord, player: str, key: str, **params: Any) -> None:
        """Send a private DM; after a refusal (closed DMs) stop trying for that player."""
        closed: list[str] = record.extra.setdefault("dm_closed", [])
        if player in closed or is_computer_id(player):
            return
        try:
            # create_dm is cached per user and needs no members intent (no GET /users).
            channel = await self.bot.create_dm(discord.Object(id=int(player)))
            await channel.send(t(key, user_locale(record, player), link=jump_url(record), **params))
        except (discord.Forbidden, discord.NotFound):
            closed.append(player)
            record.extra.setdefault("hint_pending", []).append(player)
            async with self.tables.lock(record.channel_id):
                await self.tables.save(record)
        except discord.HTTPException:
            log.warning("DM to %s failed for table %s", player, record.id, exc_info=True)

    async def hint_if_dm_closed(
        self, interaction: discord.Interaction, record: TableRecord
    ) -> None:
        """Tell the clicker once, privately, that their DMs are closed."""
        hints: list[str] = record.extra.get("hint_pending", [])
        player = str(interaction.user.id)
        if player in hints:
            hints.remove(player)
            async with self.tables.lock(record.channel_id):
                await self.tables.save(record)
            await interaction.followup.send(
                t(f"{self.game}.dm_closed", interaction.locale), ephemeral=True
            )
