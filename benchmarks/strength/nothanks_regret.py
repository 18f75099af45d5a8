"""How far a small No Thanks! search's choices are from a large one's: a quick strength proxy.

Takes every sixth decision of seeded 3-player games (the decisions of ``nothanks_cpu.py``)
and searches each once with a large work budget: the reference (400,000 by default; it
takes about two minutes, so it is cached in a JSON file in the temporary folder). Then it
searches each several times, with other seeds, at the budget under test. A choice that
disagrees with the reference costs the reference's difference between taking and passing
(final margin to the best other player, in points); the mean over all searches is the
regret. It also reports how often the choice disagrees, the variance of the
take-minus-pass estimate between seeds, and the CPU time a search took.

The reference is the same search with more work, so the proxy measures how quickly a
configuration reaches what the search would choose with plenty of time, not how well it
plays against others: the strength runs (``nothanks_league.py h2h``) decide.

    uv run python benchmarks/strength/nothanks_regret.py --work 9000 --prior-visits 0 10
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import tempfile
import time
from pathlib import Path

from nothanks_cpu import decisions

from bot.ai.nothanks_search import Decision, search


def reference(inputs: list[Decision], work: int, path: Path) -> list[float]:
    """Take-minus-pass margins of the large search (NaN where passing is not allowed)."""
    if path.exists():
        saved = json.loads(path.read_text())
        if saved["work"] == work and len(saved["diffs"]) == len(inputs):
            return [math.nan if d is None else d for d in saved["diffs"]]
    diffs = []
    for index, decision in enumerate(inputs):
        result = search(
            decision, random.Random(10**6 + index), iterations=10**7, deadline=math.inf, work=work
        )
        diffs.append(result.take_value - result.pass_value)
    path.write_text(
        json.dumps({"work": work, "diffs": [None if math.isnan(d) else d for d in diffs]})
    )
    return diffs


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=int, default=9_000)
    parser.add_argument("--prior-visits", type=int, nargs="+", default=[10])
    parser.add_argument("--reference-work", type=int, default=400_000)
    parser.add_argument(
        "--reference-file",
        type=Path,
        default=Path(tempfile.gettempdir()) / "nothanks_reference.json",
    )
    parser.add_argument("--seeds", type=int, default=8)
    args = parser.parse_args()
    inputs = decisions(4, 5)[::6]
    diffs = reference(inputs, args.reference_work, args.reference_file)
    for prior_visits in args.prior_visits:
        regret = flips = searches = 0.0
        cpu = 0.0
        variances = []
        for index, (decision, diff) in enumerate(zip(inputs, diffs, strict=True)):
            if math.isnan(diff):
                continue
            estimates = []
            for seed in range(args.seeds):
                start = time.thread_time()
                result = search(
                    decision,
                    random.Random(seed * 7919 + index),
                    iterations=10**7,
                    deadline=math.inf,
                    work=args.work,
                    prior_visits=prior_visits,
                )
                cpu += time.thread_time() - start
                estimate = result.take_value - result.pass_value
                estimates.append(estimate)
                searches += 1
                if (estimate > 0) != (diff > 0):
                    flips += 1
                    regret += abs(diff)
            variances.append(statistics.pvariance(estimates))
        print(
            f"work {args.work}, prior visits {prior_visits}: {len(variances)} decisions,"
            f" regret {regret / searches:.3f} points a decision, disagrees"
            f" {flips / searches:.1%}, variance of take-minus-pass"
            f" {statistics.fmean(variances):.2f} (median {statistics.median(variances):.2f}),"
            f" CPU {cpu / searches * 1e3:.1f} ms a search"
        )


if __name__ == "__main__":
    main()
