"""A loopback stand-in for Discord's REST API, for the tests of the production HTTP path."""

from __future__ import annotations

import pytest
from aiohttp import web
from discord.http import Route


async def serve_as_discord(
    app: web.Application, monkeypatch: pytest.MonkeyPatch
) -> tuple[web.AppRunner, int]:
    """Serve the app on a free loopback port and point discord.py's routes at it; the
    runner (to clean up) and the port."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port: int = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    monkeypatch.setattr(Route, "BASE", f"http://127.0.0.1:{port}/api/v10")
    return runner, port
