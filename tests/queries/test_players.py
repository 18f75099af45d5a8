"""Player stats and leaderboards from the records: hand-computed figures, ranks, privacy, plans."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from openskill.models import PlackettLuce

from bot.games.nothanks import SPEC as NOTHANKS
from bot.queries.players import (
    QUERIES,
    NoThanksFigures,
    RageFigures,
    leaderboard,
    player_stats,
    ranked,
    shown_rating,
)
from bot.records.ratings import MIN_RATED_GAMES
from bot.records.results import GameResult, PlayerResult
from bot.storage import Storage, TableRecord
from tests.table.harness import BEN, CID, DORA, GUILD, HOST, Harness, play_one, started

ANA = HOST
OTHER_GUILD = 2
HARD = "computer:hard"
# A seat as the tests write it: (records id, score, rank, figures).
Seat = tuple[int | str, int, int, dict[str, int]]


def nothanks(card_points: int, chips: int, longest_run: int = 1) -> tuple[int, dict[str, int]]:
    """A No Thanks! seat's score (card points − chips) and its figures."""
    figures = {
        "card_points": card_points,
        "chips": chips,
        "cards": longest_run,
        "longest_run": longest_run,
    }
    return card_points - chips, figures


def rage(score: int, exact_bids: int, rounds: int = 10) -> tuple[int, dict[str, int]]:
    """A Rage seat's score and its figures."""
    return score, {"exact_bids": exact_bids, "rounds": rounds}


async def record(
    storage: Storage,
    seats: Sequence[tuple[int | str, tuple[int, dict[str, int]], int]],
    *,
    game: str = "nothanks",
    guild: int = GUILD,
    status: str = "finished",
    names: dict[str, str] | None = None,
) -> int:
    """Keep one ended game, as the table core would: (player, (score, figures), rank) per seat.

    The table row comes first (the records refer to it); the game is rated if finished.
    People are named "player <id>" unless ``names`` names them.
    """
    table = await storage.create_table(
        TableRecord(game=game, channel_id=0, host_id=ANA, guild_id=guild, status=status)
    )
    assert table.id is not None
    players = []
    for seat, (player, (score, figures), rank) in enumerate(seats):
        level = str(player).split(":", 1)[1] if str(player).startswith("computer:") else None
        players.append(
            PlayerResult(
                seat=seat,
                player=str(player),
                name=f"🤖 Computer {seat + 1} ({level})"
                if level
                else (names or {}).get(str(player), f"player {player}"),
                level=level,
                score=score if status == "finished" else 0,
                rank=rank if status == "finished" else 0,
                stats=figures if status == "finished" else {},
                seat_player=str(-(seat + 1)) if level else str(player),
            )
        )
    await storage.record_game(
        GameResult(
            table_id=table.id,
            guild_id=guild,
            channel_id=0,
            game=game,
            status=status,
            seed="1",
            options={},
            started_at=1.0,
            ended_at=2.0,
            moves=10,
            players=tuple(players),
        )
    )
    return table.id


def openskill_after(games: Sequence[Sequence[tuple[str, int]]]) -> dict[str, Any]:
    """Ratings after these games ((player, rank) per seat), by OpenSkill called directly."""
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    for seats in games:
        teams = [[ratings.get(player, model.rating())] for player, _ in seats]
        rated = model.rate(teams, ranks=[rank for _, rank in seats])
        for (player, _), team in zip(seats, rated, strict=True):
            ratings[player] = team[0]
    return ratings


# -- a player's stats ------------------------------------------------------------------


async def three_nothanks_games(storage: Storage) -> None:
    """Ana, ben and cid: ana wins, shares a win, loses; plus games that must not count."""
    await record(
        storage,
        [(ANA, nothanks(40, 5, 3), 1), (BEN, nothanks(50, 2), 2), (CID, nothanks(60, 0), 3)],
    )
    await record(
        storage,
        [(ANA, nothanks(30, 0, 2), 1), (BEN, nothanks(35, 5), 1), (CID, nothanks(45, 0), 3)],
    )
    await record(
        storage,
        [(ANA, nothanks(70, 10, 4), 3), (BEN, nothanks(20, 1), 1), (CID, nothanks(40, 0), 2)],
    )
    # Abandoned: kept, never counted. Another server's game: never shown here.
    await record(
        storage,
        [(ANA, nothanks(0, 0), 0), (BEN, nothanks(0, 0), 0), (CID, nothanks(0, 0), 0)],
        status="abandoned",
    )
    await record(
        storage,
        [(ANA, nothanks(9, 9, 9), 1), (BEN, nothanks(50, 0), 2), (CID, nothanks(60, 0), 3)],
        guild=OTHER_GUILD,
    )


