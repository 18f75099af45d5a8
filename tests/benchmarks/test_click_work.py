"""The click-work benchmark (benchmarks/table/click_work.py) runs and times every part."""

from __future__ import annotations

import sys

import pytest

from tests.benchmark_scripts import load

click_work = load("table/click_work")


def test_every_position_is_a_running_table_with_a_move_to_make() -> None:
    """The positions cover whole games; each part works on each of them."""
    tables = click_work.sessions(2)
    assert len({session.running_engine().move_number for session in tables}) > 20
    for session in tables:
        before = session.running_engine().move_number
        draft = click_work.move(session)
        assert draft.record.move_number == before + 1 and draft.move is not None
        assert session.running_engine().move_number == before  # the live game is untouched
        payload = click_work.table_payload(session)
        assert payload["type"] == 7 and payload["data"]["embeds"]
        assert click_work.living_text(session)


def test_it_prints_each_part_and_their_sum(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One pass over one game prints a figure per part and the sum."""
    monkeypatch.setattr(sys, "argv", ["click_work.py", "--games", "1", "--repeat", "1"])
    click_work.main()
    out = capsys.readouterr().out
    for part in (*click_work.PARTS, "in all"):
        assert part in out
