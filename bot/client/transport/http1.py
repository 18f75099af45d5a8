"""A small HTTP/1.1 client for the REST calls a move makes: keep-alive connections, no more.

A move makes one or two requests to Discord (its interaction callback, the player's DM
edit). Through aiohttp each cost about as much CPU as discord.py's whole handling of the
click that caused it: a request object, its timers, a writer task, a response object and a
stream reader, cookies, redirects and tracing, none of which a JSON request to one host
needs. Here a request is its bytes written on an idle connection and the answer parsed by
httptools (the C parser uvicorn uses), so chunked bodies, keep-alive and its end are as
the protocol says. Anything else (uploads, proxies) still goes through discord.py.

Timeouts are the caller's: wrap the request in ``asyncio.timeout``. A request cancelled
or failed midway closes its connection (its state is unknown); only a connection that
answered whole is used again.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httptools
from discord.utils import _from_json

# aiohttp's default: a connection idle for longer is closed rather than used again (a
# server drops idle connections in its own time, and a request sent on one just dropped
# fails).
KEEPALIVE = 15.0
# Idle connections kept per host (more than this answering at once are closed after): a
# busy bot has about one request in flight per table that is answering, and a new HTTPS
# connection costs a TLS handshake.
IDLE_KEPT = 256
# URL bases whose parse is remembered (the bot talks to one: Discord's API).
ORIGINS_KEPT = 16


class ServerDisconnected(ConnectionError):
    """The connection closed before the whole answer arrived."""


@dataclass(slots=True)
class Response:
    """An answer: its status, reason, headers (names lower-cased) and body."""

    status: int
    reason: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def header(self, name: str, default: str | None = None) -> str | None:
        """A header's value, whatever the case of its name."""
        return self.headers.get(name.lower(), default)

    def json_or_text(self) -> Any:
        """The body as discord.py reads one: JSON when it says so, else text."""
        text = self.body.decode("utf-8", "replace")
        if self.headers.get("content-type") == "application/json":
            return _from_json(text)
        return text


@dataclass(frozen=True, slots=True)
class Origin:
    """Where connections go: scheme, host and port, and the Host header naming them."""

    scheme: str
    host: str
    port: int
    host_header: bytes


def split_url(url: str) -> tuple[Origin, bytes]:
    """A URL's origin and its request target (path and query, as given)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    origin = Origin(parts.scheme, parts.hostname, port, parts.netloc.encode("ascii"))
    return origin, target.encode("ascii")


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one request at a time, its answer parsed as it comes."""

    def __init__(self, client: Http1Client, origin: Origin) -> None:
        self.client = client
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[Response] | None = None
        self.response: Response | None = None
        self.chunks: list[bytes] = []
        self.answered_bytes = False  # some of an answer arrived on it
        self.closed = False
        self.idle_since = 0.0

    # -- asyncio.Protocol --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport to write requests on."""
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        """Fail the request in flight, if any; an idle connection leaves the pool."""
        self.closed = True
        self.client._lost(self)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            error = ServerDisconnected("the server closed the connection before answering")
            if exc is not None:
                error.__cause__ = exc
            waiter.set_exception(error)

    def data_received(self, data: bytes) -> None:
        """Feed the answer to the parser; a malformed one fails the request."""
        self.answered_bytes = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ServerDisconnected(f"malformed answer: {error}"))

    # -- httptools callbacks -----------------------------------------------------------

    def on_status(self, status: bytes) -> None:
        """Start the answer: its status line."""
        self.response = Response(self.parser.get_status_code(), status.decode("latin-1"))

    def on_header(self, name: bytes, value: bytes) -> None:
        """One header; a repeated one is joined with commas, as HTTP allows."""
        assert self.response is not None
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers = self.response.headers
        headers[key] = f"{headers[key]}, {text}" if key in headers else text

    def on_body(self, body: bytes) -> None:
        """Part of the body."""
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        """The whole answer: hand it to the request waiting for it."""
        response, self.response = self.response, None
        waiter = self.waiter
        if response is None or waiter is None or waiter.done():
            self._fail(ServerDisconnected("an answer to no request"))
            return
        response.body = b"".join(self.chunks)
        self.chunks = []
        if not self.parser.should_keep_alive():
            self.closed = True  # the server closes it: not to be used again
        waiter.set_result(response)

    # ----------------------------------------------------------------------------------

    async def exchange(self, request: bytes) -> Response:
        """Write a request and wait for its whole answer."""
        assert self.transport is not None
        self.answered_bytes = False  # of this request's answer
        if self.closed or self.transport.is_closing():
            raise ServerDisconnected("the connection was closed")
        waiter = self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        try:
            return await waiter
        finally:
            self.waiter = None

    def _fail(self, error: Exception) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)
        self.abort()

    def abort(self) -> None:
        """Close at once (nothing more is read or written on it)."""
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


