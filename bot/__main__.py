"""Command line: `python -m bot` runs the bot; `python -m bot sync [--guild ID]` syncs commands;
`python -m bot health` checks the running bot (for Docker's HEALTHCHECK);
`python -m bot migrate-to-postgres` copies the SQLite database to DATABASE_URL;
`python -m bot demo` plays the real bot in the browser, inside SimCord (the `demo` extra)."""

from __future__ import annotations

import sys

# Docker's HEALTHCHECK runs `health` every 30 s beside the bot: it is answered before
# discord.py and the bot are imported (they cost over a second of CPU; this, milliseconds).
# Hence the imports below this block (E402 is off for this file in pyproject.toml).
if __name__ == "__main__" and sys.argv[1:] in (["health"], ["health", "--live"]):
    from bot.runtime.health import run as _health

    sys.exit(_health(live_only=sys.argv[2:] == ["--live"]))

import argparse
import asyncio
import logging
from collections.abc import Sequence

import discord

from bot.client.bot import create_bot
from bot.runtime import gc_tuning, health, logformat
from bot.runtime.health import clear_heartbeat
from bot.runtime.instance_lock import InstanceLock, acquire
from bot.runtime.settings import (
    ConfigError,
    RedactingFilter,
    Settings,
    hide_password,
    load_settings,
    parse_database_url,
    redact,
)
from bot.storage import (
    MIGRATIONS,
    SchemaTooNew,
    ShardClaimed,
    ShardCountMismatch,
    schema_version_of,
)
from bot.storage.copy import CopyRefused, copy_to_postgres
from bot.storage.postgres import probe

EXIT_CONFIG = 2
# discord.py logs whole request bodies (discord.http) and gateway events (discord.gateway)
# at DEBUG: hands, chips, message contents and interaction tokens.
WIRE_LOGGERS = ("discord.http", "discord.gateway")


