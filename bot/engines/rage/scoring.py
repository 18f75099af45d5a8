"""Round scoring, the score sheet and the standings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .players import PlayerId

TRICK_POINTS = 1
SWEEP_TRICK_POINTS = 2
EXACT_BID_POINTS = 10
MISSED_BID_POINTS = -5


@dataclass(frozen=True, slots=True)
class PlayerRoundScore:
    """One player's points for one round, broken down as on the rule book's sheet."""

    trick_points: int
    bonus: int
    bid_points: int

    @property
    def points(self) -> int:
        """The round's total for this player."""
        return self.trick_points + self.bonus + self.bid_points


def score_player(
    bid: int, tricks: int, bonus: int, cards: int, *, sweep: bool = False
) -> PlayerRoundScore:
    """Score one player's round: tricks, bonus cards and the bid; sweep doubles trick points."""
    # The sweep variant excludes the single-trick round (round 10), where winning every
    # trick is just winning the trick.
    swept = sweep and cards > 1 and tricks == cards
    per_trick = SWEEP_TRICK_POINTS if swept else TRICK_POINTS
    bid_points = EXACT_BID_POINTS if bid == tricks else MISSED_BID_POINTS
    return PlayerRoundScore(tricks * per_trick, bonus, bid_points)


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """A scored round, per seat: bids, tricks, bonus and points, and the running totals."""

    round: int
    cards: int
    dealer: int
    bids: tuple[int, ...]
    tricks: tuple[int, ...]
    scores: tuple[PlayerRoundScore, ...]
    totals: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (only the inputs; the scores are stored for auditing)."""
        return {
            "round": self.round,
            "cards": self.cards,
            "dealer": self.dealer,
            "bids": list(self.bids),
            "tricks": list(self.tricks),
            "trick_points": [s.trick_points for s in self.scores],
            "bonus": [s.bonus for s in self.scores],
            "bid_points": [s.bid_points for s in self.scores],
            "totals": list(self.totals),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoundRecord:
        """Rebuild from to_dict."""
        scores = tuple(
            PlayerRoundScore(t, b, p)
            for t, b, p in zip(data["trick_points"], data["bonus"], data["bid_points"], strict=True)
        )
        return cls(
            round=data["round"],
            cards=data["cards"],
            dealer=data["dealer"],
            bids=tuple(data["bids"]),
            tricks=tuple(data["tricks"]),
            scores=scores,
            totals=tuple(data["totals"]),
        )


@dataclass(frozen=True, slots=True)
class SheetEntry:
    """One cell of the score sheet: a player's line for one round (None = not known yet)."""

    player: PlayerId
    bid: int | None
    tricks: int
    trick_points: int | None
    bonus: int
    bid_points: int | None
    points: int | None
    total: int

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "player": self.player,
            "bid": self.bid,
            "tricks": self.tricks,
            "trick_points": self.trick_points,
            "bonus": self.bonus,
            "bid_points": self.bid_points,
            "points": self.points,
            "total": self.total,
        }


@dataclass(frozen=True, slots=True)
class SheetRow:
    """One round on the score sheet; an incomplete row is the round being played."""

    round: int
    cards: int
    dealer: PlayerId
    complete: bool
    entries: tuple[SheetEntry, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "round": self.round,
            "cards": self.cards,
            "dealer": self.dealer,
            "complete": self.complete,
            "entries": [entry.to_dict() for entry in self.entries],
        }


@dataclass(frozen=True, slots=True)
class ScoreSheet:
    """The rule book's score sheet: one row per round, entries in seat order, and totals."""

    players: tuple[PlayerId, ...]
    rows: tuple[SheetRow, ...]
    totals: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "players": list(self.players),
            "rows": [row.to_dict() for row in self.rows],
            "totals": list(self.totals),
        }


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's place: tied players share a rank (1, 1, 3, ...)."""

    rank: int
    player: PlayerId
    score: int

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {"rank": self.rank, "player": self.player, "score": self.score}


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game: every player with the top score wins."""

    winners: tuple[PlayerId, ...]
    standings: tuple[Standing, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "winners": list(self.winners),
            "standings": [s.to_dict() for s in self.standings],
        }


def rank_players(players: Sequence[PlayerId], scores: Sequence[int]) -> tuple[Standing, ...]:
    """Standings, highest score first; ties share a rank and keep seat order."""
    order = sorted(range(len(players)), key=lambda seat: -scores[seat])
    standings: list[Standing] = []
    for position, seat in enumerate(order):
        if standings and standings[-1].score == scores[seat]:
            rank = standings[-1].rank
        else:
            rank = position + 1
        standings.append(Standing(rank, players[seat], scores[seat]))
    return tuple(standings)


def scored_row(players: Sequence[PlayerId], record: RoundRecord) -> SheetRow:
    """The score-sheet row of a scored round (all bids shown)."""
    return SheetRow(
        round=record.round,
        cards=record.cards,
        dealer=players[record.dealer],
        complete=True,
        entries=tuple(
            SheetEntry(
                player=player,
                bid=record.bids[seat],
                tricks=record.tricks[seat],
                trick_points=record.scores[seat].trick_points,
                bonus=record.scores[seat].bonus,
                bid_points=record.scores[seat].bid_points,
                points=record.scores[seat].points,
                total=record.totals[seat],
            )
            for seat, player in enumerate(players)
        ),
    )


def open_row(
    players: Sequence[PlayerId],
    round_number: int,
    cards: int,
    dealer_seat: int,
    visible_bids: Sequence[int | None],
    tricks: Sequence[int],
    bonus: Sequence[int],
    totals: Sequence[int],
) -> SheetRow:
    """The row of the round in play: bids as far as visible, tricks so far, no points yet."""
    return SheetRow(
        round=round_number,
        cards=cards,
        dealer=players[dealer_seat],
        complete=False,
        entries=tuple(
            SheetEntry(
                player=player,
                bid=visible_bids[seat],
                tricks=tricks[seat],
                trick_points=None,
                bonus=bonus[seat],
                bid_points=None,
                points=None,
                total=totals[seat],
            )
            for seat, player in enumerate(players)
        ),
    )