async def test_nothanks_stats_by_hand(h: Harness) -> None:
    """Games, wins (a shared one counts), scores, chips and runs of finished games here only."""
    await three_nothanks_games(h.storage)
    stats = await player_stats(h.storage, GUILD, "nothanks", str(ANA))
    assert (stats.games, stats.wins) == (3, 2)
    assert stats.win_rate == pytest.approx(2 / 3)
    figures = stats.figures
    assert isinstance(figures, NoThanksFigures)
    assert figures.average_score == pytest.approx((35 + 30 + 60) / 3)
    assert figures.best_score == 30  # lower is better
    assert figures.average_chips == pytest.approx(5.0)
    assert figures.longest_run == 4
    ben = await player_stats(h.storage, GUILD, "nothanks", str(BEN))
    assert (ben.games, ben.wins) == (3, 2)


async def test_rating_in_stats_is_openskills(h: Harness) -> None:
    """The stats' rating is OpenSkill's over the finished games of this server, in order."""
    await three_nothanks_games(h.storage)
    expected = openskill_after(
        [
            [(str(ANA), 1), (str(BEN), 2), (str(CID), 3)],
            [(str(ANA), 1), (str(BEN), 1), (str(CID), 3)],
            [(str(ANA), 3), (str(BEN), 1), (str(CID), 2)],
        ]
    )[str(ANA)]
    rating = (await player_stats(h.storage, GUILD, "nothanks", str(ANA))).rating
    assert rating is not None and rating.games == 3
    assert rating.mu == pytest.approx(expected.mu)
    assert rating.sigma == pytest.approx(expected.sigma)
    assert rating.conservative == pytest.approx(expected.mu - 3 * expected.sigma)
    assert rating.games_to_board == MIN_RATED_GAMES - 3


async def test_rage_stats_by_hand(h: Harness) -> None:
    """Exact-bid rate is exact bids per round; points per round; the best game is the highest."""
    await record(
        h.storage,
        [(ANA, rage(35, 4), 2), (BEN, rage(50, 6), 1), (CID, rage(-5, 2), 3)],
        game="rage",
    )
    await record(
        h.storage,
        [(ANA, rage(62, 7), 1), (BEN, rage(40, 5), 2), (CID, rage(12, 3), 3)],
        game="rage",
    )
    stats = await player_stats(h.storage, GUILD, "rage", str(ANA))
    assert (stats.games, stats.wins) == (2, 1)
    figures = stats.figures
    assert isinstance(figures, RageFigures)
    assert figures.exact_bid_rate == pytest.approx(11 / 20)
    assert figures.points_per_round == pytest.approx(97 / 20)
    assert figures.best_game == 62  # higher is better
    # The games are Rage's only: No Thanks! knows nothing of them.
    assert (await player_stats(h.storage, GUILD, "nothanks", str(ANA))).games == 0


async def test_no_games_no_figures(h: Harness) -> None:
    """A player without finished games: zero games, no win rate, no rating, no figures."""
    await record(
        h.storage,
        [(ANA, nothanks(0, 0), 0), (BEN, nothanks(0, 0), 0), (CID, nothanks(0, 0), 0)],
        status="abandoned",
    )
    stats = await player_stats(h.storage, GUILD, "nothanks", str(ANA))
    assert (stats.games, stats.wins, stats.win_rate) == (0, 0, None)
    assert stats.rating is None and stats.figures is None and stats.name is None


async def test_stats_of_a_game_played_at_a_table(h: Harness) -> None:
    """A game played to its end through the table core shows in the players' stats."""
    session = await started(h, NOTHANKS)
    while session.status == "running":
        await play_one(h, session)
    rows = await h.storage.read(
        "SELECT player, score, won, stats FROM game_players WHERE table_id = ?", (session.id,)
    )
    for row in rows:
        stats = await player_stats(h.storage, GUILD, "nothanks", row["player"])
        figures = json.loads(row["stats"])
        assert (stats.games, stats.wins) == (1, row["won"])
        assert stats.figures == NoThanksFigures(
            average_score=row["score"],
            best_score=row["score"],
            average_chips=figures["chips"],
            longest_run=figures["longest_run"],
        )
        assert stats.rating is not None and stats.rating.games == 1


# -- leaderboards ----------------------------------------------------------------------


async def five_games(storage: Storage, seats: Sequence[Seat], *, guild: int = GUILD) -> None:
    """The same No Thanks! game (same players, scores and ranks) five times."""
    for _ in range(MIN_RATED_GAMES):
        await record(
            storage,
            [(player, (score, figures), rank) for player, score, rank, figures in seats],
            guild=guild,
        )


