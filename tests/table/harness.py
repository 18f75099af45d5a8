"""What the table-core tests share: a fake clock and publisher, a registry on a fresh database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.storage import BrokenRow, Storage, TableRecord
from bot.table.errors import UserError
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec, Letter
from bot.table.tables import Tables
from tests.backends import Backend

HOST, BEN, CID, DORA = 101, 102, 103, 104
NAMES = {HOST: "ana", BEN: "ben", CID: "cid", DORA: "dora"}
GUILD = 1
CHANNEL = 500
T0 = 1_700_000_000.0

SPECS = pytest.mark.parametrize("spec", [NOTHANKS, RAGE], ids=lambda spec: spec.name)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time on."""
        self.now += seconds


@dataclass
class RecordingPublisher:
    """A publisher that only records what it was asked to show."""

    refreshed: list[tuple[int, int, str]] = field(default_factory=list)
    delivered: list[tuple[int, list[Letter]]] = field(default_factory=list)
    pinged: list[tuple[int, list[str], float]] = field(default_factory=list)
    broken: list[BrokenRow] = field(default_factory=list)

    def refresh(self, session: TableSession) -> None:
        """Record a refresh: table id, revision, status."""
        self.refreshed.append((session.id, session.revision, session.status))

    def deliver(self, session: TableSession, letters: Sequence[Letter]) -> None:
        """Record the DMs of a change."""
        self.delivered.append((session.id, list(letters)))

    async def ping(self, session: TableSession, players: Sequence[str], deadline: float) -> None:
        """Record a half-time ping."""
        self.pinged.append((session.id, list(players), deadline))

    def show_broken(self, row: BrokenRow) -> None:
        """Record a quarantined table."""
        self.broken.append(row)


@dataclass
class Harness:
    """Storage, the registry, the clock, the publisher and the timers' start gate."""

    path: Path | str  # what open_storage takes: a SQLite file or a PostgreSQL URL
    backend: Backend
    storage: Storage
    tables: Tables
    clock: Clock
    publisher: RecordingPublisher
    gate: asyncio.Event


def make_tables(storage: Storage, clock: Clock, gate: asyncio.Event) -> Tables:
    """A registry with both games; its timers wait for ``gate`` (closed: nothing fires)."""

    async def ready() -> None:
        await gate.wait()

    tables = Tables(storage, clock=clock, ready=ready)
    tables.register(NOTHANKS)
    tables.register(RAGE)
    return tables


@pytest.fixture
async def h(backend: Backend) -> AsyncIterator[Harness]:
    """A table registry on a fresh database (each backend in turn), with timers held until
    the test opens the gate."""
    storage = await backend.open()
    clock = Clock()
    gate = asyncio.Event()
    tables = make_tables(storage, clock, gate)
    publisher = RecordingPublisher()
    tables.publisher = publisher
    try:
        yield Harness(backend.target, backend, storage, tables, clock, publisher, gate)
    finally:
        tables.close()
        await storage.close()


async def open_lobby(
    h: Harness,
    spec: GameSpec,
    *,
    channel: int = CHANNEL,
    options: dict[str, Any] | None = None,
) -> TableSession:
    """Open a lobby with ana as host and first seat; its message gets a made-up id."""
    return await open_lobby_in(h.tables, spec, guild=GUILD, channel=channel, options=options)


async def open_lobby_in(
    tables: Tables,
    spec: GameSpec,
    *,
    guild: int,
    channel: int,
    options: dict[str, Any] | None = None,
    pace: float | None = None,
    host: int = HOST,
) -> TableSession:
    """Open a lobby in a channel of a guild through a registry, ``host`` (ana unless
    said) in the first seat, at ``pace`` seconds a move (None: live); its message gets a
    made-up id."""
    meta: dict[str, Any] = {"locale": "en-US"}
    if pace is not None:
        meta["pace"] = pace
    record = TableRecord(
        game=spec.name,
        guild_id=guild,
        channel_id=channel,
        host_id=host,
        options=spec.parse_options(options or {}),
        meta=meta,
    )

    async def post(session: TableSession) -> int:
        return 9000 + session.id

    name = NAMES.get(host, "host")
    return await tables.open(spec, record, seat=lambda d: d.join(host, name, "en-US"), post=post)


async def seat(session: TableSession, *users: int) -> None:
    """Seat people through the change path."""
    for user in users:
        await session.change(partial(Draft.join, user_id=user, name=NAMES[user], locale=None))


async def started(h: Harness, spec: GameSpec, **options: Any) -> TableSession:
    """A running game of ana, ben and cid."""
    session = await open_lobby(h, spec, options=options)
    await seat(session, BEN, CID)
    await session.change(lambda d: d.start(HOST, 7))
    return session


def acting(session: TableSession) -> str:
    """The (single) player to act."""
    players = session.acting_players()
    assert len(players) == 1
    return players[0]


def a_legal_move(session: TableSession, player: str) -> Any:
    """Some legal action of a player."""
    engine = session.running_engine()
    return engine.legal_actions(player)[0]


async def play_one(h: Harness, session: TableSession) -> None:
    """One move: a computer's choice for a computer seat, else a person's legal move."""
    player = acting(session)
    if session.plays_itself(player):
        action = await h.tables.choose(session, player)
        await session.change(lambda d: d.auto_move(player, action, timed_out=False))
    else:
        action = a_legal_move(session, player)
        move = session.running_engine().move_number
        await session.change(
            lambda d: d.human_move(player, action, expected_move=move, locale=None)
        )


async def stored(h: Harness, session: TableSession) -> TableRecord:
    """The table's row as the database holds it."""
    record = await h.storage.get_table(session.id)
    assert record is not None
    return record


def user_error(raised: pytest.ExceptionInfo[UserError]) -> tuple[str, dict[str, object]]:
    """The key and parameters of a refused change."""
    return raised.value.key, dict(raised.value.params)
