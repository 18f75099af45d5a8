"""The table message's height on a phone, measured in a real browser (SimCord's preview in
Debian's Chromium at 390 px wide), mid-game, with pictures on and off."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from simcord import Env
from simcord.preview import _capture

from bot.client.bot import CardtableBot
from bot.engines.rage import RageState
from tests.e2e.helpers import choose, message_by_id, open_table
from tests.e2e.test_rage_table import RageTable, open_rage, pick
from tests.render.images.scenes import LONG_NAMES

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PHONE = (390, 4000)  # a phone's width; tall enough that the whole message is in view
# Where CI keeps the screenshots for a look (unset: not kept).
SHOTS = os.environ.get("CARDTABLE_PHONE_SHOTS")

# Height budgets (CSS px at 390 px wide, mid-game): a phone's screen is about 844 px tall,
# and the table should leave room for the chat around it.
BUDGETS = {("nothanks", 4): 700, ("nothanks", 7): 780, ("rage", 4): 700, ("rage", 8): 844}
# With long names (scenes.LONG_NAMES, up to 32 characters) the table may take the whole
# screen: the picture's rows then give each name two lines.
LONG_BUDGETS = {("nothanks", 7): 844, ("rage", 8): 844}

# CI installs chromium (.ci/run), so there a missing browser fails instead of skipping.
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and shutil.which("chromium") is None and not os.environ.get("CI"),
    reason="Debian's chromium is needed (.ci/run installs it)",
)


async def _system_chromium(self: Any) -> Any:
    """Launch the system Chromium instead of a Playwright download (no internet here)."""
    if self._browser is None:
        from playwright.async_api import async_playwright

        self._playwright = await async_playwright().start()
        self._browser = await self._playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
    return self._browser


@pytest.fixture(autouse=True)
def system_chromium(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every capture uses Debian's chromium."""
    monkeypatch.setattr(_capture.ManagedCapture, "_ensure_browser", _system_chromium)


async def height_of(env: Env, channel: Any, viewer: Any, message: Any, name: str) -> int:
    """The message's height in CSS px at 390 px wide, as the preview lays it out."""
    path = Path(SHOTS) / f"{name}.png" if SHOTS else None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    async with env.preview(
        channel, viewers=[viewer], width=PHONE[0], height=PHONE[1], locale="en-US"
    ) as preview:
        capture = await preview.screenshot(
            path, target=message, allow_incomplete=True, layout="message"
        )
    return capture.output_height


async def nothanks_mid_game(env: Env, count: int, **options: Any) -> tuple[Any, Any]:
    """A No Thanks! table of ``count`` people twelve moves in: (table, its message)."""
    table = await open_table(env, count, **options)
    for _ in range(12):
        await table.click(table.active(), choose(table.game))
    return table, table.message


@pytest.mark.parametrize(
    ("count", "open_chips", "pictures", "long_names"),
    [
        (4, False, True, False),
        (4, False, False, False),
        (7, True, True, False),
        (7, True, False, False),
        (7, True, True, True),
    ],
)
async def test_nothanks_table_height_on_a_phone(
    simcord_env: Env, count: int, open_chips: bool, pictures: bool, long_names: bool
) -> None:
    """A mid-game No Thanks! table fits its height budget on a phone (also with seven
    long names: several words, emoji, Cyrillic, up to 32 characters)."""
    nicks = LONG_NAMES if long_names else None
    table, message = await nothanks_mid_game(simcord_env, count, open_chips=open_chips, nicks=nicks)
    if not pictures:
        simcord_env.bot.images._values[table.guild.id] = False
        simcord_env.bot.publisher.refresh(table.session)
        await simcord_env.settle()
        message = table.message
    height = await height_of(
        simcord_env,
        table.channel,
        table.players[0],
        message,
        f"nothanks-{count}-{'pictures' if pictures else 'text'}{'-long' if long_names else ''}",
    )
    print(f"nothanks {count} players, pictures {pictures}, long names {long_names}: {height} px")
    assert 200 < height <= (LONG_BUDGETS if long_names else BUDGETS)[("nothanks", count)]


