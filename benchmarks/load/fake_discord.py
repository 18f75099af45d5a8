"""A small fake Discord for load tests: the REST routes and the gateway a bot uses.

It is an aiohttp server on loopback. A bot whose discord.py points at it (see
``bot_process.py``) logs in, identifies on the gateway, receives READY and one
GUILD_CREATE per guild (each guild one text channel), and is then sent
INTERACTION_CREATE events by the load driver. Every interaction callback, webhook edit,
channel message and DM is answered the way Discord would answer it (the message echoed
back, with an id); the driver is told of each interaction callback as it arrives.
Nothing here is cardtable-specific: it serves any discord.py bot.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, WSMsgType, web

log = logging.getLogger("fake_discord")

DISCORD_EPOCH_MS = 1_420_070_400_000
APPLICATION_ID = 990_000_000_000_000_001
BOT_USER = {
    "id": str(APPLICATION_ID),
    "username": "cardtable",
    "discriminator": "0",
    "global_name": None,
    "avatar": None,
    "bot": True,
    "flags": 0,
}
TIMESTAMP = "2026-01-01T00:00:00.000000+00:00"
EVERY_PERMISSION = str((1 << 50) - 1)
HEARTBEAT_MS = 41_250
EPHEMERAL = 64
# No rate limits: without these headers discord.py sends one request per route at a time.
# A 204 carries no body, so no content type: discord.py would try to parse "" as JSON.
NO_CONTENT_HEADERS = {
    "X-RateLimit-Limit": "1000000",
    "X-RateLimit-Remaining": "999999",
    "X-RateLimit-Reset-After": "1",
    "X-RateLimit-Bucket": "fake-unlimited",
}
HEADERS = {
    "Content-Type": "application/json",
    "X-RateLimit-Limit": "1000000",
    "X-RateLimit-Remaining": "999999",
    "X-RateLimit-Reset-After": "1",
    "X-RateLimit-Bucket": "fake-unlimited",
}


DM_MESSAGE = re.compile(r"^/api/v10/channels/(\d+)/messages(?:/\d+)?$")


def snowflake_at(ms: int, counter: int = 0) -> int:
    """A Discord id made at this Unix time in ms (the counter fills the low bits)."""
    return ((ms - DISCORD_EPOCH_MS) << 22) | (counter & 0x3FFFFF)


def shard_of(guild_id: int, shard_count: int) -> int:
    """The shard Discord sends a guild's events on."""
    return (guild_id >> 22) % shard_count


@dataclass
class FakeGuild:
    """One server with one text channel."""

    id: int
    channel_id: int
    name: str

    def create_payload(self) -> dict[str, Any]:
        """The guild as GUILD_CREATE carries it."""
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "owner_id": "1",
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "features": [],
            "emojis": [],
            "stickers": [],
            "roles": [
                {
                    "id": str(self.id),
                    "name": "@everyone",
                    "permissions": EVERY_PERMISSION,
                    "position": 0,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                    "flags": 0,
                }
            ],
            "channels": [self.channel_payload()],
            "threads": [],
            "members": [
                {
                    "user": BOT_USER,
                    "roles": [],
                    "joined_at": TIMESTAMP,
                    "deaf": False,
                    "mute": False,
                    "flags": 0,
                }
            ],
            "member_count": 4,
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "large": False,
            "unavailable": False,
            "joined_at": TIMESTAMP,
        }

    def channel_payload(self) -> dict[str, Any]:
        """The guild's one text channel."""
        return {
            "id": str(self.channel_id),
            "type": 0,
            "guild_id": str(self.id),
            "name": "table",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "parent_id": None,
        }


@dataclass
class Callback:
    """An interaction callback as it arrived: when, its type and its body."""

    at: float
    type: int
    data: dict[str, Any]
    message: dict[str, Any] | None = None  # the message it created or edited, as echoed
    host: str = ""  # the Host it was sent to (processes given different hosts tell apart)

    @property
    def ephemeral(self) -> bool:
        """Whether the answer was private (an error, or a private view)."""
        return bool(self.data.get("flags", 0) & EPHEMERAL)


@dataclass
class Shard:
    """One gateway connection the bot identified on."""

    socket: web.WebSocketResponse
    shard_id: int
    shard_count: int
    sequence: int = 0


