"""The table core without Discord: lobbies, moves, errors, failed saves, migration, restore."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import logging
import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest

from bot.engines.nothanks import PASS
from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.storage import MIGRATIONS, StaleWrite, Storage, TableRecord, open_storage
from bot.table.errors import SaveFailed, TableMovedOn, UserError
from bot.table.meta import Notice, TableMeta, Turn
from bot.table.session import DEFAULT_TURN_SECONDS, Draft, TableSession
from bot.table.spec import GameSpec
from bot.table.timers import LOBBY_TTL, next_event
from tests.table.harness import (
    BEN,
    CHANNEL,
    CID,
    DORA,
    GUILD,
    HOST,
    SPECS,
    T0,
    Clock,
    Harness,
    RecordingPublisher,
    a_legal_move,
    acting,
    make_tables,
    open_lobby,
    play_one,
    seat,
    started,
    stored,
    user_error,
)

# -- lobbies ------------------------------------------------------------------------------


@SPECS
async def test_open_saves_and_registers_the_lobby(h: Harness, spec: GameSpec) -> None:
    """A new lobby is saved with its host, seat, message id and opening time, and registered."""
    session = await open_lobby(h, spec)
    assert session.status == "lobby"
    assert session.record.seats == [HOST] and session.record.host_id == HOST
    assert session.record.message_id == 9000 + session.id
    assert session.meta.opened_at == T0 and session.meta.names == {str(HOST): "ana"}
    assert session.meta.user_locales == {str(HOST): "en-US"}
    assert session.revision == 2  # the seat, then the message id
    assert await stored(h, session) == session.record
    assert h.tables.get(session.id) is session
    assert h.tables.in_channel(CHANNEL) is session
    busy = await h.storage.open_tables()
    assert [record.id for record in busy] == [session.id]


@SPECS
async def test_second_lobby_in_a_channel_is_refused(h: Harness, spec: GameSpec) -> None:
    """A second lobby in a busy channel gets a link to the first; no row is added."""
    session = await open_lobby(h, spec)
    with pytest.raises(UserError) as raised:
        await open_lobby(h, spec)
    assert user_error(raised) == ("table.channel_busy", {"link": session.jump_url})
    assert len(await h.storage.open_tables()) == 1


@SPECS
async def test_join_leave_and_host_handover(h: Harness, spec: GameSpec) -> None:
    """People join in order; a leaving host hands over to the longest-seated person."""
    session = await open_lobby(h, spec)
    await seat(session, BEN, CID)
    assert session.record.seats == [HOST, BEN, CID]
    assert session.meta.names == {str(HOST): "ana", str(BEN): "ben", str(CID): "cid"}
    await session.change(lambda d: d.leave(HOST))
    assert session.record.seats == [BEN, CID] and session.record.host_id == BEN
    await session.change(lambda d: d.leave(CID))
    assert session.record.host_id == BEN and session.status == "lobby"
    assert await stored(h, session) == session.record


@SPECS
async def test_join_and_leave_refusals(h: Harness, spec: GameSpec) -> None:
    """Joining twice, joining a full table and leaving without a seat are refused."""
    session = await open_lobby(h, spec)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.join(HOST, "ana", None))
    assert raised.value.key == "lobby.already_seated"
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.leave(BEN))
    assert raised.value.key == "lobby.not_seated"
    for user in range(1000, 1000 + spec.max_players - 1):
        await session.change(partial(Draft.join, user_id=user, name=f"p{user}", locale=None))
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.join(BEN, "ben", None))
    assert user_error(raised) == ("lobby.full", {"max": spec.max_players})
    assert len(session.record.seats) == spec.max_players


@SPECS
async def test_last_person_leaving_cancels(h: Harness, spec: GameSpec) -> None:
    """When the last person leaves (computers do not count), the lobby is cancelled and freed."""
    session = await open_lobby(h, spec)
    await session.change(lambda d: d.add_computer(HOST, "easy", "bot 1"))
    session.memory["-1"] = object()
    await session.change(lambda d: d.leave(HOST))
    assert session.status == "cancelled" and session.meta.closed_by == HOST
    assert h.tables.get(session.id) is None and h.tables.in_channel(CHANNEL) is None
    assert session.memory == {}
    assert (await stored(h, session)).status == "cancelled"
    assert h.publisher.refreshed[-1] == (session.id, session.revision, "cancelled")
    again = await open_lobby(h, spec)
    assert again.id != session.id


@SPECS
async def test_add_computer(h: Harness, spec: GameSpec) -> None:
    """Only the host seats computers, of a known level, with names and negative ids."""
    session = await open_lobby(h, spec)
    await seat(session, BEN)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.add_computer(BEN, "easy", "bot"))
    assert raised.value.key == "lobby.not_host_addbot"
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.add_computer(HOST, "godlike", "bot"))
    assert raised.value.key == "lobby.bad_level"
    await session.change(lambda d: d.add_computer(HOST, "easy", "🤖 one"))
    await session.change(lambda d: d.add_computer(HOST, "hard", "🤖 two"))
    assert session.record.seats == [HOST, BEN, -1, -2]
    assert session.meta.computers == {"-1": "easy", "-2": "hard"}
    assert session.meta.names["-1"] == "🤖 one" and session.meta.names["-2"] == "🤖 two"
    assert session.plays_itself("-1") and not session.plays_itself(str(BEN))
    assert session.level_of("-2") == "hard"
    while len(session.record.seats) < spec.max_players:
        await session.change(lambda d: d.add_computer(HOST, "normal", "more"))
    assert min(session.record.seats) == -(spec.max_players - 2)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.add_computer(HOST, "normal", "one too many"))
    assert user_error(raised) == ("lobby.full", {"max": spec.max_players})
    assert await stored(h, session) == session.record


async def test_expert_computers_sit_at_no_thanks_tables_only(h: Harness) -> None:
    """No Thanks! offers a fourth level, expert; Rage refuses it (Rage stops at hard)."""
    nothanks = await open_lobby(h, NOTHANKS)
    await nothanks.change(lambda d: d.add_computer(HOST, "expert", "🤖 expert"))
    assert nothanks.meta.computers == {"-1": "expert"}
    assert nothanks.facts().levels == ("easy", "normal", "hard", "expert")
    rage = await open_lobby(h, RAGE, channel=CHANNEL + 1)
    with pytest.raises(UserError) as raised:
        await rage.change(lambda d: d.add_computer(HOST, "expert", "🤖 expert"))
    assert raised.value.key == "lobby.bad_level"
    assert rage.facts().levels == ("easy", "normal", "hard")


@SPECS
async def test_start_needs_the_host_and_enough_players(h: Harness, spec: GameSpec) -> None:
    """Start is refused with too few players or to someone else; the host deals the game."""
    session = await open_lobby(h, spec, options={"turn_seconds": 30})
    await seat(session, BEN)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.start(HOST, 7))
    assert user_error(raised) == ("lobby.too_few", {"min": spec.min_players, "count": 2})
    await seat(session, CID)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.start(BEN, 7))
    assert raised.value.key == "lobby.not_host_start"
    assert session.status == "lobby" and session.engine is None
    h.clock.advance(5)
    await session.change(lambda d: d.start(HOST, 7))
    assert session.status == "running"
    engine = session.running_engine()
    assert list(engine.players) == [str(HOST), str(BEN), str(CID)]
    assert session.record.state == engine.to_dict() and session.record.move_number == 0
    assert session.meta.turn == Turn(0, T0 + 5 + 30)
    record = await stored(h, session)
    assert record == session.record and record.status == "running"
    with pytest.raises(TableMovedOn):
        await session.change(lambda d: d.start(HOST, 8))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (NOTHANKS, [(p, "nothanks.dm.started", {"count": 11}) for p in ("101", "102", "103")]),
        (RAGE, []),
    ],
    ids=["nothanks", "rage"],
)
async def test_start_letters(h: Harness, spec: GameSpec, expected: list[tuple[Any, ...]]) -> None:
    """Starting No Thanks! writes everybody their starting chips; Rage writes nothing."""
    session = await open_lobby(h, spec)
    await seat(session, BEN, CID)
    draft = await session.change(lambda d: d.start(HOST, 7))
    assert [tuple(letter) for letter in draft.letters] == expected


@SPECS
async def test_cancel_permissions(h: Harness, spec: GameSpec) -> None:
    """Cancel is the host's, or a moderator's; it closes the lobby and frees it."""
    session = await open_lobby(h, spec)
    await seat(session, BEN)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.cancel(BEN, False))
    assert raised.value.key == "lobby.not_host_cancel"
    assert session.status == "lobby"
    session.memory["-1"] = object()
    await session.change(lambda d: d.cancel(BEN, True))
    assert session.status == "cancelled" and session.meta.closed_by == BEN
    assert h.tables.get(session.id) is None and session.memory == {}
    with pytest.raises(TableMovedOn):
        await session.change(lambda d: d.cancel(HOST, False))


@SPECS
@pytest.mark.parametrize("running", [False, True], ids=["lobby", "game"])
async def test_stop_permissions(h: Harness, spec: GameSpec, running: bool) -> None:
    """Stop is the host's or a moderator's: a game is abandoned, a lobby cancelled; both freed."""
    if running:
        session = await started(h, spec)
    else:
        session = await open_lobby(h, spec)
        await seat(session, BEN)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.stop(BEN, False))
    assert raised.value.key == "table.not_host_stop"
    session.memory["-1"] = object()
    await session.change(lambda d: d.stop(HOST, False))
    assert session.status == ("abandoned" if running else "cancelled")
    assert session.meta.closed_by == HOST and session.meta.turn is None
    assert h.tables.get(session.id) is None and h.tables.in_channel(CHANNEL) is None
    assert session.memory == {}
    record = await stored(h, session)
    assert record.status == session.status and "turn" not in record.meta


# -- moves --------------------------------------------------------------------------------


@SPECS
async def test_human_move_is_saved_with_its_log_row(h: Harness, spec: GameSpec) -> None:
    """A person's move goes through the draft, is saved with its move row, and is published."""
    session = await started(h, spec)
    player = acting(session)
    action = a_legal_move(session, player)
    before = session.revision
    h.clock.advance(3)
    draft = await session.change(
        lambda d: d.human_move(player, action, expected_move=0, locale="de")
    )
    assert draft.result is not None and draft.move == (player, str(action))
    assert session.running_engine().move_number == 1
    assert session.revision == before + 1
    assert session.meta.user_locales[player] == "de"
    assert await h.storage.moves(session.id) == [(1, player, str(action))]
    assert await stored(h, session) == session.record
    assert h.publisher.refreshed[-1] == (session.id, session.revision, "running")


