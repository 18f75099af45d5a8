"""Render a No Thanks! and a Rage table as Discord shows them, to PNG files, for a look.

Run: uv run --with "simcord[preview,screenshot]" python tools/screenshot.py [OUT_DIR]
Needs a Chromium (Debian: apt-get install chromium); set CHROMIUM to its path if it is
not /usr/bin/chromium. Nothing here runs in the tests.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import simcord
from simcord.preview import _capture

from bot.app import create_bot
from bot.settings import Settings

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


async def _ensure_browser(self: Any) -> Any:
    """Launch the system Chromium instead of a Playwright download (no internet here)."""
    if self._browser is None:
        from playwright.async_api import async_playwright

        self._playwright = await async_playwright().start()
        self._browser = await self._playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
    return self._browser


async def main(out: Path) -> None:
    """Play a few moves at each table and capture the channels."""
    _capture.ManagedCapture._ensure_browser = _ensure_browser  # type: ignore[method-assign]
    database = Path(tempfile.mkdtemp()) / "shots.db"
    bot = create_bot(Settings(token="x" * 24 + ".yyyyyy." + "z" * 27, database=database))
    async with simcord.run(bot) as env:
        await env.bot.tree.sync()
        guild = env.create_guild()
        names = ["Ana", "Ben", "Cid", "Dora"]
        members = [guild.add_member(env.create_user(n.lower(), global_name=n)) for n in names]

        nothanks = guild.create_text_channel("no-thanks")
        result = await members[0].slash(nothanks, "nothanks start", bots=1)
        message = result.response.message
        for member in members[1:3]:
            await member.click(message, label="Join")
        await members[0].click(message, label="Start")
        tables = env.bot.tables
        session = tables.in_channel(nothanks.id)
        for _ in range(12):
            # The game is a new object after every saved move: read it again each time.
            game = tables.get(session.id).engine
            actor = next((m for m in members if str(m.id) == game.active_player), None)
            if actor is None:
                await env.advance_time(2.5)
                continue
            label = "Take" if game.chips_on_card >= 2 else "No thanks!"
            await actor.click(nothanks.history()[0], label=label)

        rage = guild.create_text_channel("rage")
        result = await members[0].slash(rage, "rage start", bots=1, sweep=True)
        message = result.response.message
        for member in members[1:3]:
            await member.click(message, label="Join")
        await members[0].click(message, label="Start")
        rsession = tables.in_channel(rage.id)
        hand = None
        for _ in range(8):
            state = tables.get(rsession.id).engine
            player = state.acting_players()[0]
            actor = next((m for m in members if str(m.id) == player), None)
            if actor is None:
                await env.advance_time(2.5)
                continue
            view = await actor.click(rage.history()[0], label="Show my hand")
            hand = view
            legal = state.legal_actions(player)
            choice = legal[len(legal) // 2] if hasattr(legal[0], "tricks") else legal[0]
            value = str(choice.tricks) if hasattr(choice, "tricks") else choice.card.code
            select = next(
                c["custom_id"]
                for row in view.response.components
                for c in row["components"]
                if c["type"] == 3
            )
            await actor.select(view.response.message, [value], custom_id=select)
        for channel, name in ((nothanks, "nothanks"), (rage, "rage")):
            async with env.preview(channel, viewers=[members[0]], layout="channel") as preview:
                await preview.screenshot(
                    out / f"{name}.png", mode="viewport", allow_incomplete=True
                )
        if hand is not None:
            async with env.preview(rage, viewers=[members[0]]) as preview:
                await preview.screenshot(out / "rage_hand.png", allow_incomplete=True)
        await bot.storage.close()
    print(f"wrote {out}/nothanks.png, rage.png, rage_hand.png")


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(target))
