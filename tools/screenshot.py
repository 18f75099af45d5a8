"""Render the tables as Discord shows them, to PNG files, for a look (and the README).

Run: uv run --with "simcord[preview,screenshot]" python tools/screenshot.py [OUT_DIR]
Needs a Chromium (Debian: apt-get install chromium); set CHROMIUM to its path if it is
not /usr/bin/chromium. Nothing here runs in the tests.

For each language (English and German) it plays a No Thanks! and a Rage game to the end
and captures, at desktop and at phone width: the lobby, the No Thanks! table, the Rage
table, a Rage player's private panel (and the Joker's colour choice if one came up) and
both final boards. Files are named SCREEN-LANGUAGE-WIDTH.png, e.g. rage_panel-de-phone.png.

With `--dm` it makes only the play-by-post picture for the README instead: a No Thanks!
"your turn" DM with its Take / No thanks! buttons, in English at phone width, as
OUT_DIR/play-by-post-dm.png.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import simcord
import simcord.interactions
from simcord.preview import _capture

from bot.client.bot import create_bot
from bot.render.components import CUSTOM_ID
from bot.runtime.settings import Settings

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Discord locale codes; the table language follows the server's (guild) locale.
LANGUAGES = {"en": "en-US", "de": "de"}
# (width, height) of the captures: a desktop window and a phone in portrait.
SIZES = {"desktop": (1100, 1000), "phone": (390, 844)}
NAMES = ["Ana", "Ben", "Cid", "Dora"]


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


def speak(locale: str) -> None:
    """Make every simulated interaction come from a client and a server in ``locale``."""
    original: Callable[..., Any] = getattr(
        simcord.interactions.base_payload, "__wrapped__", simcord.interactions.base_payload
    )

    def base_payload(*args: Any, **kwargs: Any) -> Any:
        record, payload = original(*args, **kwargs)
        payload["locale"] = locale
        if "guild_locale" in payload:
            payload["guild_locale"] = locale
        return record, payload

    base_payload.__wrapped__ = original  # type: ignore[attr-defined]
    simcord.interactions.base_payload = base_payload  # type: ignore[assignment]


def buttons(components: Any) -> list[tuple[str, bool]]:
    """(custom_id, disabled) of every button in raw or discord.py components, in order."""
    found: list[tuple[str, bool]] = []
    for item in components or []:
        if isinstance(item, dict):
            if item.get("type") == 2 and item.get("custom_id"):
                found.append((item["custom_id"], bool(item.get("disabled"))))
            found += buttons(item.get("components"))
        else:
            custom_id = getattr(item, "custom_id", None)
            if getattr(item, "type", None) == simcord_button_type() and custom_id:
                found.append((custom_id, bool(getattr(item, "disabled", False))))
            found += buttons(getattr(item, "children", None))
    return found


def simcord_button_type() -> Any:
    """discord.py's button component type."""
    import discord

    return discord.ComponentType.button


def button(components: Any, action: str, arg: str | None = None) -> str | None:
    """The custom_id of the first enabled table button with this action (and argument)."""
    for custom_id, disabled in buttons(components):
        match = CUSTOM_ID.fullmatch(custom_id)
        if match is None or disabled or match["action"] != action:
            continue
        if arg is None or (match["arg"] or "").startswith(arg):
            return custom_id
    return None


