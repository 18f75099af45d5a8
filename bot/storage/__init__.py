"""The bot's storage: tables, their move logs and the records, on SQLite or PostgreSQL.

`open_storage(path)` opens a SQLite file (the default); `open_storage("postgresql://…")`
a PostgreSQL database. Both backends run the same migrations (bot.storage.schema) and the
same units of work (bot.storage.work) behind one base class (bot.storage.base), and import
nothing of each other.

Usage::

    storage = await open_storage("data/cardtable.db")
    try:
        records = await storage.open_tables()
    finally:
        await storage.close()
"""

from __future__ import annotations

from pathlib import Path

from bot.storage.base import Storage
from bot.storage.rows import (
    OPEN_STATUSES,
    BrokenRow,
    ChannelBusy,
    DatabaseUnavailable,
    Row,
    SchemaTooNew,
    ShardClaimed,
    ShardCountMismatch,
    StaleWrite,
    TableRecord,
    broken_row,
    is_postgres_url,
)
from bot.storage.schema import MIGRATIONS, TABLES, Migration, Rewrite, upgrade_extra
from bot.storage.sqlite import SqliteStorage, schema_version_of


async def open_storage(target: Path | str, *, busy_timeout: float = 5.0) -> Storage:
    """Open the database (a SQLite path or a postgresql:// URL) and migrate its schema.

    ``busy_timeout`` is how long a SQLite write waits for another connection's lock
    before it fails; the table layer defers a click whose save takes longer than
    Discord allows.
    """
    if is_postgres_url(target):
        # Imported here so that a SQLite bot never loads asyncpg.
        from bot.storage.postgres import PostgresStorage

        return await PostgresStorage.connect(str(target))
    return await SqliteStorage.connect(target, busy_timeout=busy_timeout)


__all__ = [
    "MIGRATIONS",
    "OPEN_STATUSES",
    "TABLES",
    "BrokenRow",
    "ChannelBusy",
    "DatabaseUnavailable",
    "Migration",
    "Rewrite",
    "Row",
    "SchemaTooNew",
    "ShardClaimed",
    "ShardCountMismatch",
    "SqliteStorage",
    "StaleWrite",
    "Storage",
    "TableRecord",
    "broken_row",
    "is_postgres_url",
    "open_storage",
    "schema_version_of",
    "upgrade_extra",
]
