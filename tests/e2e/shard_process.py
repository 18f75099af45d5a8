"""One bot process of the two-process test (tests/e2e/test_two_processes.py).

    python -m tests.e2e.shard_process URL SHARD play     # the bot, on SimCord
    python -m tests.e2e.shard_process URL SHARD resume   # the table core after a crash

Both run shard SHARD of 2 on the PostgreSQL database at URL and print one JSON object per
line on stdout as they go (``event`` names the step). `play` is the real bot (create_bot,
AutoShardedBot, PostgreSQL storage) in SimCord: it opens a No Thanks! table in a guild of
its shard, plays three moves, says `opened`, waits for `go` on stdin, restarts its bot
(the old one's connections closed, as a process exit would), says which tables the new
bot restored, and plays the game to its end. `resume` is what a replacement process does
after a crash: claim the shard, restore its tables through the table registry, and play
them to the end. A shard that another process holds ends either one with exit status 2.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.client.bot import create_bot
from bot.games.nothanks import SPEC as NOTHANKS
from bot.runtime.settings import Settings
from bot.storage import ShardClaimed, ShardCountMismatch, open_storage
from bot.table.session import Draft, TableSession
from bot.table.shards import ShardSet
from bot.table.tables import Tables
from tests.conftest import TEST_TOKEN
from tests.e2e.helpers import choose, open_table
from tests.table.harness import RecordingPublisher
from tests.virtual_time import VirtualTimeEnv

SHARD_COUNT = 2
EXIT_CLAIMED = 2


def say(event: str, **fields: Any) -> None:
    """One line of progress for the test that runs this process."""
    print(json.dumps({"event": event, **fields}), flush=True)


def guild_of(shard: int) -> int:
    """A guild id on this shard (guild_id >> 22 is 10 + shard, and 10 is even)."""
    return (10 + shard) << 22


async def play(url: str, shard: int, folder: Path, count: int = SHARD_COUNT) -> None:
    """The real bot on SimCord: open, play, restart mid-game, play to the end."""
    settings = Settings(
        token=TEST_TOKEN,
        database=folder / "cardtable.db",  # the heartbeat's folder; the data is in PostgreSQL
        database_url=url,
        shard_count=count,
        shard_ids=(shard,),
        # Its games have no computer players: no worker processes to start beside a test
        # process on a machine that may be loaded already.
        ai_workers=0,
    )
    env = VirtualTimeEnv(create_bot(settings), shard_count=count)
    await env.start()
    try:
        await env.bot.tree.sync()
        # Both processes' fake Discords count snowflakes from the same clock: spend some
        # in one of them, so that their channels (unique among open tables) differ.
        for number in range(40 * shard):
            env.create_user(f"spare{number}")
        guild = env.create_guild(f"shard {shard}", id=guild_of(shard))
        names = [f"p{shard}a", f"p{shard}b", f"p{shard}c"]
        table = await open_table(env, 3, guild=guild, names=names)
        for _ in range(3):
            await table.click(table.active(), choose(table.game))
        say("opened", table=table.table_id, moves=table.game.move_number)
        await asyncio.to_thread(sys.stdin.readline)  # "go": the other process has opened too
        await env.bot.storage.close()
        await env.restart_bot(create_bot(settings))
        say("restored", tables=sorted(session.id for session in env.bot.tables))
        while table.running:
            result = await table.click(table.active(), choose(table.game))
            assert result.acknowledged and not result.ephemeral, result
        say(
            "finished",
            table=table.table_id,
            moves=table.game.move_number,
            title=table.embed.title,
            registry=sorted(session.id for session in env.bot.tables),
        )
    finally:
        await env.shutdown()
        await env.bot.storage.close()


async def resume(url: str, shard: int) -> None:
    """A replacement process after a crash: claim the shard, restore, finish its games."""
    storage = await open_storage(url)
    try:
        await storage.claim_shards([shard], SHARD_COUNT)
        gate = asyncio.Event()  # timers held: this test moves the games itself

        async def ready() -> None:
            await gate.wait()

        tables = Tables(
            storage, clock=time.time, ready=ready, shards=ShardSet.of(SHARD_COUNT, [shard])
        )
        tables.register(NOTHANKS)
        tables.publisher = RecordingPublisher()
        restored = await tables.restore()
        say("restored", tables=sorted(session.id for session in restored))
        for session in restored:
            while session.status == "running":
                await move(session)
            say("finished", table=session.id, moves=session.record.move_number)
        tables.close()
    finally:
        await storage.close()


async def move(session: TableSession) -> None:
    """The acting player's first legal move, through the one change path."""
    engine = session.running_engine()
    (player,) = session.acting_players()
    action = engine.legal_actions(player)[0]
    expected = engine.move_number

    def step(draft: Draft) -> None:
        draft.human_move(player, action, expected_move=expected, locale=None)

    await session.change(step)


def main(argv: list[str]) -> int:
    """Run one phase (of a shard count other than 2 if a fourth argument says so); exit 2 if
    the shard is another process's or the others run another count."""
    url, shard, phase = argv[0], int(argv[1]), argv[2]
    count = int(argv[3]) if len(argv) > 3 else SHARD_COUNT
    try:
        if phase == "play":
            with tempfile.TemporaryDirectory() as folder:
                asyncio.run(play(url, shard, Path(folder), count))
        else:
            asyncio.run(resume(url, shard))
    except (ShardClaimed, ShardCountMismatch) as error:
        print(f"cardtable: error: {error}", file=sys.stderr)
        return EXIT_CLAIMED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
