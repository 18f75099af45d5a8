"""A real rate-limiting REST proxy process (nirn.py, the Python port of nirn-proxy) in
front of the fake Discord.

    python benchmarks/load/proxy_process.py UPSTREAM PORT_FILE

nirn.py is run as it ships (its QueueManager and aiohttp app: per-route queues, the
token's global bucket, webhook and 401 handling), with two changes for the loopback:

- its upstream, written into it as ``https://discord.com``, is UPSTREAM (the fake), and
  the ``/api/v9`` of its own look-ups (``/users/@me``, ``/gateway/bot``) is the fake's
  ``/api/v10``;
- it listens on a free loopback port and writes the port to PORT_FILE once it serves
  (written whole by a rename, so a reader polling for the file never sees half of it).

One defect of nirn.py 1.0.3 is mended here, and only in this process: it keeps an
answer's headers as a plain dict (``dict(response.headers)``) and reads them in lower
case (``x-ratelimit-remaining``), so an upstream that writes them as Discord documents
them (``X-RateLimit-Remaining``; header names are case-insensitive) is never seen to spend
a bucket, and nirn.py then paces no route at all (the fake's answers drew route 429s
through it). The answer's header names are given to it in lower case.

It stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from nirn_proxy import discord_client  # type: ignore[import-untyped]
from nirn_proxy.config import Config  # type: ignore[import-untyped]
from nirn_proxy.queue_manager import QueueManager  # type: ignore[import-untyped]

DISCORD = "https://discord.com"


class Upstream:
    """nirn.py's client session, sending what it means for Discord to ``base`` instead."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session = session
        self.base = base

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        """The same request (nirn.py's own session and settings), to the fake Discord."""
        if url.startswith(DISCORD):
            url = self.base + url[len(DISCORD) :].replace("/api/v9/", "/api/v10/", 1)
        return self.session.request(method, url, **kwargs)

    async def close(self) -> None:
        """Close nirn.py's session."""
        await self.session.close()


def lower_case_headers() -> None:
    """nirn.py's answers keep their header names in lower case (see the module)."""
    response = discord_client.DiscordResponse
    made = response.__init__

    def init(self: Any, status: int, status_text: str, headers: dict[str, str], body: Any) -> None:
        made(self, status, status_text, {k.lower(): v for k, v in headers.items()}, body)

    response.__init__ = init


async def serve(upstream: str, port_file: Path) -> None:
    """Run the proxy until told to stop."""
    os.environ.setdefault("ENABLE_METRICS", "false")
    lower_case_headers()
    config = Config()
    manager = QueueManager(config)
    await manager.initialize()
    client = manager.discord_client
    assert client is not None and client.session is not None
    client.session = Upstream(client.session, upstream)
    runner = web.AppRunner(manager.create_app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    partial = port_file.with_suffix(".partial")
    partial.write_text(str(port))
    partial.rename(port_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await runner.cleanup()
    await manager.shutdown()


def main() -> int:
    """Parse the arguments and serve."""
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    asyncio.run(serve(sys.argv[1].rstrip("/"), Path(sys.argv[2])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
