"""The outbound lane on a fake clock: pacing, latest state wins, priorities, the guard."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import Callable, Hashable

import pytest
from aiohttp import ClientSession, web

from bot.client.bot import CardtableBot
from bot.client.outbound.guard import WINDOW, InvalidRequests
from bot.client.outbound.lane import Lane, Priority, SendGate


class FakeClock:
    """Time that passes only when the test says; sleepers wake in order of their time."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Sleep on the fake clock."""
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + max(seconds, 0.0), next(self._order), future))
        await future

    async def run_for(self, seconds: float) -> None:
        """Let ``seconds`` pass, waking each sleeper at its time and letting tasks run."""
        end = self.now + seconds
        while True:
            await settle()
            while self._sleepers and self._sleepers[0][2].done():
                heapq.heappop(self._sleepers)  # cancelled
            if not self._sleepers or self._sleepers[0][0] > end:
                self.now = end
                await settle()
                return
            when, _, future = heapq.heappop(self._sleepers)
            self.now = max(self.now, when)
            future.set_result(None)


async def settle() -> None:
    """Let every ready task run until it waits again."""
    for _ in range(30):
        await asyncio.sleep(0)


class Recorder:
    """Work that notes when it started, for which key, with which state."""

    def __init__(self, clock: FakeClock, *, takes: float = 0.03) -> None:
        self.clock = clock
        self.takes = takes
        self.started: list[tuple[float, Hashable, object]] = []

    def work(self, key: Hashable, state: object = None):  # type: ignore[no-untyped-def]
        """A piece of work for ``key`` showing ``state``."""

        async def run() -> None:
            self.started.append((self.clock.now, key, state))
            await self.clock.sleep(self.takes)

        return run


def lane_on(clock: FakeClock, rate: float = 45.0) -> Lane:
    """A lane on the fake clock."""
    return Lane(rate, clock=clock, sleep=clock.sleep)


def most_in_one_second(times: list[float]) -> int:
    """The most start times that fall within any one second."""
    times = sorted(times)
    most, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= 1.0:
            first += 1
        most = max(most, last - first + 1)
    return most


async def test_the_lane_keeps_below_the_rate() -> None:
    """A backlog of a thousand targets starts 45 requests a second, never 50 in a second."""
    clock = FakeClock()
    lane, recorder = lane_on(clock), Recorder(clock)
    for number in range(1000):
        lane.put(("dm", number), Priority.DM, recorder.work(number))
    await clock.run_for(10.0)
    started = [at for at, _, _ in recorder.started]
    assert 440 <= len(started) <= 455
    assert most_in_one_second(started) <= 50
    lane.close()


async def test_the_rate_is_a_setting() -> None:
    """A bot granted more runs its lane faster."""
    clock = FakeClock()
    lane, recorder = lane_on(clock, rate=200.0), Recorder(clock)
    for number in range(1000):
        lane.put(number, Priority.DM, recorder.work(number))
    await clock.run_for(2.0)
    assert 390 <= len(recorder.started) <= 425
    lane.close()


async def test_work_costing_two_requests_pays_for_both() -> None:
    """A DM that must open its channel first counts twice against the rate."""
    clock = FakeClock()
    lane, recorder = lane_on(clock, rate=10.0), Recorder(clock)
    for number in range(100):
        lane.put(number, Priority.DM, recorder.work(number), cost=2)
    await clock.run_for(10.0)
    assert 49 <= len(recorder.started) <= 52
    lane.close()


async def test_a_group_runs_one_at_a_time_while_other_work_goes_past_it() -> None:
    """Thirty DM channels to open (a group with one in flight) and thirty edits: the opens
    go one after another, each counted against the rate, and the edits do not wait for
    them."""
    clock = FakeClock()
    lane = lane_on(clock)
    lane.limit_group("dm-open", 1)
    opens, edits = Recorder(clock, takes=0.1), Recorder(clock)
    most_in_flight = 0

    def opening(number: int):  # type: ignore[no-untyped-def]
        work = opens.work(("open", number))

        async def run() -> None:
            nonlocal most_in_flight
            most_in_flight = max(most_in_flight, lane.running_in("dm-open"))
            await work()

        return run

    for number in range(30):
        lane.put(("open", number), Priority.DM, opening(number), group="dm-open")
        lane.put(("edit", number), Priority.DM, edits.work(number))
    await clock.run_for(1.0)
    assert len(edits.started) == 30  # all within the first second at 45 a second
    assert max(at for at, _, _ in edits.started) < 1.0
    assert most_in_flight == 1
    starts = [at for at, _, _ in opens.started]
    assert all(later - earlier >= 0.1 - 1e-9 for earlier, later in itertools.pairwise(starts))
    await clock.run_for(3.0)
    assert len(opens.started) == 30 and lane.running_in("dm-open") == 0
    assert lane.started[Priority.DM] == 60  # each open counted as a request of the lane
    await lane.idle()


