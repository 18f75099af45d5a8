"""The No Thanks! cog: `/nothanks` commands and the Take / No thanks! buttons."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import discord
from discord import app_commands

from bot.client.game_cog import GameTableCog, level_choices, locale_code, seat_of
from bot.client.replies import Reply, answers_user_errors, reply_ephemeral
from bot.engines.nothanks import (
    MAX_PLAYERS,
    PASS,
    TAKE,
)
from bot.games.nothanks import SPEC
from bot.render.components import Click
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec

if TYPE_CHECKING:
    from bot.client.bot import CardtableBot


class NoThanks(GameTableCog):
    """No Thanks! tables: one per channel, persisted move by move."""

    spec: ClassVar[GameSpec] = SPEC
    private_actions: ClassVar[tuple[str, ...]] = ("chips",)

    group = app_commands.Group(name="nothanks", description="Play No Thanks! at this table")

    async def game_click(
        self, interaction: discord.Interaction, reply: Reply, session: TableSession, click: Click
    ) -> Draft | None:
        """Take or No thanks!, for the move the button was made for."""
        if click.action not in ("take", "pass"):
            raise ValueError(f"unknown No Thanks! action {click.action!r}")
        player = seat_of(interaction, session)
        action = TAKE if click.action == "take" else PASS
        locale = locale_code(interaction)
        return await session.change(
            lambda d: d.human_move(player, action, expected_move=click.move, locale=locale),
            then=self.answer_on_table(interaction, reply, session),
        )

    # -- commands -----------------------------------------------------------------------

    @group.command(name="start", description="Open a No Thanks! table in this channel")
    @app_commands.describe(
        open_chips="Show every player's chips to everyone (default: off)",
        bots="Computer players to seat right away (default: none)",
        bot_level="How well the computer players play (default: normal)",
        turn_seconds="Seconds per turn before the computer moves for you (default: 60)",
        thread="Open the table in a thread of its own (default: the server's setting)",
    )
    @app_commands.choices(bot_level=level_choices(SPEC.levels))
    @app_commands.guild_only()
    @answers_user_errors
    async def start(
        self,
        interaction: discord.Interaction,
        open_chips: bool = False,
        bots: app_commands.Range[int, 0, MAX_PLAYERS - 1] = 0,
        bot_level: str = "normal",
        turn_seconds: app_commands.Range[int, 15, 600] = 60,
        thread: bool | None = None,
    ) -> None:
        """Open a lobby in this channel, with the caller as host and first seat."""
        options = {"open_chips": open_chips, "turn_seconds": turn_seconds}
        await self.open_table(interaction, options, bots=bots, level=bot_level, thread=thread)

    @group.command(name="stop", description="End the No Thanks! table in this channel")
    @app_commands.guild_only()
    @answers_user_errors
    async def stop(self, interaction: discord.Interaction) -> None:
        """End this channel's lobby or game (host, or Manage Messages)."""
        await self.stop_table(interaction)

    @group.command(
        name="review", description="Your costliest decisions in a finished No Thanks! game"
    )
    @app_commands.describe(
        number="The game's number in /cardtable history (default: your last game)",
        table="The game's table number, as its replay shows it (default: your last game)",
    )
    @app_commands.guild_only()
    @answers_user_errors
    async def review(
        self,
        interaction: discord.Interaction,
        number: app_commands.Range[int, 1, 10_000] | None = None,
        table: app_commands.Range[int, 1, 2**53] | None = None,
    ) -> None:
        """Review the caller's own decisions in a finished game, privately."""
        await self.show_review(interaction, number, table)

    @group.command(name="rules", description="A short summary of the No Thanks! rules")
    @answers_user_errors
    async def rules(self, interaction: discord.Interaction) -> None:
        """Show the rules privately."""
        await self.show_rules(interaction)

    @group.command(
        name="table", description="Post this channel's table again at the bottom of the channel"
    )
    @app_commands.guild_only()
    @answers_user_errors
    async def table(self, interaction: discord.Interaction) -> None:
        """Re-post the table message, for when it has scrolled away."""
        await self.repost_table(interaction)

    @group.command(
        name="stats", description="A player's No Thanks! games, wins and rating in this server"
    )
    @app_commands.describe(user="Whose stats to show (default: yours)")
    @app_commands.guild_only()
    @answers_user_errors
    async def stats(
        self, interaction: discord.Interaction, user: discord.User | None = None
    ) -> None:
        """Show a person's record in this server privately (computers: via the leaderboard)."""
        await self.show_stats(interaction, user)

    @group.command(
        name="leaderboard", description="This server's best No Thanks! players by skill rating"
    )
    @app_commands.describe(computers="List the computer players too, apart (default: on)")
    @app_commands.guild_only()
    @answers_user_errors
    async def leaderboard(self, interaction: discord.Interaction, computers: bool = True) -> None:
        """Show this server's leaderboard privately, people and computers apart."""
        await self.show_leaderboard(interaction, computers)

    @group.command(name="chips", description="Your private chips, cards and score in this game")
    @app_commands.guild_only()
    @answers_user_errors
    async def chips(self, interaction: discord.Interaction) -> None:
        """Show the caller's chips privately."""
        session = await self.running_session(interaction)
        player = seat_of(interaction, session)
        fields = self.spec.renderer.private(
            session.facts(), session.player_view(player), interaction.locale
        )
        await reply_ephemeral(interaction, fields["content"])
        await self.tables.take_hint(session, player)


async def setup(bot: CardtableBot) -> None:
    """Load the No Thanks! cog."""
    await bot.add_cog(NoThanks(bot))
