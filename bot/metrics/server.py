"""The metrics server: `/metrics`, `/livez` and `/readyz` on the bot's own event loop (aiohttp).

On the loop rather than in `prometheus_client`'s own server thread: the probes need the
bot's state, which lives on the loop, and a scrape (a few milliseconds every 15 s) costs
the same CPU either way (docs/benchmarks.md#metrics).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest


class MetricsServer:
    """`/metrics` (Prometheus text), `/livez` and `/readyz` (200 or 503 with one line)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ready: Callable[[], str | None],
    ) -> None:
        self.host = host
        self.port = port
        # Why the bot is not ready, or None; a bot that answers at all is alive.
        self._ready = ready
        self._runner: web.AppRunner | None = None
        # Tasks that keep what it shows current (a count from the database): stopped with it.
        self.companions: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Listen (OSError if the port is taken)."""
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/livez", self._live)
        app.router.add_get("/readyz", self._readiness)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner

    @property
    def bound_port(self) -> int:
        """The port listened on (the one asked for, or the kernel's pick for port 0)."""
        assert self._runner is not None
        for address in self._runner.addresses:
            return int(address[1])
        raise RuntimeError("the metrics server is not listening")

    async def close(self) -> None:
        """Stop listening, and the tasks that fed it."""
        companions, self.companions = self.companions, []
        for task in companions:
            task.cancel()
        for task in companions:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _metrics(self, request: web.Request) -> web.Response:
        body = generate_latest(REGISTRY)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _live(self, request: web.Request) -> web.Response:
        # Answering at all proves the event loop runs.
        return web.Response(text="alive\n")

    async def _readiness(self, request: web.Request) -> web.Response:
        reason = self._ready()
        if reason is None:
            return web.Response(text="ready\n")
        return web.Response(status=503, text=f"not ready: {reason}\n")
