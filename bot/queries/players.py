"""Player stats and skill leaderboards, per server and game, from indexed reads of the records.

Nothing here replays a game or scans the records: a player's figures are an aggregate over
their own rows of `game_players` (index `game_players_by_player`), their rating one row of
`ratings` (its primary key), and a leaderboard a range of `ratings_board`. Only finished
games count; abandoned ones are kept in the history but count for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.records.ratings import MIN_RATED_GAMES, Rating, displayed
from bot.storage import Storage

COMPUTER_PREFIX = "computer:"
# How many people a leaderboard lists (computers are four levels at most), so that
# everyone listed fits the 25 options of the "show stats" select.
BOARD_LIMIT = 20
# Re-exported for the messages that name the threshold (render may not import records).
BOARD_THRESHOLD = MIN_RATED_GAMES

# A player's games, wins and game-specific sums: one indexed range of their own rows.
# `json_extract` reads the figures each game's rules wrote (bot.records.results).
PLAYER_TOTALS = (
    "SELECT COUNT(*) AS games, TOTAL(won) AS wins, TOTAL(score) AS score_sum,"
    " MIN(score) AS lowest, MAX(score) AS highest,"
    " TOTAL(json_extract(stats, '$.chips')) AS chips,"
    " MAX(json_extract(stats, '$.longest_run')) AS longest_run,"
    " TOTAL(json_extract(stats, '$.exact_bids')) AS exact_bids,"
    " TOTAL(json_extract(stats, '$.rounds')) AS rounds"
    " FROM game_players WHERE guild_id = ? AND game = ? AND player = ? AND status = 'finished'"
)
PLAYER_RATING = (
    "SELECT name, mu, sigma, games FROM ratings WHERE guild_id = ? AND game = ? AND player = ?"
)
# Ordered by the exact conservative rating; the player id makes equal ones come out in a
# stable order. `games >= ?` keeps the search within the index range.
BOARD = (
    "SELECT player, name, mu, sigma, games FROM ratings"
    " WHERE guild_id = ? AND game = ? AND is_computer = ? AND games >= ?"
    " ORDER BY mu - 3 * sigma DESC, player LIMIT ?"
)
BOARD_COUNT = (
    "SELECT COUNT(*) FROM ratings WHERE guild_id = ? AND game = ? AND is_computer = ?"
    " AND games >= ?"
)
# Every query of this module, for the test that checks their plans use the indexes.
QUERIES = (PLAYER_TOTALS, PLAYER_RATING, BOARD, BOARD_COUNT)


def is_computer(player: str) -> bool:
    """Whether a records id is a computer level ("computer:hard") rather than a person."""
    return player.startswith(COMPUTER_PREFIX)


def computer_level(player: str) -> str | None:
    """The level of a computer's records id, or None for a person."""
    return player[len(COMPUTER_PREFIX) :] if is_computer(player) else None


@dataclass(frozen=True, slots=True)
class PlayerRating:
    """A player's rating as stored: OpenSkill's μ and σ and the rated games behind them."""

    mu: float
    sigma: float
    games: int

    @property
    def conservative(self) -> float:
        """μ − 3σ: what leaderboards rank by."""
        return Rating(self.mu, self.sigma).conservative

    @property
    def games_to_board(self) -> int:
        """Rated games still needed to appear on the leaderboard (0 once listed)."""
        return max(MIN_RATED_GAMES - self.games, 0)


@dataclass(frozen=True, slots=True)
class NoThanksFigures:
    """A No Thanks! player's figures over their finished games (lower scores are better)."""

    average_score: float
    best_score: int
    average_chips: float
    longest_run: int


@dataclass(frozen=True, slots=True)
class RageFigures:
    """A Rage player's figures over their finished games (higher scores are better)."""

    exact_bids: int
    rounds: int
    points_per_round: float | None
    best_game: int

    @property
    def exact_bid_rate(self) -> float | None:
        """Exact bids per round played; None before any complete round."""
        return self.exact_bids / self.rounds if self.rounds else None


