"""Owner commands: publish the slash commands on demand instead of on every start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from discord.ext import commands

from bot.i18n import t

if TYPE_CHECKING:
    from bot.client.bot import CardtableBot


class Admin(commands.Cog):
    """Owner-only maintenance commands, used by mentioning the bot: `@cardtable sync`."""

    def __init__(self, bot: CardtableBot) -> None:
        self.bot = bot

    @commands.command(name="sync")
    @commands.is_owner()
    async def sync(self, ctx: commands.Context, scope: str = "global") -> None:
        """Sync slash commands: `sync` (global), `sync here` (this server, instant)."""
        guild_id = ctx.guild.id if scope == "here" and ctx.guild else None
        count = await self.bot.sync_commands(guild_id)
        key = "admin.synced_guild" if guild_id else "admin.synced_global"
        await ctx.reply(t(key, ctx.guild.preferred_locale if ctx.guild else None, count=count))


async def setup(bot: CardtableBot) -> None:
    """Load the admin cog."""
    await bot.add_cog(Admin(bot))