def configure_logging(settings: Settings) -> None:
    """Log to stderr at the configured level and format (text or JSON), with the token and
    the database password redacted everywhere."""
    handler = logging.StreamHandler()
    handler.setFormatter(logformat.formatter(settings.log_format))
    handler.addFilter(RedactingFilter(settings.token, *settings.database_secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level)
    level = logging.getLevelName(settings.log_level)
    # Capped at INFO unless CARDTABLE_HTTP_DEBUG asks; never below the root's own level,
    # or a WARNING bot would start printing discord.py's INFO lines.
    wire_level = logging.NOTSET if settings.http_debug else max(logging.INFO, level)
    for name in WIRE_LOGGERS:
        logging.getLogger(name).setLevel(wire_level)


async def sync(settings: Settings, guild_id: int | None) -> int:
    """Log in, publish the slash commands, and log out (the tables are left to the bot)."""
    bot = create_bot(settings, serve_tables=False)
    async with bot:
        await bot.login(settings.token)
        return await bot.sync_commands(guild_id)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line: no command runs the bot, `sync` publishes the commands."""
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("run", help="run the bot (the default)")
    health_parser = commands.add_parser(
        "health",
        help="exit 0 if the running bot is alive and ready (connected, its database"
        " answering), 3 if alive but not ready, 1 if not alive",
    )
    health_parser.add_argument(
        "--live",
        action="store_true",
        help="liveness only (Docker's HEALTHCHECK): exit 0 if alive, ready or not, else 1",
    )
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
    # Parsed by bot.demo itself (main() hands it the rest of the line); listed for --help.
    commands.add_parser(
        "demo",
        add_help=False,
        help="try the games in the browser, no Discord needed (see `demo --help`)",
    )
    copy_parser = commands.add_parser(
        "migrate-to-postgres",
        help="copy every table, move, setting and record from CARDTABLE_DATABASE to"
        " DATABASE_URL (stop the bot first), then check the row counts",
    )
    copy_parser.add_argument(
        "--replace",
        action="store_true",
        help="empty a PostgreSQL database that already holds rows (default: refuse)",
    )
    return parser.parse_args(argv)


def check_postgres(url: str) -> None:
    """Connect once before starting: a bad or unreachable DATABASE_URL is a ConfigError."""
    try:
        version = asyncio.run(probe(url))
    except Exception as error:
        # The driver's message could quote the URL: its password is taken out.
        reason = redact(f"{type(error).__name__}: {error}", parse_database_url(url).secrets)
        raise ConfigError(f"DATABASE_URL {hide_password(url)}: cannot connect ({reason})") from None
    if version > len(MIGRATIONS):
        raise ConfigError(
            f"DATABASE_URL {hide_password(url)} was written by a newer cardtable; "
            "upgrade the bot or use another database"
        )


def migrate_to_postgres(replace: bool) -> int:
    """`python -m bot migrate-to-postgres`: copy, check the counts, print them."""
    try:
        settings = load_settings(require_token=False)
        if settings.database_url is None:
            raise ConfigError("DATABASE_URL is not set: name the PostgreSQL database to copy to")
        if not settings.database.is_file() or settings.database.stat().st_size == 0:
            raise ConfigError(f"CARDTABLE_DATABASE {settings.database} holds no database to copy")
        check_postgres(settings.database_url)
        # The bot must not write to the file while it is copied: hold its instance lock.
        with acquire(settings.database):
            counts = asyncio.run(
                copy_to_postgres(settings.database, settings.database_url, replace)
            )
    except (ConfigError, CopyRefused, SchemaTooNew) as error:
        print(f"cardtable: error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    width = max(len(name) for name, _, _ in counts)
    for name, source, target in counts:
        print(f"{name:<{width}}  sqlite {source:>8}  postgresql {target:>8}")
    if any(source != target for _, source, target in counts):
        print("cardtable: error: the row counts differ (see above)", file=sys.stderr)
        return 1
    print(f"copied {settings.database} to {hide_password(settings.database_url)}: counts match")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["demo"]:
        # Imported here only: the bot itself never loads SimCord.
        from bot.demo import main as demo

        return demo(words[1:])
    args = parse_args(words)
    if args.command == "health":
        # Beside a running bot: needs no token and takes no lock, and never exits 2.
        return health.run(live_only=args.live)
    if args.command == "migrate-to-postgres":
        return migrate_to_postgres(args.replace)
    lock: InstanceLock | None = None
    try:
        settings = load_settings()
        if settings.database_url is not None:
            # Several processes share one PostgreSQL database: they claim shards (advisory
            # locks, taken in setup_hook) instead of the file's instance lock.
            check_postgres(settings.database_url)
        elif schema_version_of(settings.database) > len(MIGRATIONS):
            raise ConfigError(
                f"CARDTABLE_DATABASE {settings.database} was written by a newer cardtable; "
                "upgrade the bot or use another database"
            )
        # Only a running bot takes the instance lock: `sync` is short-lived, never touches
        # the tables, and must work while the bot runs on the same volume.
        elif args.command != "sync":
            lock = acquire(settings.database)
    except ConfigError as error:
        print(f"cardtable: error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    if lock is not None:
        # Ours alone now (the lock), and no event loop runs yet to be blocked.
        try:
            clear_heartbeat(settings.database)
        except OSError as exc:
            print(f"cardtable: error: cannot remove old heartbeat ({exc})", file=sys.stderr)
            lock.release()
            return EXIT_CONFIG
    configure_logging(settings)
    try:
        if args.command == "sync":
            guild = None if args.everywhere else (args.guild or settings.dev_guild_id)
            count = asyncio.run(sync(settings, guild))
            where = f"guild {guild}" if guild else "all guilds (propagation may take an hour)"
            print(f"synced {count} commands to {where}")
            return 0
        bot = create_bot(settings)
        gc_tuning.tune()
        bot.freeze_when_ready = True
        bot.holds_instance_lock = lock is not None
        bot.run(settings.token, log_handler=None)
        return bot.exit_status
    except discord.LoginFailure:
        print("cardtable: error: DISCORD_TOKEN was refused by Discord (reset it?)", file=sys.stderr)
        return EXIT_CONFIG
    except discord.PrivilegedIntentsRequired:
        print("cardtable: error: a privileged intent is not enabled for this bot", file=sys.stderr)
        return EXIT_CONFIG
    except (ShardClaimed, ShardCountMismatch, SchemaTooNew) as error:
        # Raised while the bot opens its storage (setup_hook): another process owns one of
        # our shards or splits the guilds into another number of shards, or another
        # version migrated the database meanwhile.
        print(f"cardtable: error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 0
    finally:
        if lock is not None:
            lock.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
