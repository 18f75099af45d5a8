"""/cardtable away across processes: two table cores on one PostgreSQL database, each
running one shard of two, on one clock the test moves. An absence said through one
process holds the person's tables on the other at its next look (its scheduler's wake),
also after a restart; a deadline that comes first holds instead of timing them out; a
game joined or started while away holds them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

import pytest

from bot.games.nothanks import SPEC as NOTHANKS
from bot.storage import DatabaseUnavailable, Storage, TableRecord, open_storage
from bot.table.meta import PACES, Notice
from bot.table.session import Draft, TableSession
from bot.table.shards import ShardSet
from bot.table.tables import Tables
from tests.table.harness import BEN, CID, HOST, NAMES, Clock, RecordingPublisher, open_lobby_in

DAY = PACES["24h"]
# guild_id = n << 22 is on shard n % 2: these are on shards 0 and 1 of 2.
EVEN_GUILD = 2 << 22
ODD_GUILD = 3 << 22


@dataclass
class Process:
    """One process's table core: its own connections, its shard, its timers' gate."""

    storage: Storage
    tables: Tables
    gate: asyncio.Event

    @property
    def publisher(self) -> RecordingPublisher:
        """What it was asked to show."""
        assert isinstance(self.tables.publisher, RecordingPublisher)
        return self.tables.publisher


@dataclass
class Cluster:
    """Two processes (shard 0 and shard 1 of two) on one database, and their clock."""

    url: str
    clock: Clock
    started: list[Process]

    async def process(self, shard: int) -> Process:
        """A process of this shard: its own storage on the database, timers held."""
        storage = await open_storage(self.url)
        gate = asyncio.Event()
        tables = Tables(storage, clock=self.clock, ready=gate.wait, shards=ShardSet.of(2, [shard]))
        tables.register(NOTHANKS)
        tables.publisher = RecordingPublisher()
        made = Process(storage, tables, gate)
        self.started.append(made)
        return made

    @staticmethod
    async def stop(process: Process) -> None:
        """The process goes down (its connections closed)."""
        process.tables.close()
        await process.storage.close()


@pytest.fixture
async def cluster(postgres_url: str) -> AsyncIterator[Cluster]:
    """Two table cores' factory on one fresh PostgreSQL schema; all stopped at the end."""
    made = Cluster(postgres_url, Clock(), [])
    try:
        yield made
    finally:
        for process in made.started:
            process.tables.close()
            await process.storage.close()


async def lobby(process: Process, guild: int, channel: int) -> TableSession:
    """A 24 h No Thanks! lobby of ana's in this guild, opened by the process that owns it."""
    return await open_lobby_in(process.tables, NOTHANKS, guild=guild, channel=channel, pace=DAY)


async def join(session: TableSession, *users: int) -> None:
    """Seat people through the change path."""
    for user in users:
        await session.change(partial(Draft.join, user_id=user, name=NAMES[user], locale=None))


async def game(process: Process, guild: int, channel: int) -> TableSession:
    """A running 24 h game of ana, ben and cid, whose DMs are closed: no "your turn"
    notice is owed (it would keep the table due, and these processes send none), so only
    the absences move its due time."""
    session = await lobby(process, guild, channel)
    await join(session, BEN, CID)
    await session.change(lambda d: d.start(HOST, 7))

    def close_dms(draft: Draft) -> None:
        draft.meta.dm_closed.extend(str(user) for user in draft.record.seats)

    await session.change(close_dms)
    return session


async def say_away(process: Process, user: int, until: float | None) -> int:
    """What /cardtable away does on the process that answers it: store the absence with
    its stamp, hold the person's tables of its own shards; the count it answers with."""
    now = process.tables.clock()
    year = datetime.fromtimestamp(now, UTC).year
    await process.storage.set_user_away(user, until, year, 3, now)
    return await process.tables.hold(user, until)


async def move(session: TableSession) -> None:
    """The acting person's move (no thanks, while they have chips), through the change path."""
    engine = session.running_engine()
    (player,) = session.acting_players()
    action = engine.legal_actions(player)[-1]  # no thanks while chips last: the turn passes
    expected = engine.move_number
    await session.change(
        lambda d: d.human_move(player, action, expected_move=expected, locale=None)
    )


def acting(session: TableSession) -> str:
    """The one person the game waits for."""
    (player,) = session.acting_players()
    return player


async def stored(storage: Storage, table_id: int) -> TableSession:
    """The table as its row holds it (a reading copy, never changed)."""
    record = await storage.get_table(table_id)
    assert record is not None
    return TableSession(NOTHANKS, record, storage, asyncio.Lock(), lambda: 0.0)