Figures = NoThanksFigures | RageFigures


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """One player's record in one game on one server."""

    game: str
    player: str
    name: str | None  # the name at their last rated game, if they have one
    games: int
    wins: int
    rating: PlayerRating | None
    figures: Figures | None  # None without finished games (or for a game without figures)

    @property
    def win_rate(self) -> float | None:
        """Wins per finished game (a shared win counts); None before the first game."""
        return self.wins / self.games if self.games else None

    @property
    def level(self) -> str | None:
        """A computer's level, or None for a person."""
        return computer_level(self.player)


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """One line of a leaderboard."""

    rank: int
    player: str
    name: str
    rating: float  # μ − 3σ
    games: int

    @property
    def level(self) -> str | None:
        """A computer's level, or None for a person."""
        return computer_level(self.player)


@dataclass(frozen=True, slots=True)
class Leaderboard:
    """A server's leaderboard of one game: people and, listed apart, computers."""

    game: str
    people: tuple[BoardEntry, ...]
    people_total: int  # people on the board, beyond the listed ones too
    computers: tuple[BoardEntry, ...]  # empty when hidden


def _figures(game: str, row: Any) -> Figures | None:
    """The game-specific figures of a player's totals row."""
    games = int(row["games"])
    if not games:
        return None
    if game == "nothanks":
        return NoThanksFigures(
            average_score=row["score_sum"] / games,
            best_score=int(row["lowest"]),
            average_chips=row["chips"] / games,
            longest_run=int(row["longest_run"] or 0),
        )
    if game == "rage":
        rounds = int(row["rounds"])
        return RageFigures(
            exact_bids=int(row["exact_bids"]),
            rounds=rounds,
            points_per_round=row["score_sum"] / rounds if rounds else None,
            best_game=int(row["highest"]),
        )
    return None


async def player_stats(storage: Storage, guild_id: int, game: str, player: str) -> PlayerStats:
    """A player's games, wins, rating and figures in one game on one server."""
    totals = (await storage.read(PLAYER_TOTALS, (guild_id, game, player)))[0]
    found = await storage.read(PLAYER_RATING, (guild_id, game, player))
    rating = (
        PlayerRating(found[0]["mu"], found[0]["sigma"], int(found[0]["games"])) if found else None
    )
    return PlayerStats(
        game=game,
        player=player,
        name=found[0]["name"] if found else None,
        games=int(totals["games"]),
        wins=int(totals["wins"]),
        rating=rating,
        figures=_figures(game, totals),
    )


def shown_rating(value: float) -> int:
    """A conservative rating (μ − 3σ) as boards show it: 1,000 for a newcomer."""
    return displayed(value)


def ranked(rows: list[Any]) -> tuple[BoardEntry, ...]:
    """Board entries from rows best first; equal ratings (as shown) share a rank."""
    entries: list[BoardEntry] = []
    for index, row in enumerate(rows):
        value = Rating(row["mu"], row["sigma"]).conservative
        rank = index + 1
        # Ranking by the shown value: two players whose ratings read the same share a
        # place, as a reader would expect; the rows come sorted, so equals are adjacent.
        if entries and shown_rating(entries[-1].rating) == shown_rating(value):
            rank = entries[-1].rank
        entries.append(BoardEntry(rank, row["player"], row["name"], value, int(row["games"])))
    return tuple(entries)


async def leaderboard(
    storage: Storage,
    guild_id: int,
    game: str,
    *,
    computers: bool = True,
    limit: int = BOARD_LIMIT,
) -> Leaderboard:
    """A server's best players of one game by μ − 3σ, computers apart (or hidden)."""
    people = await storage.read(BOARD, (guild_id, game, 0, MIN_RATED_GAMES, limit))
    total = len(people)
    if total == limit:
        # Only a full page needs the count of those left out.
        count = await storage.read(BOARD_COUNT, (guild_id, game, 0, MIN_RATED_GAMES))
        total = int(count[0][0])
    machines = (
        await storage.read(BOARD, (guild_id, game, 1, MIN_RATED_GAMES, limit)) if computers else []
    )
    return Leaderboard(game, ranked(people), total, ranked(machines))