async def test_the_latest_pending_state_replaces_the_older() -> None:
    """Ten states of one message put before it goes out: it is sent once, with the last."""
    clock = FakeClock()
    lane, recorder = lane_on(clock), Recorder(clock)
    for state in range(10):
        lane.put("dm", Priority.DM, recorder.work("dm", state))
    await clock.run_for(1.0)
    assert [state for _, _, state in recorder.started] == [9]
    await lane.idle()


async def test_states_put_during_an_edit_make_one_more_edit_after_it() -> None:
    """An edit in flight is never overtaken; what came meanwhile goes out once, after it."""
    clock = FakeClock()
    lane, recorder = lane_on(clock), Recorder(clock, takes=2.0)
    lane.put("dm", Priority.DM, recorder.work("dm", 0))
    await clock.run_for(0.1)
    for state in range(1, 50):
        lane.put("dm", Priority.DM, recorder.work("dm", state))
        await clock.run_for(0.02)
    await clock.run_for(10.0)
    assert [(at, state) for at, _, state in recorder.started] == [(0.0, 0), (2.0, 49)]


async def test_more_urgent_work_goes_first() -> None:
    """With a backlog, the table goes out before pings, pings before DMs, DMs before
    cosmetic work, whatever order they were put in."""
    clock = FakeClock()
    lane, recorder = lane_on(clock, rate=10.0), Recorder(clock)
    for priority in reversed(Priority):
        for number in range(20):
            lane.put((priority.name, number), priority, recorder.work((priority.name, number)))
    await clock.run_for(10.0)
    order = [key[0] for _, key, _ in recorder.started]  # type: ignore[index]
    assert len(order) == 80
    assert order == sorted(order, key=lambda name: Priority[name].value)


async def test_a_table_edit_overtakes_a_dm_backlog() -> None:
    """Thousands of DMs waiting: a table edit put now starts within one request's time."""
    clock = FakeClock()
    lane, recorder = lane_on(clock), Recorder(clock)
    for number in range(5000):
        lane.put(("dm", number), Priority.DM, recorder.work(number))
    await clock.run_for(3.0)
    put_at = clock.now
    lane.put(("table", 1), Priority.TABLE, recorder.work("table"))
    await clock.run_for(1.0)
    (started_at,) = [at for at, key, _ in recorder.started if key == "table"]
    assert started_at - put_at <= 1 / 45 + 1e-9
    lane.close()


async def test_under_overload_dms_slow_down_but_the_last_state_arrives() -> None:
    """Four times the budget of DM changes for 20 s: paced all along, and once they stop
    every DM ends showing its last state."""
    clock = FakeClock()
    lane, recorder = lane_on(clock), Recorder(clock)
    last: dict[int, int] = {}
    for tick in range(20 * 10):  # 180 changes a second, over 60 players' DMs
        for change in range(18):
            player = (tick * 18 + change) % 60
            last[player] = tick
            lane.put(("dm", player), Priority.DM, recorder.work(player, tick))
        await clock.run_for(0.1)
    await clock.run_for(30.0)
    await lane.idle()
    shown: dict[object, object] = {}
    for _, key, state in recorder.started:
        shown[key] = state
    assert shown == last
    assert most_in_one_second([at for at, _, _ in recorder.started]) <= 50


