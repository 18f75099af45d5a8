"""The garbage collector's tuning: rarer collections, start-up's objects frozen once."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from simcord import Env

from bot.runtime import gc_tuning as collector


@pytest.fixture
def thresholds() -> Iterator[None]:
    """Restore the process's collector thresholds after the test."""
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_tune_sets_the_thresholds(thresholds: None) -> None:
    """tune() raises the young threshold well above CPython's default of 700."""
    collector.tune()
    assert gc.get_threshold() == collector.THRESHOLDS
    assert collector.THRESHOLDS[0] > 700


def test_freeze_survivors_freezes_what_is_alive() -> None:
    """After freeze_survivors() the objects alive are out of the collector's reach."""
    try:
        collector.freeze_survivors()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


async def test_bot_freezes_once_when_asked(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot started by `python -m bot` freezes on its first on_ready only; a reconnect's
    on_ready does not freeze again, and a bot not asked to (a test's) never freezes."""
    calls: list[None] = []
    monkeypatch.setattr(collector, "freeze_survivors", lambda: calls.append(None))
    bot = simcord_env.bot
    await simcord_env.settle()
    await bot.on_ready()
    assert calls == []
    bot.freeze_when_ready = True
    await bot.on_ready()
    await bot.on_ready()
    assert calls == [None]
