"""The Discord layer: the bot, click routing, the game cog, replies, guild settings, publishing."""
