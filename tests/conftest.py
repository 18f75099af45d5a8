"""Shared fixtures: settings on a temporary database and the bot factory for SimCord."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import CardtableBot, create_bot
from bot.settings import Settings

TEST_TOKEN = "x" * 24 + ".yyyyyy." + "z" * 27


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings pointing at a fresh database in a temporary folder."""
    return Settings(token=TEST_TOKEN, database=tmp_path / "cardtable.db")


@pytest.fixture
def simcord_bot(settings: Settings) -> CardtableBot:
    """The bot under test, built by the same factory as production."""
    return create_bot(settings)
