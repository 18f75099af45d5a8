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
from tests.e2e.helpers import choose, open_table
from tests.e2e.test_rage_table import open_rage

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PHONE = (390, 4000)  # a phone's width; tall enough that the whole message is in view
# Where CI keeps the screenshots for a look (unset: not kept).
SHOTS = os.environ.get("CARDTABLE_PHONE_SHOTS")

# Height budgets (CSS px at 390 px wide, mid-game): a phone's screen is about 844 px tall,
# and the table should leave room for the chat around it.
BUDGETS = {("nothanks", 4): 700, ("nothanks", 7): 780, ("rage", 4): 700, ("rage", 8): 844}

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


@pytest.mark.parametrize("pictures", [True, False])
@pytest.mark.parametrize(("count", "open_chips"), [(4, False), (7, True)])
async def test_nothanks_table_height_on_a_phone(
    simcord_env: Env, count: int, open_chips: bool, pictures: bool
) -> None:
    """A mid-game No Thanks! table fits its height budget on a phone."""
    table, message = await nothanks_mid_game(simcord_env, count, open_chips=open_chips)
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
        f"nothanks-{count}-{'pictures' if pictures else 'text'}",
    )
    print(f"nothanks {count} players, pictures {pictures}: {height} px")
    assert 200 < height <= BUDGETS[("nothanks", count)]


@pytest.mark.parametrize("pictures", [True, False])
@pytest.mark.parametrize("count", [4, 8])
async def test_rage_table_height_on_a_phone(
    simcord_env: Env, make_bot: Callable[[], CardtableBot], count: int, pictures: bool
) -> None:
    """A mid-game Rage table fits its height budget on a phone."""
    table = await open_rage(simcord_env, count)
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
        f"rage-{count}-{'pictures' if pictures else 'text'}",
    )
    print(f"rage {count} players, pictures {pictures}: {height} px")
    assert 200 < height <= BUDGETS[("rage", count)]
