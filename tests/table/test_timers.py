"""Timed events: `next_event` as a pure function, and timed moves retried until saved."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import Any, cast

import pytest

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.storage import Storage, TableRecord
from bot.table.meta import Turn
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec
from bot.table.timers import (
    BOT_DELAY,
    LOBBY_TTL,
    NOTICE_GAP,
    RECENTLY,
    TimedEvent,
    due_time,
    next_event,
    owed_notices,
)
from tests.table.harness import (
    BEN,
    CID,
    HOST,
    T0,
    Harness,
    acting,
    open_lobby,
    seat,
    stored,
)

SPECS = pytest.mark.parametrize("spec", [NOTHANKS, RAGE], ids=lambda spec: spec.name)
HUMANS = ["101", "102", "103"]
COMPUTERS = ["-1", "-2", "-3"]


# -- next_event, pure ---------------------------------------------------------------------


def session_of(
    spec: GameSpec,
    status: str,
    players: list[str],
    *,
    moves: int = 0,
    meta: dict[str, Any] | None = None,
    turn_seconds: int = 60,
) -> TableSession:
    """A session built straight from a record (no database is touched by next_event)."""
    state = None
    if status != "lobby":
        engine = spec.new_engine(players, 5, spec.parse_options({}))
        for _ in range(moves):
            player = engine.acting_players()[0]
            engine.apply(player, engine.legal_actions(player)[0])
        state = engine.to_dict()
    record = TableRecord(
        game=spec.name,
        channel_id=1,
        host_id=101,
        status=status,
        options={**spec.parse_options({}), "turn_seconds": turn_seconds},
        seats=[int(p) for p in players],
        state=state,
        move_number=moves,
        meta=meta or {},
        id=1,
    )
    return TableSession(spec, record, cast(Storage, None), asyncio.Lock(), lambda: T0)


@SPECS
def test_lobby_expires_after_its_ttl(spec: GameSpec) -> None:
    """A lobby's next event is its expiry, counted from when it opened, whatever the time."""
    session = session_of(spec, "lobby", HUMANS[:1], meta={"opened_at": T0 - 100})
    for now in (T0, T0 + 10 * LOBBY_TTL):
        assert next_event(session, now) == TimedEvent("expire", T0 - 100 + LOBBY_TTL, 0)


@SPECS
def test_computer_to_act_moves_after_the_delay(spec: GameSpec) -> None:
    """A computer to act moves BOT_DELAY after now, for the game's current move."""
    session = session_of(spec, "running", COMPUTERS, moves=2)
    assert next_event(session, T0 + 5) == TimedEvent("computer", T0 + 5 + BOT_DELAY, 2)


@SPECS
def test_absent_person_is_played_by_the_computer(spec: GameSpec) -> None:
    """A person taken over after timeouts is moved for like a computer, turn clock or not."""
    bare = session_of(spec, "running", HUMANS)
    away = acting(bare)
    turn = Turn(0, T0 + 60).to_dict()
    session = session_of(spec, "running", HUMANS, meta={"away": [away], "turn": turn})
    assert next_event(session, T0) == TimedEvent("computer", T0 + BOT_DELAY, 0)


@SPECS
def test_human_turn_is_pinged_at_half_time(spec: GameSpec) -> None:
    """A person's turn not yet pinged is pinged half way to its deadline."""
    turn = Turn(1, T0 + 40).to_dict()
    session = session_of(spec, "running", HUMANS, moves=1, meta={"turn": turn}, turn_seconds=40)
    assert next_event(session, T0) == TimedEvent("ping", T0 + 20, 1)
    assert next_event(session, T0 + 19.5) == TimedEvent("ping", T0 + 20, 1)


@SPECS
def test_late_or_pinged_turn_times_out_at_its_deadline(spec: GameSpec) -> None:
    """Once pinged (or past half time already, after a restart) the deadline comes next."""
    pinged = Turn(0, T0 + 60, pinged=True).to_dict()
    session = session_of(spec, "running", HUMANS, meta={"turn": pinged})
    assert next_event(session, T0) == TimedEvent("timeout", T0 + 60, 0)
    unpinged = Turn(0, T0 + 60).to_dict()
    late = session_of(spec, "running", HUMANS, meta={"turn": unpinged})
    assert next_event(late, T0 + 45) == TimedEvent("timeout", T0 + 60, 0)
    assert next_event(late, T0 + 600) == TimedEvent("timeout", T0 + 60, 0)


