"""One paced lane for every REST request that counts against Discord's global limit.

Discord allows a bot token 50 requests a second across all its processes; interaction
answers are exempt, everything else (table edits after computer moves and timers, living
DMs, turn pings, deleting reminders) goes through this lane:

- **Latest state wins.** Work is put under a key naming its target (a table's message, a
  player's DM): a key has at most one pending piece of work, and a newer one replaces it.
  The work reads the state when it runs, so a burst of changes costs one request. Work
  for a key that is running waits for it, so one target's requests never overtake each
  other.
- **Paced.** A token bucket lets at most ``rate`` requests a second start (with a burst
  of a tenth of a second's worth), below the global limit, so Discord never answers 429.
- **Priorities.** When a token is free, the most urgent pending work starts: the public
  table of a game, then turn pings, then living DMs, then cosmetic work. Under overload
  the lower priorities slow down; nothing is dropped, and a key's latest state goes out
  in the end.
- **Groups.** Work put in a group whose in-flight limit is set (``limit_group``) waits
  while that many of the group run, and other work starts past it: opening DM channels,
  whose route bucket discord.py can only keep exactly with one request in flight, goes
  one at a time without holding up table edits.

The clock and sleep are injectable, so tests run the lane on a fake clock.

Usage::

    lane = Lane(rate=45.0)
    lane.put(("dm", table_id, player), Priority.DM, edit_the_dm)  # not awaited
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar

from bot import metrics

log = logging.getLogger(__name__)

# Requests a second by default: below Discord's 50, leaving room for what does not go
# through the lane (command syncs, fetching a message after an answer).
DEFAULT_RATE = 45.0
# Requests in flight at once. Discord answers in tens of milliseconds, but discord.py holds
# a request that waits out its route's bucket (5 edits per 5 s of one channel): enough
# slots that such waits do not idle the lane.
IN_FLIGHT = 64
# Rounding in the bucket's refill is forgiven up to this much (else a wait of 1e-18 s,
# which a clock cannot tell from none, would never end).
TOKEN_SLACK = 1e-6
# How often a lane whose pending work is all held back by the guard looks again.
HELD_BACK_POLL = 1.0
# How often `done_with` looks whether a key's work is done.
DONE_POLL = 0.05

Work = Callable[[], Awaitable[object]]
R = TypeVar("R")


class Priority(IntEnum):
    """What goes first when the lane is busy (lower is more urgent)."""

    TABLE = 1  # the public table message of a game
    PING = 2  # turn reminders that notify people
    DM = 3  # living DMs (the interaction answer "My chips" is always exact meanwhile)
    COSMETIC = 4  # deleting reminders, pointing old copies to the table


@dataclass(slots=True)
class _Job:
    key: Hashable
    priority: Priority
    work: Work
    cost: int
    due: float
    group: Hashable | None = None


class Lane:
    """Paced, prioritised, coalescing outbound work (see the module's docstring)."""

    def __init__(
        self,
        rate: float = DEFAULT_RATE,
        *,
        in_flight: int = IN_FLIGHT,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[object]] | None = None,
    ) -> None:
        if rate <= 0:
            raise ValueError("the lane's rate must be positive")
        self.rate = rate
        self.burst = max(1.0, rate / 10)
        self.in_flight = in_flight
        self._clock = clock
        self._sleep = sleep or asyncio.sleep
        self._tokens = self.burst
        self._filled_at: float | None = None
        # Pending work by priority, each in the order its key was first put (FIFO).
        self._queues: dict[Priority, dict[Hashable, _Job]] = {p: {} for p in Priority}
        self._running: dict[Hashable, asyncio.Task[None]] = {}
        self._held: dict[Hashable, _Job] = {}  # put while its key was running
        self._ceiling: Callable[[], int] = lambda: Priority.COSMETIC
        self._napping: asyncio.Task[None] | None = None  # the dispatcher, asleep till due
        self._idle = asyncio.Event()
        self._idle.set()
        self._dispatcher: asyncio.Task[Any] | None = None
        self._group_limits: dict[Hashable, int] = {}
        self._group_running: dict[Hashable, int] = {}
        self.started: dict[Priority, int] = dict.fromkeys(Priority, 0)

    # -- putting work -----------------------------------------------------------------------

    def put(
        self,
        key: Hashable,
        priority: Priority,
        work: Work,
        *,
        cost: int = 1,
        delay: float = 0.0,
        group: Hashable | None = None,
    ) -> None:
        """Queue ``work`` (``cost`` requests) for ``key``, replacing any pending work for it.

        The replaced work is dropped: the newer work shows the state as it is when it runs.
        ``delay`` holds it back that long (a retry); a sooner put for the key wins. Work in a
        ``group`` also waits for the group's in-flight limit (``limit_group``).
        """
        job = _Job(key, priority, work, cost, self._now() + delay, group)
        if key in self._running:
            self._held[key] = self._merged(self._held.get(key), job)
        else:
            self._enqueue(job)
        self._idle.clear()
        self._kick()

    async def call(self, key: Hashable, priority: Priority, work: Callable[[], Awaitable[R]]) -> R:
        """Put ``work`` in the lane and wait for its result (or its error).

        For a request whose answer the caller needs (a thread to post in). ``key`` must name
        this request alone: a put under the same key would replace it.
        """
        done: asyncio.Future[R] = asyncio.get_running_loop().create_future()

        async def run() -> None:
            try:
                result = await work()
            except Exception as error:
                if not done.done():
                    done.set_exception(error)
            else:
                if not done.done():
                    done.set_result(result)

        self.put(key, priority, run)
        return await done

    def limit_to(self, ceiling: Callable[[], int]) -> None:
        """Only start work of priorities up to what ``ceiling`` says (0: none); the rest waits.

        The ceiling is asked before each start, and every second while it holds work back.
        """
        self._ceiling = ceiling
        if self.pending:
            self._kick()

    def limit_group(self, group: Hashable, in_flight: int) -> None:
        """Let at most ``in_flight`` pieces of work of ``group`` run at once."""
        if in_flight < 1:
            raise ValueError("a group needs room for one piece of work in flight")
        self._group_limits[group] = in_flight

    def running_in(self, group: Hashable) -> int:
        """How many pieces of work of a group are in flight."""
        return self._group_running.get(group, 0)

    @property
    def pending(self) -> int:
        """How many keys have work waiting (not counting work in flight)."""
        return sum(len(queue) for queue in self._queues.values()) + len(self._held)

    def busy(self, key: Hashable) -> bool:
        """Whether a key has work waiting or in flight (work that must go before another's)."""
        return (
            key in self._running
            or key in self._held
            or any(key in queue for queue in self._queues.values())
        )

    def pending_at(self, priority: Priority) -> int:
        """How many keys of one priority have work waiting to start."""
        return len(self._queues[priority])

    async def done_with(self, key: Hashable) -> None:
        """Wait until a key has no work waiting or in flight (a retry put meanwhile is
        waited for too). The caller bounds the wait: a key's work may be held back long.

        It looks every DONE_POLL seconds with the lane's sleep, a wait a fake or virtual
        clock can drive (the few callers wait for a person's command, not per click).
        """
        while self.busy(key):
            await self._sleep(DONE_POLL)

    async def idle(self) -> None:
        """Wait until nothing is pending or in flight."""
        await self._idle.wait()

    def close(self) -> None:
        """Stop: pending work is dropped (the restart's refresh shows every table again)."""
        if self._dispatcher is not None:
            self._dispatcher.cancel()
        for task in self._running.values():
            task.cancel()
        for queue in self._queues.values():
            queue.clear()
        self._held.clear()

    # -- inside -----------------------------------------------------------------------------

    def _now(self) -> float:
        if self._clock is not None:
            return self._clock()
        return asyncio.get_running_loop().time()

    @staticmethod
    def _merged(old: _Job | None, new: _Job) -> _Job:
        """The newer work, as urgent and as soon as the more urgent and sooner of the two."""
        if old is not None:
            new.priority = min(old.priority, new.priority)
            new.due = min(old.due, new.due)
        return new

    def _enqueue(self, job: _Job) -> None:
        for priority, queue in self._queues.items():
            old = queue.get(job.key)
            if old is None:
                continue
            job = self._merged(old, job)
            if priority == job.priority:
                queue[job.key] = job  # keeps its place in the queue
                return
            del queue[job.key]
            break
        self._queues[job.priority][job.key] = job

    def _peek(self, now: float) -> tuple[_Job | None, float | None]:
        """The most urgent due job allowed now, else when to look again."""
        ceiling = self._ceiling()
        look_again: float | None = None
        for priority, queue in self._queues.items():
            if not queue:
                continue
            if priority > ceiling:
                look_again = HELD_BACK_POLL if look_again is None else look_again
                continue
            for job in queue.values():
                if job.group is not None and self._group_full(job.group):
                    continue  # a finishing job of the group kicks the dispatcher again
                if job.due <= now:
                    return job, None
                wait = job.due - now
                look_again = wait if look_again is None else min(look_again, wait)
        return None, look_again

    def _group_full(self, group: Hashable) -> bool:
        limit = self._group_limits.get(group)
        return limit is not None and self._group_running.get(group, 0) >= limit

    def _fill(self, now: float) -> None:
        if self._filled_at is not None:
            self._tokens = min(self.burst, self._tokens + (now - self._filled_at) * self.rate)
        self._filled_at = now

    def _kick(self) -> None:
        """Make sure a dispatcher runs (one napping until later work is due starts over).

        The dispatcher ends whenever it has nothing to start now and nothing to wait for,
        so an idle lane leaves no task waiting forever; putting work and finishing work
        kick it again.
        """
        dispatcher = self._dispatcher
        if dispatcher is not None and not dispatcher.done():
            if self._napping is not dispatcher:
                return
            dispatcher.cancel()  # it sleeps until later work is due: this may be due now
        self._napping = None
        self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch())

    async def _dispatch(self) -> None:
        while len(self._running) < self.in_flight:  # else a finishing job kicks it again
            now = self._now()
            self._fill(now)
            job, look_again = self._peek(now)
            if job is None:
                if look_again is None:
                    if not self._running:
                        self._idle.set()
                    return
                self._napping = asyncio.current_task()
                try:
                    await self._sleep(look_again)
                finally:
                    if self._napping is asyncio.current_task():
                        self._napping = None
                continue
            # Work costing more than the burst starts on a full bucket and overdraws it.
            needed = min(job.cost, self.burst)
            if self._tokens < needed - TOKEN_SLACK:
                # Not yet: wait for the tokens, then choose again (something more urgent
                # may have come meanwhile).
                await self._sleep((needed - self._tokens) / self.rate)
                continue
            del self._queues[job.priority][job.key]
            self._tokens -= job.cost
            self.started[job.priority] += 1
            if job.priority is Priority.DM:
                metrics.dm_waited(now - job.due)
            if job.group is not None:
                self._group_running[job.group] = self._group_running.get(job.group, 0) + 1
            self._running[job.key] = asyncio.get_running_loop().create_task(self._run(job))

    async def _run(self, job: _Job) -> None:
        try:
            await job.work()
        except asyncio.CancelledError:
            raise
        except Exception:
            # Each piece of work logs what it expects; this is the one it did not.
            log.exception("outbound work for %r failed", job.key)
        finally:
            del self._running[job.key]
            if job.group is not None:
                self._group_running[job.group] -= 1
            held = self._held.pop(job.key, None)
            if held is not None:
                self._enqueue(held)
            if self.pending:
                self._kick()
            elif not self._running:
                self._idle.set()


