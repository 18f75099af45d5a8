"""Absences (/cardtable away) as the processes read them: the changes since a stamp, and
the ones still running, each from an index."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.storage import Storage
from tests.backends import Backend

T0 = 1_700_000_000.0
DAY = 86400.0


@pytest.fixture
async def storage(backend: Backend) -> AsyncIterator[Storage]:
    """A migrated storage on this test's database (each backend in turn)."""
    opened = await backend.open()
    try:
        yield opened
    finally:
        await opened.close()


async def test_changes_since_a_stamp_and_running_absences(storage: Storage) -> None:
    """absences_changed returns every absence set or ended after the stamp, oldest change
    first, an ended one with no end date; absences_running the ones not over yet, and
    one stored before stamps were kept (its stamp read as 0)."""
    await storage.set_user_away(1, T0 + 3 * DAY, 2023, 3, T0 + 10)
    await storage.set_user_away(2, T0 + 2 * DAY, 2023, 2, T0 + 5)
    await storage.set_user_away(3, T0 + DAY, 2023, 1, T0)
    await storage.set_user_away(3, None, 2023, 0, T0 + 20)  # back: the newest change
    await storage.set_user_notify(4, "daily")  # no absence at all
    assert await storage.absences_changed(T0 + 1) == [
        (2, T0 + 2 * DAY, T0 + 5),
        (1, T0 + 3 * DAY, T0 + 10),
        (3, None, T0 + 20),
    ]
    assert await storage.absences_changed(T0 + 10) == [(3, None, T0 + 20)]
    assert await storage.absences_changed(T0 + 20) == []
    running = await storage.absences_running(T0 + 2 * DAY)
    assert running == [(1, T0 + 3 * DAY, T0 + 10)]
    assert sorted(await storage.absences_running(T0)) == [
        (1, T0 + 3 * DAY, T0 + 10),
        (2, T0 + 2 * DAY, T0 + 5),
    ]
    # The days taken are kept with the change.
    assert await storage.get_user_away(3) == (None, 2023, 0)
    assert await storage.get_user_away(1) == (T0 + 3 * DAY, 2023, 3)


# SQLite's plans: PostgreSQL's planner rightly scans a table this small, so its plan says
# nothing about the indexes; the results are checked on both backends above.
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_each_look_reads_an_index(storage: Storage) -> None:
    """A process's look at changed absences, and start-up's at running ones, search an
    index of user_settings: no scan of every person's settings."""
    await storage.set_user_away(1, T0 + DAY, 2023, 1, T0)
    for query, stamp in (
        (
            "SELECT user_id, away_until, away_set_at FROM user_settings"
            " WHERE away_set_at > ? ORDER BY away_set_at",
            T0,
        ),
        ("SELECT user_id, away_until, away_set_at FROM user_settings WHERE away_until > ?", T0),
    ):
        plan = await storage.read("EXPLAIN QUERY PLAN " + query, (stamp,))
        details = [row["detail"] for row in plan]
        assert any(d.startswith("SEARCH") and "INDEX" in d for d in details), details
        assert not [d for d in details if d.startswith(("SCAN", "USE TEMP"))], details
