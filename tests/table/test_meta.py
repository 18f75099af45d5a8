"""TableMeta copies: what a draft works on must equal the live metadata and share nothing."""

from __future__ import annotations

from bot.table.meta import Notice, TableMeta, Turn


def full_meta() -> TableMeta:
    """Metadata with every field set to something other than its default."""
    return TableMeta(
        names={"1": "ana", "-1": "Computer 1"},
        user_locales={"1": "de"},
        locale="it",
        opened_at=12.5,
        computers={"-1": "hard"},
        away=["2"],
        timeouts={"2": 2},
        turn=Turn(7, 99.0, pinged=True, since=5, called=True),
        notice=Notice("table.timed_out", "2"),
        dm_closed=["3"],
        hint_pending=["3"],
        closed_reason="expired",
        closed_by=1,
        rematch_of=4,
        invited=[5],
        started_at=20.0,
        rating_changes={"1": 1.5},
        dm_messages={"1": [10, 11]},
        ping_message=[12, 7],
        acted={"1": 30.0},
        thread=40,
        pace=86400,
        turn_notices={"1": [10, 14, 7]},
        ended_at=50.0,
        held={"2": 60.0},
        notice_sent={"1": 70.0},
    )


def test_copy_equals_the_stored_round_trip() -> None:
    """A copy is the same metadata the stored form would give back."""
    meta = full_meta()
    assert meta.copy() == meta
    assert meta.copy() == TableMeta.from_dict(meta.to_dict())
    assert TableMeta().copy() == TableMeta()


def test_copy_shares_no_mutable_part() -> None:
    """Changing every container of a copy leaves the original as it was."""
    meta = full_meta()
    before = meta.to_dict()
    draft = meta.copy()
    for name in (
        "names",
        "user_locales",
        "computers",
        "timeouts",
        "rating_changes",
        "acted",
        "held",
        "notice_sent",
    ):
        getattr(draft, name)["x"] = getattr(draft, name).get("1", 0)
    for name in ("away", "dm_closed", "hint_pending", "invited", "ping_message"):
        getattr(draft, name).append(0)
    draft.dm_messages["1"].append(13)
    draft.turn_notices["1"].append(13)
    assert draft.turn is not None
    draft.turn.pinged = False
    draft.turn.move = 8
    assert meta.to_dict() == before


def test_stored_form_leaves_out_only_empty_fields() -> None:
    """Empty and unset fields are not stored; zeroes and set fields are."""
    assert TableMeta().to_dict() == {"opened_at": 0.0}
    kept = TableMeta(closed_by=0, rematch_of=0, started_at=0.0).to_dict()
    assert kept == {"opened_at": 0.0, "closed_by": 0, "rematch_of": 0, "started_at": 0.0}
    assert set(full_meta().to_dict()) == set(TableMeta.__dataclass_fields__)


def test_a_turn_stores_since_and_called_only_when_they_say_something() -> None:
    """A turn that began at its own move leaves out ``since``; an older row without them
    reads as a turn that began at its move and was not called."""
    assert Turn(3, 9.0).to_dict() == {"move": 3, "deadline": 9.0, "pinged": False}
    assert Turn(3, 9.0).since == 3
    carried = Turn(5, 9.0, since=3, called=True)
    assert Turn.from_dict(carried.to_dict()) == carried
    old = Turn.from_dict({"move": 4, "deadline": 1.0, "pinged": True})
    assert (old.since, old.called) == (4, False)


def test_an_old_row_without_a_pace_reads_as_live() -> None:
    """Rows stored before play by post have no pace: they are live tables."""
    old = TableMeta.from_dict({"opened_at": 1.0, "names": {"1": "ana"}})
    assert old.pace == 0 and old.turn_notices == {}
    assert "pace" not in old.to_dict()
    assert TableMeta.from_dict(TableMeta(pace=3600).to_dict()).pace == 3600
