"""A save against a PostgreSQL server that keeps its connections open and answers nothing
(every process of the cluster stopped with SIGSTOP): it gives up within SAVE_TIMEOUT, its
connection does not go back to the pool, and once the server runs on the storage works.

The server is this module's own: the shared test server is never frozen.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from bot.client.guild_settings import GuildLanguages
from bot.games.nothanks import SPEC as NOTHANKS
from bot.records.results import GameResult, PlayerResult
from bot.storage import DatabaseUnavailable, Storage, TableRecord
from bot.storage.postgres import SAVE_TIMEOUT, WRITE_TIMEOUT, PostgresStorage
from bot.table.errors import DatabaseDown, SaveFailed, SaveUnknown, UserError
from bot.table.session import READ_BACK_TIMEOUT, TableSession
from tests.backends import (
    Backend,
    TemporaryServer,
    drop_schema,
    fresh_schema,
    module_server,
)
from tests.table.harness import (
    Clock,
    Harness,
    RecordingPublisher,
    a_legal_move,
    acting,
    make_tables,
    started,
)

# What a save may take past SAVE_TIMEOUT on a loaded machine (closing the connection).
MARGIN = 1.5


@pytest.fixture(scope="module")
def own_server() -> Iterator[TemporaryServer]:
    """A PostgreSQL server of this module's own, which its tests freeze."""
    yield from module_server("freeze")


@pytest.fixture
async def storage(own_server: TemporaryServer) -> AsyncIterator[PostgresStorage]:
    """A fresh schema on the module's server, opened."""
    name, url = await fresh_schema(own_server.url)
    opened = await PostgresStorage.connect(url)
    try:
        yield opened
    finally:
        own_server.thaw()
        await opened.close()
        await drop_schema(own_server.url, name)


async def running_table(storage: Storage) -> TableRecord:
    """A running table at revision 0."""
    record = TableRecord(
        game="nothanks", guild_id=1, channel_id=100, host_id=11, seats=[11, 22], status="running"
    )
    return await storage.create_table(record)


def game_end(record: TableRecord) -> GameResult:
    """A finished game's result for the record."""
    return GameResult(
        table_id=record.id or 0,
        guild_id=1,
        channel_id=100,
        game="nothanks",
        status="finished",
        seed="1",
        options={},
        started_at=10.0,
        ended_at=20.0,
        moves=record.move_number,
        players=tuple(
            PlayerResult(seat=i, player=p, name=p, level=None, score=10 * i, rank=2 - i)
            for i, p in enumerate(("11", "22"))
        ),
    )


@pytest.mark.parametrize("kind", ["move", "game end"])
async def test_a_save_against_a_frozen_server_gives_up_in_time(
    storage: PostgresStorage, own_server: TemporaryServer, kind: str
) -> None:
    """The save raises TimeoutError (its outcome unknown) within SAVE_TIMEOUT, the database
    is marked down from the moment the save began, and after the thaw the pool hands out
    working connections again: the row holds either revision, never anything else."""
    record = await running_table(storage)
    record.move_number = 1
    record.state = {"n": 1}
    if kind == "game end":
        record.status = "finished"
    result = game_end(record) if kind == "game end" else None
    own_server.freeze()
    try:
        began = time.time()
        started = time.perf_counter()
        with pytest.raises(TimeoutError):
            await storage.save_table(record, ("11", "take"), result=result)
        took = time.perf_counter() - started
        assert SAVE_TIMEOUT - 0.1 <= took < SAVE_TIMEOUT + MARGIN, took
        assert not storage.available
        assert storage.down_since is not None and abs(storage.down_since - began) < 0.5
        assert record.revision == 0
    finally:
        own_server.thaw()
    # The connection cut off was closed, not reset on a server that did not answer: the
    # storage works at once. The cut-off statement may or may not have run on the thaw.
    async with asyncio.timeout(SAVE_TIMEOUT):
        stored = await storage.get_table(record.id or 0)
        assert stored is not None and stored.revision in (0, 1)
        moves = await storage.moves(record.id or 0)
        assert moves == ([(1, "11", "take")] if stored.revision == 1 else [])
        if stored.revision == 0:
            await storage.save_table(record, ("11", "take"), result=result)
            assert record.revision == 1
    storage.mark_up()
    assert storage.available


async def test_the_pool_is_not_left_with_a_connection_in_an_unknown_state(
    storage: PostgresStorage, own_server: TemporaryServer
) -> None:
    """Every save after a timed-out one is answered: none gets the cut-off connection."""
    record = await running_table(storage)
    own_server.freeze()
    try:
        record.move_number = 1
        with pytest.raises(TimeoutError):
            await storage.save_table(record, ("11", "take"))
    finally:
        own_server.thaw()
    stored = await storage.get_table(record.id or 0)
    assert stored is not None
    record.revision = stored.revision
    async with asyncio.timeout(SAVE_TIMEOUT * 2):
        for number in range(stored.move_number + 1, stored.move_number + 12):
            record.move_number = number
            await storage.save_table(record, ("11", "take"))


# -- the table core: the player hears back in time and the table's lock is freed --------


def human_step(session: TableSession) -> Any:
    """The active person's first legal move, checked against the current move number."""
    player = acting(session)
    action = a_legal_move(session, player)
    move = session.running_engine().move_number
    return lambda d: d.human_move(player, action, expected_move=move, locale=None)


