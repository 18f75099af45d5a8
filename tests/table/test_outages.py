"""The table core when the database fails: uncertain saves settled by reading the row
back, unreachable databases answered at once, broken rows quarantined (both backends)."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import pytest

from bot.games.nothanks import SPEC as NOTHANKS
from bot.storage import DatabaseUnavailable, TableRecord
from bot.table.errors import DatabaseDown, SaveFailed, SaveUnknown, TableBusy, UserError
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec
from tests.table.harness import (
    BEN,
    CHANNEL,
    CID,
    HOST,
    NAMES,
    SPECS,
    Harness,
    a_legal_move,
    acting,
    make_tables,
    open_lobby,
    started,
    stored,
)


class Injected(RuntimeError):
    """What asyncpg raised from release()/reset() after a commit, as seen in production."""


def human_step(session: TableSession) -> Any:
    """The active person's first legal move, checked against the current move number."""
    player = acting(session)
    action = a_legal_move(session, player)
    move = session.running_engine().move_number
    return lambda d: d.human_move(player, action, expected_move=move, locale=None)


def commit_then_raise(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every save commits, then raises as if the connection broke on its way back."""
    original = h.storage.save_table

    async def save(*args: Any, **kwargs: Any) -> None:
        await original(*args, **kwargs)
        raise Injected("cannot switch to state 15; another operation is in progress")

    monkeypatch.setattr(h.storage, "save_table", save)


@SPECS
async def test_a_save_that_raises_after_its_commit_stands(
    h: Harness, spec: GameSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row is read back: it holds our revision, so the move stands (swapped in and
    published), and the moves after it are saved as usual (no StaleWrite, no restart)."""
    session = await started(h, spec)
    revision = session.revision
    refreshes = len(h.publisher.refreshed)
    commit_then_raise(h, monkeypatch)
    draft = await session.change(human_step(session))
    assert draft.move is not None
    assert session.revision == revision + 1 and session.unsettled is None
    assert await stored(h, session) == session.record
    assert len(h.publisher.refreshed) == refreshes + 1
    assert len(await h.storage.moves(session.id)) == 1
    monkeypatch.undo()
    await session.change(human_step(session))
    assert session.revision == revision + 2
    assert await stored(h, session) == session.record


@SPECS
async def test_a_save_that_raises_before_its_commit_changes_nothing(
    h: Harness, spec: GameSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row read back holds the old revision: SaveFailed, memory as it was."""
    session = await started(h, spec)
    before = await stored(h, session)

    async def save(*args: Any, **kwargs: Any) -> None:
        raise Injected("the connection broke before the statement was sent")

    monkeypatch.setattr(h.storage, "save_table", save)
    with pytest.raises(SaveFailed) as raised:
        await session.change(human_step(session))
    assert raised.value.key == "table.save_failed"
    assert session.record == before and session.unsettled is None
    assert await stored(h, session) == before


@SPECS
async def test_an_unknown_outcome_is_settled_once_the_row_can_be_read(
    h: Harness, spec: GameSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the row cannot be read back either, the player hears that the outcome is not
    known yet (SaveUnknown) and nothing else changes at the table (DatabaseDown) until the
    row is read: then the saved move is shown, with the DMs it caused."""
    session = await started(h, spec)
    revision = session.revision
    get_table = h.storage.get_table
    commit_then_raise(h, monkeypatch)

    async def unreadable(table_id: int) -> TableRecord | None:
        raise DatabaseUnavailable("the database went away")

    monkeypatch.setattr(h.storage, "get_table", unreadable)
    with pytest.raises(SaveUnknown):
        await session.change(human_step(session))
    assert session.unsettled is not None and session.revision == revision
    with pytest.raises(DatabaseDown):
        await session.change(lambda d: d.remember_locale(1, "de"))
    monkeypatch.setattr(h.storage, "get_table", get_table)
    settled: list[TableSession] = []
    session.on_settled = lambda s, draft: settled.append(s)
    async with session.lock:
        await session.settle()
    assert settled == [session] and session.unsettled is None
    assert session.revision == revision + 1
    assert await stored(h, session) == session.record


@SPECS
async def test_database_back_settles_every_open_question(
    h: Harness, spec: GameSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the database answers again, the registry settles the unknown outcomes on its
    own (no click needed) and shows the result."""
    session = await started(h, spec)
    get_table = h.storage.get_table
    commit_then_raise(h, monkeypatch)

    async def unreadable(table_id: int) -> TableRecord | None:
        raise DatabaseUnavailable("the database went away")

    monkeypatch.setattr(h.storage, "get_table", unreadable)
    with pytest.raises(SaveUnknown):
        await session.change(human_step(session))
    monkeypatch.setattr(h.storage, "get_table", get_table)
    refreshes = len(h.publisher.refreshed)
    h.tables.database_back()
    await asyncio.gather(*h.tables._background)
    assert session.unsettled is None
    assert await stored(h, session) == session.record
    assert len(h.publisher.refreshed) == refreshes + 1


@SPECS
async def test_an_unreachable_database_is_answered_at_once(h: Harness, spec: GameSpec) -> None:
    """A save the storage knows it could not send is DatabaseDown: nothing changed, and no
    read back is needed."""
    session = await started(h, spec)
    before = await stored(h, session)
    h.storage.mark_down(DatabaseUnavailable("test outage"))
    h.storage._tried_at = float("inf")  # within the interval: refused without trying
    try:
        with pytest.raises(DatabaseDown) as raised:
            await session.change(human_step(session))
    finally:
        h.storage._tried_at = 0.0
    assert raised.value.key == "table.db_down"
    assert session.record == before and session.unsettled is None
    await session.change(human_step(session))  # the next try goes through, and says so
    assert h.storage.available


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("state", None, "a running game without a state"),
        ("game", "chess", "unknown game 'chess'"),
        ("seats", "[101, 102, 999]", "are not its game's players"),
    ],
)
async def test_rows_that_cannot_run_are_quarantined(
    h: Harness, column: str, value: object, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A running row with no state, of an unknown game or whose seats are not its game's
    players is quarantined at restore (logged, its channel freed), not run half-loaded."""
    session = await started(h, NOTHANKS)
    other = await started_elsewhere(h, NOTHANKS)
    await h.backend.execute(f"UPDATE tables SET {column} = ? WHERE id = ?", value, session.id)
    fresh = make_tables(h.storage, h.clock, h.gate)
    fresh.publisher = h.publisher
    restored = await fresh.restore()
    assert [s.id for s in restored] == [other.id]
    row = await h.storage.get_table(session.id)
    assert row is not None and row.status == "broken"
    assert [b.id for b in h.publisher.broken] == [session.id]
    assert any(reason in r.getMessage() for r in caplog.records if "quarantined" in r.message)
    fresh.close()


async def started_elsewhere(h: Harness, spec: GameSpec) -> TableSession:
    """A second running game, in another channel, that restores normally."""
    session = await open_lobby(h, spec, channel=777)
    for user in (BEN, CID):
        await session.change(partial(Draft.join, user_id=user, name=NAMES[user], locale=None))
    await session.change(lambda d: d.start(HOST, 11))
    return session


@SPECS
async def test_a_click_that_could_not_be_answered_in_time_is_refused_at_once(
    h: Harness, spec: GameSpec
) -> None:
    """Issue 41, defect 7: a click's change (with a deadline) never queues behind a change
    that holds the table: on a database known to be down it is told at once that nothing
    changed (DatabaseDown); otherwise, once it could no longer save and hear back by its
    deadline, that the table is busy (TableBusy). Nothing changes either way, and without
    a deadline (a timer's, a computer's) the change still waits its turn."""
    session = await started(h, spec)
    revision = session.revision
    loop = asyncio.get_running_loop()
    async with session.lock:  # an earlier change holds the table
        # No time left to save and read back before its deadline: refused, not queued.
        with pytest.raises(TableBusy):
            await session.change(human_step(session), deadline=loop.time())
        h.storage.mark_down(DatabaseUnavailable("gone"))
        # The database known down: refused at once, however much time is left.
        with pytest.raises(DatabaseDown):
            await session.change(human_step(session), deadline=loop.time() + 3600)
        h.storage.mark_up()
        waiting = asyncio.ensure_future(session.change(human_step(session)))
        await asyncio.sleep(0)
        assert not waiting.done()  # no deadline: it waits for the lock
    await waiting
    assert session.revision == revision + 1
    # With its time, a click's change is made as any other.
    await session.change(human_step(session), deadline=loop.time() + 3600)
    assert session.revision == revision + 2 == (await stored(h, session)).revision


@pytest.mark.parametrize(
    ("failure", "key"),
    [
        (DatabaseUnavailable("no connection"), "table.db_down"),
        (TimeoutError(), "table.open_unknown"),
    ],
)
async def test_a_new_table_whose_row_is_not_saved_is_answered(
    h: Harness, monkeypatch: pytest.MonkeyPatch, failure: Exception, key: str
) -> None:
    """The new table's row cannot be saved (nothing sent: "nothing changed"), or the
    database does not answer within its limit (the row may exist: "may not have opened");
    either is a clear answer, not an unexpected error, and the channel is left free."""

    async def fails(record: TableRecord) -> TableRecord:
        raise failure

    monkeypatch.setattr(h.storage, "create_table", fails)
    with pytest.raises(UserError) as raised:
        await open_lobby(h, NOTHANKS)
    assert raised.value.key == key
    assert h.tables.in_channel(CHANNEL) is None
