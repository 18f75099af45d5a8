"""The No Thanks! table: `/nothanks` commands, the lobby, the live game message, DMs."""

from __future__ import annotations

import logging
import re
import secrets
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.engines.errors import IllegalMove, NotYourTurn, UnknownPlayer
from bot.engines.nothanks import MAX_PLAYERS, MIN_PLAYERS, PASS, TAKE, MustTake, NoThanksGame
from bot.i18n import t
from bot.render import nothanks as render
from bot.storage import ChannelBusy, TableRecord
from bot.table import (
    TableMovedOn,
    Tables,
    UserError,
    answer_error,
    answers_user_errors,
    jump_url,
    reply_ephemeral,
)

if TYPE_CHECKING:
    from bot.app import CardtableBot

log = logging.getLogger(__name__)
GAME = "nothanks"
CUSTOM_ID = re.compile(r"nt:(?P<table>[0-9]+):(?P<move>[0-9]+):(?P<action>[a-z]+)")
LOBBY_ACTIONS = ("join", "leave", "start", "cancel")
# A DM to send once the move is committed: (player id, message key, placeholders).
Letter = tuple[str, str, dict[str, Any]]
GAME_ACTIONS = ("take", "pass")


class TableButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=CUSTOM_ID.pattern,
):
    """Every No Thanks! button; its custom_id carries the table id, move number and action."""

    def __init__(
        self,
        table_id: int,
        move: int,
        action: str,
        *,
        label: str = "",
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
        disabled: bool = False,
        emoji: str | None = None,
    ) -> None:
        super().__init__(
            discord.ui.Button(
                label=label,
                style=style,
                disabled=disabled,
                emoji=emoji,
                custom_id=f"nt:{table_id}:{move}:{action}",
            )
        )
        self.table_id = table_id
        self.move = move
        self.action = action

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction,
        item: discord.ui.Button,
        match: re.Match[str],
        /,
    ) -> TableButton:
        """Rebuild the button from a click, after a restart too."""
        return cls(int(match["table"]), int(match["move"]), match["action"])

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        """Hand the click to the cog."""
        cog = interaction.client.get_cog("NoThanks")  # type: ignore[attr-defined]
        if not isinstance(cog, NoThanks):
            await reply_ephemeral(interaction, t("error.unavailable", interaction.locale))
            return
        await cog.on_click(interaction, self.table_id, self.move, self.action)


def lobby_view(record: TableRecord, locale: object) -> discord.ui.View:
    """Join, Leave, Start (enabled with enough players) and Cancel."""
    assert record.id is not None
    view = discord.ui.View(timeout=None)
    view.add_item(
        TableButton(
            record.id,
            0,
            "join",
            label=t("nothanks.button.join", locale),
            style=discord.ButtonStyle.success,
            disabled=len(record.seats) >= MAX_PLAYERS,
        )
    )
    view.add_item(TableButton(record.id, 0, "leave", label=t("nothanks.button.leave", locale)))
    view.add_item(
        TableButton(
            record.id,
            0,
            "start",
            label=t("nothanks.button.start", locale),
            style=discord.ButtonStyle.primary,
            disabled=len(record.seats) < MIN_PLAYERS,
        )
    )
    view.add_item(
        TableButton(
            record.id,
            0,
            "cancel",
            label=t("nothanks.button.cancel", locale),
            style=discord.ButtonStyle.danger,
        )
    )
    return view


def game_view(record: TableRecord, game: NoThanksGame, locale: object) -> discord.ui.View:
    """Take, No thanks! and My chips, stamped with the current move number."""
    assert record.id is not None
    move = game.move_number
    view = discord.ui.View(timeout=None)
    view.add_item(
        TableButton(
            record.id,
            move,
            "take",
            label=t("nothanks.button.take", locale),
            style=discord.ButtonStyle.success,
        )
    )
    view.add_item(
        TableButton(
            record.id,
            move,
            "pass",
            label=t("nothanks.button.pass", locale),
            style=discord.ButtonStyle.danger,
        )
    )
    view.add_item(
        TableButton(record.id, move, "chips", label=t("nothanks.button.chips", locale), emoji="🪙")
    )
    return view