# Discord's limits, as the fake enforces them with ``limits=DiscordLimits()``.
GLOBAL_PER_SECOND = 50
INVALID_WINDOW = 600.0
# (method, path pattern, bucket hash, requests, per seconds): the major parameter is the
# channel. Editing and deleting a message share one hash, as on Discord.
ROUTE_BUCKETS = (
    ("POST", re.compile(r"^/api/v10/channels/(\d+)/messages$"), "msg-send", 5, 5.0),
    ("PATCH", re.compile(r"^/api/v10/channels/(\d+)/messages/\d+$"), "msg-edit", 5, 5.0),
    ("DELETE", re.compile(r"^/api/v10/channels/(\d+)/messages/\d+$"), "msg-edit", 5, 5.0),
    ("POST", re.compile(r"^/api/v10/users/@me/(channels)$"), "dm-open", 10, 1.0),
)


@dataclass
class DiscordLimits:
    """Discord's rate limits: the global 50 a second of requests with the bot's token
    (interaction callbacks and webhook calls with their own token are exempt), per-route
    buckets with shared hashes, 429s with ``retry_after``, scope and X-RateLimit-*
    headers, and the invalid requests (401/403/429 but shared) of the last 10 minutes."""

    counted: list[float] = field(default_factory=list)  # times of counted requests
    rejected: Counter[str] = field(default_factory=Counter)  # 429s by scope
    invalid: list[float] = field(default_factory=list)
    _window: collections.deque[float] = field(default_factory=collections.deque)
    _buckets: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)

    def check(self, request: web.Request) -> web.Response | dict[str, str]:
        """A 429 for a request over a limit, else the rate-limit headers of its answer."""
        now = time.monotonic()
        counted = "Authorization" in request.headers
        if counted:
            window = self._window
            while window and window[0] <= now - 1.0:
                window.popleft()
            if len(window) >= GLOBAL_PER_SECOND:
                return self.refuse("global", window[0] + 1.0 - now, now)
        headers = dict(HEADERS)
        for method, pattern, bucket, limit, per in ROUTE_BUCKETS:
            match = pattern.match(request.path)
            if method != request.method or match is None:
                continue
            key = (bucket, match.group(1))
            remaining, reset_at = self._buckets.get(key, (limit, now + per))
            if now >= reset_at:
                remaining, reset_at = limit, now + per
            if remaining == 0:
                return self.refuse("user", reset_at - now, now, bucket=bucket, limit=limit)
            remaining -= 1
            self._buckets[key] = (remaining, reset_at)
            headers.update(
                {
                    "X-RateLimit-Limit": str(limit),
                    "X-RateLimit-Remaining": str(remaining),
                    "X-RateLimit-Reset-After": f"{reset_at - now:.3f}",
                    "X-RateLimit-Bucket": bucket,
                }
            )
            break
        if counted:
            self._window.append(now)
            self.counted.append(now)
        return headers

    def refuse(
        self, scope: str, retry_after: float, now: float, *, bucket: str = "", limit: int = 50
    ) -> web.Response:
        """A 429 as Discord sends it (Via set: Discord's, not Cloudflare's)."""
        self.rejected[scope if scope == "global" else f"{scope} ({bucket})"] += 1
        self.invalid.append(now)
        retry_after = max(retry_after, 0.001)
        headers = {
            "Content-Type": "application/json",
            "Via": "1.1 google",
            "Retry-After": str(max(1, round(retry_after))),
            "X-RateLimit-Scope": scope,
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset-After": f"{retry_after:.3f}",
        }
        if scope == "global":
            headers["X-RateLimit-Global"] = "true"
        else:
            headers["X-RateLimit-Bucket"] = bucket
        body = {
            "message": "You are being rate limited.",
            "retry_after": round(retry_after, 3),
            "global": scope == "global",
        }
        return web.Response(body=json.dumps(body).encode(), status=429, headers=headers)

    def invalid_in_window(self) -> int:
        """Invalid requests in the last 10 minutes (Cloudflare bans at 10,000)."""
        cutoff = time.monotonic() - INVALID_WINDOW
        return sum(1 for at in self.invalid if at > cutoff)