async def wait_for(condition: Callable[[], bool], *, seconds: float = 10.0) -> None:
    """Wait (real, short sleeps) for database work already set going to show."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


async def test_an_absence_said_through_one_process_holds_the_others_tables_at_its_look(
    cluster: Cluster,
) -> None:
    """Away through process A: A's table holds the person at once and the answer counts
    both processes' tables; B's holds them after B's next look (deadline a pace after the
    return, "away" notice once), and a second look changes nothing. Back through A
    releases A's table at once and B's at B's next look (the deadline a pace from now)."""
    a, b = await cluster.process(0), await cluster.process(1)
    mine = await game(a, EVEN_GUILD, 1)
    theirs = await game(b, ODD_GUILD, 2)
    away = acting(theirs)
    until = cluster.clock() + 3 * DAY

    assert await say_away(a, int(away), until) == 2  # both processes' turn-based tables
    assert mine.meta.held == {away: until}
    assert theirs.meta.held == {}  # B has not looked yet
    assert (await stored(a.storage, theirs.id)).meta.held == {}

    cluster.clock.advance(10)
    refreshed = len(b.publisher.refreshed)
    assert await b.tables.poll_absences() == 1
    assert theirs.meta.held == {away: until}
    turn = theirs.meta.turn
    assert turn is not None and turn.deadline == until + DAY
    assert theirs.meta.notice == Notice("away.notice", away)
    assert len(b.publisher.refreshed) == refreshed + 1  # "away until" shown by B
    row = await stored(a.storage, theirs.id)
    assert row.meta.held == {away: until} and row.record.due_at is not None
    assert row.record.due_at >= until  # out of memory too, nothing falls due before

    # Looking again (or A looking at its own change) holds nothing twice.
    revisions = (mine.revision, theirs.revision)
    cluster.clock.advance(15)
    assert await b.tables.poll_absences() == 0
    await a.tables.poll_absences()
    assert (mine.revision, theirs.revision) == revisions

    cluster.clock.advance(DAY)
    assert await say_away(a, int(away), None) == 2
    assert mine.meta.held == {}
    assert theirs.meta.held == {away: until}  # still held on B until it looks
    cluster.clock.advance(15)
    assert await b.tables.poll_absences() == 1
    assert theirs.meta.held == {}
    turn = theirs.meta.turn
    assert turn is not None and turn.deadline == cluster.clock() + DAY


async def test_a_process_down_when_the_absence_changed_catches_up_at_start_up(
    cluster: Cluster,
) -> None:
    """B is down while the person says they are away through A: B's replacement knows
    the absence from start-up and holds its table at its first look, once ready. B is
    down again when they say they are back: the next replacement releases it."""
    a, b = await cluster.process(0), await cluster.process(1)
    theirs = await game(b, ODD_GUILD, 2)
    away = acting(theirs)
    moves = theirs.running_engine().move_number
    await cluster.stop(b)

    until = cluster.clock() + 2 * DAY
    assert await say_away(a, int(away), until) == 1
    cluster.clock.advance(60)

    again = await cluster.process(1)
    assert await again.tables.restore() == []  # nothing of its falls due soon
    assert again.tables.absent_until(away) == until  # for the tables they join meanwhile
    again.gate.set()  # ready: the scheduler starts, and its first look
    await wait_for(lambda: held_at(again, theirs.id) == {away: until})
    session = again.tables.get(theirs.id)
    assert session is not None
    turn = session.meta.turn
    assert turn is not None and turn.deadline == until + DAY
    assert session.running_engine().move_number == moves
    assert (await stored(a.storage, theirs.id)).meta.held == {away: until}
    await cluster.stop(again)

    cluster.clock.advance(60)
    assert await say_away(a, int(away), None) == 1
    cluster.clock.advance(60)
    third = await cluster.process(1)
    await third.tables.restore()
    assert third.tables.absent_until(away) is None
    third.gate.set()
    await wait_for(lambda: held_at(third, theirs.id) == {})
    row = await stored(a.storage, theirs.id)
    assert row.meta.held == {}
    turn = row.meta.turn
    assert turn is not None and turn.deadline == cluster.clock() + DAY  # a pace from now


def held_at(process: Process, table_id: int) -> dict[str, float] | None:
    """Whom a table in the process's memory holds; None while it is not loaded."""
    session = process.tables.get(table_id)
    return None if session is None else session.meta.held


