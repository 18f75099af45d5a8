"""A registry owns its shards' tables only: restores them, times them, records them, opens them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.table.errors import UserError
from bot.table.session import TableSession
from bot.table.shards import ShardSet
from bot.table.spec import GameSpec
from bot.table.tables import Tables
from bot.table.timers import LOBBY_TTL
from tests.table.harness import (
    BEN,
    CID,
    HOST,
    Harness,
    RecordingPublisher,
    open_lobby_in,
    seat,
)

SPECS = pytest.mark.parametrize("spec", [NOTHANKS, RAGE], ids=lambda spec: spec.name)
# guild_id = n << 22 is on shard n % count: these are on shards 0 and 1 of 2.
EVEN_GUILD = 2 << 22
ODD_GUILD = 3 << 22
EVEN = ShardSet.of(2, [0])
ODD = ShardSet.of(2, [1])


async def open_in(h: Harness, spec: GameSpec, guild: int, channel: int) -> TableSession:
    """A lobby of ana's in a channel of this guild, opened through the (all-shard) registry."""
    return await open_lobby_in(h.tables, spec, guild=guild, channel=channel)


async def running_in(h: Harness, spec: GameSpec, guild: int, channel: int) -> TableSession:
    """A running game of ana, ben and cid in a channel of this guild."""
    session = await open_in(h, spec, guild, channel)
    await seat(session, BEN, CID)
    await session.change(lambda d: d.start(HOST, 7))
    return session


def process(h: Harness, shards: ShardSet, gate: asyncio.Event) -> Tables:
    """Another process's registry on the same database: these shards, both games."""
    tables = Tables(h.storage, clock=h.clock, ready=gate.wait, shards=shards)
    tables.register(NOTHANKS)
    tables.register(RAGE)
    tables.publisher = RecordingPublisher()
    return tables


def publisher_of(tables: Tables) -> RecordingPublisher:
    """The recording publisher a test registry was given."""
    assert isinstance(tables.publisher, RecordingPublisher)
    return tables.publisher


async def wait_for(condition: Callable[[], bool], *, seconds: float = 5.0) -> None:
    """Poll (with real, short sleeps) until a condition holds; fail after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


async def row(h: Harness, table_id: int) -> tuple[str, int, int]:
    """A table's status, revision and move number as the database holds them."""
    record = await h.storage.get_table(table_id)
    assert record is not None
    return record.status, record.revision, record.move_number


async def behind_the_bots_back(h: Harness, *statements: tuple[str, tuple[object, ...]]) -> None:
    """Change the database directly, as an older version or a hand edit would have."""
    for sql, params in statements:
        await h.backend.execute(sql, *params)


