"""The bot's storage: tables, their move logs and the records, on SQLite or PostgreSQL.

`Storage.open(path)` opens a SQLite file (the default); `Storage.open("postgresql://…")`
a PostgreSQL database. Both run the same migrations (bot.storage.schema) and the same
units of work (bot.storage.work) behind the one base class (bot.storage.base).
"""

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
    "schema_version_of",
    "upgrade_extra",
]