async def test_leaderboard_needs_five_rated_games(h: Harness) -> None:
    """Players appear after five rated games; a player with four is left out."""
    everyone: list[Seat] = [(ANA, 10, 1, {}), (BEN, 20, 2, {}), (CID, 30, 3, {}), (DORA, 40, 4, {})]
    for _ in range(MIN_RATED_GAMES - 1):
        await record(h.storage, [(p, (s, f), r) for p, s, r, f in everyone])
    await record(h.storage, [(p, (s, f), r) for p, s, r, f in everyone[:3]])
    board = await leaderboard(h.storage, GUILD, "nothanks", computers=True, limit=20)
    assert [entry.player for entry in board.people] == [str(ANA), str(BEN), str(CID)]
    assert [entry.games for entry in board.people] == [5, 5, 5]
    assert board.people_total == 3
    dora = await player_stats(h.storage, GUILD, "nothanks", str(DORA))
    assert dora.rating is not None and dora.rating.games_to_board == 1


async def test_leaderboard_is_ordered_by_conservative_rating(h: Harness) -> None:
    """Ranked by μ − 3σ, as OpenSkill computes it; the board shows that value."""
    seats: list[Seat] = [(ANA, 10, 1, {}), (BEN, 20, 2, {}), (CID, 30, 3, {})]
    await five_games(h.storage, seats)
    expected = openskill_after([[(str(p), r) for p, _, r, _ in seats]] * MIN_RATED_GAMES)
    board = await leaderboard(h.storage, GUILD, "nothanks", computers=False, limit=20)
    assert [entry.rank for entry in board.people] == [1, 2, 3]
    for entry in board.people:
        rating = expected[entry.player]
        assert entry.rating == pytest.approx(rating.mu - 3 * rating.sigma)
        assert entry.name == f"player {entry.player}"


async def test_ties_share_a_rank(h: Harness) -> None:
    """Ben and cid always tie: equal ratings, one shared place; the next place is fourth."""
    seats: list[Seat] = [(ANA, 10, 1, {}), (BEN, 20, 2, {}), (CID, 20, 2, {}), (DORA, 40, 4, {})]
    await five_games(h.storage, seats)
    board = await leaderboard(h.storage, GUILD, "nothanks", computers=False, limit=20)
    assert [(entry.player, entry.rank) for entry in board.people] == [
        (str(ANA), 1),
        (str(BEN), 2),
        (str(CID), 2),
        (str(DORA), 4),
    ]


def test_ties_are_ratings_as_shown() -> None:
    """Ratings that read the same (whole points: 1,200 and 1,200) share a rank; the next
    rank skips."""
    values = [("a", 10.01), ("b", 9.99), ("c", 9.9), ("d", 0.01), ("e", -0.01)]
    rows = [{"player": p, "name": p, "mu": mu, "sigma": 0.0, "games": 5} for p, mu in values]
    assert [shown_rating(mu) for _, mu in values] == [1200, 1200, 1198, 1000, 1000]
    assert [entry.rank for entry in ranked(rows)] == [1, 1, 3, 4, 4]


async def test_leaderboard_limit_and_total(h: Harness) -> None:
    """A short board lists the best few and knows how many more there are."""
    seats: list[Seat] = [(ANA, 10, 1, {}), (BEN, 20, 2, {}), (CID, 30, 3, {}), (DORA, 40, 4, {})]
    await five_games(h.storage, seats)
    board = await leaderboard(h.storage, GUILD, "nothanks", computers=False, limit=2)
    assert [entry.player for entry in board.people] == [str(ANA), str(BEN)]
    assert board.people_total == 4


async def test_computers_are_apart_and_can_be_hidden(h: Harness) -> None:
    """Computers are ranked in a list of their own, or left out on request."""
    seats: list[Seat] = [(ANA, 10, 1, {}), (HARD, 20, 2, {}), (BEN, 30, 3, {})]
    await five_games(h.storage, seats)
    shown = await leaderboard(h.storage, GUILD, "nothanks", computers=True, limit=20)
    assert [entry.player for entry in shown.people] == [str(ANA), str(BEN)]
    assert [(entry.player, entry.rank, entry.level) for entry in shown.computers] == [
        (HARD, 1, "hard")
    ]
    hidden = await leaderboard(h.storage, GUILD, "nothanks", computers=False, limit=20)
    assert hidden.people == shown.people and hidden.computers == ()
    # A computer level has stats too.
    hard = await player_stats(h.storage, GUILD, "nothanks", HARD)
    assert (hard.games, hard.wins, hard.level) == (5, 0, "hard")