class Shots:
    """Plays the games in one language and captures the screens."""

    def __init__(self, env: Any, out: Path, language: str) -> None:
        self.env = env
        self.out = out
        self.language = language
        self.written: list[Path] = []

    async def capture(self, name: str, channel: Any, viewer: Any, target: Any = None) -> None:
        """One screen at every size."""
        for size, (width, height) in SIZES.items():
            path = self.out / f"{name}-{self.language}-{size}.png"
            async with self.env.preview(
                channel,
                viewers=[viewer],
                width=width,
                height=height,
                locale=LANGUAGES[self.language],
            ) as preview:
                await preview.screenshot(path, target=target, allow_incomplete=True)
            self.written.append(path)

    def actor(self, members: list[Any], player: str | None) -> Any:
        """The member whose seat this is, or None for a computer player."""
        return next((m for m in members if str(m.id) == player), None)

    async def lobby(self, channel: Any, members: list[Any], command: str, **options: Any) -> Any:
        """Open a lobby, seat two more players; returns the lobby message."""
        result = await members[0].slash(channel, command, bots=1, **options)
        message = result.response.message
        for member in members[1:3]:
            await member.click(message, custom_id=button(message.components, "join"))
        return channel.history()[0]

    async def start(self, channel: Any, members: list[Any]) -> None:
        """The host starts the game in the channel's lobby."""
        message = channel.history()[0]
        await members[0].click(message, custom_id=button(message.components, "start"))

    async def nothanks(self, guild: Any, members: list[Any]) -> None:
        """Lobby, a table in mid-game and the final board."""
        channel = guild.create_text_channel("no-thanks")
        await self.lobby(channel, members, "nothanks start")
        await self.capture("lobby", channel, members[0], channel.history()[0])
        await self.start(channel, members)
        tables = self.env.bot.tables
        table_id = tables.in_channel(channel.id).id
        moves = 0
        while True:
            session = tables.get(table_id)
            if session is None or session.record.status != "running":
                break
            game = session.engine  # a new object after every saved move: read it each time
            actor = self.actor(members, game.active_player)
            if actor is None:
                await self.env.advance_time(2.5)
                continue
            if moves == 14:
                await self.capture("nothanks", channel, members[0], channel.history()[0])
            moves += 1
            take = game.chips_on_card >= 2 or moves > 14
            message = channel.history()[0]
            action = "take" if take else "pass"
            custom_id = button(message.components, action) or button(message.components, "take")
            await actor.click(message, custom_id=custom_id)
        await self.capture("nothanks_final", channel, members[0], channel.history()[0])

    async def rage(self, guild: Any, members: list[Any]) -> None:
        """A Rage table mid-trick, a player's private panel and the final board."""
        channel = guild.create_text_channel("rage")
        await self.lobby(channel, members, "rage start", sweep=True)
        await self.start(channel, members)
        tables = self.env.bot.tables
        table_id = tables.in_channel(channel.id).id
        shot_table = shot_joker = False
        while True:
            session = tables.get(table_id)
            if session is None or session.record.status != "running":
                break
            state = session.engine
            player = state.acting_players()[0]
            actor = self.actor(members, player)
            if actor is None:
                await self.env.advance_time(2.5)
                continue
            table = channel.history()[0]
            panel = await actor.click(table, custom_id=button(table.components, "hand"))
            response = panel.response
            assert response is not None
            in_trick = len(getattr(state, "trick_cards", ()))
            if not shot_table and state.round == 2 and in_trick == 2:
                shot_table = True
                await self.capture("rage", channel, actor, table)
                await self.capture("rage_panel", channel, actor, panel)
            components = response.components
            bids = [c for c, off in buttons(components) if not off and ":bid:" in c]
            custom_id = (
                (bids[len(bids) // 4] if bids else None)
                or next(
                    (
                        c
                        for c, off in buttons(components)
                        if not off and ":play:" in c and ":play:JOKER" not in c
                    ),
                    None,
                )
                or button(components, "play")
            )
            assert custom_id is not None, f"no choice for {player} in {components}"
            result = await actor.click(response.message, custom_id=custom_id)
            if ":play:JOKER" in custom_id:
                # The panel now asks for the Joker's colour.
                shown = result.response or response
                choice = button(shown.components, "joker")
                if choice is None:
                    again = await actor.click(
                        channel.history()[0],
                        custom_id=button(channel.history()[0].components, "hand"),
                    )
                    shown = again.response
                    choice = button(shown.components, "joker")
                if not shot_joker:
                    shot_joker = True
                    await self.capture("rage_joker", channel, actor, shown.message)
                await actor.click(shown.message, custom_id=choice)
        await self.capture("rage_final", channel, members[0], channel.history()[0])


async def your_turn_dm(out: Path) -> Path:
    """A turn-based (24 h) No Thanks! table of three people and a computer, played until
    a person's turn, and that person's "your turn" DM captured at phone width."""
    _capture.ManagedCapture._ensure_browser = _ensure_browser  # type: ignore[method-assign]
    speak(LANGUAGES["en"])
    database = Path(tempfile.mkdtemp()) / "shots.db"
    token = "x" * 24 + ".yyyyyy." + "z" * 27
    bot = create_bot(Settings(token=token, database=database, ai_workers=0))
    path = out / "play-by-post-dm.png"
    async with simcord.run(bot, shard_count=1) as env:
        env.backend.edit_bot_profile("cardtable")
        await env.bot.tree.sync()
        guild = env.create_guild("Friday cards", preferred_locale=LANGUAGES["en"])
        members = [
            guild.add_member(env.create_user(name.lower(), global_name=name)) for name in NAMES
        ]
        channel = guild.create_text_channel("no-thanks")
        result = await members[0].slash(channel, "nothanks start", bots=1, pace="24h")
        message = result.response.message
        for member in members[1:3]:
            await member.click(message, custom_id=button(message.components, "join"))
        start = channel.history()[0]
        await members[0].click(start, custom_id=button(start.components, "start"))
        session = env.bot.tables.in_channel(channel.id)
        shots = Shots(env, out, "en")
        while (actor := shots.actor(members, session.engine.active_player)) is None:
            await env.advance_time(2.5)  # the computer's pause
        # Everyone has just been at the table: the notice waits until they look away.
        await env.advance_time(60)
        notice = next(
            m for m in actor.user.dm_channel.history() if "Your turn" in m.content and m.components
        )
        width, height = SIZES["phone"]
        async with env.preview(
            actor.user.dm_channel,
            viewers=[actor.user],
            width=width,
            height=height,
            locale=LANGUAGES["en"],
        ) as preview:
            await preview.screenshot(path, target=notice, allow_incomplete=True)
        await bot.storage.close()
    return path


async def main(out: Path) -> None:
    """Play both games in each language and capture every screen."""
    _capture.ManagedCapture._ensure_browser = _ensure_browser  # type: ignore[method-assign]
    written: list[Path] = []
    for language, locale in LANGUAGES.items():
        speak(locale)
        database = Path(tempfile.mkdtemp()) / "shots.db"
        # Computers think in a thread here: a screenshot needs no worker processes.
        token = "x" * 24 + ".yyyyyy." + "z" * 27
        bot = create_bot(Settings(token=token, database=database, ai_workers=0))
        # One shard: SimCord's stand-in for the count Discord would recommend.
        async with simcord.run(bot, shard_count=1) as env:
            await env.bot.tree.sync()
            guild = env.create_guild(preferred_locale=locale)
            members = [
                guild.add_member(env.create_user(name.lower(), global_name=name)) for name in NAMES
            ]
            shots = Shots(env, out, language)
            await shots.nothanks(guild, members)
            await shots.rage(guild, members)
            written += shots.written
            await bot.storage.close()
    for path in written:
        print(f"{path} ({path.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--dm"]
    target = Path(arguments[0] if arguments else "screenshots")
    target.mkdir(parents=True, exist_ok=True)
    if "--dm" in sys.argv[1:]:
        made = asyncio.run(your_turn_dm(target))
        print(f"{made} ({made.stat().st_size // 1024} KB)")
    else:
        asyncio.run(main(target))