class Http1Client:
    """Keep-alive HTTP/1.1 connections to a few hosts, and requests on them.

    HTTPS checks the server's certificate and name against ``ssl_context`` (by default
    the system's trusted authorities, as aiohttp's default).
    """

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self._idle: dict[Origin, list[_Connection]] = {}
        self._open: set[_Connection] = set()
        self._origins: dict[str, Origin] = {}  # URL base -> its origin
        self._ssl = ssl_context

    async def request(
        self, method: str, url: str, *, body: bytes = b"", headers: bytes = b""
    ) -> Response:
        """Send a request (``headers`` as ``Name: value\\r\\n`` lines) and read its answer.

        A request written on a kept connection that the server had closed meanwhile (no
        byte of an answer came back) is sent once more on a new one, as a browser does.
        """
        origin, target = self._split(url)
        head = b"%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n" % (
            method.encode("ascii"),
            target,
            origin.host_header,
            headers,
            len(body),
        )
        request = head + body
        for _ in range(2):
            connection, reused = await self._connection(origin)
            try:
                response = await connection.exchange(request)
            except ServerDisconnected:
                connection.abort()
                if reused and not connection.answered_bytes:
                    continue
                raise
            except BaseException:
                connection.abort()  # cancelled or failed midway: its state is unknown
                raise
            self._release(connection)
            return response
        raise ServerDisconnected("the server closed a new connection before answering")

    def _split(self, url: str) -> tuple[Origin, bytes]:
        # The URLs share their start (Discord's API base): parse it once.
        scheme_end = url.find("://") + 3
        path_start = url.find("/", scheme_end)
        if path_start < 0:
            return split_url(url)
        base = url[:path_start]
        origin = self._origins.get(base)
        if origin is None:
            origin = self._origins[base] = split_url(base + "/")[0]
            if len(self._origins) > ORIGINS_KEPT:
                del self._origins[next(iter(self._origins))]
        target = url[path_start:]
        if not (target.isascii() and target.isprintable()) or " " in target:
            # A space, a line break or a byte past ASCII would break the request line.
            raise ValueError(f"not an encoded request target: {target!r}")
        return origin, target.encode("ascii")

    async def _connection(self, origin: Origin) -> tuple[_Connection, bool]:
        """An idle connection to the origin (True), else a new one (False)."""
        idle = self._idle.get(origin)
        if idle:
            deadline = asyncio.get_running_loop().time() - KEEPALIVE
            while idle:
                connection = idle.pop()
                transport = connection.transport
                fresh = connection.idle_since >= deadline
                if fresh and not connection.closed and transport and not transport.is_closing():
                    return connection, True
                connection.abort()
        loop = asyncio.get_running_loop()
        context = None
        if origin.scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            context = self._ssl
        _, connection = await loop.create_connection(
            lambda: _Connection(self, origin),
            origin.host,
            origin.port,
            ssl=context,
            server_hostname=origin.host if context is not None else None,
        )
        self._open.add(connection)
        return connection, False

    def _release(self, connection: _Connection) -> None:
        """A connection that answered whole: kept for the next request, unless closing."""
        if connection.closed:
            connection.abort()
            return
        idle = self._idle.setdefault(connection.origin, [])
        if len(idle) >= IDLE_KEPT:
            connection.abort()
            return
        connection.idle_since = asyncio.get_running_loop().time()
        idle.append(connection)

    def _lost(self, connection: _Connection) -> None:
        """A connection closed: forgotten (an idle one leaves its pool)."""
        self._open.discard(connection)
        idle = self._idle.get(connection.origin)
        if idle and connection in idle:
            idle.remove(connection)

    def close(self) -> None:
        """Close every connection, idle or not (a request on one fails)."""
        for connection in list(self._open):
            connection.abort()
        self._idle.clear()

    @property
    def open_connections(self) -> int:
        """How many connections are open."""
        return len(self._open)