async def test_a_click_on_a_frozen_server_is_answered_and_frees_the_table(
    storage: PostgresStorage, own_server: TemporaryServer
) -> None:
    """Two moves tried together on one table while the server is frozen: the first hears
    SaveUnknown within SAVE_TIMEOUT + READ_BACK_TIMEOUT (its save cut off, the row not
    readable), the second, which waited for the table's lock, hears DatabaseDown a read-back
    later: neither waits for the server. After the thaw the table settles on what the
    database holds and plays on, nothing lost."""
    gate = asyncio.Event()
    tables = make_tables(storage, Clock(), gate)
    tables.publisher = RecordingPublisher()
    h = Harness(
        storage.url,
        Backend("postgres", storage.url),
        storage,
        tables,
        Clock(),
        tables.publisher,
        gate,
    )
    try:
        session = await started(h, NOTHANKS)
        revision = session.revision
        own_server.freeze()
        try:
            began = time.perf_counter()
            finished: dict[str, float] = {}

            async def change(name: str) -> BaseException | None:
                try:
                    await session.change(human_step(session))
                except (SaveFailed, SaveUnknown) as error:  # DatabaseDown is a SaveFailed
                    return error
                finally:
                    finished[name] = time.perf_counter() - began
                return None

            first = asyncio.create_task(change("first"))
            await asyncio.sleep(0)  # the first takes the lock
            second = asyncio.create_task(change("second"))
            outcomes = await asyncio.gather(first, second)
            assert isinstance(outcomes[0], SaveUnknown), outcomes
            assert isinstance(outcomes[1], DatabaseDown), outcomes
            assert finished["first"] < SAVE_TIMEOUT + READ_BACK_TIMEOUT + MARGIN, finished
            assert finished["second"] < SAVE_TIMEOUT + 2 * READ_BACK_TIMEOUT + MARGIN, finished
            assert not session.lock.locked() and session.unsettled is not None
            assert session.revision == revision and not storage.available
        finally:
            own_server.thaw()
        async with asyncio.timeout(SAVE_TIMEOUT * 2):
            async with session.lock:
                await session.settle()
            assert session.unsettled is None
            await session.change(human_step(session))
            assert storage.available
            row = await storage.get_table(session.id)
            assert row == session.record
            moves = await storage.moves(session.id)
            assert [number for number, _, _ in moves] == list(range(1, row.move_number + 1))
    finally:
        tables.close()


# -- the other writers, and a save that cannot get a connection ---------------------------


async def test_a_save_that_gets_no_connection_gives_up_within_its_limit(
    own_server: TemporaryServer,
) -> None:
    """Every pooled connection is busy (held here): a save waits for one no longer than
    SAVE_TIMEOUT (not the 10 s of getting a connection elsewhere) and fails for certain,
    nothing sent (DatabaseUnavailable), so the click is told at once that nothing changed."""
    name, url = await fresh_schema(own_server.url)
    storage = await PostgresStorage.connect(url, pool_size=1)
    try:
        record = await running_table(storage)
        held = await storage._pool.acquire()
        try:
            record.move_number = 1
            started = time.perf_counter()
            with pytest.raises(DatabaseUnavailable):
                await storage.save_table(record, ("11", "take"))
            took = time.perf_counter() - started
            assert SAVE_TIMEOUT - 0.1 <= took < SAVE_TIMEOUT + MARGIN, took
        finally:
            await storage._pool.release(held)
        assert record.revision == 0
    finally:
        await storage.close()
        await drop_schema(own_server.url, name)


async def test_the_other_writers_give_up_within_their_limit(
    storage: PostgresStorage, own_server: TemporaryServer
) -> None:
    """A new table's row and a server's setting on a frozen server: each gives up within
    WRITE_TIMEOUT (answered inside Discord's 3 s), a setting through GuildSetting as the
    person's private "not saved", and a table's reload within READ_BACK_TIMEOUT; after the
    thaw each works."""
    languages = GuildLanguages(storage)
    record = await running_table(storage)
    gate = asyncio.Event()
    tables = make_tables(storage, Clock(), gate)
    tables.publisher = RecordingPublisher()
    h = Harness(
        storage.url,
        Backend("postgres", storage.url),
        storage,
        tables,
        Clock(),
        tables.publisher,
        gate,
    )
    try:
        session = await started(h, NOTHANKS)
        own_server.freeze()
        try:
            for write in (
                lambda: storage.create_table(
                    TableRecord(game="nothanks", guild_id=1, channel_id=101, host_id=11)
                ),
                lambda: storage.set_guild_language(1, "de"),
                lambda: storage.set_guild_threads(1, True),
            ):
                started_at = time.perf_counter()
                with pytest.raises((TimeoutError, DatabaseUnavailable)):
                    await write()
                took = time.perf_counter() - started_at
                assert took < WRITE_TIMEOUT + MARGIN, took
            with pytest.raises(UserError) as refused:
                await languages.set(1, "de")
            assert refused.value.key == "settings.not_saved"
            assert languages.language_for(1) is None  # not taken as stored
            started_at = time.perf_counter()
            revision = session.revision
            await session.reload()  # logged, the table kept as it is
            assert time.perf_counter() - started_at < READ_BACK_TIMEOUT + MARGIN
            assert session.revision == revision
        finally:
            own_server.thaw()
        async with asyncio.timeout(SAVE_TIMEOUT * 2):
            await languages.set(1, "it")
            assert await storage.get_guild_language(1) == "it"
            assert record.id is not None and await storage.get_table(record.id) is not None
    finally:
        tables.close()