@SPECS
@pytest.mark.parametrize("status", ["finished", "cancelled", "abandoned"])
def test_closed_table_has_nothing_due(spec: GameSpec, status: str) -> None:
    """A finished, cancelled or abandoned table has no next event."""
    session = session_of(spec, status, COMPUTERS, meta={"turn": Turn(0, T0).to_dict()})
    assert next_event(session, T0) is None


@SPECS
def test_running_without_turn_clock_has_nothing_due(spec: GameSpec) -> None:
    """A person's turn without a turn clock has nothing scheduled."""
    assert next_event(session_of(spec, "running", HUMANS), T0) is None


DAY = 24 * 3600


def turn_based(spec: GameSpec, **meta: Any) -> TableSession:
    """A 24 h table whose turn began at move 0 (now, T0) and waits for its first person."""
    turn = Turn(0, T0 + DAY).to_dict()
    return session_of(spec, "running", HUMANS, meta={"turn": turn, "pace": DAY, **meta})


@SPECS
def test_a_notice_owed_is_the_due_time_until_it_is_out_or_settled(spec: GameSpec) -> None:
    """A turn-based turn owes its people a notice: RECENTLY after they acted, the gap
    after their last notice there. The stored due time is that, sooner than the half-time
    reminder, until the turn's notice is out or settled (none goes): then the reminder."""
    first = turn_based(spec).acting_players()[0]
    half = T0 + DAY / 2
    fresh = turn_based(spec, acted={first: T0})
    assert owed_notices(fresh)[first] == T0 + RECENTLY
    assert due_time(fresh, T0) == T0 + RECENTLY
    gap = turn_based(spec, acted={first: T0}, notice_sent={first: T0 - 60})
    assert due_time(gap, T0) == T0 - 60 + NOTICE_GAP
    for noted in ([7, 8, 0], [0, 0, 0], [7, 0, 0]):  # sent; settled; sent and closed
        done = turn_based(spec, acted={first: T0}, turn_notices={first: noted})
        assert first not in owed_notices(done)
    older = turn_based(spec, acted={first: T0}, turn_notices={first: [7, 8, -5]})
    assert first in owed_notices(older)  # an earlier turn's notice is not this turn's
    everyone = {p: [0, 0, 0] for p in HUMANS}
    assert due_time(turn_based(spec, turn_notices=everyone), T0) == half


@SPECS
def test_an_away_persons_notice_waits_for_their_return(spec: GameSpec) -> None:
    """A person whose turns are held (/cardtable away) is told of their turn when the
    absence ends, not while away; an absence already over holds nothing back."""
    first = turn_based(spec).acting_players()[0]
    back = T0 + 3 * DAY
    away = turn_based(spec, acted={first: T0}, held={first: back})
    assert owed_notices(away)[first] == back
    assert due_time(away, T0) == min(back, T0 + DAY / 2)
    over = turn_based(spec, acted={first: T0}, held={first: T0 - DAY})
    assert owed_notices(over)[first] == T0 + RECENTLY


@SPECS
def test_a_notice_that_cannot_go_keeps_nothing_due(spec: GameSpec) -> None:
    """No notice is owed to closed DMs, to a seat a computer plays, or at a live table: its
    due time is the turn's own event, so no table stays due for a notice that never goes."""
    first = turn_based(spec).acting_players()[0]
    half = T0 + DAY / 2
    for meta in ({"dm_closed": [first]}, {"away": [first]}):
        session = turn_based(spec, acted={first: T0}, **meta)
        assert first not in owed_notices(session)
        if not session.plays_itself(first):
            others = {p: [0, 0, 0] for p in HUMANS if p != first}
            quiet = turn_based(spec, acted={first: T0}, turn_notices=others, **meta)
            assert due_time(quiet, T0) == half
    live = session_of(
        spec, "running", HUMANS, meta={"turn": Turn(0, T0 + 60).to_dict()}, turn_seconds=60
    )
    assert owed_notices(live) == {} and due_time(live, T0) == T0 + 30


# -- retries ------------------------------------------------------------------------------


