"""Against Discord's rate limits: cardtable and a do-nothing bot at 1x, 2x, 4x the budget.

The fake Discord enforces the global limit (50 requests a second with the bot's token;
interaction answers exempt), per-route buckets with shared hashes (5 sends or 5 edits per
5 s per channel), and answers 429s with ``retry_after``, scope and X-RateLimit-* headers;
it counts invalid requests (401/403/429 but shared) over 10 minutes. The driver offers
moves at a fixed rate spread over the tables (one click outstanding per table), and
reports per bot and rate:

- moves a second offered and answered, counted requests a second (Discord allows 50);
- 429s by scope, invalid requests;
- DM staleness p50/p95: from a player's chip change (its click answered) to the next DM
  request for that player (which shows the state as the bot rendered it);
- a game's final DM: from the game's end (its last answer) to each player's DM of that
  game (found by the table link in it) showing the final chips, p95 and max (0 when it
  already did), and how many never did (waited for up to 30 s after the window);
- click answer p50/p99, CPU per click, memory per table; the CPU ratio against the
  do-nothing bot (lean+DM: the plain callback and a DM edit per click, awaited after the
  answer, on the same discord.py transport).

``--proxy`` runs cardtable as two processes (shards 0 and 1 of 2, on a throw-away
PostgreSQL server) whose REST calls all go through one real rate-limiting proxy process
(nirn.py, ``proxy_process.py``) in front of the fake Discord, each pacing itself to
0.45 of the token's rate (``CARDTABLE_REST_SHARE``, ``--share``: half, less a tenth for
the proxy's jitter), at 2x the budget unless ``--multiples`` says otherwise.

Run: ``uv run python benchmarks/load/limits.py [--seconds 60] [--tables 30] [--proxy]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import Database, Result, run_once

from tests.backends import TemporaryServer, postgres_binaries

BUDGET = 45.0  # the lane's default: moves a second whose DMs fit the global limit


def quantile(values: list[float], q: float) -> float:
    """The q-quantile of values (0 for none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def final_dm(result: Result) -> str:
    """Game end to the DM showing the final chips: p95 / max s, and how many never came."""
    lags = result.final_lag
    if not lags and not result.final_missing:
        return "—"  # the do-nothing bot's DMs show no game
    worst = max(lags) if lags else 0.0
    return f"{quantile(lags, 0.95):.2f} / {worst:.2f} ({len(lags)}, missing {result.final_missing})"


def label(result: Result) -> str:
    """The bot, and how many processes behind a proxy."""
    if result.processes > 1:
        return f"{result.mode}, {result.processes} processes, 1 proxy"
    return result.mode


def row(result: Result, offered: float) -> str:
    """One line of the report."""
    counted = result.counted / result.seconds
    rejected = ", ".join(f"{k} {v}" for k, v in sorted(result.rejected.items())) or "0"
    return (
        f"| {label(result)} | {offered:.0f} | {result.clicks / result.seconds:.1f} "
        f"| {counted:.1f} | {rejected} | {result.invalid} "
        f"| {quantile(result.staleness, 0.5):.2f} / {quantile(result.staleness, 0.95):.2f} "
        f"| {result.unshown} "
        f"| {final_dm(result)} "
        f"| {result.percentile(0.5):.0f} / {result.percentile(0.99):.0f} "
        f"| {result.cpu_ms_per_interaction:.2f} | {result.kb_per_table:.0f} |"
    )


async def main(args: argparse.Namespace) -> int:
    """Start PostgreSQL for --proxy, then measure."""
    if not args.proxy:
        return await measure(args, Database())
    binaries = postgres_binaries()
    if binaries is None:
        print("limits.py: error: --proxy needs initdb and pg_ctl (postgresql)", file=sys.stderr)
        return 2
    server = TemporaryServer(binaries, durable=True)
    try:
        url = await asyncio.to_thread(server.start)
        postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
        return await measure(args, Database(url, postmaster))
    finally:
        await asyncio.to_thread(server.stop)


async def measure(args: argparse.Namespace, storage: Database) -> int:
    """Each rate, cardtable and the do-nothing bot in turn; print the table."""
    print(
        "| bot | moves/s offered | moves/s answered | counted req/s (limit 50) | 429s by "
        "scope | invalid (10 min) | DM staleness p50 / p95 s | players unshown at end "
        "| final DM after game end p95 / max s (DMs, missing) "
        "| answer p50 / p99 ms | CPU ms/click | KB/table |"
    )
    print("|---|---:|---:|---:|---|---:|---|---:|---|---|---:|---:|")
    for multiple in args.multiples:
        offered = BUDGET * multiple
        results: dict[str, Result] = {}
        for mode in ("cardtable",) if args.proxy else args.bots:
            result = await run_once(
                mode,
                tables=args.tables,
                seconds=args.seconds,
                warmup=args.warmup,
                seed=15,
                profile=None,
                pictures=False,
                moves_per_second=offered,
                limits=True,
                storage=storage,
                share=args.share,
                processes=2 if args.proxy else 1,
                proxy=args.proxy,
            )
            results[mode] = result
            print(row(result, offered), flush=True)
        if "cardtable" in results and "lean+DM" in results:
            ratio = (
                results["cardtable"].cpu_ms_per_interaction
                / results["lean+DM"].cpu_ms_per_interaction
            )
            print(f"|  | {offered:.0f} | CPU per click, cardtable / lean+DM: {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--multiples", type=float, nargs="+", default=None)
    parser.add_argument("--proxy", action="store_true", help="two processes behind nirn.py")
    parser.add_argument(
        "--share",
        type=float,
        default=None,
        help="with --proxy, each process's CARDTABLE_REST_SHARE (default: 0.9 / processes)",
    )
    parser.add_argument(
        "--bots", nargs="+", choices=["cardtable", "lean+DM"], default=["cardtable", "lean+DM"]
    )
    arguments = parser.parse_args()
    if arguments.multiples is None:
        arguments.multiples = [2] if arguments.proxy else [1, 2, 4]
    sys.exit(asyncio.run(main(arguments)))
