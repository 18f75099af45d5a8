"""/cardtable away with two processes on PostgreSQL, through SimCord: the bot runs shard 0
of 2, a second table core in the same test process runs shard 1 on the same database.
The answer counts the person's tables on both; each process holds its own, the other
one at its next look (every ABSENCE_SECONDS on the virtual clock)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from simcord import Env

from bot.games.nothanks import SPEC as NOTHANKS
from bot.runtime.settings import Settings
from bot.storage import open_storage
from bot.table.meta import PACES
from bot.table.session import Draft, TableSession
from bot.table.shards import ShardSet
from bot.table.tables import ABSENCE_SECONDS, Tables
from tests.conftest import TEST_TOKEN, UNPACED
from tests.e2e.helpers import Table
from tests.table.harness import RecordingPublisher, open_lobby_in

DAY = PACES["24h"]
# guild_id = n << 22 is on shard n % 2: EVEN_GUILD on the bot's shard 0, ODD_GUILD on 1.
EVEN_GUILD = 8 << 22
ODD_GUILD = 9 << 22
ODD_CHANNEL = 4242


@pytest.fixture
def settings(tmp_path: Path, postgres_url: str) -> Settings:
    """The bot under test is the process of shard 0 of 2, on the test's PostgreSQL schema."""
    return Settings(
        token=TEST_TOKEN,
        database=tmp_path / "cardtable.db",
        database_url=postgres_url,
        shard_count=2,
        shard_ids=(0,),
        ai_workers=0,
        rest_rate=UNPACED,
    )


@pytest.fixture
async def other_process(simcord_env: Env, postgres_url: str) -> AsyncIterator[Tables]:
    """The process of shard 1: a table core with its own connections to the same
    database, on the bot's (virtual) clock, its timers held."""
    storage = await open_storage(postgres_url)
    tables = Tables(
        storage,
        clock=simcord_env.bot.tables.clock,
        ready=asyncio.Event().wait,
        shards=ShardSet.of(2, [1]),
    )
    tables.register(NOTHANKS)
    tables.publisher = RecordingPublisher()
    try:
        yield tables
    finally:
        tables.close()
        await storage.close()


async def game_on_shard_1(tables: Tables, people: list[int]) -> TableSession:
    """A running 24 h No Thanks! game of these people in a guild of shard 1."""
    session = await open_lobby_in(
        tables, NOTHANKS, guild=ODD_GUILD, channel=ODD_CHANNEL, pace=DAY, host=people[0]
    )
    for person in people[1:]:
        await session.change(partial(Draft.join, user_id=person, name="guest", locale=None))
    await session.change(lambda d: d.start(people[0], 7))
    return session


def text_of(answer: object) -> str:
    """The content of a deferred command's answer (its follow-up) or of its response."""
    followups = getattr(answer, "followups", None)
    message = followups[-1] if followups else getattr(answer, "response", None)
    assert message is not None, answer
    return str(message.content)


async def test_away_counts_both_processes_tables_and_each_holds_its_own(
    simcord_env: Env, other_process: Tables
) -> None:
    """/cardtable away in a DM, answered by shard 0's process: the answer counts the
    person's turn-based tables on both shards; shard 0's table shows "away until" at
    once, shard 1's holds them at its process's look. Back, said through shard 1's
    process, releases shard 0's table at the bot's own next look, on the virtual clock."""
    env = simcord_env
    if "cogs.cardtable" not in env.bot.extensions:
        await env.bot.load_extension("cogs.cardtable")
    await env.bot.tree.sync()
    guild = env.create_guild("even", id=EVEN_GUILD)
    channel = guild.create_text_channel("games")
    players = [guild.add_member(env.create_user(name)) for name in ("ana", "ben", "cid")]
    opened = await players[0].slash(channel, "nothanks start", pace="24h")
    assert opened.response is not None and not opened.ephemeral, opened
    session = env.bot.tables.in_channel(channel.id)
    assert session is not None
    table = Table(env, guild, channel, players, opened.response.id, session.id)
    for player in players[1:]:
        await table.click(player, "Join")
    await table.click(players[0], "Start")
    actor = table.active()
    others = [player.id for player in players if player != actor]
    theirs = await game_on_shard_1(other_process, [actor.id, *others])

    answer = await actor.user.slash("cardtable away", days=2)
    assert "You are away until" in text_of(answer) and "tables now: 2" in text_of(answer)
    until = table.session.meta.held[str(actor.id)]
    assert "is away until <t:" in (table.embed.description or "")
    assert theirs.meta.held == {}  # shard 1's process has not looked yet
    assert await other_process.poll_absences() == 1
    assert theirs.meta.held == {str(actor.id): until}
    assert theirs.meta.notice is not None and theirs.meta.notice.key == "away.notice"

    # The bot's own look reads the change it made itself: nothing is held twice.
    revision = table.session.revision
    await env.advance_time(ABSENCE_SECONDS + 1)
    assert table.session.revision == revision

    # Back, said through shard 1's process (what its /cardtable away does there).
    now = other_process.clock()
    _, year, used = await other_process.storage.get_user_away(actor.id)
    assert year == datetime.fromtimestamp(now, UTC).year and used == 2
    await other_process.storage.set_user_away(actor.id, None, year, used, now)
    assert await other_process.hold(actor.id, None) == 2
    assert theirs.meta.held == {}
    assert table.session.meta.held == {str(actor.id): until}  # until the bot looks
    await env.advance_time(ABSENCE_SECONDS + 1)
    assert table.session.meta.held == {}
    assert "is away until" not in (table.embed.description or "")
    turn = table.session.meta.turn
    assert turn is not None and turn.deadline <= env.bot.tables.clock() + DAY
