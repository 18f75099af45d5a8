"""Moving from SQLite to PostgreSQL: every row of every table, ids kept, counts checked."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]

from bot.storage import open_storage
from bot.storage.postgres import CONNECT_TIMEOUT
from bot.storage.schema import TABLES

Counts = list[tuple[str, int, int]]


class CopyRefused(Exception):
    """The target database already holds rows, and replacing them was not asked for."""


Source = dict[str, tuple[list[str], list[tuple[Any, ...]]]]


def _read_source(path: Path) -> tuple[Source, int]:
    """Every table's columns and rows, and the last table id ever given (AUTOINCREMENT's
    memory, so an id is never reused), read in one transaction: one consistent snapshot."""
    connection = sqlite3.connect(path)
    try:
        connection.execute("BEGIN")
        found: Source = {}
        last = connection.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'tables'"
        ).fetchone()[0]
        for table in TABLES:
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            rows = connection.execute(
                f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid"
            ).fetchall()
            found[table] = (columns, rows)
        connection.rollback()
    finally:
        connection.close()
    return found, int(last)


def _typed(value: Any, kind: str) -> Any:
    """A SQLite value as the PostgreSQL column's type wants it (SQLite types are loose)."""
    if value is None:
        return None
    if kind == "double precision":
        return float(value)
    if kind in ("integer", "bigint"):
        return int(value)
    return value


async def _count(connection: asyncpg.Connection, table: str) -> int:
    return int(await connection.fetchval(f"SELECT COUNT(*) FROM {table}"))


async def copy_to_postgres(source: Path, url: str, replace: bool = False) -> Counts:
    """Copy the SQLite database at ``source`` to the PostgreSQL database at ``url``.

    Both are first brought to the latest schema. A target that holds any row is refused
    (CopyRefused) unless ``replace``, which empties it first. The copy is one transaction;
    the identity sequence continues after the last table id SQLite gave. Returns, per table, the
    row counts of the source and of the target, read back after the copy.
    """
    for target in (source, url):
        # Both at the latest schema, so their tables have the same columns.
        await (await open_storage(target)).close()
    rows, last_id = _read_source(source)
    connection = await asyncpg.connect(url, timeout=CONNECT_TIMEOUT)
    try:
        async with connection.transaction():
            held = {table: await _count(connection, table) for table in TABLES}
            if any(held.values()) and not replace:
                listed = ", ".join(f"{table} {count}" for table, count in held.items() if count)
                raise CopyRefused(
                    f"the PostgreSQL database already holds rows ({listed}); pass --replace"
                    " to empty it first"
                )
            await connection.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
            for table in TABLES:
                columns, values = rows[table]
                kinds = dict(
                    await connection.fetch(
                        "SELECT column_name, data_type FROM information_schema.columns"
                        " WHERE table_schema = current_schema() AND table_name = $1",
                        table,
                    )
                )
                records = [
                    tuple(
                        _typed(value, kinds[column])
                        for value, column in zip(row, columns, strict=True)
                    )
                    for row in values
                ]
                await connection.copy_records_to_table(table, records=records, columns=columns)
            await connection.execute(
                "SELECT setval(pg_get_serial_sequence('tables', 'id'),"
                " GREATEST(MAX(id), $1, 1), GREATEST(MAX(id), $1) > 0) FROM tables",
                last_id,
            )
        return [(table, len(rows[table][1]), await _count(connection, table)) for table in TABLES]
    finally:
        await connection.close()


__all__ = ["CopyRefused", "Counts", "copy_to_postgres"]
