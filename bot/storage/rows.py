"""What both backends share: the stored records, the errors, and what a transaction offers."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

OPEN_STATUSES = ("lobby", "running")
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class SchemaTooNew(RuntimeError):
    """The database was written by a newer version of the bot."""


class ChannelBusy(Exception):
    """The channel already has an open lobby or a running game."""


class StaleWrite(Exception):
    """A save named a revision the database no longer holds: someone wrote newer state."""


class DatabaseUnavailable(Exception):
    """The database could not be reached or would not write: nothing was saved.

    Raised only when the failure is known to have changed nothing (no connection, a
    locked, read-only or full file); a failure whose outcome is unknown keeps its own type.
    """


class ShardCountMismatch(RuntimeError):
    """Another process on the same database splits the guilds into another number of shards.

    A guild's shard depends on the count, so two processes with different counts could
    both run one guild's tables without ever claiming the same shard id.
    """

    def __init__(self, count: int, others: Iterable[int]) -> None:
        self.count = count
        self.others = tuple(sorted(others))
        listed = ", ".join(_count_name(other) for other in self.others)
        super().__init__(
            f"this process runs {_count_name(count)}, but another cardtable process on this"
            f" database runs {listed}; give every process the same SHARD_COUNT, or stop the"
            " others first"
        )


def _count_name(count: int) -> str:
    return "every shard (SHARD_COUNT unset)" if count == 0 else f"SHARD_COUNT={count}"


class ShardClaimed(RuntimeError):
    """Another process on the same database already owns some of the shards asked for."""

    def __init__(self, shards: Sequence[int]) -> None:
        self.shards = tuple(shards)
        listed = ", ".join(str(shard) for shard in self.shards)
        super().__init__(
            f"shard{'s' if len(self.shards) > 1 else ''} {listed} already claimed by another"
            " cardtable process on this database; give each process its own SHARD_IDS,"
            " or stop the other one first"
        )


class Row(Protocol):
    """A result row: columns by name or position (sqlite3.Row and asyncpg.Record both are)."""

    def __getitem__(self, key: Any, /) -> Any: ...


@dataclass(slots=True)
class TableRecord:
    """One table as stored: a lobby, a running game, or a finished one."""

    game: str
    channel_id: int
    host_id: int
    guild_id: int | None = None
    status: str = "lobby"
    options: dict[str, Any] = field(default_factory=dict)
    seats: list[int] = field(default_factory=list)
    state: dict[str, Any] | None = None
    move_number: int = 0
    message_id: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
    # Bumped by every save; a save names the revision it replaces (optimistic concurrency).
    revision: int = 0
    # When the next timed event falls due (the bot's clock), None if nothing is due: the
    # scheduler's index. Planned by the table core on every save.
    due_at: float | None = None

    @property
    def is_open(self) -> bool:
        """Whether the table still occupies its channel (lobby or running)."""
        return self.status in OPEN_STATUSES


@dataclass(frozen=True, slots=True)
class BrokenRow:
    """A stored open table that no longer loads: enough to free its channel and say so."""

    id: int
    game: str
    channel_id: int
    guild_id: int | None
    message_id: int | None
    reason: str


def row_to_record(row: Row) -> TableRecord:
    """The record of a `tables` row; ValueError or TypeError if its JSON is unreadable."""
    return TableRecord(
        id=row["id"],
        game=row["game"],
        guild_id=row["guild_id"],
        channel_id=row["channel_id"],
        message_id=row["message_id"],
        host_id=row["host_id"],
        status=row["status"],
        options=json.loads(row["options"]),
        seats=json.loads(row["seats"]),
        state=json.loads(row["state"]) if row["state"] else None,
        move_number=row["move_number"],
        meta=json.loads(row["meta"]),
        revision=row["revision"],
        due_at=row["due_at"],
    )


def broken_row(row: Any, reason: str) -> BrokenRow:
    """The parts of a stored row that locate its table, whatever else is wrong with it."""
    return BrokenRow(
        id=int(row["id"]),
        game=str(row["game"]),
        channel_id=int(row["channel_id"]),
        guild_id=row["guild_id"],
        message_id=row["message_id"],
        reason=reason,
    )


def is_postgres_url(target: Path | str) -> bool:
    """Whether a database target names a PostgreSQL server rather than a SQLite file."""
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


class Transaction(Protocol):
    """One open transaction: statements with `?` placeholders, on either backend."""

    @property
    def dialect(self) -> Dialect:
        """The SQL that differs between the backends."""
        ...

    async def execute(self, sql: str, *params: Any) -> int:
        """Run a statement; the number of rows it changed."""
        ...

    async def fetch(self, sql: str, *params: Any) -> list[Any]:
        """The rows of a query."""
        ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """The few things said differently to SQLite and to PostgreSQL."""

    name: str
    # The errors a unique index raises (one open table per channel).
    unique_violation: tuple[type[BaseException], ...]
    # A condition with one `?` (a player id): a closed table's metadata names that player.
    names_player: str
    # The statement that records the schema version (formatted with ``version``).
    set_version: str
    # The step's DDL as this backend needs it.
    ddl: Callable[[str], str]
