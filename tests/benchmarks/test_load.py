"""The load benchmark end to end: the real bot process on discord.py's real HTTP stack."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.benchmark_scripts import load


def load_run() -> ModuleType:
    """benchmarks/load/run.py as a module, with its folder's scripts importable."""
    return load("load/run", name="load_run")


@pytest.mark.parametrize("mode", ["cardtable", "wire+DM+save"])
async def test_tables_play_on_the_wire(mode: str) -> None:
    """Against the fake Discord over loopback, with discord.py's own webhook adapter and
    HTTP client (so answers and living DM edits take bot.client.transport): every click answered,
    the clickers' DMs edited in place, no errors, nothing deferred."""
    run = load_run()
    result = await run.run_once(
        mode, tables=2, seconds=1.5, warmup=0.5, seed=15, profile=None, pictures=False
    )
    assert result.clicks > 20
    assert result.errors == 0 and result.deferred == 0
    assert result.requests["interaction callback"] >= result.clicks
    assert result.requests["PATCH DM message"] >= result.clicks // 2
    assert "unknown" not in " ".join(result.requests)
