"""Players' DMs in the outbound lane: which priority a DM's work is put at."""

from __future__ import annotations

from collections.abc import Hashable
from types import SimpleNamespace
from typing import Any

import pytest

from bot.client.outbound.lane import Priority
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