@SPECS
async def test_each_change_writes_only_the_columns_it_changed(h: Harness, spec: GameSpec) -> None:
    """A join writes the seats, a start the status and the game (and its first due time,
    a deadline), a move the game, its move number and the next deadline: the metadata
    always, the rest never, and the stored row is as in memory."""
    writes: list[list[str]] = []
    save = h.storage.save_table

    async def recording(record: TableRecord, *args: Any, **kwargs: Any) -> None:
        writes.append(sorted(kwargs["columns"]))
        await save(record, *args, **kwargs)

    h.storage.save_table = recording  # type: ignore[method-assign]
    session = await open_lobby(h, spec)
    await seat(session, BEN, CID)
    assert writes[-1] == ["meta", "seats"]
    await session.change(lambda d: d.start(HOST, 7))
    assert writes[-1] == ["due_at", "meta", "move_number", "state", "status"]
    player = acting(session)
    action = a_legal_move(session, player)
    h.clock.advance(1)
    await session.change(lambda d: d.human_move(player, action, expected_move=0, locale=None))
    assert writes[-1] == ["due_at", "meta", "move_number", "state"]
    await session.change(lambda d: d.set_message(4242))
    assert writes[-1] == ["message_id", "meta"]
    assert await stored(h, session) == session.record


def test_a_draft_copies_every_field_of_the_record() -> None:
    """The draft's copy of the record is written field by field (for speed): a field added
    to TableRecord must be copied too, or a change would silently reset it."""
    values = {
        "game": "nothanks",
        "channel_id": 5,
        "host_id": 6,
        "guild_id": 7,
        "status": "running",
        "options": {"open_chips": True},
        "seats": [6, 8, 12],
        "state": NOTHANKS.new_engine(["6", "8", "12"], 1, {}).to_dict(),
        "move_number": 0,
        "message_id": 9,
        "meta": {},
        "id": 10,
        "revision": 11,
        "due_at": 12.5,
    }
    assert set(values) == {f.name for f in dataclasses.fields(TableRecord)}
    live = TableRecord(**values)  # type: ignore[arg-type]
    session = TableSession(NOTHANKS, live, cast(Storage, None), asyncio.Lock(), lambda: T0)
    drafted = Draft(session, T0).record
    assert drafted == live
    assert drafted.options is not live.options and drafted.seats is not live.seats


