"""Replies share one deferral timer: the slow ones are deferred, nothing stays scheduled."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import discord
import pytest

from bot.client import replies as interactions
from bot.client.replies import Reply


class Response:
    """The part of an InteractionResponse a Reply touches."""

    def __init__(self) -> None:
        self.deferred = 0
        self.done = False

    def is_done(self) -> bool:
        """Whether the interaction was answered."""
        return self.done

    async def defer(self, **_: Any) -> None:
        """Acknowledge now, answer later."""
        self.deferred += 1
        self.done = True


def clicked(number: int) -> Any:
    """A component interaction with what a Reply reads."""
    return SimpleNamespace(id=number, type=discord.InteractionType.component, response=Response())


def scheduled(loop: asyncio.AbstractEventLoop) -> int:
    """Timers still pending on the loop (cancelled ones do not count)."""
    return sum(1 for handle in loop._scheduled if not handle.cancelled())  # type: ignore[attr-defined]


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defer after 0.1 s; replies within 0.05 s share a timer."""
    monkeypatch.setattr(interactions, "ANSWER_WITHIN", 0.1)
    monkeypatch.setattr(interactions, "SHARED_SPAN", 0.05)


async def test_replies_started_together_share_one_timer(quick: None) -> None:
    """Ten clicks answered at once set one timer, and leave none behind."""
    loop = asyncio.get_running_loop()
    before = scheduled(loop)
    replies = [Reply(clicked(n)) for n in range(10)]
    for reply in replies:
        await reply.__aenter__()
    assert scheduled(loop) == before + 1
    for reply in replies:
        await reply.__aexit__(None, None, None)
    assert scheduled(loop) == before
    await asyncio.sleep(0.15)
    assert all(reply.interaction.response.deferred == 0 for reply in replies)


async def test_only_the_slow_replies_are_deferred(quick: None) -> None:
    """Of clicks sharing a timer, those still working when it fires are deferred once."""
    fast, slow = clicked(1), clicked(2)
    async with Reply(slow):
        async with Reply(fast):
            pass
        await asyncio.sleep(0.15)
    assert fast.response.deferred == 0
    assert slow.response.deferred == 1


async def test_a_later_reply_gets_a_timer_of_its_own(quick: None) -> None:
    """A click starting after the shared span gets a fresh timer and its full time."""
    first, later = clicked(1), clicked(2)
    async with Reply(first):
        await asyncio.sleep(0.07)  # past the span: the first watch takes no one else
        async with Reply(later):
            await asyncio.sleep(0.05)  # the first timer fires at 0.1: only `first` is due
            assert first.response.deferred == 1
            assert later.response.deferred == 0
            await asyncio.sleep(0.1)
    assert later.response.deferred == 1


async def test_a_handed_click_is_deferred_sooner_by_its_time_on_the_way(
    quick: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A click handed over by another process spent time on its way (answering_sooner):
    its reply is deferred that much sooner and its change's deadline is that much nearer,
    while a click of this process's own, started beside it, keeps its full time; never
    sooner than MIN_WITHIN."""
    monkeypatch.setattr(interactions, "MIN_WITHIN", 0.01)
    own, handed = clicked(1), clicked(2)
    async with Reply(own) as own_reply:
        with interactions.answering_sooner(0.08):
            async with Reply(handed) as handed_reply:
                assert handed_reply.within == pytest.approx(0.02)
                assert handed_reply.deadline == pytest.approx(own_reply.deadline - 0.08, abs=0.01)
                await asyncio.sleep(0.05)  # past the handed one's 0.02 s, within own's 0.1
                assert handed.response.deferred == 1
                assert own.response.deferred == 0
    with interactions.answering_sooner(5.0):
        assert Reply(clicked(3)).within == interactions.MIN_WITHIN
