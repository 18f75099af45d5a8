"""What a table remembers beside its game: names, languages, computers, the turn clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The paces a table may have: live (the turn_seconds option's clock), or turn-based with
# this many seconds per move. Chosen after Board Game Arena's turn-based speeds.
PACES: dict[str, int] = {
    "live": 0,
    "1h": 3600,
    "12h": 12 * 3600,
    "24h": 24 * 3600,
    "72h": 72 * 3600,
}


def pace_name(seconds: int) -> str:
    """The name of a pace in PACES ("live" for 0; a custom pace is named in hours)."""
    for name, value in PACES.items():
        if value == seconds:
            return name
    return f"{max(seconds // 3600, 1)}h"


@dataclass(slots=True)
class Turn:
    """The clock of the turn in progress: its move, deadline and whether we pinged.

    ``since`` is the move at which the turn began for the people awaited: a move that only
    shrinks the set of those awaited (one of several bids at once) continues the turn, so
    ``since`` and ``called`` (its turn-start ping went out) carry over, while the clock
    (``move``, ``deadline``, ``pinged``) starts again.
    """

    move: int
    deadline: float
    pinged: bool = False
    since: int = -1  # -1: the turn began at ``move``
    called: bool = False

    def __post_init__(self) -> None:
        if self.since < 0:
            self.since = self.move

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (``since`` and ``called`` only where they say something)."""
        data: dict[str, Any] = {"move": self.move, "deadline": self.deadline, "pinged": self.pinged}
        if self.since != self.move:
            data["since"] = self.since
        if self.called:
            data["called"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        """Rebuild from ``to_dict``."""
        return cls(
            int(data["move"]),
            float(data["deadline"]),
            bool(data.get("pinged", False)),
            int(data.get("since", -1)),
            bool(data.get("called", False)),
        )

    def copy(self) -> Turn:
        """An independent copy."""
        return Turn(self.move, self.deadline, self.pinged, self.since, self.called)


@dataclass(slots=True)
class Notice:
    """A line shown above the table once, e.g. 'time ran out for ana'."""

    key: str
    player: str

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {"key": self.key, "player": self.player}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Notice:
        """Rebuild from ``to_dict``."""
        return cls(str(data["key"]), str(data["player"]))


@dataclass(slots=True)
class TableMeta:
    """Typed metadata of one table, stored as JSON beside its game state.

    Player ids are strings: Discord ids for people, negative numbers for computers.
    """

    names: dict[str, str] = field(default_factory=dict)
    user_locales: dict[str, str] = field(default_factory=dict)
    # The server's Discord locale when the table opened (public messages fall back to it).
    locale: str | None = None
    opened_at: float = 0.0
    computers: dict[str, str] = field(default_factory=dict)  # seat id -> level
    away: list[str] = field(default_factory=list)  # seats a computer plays until "I'm back"
    timeouts: dict[str, int] = field(default_factory=dict)  # timeouts in a row per player
    turn: Turn | None = None
    notice: Notice | None = None
    dm_closed: list[str] = field(default_factory=list)
    hint_pending: list[str] = field(default_factory=list)
    closed_reason: str | None = None  # "expired" (lobby) or "stalled" (Draft.stalled)
    closed_by: int | None = None
    rematch_of: int | None = None
    invited: list[int] = field(default_factory=list)  # former players asked to a rematch
    started_at: float | None = None  # when the game was dealt
    rating_changes: dict[str, float] = field(default_factory=dict)  # after a finished game
    # Each player's living DM, edited in place: player -> [channel id, message id].
    dm_messages: dict[str, list[int]] = field(default_factory=dict)
    # The turn ping in the channel, deleted once its turn passes: [message id, move, kind].
    # Kind 0 (or absent): a half-time reminder, for the clock of ``move``; kind 1: a
    # turn-start ping, for the turn that began at ``move`` (Turn.since).
    ping_message: list[int] = field(default_factory=list)
    # When each person last acted at this table (a move, joining, starting, "I'm back"):
    # someone who acted moments ago is not pinged for their next turn.
    acted: dict[str, float] = field(default_factory=dict)
    # The channel the bot opened this table's thread from (the table's channel is that
    # thread): the thread is archived when the table closes. None: not a thread of ours.
    thread: int | None = None
    # Seconds a person has per move at a turn-based table (play by post); 0: a live
    # table, whose clock is the turn_seconds option. Computers keep their usual pace.
    pace: int = 0
    # Each person's "your turn" DM at a turn-based table: player -> [channel id, message
    # id, the turn (Turn.since) it was for], edited to say "done" once the turn has passed.
    # Message id 0: that turn's notice is settled with nothing left to close (closed
    # already, or none goes: they chose a daily summary or none).
    turn_notices: dict[str, list[int]] = field(default_factory=dict)
    # When each person's last "your turn" DM at this table went out (the tables' clock):
    # the next waits for the gap (bot.table.timers.NOTICE_GAP), across restarts too.
    notice_sent: dict[str, float] = field(default_factory=dict)
    ended_at: float | None = None  # when the game ended (finished or stopped)
    # People away (/cardtable away) at a turn-based table: player -> until when. Their
    # turns' deadlines are held: a turn that waits for them runs out a pace after that.
    held: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form; empty and default fields are left out to keep rows small."""
        # Written out field by field: every saved change of every table comes through here.
        data: dict[str, Any] = {}
        if self.names:
            data["names"] = dict(self.names)
        if self.user_locales:
            data["user_locales"] = dict(self.user_locales)
        if self.locale is not None:
            data["locale"] = self.locale
        data["opened_at"] = self.opened_at
        if self.computers:
            data["computers"] = dict(self.computers)
        if self.away:
            data["away"] = list(self.away)
        if self.timeouts:
            data["timeouts"] = dict(self.timeouts)
        if self.turn is not None:
            data["turn"] = self.turn.to_dict()
        if self.notice is not None:
            data["notice"] = self.notice.to_dict()
        if self.dm_closed:
            data["dm_closed"] = list(self.dm_closed)
        if self.hint_pending:
            data["hint_pending"] = list(self.hint_pending)
        if self.closed_reason is not None:
            data["closed_reason"] = self.closed_reason
        if self.closed_by is not None:
            data["closed_by"] = self.closed_by
        if self.rematch_of is not None:
            data["rematch_of"] = self.rematch_of
        if self.invited:
            data["invited"] = list(self.invited)
        if self.started_at is not None:
            data["started_at"] = self.started_at
        if self.rating_changes:
            data["rating_changes"] = dict(self.rating_changes)
        if self.dm_messages:
            data["dm_messages"] = {k: list(v) for k, v in self.dm_messages.items()}
        if self.ping_message:
            data["ping_message"] = list(self.ping_message)
        if self.acted:
            data["acted"] = dict(self.acted)
        if self.thread is not None:
            data["thread"] = self.thread
        if self.pace:
            data["pace"] = self.pace
        if self.turn_notices:
            data["turn_notices"] = {k: list(v) for k, v in self.turn_notices.items()}
        if self.ended_at is not None:
            data["ended_at"] = self.ended_at
        if self.held:
            data["held"] = dict(self.held)
        if self.notice_sent:
            data["notice_sent"] = dict(self.notice_sent)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableMeta:
        """Rebuild from ``to_dict`` (missing fields take their defaults)."""
        turn = data.get("turn")
        notice = data.get("notice")
        return cls(
            names={str(k): str(v) for k, v in data.get("names", {}).items()},
            user_locales={str(k): str(v) for k, v in data.get("user_locales", {}).items()},
            locale=data.get("locale"),
            opened_at=float(data.get("opened_at", 0.0)),
            computers={str(k): str(v) for k, v in data.get("computers", {}).items()},
            away=[str(p) for p in data.get("away", [])],
            timeouts={str(k): int(v) for k, v in data.get("timeouts", {}).items()},
            turn=None if turn is None else Turn.from_dict(turn),
            notice=None if notice is None else Notice.from_dict(notice),
            dm_closed=[str(p) for p in data.get("dm_closed", [])],
            hint_pending=[str(p) for p in data.get("hint_pending", [])],
            closed_reason=data.get("closed_reason"),
            closed_by=data.get("closed_by"),
            rematch_of=data.get("rematch_of"),
            invited=[int(p) for p in data.get("invited", [])],
            started_at=data.get("started_at"),
            rating_changes={str(k): float(v) for k, v in data.get("rating_changes", {}).items()},
            dm_messages={
                str(k): [int(i) for i in v] for k, v in data.get("dm_messages", {}).items()
            },
            ping_message=[int(i) for i in data.get("ping_message", [])],
            acted={str(k): float(v) for k, v in data.get("acted", {}).items()},
            thread=None if data.get("thread") is None else int(data["thread"]),
            pace=int(data.get("pace", 0)),
            turn_notices={
                str(k): [int(i) for i in v] for k, v in data.get("turn_notices", {}).items()
            },
            ended_at=data.get("ended_at"),
            held={str(k): float(v) for k, v in data.get("held", {}).items()},
            notice_sent={str(k): float(v) for k, v in data.get("notice_sent", {}).items()},
        )

    def copy(self) -> TableMeta:
        """An independent copy, for computing a change without touching this one."""
        # Field by field rather than through to_dict/from_dict: every click makes one.
        turn, notice = self.turn, self.notice
        return TableMeta(
            names=dict(self.names),
            user_locales=dict(self.user_locales),
            locale=self.locale,
            opened_at=self.opened_at,
            computers=dict(self.computers),
            away=list(self.away),
            timeouts=dict(self.timeouts),
            turn=None if turn is None else turn.copy(),
            notice=None if notice is None else Notice(notice.key, notice.player),
            dm_closed=list(self.dm_closed),
            hint_pending=list(self.hint_pending),
            closed_reason=self.closed_reason,
            closed_by=self.closed_by,
            rematch_of=self.rematch_of,
            invited=list(self.invited),
            started_at=self.started_at,
            rating_changes=dict(self.rating_changes),
            dm_messages={player: list(ids) for player, ids in self.dm_messages.items()},
            ping_message=list(self.ping_message),
            acted=dict(self.acted),
            thread=self.thread,
            pace=self.pace,
            turn_notices={player: list(ids) for player, ids in self.turn_notices.items()},
            ended_at=self.ended_at,
            held=dict(self.held),
            notice_sent=dict(self.notice_sent),
        )