@SPECS
async def test_stale_expected_move_is_moved_on(h: Harness, spec: GameSpec) -> None:
    """A click made for an earlier move is refused as 'moved on'; nothing changes."""
    session = await started(h, spec)
    player = acting(session)
    action = a_legal_move(session, player)
    with pytest.raises(TableMovedOn):
        await session.change(lambda d: d.human_move(player, action, expected_move=3, locale=None))
    await session.change(lambda d: d.human_move(player, action, expected_move=0, locale=None))
    state = session.running_engine().to_dict()
    following = acting(session)
    late = a_legal_move(session, following)
    with pytest.raises(TableMovedOn):
        await session.change(lambda d: d.human_move(following, late, expected_move=0, locale=None))
    assert session.running_engine().to_dict() == state
    assert len(await h.storage.moves(session.id)) == 1


@SPECS
async def test_not_your_turn_names_the_player_to_wait_for(h: Harness, spec: GameSpec) -> None:
    """A seated player acting out of turn gets error.not_your_turn naming who is to act."""
    session = await started(h, spec)
    player = acting(session)
    action = a_legal_move(session, player)
    other = next(p for p in (str(HOST), str(BEN), str(CID)) if p != player)
    before = (session.running_engine().to_dict(), session.meta.to_dict(), session.revision)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.human_move(other, action, expected_move=0, locale="it"))
    assert type(raised.value) is UserError
    assert raised.value.key == "error.not_your_turn"
    assert raised.value.params["players"] == f"<@{player}>"
    assert (session.running_engine().to_dict(), session.meta.to_dict(), session.revision) == before


