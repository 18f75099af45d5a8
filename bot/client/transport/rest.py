"""A move's REST calls to Discord on http1, answered as discord.py answers them.

A rate limit is waited out and retried (unless it is Cloudflare's), a 5xx or a reset
connection retried after discord.py's backoff, and any other refusal raised as discord.py's
own exception (Forbidden, NotFound, HTTPException, DiscordServerError), so callers handle
errors exactly as they would from ``bot.http``. Everything ends by ``give_up_at``: a retry
that would end later raises the error it answers instead.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any, cast

import discord

from bot.client.transport.http1 import Http1Client, Response

log = logging.getLogger(__name__)

# Tries of a request Discord answered with a 5xx or whose connection was reset (as
# discord.py).
TRIES = 5
# Buckets remembered as spent at most; past it, those whose wait is over are forgotten.
BUCKETS_KEPT = 4096


def _backoff(attempt: int) -> float:
    """Seconds to wait before retrying a failed request (as discord.py)."""
    return 1 + attempt * 2


def _retry_after(response: Response, data: Any) -> float:
    """Seconds a 429 asks to wait: its body's retry_after, else its Retry-After header."""
    if isinstance(data, dict) and "retry_after" in data:
        return float(data["retry_after"])
    return float(response.header("Retry-After") or 1.0)


@functools.lru_cache(maxsize=8)
def json_headers(user_agent: str, token: str | None = None) -> bytes:
    """The header lines of a JSON request from this bot (with its token, if given)."""
    lines = b"Content-Type: application/json\r\nUser-Agent: %s\r\n" % user_agent.encode()
    if token is not None:
        lines += b"Authorization: Bot %s\r\n" % token.encode()
    return lines


class RateLimits:
    """When Discord lets each bucket (and the bot as a whole) make its next request.

    Learnt from its answers, as discord.py learns them: a bucket whose
    ``X-RateLimit-Remaining`` reached 0 waits ``X-RateLimit-Reset-After``; a 429 makes its
    bucket, or for a global one every bucket, wait its ``retry_after``. They are apart
    from discord.py's own: the buckets of these calls are theirs alone (an interaction
    callback has none, and DMs are edited only here), and a global limit that one of the
    two meets, the other meets at its next request and waits out the same way.
    """

    def __init__(self) -> None:
        self._until: dict[str, float] = {}
        self.global_until = 0.0

    async def wait(self, bucket: str) -> None:
        """Sleep until the bucket may be used."""
        loop = asyncio.get_running_loop()
        until = max(self._until.get(bucket, 0.0), self.global_until)
        delay = until - loop.time()
        if delay > 0:
            log.debug("waiting %.2f s for rate limit bucket %s", delay, bucket)
            await asyncio.sleep(delay)

    def learn(self, bucket: str, response: Response) -> None:
        """Note what an answer says of its bucket."""
        if response.header("X-RateLimit-Remaining") != "0":
            self._until.pop(bucket, None)
            return
        reset_after = float(response.header("X-RateLimit-Reset-After") or 0.0)
        self.hold(bucket, reset_after)

    def hold(self, bucket: str, seconds: float, *, everywhere: bool = False) -> None:
        """Make the bucket (or, ``everywhere``, the bot) wait this long before its next
        request."""
        now = asyncio.get_running_loop().time()
        until = now + seconds
        if everywhere:
            self.global_until = max(self.global_until, until)
            return
        if len(self._until) >= BUCKETS_KEPT:
            self._until = {key: at for key, at in self._until.items() if at > now}
        self._until[bucket] = until


async def call(
    wire: Http1Client,
    method: str,
    url: str,
    *,
    body: bytes,
    headers: bytes,
    give_up_at: float,
    limits: RateLimits | None = None,
    bucket: str = "",
) -> Response:
    """Make a request to Discord: its answer (a 2xx), else discord.py's error.

    ``bucket`` names what is asked (in logs: never the URL, which may hold a token); with
    ``limits``, the request waits for that bucket first and teaches it the answer.
    """
    loop = asyncio.get_running_loop()
    response: Response | None = None
    data: Any = None
    for attempt in range(TRIES):
        if limits is not None:
            await limits.wait(bucket)
        try:
            async with asyncio.timeout_at(give_up_at):
                response = await wire.request(method, url, body=body, headers=headers)
        except OSError as error:
            retry = attempt < TRIES - 1 and error.errno in (54, 10054)
            if retry and loop.time() + _backoff(attempt) <= give_up_at:
                await asyncio.sleep(_backoff(attempt))
                continue
            raise
        status = response.status
        if limits is not None:
            limits.learn(bucket, response)
        if 200 <= status < 300:
            return response
        data = response.json_or_text()
        # discord.py's errors read the status and reason of the answer they are given.
        answer = cast(Any, response)
        if status == 429:
            if not response.header("Via"):
                raise discord.HTTPException(answer, data)  # Cloudflare's, not Discord's
            retry_after = _retry_after(response, data)
            if loop.time() + retry_after > give_up_at:
                raise discord.HTTPException(answer, data)
            log.warning("%s is rate limited; retrying in %.2f s", bucket, retry_after)
            if limits is None:
                await asyncio.sleep(retry_after)
            else:  # the next try waits for it, as every other request of the bucket does
                everywhere = isinstance(data, dict) and bool(data.get("global"))
                limits.hold(bucket, retry_after, everywhere=everywhere)
            continue
        if status >= 500:
            if loop.time() + _backoff(attempt) > give_up_at:
                raise discord.DiscordServerError(answer, data)
            await asyncio.sleep(_backoff(attempt))
            continue
        if status == 403:
            raise discord.Forbidden(answer, data)
        if status == 404:
            raise discord.NotFound(answer, data)
        raise discord.HTTPException(answer, data)
    assert response is not None
    if response.status >= 500:
        raise discord.DiscordServerError(cast(Any, response), data)
    raise discord.HTTPException(cast(Any, response), data)
