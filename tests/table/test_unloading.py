"""Tables that live in the database: unloaded when idle, loaded again on demand, and the
scheduler that loads what falls due (on both backends, on the harness's hand-moved clock)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.games.nothanks import SPEC as NOTHANKS
from bot.storage import DatabaseUnavailable, TableRecord
from bot.table.errors import DatabaseDown, TableMovedOn, UserError
from bot.table.session import TableSession
from bot.table.spec import GameSpec
from bot.table.tables import IDLE_SECONDS, LOOKAHEAD
from bot.table.timers import LOBBY_TTL
from tests.table.harness import (
    BEN,
    CHANNEL,
    CID,
    GUILD,
    HOST,
    SPECS,
    Harness,
    RecordingPublisher,
    a_legal_move,
    acting,
    make_tables,
    open_lobby,
    seat,
    stored,
    user_error,
)
from tests.table.test_shards import wait_for

DAY = 86_400


async def game(h: Harness, spec: GameSpec, channel: int, **options: Any) -> TableSession:
    """A running game of ana, ben and cid (seed 7) in a channel of its own."""
    session = await open_lobby(h, spec, channel=channel, options=options)
    await seat(session, BEN, CID)
    await session.change(lambda d: d.start(HOST, 7))
    return session


async def human_move(session: TableSession) -> None:
    """The acting person's first legal move, made as a click makes it."""
    player = acting(session)
    action = a_legal_move(session, player)
    move = session.running_engine().move_number
    await session.change(lambda d: d.human_move(player, action, expected_move=move, locale=None))


async def idle_out(h: Harness, session: TableSession) -> None:
    """Let the table's idle time pass and unload it; it must leave memory."""
    h.clock.advance(IDLE_SECONDS + 1)
    assert session.id in await h.tables.sweep_idle()
    assert h.tables.get(session.id) is None and h.tables.in_channel(session.channel_id) is None


@SPECS
async def test_a_table_unloaded_mid_game_ends_as_one_never_unloaded(
    h: Harness, spec: GameSpec
) -> None:
    """Two tables dealt alike play the same moves; one leaves memory twice mid-game and is
    loaded again by its next click: both end on the same board, stored alike."""
    kept = await game(h, spec, CHANNEL, turn_seconds=DAY)
    moved = await game(h, spec, CHANNEL + 1, turn_seconds=DAY)
    step = 0
    while kept.status == "running":
        await human_move(kept)
        if step in (3, 11):
            await idle_out(h, moved)
            # Its row holds the next due time: the turn's half-time ping, a day's half.
            row = await stored(h, moved)
            turn = moved.meta.turn
            assert turn is not None and row.due_at == turn.deadline - DAY / 2
        again = await h.tables.load(moved.id, CHANNEL + 1)
        assert again is not None
        moved = again
        await human_move(moved)
        step += 1
    assert moved.status == "finished"
    assert moved.engine is not None and kept.engine is not None
    assert moved.engine.to_dict() == kept.engine.to_dict()
    assert (await stored(h, moved)).state == (await stored(h, kept)).state
    assert await h.storage.moves(moved.id) == await h.storage.moves(kept.id)
    assert (await stored(h, moved)).due_at is None  # nothing is due at a closed table


async def test_a_table_with_something_due_soon_stays_in_memory(h: Harness) -> None:
    """A table whose next event falls within the idle time is kept, however long unused."""
    session = await game(h, NOTHANKS, CHANNEL, turn_seconds=60)
    h.clock.advance(IDLE_SECONDS + 1)
    assert await h.tables.sweep_idle() == []
    assert h.tables.get(session.id) is session


async def test_a_due_time_passed_while_unloaded_fires_once(h: Harness) -> None:
    """The scheduler loads a table whose due time comes while it is out of memory; its own
    timer carries the event out once, however often the scheduler looks."""
    session = await game(h, NOTHANKS, CHANNEL, turn_seconds=DAY)
    late = acting(session)
    await idle_out(h, session)
    assert await h.tables.poll_due() == []  # nothing due yet: nothing loaded
    turn = session.meta.turn
    assert turn is not None
    h.clock.now = turn.deadline + 1  # past the half-time ping and the deadline
    h.gate.set()
    loaded = await h.tables.poll_due()
    assert [s.id for s in loaded] == [session.id]
    assert await h.tables.poll_due() == []  # loaded once
    live = h.tables.get(session.id)
    assert live is not None
    await wait_for(lambda: live.running_engine().move_number == 1)
    await wait_for(lambda: not h.tables.timers.busy(session.id))
    assert h.publisher.pinged == []  # the deadline passed: no half-time ping any more
    assert [m[0] for m in await h.storage.moves(session.id)] == [1]
    assert live.meta.timeouts == {late: 1}


