"""SimCord on virtual time only: the bot's timers never wait on the wall clock in a test.

SimCord runs the bot on a virtual clock (`loop.time()`, `time.monotonic()` and
`discord.utils.utcnow()` read it inside the bot), but its `settle()` after every action
still waits *in real time* for any timer due before its deadline (5 s): each timer keeps
a wall-clock fallback, and settle only parks a sleep that would wake after its deadline.
So a computer's two-second pause, a DM held 1.25 s to spare the channel's rate limit, or a
retry backoff each cost that many real seconds, and a test of a 113-move game waited a
minute for nothing.

`VirtualTimeEnv` keeps SimCord's model and removes the wait:
- An action (a click, a slash command, `settle()`) runs the bot's work as SimCord does, then
  moves the virtual clock to the next timer due within its window (`window`, by default
  `settle_timeout`: 5 virtual seconds from the action), settles again, and so on. What
  was due within the window fires in order, as it did; what was due later stays parked,
  as it did, until the test moves the clock (`advance_time`) or a later action's window
  reaches it.
- A timer has no wall-clock fallback: the clock moves only when the test acts, so what a
  test sees never depends on how busy the machine is.
- Real work still takes real time: a thread (aiosqlite, the picture pool), a worker
  process or a socket is waited for, within `settle_timeout` real seconds per step.

Usage::

    env = VirtualTimeEnv(bot, shard_count=1)
    await env.start()
    await member.click(message, label="Take")  # the computers' pauses pass in no time
    await env.advance_time(60)                  # a turn timer fires, in no time
"""

from __future__ import annotations

import asyncio
from typing import Any

from simcord import Env
from simcord._settlement import _next_virtual_timer


class VirtualTimeEnv(Env):
    """SimCord's Env whose settle moves the virtual clock instead of waiting on the wall."""

    def __init__(self, bot: Any, *, window: float | None = None, **options: Any) -> None:
        """``window``: how far an action moves the clock by itself (default: SimCord's
        settle_timeout, 5 s); 0 moves it only through ``advance_time``, for a test that
        watches what happens before a short timer fires."""
        super().__init__(bot, **options)
        self.window = self.settle_timeout if window is None else window

    # How often settle looks again while the bot waits on something real (a thread, a
    # process). SimCord's default, 50 ms, was also spent whenever only its own bookkeeping
    # callback was left to run: 50 ms on most clicks, half a Rage game's time.
    poll = 0.002

    def _schedule_timer(
        self, record: Any, callback: Any, args: tuple[Any, ...], schedule_context: Any
    ) -> None:
        """Track the timer as SimCord does, without its wall-clock fallback."""
        super()._schedule_timer(record, callback, args, schedule_context)  # type: ignore[misc]
        real = record.real_handle
        if real is not None:
            real.cancel()
            record.real_handle = None

    def _next_due(self) -> float | None:
        """The virtual instant of the next timer or resource deadline, if any."""
        instants = [
            instant
            for instant in (
                _next_virtual_timer(self._settlement_state()),  # type: ignore[attr-defined]
                self._next_resource_deadline(),  # type: ignore[attr-defined]
            )
            if instant is not None
        ]
        return min(instants, default=None)

    async def _settle_internal(
        self,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        idle: float = 0.05,
        dispatch: str | None = None,
        _deadline: float | None = None,
    ) -> None:
        idle = min(idle, self.poll)
        if _deadline is not None or self._advancing:  # type: ignore[has-type]
            # A step of advance_time's own: settle exactly as SimCord does.
            await super()._settle_internal(  # type: ignore[misc]
                timeout=timeout, idle=idle, dispatch=dispatch, _deadline=_deadline
            )
            return
        limit = self.settle_timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        horizon = self._virtual_time + self.window  # type: ignore[attr-defined]
        # While "advancing", SimCord parks every timer not yet due instead of waiting for it.
        self._advance_task = asyncio.current_task()
        self._advancing = True
        try:
            while True:
                await super()._settle_internal(  # type: ignore[misc]
                    timeout=timeout, idle=idle, dispatch=dispatch, _deadline=loop.time() + limit
                )
                due = self._next_due()
                if due is None or due > horizon:
                    return
                self._move_clock(max(self._virtual_time, due))  # type: ignore[attr-defined]
        finally:
            self._advancing = False
            self._advance_task = None