@SPECS
async def test_someone_without_a_seat_is_not_seated(h: Harness, spec: GameSpec) -> None:
    """A move or a private view for someone without a seat is table.not_seated."""
    session = await started(h, spec)
    action = a_legal_move(session, acting(session))
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.human_move("999", action, expected_move=0, locale=None))
    assert raised.value.key == "table.not_seated"
    with pytest.raises(UserError) as raised:
        session.player_view("999")
    assert raised.value.key == "table.not_seated"


async def test_no_chips_must_take(h: Harness) -> None:
    """No thanks! without chips is error.must_take with the card; the pot is untouched."""
    session = await started(h, NOTHANKS)
    engine: Any = session.running_engine()
    while engine.chips[engine.active] > 0:
        player = acting(session)
        await session.change(
            partial(
                Draft.human_move,
                player=player,
                action=PASS,
                expected_move=engine.move_number,
                locale=None,
            )
        )
        engine = session.running_engine()
    player = acting(session)
    with pytest.raises(UserError) as raised:
        await session.change(lambda d: d.human_move(player, PASS, expected_move=None, locale=None))
    assert raised.value.key == "error.must_take"
    assert raised.value.params["card"] == engine.current_card
    assert session.running_engine().chips_on_card == 33  # type: ignore[attr-defined]


@SPECS
async def test_game_end_frees_the_table(h: Harness, spec: GameSpec) -> None:
    """A game played to its end (with a computer) is finished, forgotten, its memory freed."""
    session = await open_lobby(h, spec)
    await seat(session, BEN)
    await session.change(lambda d: d.add_computer(HOST, "normal", "🤖"))
    await session.change(lambda d: d.start(HOST, 11))
    moves = 0
    while session.status == "running":
        await play_one(h, session)
        moves += 1
        assert moves < 2000
        if session.status == "running" and moves == 10:
            assert "-1" in session.memory
    assert session.status == "finished"
    assert session.engine is not None and session.engine.is_over
    assert h.tables.get(session.id) is None and h.tables.in_channel(CHANNEL) is None
    assert session.memory == {}
    assert session.meta.turn is None
    record = await stored(h, session)
    assert record.status == "finished" and record.move_number == moves
    assert len(await h.storage.moves(session.id)) == moves
    assert h.publisher.refreshed[-1] == (session.id, session.revision, "finished")