async def test_servers_never_mix(h: Harness) -> None:
    """A player's games on one server show neither in another's stats nor on its board."""
    await five_games(h.storage, [(ANA, 10, 1, {}), (BEN, 20, 2, {}), (CID, 30, 3, {})])
    await five_games(
        h.storage, [(DORA, 10, 1, {}), (BEN, 5, 1, {}), (CID, 30, 3, {})], guild=OTHER_GUILD
    )
    here = await leaderboard(h.storage, GUILD, "nothanks", computers=True, limit=20)
    there = await leaderboard(h.storage, OTHER_GUILD, "nothanks", computers=True, limit=20)
    assert [entry.player for entry in here.people] == [str(ANA), str(BEN), str(CID)]
    assert {entry.player for entry in there.people} == {str(DORA), str(BEN), str(CID)}
    assert (await player_stats(h.storage, OTHER_GUILD, "nothanks", str(ANA))).games == 0
    ben_here = await player_stats(h.storage, GUILD, "nothanks", str(BEN))
    ben_there = await player_stats(h.storage, OTHER_GUILD, "nothanks", str(BEN))
    assert (ben_here.games, ben_here.wins) == (5, 0)
    assert (ben_there.games, ben_there.wins) == (5, 5)
    assert ben_here.rating != ben_there.rating


# SQLite's plans: PostgreSQL's planner rightly scans tables this small, so its plan says
# nothing about the indexes; the queries' results are checked on both backends above.
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_queries_use_indexes(h: Harness) -> None:
    """Every stats and leaderboard query searches an index (SQLite): no scan of the records."""
    await five_games(h.storage, [(ANA, 10, 1, {}), (HARD, 20, 2, {}), (BEN, 30, 3, {})])
    for query in QUERIES:
        plan = await h.storage.read("EXPLAIN QUERY PLAN " + query, [1] * query.count("?"))
        details = [row["detail"] for row in plan]
        assert not [d for d in details if d.startswith("SCAN")], (query, details)
        assert all("USING" in d and "INDEX" in d for d in details if d.startswith("SEARCH"))
        assert any(d.startswith("SEARCH") for d in details), (query, details)


# -- ratings: ties and two computers of one level at a table ---------------------------


async def test_a_tie_is_rated_as_openskill_rates_it(h: Harness) -> None:
    """Tied ranks go to OpenSkill as ties; both tied players win and move alike."""
    await record(
        h.storage,
        [(ANA, nothanks(20, 0), 2), (BEN, nothanks(10, 0), 1), (CID, nothanks(10, 0), 1)],
    )
    expected = openskill_after([[(str(ANA), 2), (str(BEN), 1), (str(CID), 1)]])
    rows = await h.storage.read("SELECT player, mu, sigma, games FROM ratings")
    assert len(rows) == 3
    for row in rows:
        assert row["mu"] == pytest.approx(expected[row["player"]].mu)
        assert row["sigma"] == pytest.approx(expected[row["player"]].sigma)
    ben = await player_stats(h.storage, GUILD, "nothanks", str(BEN))
    cid = await player_stats(h.storage, GUILD, "nothanks", str(CID))
    assert ben.wins == cid.wins == 1
    assert ben.rating == cid.rating


async def test_two_computers_of_one_level_share_one_rating(h: Harness) -> None:
    """Two "hard" seats at one table: one rating row, moved by their average, one game."""
    table_id = await record(
        h.storage,
        [(ANA, nothanks(20, 0), 2), (HARD, nothanks(10, 0), 1), (HARD, nothanks(30, 0), 3)],
    )
    model = PlackettLuce()
    after = model.rate([[model.rating()] for _ in range(3)], ranks=[2, 1, 3])
    mu = (after[1][0].mu + after[2][0].mu) / 2
    sigma = (after[1][0].sigma + after[2][0].sigma) / 2
    (row,) = await h.storage.read("SELECT * FROM ratings WHERE player = ?", (HARD,))
    assert (row["mu"], row["sigma"], row["games"]) == (pytest.approx(mu), pytest.approx(sigma), 1)
    start = model.rating()
    change = round((mu - 3 * sigma) - (start.mu - 3 * start.sigma), 2)
    seats = await h.storage.read(
        "SELECT rating_change FROM game_players WHERE table_id = ? AND player = ?",
        (table_id, HARD),
    )
    assert [seat["rating_change"] for seat in seats] == [change, change]
    # Stats count each seat the level played: two hands, one of them won.
    hard = await player_stats(h.storage, GUILD, "nothanks", HARD)
    assert (hard.games, hard.wins) == (2, 1)
    assert hard.rating is not None and hard.rating.games == 1
