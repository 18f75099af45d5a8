"""A move's REST calls on http1: Discord's answers handled as discord.py handles them,
rate limits learnt from its headers, and the living DM's edit made through them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import discord
import pytest
from aiohttp import web
from discord.http import HTTPClient

import bot.client.transport.rest as rest
from bot.client.publishing import DiscordPublisher
from bot.client.transport.http1 import Http1Client
from tests.client.loopback import serve_as_discord

Answer = tuple[int, dict[str, Any] | None, dict[str, str]]


class DiscordServer:
    """A loopback server for message edits, answering with the answers it is given."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.seen: list[tuple[str, str, dict[str, str], bytes, float]] = []
        self.port = 0
        self.delay = 0.0  # seconds before each answer

    async def edit(self, request: web.Request) -> web.Response:
        """Record the request (and when it came); answer with the next answer (200)."""
        loop = asyncio.get_running_loop()
        body = await request.read()
        self.seen.append((request.method, request.path, dict(request.headers), body, loop.time()))
        await asyncio.sleep(self.delay)
        status, data, headers = self.answers.pop(0) if self.answers else (200, {"id": "1"}, {})
        if data is None:
            return web.Response(status=status, headers=headers)
        headers = {"Content-Type": "application/json", **headers}
        return web.Response(body=json.dumps(data).encode(), status=status, headers=headers)

    def url(self, channel_id: int = 5, message_id: int = 6) -> str:
        """A message's URL on this server."""
        return f"http://127.0.0.1:{self.port}/api/v10/channels/{channel_id}/messages/{message_id}"


@pytest.fixture
async def discord_server(
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Callable[..., Awaitable[DiscordServer]]]:
    """Start a DiscordServer, with discord.py's routes pointed at it; backoff cut short."""
    runners: list[web.AppRunner] = []
    monkeypatch.setattr("bot.client.transport.rest._backoff", lambda attempt: 0.01)

    async def make(*answers: Answer) -> DiscordServer:
        server = DiscordServer(list(answers))
        app = web.Application()
        app.router.add_patch("/api/v10/channels/{channel}/messages/{message}", server.edit)
        runner, server.port = await serve_as_discord(app, monkeypatch)
        runners.append(runner)
        return server

    yield make
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
async def wire() -> AsyncIterator[Http1Client]:
    """A keep-alive client, closed after the test."""
    client = Http1Client()
    yield client
    client.close()


async def patch(wire: Http1Client, url: str, limits: rest.RateLimits, bucket: str = "b") -> Any:
    """One JSON PATCH through rest.call, given ten seconds."""
    return await rest.call(
        wire,
        "PATCH",
        url,
        body=b'{"content": "x"}',
        headers=rest.json_headers("DiscordBot (test)", "abc"),
        give_up_at=asyncio.get_running_loop().time() + 10.0,
        limits=limits,
        bucket=bucket,
    )


async def test_a_spent_bucket_waits_for_its_reset(
    discord_server: Callable[..., Awaitable[DiscordServer]], wire: Http1Client
) -> None:
    """X-RateLimit-Remaining 0: the bucket's next request waits X-RateLimit-Reset-After;
    another bucket does not wait."""
    spent = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": "0.3"}
    server = await discord_server((200, {"id": "1"}, spent))
    limits = rest.RateLimits()
    await patch(wire, server.url(), limits, "one")
    await patch(wire, server.url(), limits, "two")
    await patch(wire, server.url(), limits, "one")
    first, other, again = (seen[4] for seen in server.seen)
    assert other - first < 0.2 and again - first >= 0.29


async def test_a_rate_limited_request_is_retried_after_its_wait(
    discord_server: Callable[..., Awaitable[DiscordServer]], wire: Http1Client
) -> None:
    """Discord's 429 (Via set): waited out, then the same request again; a global one
    holds every bucket."""
    limited = (429, {"retry_after": 0.2, "global": True, "message": "slow"}, {"Via": "1.1 google"})
    server = await discord_server(limited)
    limits = rest.RateLimits()
    response = await patch(wire, server.url(), limits, "one")
    assert response.status == 200 and len(server.seen) == 2
    assert server.seen[1][4] - server.seen[0][4] >= 0.19
    assert limits.global_until > 0


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ((404, {"message": "Unknown Message", "code": 10008}, {}), discord.NotFound),
        ((403, {"message": "Cannot send messages", "code": 50007}, {}), discord.Forbidden),
        ((429, {"message": "banned"}, {}), discord.HTTPException),  # Cloudflare's: no Via
    ],
    ids=["404", "403", "429-cloudflare"],
)
async def test_a_refusal_is_raised_as_discord_pys_error(
    discord_server: Callable[..., Awaitable[DiscordServer]],
    wire: Http1Client,
    answer: Answer,
    error: type,
) -> None:
    """A refusal: raised once, as the exception discord.py raises, with its status and code."""
    server = await discord_server(answer)
    with pytest.raises(error) as raised:
        await patch(wire, server.url(), rest.RateLimits())
    assert raised.type is error and raised.value.status == answer[0]
    assert raised.value.code == (answer[1] or {}).get("code", 0)
    assert len(server.seen) == 1


