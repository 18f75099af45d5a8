"""The invalid-request guard: Discord's 401, 403 and 429 answers over a sliding 10 minutes.

10,000 of them in 10 minutes from one IP address (429s of scope ``shared`` excepted)
bring a Cloudflare ban of several hours, which stops every shard on that address. Well
before that, the guard holds back the lane's lower priorities (logging an error), so the
table messages keep going while whatever draws the refusals stops. A 401 to a request
made with the bot's token means the token was revoked or reset: nothing can work, so the
bot stops with one clear line.

It sees every answer through an aiohttp trace on discord.py's session (`trace_config`),
which also holds each request with the bot's token at the `SendGate` until it may leave.

Usage::

    guard = InvalidRequests(on_revoked=bot.stop_for_revoked_token)
    lane.limit_to(guard.ceiling)
    bot = commands.Bot(..., http_trace=guard.trace_config(SendGate(45.0)))
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable
from typing import Any

import aiohttp

from bot import metrics
from bot.client.outbound.lane import Priority, SendGate

log = logging.getLogger(__name__)

WINDOW = 600.0  # seconds Discord counts invalid requests over
BAN_AT = 10_000
# (refusals in the window, the least urgent priority still sent): each level logged once.
LEVELS = ((500, Priority.PING), (2_000, Priority.TABLE), (5_000, 0))
INVALID = frozenset((401, 403, 429))
# Opening a DM channel: sent before the queue at the gate (see SendGate.take).
DM_OPEN_PATH = "/users/@me/channels"


class InvalidRequests:
    """Counts refused requests and says how much of the lane may run (see the module)."""

    def __init__(
        self,
        *,
        on_revoked: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.on_revoked = on_revoked
        self._clock = clock
        self._times: collections.deque[float] = collections.deque()
        self._level = -1  # index into LEVELS reached, -1 for none
        self.revoked = False

    @property
    def count(self) -> int:
        """Refused requests in the last WINDOW seconds."""
        self._forget(self._clock())
        return len(self._times)

    @property
    def level(self) -> int:
        """The level reached (an index into LEVELS), -1 while nothing is held back."""
        return self._level

    def _forget(self, now: float) -> None:
        times = self._times
        while times and times[0] <= now - WINDOW:
            times.popleft()

    def note(self, status: int, *, scope: str | None = None, authorized: bool = True) -> None:
        """Count one answer (only 401, 403 and 429 other than ``shared`` ones count)."""
        if status not in INVALID or (status == 429 and scope == "shared"):
            return
        if status == 401 and authorized and not self.revoked:
            self.revoked = True
            self.on_revoked()
        now = self._clock()
        self._times.append(now)
        self._forget(now)
        self._update_level()

    def ceiling(self) -> int:
        """The least urgent priority the lane may send now (0: none)."""
        self._forget(self._clock())
        self._update_level()
        return Priority.COSMETIC if self._level < 0 else LEVELS[self._level][1]

    def _update_level(self) -> None:
        count = len(self._times)
        level = -1
        for index, (threshold, _) in enumerate(LEVELS):
            if count >= threshold:
                level = index
        if level > self._level:
            threshold, ceiling = LEVELS[level]
            held = [p.name.lower() for p in Priority if p > ceiling]
            log.error(
                "Discord refused %d requests (401/403/429) in the last %d minutes, %d bring a "
                "ban of the IP address: holding back %s until they drop below %d",
                count,
                int(WINDOW // 60),
                BAN_AT,
                ", ".join(held),
                threshold,
            )
        elif level < self._level:
            log.warning("refused requests back down to %d in %d minutes", count, WINDOW // 60)
        self._level = level

    def trace_config(self, gate: SendGate | None = None) -> aiohttp.TraceConfig:
        """An aiohttp trace that notes every answer of discord.py's session, and holds each
        request made with the bot's token at the ``gate`` until it may leave."""
        trace = aiohttp.TraceConfig()

        async def on_request_start(
            session: aiohttp.ClientSession, context: Any, params: aiohttp.TraceRequestStartParams
        ) -> None:
            # Interaction answers carry no bot token: exempt from the global limit.
            if gate is not None and "Authorization" in params.headers:
                await gate.take(urgent=params.url.path.endswith(DM_OPEN_PATH))
                metrics.rest_sent()

        async def on_request_end(
            session: aiohttp.ClientSession, context: Any, params: aiohttp.TraceRequestEndParams
        ) -> None:
            response = params.response
            metrics.rest_answer(response.status, response.headers.get("X-RateLimit-Scope"))
            # A 401 without the bot's token is an interaction's or webhook's (a stale token
            # of a click): it says nothing of the bot's own token.
            self.note(
                response.status,
                scope=response.headers.get("X-RateLimit-Scope"),
                authorized="Authorization" in params.headers,
            )

        trace.on_request_start.append(on_request_start)
        trace.on_request_end.append(on_request_end)
        return trace