def final_view(record: TableRecord, locale: object) -> discord.ui.View:
    """The Rematch button under the final scoreboard."""
    assert record.id is not None
    view = discord.ui.View(timeout=None)
    view.add_item(
        TableButton(
            record.id,
            0,
            "rematch",
            label=t("nothanks.button.rematch", locale),
            style=discord.ButtonStyle.primary,
        )
    )
    return view


def table_locale(record: TableRecord, interaction: discord.Interaction | None = None) -> object:
    """The language of public table messages: the server's setting, else its locale."""
    stored = record.extra.get("locale")
    if stored:
        return stored
    if interaction is not None and interaction.guild_locale is not None:
        return interaction.guild_locale
    return None


def can_manage(interaction: discord.Interaction, record: TableRecord) -> bool:
    """Whether the user is the host or may manage messages in this channel."""
    if interaction.user.id == record.host_id:
        return True
    permissions = interaction.permissions
    return bool(permissions.manage_messages or permissions.administrator)


class NoThanks(commands.Cog):
    """No Thanks! tables: one per channel, persisted move by move."""

    group = app_commands.Group(name="nothanks", description="Play No Thanks! at this table")

    def __init__(self, bot: CardtableBot) -> None:
        self.bot = bot
        self.tables = Tables(bot.storage)
        self.games: dict[int, NoThanksGame] = {}

    async def cog_load(self) -> None:
        """Reload every open lobby and running game, so old buttons keep working."""
        records = await self.tables.restore(GAME)
        for record in records:
            if record.status == "running" and record.state is not None:
                assert record.id is not None
                self.games[record.id] = NoThanksGame.from_dict(record.state)
        log.info("restored %d No Thanks! tables", len(records))

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Answer clicks on buttons the message no longer shows (discord.py drops those)."""
        if interaction.type is not discord.InteractionType.component or interaction.message is None:
            return
        custom_id = (interaction.data or {}).get("custom_id", "")
        if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
            return
        for row in interaction.message.components:
            for component in getattr(row, "children", [row]):
                if getattr(component, "custom_id", None) == custom_id:
                    return  # the DynamicItem handles it
        await answer_error(interaction, TableMovedOn())

    # -- commands -------------------------------------------------------------------

    @group.command(name="start", description="Open a No Thanks! table in this channel")
    @app_commands.describe(open_chips="Show every player's chips to everyone (default: off)")
    @app_commands.guild_only()
    @answers_user_errors
    async def start(self, interaction: discord.Interaction, open_chips: bool = False) -> None:
        """Open a lobby in this channel, with the caller as host and first seat."""
        channel_id = interaction.channel_id
        assert channel_id is not None
        async with self.tables.lock(channel_id):
            existing = self.tables.in_channel(channel_id)
            if existing is not None:
                raise UserError("table.channel_busy", link=jump_url(existing))
            record = TableRecord(
                game=GAME,
                guild_id=interaction.guild_id,
                channel_id=channel_id,
                host_id=interaction.user.id,
                options={"open_chips": open_chips},
                seats=[interaction.user.id],
                extra={"names": {str(interaction.user.id): interaction.user.display_name}},
            )
            remember_locale(record, interaction)
            await self._open_lobby(interaction, record)

    async def _open_lobby(self, interaction: discord.Interaction, record: TableRecord) -> None:
        try:
            await self.tables.storage.create_table(record)
        except ChannelBusy:
            raise UserError("table.channel_busy_unknown") from None
        record.extra["locale"] = str(table_locale(record, interaction) or "") or None
        locale = table_locale(record, interaction)
        await interaction.response.send_message(
            embed=render.lobby_embed(record, locale), view=lobby_view(record, locale)
        )
        message = await interaction.original_response()
        record.message_id = message.id
        await self.tables.save(record)

    @group.command(name="stop", description="End the No Thanks! table in this channel")
    @app_commands.guild_only()
    @answers_user_errors
    async def stop(self, interaction: discord.Interaction) -> None:
        """End this channel's lobby or game (host, or Manage Messages)."""
        channel_id = interaction.channel_id
        assert channel_id is not None
        async with self.tables.lock(channel_id):
            record = self.tables.in_channel(channel_id)
            if record is None or record.game != GAME:
                raise UserError("table.none_here")
            if not can_manage(interaction, record):
                raise UserError("table.not_host_stop")
            was_running = record.status == "running"
            record.status = "abandoned" if was_running else "cancelled"
            await self.tables.save(record)
            assert record.id is not None
            self.games.pop(record.id, None)
            await interaction.response.send_message(
                t("table.stopped", interaction.locale), ephemeral=True
            )
            await self._edit_table_message(
                record,
                embed=render.closed_embed(
                    record, table_locale(record), by=interaction.user.id, status=record.status
                ),
                view=None,
            )

    @group.command(name="rules", description="A short summary of the No Thanks! rules")
    @answers_user_errors
    async def rules(self, interaction: discord.Interaction) -> None:
        """Show the rules privately."""
        await interaction.response.send_message(
            embed=render.rules_embed(interaction.locale), ephemeral=True
        )

    @group.command(name="chips", description="Your private chips, cards and score in this game")
    @app_commands.guild_only()
    @answers_user_errors
    async def chips(self, interaction: discord.Interaction) -> None:
        """Show the caller's chips privately."""
        assert interaction.channel_id is not None
        record = self.tables.in_channel(interaction.channel_id)
        if record is None or record.game != GAME or record.status != "running":
            raise UserError("nothanks.no_game_here")
        await self._show_chips(interaction, record)

    # -- clicks ---------------------------------------------------------------------

    async def on_click(
        self, interaction: discord.Interaction, table_id: int, move: int, action: str
    ) -> None:
        """Every button click: route it, answer errors in one place."""
        try:
            await self._route(interaction, table_id, move, action)
        except Exception as error:
            await answer_error(
                interaction, error, context=f"No Thanks! table {table_id} ({action})"
            )

    async def _route(
        self, interaction: discord.Interaction, table_id: int, move: int, action: str
    ) -> None:
        channel_id = interaction.channel_id
        assert channel_id is not None
        if action == "chips":
            record = self.tables.get(table_id)
            if record is None or record.status != "running":
                raise TableMovedOn()
            await self._show_chips(interaction, record)
            return
        if action == "rematch":
            await self._rematch(interaction, table_id)
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
            elif action in GAME_ACTIONS:
                letters = await self._play(interaction, record, move, action)
            else:
                raise TableMovedOn()
        # DMs go out after the lock is released: a rate-limited DM must not hold up the
        # next click at this table.
        if letters:
            for player, key, params in letters:
                await self._dm(record, player, key, **params)
            await self._hint_if_dm_closed(interaction, record)

    async def _lobby_join(self, interaction: discord.Interaction, record: TableRecord) -> None:
        user = interaction.user
        if user.id in record.seats:
            raise UserError("lobby.already_seated")
        if len(record.seats) >= MAX_PLAYERS:
            raise UserError("lobby.full", max=MAX_PLAYERS)
        record.seats.append(user.id)
        record.extra.setdefault("names", {})[str(user.id)] = user.display_name
        remember_locale(record, interaction)
        await self._save_lobby(interaction, record)

    async def _lobby_leave(self, interaction: discord.Interaction, record: TableRecord) -> None:
        user_id = interaction.user.id
        if user_id not in record.seats:
            raise UserError("lobby.not_seated")
        record.seats.remove(user_id)
        if not record.seats:
            record.status = "cancelled"
            await self.tables.save(record)
            await interaction.response.edit_message(
                embed=render.closed_embed(
                    record, table_locale(record), by=user_id, status="cancelled"
                ),
                view=None,
            )
            return
        if record.host_id == user_id:
            # The table stays open: the longest-seated player becomes host.
            record.host_id = record.seats[0]
        await self._save_lobby(interaction, record)

    async def _lobby_cancel(self, interaction: discord.Interaction, record: TableRecord) -> None:
        if not can_manage(interaction, record):
            raise UserError("lobby.not_host_cancel")
        record.status = "cancelled"
        await self.tables.save(record)
        await interaction.response.edit_message(
            embed=render.closed_embed(
                record, table_locale(record), by=interaction.user.id, status="cancelled"
            ),
            view=None,
        )

    async def _save_lobby(self, interaction: discord.Interaction, record: TableRecord) -> None:
        await self.tables.save(record)
        locale = table_locale(record)
        await interaction.response.edit_message(
            embed=render.lobby_embed(record, locale), view=lobby_view(record, locale)
        )

    async def _lobby_start(
        self, interaction: discord.Interaction, record: TableRecord
    ) -> list[Letter]:
        if interaction.user.id != record.host_id:
            raise UserError("lobby.not_host_start")
        if len(record.seats) < MIN_PLAYERS:
            raise UserError("lobby.too_few", min=MIN_PLAYERS, count=len(record.seats))
        game = NoThanksGame.new(
            [str(seat) for seat in record.seats],
            seed=secrets.randbits(63),
            open_chips=bool(record.options.get("open_chips")),
        )
        record.status = "running"
        record.state = game.to_dict()
        record.move_number = 0
        await self.tables.save(record)
        assert record.id is not None
        self.games[record.id] = game
        locale = table_locale(record)
        await interaction.response.edit_message(
            content=t("nothanks.game.started", locale, player=f"<@{game.active_player}>"),
            embed=render.game_embed(record, game, locale),
            view=game_view(record, game, locale),
        )
        return [
            (player, "nothanks.dm.started", {"count": game.chips[seat]})
            for seat, player in enumerate(game.players)
        ]

    async def _play(
        self, interaction: discord.Interaction, record: TableRecord, move: int, action: str
    ) -> list[Letter]:
        """Apply a Take or No thanks!, commit it, edit the message; return the DMs to send."""
        assert record.id is not None
        game = self.games.get(record.id)
        if record.status != "running" or game is None or move != game.move_number:
            raise TableMovedOn()
        player = str(interaction.user.id)
        before = record.state  # the last committed state, to roll back to
        try:
            applied = game.apply(player, TAKE if action == "take" else PASS)
        except UnknownPlayer:
            raise UserError("table.not_seated") from None
        except NotYourTurn:
            raise UserError("nothanks.not_your_turn", player=f"<@{game.active_player}>") from None
        except MustTake:
            raise UserError("nothanks.must_take", card=game.current_card) from None
        except IllegalMove as error:
            raise UserError("nothanks.illegal", reason=str(error)) from None
        remember_locale(record, interaction)
        record.state = game.to_dict()
        record.move_number = game.move_number
        if game.is_over:
            record.status = "finished"
        try:
            await self.tables.save(record, (player, applied.action.value))
        except BaseException:
            # Nothing was committed: put the game back as it was, so memory matches storage.
            assert before is not None
            self.games[record.id] = NoThanksGame.from_dict(before)
            record.state, record.move_number = before, len(before["history"])
            record.status = "running"
            raise
        locale = table_locale(record)
        if game.is_over:
            self.games.pop(record.id, None)
            await interaction.response.edit_message(
                content=None,
                embed=render.final_embed(record, game, locale),
                view=final_view(record, locale),
            )
        else:
            await interaction.response.edit_message(
                content=None,
                embed=render.game_embed(record, game, locale),
                view=game_view(record, game, locale),
            )
        # Only a move that changed the player's chips is worth a DM.
        chips = game.chips[applied.seat]
        if applied.action is PASS:
            return [(player, "nothanks.dm.passed", {"card": applied.card, "count": chips})]
        if applied.chips_on_card > 0:
            params = {"card": applied.card, "gained": applied.chips_on_card, "count": chips}
            return [(player, "nothanks.dm.took", params)]
        return []

    async def _show_chips(self, interaction: discord.Interaction, record: TableRecord) -> None:
        assert record.id is not None
        game = self.games.get(record.id)
        player = str(interaction.user.id)
        if game is None:
            raise TableMovedOn()
        if player not in game.players:
            raise UserError("table.not_seated")
        await reply_ephemeral(interaction, render.private_text(game, player, interaction.locale))
        hints = record.extra.get("hint_pending", [])
        if player in hints:
            hints.remove(player)

    async def _rematch(self, interaction: discord.Interaction, table_id: int) -> None:
        channel_id = interaction.channel_id
        assert channel_id is not None
        old = await self.tables.storage.get_table(table_id)
        if old is None or old.status != "finished":
            raise TableMovedOn()
        if interaction.user.id not in old.seats:
            raise UserError("nothanks.rematch_not_player")
        async with self.tables.lock(channel_id):
            existing = self.tables.in_channel(channel_id)
            if existing is not None:
                raise UserError("table.channel_busy", link=jump_url(existing))
            # The clicker hosts the rematch; everybody keeps their seat in the old order.
            record = TableRecord(
                game=GAME,
                guild_id=old.guild_id,
                channel_id=channel_id,
                host_id=interaction.user.id,
                options=dict(old.options),
                seats=list(old.seats),
                extra={"names": dict(old.extra.get("names", {})), "rematch_of": table_id},
            )
            await self._open_lobby(interaction, record)

    # -- messages and DMs -------------------------------------------------------------

    async def _edit_table_message(self, record: TableRecord, **fields: Any) -> None:
        """Edit the public table message outside an interaction (e.g. after /stop)."""
        if record.message_id is None:
            return
        channel = self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)
        try:
            await channel.get_partial_message(record.message_id).edit(**fields)
        except discord.HTTPException:
            log.warning("could not edit the message of table %s", record.id, exc_info=True)

    async def _dm(self, record: TableRecord, player: str, key: str, **params: Any) -> None:
        """Send a private DM, once per move at most; stop trying for closed DMs."""
        closed: list[str] = record.extra.setdefault("dm_closed", [])
        if player in closed:
            return
        channel_url = jump_url(record)
        try:
            # create_dm is cached per user and needs no members intent (no GET /users).
            channel = await self.bot.create_dm(discord.Object(id=int(player)))
            await channel.send(t(key, user_locale(record, player), link=channel_url, **params))
        except (discord.Forbidden, discord.NotFound):
            closed.append(player)
            record.extra.setdefault("hint_pending", []).append(player)
            async with self.tables.lock(record.channel_id):
                await self.tables.save(record)
        except discord.HTTPException:
            log.warning("DM to %s failed for table %s", player, record.id, exc_info=True)

    async def _hint_if_dm_closed(
        self, interaction: discord.Interaction, record: TableRecord
    ) -> None:
        """Tell the clicker once, privately, that their DMs are closed and to use My chips."""
        hints: list[str] = record.extra.get("hint_pending", [])
        player = str(interaction.user.id)
        if player in hints:
            hints.remove(player)
            async with self.tables.lock(record.channel_id):
                await self.tables.save(record)
            await interaction.followup.send(
                t("nothanks.dm_closed", interaction.locale), ephemeral=True
            )


def remember_locale(record: TableRecord, interaction: discord.Interaction) -> None:
    """Note the clicking user's Discord language, so their DMs can use it."""
    record.extra.setdefault("user_locales", {})[str(interaction.user.id)] = str(
        interaction.locale.value
    )


def user_locale(record: TableRecord, player: str) -> object:
    """The language a player last used with this table, for DMs."""
    return record.extra.get("user_locales", {}).get(player)


async def setup(bot: CardtableBot) -> None:
    """Load the No Thanks! cog and its persistent buttons."""
    await bot.add_cog(NoThanks(bot))
    bot.add_dynamic_items(TableButton)
