"""The High card cog: `/highcard start|stop`, and plays from the private hand."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import discord
from discord import app_commands

from bot.client.game_cog import GameTableCog, level_choices, locale_code, seat_of
from bot.client.replies import Reply, answers_user_errors
from bot.render.components import Click
from bot.table.errors import TableMovedOn
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec
from tests.highcard.engine import MAX_PLAYERS
from tests.highcard.spec import SPEC

if TYPE_CHECKING:
    from bot.client.bot import CardtableBot


class HighCard(GameTableCog):
    """High card tables: one per channel, persisted move by move."""

    spec: ClassVar[GameSpec] = SPEC
    private_actions: ClassVar[tuple[str, ...]] = ("hand",)

    group = app_commands.Group(name="highcard", description="Play High card at this table")

    async def game_click(
        self, interaction: discord.Interaction, reply: Reply, session: TableSession, click: Click
    ) -> Draft | None:
        """A card chosen in a player's private view, for the move the view was made for."""
        if click.action != "play" or len(click.values) != 1:
            raise ValueError(f"unknown High card choice {click.action!r} {click.values!r}")
        player = seat_of(interaction, session)
        try:
            card = int(click.values[0])
        except ValueError:
            raise TableMovedOn() from None
        locale = locale_code(interaction)

        async def answer() -> bool:
            if session.engine is not None and session.engine.is_over:
                await reply.edit(content="The game is over.", view=None)
            else:
                fields = session.spec.renderer.private(
                    session.facts(), session.player_view(player), interaction.locale
                )
                await reply.edit(**fields)
            return False  # the public table is edited by the publisher

        return await session.change(
            lambda d: d.human_move(player, card, expected_move=click.move, locale=locale),
            then=answer,
        )

    @group.command(name="start", description="Open a High card table in this channel")
    @app_commands.describe(
        bots="Computer players to seat right away (default: none)",
        bot_level="How well the computer players play (default: normal)",
        turn_seconds="Seconds per turn before the computer moves for you (default: 60)",
    )
    @app_commands.choices(bot_level=level_choices(SPEC.levels))
    @app_commands.guild_only()
    @answers_user_errors
    async def start(
        self,
        interaction: discord.Interaction,
        bots: app_commands.Range[int, 0, MAX_PLAYERS - 1] = 0,
        bot_level: str = "normal",
        turn_seconds: app_commands.Range[int, 15, 600] = 60,
    ) -> None:
        """Open a lobby in this channel, with the caller as host and first seat."""
        await self.open_table(
            interaction, {"turn_seconds": turn_seconds}, bots=bots, level=bot_level
        )

    @group.command(name="stop", description="End the High card table in this channel")
    @app_commands.guild_only()
    @answers_user_errors
    async def stop(self, interaction: discord.Interaction) -> None:
        """End this channel's lobby or game (host, or Manage Messages)."""
        await self.stop_table(interaction)


async def setup(bot: CardtableBot) -> None:
    """Load the High card cog."""
    await bot.add_cog(HighCard(bot))
