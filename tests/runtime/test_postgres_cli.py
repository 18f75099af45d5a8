"""`python -m bot` with DATABASE_URL: start-up errors, the shard claim, migrate-to-postgres."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import bot.__main__ as cli
from bot.client.bot import CardtableBot, create_bot
from bot.queries.players import player_stats
from bot.records.results import GameResult, PlayerResult
from bot.runtime.settings import Settings
from bot.storage import MIGRATIONS, ShardClaimed, TableRecord, open_storage
from tests.backends import Backend
from tests.runtime.test_cli import EXIT_CONFIG, TOKEN, assert_config_error, run_bot

SECRET = "s3cret-pw"


def test_unreachable_database_url(tmp_path: Path) -> None:
    """An unreachable server is one line naming DATABASE_URL, exit 2, the password hidden."""
    url = f"postgresql://bot:{SECRET}@/cardtable?host={tmp_path / 'nowhere'}"
    result = run_bot(tmp_path, DISCORD_TOKEN=TOKEN, DATABASE_URL=url)
    line = assert_config_error(result, "DATABASE_URL")
    assert "cannot connect" in line
    assert SECRET not in line and TOKEN not in line


def test_database_url_of_another_kind(tmp_path: Path) -> None:
    """A URL that is not PostgreSQL's is refused before anything connects."""
    result = run_bot(tmp_path, DISCORD_TOKEN=TOKEN, DATABASE_URL=f"mysql://bot:{SECRET}@db/x")
    line = assert_config_error(result, "DATABASE_URL")
    assert SECRET not in line


def test_database_of_a_newer_bot_is_refused(tmp_path: Path, postgres_url: str) -> None:
    """A PostgreSQL database migrated past this bot's schema stops the start-up."""
    backend = Backend("postgres", postgres_url)
    asyncio.run(backend.set_schema_version(len(MIGRATIONS) + 1))
    result = run_bot(tmp_path, DISCORD_TOKEN=TOKEN, DATABASE_URL=postgres_url)
    assert "newer" in assert_config_error(result, "DATABASE_URL")


