"""The keep-alive HTTP/1.1 client of a move's REST calls, against real loopback servers."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import trustme

import bot.client.transport.http1 as http1
from bot.client.transport.http1 import Http1Client, ServerDisconnected, split_url

# What a scripted server does with one request: the bytes to answer with, or None to close
# the connection without answering.
Script = Callable[[int, bytes], Awaitable[bytes | None]]


class ScriptedServer:
    """A loopback TCP server reading HTTP/1.1 requests and answering as its script says."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[bytes] = []  # every request, in order
        self.connections = 0
        self.close_after: set[int] = set()  # requests after whose answer it hangs up
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self, context: ssl.SSLContext | None = None) -> None:
        """Listen on a free port (with TLS, given a context)."""
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context)
        self.port = self.server.sockets[0].getsockname()[1]

    def url(self, path: str = "/api/v10/x") -> str:
        """A URL on this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                answer = await self.script(len(self.requests), request)
                if answer is None:
                    return
                writer.write(answer)
                await writer.drain()
                if len(self.requests) in self.close_after:
                    return
        finally:
            writer.close()

    async def stop(self) -> None:
        """Stop listening."""
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


def answer(status: str = "200 OK", body: bytes = b"", *headers: str) -> bytes:
    """An answer with a Content-Length."""
    lines = "".join(f"{header}\r\n" for header in headers)
    return f"HTTP/1.1 {status}\r\n{lines}Content-Length: {len(body)}\r\n\r\n".encode() + body


async def always(index: int, request: bytes) -> bytes:
    """Answer every request with 200 and a JSON body."""
    return answer("200 OK", b'{"ok": true}', "Content-Type: application/json")


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Script], Awaitable[ScriptedServer]]]:
    """Start scripted servers; one client shared by the test; all stopped after."""
    servers: list[ScriptedServer] = []

    async def make(script: Script) -> ScriptedServer:
        server = ScriptedServer(script)
        await server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        await server.stop()


@pytest.fixture
async def client() -> AsyncIterator[Http1Client]:
    """A client, closed after the test."""
    made = Http1Client()
    yield made
    made.close()
    await asyncio.sleep(0)  # the transports report their closing


async def test_a_request_is_written_as_http_1_1_and_its_answer_read(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """Method, target, Host, the given headers and Content-Length go out; the status,
    reason, lower-cased headers and JSON body come back."""
    server = await serve(always)
    response = await client.request(
        "POST", server.url("/api/v10/a%2Fb?x=1"), body=b"{}", headers=b"X-One: 1\r\n"
    )
    (request,) = server.requests
    assert (
        request
        == (
            f"POST /api/v10/a%2Fb?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            "X-One: 1\r\nContent-Length: 2\r\n\r\n{}"
        ).encode()
    )
    assert (response.status, response.reason) == (200, "OK")
    assert response.header("CONTENT-TYPE") == "application/json"
    assert response.json_or_text() == {"ok": True}


async def test_connections_are_kept_alive_and_used_again(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """Requests one after another share a connection; requests at once take one each and
    keep them for the next."""
    server = await serve(always)
    for _ in range(3):
        await client.request("GET", server.url())
    assert server.connections == 1
    await asyncio.gather(*(client.request("GET", server.url()) for _ in range(4)))
    await asyncio.gather(*(client.request("GET", server.url()) for _ in range(4)))
    assert server.connections == 4 and client.open_connections == 4


async def test_a_chunked_answer_and_repeated_headers(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """A chunked body is put together; a repeated header is joined with a comma; a 204
    has no body and keeps its connection."""

    async def script(index: int, request: bytes) -> bytes:
        if index == 1:
            return (
                b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\nVia: a\r\nVia: b\r\n"
                b"Content-Type: text/plain\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
            )
        return b"HTTP/1.1 204 No Content\r\n\r\n"

    server = await serve(script)
    first = await client.request("GET", server.url())
    assert (first.status, first.body, first.header("via")) == (404, b"hello world", "a, b")
    assert first.json_or_text() == "hello world"
    second = await client.request("POST", server.url(), body=b"x")
    assert (second.status, second.body) == (204, b"")
    assert server.connections == 1


async def test_an_answer_that_closes_its_connection_is_not_used_again(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """``Connection: close``: the next request opens a new connection."""

    async def script(index: int, request: bytes) -> bytes:
        return answer("200 OK", b"", "Connection: close")

    server = await serve(script)
    await client.request("GET", server.url())
    await client.request("GET", server.url())
    assert server.connections == 2


async def test_a_kept_connection_the_server_dropped_is_replaced_silently(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """The server closes a kept connection on the next request without answering: the
    request goes again on a new connection, once, and is answered."""

    async def script(index: int, request: bytes) -> bytes | None:
        return None if index == 2 else await always(index, request)

    server = await serve(script)
    await client.request("GET", server.url())
    response = await client.request("GET", server.url())
    assert response.status == 200
    assert server.connections == 2 and len(server.requests) == 3


async def test_a_new_connection_closed_before_answering_raises(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """A fresh connection closed without an answer: ServerDisconnected, sent once only."""

    async def script(index: int, request: bytes) -> None:
        return None

    server = await serve(script)
    with pytest.raises(ServerDisconnected):
        await client.request("POST", server.url(), body=b"x")
    assert len(server.requests) == 1


async def test_an_answer_cut_short_raises_and_is_not_sent_again(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """Part of an answer, then the connection closes: ServerDisconnected, even on a kept
    connection (the server saw the request)."""

    async def script(index: int, request: bytes) -> bytes:
        if index == 1:
            return await always(index, request)
        return b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"

    server = await serve(script)
    server.close_after.add(2)
    await client.request("GET", server.url())
    with pytest.raises(ServerDisconnected):
        await client.request("GET", server.url())
    assert len(server.requests) == 2


async def test_a_malformed_answer_raises(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """Bytes that are no HTTP answer: ServerDisconnected, and the connection is closed."""

    async def script(index: int, request: bytes) -> bytes:
        return b"SMTP ready\r\n\r\n"

    server = await serve(script)
    with pytest.raises(ServerDisconnected, match="malformed"):
        await client.request("GET", server.url())
    await asyncio.sleep(0.01)
    assert client.open_connections == 0


async def test_a_cancelled_request_closes_its_connection(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """A request timed out by its caller: its connection is closed, never used again (its
    late answer would be read as the next request's)."""

    async def script(index: int, request: bytes) -> bytes:
        if index == 1:
            await asyncio.sleep(0.3)
        return answer("200 OK", b"%d" % index)

    server = await serve(script)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await client.request("GET", server.url())
    response = await client.request("GET", server.url())
    assert response.body == b"2" and server.connections == 2


async def test_an_idle_connection_past_keepalive_is_not_used(
    serve: Callable[[Script], Awaitable[ScriptedServer]],
    client: Http1Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A connection idle for longer than KEEPALIVE is closed and a new one opened."""
    monkeypatch.setattr(http1, "KEEPALIVE", 0.0)
    server = await serve(always)
    await client.request("GET", server.url())
    await asyncio.sleep(0.01)
    await client.request("GET", server.url())
    assert server.connections == 2


async def test_idle_connections_beyond_the_kept_number_are_closed(
    serve: Callable[[Script], Awaitable[ScriptedServer]],
    client: Http1Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a burst, only IDLE_KEPT connections stay open."""
    monkeypatch.setattr(http1, "IDLE_KEPT", 2)
    server = await serve(always)
    await asyncio.gather(*(client.request("GET", server.url()) for _ in range(5)))
    await asyncio.sleep(0.01)
    assert server.connections == 5 and client.open_connections == 2


async def test_a_closed_client_drops_every_connection(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client
) -> None:
    """close() closes the kept connections."""
    server = await serve(always)
    await client.request("GET", server.url())
    client.close()
    await asyncio.sleep(0.01)
    assert client.open_connections == 0


@pytest.mark.parametrize("target", ["/a b", "/a\r\nX-Evil: 1", "/ä"])
async def test_a_target_that_would_break_the_request_line_is_refused(
    serve: Callable[[Script], Awaitable[ScriptedServer]], client: Http1Client, target: str
) -> None:
    """A space, a line break or a non-ASCII character in the target: ValueError, nothing
    sent."""
    server = await serve(always)
    with pytest.raises(ValueError, match="request target"):
        await client.request("GET", server.url(target))
    assert server.requests == []


@pytest.mark.parametrize(
    ("url", "origin", "target"),
    [
        (
            "https://discord.com/api/v10/x",
            ("https", "discord.com", 443, b"discord.com"),
            b"/api/v10/x",
        ),
        ("http://127.0.0.1:81/a?b=1", ("http", "127.0.0.1", 81, b"127.0.0.1:81"), b"/a?b=1"),
        ("http://h", ("http", "h", 80, b"h"), b"/"),
    ],
)
def test_split_url(url: str, origin: tuple[str, str, int, bytes], target: bytes) -> None:
    """A URL's scheme, host, port, Host header and request target."""
    split, path = split_url(url)
    assert (split.scheme, split.host, split.port, split.host_header) == origin
    assert path == target


@pytest.mark.parametrize("url", ["ftp://h/x", "http:///x", "discord.com/api"])
def test_split_url_refuses_what_is_not_http(url: str) -> None:
    """Only http and https URLs with a host."""
    with pytest.raises(ValueError, match="not an http"):
        split_url(url)


def tls_contexts(name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for ``name`` from a test CA, and a client
    context trusting that CA (and nothing else)."""
    authority = trustme.CA()
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert(name).configure_cert(server)
    client = ssl.create_default_context()
    authority.configure_trust(client)
    return server, client


async def test_https_checks_the_certificate_and_keeps_the_connection() -> None:
    """Over TLS (as Discord is reached): the server's certificate and name are checked,
    and the connection is kept for the next request."""
    server_context, client_context = tls_contexts("localhost")
    server = ScriptedServer(always)
    await server.start(server_context)
    client = Http1Client(ssl_context=client_context)
    try:
        for _ in range(3):
            response = await client.request("GET", f"https://localhost:{server.port}/api/x")
            assert response.json_or_text() == {"ok": True}
        assert server.connections == 1
        assert b"Host: localhost:%d\r\n" % server.port in server.requests[0]
    finally:
        client.close()
        await server.stop()


@pytest.mark.parametrize("trusted", [True, False], ids=["wrong-name", "unknown-authority"])
async def test_https_refuses_a_server_it_cannot_trust(trusted: bool) -> None:
    """A certificate for another name, or from an authority the client does not trust:
    the connection is refused and nothing is sent."""
    server_context, client_context = tls_contexts("discord.example")
    server = ScriptedServer(always)
    await server.start(server_context)
    client = Http1Client(ssl_context=client_context if trusted else ssl.create_default_context())
    try:
        with pytest.raises(ssl.SSLCertVerificationError):
            await client.request("GET", f"https://localhost:{server.port}/api/x")
        assert server.requests == []
    finally:
        client.close()
        await server.stop()
