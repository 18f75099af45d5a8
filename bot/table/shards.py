"""Which process runs which tables: a table belongs to the Discord shard of its guild.

Discord sends each guild's events to one shard, ``(guild_id >> 22) % shard_count``, and
direct messages to shard 0. A process runs a set of shards (`ShardSet`) and owns exactly
the tables of their guilds: it restores them, runs their timers and answers their clicks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def shard_of(guild_id: int | None, shard_count: int) -> int:
    """The shard Discord routes a guild's events to (shard 0 for direct messages)."""
    # Storage.open_tables repeats this in SQL, to read only a process's own tables.
    if shard_count < 1:
        raise ValueError(f"shard_count must be at least 1, not {shard_count}")
    if guild_id is None:
        return 0
    return (guild_id >> 22) % shard_count


def describe_ids(ids: Iterable[int]) -> str:
    """Shard ids as compact ranges, e.g. ``0-3,5,7-8`` (the form SHARD_IDS takes)."""
    parts: list[str] = []
    run: list[int] = []
    for shard in sorted(set(ids)):
        if run and shard == run[-1] + 1:
            run.append(shard)
            continue
        if run:
            parts.append(_run_text(run))
        run = [shard]
    if run:
        parts.append(_run_text(run))
    return ",".join(parts)


def _run_text(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"


@dataclass(frozen=True, slots=True)
class ShardSet:
    """The shards this process runs, out of how many there are.

    ``count`` None means discord.py asks Discord how many shards to use and runs them all
    in this process; ``ids`` None means every shard of ``count``. Either way the process
    owns every guild.
    """

    count: int | None = None
    ids: frozenset[int] | None = None

    def __post_init__(self) -> None:
        if self.count is not None and self.count < 1:
            raise ValueError(f"a shard count must be at least 1, not {self.count}")
        if self.ids is None:
            return
        if self.count is None:
            raise ValueError("shard ids need a shard count")
        if not self.ids:
            raise ValueError("a process must run at least one shard")
        outside = sorted(i for i in self.ids if not 0 <= i < self.count)
        if outside:
            raise ValueError(f"shard {outside[0]} is not between 0 and {self.count - 1}")

    @classmethod
    def of(cls, count: int | None, ids: Iterable[int] | None = None) -> ShardSet:
        """The shards ``ids`` of ``count`` (all of them when ``ids`` is None)."""
        return cls(count, None if ids is None else frozenset(ids))

    @property
    def owns_everything(self) -> bool:
        """Whether this process runs every shard, so it owns every guild."""
        return self.ids is None or (self.count is not None and len(self.ids) == self.count)

    def owns(self, guild_id: int | None) -> bool:
        """Whether the tables of this guild (None: a direct message) belong to this process."""
        if self.ids is None or self.count is None:
            return True
        return shard_of(guild_id, self.count) in self.ids

    def shard_of(self, guild_id: int | None) -> int | None:
        """The guild's shard, or None while the count is left to Discord."""
        return None if self.count is None else shard_of(guild_id, self.count)

    def claims(self) -> tuple[int, ...]:
        """The shard ids to claim in the database at start-up, in order.

        With the count left to Discord this process runs every shard, whatever the count:
        it claims shard 0, which every other process on the database would claim too.
        """
        if self.count is None:
            return (0,)
        if self.ids is None:
            return tuple(range(self.count))
        return tuple(sorted(self.ids))

    def __str__(self) -> str:
        if self.count is None:
            return "every shard (count chosen by Discord)"
        if self.ids is None:
            return f"every shard of {self.count}"
        return f"shards {describe_ids(self.ids)} of {self.count}"