async def test_a_restart_loads_only_the_tables_due(h: Harness) -> None:
    """Of 1,000 open lobbies, a restart loads the ten whose expiry fell while the bot was
    down (and expires them); the others stay in their rows, untouched, until due."""
    now = h.clock()
    for channel in range(1000):
        opened = now - LOBBY_TTL - 10 if channel % 100 == 0 else now
        await h.storage.create_table(
            TableRecord(
                game="nothanks",
                channel_id=10_000 + channel,
                host_id=HOST,
                guild_id=GUILD,
                seats=[HOST],
                meta={"names": {str(HOST): "ana"}, "opened_at": opened},
                due_at=opened + LOBBY_TTL,
            )
        )
    h.tables.close()
    gate = asyncio.Event()
    tables = make_tables(h.storage, h.clock, gate)
    publisher = RecordingPublisher()
    tables.publisher = publisher
    try:
        restored = await tables.restore()
        assert len(restored) == 10 and len(tables) == 10
        assert {s.channel_id for s in restored} == {10_000 + c for c in range(0, 1000, 100)}
        assert {r[0] for r in publisher.refreshed} == {s.id for s in restored}
        gate.set()
        await wait_for(lambda: len(tables) == 0)
        open_rows = await h.storage.open_tables()
        assert len(open_rows) == 990
        assert all(isinstance(r, TableRecord) and r.revision == 0 for r in open_rows)
        # The next due time is the others' expiry, LOOKAHEAD ahead: nothing before.
        assert await tables.poll_due() == []
        h.clock.advance(LOBBY_TTL - LOOKAHEAD + 1)
        assert len(await tables.poll_due()) == 990
    finally:
        tables.close()


async def test_two_clicks_on_an_unloaded_table_load_it_once(h: Harness) -> None:
    """Two clicks at once on an unloaded table: one session is loaded, the first click's
    move stands, the second (of the same turn) is told the table moved on."""
    session = await game(h, NOTHANKS, CHANNEL, turn_seconds=DAY)
    await idle_out(h, session)
    before = await stored(h, session)

    async def click() -> TableSession:
        loaded = await h.tables.load(session.id, CHANNEL)
        assert loaded is not None
        player = acting(loaded)
        action = a_legal_move(loaded, player)
        await loaded.change(lambda d: d.human_move(player, action, expected_move=0, locale=None))
        return loaded

    results = await asyncio.gather(click(), click(), return_exceptions=True)
    sessions = [r for r in results if isinstance(r, TableSession)]
    refused = [r for r in results if isinstance(r, BaseException)]
    assert len(sessions) == 1 and len(refused) == 1
    assert isinstance(refused[0], TableMovedOn)
    assert h.tables.get(session.id) is sessions[0]
    after = await stored(h, session)
    assert after.revision == before.revision + 1 and after.move_number == 1
    assert [m[0] for m in await h.storage.moves(session.id)] == [1]


async def test_a_timeout_races_a_click_on_an_unloaded_table(h: Harness) -> None:
    """The deadline passes while the table is out of memory; the scheduler and a click
    load it at once: one session, one move for that turn (whichever came first)."""
    session = await game(h, NOTHANKS, CHANNEL, turn_seconds=DAY)
    await idle_out(h, session)
    turn = session.meta.turn
    assert turn is not None
    h.clock.now = turn.deadline + 1
    h.gate.set()

    async def click() -> str:
        loaded = await h.tables.load(session.id, CHANNEL)
        assert loaded is not None
        player = acting(loaded)
        action = a_legal_move(loaded, player)
        try:
            await loaded.change(
                lambda d: d.human_move(player, action, expected_move=0, locale=None)
            )
        except TableMovedOn:
            return "moved on"
        return "moved"

    polled, clicked = await asyncio.gather(h.tables.poll_due(), click())
    live = h.tables.get(session.id)
    assert live is not None
    assert all(s is live for s in polled)
    await wait_for(lambda: not h.tables.timers.busy(session.id))
    moves = await h.storage.moves(session.id)
    assert [m[0] for m in moves] == [1]  # one move for the turn, never two
    assert live.running_engine().move_number == 1
    # The timer's move is marked a timeout; the click's is not.
    assert bool(live.meta.timeouts) == (clicked == "moved on")