@SPECS
async def test_expired_lobby_is_closed_and_freed(h: Harness, spec: GameSpec) -> None:
    """A lobby nobody started closes itself at opened_at + LOBBY_TTL and is freed."""
    session = await open_lobby(h, spec)
    session.memory["-1"] = object()
    h.clock.advance(LOBBY_TTL + 1)
    h.gate.set()
    for _ in range(200):
        if h.tables.get(session.id) is None:
            break
        await asyncio.sleep(0.01)
    assert h.tables.get(session.id) is None and session.memory == {}
    assert session.status == "cancelled" and session.meta.closed_reason == "expired"
    record = await stored(h, session)
    assert record.status == "cancelled" and record.meta["closed_reason"] == "expired"
    assert h.publisher.refreshed[-1] == (session.id, session.revision, "cancelled")


# -- failed saves ---------------------------------------------------------------------------


def step_for(name: str) -> Callable[[TableSession], Callable[[Draft], Any]]:
    """A change of each kind, built against the session it will be applied to."""

    def human(session: TableSession) -> Callable[[Draft], Any]:
        player = acting(session)
        action = a_legal_move(session, player)
        return lambda d: d.human_move(player, action, expected_move=0, locale="fr")

    def computer(session: TableSession) -> Callable[[Draft], Any]:
        player = acting(session)
        action = a_legal_move(session, player)
        return lambda d: d.auto_move(player, action, timed_out=True)

    steps: dict[str, Callable[[TableSession], Callable[[Draft], Any]]] = {
        "join": lambda s: lambda d: d.join(DORA, "dora", "de"),
        "leave": lambda s: lambda d: d.leave(HOST),
        "add_computer": lambda s: lambda d: d.add_computer(HOST, "hard", "🤖"),
        "start": lambda s: lambda d: d.start(HOST, 5),
        "cancel": lambda s: lambda d: d.cancel(HOST, False),
        "expire": lambda s: Draft.expire,
        "human_move": human,
        "timeout_move": computer,
        "stop": lambda s: lambda d: d.stop(HOST, False),
    }
    return steps[name]


async def snapshot(h: Harness, session: TableSession) -> tuple[Any, ...]:
    """Everything a failed change must leave alone, in memory and in the database."""
    engine = None if session.engine is None else session.engine.to_dict()
    return (
        copy.deepcopy(session.record),
        session.meta.to_dict(),
        engine,
        await stored(h, session),
        await h.storage.moves(session.id),
        h.tables.get(session.id) is session,
        h.tables.in_channel(session.channel_id) is session,
        dict(session.memory),
    )


LOBBY_STEPS = ["join", "leave", "add_computer", "start", "cancel", "expire"]
GAME_STEPS = ["human_move", "timeout_move", "stop"]