class SendGate:
    """The rate, kept where requests leave: each request counted against the global
    limit waits here for a token just before it is sent.

    The lane paces when work starts, but discord.py may hold a started request (its
    route's bucket is spent) and release several at once; and a few requests are not the
    lane's (command syncs, a message fetched after an answer). The gate keeps them all
    under the rate, in the order they came.

    Usage::

        gate = SendGate(45.0)
        await gate.take()  # from aiohttp's on_request_start (see guard.trace_config)
    """

    def __init__(
        self,
        rate: float,
        *,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[object]] | None = None,
    ) -> None:
        self.rate = rate
        # No burst: evenly spaced sends leave room for the jitter of the network, so at
        # most rate + 1 arrive in any second.
        self.burst = 1.0
        self._clock = clock
        self._sleep = sleep or asyncio.sleep
        self._tokens = self.burst
        self._filled_at: float | None = None
        self._turn = asyncio.Lock()  # first come, first served
        self._urgent = 0  # urgent requests waiting (they go first)

    async def take(self, *, urgent: bool = False) -> None:
        """Wait until one more request may leave; an ``urgent`` one goes before the queue.

        Opening a DM channel is urgent: the lane opens one at a time, and every DM of a
        player waits for it, so behind a queue of edits held by their buckets the
        openings at a wave of new players took more than a minute.
        """
        if urgent:
            self._urgent += 1
            try:
                while not self._took():
                    await self._sleep((1.0 - self._tokens) / self.rate)
            finally:
                self._urgent -= 1
            return
        async with self._turn:
            while self._urgent or not self._took():
                await self._sleep(max(1.0 - self._tokens, 0.0) / self.rate or 1.0 / self.rate)

    def _took(self) -> bool:
        """Refill, and take a token if there is one."""
        now = self._clock() if self._clock is not None else asyncio.get_running_loop().time()
        if self._filled_at is not None:
            elapsed = now - self._filled_at
            self._tokens = min(self.burst, self._tokens + elapsed * self.rate)
        self._filled_at = now
        if self._tokens >= 1.0 - TOKEN_SLACK:
            self._tokens -= 1.0
            return True
        return False
