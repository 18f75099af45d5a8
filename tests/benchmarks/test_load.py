"""The load benchmark end to end: the real bot process on discord.py's real HTTP stack."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.benchmark_scripts import load


def load_run() -> ModuleType:
    """benchmarks/load/run.py as a module, with its folder's scripts importable."""
    return load("load/run", name="load_run")


@pytest.mark.parametrize("mode", ["cardtable", "metrics", "lean+DM+save"])
async def test_tables_play_on_the_wire(mode: str) -> None:
    """Against the fake Discord over loopback, with discord.py's own webhook adapter and
    HTTP client: every click answered, the clickers' DMs edited in place (cardtable's
    never more than one edit per chip change), no errors, nothing deferred; "metrics" is
    cardtable with its metrics server on, scraped during the run (each scrape checked)."""
    run = load_run()
    result = await run.run_once(
        mode, tables=2, seconds=1.5, warmup=0.5, seed=15, profile=None, pictures=False
    )
    assert result.clicks > 20
    assert result.errors == 0 and result.deferred == 0
    assert result.requests["interaction callback"] >= result.clicks
    if mode in ("cardtable", "metrics"):
        # The living DMs go through the lane, latest state winning: one start letter per
        # player and game, and at most one edit per chip change and per game's end (a
        # queued edit that a newer state replaced is not sent). How far edits coalesce
        # depends on the speed of the clicks, so it is not asserted here; the rate is
        # measured by run.py's rate-limited fake Discord.
        letters = run.PLAYERS * result.games
        assert 0 < result.requests["POST DM"] <= letters
        assert 0 < result.requests["PATCH DM message"] <= result.moves + letters
    else:
        assert result.requests["PATCH DM message"] >= result.clicks // 2
    assert "unknown" not in " ".join(result.requests)
