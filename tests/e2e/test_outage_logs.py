"""What an outage writes to the log: a line per refused click, not a traceback per click."""

from __future__ import annotations

import io
import logging
import sqlite3
from collections.abc import Iterator

import pytest
from simcord import Env

from tests.e2e.helpers import choose, open_table

DB_DOWN = "I can't save right now: nothing changed"
CLICKS = 40


class Kept(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes records as the bot does, and keeps them."""

    def __init__(self, stream: io.StringIO) -> None:
        super().__init__(stream)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the record, then write it."""
        self.records.append(record)
        super().emit(record)


@pytest.fixture
def log_text() -> Iterator[Kept]:
    """Every log line of the bot at INFO and above, formatted as the bot formats them
    (tracebacks included), in a buffer."""
    buffer = io.StringIO()
    handler = Kept(buffer)
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)-8s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S")
    )
    root = logging.getLogger()
    root.addHandler(handler)
    level, root.level = root.level, logging.INFO
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


async def test_a_locked_database_logs_a_line_per_refused_click(
    simcord_env: Env, log_text: Kept
) -> None:
    """Forty clicks, each a virtual second apart, on a SQLite file another process holds
    locked: every one is refused with the apology, and the log grows by about a line per
    click (one traceback for the outage at most), a few KB in all."""
    table = await open_table(simcord_env, 3)
    await simcord_env.bot.storage._db.execute("PRAGMA busy_timeout = 20")
    holder = sqlite3.connect(simcord_env.bot.settings.database, isolation_level=None, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    buffer = log_text.stream
    start, first = buffer.tell(), len(log_text.records)
    try:
        for _ in range(CLICKS):
            result = await table.click(table.active(), choose(table.game))
            assert result.ephemeral and result.response is not None
            assert result.response.content.startswith(DB_DOWN)
            await simcord_env.advance_time(1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    grown = buffer.getvalue()[start:]
    records = log_text.records[first:]
    print(f"outage log: {len(grown)} bytes, {len(records)} records for {CLICKS} refused clicks")
    refusals = [r for r in records if r.getMessage().startswith("answered table.db_down")]
    assert len(refusals) == CLICKS  # one line for each refused click
    # Beside them: the outage's start (its one traceback) and a few lines of the
    # heartbeat and the timers, not one per click.
    assert len(records) - len(refusals) <= 10, [r.getMessage()[:100] for r in records]
    assert [r.getMessage()[:40] for r in records if r.exc_info] == [
        "the database is unavailable: the databas"
    ]
    assert len(grown) <= 15_000