async def test_a_server_error_is_retried(
    discord_server: Callable[..., Awaitable[DiscordServer]], wire: Http1Client
) -> None:
    """A 502 then a 200: two requests, no error."""
    server = await discord_server((502, {"message": "bad gateway"}, {}))
    response = await patch(wire, server.url(), rest.RateLimits())
    assert response.status == 200 and len(server.seen) == 2


def publisher_on(wire: Http1Client, closed: list[str]) -> DiscordPublisher:
    """A publisher whose bot has discord.py's real HTTP client (logged in as "abc")."""
    http = HTTPClient(asyncio.get_running_loop())
    http.token = "abc"

    async def note_dm_closed(session: Any, player: str) -> None:
        closed.append(player)

    bot = SimpleNamespace(
        http=http,
        http1=wire,
        allowed_mentions=discord.AllowedMentions.none(),
        tables=SimpleNamespace(note_dm_closed=note_dm_closed),
    )
    return DiscordPublisher(bot)  # type: ignore[arg-type]


def session_with_dm() -> Any:
    """A table whose player "7" has a living DM (channel 5, message 6)."""
    return SimpleNamespace(id=3, meta=SimpleNamespace(dm_messages={"7": [5, 6]}))


async def test_the_living_dm_is_edited_on_the_keep_alive_wire(
    discord_server: Callable[..., Awaitable[DiscordServer]], wire: Http1Client
) -> None:
    """With discord.py's real HTTP client, the edit is one PATCH of the text with the bot's
    token, pinging nobody, on bot.client.transport.http1's connections."""
    server = await discord_server()
    publisher = publisher_on(wire, [])
    assert await publisher.dms._edit_living(session_with_dm(), "7", "🪙 8 chips")
    ((method, path, headers, body, _),) = server.seen
    assert (method, path) == ("PATCH", "/api/v10/channels/5/messages/6")
    assert headers["Authorization"] == "Bot abc"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == {
        "content": "🪙 8 chips",
        "tts": False,
        "allowed_mentions": {"parse": []},
    }
    assert wire.open_connections == 1


@pytest.mark.parametrize(
    ("answer", "edited", "closed"),
    [
        ((404, {"message": "Unknown Message", "code": 10008}, {}), False, []),
        ((403, {"message": "Cannot send messages", "code": 50007}, {}), True, ["7"]),
        ((400, {"message": "Invalid Form Body", "code": 50035}, {}), True, []),
    ],
    ids=["deleted", "closed", "refused"],
)
async def test_a_refused_living_dm_edit(
    discord_server: Callable[..., Awaitable[DiscordServer]],
    wire: Http1Client,
    answer: Answer,
    edited: bool,
    closed: list[str],
) -> None:
    """A deleted DM is sent again (False); closed DMs are noted; another refusal is logged
    and the DM left as it is."""
    await discord_server(answer)
    noted: list[str] = []
    publisher = publisher_on(wire, noted)
    assert await publisher.dms._edit_living(session_with_dm(), "7", "x") is edited
    assert noted == closed


async def test_a_living_dm_edit_that_hangs_gives_up(
    discord_server: Callable[..., Awaitable[DiscordServer]],
    wire: Http1Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No answer within DM_EDIT_TIMEOUT: logged and given up (the next move edits again)."""
    monkeypatch.setattr("bot.client.publishing.dms.DM_EDIT_TIMEOUT", 0.1)
    server = await discord_server()
    server.delay = 1.0
    publisher = publisher_on(wire, [])
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await publisher.dms._edit_living(session_with_dm(), "7", "x")
    assert len(server.seen) == 1 and loop.time() - started < 0.5