async def test_a_failing_piece_of_work_is_logged_and_the_lane_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An unexpected error is logged with its key; the next work still runs."""
    clock = FakeClock()
    lane, recorder = lane_on(clock), Recorder(clock)

    async def broken() -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR):
        lane.put("bad", Priority.DM, broken)
        lane.put("good", Priority.DM, recorder.work("good"))
        await clock.run_for(1.0)
    assert "outbound work for 'bad' failed" in caplog.text
    assert [key for _, key, _ in recorder.started] == ["good"]


async def test_a_retry_waits_its_delay_unless_a_newer_state_comes() -> None:
    """Work put with a delay waits it; a newer put for the key goes at once instead."""
    clock = FakeClock()
    lane, recorder = lane_on(clock), Recorder(clock)
    lane.put("table", Priority.TABLE, recorder.work("table", "retry"), delay=5.0)
    await clock.run_for(1.0)
    assert recorder.started == []
    lane.put("table", Priority.TABLE, recorder.work("table", "newer"))
    await clock.run_for(0.1)
    assert [state for _, _, state in recorder.started] == ["newer"]
    await clock.run_for(10.0)
    assert len(recorder.started) == 1


async def test_work_held_back_by_the_ceiling_waits_and_then_goes() -> None:
    """Priorities above the ceiling wait (not dropped) until it is lifted."""
    clock = FakeClock()
    lane, recorder = lane_on(clock), Recorder(clock)
    ceiling = [int(Priority.PING)]
    lane.limit_to(lambda: ceiling[0])
    lane.put("dm", Priority.DM, recorder.work("dm"))
    lane.put("ping", Priority.PING, recorder.work("ping"))
    await clock.run_for(5.0)
    assert [key for _, key, _ in recorder.started] == ["ping"]
    ceiling[0] = Priority.COSMETIC
    await clock.run_for(2.0)
    assert [key for _, key, _ in recorder.started] == ["ping", "dm"]


async def test_the_send_gate_keeps_bunched_requests_under_the_rate() -> None:
    """Two hundred requests released at once (a spent bucket's waiters, say) leave at
    most 45 a second, in the order they came."""
    clock = FakeClock()
    gate = SendGate(45.0, clock=clock, sleep=clock.sleep)
    sent: list[tuple[float, int]] = []

    async def request(number: int) -> None:
        await gate.take()
        sent.append((clock.now, number))

    tasks = [asyncio.ensure_future(request(number)) for number in range(200)]
    await clock.run_for(10.0)
    assert [number for _, number in sent] == list(range(200))
    assert most_in_one_second([at for at, _ in sent]) <= 50
    assert sent[-1][0] == pytest.approx((200 - gate.burst) / 45, abs=0.05)
    await asyncio.gather(*tasks)


async def test_an_urgent_request_goes_before_the_queue_at_the_gate_and_counts() -> None:
    """A DM channel opening behind a hundred queued edits leaves within two requests' time,
    and the rate still holds for all of them together."""
    clock = FakeClock()
    gate = SendGate(45.0, clock=clock, sleep=clock.sleep)
    sent: list[tuple[float, str]] = []

    async def request(name: str, urgent: bool = False) -> None:
        await gate.take(urgent=urgent)
        sent.append((clock.now, name))

    tasks = [asyncio.ensure_future(request(f"edit {number}")) for number in range(100)]
    await clock.run_for(0.5)
    put_at = clock.now
    tasks.append(asyncio.ensure_future(request("open", urgent=True)))
    await clock.run_for(5.0)
    (opened_at,) = [at for at, name in sent if name == "open"]
    assert opened_at - put_at <= 2 / 45 + 1e-9
    assert len(sent) == 101
    assert most_in_one_second([at for at, _ in sent]) <= 46
    await asyncio.gather(*tasks)


# -- the invalid-request guard --------------------------------------------------------------


def test_the_guard_sheds_lower_priorities_well_before_a_ban(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Refusals pile up: DMs and cosmetic work stop at 500 (an error logged), pings at
    2,000, everything at 5,000; shared 429s and successes do not count; it all comes back
    as the refusals leave the 10-minute window."""
    clock = FakeClock()
    guard = InvalidRequests(clock=clock)
    assert guard.ceiling() == Priority.COSMETIC
    for _ in range(1000):
        guard.note(429, scope="shared")
        guard.note(200)
    assert guard.count == 0
    with caplog.at_level(logging.ERROR):
        for _ in range(499):
            guard.note(403)
        assert guard.ceiling() == Priority.COSMETIC and not caplog.records
        guard.note(429, scope="user")
        assert guard.ceiling() == Priority.PING
    assert "holding back dm, cosmetic" in caplog.text
    for _ in range(1500):
        guard.note(429, scope="global")
    assert guard.ceiling() == Priority.TABLE
    for _ in range(3000):
        guard.note(404)  # not an invalid request
        guard.note(403)
    assert guard.ceiling() == 0
    clock.now += WINDOW + 1
    assert guard.ceiling() == Priority.COSMETIC and guard.count == 0


def test_a_401_with_the_bots_token_stops_the_bot_once() -> None:
    """A 401 to the bot's own token calls on_revoked (once); an interaction's 401 does not."""
    stops: list[None] = []
    guard = InvalidRequests(on_revoked=lambda: stops.append(None), clock=FakeClock())
    guard.note(401, authorized=False)
    assert stops == []
    guard.note(401, authorized=True)
    guard.note(401, authorized=True)
    assert stops == [None] and guard.count == 3


async def test_the_trace_sees_a_revoked_token_on_the_wire() -> None:
    """Through discord.py's session trace: a 401 to a request with the bot's token stops
    the bot; a 401 without it (an interaction's token) and a shared 429 only count."""
    answers = [(401, {}), (401, {"Authorization": "Bot x"}), (429, {})]
    scope = {"X-RateLimit-Scope": "shared"}

    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=int(request.query["status"]), headers=scope)

    app = web.Application()
    app.router.add_get("/", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    stops: list[None] = []
    guard = InvalidRequests(on_revoked=lambda: stops.append(None))
    try:
        async with ClientSession(trace_configs=[guard.trace_config()]) as session:
            for status, headers in answers:
                url = f"http://127.0.0.1:{port}/?status={status}"
                async with session.get(url, headers=headers) as response:
                    assert response.status == status
    finally:
        await runner.cleanup()
    assert stops == [None] and guard.count == 2


async def test_a_revoked_token_stops_the_bot_with_one_line(
    make_bot: Callable[[], CardtableBot],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bot's guard sees a 401 for its token: one critical line naming DISCORD_TOKEN,
    exit status 1, and the bot closes (once, however many 401s follow)."""
    bot = make_bot()
    closed: list[None] = []

    async def close() -> None:
        closed.append(None)

    monkeypatch.setattr(bot, "close", close)
    with caplog.at_level(logging.CRITICAL):
        bot.guard.note(401, authorized=True)
        bot.guard.note(401, authorized=True)
        await settle()
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.CRITICAL]
    assert len(lines) == 1 and "DISCORD_TOKEN" in lines[0]
    assert bot.exit_status == 1 and closed == [None]
