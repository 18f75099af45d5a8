"""Shared fixtures: settings on a temporary database and the bot factory for SimCord."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from simcord import Env

from bot.app import EXTENSIONS, CardtableBot, create_bot
from bot.settings import Settings

TEST_TOKEN = "x" * 24 + ".yyyyyy." + "z" * 27


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings pointing at a fresh database in a temporary folder."""
    return Settings(token=TEST_TOKEN, database=tmp_path / "cardtable.db")


@pytest.fixture
def bot_extensions() -> tuple[str, ...]:
    """The extensions each test bot loads (a module may add a game of its own)."""
    return EXTENSIONS


@pytest.fixture
async def make_bot(
    settings: Settings, bot_extensions: tuple[str, ...]
) -> AsyncIterator[Callable[[], CardtableBot]]:
    """A factory of fresh bots on the test database; their databases are closed afterwards."""
    bots: list[CardtableBot] = []

    def make() -> CardtableBot:
        bot = create_bot(settings, extensions=bot_extensions)
        bots.append(bot)
        return bot

    yield make
    for bot in bots:
        storage = getattr(bot, "storage", None)
        if storage is not None:
            # SimCord never calls bot.close(); an open aiosqlite thread would outlive the test.
            await storage.close()


@pytest.fixture
def simcord_bot(make_bot: Callable[[], CardtableBot]) -> CardtableBot:
    """The bot under test, built by the same factory as production."""
    return make_bot()


@pytest.fixture
async def simcord_env(
    simcord_bot: CardtableBot, request: pytest.FixtureRequest
) -> AsyncIterator[Env]:
    """SimCord around the bot, as its pytest plugin makes it, with one default added.

    Without SHARD_COUNT the bot leaves the shard count to Discord (AutoShardedBot asks at
    connect time); SimCord stands in for that answer with its ``shard_count`` option, here
    one shard unless the test's ``simcord`` marker says otherwise.
    """
    marker = request.node.get_closest_marker("simcord")
    options = dict(marker.kwargs) if marker else {}
    if simcord_bot.shard_count is None:
        options.setdefault("shard_count", 1)
    env = Env(simcord_bot, **options)
    await env.start()
    try:
        yield env
    finally:
        await env.shutdown()
        if env.check_errors:
            # What the plugin's own fixture does: errors the bot swallowed fail the test.
            env._raise_errors_since(env._errors_acknowledged)
