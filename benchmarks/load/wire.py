"""Point discord.py at the fake Discord: its REST base and its gateway (both on loopback)."""

from __future__ import annotations

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route


def point_at(base_url: str) -> None:
    """Every REST call and the gateway connection go to ``base_url`` instead of Discord."""
    Route.BASE = base_url + "/api/v10"
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(base_url.replace("http", "ws", 1) + "/gateway")
