"""SQLite storage: migrations, table round trips, one open table per channel, the move log."""

from __future__ import annotations

import gc
import sqlite3
import warnings
from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import pytest

from bot.storage import MIGRATIONS, OPEN_STATUSES, ChannelBusy, Storage, TableRecord

LATEST = len(MIGRATIONS)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test database lives."""
    return tmp_path / "cardtable.db"


@pytest.fixture
async def storage(db_path: Path) -> AsyncIterator[Storage]:
    """A freshly migrated database, closed after the test."""
    opened = await Storage.open(db_path)
    try:
        yield opened
    finally:
        await opened.close()


def lobby(channel_id: int = 100, **fields: object) -> TableRecord:
    """A No Thanks! lobby record in a channel."""
    values: dict[str, object] = {
        "game": "nothanks",
        "guild_id": 1,
        "channel_id": channel_id,
        "host_id": 11,
        "seats": [11],
    }
    values.update(fields)
    return TableRecord(**values)  # type: ignore[arg-type]


async def reopen(path: Path) -> Storage:
    """A second, independent connection to the same database file."""
    return await Storage.open(path)


def table_names(path: Path) -> set[str]:
    """The SQL tables in a database file, read with plain sqlite3."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {row[0] for row in rows}


# -- migrations ------------------------------------------------------------------------


async def test_new_database_is_migrated_to_latest(storage: Storage, db_path: Path) -> None:
    """A new database reaches the latest schema version with every table."""
    assert LATEST >= 1
    assert await storage.schema_version() == LATEST
    assert {"tables", "moves"} <= table_names(db_path)


async def test_migrations_are_idempotent_on_reopen(db_path: Path) -> None:
    """Reopening a migrated database changes neither its version nor its data."""
    first = await Storage.open(db_path)
    record = await first.create_table(lobby())
    await first.close()
    for _ in range(2):
        again = await reopen(db_path)
        try:
            assert await again.schema_version() == LATEST
            await again.migrate()
            assert await again.schema_version() == LATEST
            assert await again.get_table(record.id or 0) == record
        finally:
            await again.close()