@SPECS
@pytest.mark.parametrize("name", LOBBY_STEPS + GAME_STEPS)
async def test_failed_save_changes_nothing(
    h: Harness,
    spec: GameSpec,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A save that fails raises SaveFailed; record, metadata, game and row stay as they were."""
    if name in GAME_STEPS:
        session = await started(h, spec)
    else:
        session = await open_lobby(h, spec)
        await seat(session, BEN, CID)
    session.memory["-1"] = "remembered"
    before = await snapshot(h, session)
    refreshes = len(h.publisher.refreshed)
    step = step_for(name)(session)
    original = h.storage.save_table

    async def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk I/O error")

    monkeypatch.setattr(h.storage, "save_table", broken)
    with (
        caplog.at_level(logging.WARNING, logger="bot.table.session"),
        pytest.raises(SaveFailed) as raised,
    ):
        await session.change(step)
    assert isinstance(raised.value.__cause__, OSError)
    assert raised.value.key == "table.save_failed"
    assert await snapshot(h, session) == before
    assert len(h.publisher.refreshed) == refreshes
    logged = [r for r in caplog.records if "ended without an answer" in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None
    # Its outcome unknown, the row was read back: it did not go through.
    assert any("did not go through" in r.getMessage() for r in caplog.records)
    # Once storage works again, the very same change goes through.
    monkeypatch.setattr(h.storage, "save_table", original)
    await session.change(step)
    assert session.revision == before[0].revision + 1
    assert await stored(h, session) == session.record


@SPECS
@pytest.mark.parametrize("running", [False, True], ids=["lobby", "game"])
async def test_stale_revision_is_refused_and_reloaded(
    h: Harness, spec: GameSpec, running: bool
) -> None:
    """Another connection saved first: SaveFailed (from StaleWrite), the step's change is
    not made, and the session takes the stored row over and publishes it; the next change
    builds on it and goes through (no restart needed)."""
    session = await started(h, spec) if running else await open_lobby(h, spec)
    other = await open_storage(h.path)
    try:
        theirs = await other.get_table(session.id)
        assert theirs is not None
        theirs.meta["names"][str(DORA)] = "intruder"
        await other.save_table(theirs)
    finally:
        await other.close()
    engine = None if session.engine is None else session.engine.to_dict()
    refreshes = len(h.publisher.refreshed)
    step = step_for("human_move" if running else "join")(session)
    with pytest.raises(SaveFailed) as raised:
        await session.change(step)
    assert isinstance(raised.value.__cause__, StaleWrite)
    row = await stored(h, session)
    assert session.record == row and session.meta.names[str(DORA)] == "intruder"
    assert (None if session.engine is None else session.engine.to_dict()) == engine
    assert await h.storage.moves(session.id) == []
    assert len(h.publisher.refreshed) == refreshes + 1  # the reloaded table is shown
    await session.change(step)
    assert session.revision == row.revision + 1
    assert await stored(h, session) == session.record


@SPECS
async def test_failed_human_move_keeps_the_turn_deadline(
    h: Harness, spec: GameSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's move that cannot be saved does not restart their turn clock."""
    session = await started(h, spec)
    turn = session.meta.turn
    assert turn == Turn(0, T0 + DEFAULT_TURN_SECONDS)
    h.clock.advance(20)
    player = acting(session)
    action = a_legal_move(session, player)
    original = h.storage.save_table

    async def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk I/O error")

    monkeypatch.setattr(h.storage, "save_table", broken)
    with pytest.raises(SaveFailed):
        await session.change(lambda d: d.human_move(player, action, expected_move=0, locale=None))
    assert session.meta.turn == Turn(0, T0 + DEFAULT_TURN_SECONDS)
    assert (await stored(h, session)).meta["turn"] == turn.to_dict()
    event = next_event(session, h.clock())
    assert event is not None and (event.kind, event.due) == ("ping", T0 + 30)
    monkeypatch.setattr(h.storage, "save_table", original)
    await session.change(lambda d: d.human_move(player, action, expected_move=0, locale=None))
    assert session.meta.turn == Turn(1, T0 + 20 + DEFAULT_TURN_SECONDS)


# -- migration and restore ------------------------------------------------------------------


def build_v2_database(path: Path, rows: list[dict[str, Any]]) -> None:
    """A schema v2 database, as the bot before typed metadata wrote it."""
    connection = sqlite3.connect(path)
    try:
        for step in MIGRATIONS[:2]:
            assert isinstance(step, str)
            connection.executescript(step)
        connection.execute("PRAGMA user_version = 2")
        for row in rows:
            connection.execute(
                "INSERT INTO tables (game, guild_id, channel_id, message_id, host_id, status,"
                " options, seats, state, move_number, extra, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row["game"],
                    GUILD,
                    row["channel_id"],
                    row["message_id"],
                    HOST,
                    row["status"],
                    json.dumps(row.get("options", {})),
                    json.dumps(row["seats"]),
                    None if row.get("state") is None else json.dumps(row["state"]),
                    row.get("move_number", 0),
                    json.dumps(row["extra"]),
                    T0,
                    T0,
                ),
            )
        connection.commit()
    finally:
        connection.close()


