"""The No Thanks! table: `/nothanks` commands, the live game message and private chips."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, ClassVar

import discord
from discord import app_commands

from bot.ai import choose_nothanks_action
from bot.engines.errors import IllegalMove, NotYourTurn, UnknownPlayer
from bot.engines.nothanks import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    PASS,
    TAKE,
    Action,
    Move,
    MustTake,
    NoThanksGame,
)
from bot.i18n import t
from bot.render import nothanks as render
from bot.storage import TableRecord
from bot.table import TableMovedOn, UserError, answers_user_errors, reply_ephemeral
from bot.tablecog import (
    LEVEL_CHOICES,
    GameTableCog,
    Letter,
    TableButton,
    mention,
    remember_locale,
    static_view,
)

if TYPE_CHECKING:
    from bot.app import CardtableBot

GAME = "nothanks"


def game_view(record: TableRecord, game: NoThanksGame, locale: object) -> discord.ui.View:
    """Take, No thanks! and My chips, stamped with the current move number."""
    assert record.id is not None
    move = game.move_number
    view = static_view()
    buttons = (
        ("take", "nothanks.button.take", discord.ButtonStyle.success, None),
        ("pass", "nothanks.button.pass", discord.ButtonStyle.danger, None),
        ("chips", "nothanks.button.chips", discord.ButtonStyle.secondary, "🪙"),
    )
    for action, key, style, emoji in buttons:
        view.add_item(
            TableButton.make(
                GAME, record.id, move, action, label=t(key, locale), style=style, emoji=emoji
            )
        )
    return view


class NoThanks(GameTableCog):
    """No Thanks! tables: one per channel, persisted move by move."""

    game: ClassVar[str] = GAME
    min_players: ClassVar[int] = MIN_PLAYERS
    max_players: ClassVar[int] = MAX_PLAYERS
    colour: ClassVar[discord.Colour] = render.COLOUR

    group = app_commands.Group(name="nothanks", description="Play No Thanks! at this table")

    def __init__(self, bot: CardtableBot) -> None:
        super().__init__(bot)
        self.games: dict[int, NoThanksGame] = self.engines

    # -- the game's hooks -------------------------------------------------------------

    def create_engine(self, record: TableRecord, seed: int) -> NoThanksGame:
        """Deal a game for the seated players (seat order = join order)."""
        return NoThanksGame.new(
            [str(seat) for seat in record.seats],
            seed=seed,
            open_chips=bool(record.options.get("open_chips")),
        )

    def engine_from_dict(self, state: dict[str, Any]) -> NoThanksGame:
        """Rebuild a stored game."""
        return NoThanksGame.from_dict(state)

    def option_lines(self, record: TableRecord, locale: object) -> list[str]:
        """Open or private chips."""
        if record.options.get("open_chips", False):
            return [t("nothanks.option.open_chips_on", locale)]
        return [t("nothanks.option.open_chips_off", locale)]

    def render_table(
        self, record: TableRecord, engine: NoThanksGame, locale: object
    ) -> dict[str, Any]:
        """The live table, or the final scoreboard once the last card is taken."""
        if engine.is_over:
            return {
                "content": None,
                "embed": render.final_embed(record, engine, locale),
                "view": self.final_view(record, locale),
            }
        content = None
        if engine.move_number == 0:
            starter = mention(record, engine.active_player or "")
            content = t("nothanks.game.started", locale, player=starter)
        return {
            "content": content,
            "embed": render.game_embed(record, engine, locale),
            "view": game_view(record, engine, locale),
        }

    def start_letters(self, record: TableRecord, engine: NoThanksGame) -> list[Letter]:
        """Everybody learns their starting chips by DM."""
        return [
            (player, "nothanks.dm.started", {"count": engine.chips[seat]})
            for seat, player in enumerate(engine.players)
        ]

    async def unlocked_action(
        self, interaction: discord.Interaction, record: TableRecord, action: str
    ) -> bool:
        """My chips only reads, so it needs no lock."""
        if action != "chips":
            return False
        await self._show_chips(interaction, record)
        return True

    async def game_action(
        self,
        interaction: discord.Interaction,
        record: TableRecord,
        engine: NoThanksGame,
        move: int,
        action: str,
        arg: str,
        values: list[str],
    ) -> list[Letter]:
        """Apply a Take or No thanks!, commit it, edit the message; return the DMs to send."""
        if action not in ("take", "pass") or move != engine.move_number:
            raise TableMovedOn()
        player = str(interaction.user.id)
        try:
            applied = engine.apply(player, TAKE if action == "take" else PASS)
        except UnknownPlayer:
            raise UserError("table.not_seated") from None
        except NotYourTurn:
            raise UserError("nothanks.not_your_turn", player=f"<@{engine.active_player}>") from None
        except MustTake:
            raise UserError("nothanks.must_take", card=engine.current_card) from None
        except IllegalMove as error:
            raise UserError("nothanks.illegal", reason=str(error)) from None
        remember_locale(record, interaction)
        await self.commit(record, engine, player, applied.action.value)
        await interaction.response.edit_message(**self.publish(record, engine))
        return self.letters_for(player, engine, applied)

    @staticmethod
    def letters_for(player: str, engine: NoThanksGame, applied: Move) -> list[Letter]:
        """Only a move that changed the player's chips is worth a DM."""
        chips = engine.chips[applied.seat]
        if applied.action is PASS:
            return [(player, "nothanks.dm.passed", {"card": applied.card, "count": chips})]
        if applied.chips_on_card > 0:
            params = {"card": applied.card, "gained": applied.chips_on_card, "count": chips}
            return [(player, "nothanks.dm.took", params)]
        return []

    def acting_players(self, engine: NoThanksGame) -> list[str]:
        """The one active player, if the game runs."""
        return [] if engine.active_player is None else [engine.active_player]

    def computer_action(
        self, engine: NoThanksGame, player: str, level: str, rng: random.Random
    ) -> Action:
        """A computer's take-or-pass from the player's own view."""
        return choose_nothanks_action(engine.view(player), level, rng)

    def apply_action(
        self, record: TableRecord, engine: NoThanksGame, player: str, action: Action
    ) -> tuple[str, list[Letter]]:
        """Apply a computer's (or a timed-out player's) move."""
        applied = engine.apply(player, action)
        return applied.action.value, self.letters_for(player, engine, applied)

    async def _show_chips(self, interaction: discord.Interaction, record: TableRecord) -> None:
        assert record.id is not None
        game = self.games.get(record.id)
        if game is None or record.status != "running":
            raise TableMovedOn()
        player = str(interaction.user.id)
        if player not in game.players:
            raise UserError("table.not_seated")
        await reply_ephemeral(interaction, render.private_text(game, player, interaction.locale))
        hints = record.extra.get("hint_pending", [])
        if player in hints:
            hints.remove(player)

    # -- commands -----------------------------------------------------------------------

    @group.command(name="start", description="Open a No Thanks! table in this channel")
    @app_commands.describe(
        open_chips="Show every player's chips to everyone (default: off)",
        bots="Computer players to seat right away (default: none)",
        bot_level="How well the computer players play (default: normal)",
        turn_seconds="Seconds per turn before the computer moves for you (default: 60)",
    )
    @app_commands.choices(bot_level=LEVEL_CHOICES)
    @app_commands.guild_only()
    @answers_user_errors
    async def start(
        self,
        interaction: discord.Interaction,
        open_chips: bool = False,
        bots: app_commands.Range[int, 0, MAX_PLAYERS - 1] = 0,
        bot_level: str = "normal",
        turn_seconds: app_commands.Range[int, 15, 600] = 60,
    ) -> None:
        """Open a lobby in this channel, with the caller as host and first seat."""
        options = {"open_chips": open_chips, "turn_seconds": turn_seconds}
        await self.open_table(interaction, options, bots=bots, level=bot_level)

    @group.command(name="stop", description="End the No Thanks! table in this channel")
    @app_commands.guild_only()
    @answers_user_errors
    async def stop(self, interaction: discord.Interaction) -> None:
        """End this channel's lobby or game (host, or Manage Messages)."""
        await self.stop_table(interaction)

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
        record = self.running_record(interaction)
        if record.game != GAME:
            raise UserError("nothanks.no_game_here")
        await self._show_chips(interaction, record)


async def setup(bot: CardtableBot) -> None:
    """Load the No Thanks! cog."""
    await bot.add_cog(NoThanks(bot))
