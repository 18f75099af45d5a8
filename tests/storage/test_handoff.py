"""Clicks handed between processes on PostgreSQL (bot.client.handoff's storage half): a
handed click is claimed once, a claim and a cancel never both win, the owner's listener
is woken by the hand itself (LISTEN/NOTIFY) and comes back after the database went away.

Each storage here stands for one process of the bot: the receiver that hands a click
over, the owner that listens for its shards and claims.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from bot.storage import Storage, open_storage
from bot.storage import postgres as postgres_module
from bot.storage.postgres import PostgresStorage
from tests.backends import TemporaryServer, drop_schema, fresh_schema, module_server

# How long a notification may take to arrive on a loaded machine: a limit, not a wait.
PROMPTLY = 10.0
# How long the listener may take to come back once the server is up again (start-up of
# the server and its crash recovery included).
PATIENCE = 60.0


class Heard:
    """What a listener was offered: (click id, shard) in order, and a way to await more."""

    def __init__(self) -> None:
        self.offers: list[tuple[int, int]] = []
        self._changed = asyncio.Event()

    def __call__(self, click_id: int, shard: int) -> None:
        self.offers.append((click_id, shard))
        self._changed.set()

    async def offered(self, click_id: int, limit: float = PROMPTLY) -> None:
        """Until ``click_id`` was offered (fails after ``limit`` seconds)."""
        async with asyncio.timeout(limit):
            while click_id not in [offer[0] for offer in self.offers]:
                self._changed.clear()
                await self._changed.wait()


@pytest.fixture
async def processes(postgres_url: str) -> AsyncIterator[tuple[Storage, Storage]]:
    """Two storages on one database: the receiver's and the owner's."""
    receiver = await open_storage(postgres_url)
    owner = await open_storage(postgres_url)
    try:
        yield receiver, owner
    finally:
        await owner.close()
        await receiver.close()


async def test_a_handed_click_is_claimed_once_and_then_cannot_be_cancelled(
    processes: tuple[Storage, Storage],
) -> None:
    """Two claims race: exactly one gets the payload and when it was handed; the other,
    a later claim and the receiver's cancel all find it taken."""
    receiver, owner = processes
    assert receiver.hands_off
    handed_at = time.time()
    click_id = await receiver.hand_click(1, '{"id": "42"}', handed_at)
    claims = await asyncio.gather(
        owner.claim_click(click_id, "owner", time.time()),
        receiver.claim_click(click_id, "intruder", time.time()),
    )
    won = [claim for claim in claims if claim is not None]
    assert won == [('{"id": "42"}', pytest.approx(handed_at))]
    assert await owner.claim_click(click_id, "owner", time.time()) is None
    assert await receiver.cancel_click(click_id) is False


async def test_a_claim_and_a_cancel_racing_never_both_win(
    processes: tuple[Storage, Storage],
) -> None:
    """Over many races of the owner's claim against the receiver's cancel, exactly one of
    them wins each time (so exactly one process answers the click); a cancelled click is
    never claimed afterwards."""
    receiver, owner = processes
    for number in range(30):
        click_id = await receiver.hand_click(0, f'{{"id": "{number}"}}', time.time())
        claim, cancelled = await asyncio.gather(
            owner.claim_click(click_id, "owner", time.time()), receiver.cancel_click(click_id)
        )
        assert (claim is not None) != cancelled, (number, claim, cancelled)
        if cancelled:
            assert await owner.claim_click(click_id, "owner", time.time()) is None


async def test_the_hand_wakes_the_owners_listener_for_its_own_shards_only(
    processes: tuple[Storage, Storage],
) -> None:
    """The owner listens for shards 1 and 3: a click handed to shard 2 is not offered to
    it, one handed to shard 1 is, at once, by the hand's own notification."""
    receiver, owner = processes
    heard = Heard()
    await owner.listen_for_clicks([1, 3], heard)
    elsewhere = await receiver.hand_click(2, "{}", time.time())
    ours = await receiver.hand_click(1, "{}", time.time())
    await heard.offered(ours)
    # Notifications arrive in commit order: shard 2's came first and was passed over.
    assert heard.offers == [(ours, 1)] and elsewhere not in (offer[0] for offer in heard.offers)


async def test_clicks_handed_before_listening_are_offered_when_it_starts(
    processes: tuple[Storage, Storage],
) -> None:
    """A notification sent while nobody listened is lost: listening (again) offers every
    click still unclaimed for its shards, and not the claimed or cancelled ones."""
    receiver, owner = processes
    waiting = await receiver.hand_click(1, "{}", time.time())
    claimed = await receiver.hand_click(1, "{}", time.time())
    cancelled = await receiver.hand_click(1, "{}", time.time())
    other = await receiver.hand_click(0, "{}", time.time())
    assert await receiver.claim_click(claimed, "someone", time.time()) is not None
    assert await receiver.cancel_click(cancelled)
    heard = Heard()
    await owner.listen_for_clicks([1], heard)
    assert heard.offers == [(waiting, 1)]
    assert other not in [offer[0] for offer in heard.offers]


async def test_settled_and_old_handed_clicks_are_deleted(
    processes: tuple[Storage, Storage],
) -> None:
    """Forgetting a settled click deletes it and every click older than the limit, and
    leaves a recent one (still in its handoff) alone."""
    receiver, _ = processes
    old = await receiver.hand_click(1, "{}", time.time() - 3600)
    settled = await receiver.hand_click(1, "{}", time.time())
    recent = await receiver.hand_click(1, "{}", time.time())
    assert await receiver.cancel_click(settled)
    await receiver.forget_clicks(settled, time.time() - 60)
    rows = await receiver.read("SELECT id FROM handed_clicks ORDER BY id")
    assert [row[0] for row in rows] == [recent], old


@pytest.fixture(scope="module")
def own_server() -> Iterator[TemporaryServer]:
    """A PostgreSQL server of this module's own, stopped and started under a listener."""
    yield from module_server("stop and start under a listener")


async def test_the_listener_comes_back_after_the_database_went_away(
    own_server: TemporaryServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server stops as in a crash: the owner's listening connection is lost and
    logged. Once the server is back, a click handed to the owner's shard reaches it
    (by a notification, or by the offer of what waits when listening resumes)."""
    # The retries' pauses shortened: the test waits for the server, not for the backoff.
    monkeypatch.setattr(postgres_module, "RECLAIM_DELAYS", (0.0, 0.05))
    name, url = await fresh_schema(own_server.url)
    owner = await PostgresStorage.connect(url)
    receiver: Storage | None = None
    heard = Heard()
    try:
        await owner.listen_for_clicks([1], heard)
        with caplog.at_level(logging.WARNING, logger="bot.storage.postgres"):
            own_server.halt("immediate")
            own_server.resume()
            receiver = await open_storage(url)
            click_id = await receiver.hand_click(1, "{}", time.time())
            await heard.offered(click_id, PATIENCE)
        said = [record.getMessage() for record in caplog.records]
        assert any("listening for handed clicks; listening again" in line for line in said)
        # Handed while listening resumed, a click may be offered twice (its notification
        # and the offer of what waits): harmless, as only one claim can take it.
        offers = [offer for offer in heard.offers if offer[0] == click_id]
        assert offers and set(offers) == {(click_id, 1)}
        assert await owner.claim_click(click_id, "owner", time.time()) is not None
        assert await owner.claim_click(click_id, "owner", time.time()) is None
    finally:
        if receiver is not None:
            await receiver.close()
        await owner.close()
        await drop_schema(own_server.url, name)