@pytest.mark.parametrize(
    ("count", "pictures", "long_names"),
    [(4, True, False), (4, False, False), (8, True, False), (8, False, False), (8, True, True)],
)
async def test_rage_table_height_on_a_phone(
    simcord_env: Env,
    make_bot: Callable[[], CardtableBot],
    count: int,
    pictures: bool,
    long_names: bool,
) -> None:
    """A mid-game Rage table fits its height budget on a phone (also with eight
    long names: the issue measured 714 px)."""
    table = await open_rage(simcord_env, count, LONG_NAMES if long_names else None)
    state: RageState = table.state
    rng = random.Random(count)
    while state.round < 3 or len(state.current_trick) < count // 2:
        (player,) = state.acting_players()
        await table.act(player, rng.choice(state.legal_actions(player)))
        state = table.state
    if not pictures:
        simcord_env.bot.images._values[table.guild.id] = False
    simcord_env.bot.publisher.refresh(simcord_env.bot.tables.get(table.table_id))
    await simcord_env.settle()
    height = await height_of(
        simcord_env,
        table.channel,
        table.players[0],
        table.message,
        f"rage-{count}-{'pictures' if pictures else 'text'}{'-long' if long_names else ''}",
    )
    print(f"rage {count} players, pictures {pictures}, long names {long_names}: {height} px")
    assert 200 < height <= (LONG_BUDGETS if long_names else BUDGETS)[("rage", count)]


# The final board (the scoreboard a finished game leaves in the channel) must fit a phone's
# whole screen: it is the one message everyone looks at when the game ends.
FINAL_BUDGET = 844


async def _seat_with_computers(env: Env, game: str, count: int) -> tuple[Any, Any, Any, int]:
    """One person and ``count - 1`` normal computers at a started table of ``game``: (the
    guild, the channel, the person, the table id). Computers are named with their level
    ('🤖 Computer 1 (normal)'), the longest names a final board shows."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel(game)
    ana = guild.add_member(env.create_user("ana"))
    result = await ana.slash(channel, f"{game} start", bots=count - 1, bot_level="normal")
    assert result.response is not None and not result.ephemeral
    await ana.click(result.response.message, label="Start")
    session = env.bot.tables.in_channel(channel.id)
    assert session is not None
    return guild, channel, ana, session.id


@pytest.mark.parametrize("count", [4, 7])
async def test_nothanks_final_board_height_on_a_phone(simcord_env: Env, count: int) -> None:
    """A No Thanks! final board, after a whole game, fits a phone's screen with pictures on."""
    env = simcord_env
    _, channel, ana, table_id = await _seat_with_computers(env, "nothanks", count)
    message_id = env.bot.tables.get(table_id).record.message_id
    for _ in range(2000):
        session = env.bot.tables.get(table_id)
        if session is None or session.status != "running":
            break
        game = session.engine
        if game.active_player == str(ana.id):
            await ana.click(message_by_id(env, channel, message_id), label=choose(game))
        else:
            await env.settle()
    message = message_by_id(env, channel, message_id)
    assert message.embeds and message.attachments, "the final board and its picture"
    height = await height_of(env, channel, ana, message, f"nothanks-{count}-final")
    print(f"nothanks {count} players, final board: {height} px")
    assert 200 < height <= FINAL_BUDGET


@pytest.mark.parametrize("count", [4, 8])
async def test_rage_final_board_height_on_a_phone(simcord_env: Env, count: int) -> None:
    """A Rage final board, after a whole game, fits a phone's screen with pictures on."""
    env = simcord_env
    guild, channel, ana, table_id = await _seat_with_computers(env, "rage", count)
    message_id = env.bot.tables.get(table_id).record.message_id
    table = RageTable(env, guild, channel, [ana], message_id)
    for _ in range(5000):
        if not table.running:
            break
        state = table.state
        if str(ana.id) in state.acting_players():
            await table.act(str(ana.id), pick(state, str(ana.id)))
        else:
            await env.settle()
    message = table.message
    assert message.embeds and message.attachments, "the final board and its picture"
    height = await height_of(env, channel, ana, message, f"rage-{count}-final")
    print(f"rage {count} players, final board: {height} px")
    assert 200 < height <= FINAL_BUDGET
