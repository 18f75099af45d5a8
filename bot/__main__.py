"""Command line: `python -m bot` runs the bot; `python -m bot sync [--guild ID]` syncs commands."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

import discord

from bot.app import create_bot
from bot.settings import ConfigError, RedactingFilter, Settings, load_settings
from bot.storage import MIGRATIONS, schema_version_of

EXIT_CONFIG = 2


def configure_logging(settings: Settings) -> None:
    """Log to stderr at the configured level, with the token redacted everywhere."""
    handler = logging.StreamHandler()
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)-8s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S")
    )
    handler.addFilter(RedactingFilter(settings.token))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level)


async def sync(settings: Settings, guild_id: int | None) -> int:
    """Log in, publish the slash commands, and log out."""
    bot = create_bot(settings)
    async with bot:
        await bot.login(settings.token)
        return await bot.sync_commands(guild_id)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line: no command runs the bot, `sync` publishes the commands."""
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("run", help="run the bot (the default)")
    sync_parser = commands.add_parser("sync", help="publish the slash commands and exit")
    sync_parser.add_argument(
        "--guild",
        type=int,
        default=None,
        help="sync to one server instantly (default: CARDTABLE_DEV_GUILD_ID, else global)",
    )
    sync_parser.add_argument(
        "--global", dest="everywhere", action="store_true", help="sync globally"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = parse_args(argv)
    try:
        settings = load_settings()
        if schema_version_of(settings.database) > len(MIGRATIONS):
            raise ConfigError(
                f"CARDTABLE_DATABASE {settings.database} was written by a newer cardtable; "
                "upgrade the bot or use another database"
            )
    except ConfigError as error:
        print(f"cardtable: error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    configure_logging(settings)
    try:
        if args.command == "sync":
            guild = None if args.everywhere else (args.guild or settings.dev_guild_id)
            count = asyncio.run(sync(settings, guild))
            where = f"guild {guild}" if guild else "all guilds (propagation may take an hour)"
            print(f"synced {count} commands to {where}")
            return 0
        create_bot(settings).run(settings.token, log_handler=None)
    except discord.LoginFailure:
        print("cardtable: error: DISCORD_TOKEN was refused by Discord (reset it?)", file=sys.stderr)
        return EXIT_CONFIG
    except discord.PrivilegedIntentsRequired:
        print("cardtable: error: a privileged intent is not enabled for this bot", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
