"""Shared fixtures: settings on a temporary database and the bot factory for SimCord."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.app import EXTENSIONS, CardtableBot, create_bot
from bot.settings import Settings

TEST_TOKEN = "x" * 24 + ".yyyyyy." + "z" * 27


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings on a fresh database; computers think in a thread (no worker start-up cost).

    Tests of the worker processes themselves start a `ThinkingPool` of their own.
    """
    return Settings(token=TEST_TOKEN, database=tmp_path / "cardtable.db", ai_workers=0)


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
        tables = getattr(bot, "tables", None)
        if tables is not None:
            await tables.thinking.close()


@pytest.fixture
def simcord_bot(make_bot: Callable[[], CardtableBot]) -> CardtableBot:
    """The bot under test, built by the same factory as production."""
    return make_bot()