async def test_a_save_that_fails_during_a_reload_changes_nothing(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A click loads an unloaded table and its save fails: the row, the loaded game and
    the message stay as they were; the next click plays normally."""
    session = await game(h, NOTHANKS, CHANNEL, turn_seconds=DAY)
    await idle_out(h, session)
    before = await stored(h, session)
    save = h.storage.save_table

    async def failing(*args: Any, **kwargs: Any) -> None:
        raise DatabaseUnavailable("the disk is full")

    monkeypatch.setattr(h.storage, "save_table", failing)
    loaded = await h.tables.load(session.id, CHANNEL)
    assert loaded is not None
    refreshed, delivered = list(h.publisher.refreshed), list(h.publisher.delivered)
    with pytest.raises(DatabaseDown):
        await human_move(loaded)
    assert await stored(h, session) == before
    assert loaded.record == before and loaded.running_engine().move_number == 0
    assert h.publisher.refreshed == refreshed and h.publisher.delivered == delivered
    monkeypatch.setattr(h.storage, "save_table", save)
    await human_move(loaded)
    assert (await stored(h, session)).move_number == 1


async def test_a_stopped_table_is_known_from_its_row(h: Harness) -> None:
    """A table stopped before a restart is still known as stopped, by whom, from its row."""
    session = await game(h, NOTHANKS, CHANNEL)
    await session.change(lambda d: d.stop(BEN, True))
    h.tables.close()
    tables = make_tables(h.storage, h.clock, asyncio.Event())
    try:
        assert tables.stopped(session.id) is None  # a new process remembers nothing
        stopped = await tables.stopped_row(session.id)
        assert stopped is not None and stopped.by == BEN and stopped.channel_id == CHANNEL
        assert await tables.load(session.id, CHANNEL) is None  # closed: never loaded
        assert await tables.stopped_row(session.id + 100) is None
    finally:
        tables.close()


async def test_a_command_loads_the_channels_table(h: Harness) -> None:
    """A command in a channel finds its unloaded table; a second lobby there is refused."""
    session = await game(h, NOTHANKS, CHANNEL, turn_seconds=DAY)
    await idle_out(h, session)
    loaded = await h.tables.load_in_channel(CHANNEL)
    assert loaded is not None and loaded.id == session.id
    await idle_out(h, loaded)
    with pytest.raises(UserError) as refused:
        await open_lobby(h, NOTHANKS)
    assert user_error(refused)[0] == "table.channel_busy"
    found = h.tables.in_channel(CHANNEL)
    assert found is not None
    await idle_out(h, found)  # loaded by the refusal, it leaves memory again
    assert await h.tables.load(session.id, CHANNEL + 1) is None  # another channel's click


async def test_an_unreadable_row_is_quarantined_when_loaded_only_if_open(h: Harness) -> None:
    """A click that loads an open table whose row no longer reads quarantines it (once,
    shown on its message); an unreadable closed table's row is left as it is."""
    broken = await game(h, NOTHANKS, CHANNEL, turn_seconds=DAY)
    closed = await game(h, NOTHANKS, CHANNEL + 1)
    await closed.change(lambda d: d.stop(HOST, True))
    await idle_out(h, broken)
    for session in (broken, closed):
        await h.backend.execute("UPDATE tables SET state = ? WHERE id = ?", '{"torn', session.id)
    assert await h.tables.load(broken.id, CHANNEL) is None
    assert await h.tables.load(closed.id, CHANNEL + 1) is None
    assert [row.id for row in h.publisher.broken] == [broken.id]
    statuses = await h.storage.read("SELECT id, status FROM tables ORDER BY id")
    assert [(row[0], row[1]) for row in statuses] == [
        (broken.id, "broken"),
        (closed.id, "abandoned"),
    ]