# The leaked connection is the subject of test_refused_database_is_closed below.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_database_newer_than_code_is_refused(db_path: Path) -> None:
    """A database from a newer version of the bot is refused, not downgraded or touched."""
    with sqlite3.connect(db_path) as connection:
        connection.execute(f"PRAGMA user_version = {LATEST + 1}")
    with pytest.raises(RuntimeError, match="newer"):
        await Storage.open(db_path)
    with sqlite3.connect(db_path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == LATEST + 1
    assert "tables" not in table_names(db_path)


async def test_refused_database_is_closed(db_path: Path) -> None:
    """Refusing a newer database closes its connection instead of leaking it."""
    with sqlite3.connect(db_path) as connection:
        connection.execute(f"PRAGMA user_version = {LATEST + 1}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(RuntimeError):
            await Storage.open(db_path)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


async def test_wal_mode(storage: Storage) -> None:
    """The database runs in WAL mode, so a crash never loses a committed move."""
    async with storage._db.execute("PRAGMA journal_mode") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    assert str(row[0]).lower() == "wal"


# -- tables ----------------------------------------------------------------------------


async def test_create_assigns_ids(storage: Storage) -> None:
    """create_table sets a fresh id on each record."""
    first = await storage.create_table(lobby(100))
    second = await storage.create_table(lobby(200))
    assert first.id is not None
    assert second.id is not None
    assert first.id != second.id


async def test_round_trip(storage: Storage, db_path: Path) -> None:
    """Options, seats, state and metadata survive create, save and a fresh get."""
    record = await storage.create_table(
        lobby(
            options={"open_chips": True},
            seats=[11, 22, 33],
            meta={"names": {"11": "Ann", "22": "Bo"}, "locale": "de"},
        )
    )
    assert record.id is not None
    assert await storage.get_table(record.id) == record

    record.status = "running"
    record.message_id = 555
    record.host_id = 22
    record.state = {"version": 1, "pile": [3, 35], "chips": [11, 11, 11], "nested": {"a": None}}
    record.move_number = 7
    record.meta["user_locales"] = {"11": "en-US", "22": "ru"}
    record.meta["names"]["33"] = "Čeněk 🃏"
    await storage.save_table(record)

    again = await reopen(db_path)
    try:
        loaded = await again.get_table(record.id)
    finally:
        await again.close()
    assert loaded == record
    assert loaded is not None
    assert loaded.is_open


async def test_get_unknown_table(storage: Storage) -> None:
    """get_table of an id that does not exist is None."""
    assert await storage.get_table(12345) is None


async def test_save_without_id_is_refused(storage: Storage) -> None:
    """save_table of a record that was never created raises ValueError."""
    with pytest.raises(ValueError):
        await storage.save_table(lobby())


async def test_second_open_table_in_channel_is_busy(storage: Storage) -> None:
    """A second lobby or game in a channel with an open table raises ChannelBusy."""
    first = await storage.create_table(lobby(100))
    with pytest.raises(ChannelBusy):
        await storage.create_table(lobby(100))
    first.status = "running"
    await storage.save_table(first)
    with pytest.raises(ChannelBusy):
        await storage.create_table(lobby(100, status="running"))
    assert [table.id for table in await storage.open_tables()] == [first.id]


@pytest.mark.parametrize("status", ["finished", "cancelled", "abandoned"])
async def test_closed_table_does_not_block_channel(storage: Storage, status: str) -> None:
    """Once a channel's table is finished, cancelled or abandoned, a new one may open."""
    first = await storage.create_table(lobby(100))
    first.status = status
    await storage.save_table(first)
    second = await storage.create_table(lobby(100))
    assert second.id != first.id
    third_channel = await storage.create_table(lobby(300))
    assert third_channel.id is not None


async def test_storage_usable_after_channel_busy(storage: Storage) -> None:
    """A refused create leaves no open transaction behind: later writes still commit."""
    first = await storage.create_table(lobby(100))
    with pytest.raises(ChannelBusy):
        await storage.create_table(lobby(100))
    first.move_number = 1
    await storage.save_table(first, ("11", "take"))
    assert await storage.moves(first.id or 0) == [(1, "11", "take")]


# -- the move log ----------------------------------------------------------------------


async def test_save_with_move_commits_both(storage: Storage, db_path: Path) -> None:
    """A saved move and the table state it produced are both visible to a new connection."""
    record = await storage.create_table(lobby(status="running", state={"n": 0}))
    assert record.id is not None
    for number, (player, action) in enumerate([("11", "pass"), ("22", "take")], start=1):
        record.move_number = number
        record.state = {"n": number}
        await storage.save_table(record, (player, action))

    other = await reopen(db_path)
    try:
        assert await other.moves(record.id) == [(1, "11", "pass"), (2, "22", "take")]
        loaded = await other.get_table(record.id)
        assert loaded is not None
        assert loaded.state == {"n": 2}
        assert loaded.move_number == 2
    finally:
        await other.close()


async def test_save_without_move_leaves_log_alone(storage: Storage) -> None:
    """Saving a table without a move (a lobby change) adds nothing to the move log."""
    record = await storage.create_table(lobby())
    record.seats.append(22)
    await storage.save_table(record)
    assert await storage.moves(record.id or 0) == []


async def test_failed_move_rolls_back_state(storage: Storage, db_path: Path) -> None:
    """If the move cannot be logged, the table update is rolled back with it."""
    record = await storage.create_table(lobby(status="running", state={"n": 0}))
    assert record.id is not None
    record.move_number = 1
    record.state = {"n": 1}
    await storage.save_table(record, ("11", "pass"))

    record.state = {"n": "clobbered"}  # same move number: the log refuses a duplicate
    with pytest.raises(aiosqlite.IntegrityError):
        await storage.save_table(record, ("22", "take"))

    other = await reopen(db_path)
    try:
        loaded = await other.get_table(record.id)
        assert loaded is not None
        assert loaded.state == {"n": 1}
        assert await other.moves(record.id) == [(1, "11", "pass")]
    finally:
        await other.close()


async def test_moves_are_per_table(storage: Storage) -> None:
    """Each table has its own move log, numbered independently."""
    one = await storage.create_table(lobby(100, status="running"))
    two = await storage.create_table(lobby(200, status="running"))
    one.move_number = two.move_number = 1
    await storage.save_table(one, ("11", "take"))
    await storage.save_table(two, ("22", "pass"))
    assert await storage.moves(one.id or 0) == [(1, "11", "take")]
    assert await storage.moves(two.id or 0) == [(1, "22", "pass")]


# -- open tables -----------------------------------------------------------------------


async def test_open_tables_only_lobby_and_running(storage: Storage) -> None:
    """open_tables lists lobbies and running games, oldest first, never closed tables."""
    statuses = ["lobby", "finished", "running", "cancelled", "abandoned", "lobby"]
    created = [
        await storage.create_table(lobby(1000 + index, status=status))
        for index, status in enumerate(statuses)
    ]
    expected = [record.id for record in created if record.status in OPEN_STATUSES]
    assert [record.id for record in await storage.open_tables()] == expected
    assert all(record.is_open for record in await storage.open_tables())
    assert not any(record.is_open for record in created if record.id not in expected)


async def test_open_tables_filters_by_game(storage: Storage) -> None:
    """open_tables(game) lists only that game's tables."""
    nothanks = await storage.create_table(lobby(100))
    rage = await storage.create_table(lobby(200, game="rage"))
    assert [r.id for r in await storage.open_tables("nothanks")] == [nothanks.id]
    assert [r.id for r in await storage.open_tables("rage")] == [rage.id]
    assert await storage.open_tables("other") == []


async def test_closing_a_table_removes_it_from_open_tables(storage: Storage) -> None:
    """A table saved as finished no longer appears among the open tables."""
    record = await storage.create_table(lobby(status="running"))
    assert [r.id for r in await storage.open_tables()] == [record.id]
    record.status = "finished"
    await storage.save_table(record)
    assert await storage.open_tables() == []
