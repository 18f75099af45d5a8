"""Two bot processes behind one real rate-limiting proxy process, at twice the budget.

The fake Discord of the load benchmark enforces Discord's limits (the global 50 a second
with the bot's token, route buckets, 429s with their scope); two real bot processes
(shards 0 and 1 of 2, one PostgreSQL database) send every REST call through one nirn.py
process (benchmarks/load/proxy_process.py), each pacing itself to 0.45 of the token's rate
(half, less a tenth for the proxy's jitter).
Moves are offered at twice what the global limit lets the DMs keep up with.
"""

from __future__ import annotations

from types import ModuleType

from tests.benchmark_scripts import load

BUDGET = 45.0  # moves a second whose DMs fit the lane's rate (benchmarks/load/limits.py)


def load_run() -> ModuleType:
    """benchmarks/load/run.py as a module, with its folder's scripts importable."""
    return load("load/run", name="load_run")


async def test_two_processes_behind_one_proxy_draw_no_429s(postgres_server: str) -> None:
    """At 2x the budget, with every REST call through the proxy: Discord refuses nothing
    (no 429 of any scope but shared), the counted rate stays under 50 a second, clicks are
    answered, and the DMs keep coming (latest state wins)."""
    run = load_run()
    result = await run.run_once(
        "cardtable",
        tables=10,
        seconds=8.0,
        warmup=1.0,
        seed=15,
        profile=None,
        pictures=False,
        moves_per_second=2 * BUDGET,
        limits=True,
        storage=run.Database(postgres_server),
        processes=2,
        proxy=True,
    )
    refused = {scope: count for scope, count in result.rejected.items() if scope != "shared"}
    assert refused == {}
    assert result.invalid == 0
    assert result.counted / result.seconds < 50
    # Every REST call of the bots reached Discord through the proxy (which forwards the
    # Host it was sent to); only the proxy's own look-ups of the token went direct.
    assert result.proxy_host is not None
    assert result.hosts[result.proxy_host] > result.clicks
    assert set(result.direct) <= {"GET /api/v10/users/@me", "GET /api/v10/gateway/bot"}
    assert result.clicks > 100 and result.errors == 0
    assert result.staleness  # DMs were edited meanwhile
    assert result.percentile(0.99) < 3000  # ms: every click answered within 3 s
