"""Players' DMs in the outbound lane: which priority a DM's work is put at."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from functools import partial
from types import SimpleNamespace
from typing import Any

import pytest

from bot.client.outbound.lane import Lane, Priority
from bot.client.publishing.dms import DM_GAP, PlayerDms
from bot.table.spec import Letter

PLAYER = "700000000000000001"


class RecordingLane:
    """A lane that only notes what is put in it, and at which priority."""

    def __init__(self) -> None:
        self.puts: list[tuple[Hashable, Priority]] = []
        self.delays: list[float] = []

    def limit_group(self, group: Hashable, in_flight: int) -> None:
        """Groups do not matter here."""

    def put(
        self, key: Hashable, priority: Priority, work: Any, *, delay: float = 0.0, **options: Any
    ) -> None:
        """Note the key, the priority and the delay; the work never runs."""
        self.puts.append((key, priority))
        self.delays.append(delay)


def session_with(status: str) -> SimpleNamespace:
    """A table at ``status`` whose game keeps no living DM (each letter a new DM)."""
    return SimpleNamespace(
        id=7,
        status=status,
        turn_based=False,
        spec=SimpleNamespace(renderer=object()),
        meta=SimpleNamespace(dm_closed=set()),
        jump_url="https://discord.com/channels/1/2/3",
        user_locale=lambda player: "en-US",
        engine=None,
    )


@pytest.mark.parametrize("known_channel", [False, True])
@pytest.mark.parametrize(
    ("status", "priority"),
    [
        ("running", Priority.DM),
        ("finished", Priority.PING),
        ("abandoned", Priority.PING),
    ],
)
def test_a_finished_games_dm_goes_ahead_of_running_games_dms(
    status: str, priority: Priority, known_channel: bool
) -> None:
    """A running game's DM waits at the DMs' priority; the DM a game's end causes (the
    final chips) goes at the turn pings', ahead of every running game's DM backlog, and so
    does opening the player's DM channel for it."""
    lane = RecordingLane()
    dms = PlayerDms(SimpleNamespace(), lane)  # type: ignore[arg-type]
    if known_channel:
        dms._dm_channels[int(PLAYER)] = 99
    letter = Letter(PLAYER, "nothanks.dm.took", {"card": 30, "gained": 3, "count": 4})
    dms.deliver(session_with(status), [letter])  # type: ignore[arg-type]
    assert len(lane.puts) == 1
    key, put_at = lane.puts[0]
    assert key == (("dm", 7, PLAYER) if known_channel else ("dm-open", int(PLAYER)))
    assert put_at is priority


@pytest.mark.parametrize(("status", "waits"), [("running", True), ("finished", False)])
async def test_a_running_games_dm_leaves_room_in_the_channels_bucket(
    status: str, waits: bool
) -> None:
    """Right after a DM request to a player, a running game's next DM to them waits
    DM_GAP (four of Discord's five edits per 5 s a channel at most), while the DM that
    ends a game goes at once: a spent bucket never holds the final chips."""
    lane = RecordingLane()
    dms = PlayerDms(SimpleNamespace(), lane)  # type: ignore[arg-type]
    dms._dm_channels[int(PLAYER)] = 99
    dms._requested(int(PLAYER))
    letter = Letter(PLAYER, "nothanks.dm.took", {"card": 30, "gained": 3, "count": 4})
    dms.deliver(session_with(status), [letter])  # type: ignore[arg-type]
    (delay,) = lane.delays
    if waits:
        assert DM_GAP - 0.1 < delay <= DM_GAP
    else:
        assert delay == 0.0


async def test_dm_channels_for_other_dms_open_one_at_a_time() -> None:
    """A wave of DMs to new people (turn notices) opens their channels one request at a
    time, beside the public ``dm_channel`` of a summary: each channel opened once, each
    waiting DM called in order once its channel is known, and a later one at once."""
    in_flight = most = 0
    opened: list[int] = []

    async def create_dm(user: Any) -> SimpleNamespace:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        try:
            await asyncio.sleep(0.001)  # an answer's time on the wire, so opens could overlap
            return SimpleNamespace(id=10_000 + user.id)
        finally:
            in_flight -= 1
            opened.append(user.id)

    async def ready() -> None:
        """The bot is ready."""

    host = SimpleNamespace(
        create_dm=create_dm,
        wait_until_ready=ready,
        get_partial_messageable=lambda channel_id, type: SimpleNamespace(id=channel_id),
    )
    lane = Lane(rate=1000.0)
    dms = PlayerDms(host, lane)  # type: ignore[arg-type]
    called: list[int] = []
    for user in range(1, 21):
        dms.open_then(user, Priority.PING, partial(called.append, user))
    channels = await asyncio.gather(*(dms.dm_channel(user) for user in range(21, 26)))
    await asyncio.wait_for(lane.idle(), 10)
    assert most == 1
    assert sorted(opened) == list(range(1, 26))
    assert called == list(range(1, 21))
    assert [channel.id for channel in channels] == [10_000 + user for user in range(21, 26)]
    dms.open_then(3, Priority.PING, partial(called.append, 3))
    assert called[-1] == 3 and len(opened) == 25
    assert all(dms.knows_channel(user) for user in range(1, 26))


def test_a_running_turn_based_games_dms_go_last() -> None:
    """A running turn-based game's living DM waits at the lowest priority (its people are
    away; their notice shows their chips), behind the live tables' DMs."""
    lane = RecordingLane()
    dms = PlayerDms(SimpleNamespace(), lane)  # type: ignore[arg-type]
    dms._dm_channels[int(PLAYER)] = 99
    session = session_with("running")
    session.turn_based = True
    letter = Letter(PLAYER, "nothanks.dm.took", {"card": 30, "gained": 3, "count": 4})
    dms.deliver(session, [letter])  # type: ignore[arg-type]
    assert lane.puts == [(("dm", 7, PLAYER), Priority.COSMETIC)]