@dataclass
class FakeDiscord:
    """The fake: guilds, the gateway connections, counters, and callbacks to the driver."""

    guilds: list[FakeGuild]
    # Called with each interaction callback (interaction id, callback).
    on_callback: Callable[[int, Callback], None] = lambda interaction_id, callback: None
    requests: Counter[str] = field(default_factory=Counter)
    shards: dict[int, Shard] = field(default_factory=dict)
    guilds_sent: int = 0
    base_url: str = ""
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _dm_channels: dict[str, int] = field(default_factory=dict)
    _dm_ids: set[int] = field(default_factory=set)
    _clicked: dict[int, int] = field(default_factory=dict)
    _runner: web.AppRunner | None = None
    # Discord's rate limits, when set (otherwise everything is let through).
    limits: DiscordLimits | None = None
    # Called with (user id, time, content) for each DM message sent or edited.
    on_dm: Callable[[str, float, str], None] = lambda user, at, content: None
    _dm_users: dict[int, str] = field(default_factory=dict)
    # REST requests by the Host they were sent to (a proxy forwards the one it was sent
    # to), and those sent to the fake's own host, by method and path.
    hosts: Counter[str] = field(default_factory=Counter)
    direct: Counter[str] = field(default_factory=Counter)
    # With ``record`` set (tests; a long load run would hoard them): every DM message
    # sent, as (user id, the message as echoed), and every edit of a message in a
    # channel, as (channel id, message id, body).
    record: bool = False
    dm_messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    edits: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)

    def new_id(self) -> int:
        """A fresh snowflake."""
        return snowflake_at(int(time.time() * 1000), next(self._ids))

    # -- serving ------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1") -> str:
        """Serve on a free loopback port; return the base URL."""
        app = web.Application(client_max_size=32 * 1024 * 1024, middlewares=[self.rate_limited])
        api = "/api/v10"
        app.router.add_get("/gateway", self.gateway)
        app.router.add_get(api + "/gateway", self.gateway_url)
        app.router.add_get(api + "/gateway/bot", self.gateway_url)
        app.router.add_get(api + "/users/@me", self.me)
        app.router.add_get(api + "/oauth2/applications/@me", self.application)
        app.router.add_get(api + "/applications/{app}/commands", self.no_commands)
        app.router.add_post(api + "/interactions/{id}/{token}/callback", self.callback)
        app.router.add_post(api + "/webhooks/{app}/{token}", self.followup)
        app.router.add_route("*", api + "/webhooks/{app}/{token}/messages/{message}", self.message)
        app.router.add_post(api + "/users/@me/channels", self.dm_channel)
        app.router.add_post(api + "/channels/{channel}/messages", self.send)
        app.router.add_route("*", api + "/channels/{channel}/messages/{message}", self.message)
        app.router.add_route("*", "/{tail:.*}", self.unknown)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://{host}:{port}"
        return self.base_url

    async def close(self) -> None:
        """Close the gateway connections and stop serving."""
        for shard in list(self.shards.values()):
            await shard.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- the gateway --------------------------------------------------------------------

    @web.middleware
    async def rate_limited(
        self, request: web.Request, handler: Callable[[web.Request], Any]
    ) -> web.StreamResponse:
        """Enforce Discord's limits (if set) and tell the driver of DM changes."""
        if request.path.startswith("/api/"):
            self.hosts[request.host] += 1
            if self.base_url.endswith("//" + request.host):
                self.direct[f"{request.method} {request.path}"] += 1
        if self.limits is None or not request.path.startswith("/api/"):
            response: web.StreamResponse = await handler(request)
        else:
            checked = self.limits.check(request)
            if isinstance(checked, web.Response):
                return checked
            response = await handler(request)
            if response.status < 300 and "X-RateLimit-Bucket" in checked:
                for name in ("Limit", "Remaining", "Reset-After", "Bucket"):
                    response.headers[f"X-RateLimit-{name}"] = checked[f"X-RateLimit-{name}"]
        match = DM_MESSAGE.match(request.path)
        if match is not None and request.method in ("POST", "PATCH") and response.status < 300:
            user = self._dm_users.get(int(match.group(1)))
            if user is not None:
                raw = await request.read()  # the bytes the handler read, kept by aiohttp
                body = json.loads(raw) if raw and request.content_type == "application/json" else {}
                self.on_dm(user, time.perf_counter(), str(body.get("content") or ""))
        return response

    async def gateway_url(self, request: web.Request) -> web.Response:
        """GET /gateway/bot: where to connect, and how many shards."""
        self.requests["gateway"] += 1
        return json_response(
            {
                "url": self.base_url.replace("http", "ws", 1) + "/gateway",
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 1000,
                    "reset_after": 0,
                    "max_concurrency": 16,
                },
            }
        )

    async def gateway(self, request: web.Request) -> web.WebSocketResponse:
        """The gateway: HELLO, IDENTIFY → READY and GUILD_CREATEs, heartbeat ACKs."""
        # No permessage-deflate: Discord compresses the stream itself, or not at all.
        socket = web.WebSocketResponse(compress=False, max_msg_size=0)
        await socket.prepare(request)
        await socket.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": HEARTBEAT_MS}}))
        shard: Shard | None = None
        async for message in socket:
            if message.type is not WSMsgType.TEXT:
                continue
            payload = json.loads(message.data)
            op = payload.get("op")
            if op == 1:
                await socket.send_str('{"op": 11}')
            elif op == 2:
                shard_id, count = payload["d"].get("shard") or [0, 1]
                shard = Shard(socket, shard_id, count)
                self.shards[shard_id] = shard
                await self.identify(shard)
            elif op == 6:
                # RESUME: not supported; ask for a fresh session.
                await socket.send_str(json.dumps({"op": 9, "d": False}))
        if shard is not None and self.shards.get(shard.shard_id) is shard:
            del self.shards[shard.shard_id]
        return socket

    async def identify(self, shard: Shard) -> None:
        """READY with this shard's guilds unavailable, then one GUILD_CREATE each."""
        mine = [g for g in self.guilds if shard_of(g.id, shard.shard_count) == shard.shard_id]
        ready = {
            "v": 10,
            "user": BOT_USER,
            "guilds": [{"id": str(g.id), "unavailable": True} for g in mine],
            "session_id": f"session-{shard.shard_id}",
            "resume_gateway_url": self.base_url.replace("http", "ws", 1) + "/gateway",
            "shard": [shard.shard_id, shard.shard_count],
            "application": {"id": str(APPLICATION_ID), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
        }
        await self.dispatch(shard, "READY", ready)
        for guild in mine:
            await self.dispatch(shard, "GUILD_CREATE", guild.create_payload())
            self.guilds_sent += 1

    async def dispatch(self, shard: Shard, event: str, data: dict[str, Any]) -> None:
        """Send one event on a shard."""
        shard.sequence += 1
        await shard.socket.send_str(
            json.dumps({"op": 0, "t": event, "s": shard.sequence, "d": data})
        )

    async def send_interaction(self, guild_id: int, data: dict[str, Any]) -> None:
        """INTERACTION_CREATE on the shard of the guild."""
        if not self.shards:
            raise ConnectionError("no gateway connection")
        count = next(iter(self.shards.values())).shard_count
        if "message" in data:
            # An update answers on the clicked message: Discord keeps its id.
            self._clicked[int(data["id"])] = int(data["message"]["id"])
        await self.dispatch(self.shards[shard_of(guild_id, count)], "INTERACTION_CREATE", data)

    # -- REST ---------------------------------------------------------------------------

    async def me(self, request: web.Request) -> web.Response:
        """GET /users/@me: the bot's user (login)."""
        self.requests["users/@me"] += 1
        return json_response(BOT_USER)

    async def application(self, request: web.Request) -> web.Response:
        """GET /oauth2/applications/@me."""
        self.requests["application"] += 1
        return json_response(
            {
                "id": str(APPLICATION_ID),
                "name": "cardtable",
                "icon": None,
                "description": "",
                "bot_public": True,
                "bot_require_code_grant": False,
                "verify_key": "0" * 64,
                "owner": {"id": "1", "username": "owner", "discriminator": "0", "avatar": None},
                "flags": 0,
            }
        )

    async def no_commands(self, request: web.Request) -> web.Response:
        """GET the application's commands: none published (the bot does not need them)."""
        self.requests["commands"] += 1
        return json_response([])

    async def callback(self, request: web.Request) -> web.Response:
        """POST /interactions/{id}/{token}/callback: the answer to an interaction."""
        body = await read_body(request)
        at = time.perf_counter()
        self.requests["interaction callback"] += 1
        interaction_id = int(request.match_info["id"])
        kind = int(body.get("type", 0))
        data = body.get("data") or {}
        answered = Callback(at, kind, data, host=request.host)
        interaction: dict[str, Any] = {
            "id": str(interaction_id),
            "type": 3,
            "response_message_loading": kind == 5,
            "response_message_ephemeral": bool(data.get("flags", 0) & EPHEMERAL),
        }
        answer: dict[str, Any] = {"interaction": interaction}
        clicked = self._clicked.pop(interaction_id, None)
        if kind in (4, 7):
            message_id = clicked if kind == 7 and clicked is not None else self.new_id()
            channel_id = 0  # the bot knows the channel from the interaction
            interaction["response_message_id"] = str(message_id)
            answered.message = message(message_id, channel_id, data)
            answer["resource"] = {"type": kind, "message": answered.message}
        self.on_callback(interaction_id, answered)
        if "with_response" not in request.query:
            # As Discord does: without ?with_response the callback answers 204, no body.
            return web.Response(status=204, headers=NO_CONTENT_HEADERS)
        return json_response(answer)

    async def followup(self, request: web.Request) -> web.Response:
        """POST /webhooks/{app}/{token}: a follow-up message."""
        body = await read_body(request)
        self.requests["followup"] += 1
        return json_response(message(self.new_id(), 0, body))

    async def message(self, request: web.Request) -> web.Response:
        """GET, PATCH or DELETE one message (a channel's, or an interaction's original)."""
        kind = "webhook" if "webhooks" in request.path else "channel"
        if kind == "channel":
            dm = int(request.match_info["channel"]) in self._dm_ids
            kind = "DM" if dm else "channel"
        self.requests[f"{request.method} {kind} message"] += 1
        if request.method == "DELETE":
            return web.Response(status=204, headers=NO_CONTENT_HEADERS)
        body = await read_body(request) if request.method == "PATCH" else {}
        raw = request.match_info["message"]
        message_id = self.new_id() if raw == "@original" else int(raw)
        channel_id = int(request.match_info.get("channel", 0))
        if self.record and request.method == "PATCH" and kind == "channel":
            self.edits.append((channel_id, message_id, body))
        return json_response(message(message_id, channel_id, body))

    async def send(self, request: web.Request) -> web.Response:
        """POST /channels/{id}/messages: a new message."""
        body = await read_body(request)
        channel_id = int(request.match_info["channel"])
        self.requests["POST DM" if channel_id in self._dm_ids else "POST channel message"] += 1
        sent = message(self.new_id(), channel_id, body)
        if self.record and channel_id in self._dm_ids:
            self.dm_messages.append((self._dm_users[channel_id], sent))
        return json_response(sent)

    def known_dm(self, user: str, channel_id: int) -> None:
        """The DM channel a user has had with the bot since before the run (Discord keeps
        one per user): opening it answers this id."""
        self._dm_channels[user] = channel_id
        self._dm_ids.add(channel_id)
        self._dm_users[channel_id] = user

    async def dm_channel(self, request: web.Request) -> web.Response:
        """POST /users/@me/channels: the DM channel with a user (one per user)."""
        body = await read_body(request)
        self.requests["DM channel"] += 1
        user = str(body.get("recipient_id"))
        channel_id = self._dm_channels.setdefault(user, self.new_id())
        self._dm_ids.add(channel_id)
        self._dm_users[channel_id] = user
        recipient = {"id": user, "username": f"user{user}", "discriminator": "0", "avatar": None}
        return json_response(
            {"id": str(channel_id), "type": 1, "recipients": [recipient], "last_message_id": None}
        )

    async def unknown(self, request: web.Request) -> web.Response:
        """Anything else: counted, and answered 404 like an unknown route."""
        self.requests[f"unknown {request.method} {request.path}"] += 1
        log.warning("unknown route %s %s", request.method, request.path)
        return json_response({"message": "404: Not Found", "code": 0}, status=404)


def json_response(data: object, *, status: int = 200) -> web.Response:
    """JSON as Discord sends it: discord.py wants exactly ``application/json``."""
    return web.Response(body=json.dumps(data).encode(), status=status, headers=HEADERS)


async def read_body(request: web.Request) -> dict[str, Any]:
    """A JSON body, or the payload_json part of a multipart one (messages with files)."""
    if request.content_type.startswith("multipart/"):
        # Read the JSON part only and skip the files: request.post() would spool every
        # picture to a temporary file, making the fake, not the bot, the bottleneck.
        reader = await request.multipart()
        body: dict[str, Any] = {}
        async for part in reader:
            if isinstance(part, BodyPartReader) and part.name == "payload_json":
                body = json.loads(await part.text())
            elif part is not None:
                await part.release()
        return body
    if not request.can_read_body:
        return {}
    data = await request.json(loads=json.loads)
    return data if isinstance(data, dict) else {}


def message(message_id: int, channel_id: int, body: dict[str, Any]) -> dict[str, Any]:
    """A message as Discord returns it: what was sent, with an id and an author."""
    return {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": BOT_USER,
        "content": body.get("content") or "",
        "timestamp": TIMESTAMP,
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": body.get("embeds") or [],
        "components": body.get("components") or [],
        "pinned": False,
        "type": 0,
        "flags": body.get("flags", 0),
    }


def run_forever() -> None:  # pragma: no cover - manual use
    """Serve an empty fake for poking at by hand."""

    async def main() -> None:
        fake = FakeDiscord([])
        print(await fake.start())
        await asyncio.Event().wait()

    asyncio.run(main())
