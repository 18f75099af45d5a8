"""The sparring league's schedule and standings (benchmarks/strength/league.py)."""

from __future__ import annotations

import math
from collections import Counter

from tests.benchmark_scripts import load

league = load("strength/league")


def _by_seat_order(lineup, seed):
    """A stand-in game where seat order decides: seat 0 wins, seat 1 second, and so on."""
    return list(range(1, len(lineup) + 1)), [float(-i) for i in range(len(lineup))]


def test_schedule_rotates_every_lineup_through_every_seat() -> None:
    """Each deal is played once per rotation, so every entrant sits in every seat."""
    games = list(league.schedule(["a", "b", "c", "d"], 3, 12 * 3, seed=5))
    assert len(games) == 36
    seats = Counter((name, lineup.index(name)) for lineup, _ in games for name in lineup)
    assert set(seats.values()) == {9}  # 3 line-ups with each entrant, 3 cycles
    deals = Counter(seed for _, seed in games)
    assert set(deals.values()) == {3}


def test_head_to_head_puts_the_hero_in_each_seat_once_per_deal() -> None:
    """One hero against copies of one opponent, the hero's seat rotating on each deal."""
    games = list(league.head_to_head("hero", "ismcts", 3, 9, seed=1))
    assert [lineup.index("hero") for lineup, _ in games] == [0, 1, 2] * 3
    assert all(lineup.count("ismcts") == 2 for lineup, _ in games)


def test_seat_luck_cancels_out_over_rotations() -> None:
    """When only the seat decides, rotation gives every entrant the same share."""
    table = league.run_league(
        league.schedule(["a", "b", "c"], 3, 30, seed=2), _by_seat_order, table_size=3
    )
    shares = {s.name: round(s.share, 6) for s in table.standings.values()}
    assert shares == {"a": round(1 / 3, 6), "b": round(1 / 3, 6), "c": round(1 / 3, 6)}
    assert "parity 33.3%" in table.report()


def test_a_stronger_entrant_rates_higher_and_ties_split_the_win() -> None:
    """An entrant that always wins rates first; a shared first place counts as half."""

    def play(lineup, seed):
        """'strong' always wins; the others tie for second."""
        return [1 if n == "strong" else 2 for n in lineup], [0.0] * len(lineup)

    table = league.run_league(
        league.schedule(["strong", "x", "y"], 3, 30, seed=3), play, table_size=3
    )
    order = sorted(table.standings.values(), key=lambda s: s.rating, reverse=True)
    assert order[0].name == "strong" and order[0].share == 1.0
    low, high = league.wilson(order[0].wins, order[0].games)
    assert low > 0.85 and high > 0.999
    tie = league.League(2)
    tie.add(["x", "y"], ([1, 1], [0.0, 0.0]))
    assert tie.standings["x"].wins == 0.5


def test_in_workers_keeps_the_jobs_order_in_one_process_or_several() -> None:
    """The strength scripts' pool: the same results in the same order either way."""
    jobs = [3, -1, 4, -1, -5]
    assert list(league.in_workers(abs, jobs, workers=1)) == [3, 1, 4, 1, 5]
    assert list(league.in_workers(abs, jobs, workers=2, chunksize=2)) == [3, 1, 4, 1, 5]


def test_interval_is_the_mean_and_its_normal_half_width() -> None:
    """1.96 standard errors either side of the mean; one value has no width to give."""
    mean, half = league.interval([0.0, 1.0, 0.0, 1.0])
    assert mean == 0.5 and round(half, 4) == round(1.96 * (1 / 3) ** 0.5 / 2, 4)
    assert math.isnan(league.interval([1.0])[1])