@SPECS
async def test_a_registry_restores_and_times_only_its_own_shards(
    h: Harness, spec: GameSpec
) -> None:
    """Shards {0} of 2 restore, refresh and time only shard 0's due tables (a game's turn;
    a lobby expires later: the scheduler loads it then); the others' rows stay as they were
    until shard 1's process takes them up and plays their due events."""
    even_lobby = await open_in(h, spec, EVEN_GUILD, 1)
    odd_lobby = await open_in(h, spec, ODD_GUILD, 2)
    even_game = await running_in(h, spec, EVEN_GUILD, 3)
    odd_game = await running_in(h, spec, ODD_GUILD, 4)
    h.tables.close()
    odd_rows = {odd_lobby.id: await row(h, odd_lobby.id), odd_game.id: await row(h, odd_game.id)}
    even_move = even_game.running_engine().move_number

    gate = asyncio.Event()
    even = process(h, EVEN, gate)
    try:
        restored = await even.restore()
        assert [s.id for s in restored] == [even_game.id]
        assert even.get(odd_lobby.id) is None and even.get(odd_game.id) is None
        assert even.in_channel(2) is None and even.in_channel(4) is None
        assert len(even.timers) == 1  # the game's turn
        assert {r[0] for r in publisher_of(even).refreshed} == {even_game.id}

        # Past every lobby's expiry and every turn's deadline: the scheduler loads the
        # lobby of its own shard only.
        h.clock.advance(LOBBY_TTL + 1)
        assert [s.id for s in await even.poll_due()] == [even_lobby.id]
        assert len(even.timers) == 2
        gate.set()
        even_game_now = even.get(even_game.id)
        assert even_game_now is not None
        await wait_for(
            lambda: (
                even.get(even_lobby.id) is None
                and even_game_now.running_engine().move_number > even_move
            )
        )
        await asyncio.sleep(0.05)  # time for a wrongly armed timer to fire too
        assert (await row(h, even_lobby.id))[0] == "cancelled"
        assert (await row(h, even_game.id))[2] > even_move
        for table_id, before in odd_rows.items():
            assert await row(h, table_id) == before
        touched = {r[0] for r in publisher_of(even).refreshed}
        touched |= {d[0] for d in publisher_of(even).delivered}
        touched |= {p[0] for p in publisher_of(even).pinged}
        assert touched <= {even_lobby.id, even_game.id}
    finally:
        even.close()

    # Shard 1 moves to a process of its own: it restores its tables and re-arms their
    # timers from the saved deadlines, which have passed, so they are carried out at once.
    odd_gate = asyncio.Event()
    odd_gate.set()
    odd = process(h, ODD, odd_gate)
    try:
        restored = await odd.restore()
        assert sorted(s.id for s in restored) == sorted([odd_lobby.id, odd_game.id])
        await wait_for(lambda: odd.get(odd_lobby.id) is None)
        await wait_for(lambda: odd_game.id in {r[0] for r in publisher_of(odd).refreshed})
        odd_game_now = odd.get(odd_game.id)
        assert odd_game_now is not None
        await wait_for(lambda: odd_game_now.running_engine().move_number > odd_rows[odd_game.id][2])
        assert (await row(h, odd_lobby.id))[0] == "cancelled"
    finally:
        odd.close()


async def test_other_shards_rows_are_neither_quarantined_nor_back_filled(h: Harness) -> None:
    """A broken row or an unrecorded game of shard 1 is left to shard 1's process."""
    broken = await running_in(h, NOTHANKS, ODD_GUILD, 1)
    ended = {}
    for guild, channel in ((EVEN_GUILD, 2), (ODD_GUILD, 3)):
        session = await running_in(h, NOTHANKS, guild, channel)
        await session.change(lambda d: d.stop(HOST, True))
        ended[guild] = session.id
    h.tables.close()
    # The broken table's state no longer loads; both ended games predate the records.
    await behind_the_bots_back(
        h,
        ("UPDATE tables SET state = ? WHERE id = ?", ('{"not": "a game"}', broken.id)),
        *(("DELETE FROM game_players WHERE table_id = ?", (i,)) for i in ended.values()),
        *(("DELETE FROM games WHERE table_id = ?", (i,)) for i in ended.values()),
    )

    even = process(h, EVEN, asyncio.Event())
    try:
        assert await even.restore() == []
        assert publisher_of(even).broken == []
        assert (await row(h, broken.id))[0] == "running"
        unrecorded = [record.id for record, _, _ in await h.storage.unrecorded_games()]
        assert unrecorded == [ended[ODD_GUILD]]
    finally:
        even.close()

    odd = process(h, ODD, asyncio.Event())
    try:
        assert await odd.restore() == []
        assert [r.id for r in publisher_of(odd).broken] == [broken.id]
        assert (await row(h, broken.id))[0] == "broken"
        assert await h.storage.unrecorded_games() == []
    finally:
        odd.close()


@SPECS
async def test_a_registry_refuses_to_open_a_table_on_another_shard(
    h: Harness, spec: GameSpec
) -> None:
    """A lobby for a guild of another shard is refused before anything is stored."""
    h.tables.shards = EVEN
    with pytest.raises(UserError) as refused:
        await open_in(h, spec, ODD_GUILD, 1)
    assert refused.value.key == "table.foreign_shard"
    assert await h.storage.open_tables() == []
    lobby = await open_in(h, spec, EVEN_GUILD, 1)
    assert [record.id for record in await h.storage.open_tables()] == [lobby.id]