def test_claimed_shard_refuses_to_start(
    tmp_path: Path,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A second process asking for a shard the first one owns exits 2 and says which."""

    class SecondProcess:
        """Stands in for the bot: opens storage and claims, as its setup_hook does."""

        def run(self, token: str, log_handler: object = None) -> None:
            async def start() -> None:
                first = await open_storage(postgres_url)
                second = await open_storage(postgres_url)
                try:
                    await first.claim_shards([0, 1])
                    await second.claim_shards([1, 2])
                finally:
                    await second.close()
                    await first.close()

            asyncio.run(start())

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    monkeypatch.setenv("DATABASE_URL", postgres_url)
    monkeypatch.setenv("CARDTABLE_DATABASE", str(tmp_path / "cardtable.db"))
    monkeypatch.setattr(cli, "create_bot", lambda settings: SecondProcess())
    assert cli.main([]) == EXIT_CONFIG
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith("cardtable: error: shard 1 already claimed")


async def sqlite_database(path: Path) -> dict[str, object]:
    """A SQLite database with tables of every kind, moves, a setting and records."""
    storage = await open_storage(path)
    try:
        ids = []
        for channel, status in [(10, "finished"), (11, "running"), (12, "lobby"), (13, "running")]:
            record = await storage.create_table(
                TableRecord(
                    game="nothanks",
                    guild_id=1 << 60,
                    channel_id=channel,
                    host_id=1 << 61,
                    status="running",
                    seats=[1 << 61, 7],
                    state={"channel": channel},
                    meta={"names": {"7": "Čeněk 🃏"}},
                )
            )
            assert record.id is not None
            ids.append(record.id)
            for number in (1, 2):
                record.move_number = number
                await storage.save_table(record, (str(7), f"take {number}"))
            record.status = status
            result = None
            if status == "finished":
                result = GameResult(
                    table_id=record.id,
                    guild_id=record.guild_id,
                    channel_id=channel,
                    game="nothanks",
                    status="finished",
                    seed="9",
                    options={},
                    started_at=1.5,
                    ended_at=2.25,
                    moves=2,
                    players=(
                        PlayerResult(0, str(1 << 61), "ann", None, 10, 1, {"chips": 4}),
                        PlayerResult(1, "7", "Čeněk", None, 20, 2, {"chips": 1}),
                    ),
                )
            await storage.save_table(record, result=result)
        await storage.discard_table(ids.pop())  # a gap in the ids must survive the copy
        await storage.set_guild_language(1 << 60, "de")
        return {
            "tables": [await storage.get_table(table_id) for table_id in ids],
            "moves": [await storage.moves(table_id) for table_id in ids],
            "stats": await player_stats(storage, 1 << 60, "nothanks", "7"),
        }
    finally:
        await storage.close()


def test_migrate_to_postgres_copies_everything(tmp_path: Path, postgres_url: str) -> None:
    """Every row is copied with its id; the counts are printed; new ids follow the old."""
    source = tmp_path / "cardtable.db"
    before = asyncio.run(sqlite_database(source))
    env = {"CARDTABLE_DATABASE": str(source), "DATABASE_URL": postgres_url}
    result = run_bot(tmp_path, "migrate-to-postgres", **env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    counts = {line.split()[0]: line.split()[1:] for line in lines[:-1]}
    assert counts["tables"] == ["sqlite", "3", "postgresql", "3"]
    assert counts["moves"] == ["sqlite", "6", "postgresql", "6"]
    assert counts["game_players"] == ["sqlite", "2", "postgresql", "2"]
    assert set(counts) == {
        "tables",
        "moves",
        "guild_settings",
        "user_settings",
        "games",
        "game_players",
        "ratings",
    }
    assert "counts match" in lines[-1]

    async def read_back() -> None:
        storage = await open_storage(postgres_url)
        try:
            tables = before["tables"]
            assert isinstance(tables, list)
            assert [await storage.get_table(t.id) for t in tables] == tables
            assert [await storage.moves(t.id) for t in tables] == before["moves"]
            assert await storage.get_guild_language(1 << 60) == "de"
            assert await player_stats(storage, 1 << 60, "nothanks", "7") == before["stats"]
            fresh = await storage.create_table(TableRecord(game="rage", channel_id=99, host_id=1))
            assert fresh.id == max(t.id for t in tables) + 2  # after the discarded one too
        finally:
            await storage.close()

    asyncio.run(read_back())
    again = run_bot(tmp_path, "migrate-to-postgres", **env)
    assert_config_error(again, "--replace")
    replaced = run_bot(tmp_path, "migrate-to-postgres", "--replace", **env)
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.splitlines()[0].split() == ["tables", "sqlite", "3", "postgresql", "3"]


def test_migrate_to_postgres_needs_both_databases(tmp_path: Path) -> None:
    """Without DATABASE_URL, or without a SQLite file, the command says what is missing."""
    missing_url = run_bot(
        tmp_path, "migrate-to-postgres", CARDTABLE_DATABASE=str(tmp_path / "x.db")
    )
    assert_config_error(missing_url, "DATABASE_URL")
    url = f"postgresql://bot@/x?host={tmp_path}"
    missing_file = run_bot(
        tmp_path, "migrate-to-postgres", CARDTABLE_DATABASE=str(tmp_path / "x.db"), DATABASE_URL=url
    )
    assert_config_error(missing_file, "CARDTABLE_DATABASE")


async def test_sync_runs_beside_the_bot_that_owns_the_shards(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m bot sync` opens the database but claims no shard; the bot itself does."""

    async def offline_login(self: CardtableBot, token: str) -> None:
        await self.setup_hook()  # what discord.py's login does after the HTTP login

    async def published(self: CardtableBot, guild_id: int | None = None) -> int:
        return 3

    monkeypatch.setattr(CardtableBot, "login", offline_login)
    monkeypatch.setattr(CardtableBot, "sync_commands", published)
    settings = Settings(token=TOKEN, database=tmp_path / "db", database_url=postgres_url)
    running = await open_storage(postgres_url)
    try:
        await running.claim_shards([0])
        assert await cli.sync(settings, None) == 3
        # The bot itself claims at start-up (inside `async with`, as bot.run does).
        async with create_bot(settings) as second:
            with pytest.raises(ShardClaimed):
                await second.login(TOKEN)
    finally:
        await running.close()
