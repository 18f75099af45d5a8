"""Rage hard's value table: the chance to win the game from the totals after a round.

Learned from self-play of the heuristic (benchmarks/strength/rage_value_fit.py) and
shipped as plain numbers in data/rage_value.json: for each number of rounds left, a
logistic model of the chance to win from the margins over the three strongest rivals.
The look-ahead can score an imagined round's end with it, to play for the game rather
than the round: late in a game a safe round is worth more to a leader and a long shot
more to someone behind. After the last round the chance is exact. Measured, hard was no
stronger that way (47.3% against 48.4% for points, 1,000 games each; see
docs/benchmarks.md), so hard scores by points, and the table gives the chance to win in
``rage_search.play_values``/``bid_values`` (for game reviews) and the league's hard-win.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

VALUE_FILE = Path(__file__).resolve().parents[2] / "data" / "rage_value.json"
FEATURES = (
    "margin over the leading rival / 10",
    "margin over the second rival / 10",
    "margin over the third rival / 10",
)
# Margin (in tens of points) counted for a rival seat a smaller table does not have.
ABSENT_MARGIN = 10.0


def features(totals: Sequence[int | float], seat: int) -> list[float]:
    """Margins (tens of points) of ``seat`` over its three strongest rivals, strongest first."""
    mine = totals[seat]
    rivals = sorted((t for s, t in enumerate(totals) if s != seat), reverse=True)
    margins = [(mine - t) / 10.0 for t in rivals[: len(FEATURES)]]
    return margins + [ABSENT_MARGIN] * (len(FEATURES) - len(margins))


@dataclass(frozen=True, slots=True)
class WinModel:
    """Logistic coefficients (intercept first) by rounds left."""

    weights: dict[int, tuple[float, ...]]

    def chance(self, totals: Sequence[int | float], seat: int, rounds_left: int) -> float:
        """The chance that ``seat`` wins from these totals with ``rounds_left`` to play."""
        if rounds_left <= 0:
            best = max(totals)
            if totals[seat] < best:
                return 0.0
            return 1.0 / sum(1 for t in totals if t == best)
        weights = self.weights[min(rounds_left, max(self.weights))]
        z = weights[0]
        for w, x in zip(weights[1:], features(totals, seat), strict=True):
            z += w * x
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@cache
def win_model(path: Path = VALUE_FILE) -> WinModel:
    """The value table, read once per process."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if list(data["features"]) != list(FEATURES):
        raise ValueError(f"{path} was fitted for other features: {data['features']}")
    weights = {int(left): tuple(map(float, w)) for left, w in data["rounds_left"].items()}
    if any(len(w) != len(FEATURES) + 1 for w in weights.values()):
        raise ValueError(f"{path}: each entry needs {len(FEATURES) + 1} coefficients")
    return WinModel(weights)