async def test_v2_database_is_migrated_to_typed_metadata(tmp_path: Path) -> None:
    """v2 rows get a revision of 0 and their `extra` bag turned into the typed metadata."""
    path = tmp_path / "old.db"
    state = NOTHANKS.new_engine(["101", "102", "-1"], 3, {}).to_dict()
    running_extra = {
        "names": {"101": "ana", "102": "ben", "-1": "🤖"},
        "user_locales": {"101": "de"},
        "locale": "en-GB",
        "opened_at": T0,
        "bots": {"-1": "hard"},
        "away": ["102"],
        "timeouts": {"102": 3},
        "turn": {"move": 0, "deadline": T0 + 60, "pinged": True},
        "notice": ["table.timed_out", {"player": 102}],
        "dm_closed": ["102"],
        "hint_pending": ["102"],
        "rematch_of": 7,
        "legacy_flag": True,
    }
    expired_extra = {"names": {"101": "ana"}, "opened_at": T0, "expired": True}
    build_v2_database(
        path,
        [
            {
                "game": "nothanks",
                "channel_id": 1,
                "message_id": 11,
                "status": "running",
                "seats": [101, 102, -1],
                "state": state,
                "extra": running_extra,
            },
            {
                "game": "rage",
                "channel_id": 2,
                "message_id": 12,
                "status": "cancelled",
                "seats": [101],
                "extra": expired_extra,
            },
        ],
    )
    storage = await open_storage(path)
    try:
        assert await storage.schema_version() == len(MIGRATIONS)
        running = await storage.get_table(1)
        expired = await storage.get_table(2)
        assert running is not None and expired is not None
        assert running.revision == 0 and expired.revision == 0
        assert running.state == state
        assert running.meta == {
            "names": {"101": "ana", "102": "ben", "-1": "🤖"},
            "user_locales": {"101": "de"},
            "locale": "en-GB",
            "opened_at": T0,
            "computers": {"-1": "hard"},
            "away": ["102"],
            "timeouts": {"102": 3},
            "turn": {"move": 0, "deadline": T0 + 60, "pinged": True},
            "notice": {"key": "table.timed_out", "player": "102"},
            "dm_closed": ["102"],
            "hint_pending": ["102"],
            "rematch_of": 7,
        }
        meta = TableMeta.from_dict(running.meta)
        assert meta.computers == {"-1": "hard"}
        assert meta.notice == Notice("table.timed_out", "102")
        assert meta.turn == Turn(0, T0 + 60, True)
        assert meta.timeouts == {"102": 3} and meta.away == ["102"]
        assert meta.rematch_of == 7 and meta.locale == "en-GB"
        gone = TableMeta.from_dict(expired.meta)
        assert gone.closed_reason == "expired" and gone.names == {"101": "ana"}
        # The migrated row restores into a working session and takes a save.
        tables = make_tables(storage, Clock(), asyncio.Event())
        try:
            restored = await tables.restore()
            assert [session.id for session in restored] == [1]
            session = restored[0]
            assert session.plays_itself("-1") and session.plays_itself("102")
            await session.change(lambda d: d.back("102"))
            assert (await storage.get_table(1)).revision == 1  # type: ignore[union-attr]
        finally:
            tables.close()
    finally:
        await storage.close()


async def corrupt(h: Harness, table_id: int, column: str, text: str) -> None:
    """Overwrite one column of a row behind the bot's back."""
    await h.backend.execute(f"UPDATE tables SET {column} = ? WHERE id = ?", text, table_id)