async def test_a_deadline_before_the_look_holds_the_person_instead_of_timing_them_out(
    cluster: Cluster,
) -> None:
    """The person's deadline on B falls due before B looks at the absence said through
    A: B reads the stored absence as the deadline fires and holds the turn; nobody moves
    for them, no timeout is counted, and B's look afterwards changes nothing more."""
    a, b = await cluster.process(0), await cluster.process(1)
    theirs = await game(b, ODD_GUILD, 2)
    away = acting(theirs)
    moves = theirs.running_engine().move_number
    cluster.clock.advance(b.tables.idle_seconds + 1)
    assert await b.tables.sweep_idle() == [theirs.id]  # out of memory, as idle tables go

    until = cluster.clock() + 3 * DAY
    assert await say_away(a, int(away), until) == 1
    cluster.clock.advance(DAY)  # past the deadline B stored before the absence
    # B's scheduler loads what fell due (its look at absences has not come yet).
    (session,) = await b.tables.poll_due()
    b.gate.set()  # its timers fire: the half-time reminder, then the deadline
    await wait_for(lambda: session.meta.held == {away: until})
    await wait_for(lambda: not b.tables.timers.busy(session.id))
    assert session.running_engine().move_number == moves
    assert session.meta.timeouts == {}
    turn = session.meta.turn
    assert turn is not None and turn.deadline == until + DAY
    assert session.meta.notice == Notice("away.notice", away)
    row = await stored(a.storage, theirs.id)
    assert row.meta.held == {away: until} and row.meta.timeouts == {}
    revision = session.revision
    assert await b.tables.poll_absences() == 1  # the change is read: already applied
    assert session.revision == revision


async def test_a_game_joined_or_started_while_away_holds_the_person(cluster: Cluster) -> None:
    """Away through A; once B has looked, a lobby on B that the person joins holds them,
    and the game, once started, waits for them until a pace after their return. A game
    whose lobby they sat in before saying so holds them from its start too."""
    a, b = await cluster.process(0), await cluster.process(1)
    before = await lobby(b, ODD_GUILD, 3)
    await join(before, BEN, CID)
    until = cluster.clock() + 2 * DAY
    assert await say_away(a, CID, until) == 1  # the lobby counts: it is turn-based
    assert before.meta.held == {}
    assert await b.tables.poll_absences() == 1
    assert before.meta.held == {str(CID): until}

    session = await lobby(b, ODD_GUILD, 4)
    await join(session, BEN, CID)
    assert session.meta.held == {str(CID): until}
    await session.change(lambda d: d.start(HOST, 7))
    assert session.meta.held == {str(CID): until}
    assert session.meta.notice == Notice("away.notice", str(CID))
    while acting(session) != str(CID):
        await move(session)
    turn = session.meta.turn
    assert turn is not None and turn.deadline == until + DAY

    await before.change(lambda d: d.start(HOST, 7))
    assert before.meta.held == {str(CID): until}
    while acting(before) != str(CID):
        await move(before)
    turn = before.meta.turn
    assert turn is not None and turn.deadline == until + DAY

    # Someone not away who joins is not held; someone away who leaves is held no more.
    other = await lobby(b, ODD_GUILD, 5)
    await join(other, BEN, CID)
    assert other.meta.held == {str(CID): until}
    await other.change(lambda d: d.leave(CID))
    assert other.meta.held == {}
    assert other.public().held == ()  # no "away until" line for them


async def test_a_look_that_meets_the_database_away_applies_the_absence_at_the_next(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B's look reads a change but cannot read the person's tables (the database away):
    nothing is held and nothing lost; the next look, 15 s later, holds them, once."""
    a, b = await cluster.process(0), await cluster.process(1)
    theirs = await game(b, ODD_GUILD, 2)
    away = acting(theirs)
    until = cluster.clock() + DAY
    await say_away(a, int(away), until)
    await b.tables.poll_absences()  # a first look before the change: nothing new after
    read = b.storage.open_tables_seating

    async def away_once(user_id: int) -> list[TableRecord]:
        monkeypatch.setattr(b.storage, "open_tables_seating", read)
        raise DatabaseUnavailable("connection refused")

    cluster.clock.advance(60)
    assert await say_away(a, int(away), until + DAY) == 1  # replaced: two days now
    cluster.clock.advance(5)
    monkeypatch.setattr(b.storage, "open_tables_seating", away_once)
    assert await b.tables.poll_absences() == 0
    assert theirs.meta.held == {away: until}
    cluster.clock.advance(15)
    assert await b.tables.poll_absences() == 1
    assert theirs.meta.held == {away: until + DAY}
    revision = theirs.revision
    cluster.clock.advance(15)
    assert await b.tables.poll_absences() == 0
    assert theirs.revision == revision