async def wait_for(condition: Callable[[], bool], *, seconds: float = 5.0) -> None:
    """Poll (with real, short sleeps) until a condition holds; fail after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


async def computer_to_act(h: Harness, spec: GameSpec) -> TableSession:
    """A running game where a computer is to act next (people move until then)."""
    session = await open_lobby(h, spec)
    await session.change(lambda d: d.add_computer(HOST, "easy", "🤖 1"))
    await session.change(lambda d: d.add_computer(HOST, "easy", "🤖 2"))
    await session.change(lambda d: d.start(HOST, 7))
    while not session.plays_itself(acting(session)):
        player = acting(session)
        # The last legal action: No thanks! rather than Take, so the turn moves on.
        action = session.running_engine().legal_actions(player)[-1]
        await session.change(
            partial(Draft.human_move, player=player, action=action, expected_move=None, locale=None)
        )
    return session


async def person_to_act(h: Harness, spec: GameSpec) -> TableSession:
    """A running game of three people."""
    session = await open_lobby(h, spec)
    await seat(session, BEN, CID)
    await session.change(lambda d: d.start(HOST, 7))
    return session


@SPECS
@pytest.mark.parametrize("kind", ["computer", "timeout"])
@pytest.mark.parametrize("failures", [2, 5])
async def test_timed_move_is_retried_until_saved(
    h: Harness,
    spec: GameSpec,
    kind: str,
    failures: int,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A timed move whose save fails is retried with backoff, then applied once: never dropped."""
    monkeypatch.setattr("bot.table.timers.RETRY_DELAYS", (0.01, 0.02))
    if kind == "computer":
        session = await computer_to_act(h, spec)
    else:
        session = await person_to_act(h, spec)
    move = session.running_engine().move_number
    revision = session.revision
    player = acting(session)
    original = h.storage.save_table
    attempts: list[int] = []

    async def flaky(record: TableRecord, played: Any = None, **kwargs: Any) -> None:
        if played is not None:  # only the timed move fails, not the ping
            attempts.append(session.running_engine().move_number)
            if len(attempts) <= failures:
                raise OSError("disk I/O error")
            h.gate.clear()  # hold whatever comes next
        await original(record, played, **kwargs)

    monkeypatch.setattr(h.storage, "save_table", flaky)
    h.clock.advance(BOT_DELAY if kind == "computer" else 61)
    with caplog.at_level(logging.WARNING, logger="bot.table.timers"):
        h.gate.set()
        await wait_for(lambda: session.running_engine().move_number == move + 1)
        await asyncio.sleep(0.05)
    assert attempts == [move] * (failures + 1)
    pinged = 1 if kind == "timeout" else 0
    assert session.revision == revision + 1 + pinged
    assert len(h.publisher.pinged) == pinged
    assert [m[:2] for m in await h.storage.moves(session.id)][-1] == (move + 1, player)
    assert len(await h.storage.moves(session.id)) == move + 1
    assert await stored(h, session) == session.record
    retries = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert [r.args[-1] for r in retries] == [0.01, 0.02, 0.02, 0.02, 0.02][:failures]  # type: ignore[index]
    assert all(r.args[0] == kind for r in retries)  # type: ignore[index]
    if kind == "timeout":
        assert session.meta.timeouts == {player: 1}
    assert h.tables.get(session.id) is session and len(h.tables.timers) <= 1


@SPECS
async def test_retry_stops_once_the_table_is_closed(
    h: Harness, spec: GameSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A timed move that keeps failing is given up once the table is stopped."""
    monkeypatch.setattr("bot.table.timers.RETRY_DELAYS", (0.01,))
    session = await computer_to_act(h, spec)
    move = session.running_engine().move_number
    original = h.storage.save_table
    attempts: list[int] = []

    async def failing_moves(record: TableRecord, played: Any = None, **kwargs: Any) -> None:
        if played is not None:
            attempts.append(len(attempts))
            raise OSError("disk I/O error")
        await original(record, played, **kwargs)

    monkeypatch.setattr(h.storage, "save_table", failing_moves)
    h.clock.advance(BOT_DELAY)
    h.gate.set()
    await wait_for(lambda: len(attempts) >= 3)
    await session.change(lambda d: d.stop(HOST, False))
    settled = len(attempts)
    await asyncio.sleep(0.1)
    assert len(attempts) <= settled + 1  # at most the attempt already under way
    assert session.status == "abandoned"
    assert session.engine is not None and session.engine.move_number == move
    assert len(h.tables.timers) == 0 and h.tables.get(session.id) is None