@SPECS
@pytest.mark.parametrize(
    ("column", "text"),
    [
        ("state", '{"not": "a game"}'),
        ("meta", '{"turn": {"move": "soon"}}'),
    ],
    ids=["bad-state", "bad-meta"],
)
async def test_restore_skips_an_unreadable_row(
    h: Harness, spec: GameSpec, column: str, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A row that cannot be read is quarantined and logged once; the others are restored."""
    broken = await started(h, spec)
    good = await open_lobby(h, NOTHANKS, channel=CHANNEL + 1)
    await seat(good, BEN, CID)
    await good.change(lambda d: d.start(HOST, 3))
    h.tables.close()
    await corrupt(h, broken.id, column, text)
    tables = make_tables(h.storage, h.clock, asyncio.Event())
    publisher = RecordingPublisher()
    tables.publisher = publisher
    try:
        with caplog.at_level(logging.ERROR, logger="bot.table.tables"):
            restored = await tables.restore()
        assert [session.id for session in restored] == [good.id]
        assert tables.get(broken.id) is None and tables.get(good.id) is not None
        assert publisher.refreshed == [(good.id, good.revision, "running")]
        logged = [r for r in caplog.records if "quarantined" in r.getMessage()]
        assert len(logged) == 1 and str(broken.id) in logged[0].getMessage()
        assert [row.id for row in publisher.broken] == [broken.id]
        row = await h.storage.get_table(broken.id) if column == "meta" else None
        assert row is None or row.status == "broken"
        assert [t.id for t in await h.storage.open_tables()] == [good.id]
        restored_good = tables.get(good.id)
        assert restored_good is not None
        assert restored_good.running_engine().to_dict() == good.running_engine().to_dict()
    finally:
        tables.close()


async def test_restore_skips_a_row_with_unparsable_json(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """A row whose state is not even JSON (a torn write) is quarantined; the others restore."""
    broken = await started(h, NOTHANKS)
    good = await open_lobby(h, RAGE, channel=CHANNEL + 1)
    await seat(good, BEN, CID)
    await good.change(lambda d: d.start(HOST, 3))  # running: due within the idle time
    h.tables.close()
    await corrupt(h, broken.id, "state", '{"players": ["1", "2"')
    tables = make_tables(h.storage, h.clock, asyncio.Event())
    publisher = RecordingPublisher()
    tables.publisher = publisher
    try:
        restored = await tables.restore()
        assert [session.id for session in restored] == [good.id]
        assert [row.id for row in publisher.broken] == [broken.id]
        assert "unreadable row" in publisher.broken[0].reason
        # Its channel is free: the database takes a new open table there.
        assert tables.in_channel(CHANNEL) is None
        again = await h.storage.create_table(
            TableRecord(game="nothanks", channel_id=CHANNEL, host_id=HOST, seats=[HOST])
        )
        assert again.id != broken.id
    finally:
        tables.close()


# -- the turn a ping is for ---------------------------------------------------------------


def human(draft: Draft, player: str, action: Any) -> Any:
    """A person's move, whatever the move number."""
    return draft.human_move(player, action, expected_move=None, locale=None)


async def test_a_bid_among_simultaneous_bids_continues_the_turn(h: Harness) -> None:
    """With hidden bids everyone bids at once: a bid restarts the clock but not the turn
    (since, called carry over); the first card awaited is a new turn."""
    session = await started(h, RAGE, hidden_bids=True)
    turn = session.meta.turn
    assert turn is not None and turn.since == turn.move == 0

    def call(draft: Draft) -> None:
        assert draft.meta.turn is not None
        draft.meta.turn.called = True

    await session.change(call)
    bidders = list(session.acting_players())
    assert len(bidders) == 3
    for count, player in enumerate(bidders[:-1], start=1):
        h.clock.advance(5)
        action = a_legal_move(session, player)
        await session.change(partial(human, player=player, action=action))
        turn = session.meta.turn
        assert turn is not None
        assert (turn.move, turn.since, turn.called) == (count, 0, True)
        assert turn.deadline == h.clock() + DEFAULT_TURN_SECONDS
    last = bidders[-1]
    action = a_legal_move(session, last)
    await session.change(lambda d: d.human_move(last, action, expected_move=None, locale=None))
    turn = session.meta.turn
    assert turn is not None and turn.since == turn.move == 3 and not turn.called


async def test_each_own_action_is_remembered_with_its_time(h: Harness) -> None:
    """Joining, starting and moving note when each person last acted; a timed-out move
    made for them does not."""
    session = await open_lobby(h, NOTHANKS)
    assert session.meta.acted == {str(HOST): T0}
    h.clock.advance(10)
    await seat(session, BEN, CID)
    h.clock.advance(10)
    await session.change(lambda d: d.start(HOST, 7))
    assert session.meta.acted == {str(HOST): T0 + 20, str(BEN): T0 + 10, str(CID): T0 + 10}
    player = acting(session)
    h.clock.advance(5)
    await session.change(lambda d: d.auto_move(player, PASS, timed_out=True))
    assert session.meta.acted[player] <= T0 + 20
    mover = acting(session)
    await session.change(lambda d: d.human_move(mover, PASS, expected_move=None, locale=None))
    assert session.meta.acted[mover] == T0 + 25
