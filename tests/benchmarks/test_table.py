"""The SimCord table benchmarks (benchmarks/table/) run end to end on one shared harness."""

from __future__ import annotations

import sys

import pytest

from bot.table.timers import Timers
from tests.benchmark_scripts import load

harness = load("table/harness")
nothanks_table = load("table/nothanks_table")
rage_table = load("table/rage_table")


def test_both_benchmarks_use_the_one_harness() -> None:
    """The helpers they share are the harness's own, not copies."""
    for name in ("bench_guild", "session_of", "is_running", "summary", "round_robin"):
        assert getattr(nothanks_table, name) is getattr(harness, name)
        assert getattr(rage_table, name) is getattr(harness, name)


def test_percentile_is_the_nearest_rank() -> None:
    """p50 of 1..4 is 2, p99 is the largest, and one value is every percentile."""
    assert harness.percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.0
    assert harness.percentile([4.0, 1.0, 3.0, 2.0], 0.99) == 4.0
    assert harness.percentile([7.0], 0.01) == 7.0
    summary = harness.summary([0.003, 0.001, 0.002])
    assert summary == "p50 2.00 ms  p99 3.00 ms  max 3.00 ms  mean 2.00 ms"


@pytest.mark.parametrize(
    ("module", "options", "figures"),
    [
        (nothanks_table, ["--games", "2", "--clicks", "6", "--restore", "3"], "target < 2 s"),
        (rage_table, ["--tables", "1", "--actions", "4", "--no-timers"], "net of those scans"),
    ],
)
def test_a_short_run_prints_its_figures(
    module, options, figures, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A few clicks on a couple of tables: the run ends and prints its figures."""
    monkeypatch.setattr(Timers, "schedule", Timers.schedule)  # without_timers() is undone
    monkeypatch.setattr(sys, "argv", [module.__file__, *options])
    module.main()
    out = capsys.readouterr().out
    assert "bot-side per click" in out and figures in out and "total run time" in out
