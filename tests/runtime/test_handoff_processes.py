"""A "your turn" DM's button for a table of another process, with the real bot processes:
two `python -m bot run` on one PostgreSQL database, shard 0 and shard 1 of two, on the load
benchmark's fake Discord (a real gateway and REST over loopback). Discord sends every DM
interaction to shard 0; the table is shard 1's.

Each process talks to the fake under its own host name (shard 0's 127.0.0.1, shard 1's
localhost), so the fake can tell which process answered a click. Every step waits for
what the processes do, never a fixed time.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg

from bot.engines.nothanks import NoThanksGame
from bot.i18n import t
from bot.render.components import CUSTOM_ID, custom_id
from bot.runtime.health import heartbeat_path
from tests.benchmark_scripts import load

# How long a step may take on a loaded machine (start-up, migrations): a limit, not a wait.
PATIENCE = 60.0
# Discord's limit for a click's first answer, counted from when the fake sent the click.
DISCORD_LIMIT = 3.0
# Users: the three players at the table, and a stranger who has no seat.
PLAYERS = (880_000_000_000_000_001, 880_000_000_000_000_002, 880_000_000_000_000_003)
STRANGER = 880_000_000_000_000_009

run = load("load/run", name="load_run")


async def until(
    what: str,
    ready: Callable[[], bool],
    bots: list[subprocess.Popen[bytes]],
    limit: float = PATIENCE,
) -> None:
    """Poll ``ready`` until it holds; fails if a bot exits first or ``limit`` passes."""
    began = time.monotonic()
    while not ready():
        for bot in bots:
            assert bot.poll() is None, f"a bot exited with {bot.returncode} before {what}"
        assert time.monotonic() - began < limit, f"{what}: not within {limit:.0f} s"
        await asyncio.sleep(0.02)


def beating(folder: Path) -> bool:
    """Whether the bot of ``folder`` wrote a heartbeat that says it is connected (its
    gateway session is ready)."""
    try:
        beat = json.loads(heartbeat_path(folder / "cardtable.db").read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return False
    return bool(beat.get("connected"))


class Clicks:
    """Sends interactions through the fake and hands back each one's callback."""

    def __init__(self, fake: Any) -> None:
        self.fake = fake
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        fake.on_callback = self.answered

    def answered(self, interaction_id: int, callback: Any) -> None:
        """The fake got an interaction callback: give it to whoever waits for it."""
        future = self.waiting.pop(interaction_id, None)
        if future is not None and not future.done():
            future.set_result(callback)

    async def send(self, guild_id: int, payload: dict[str, Any]) -> tuple[Any, float]:
        """Send one interaction (on the shard of ``guild_id``; 0 for a DM): its callback
        and the seconds from sending it to the callback's arrival."""
        interaction_id = self.fake.new_id()
        payload["id"] = str(interaction_id)
        payload["token"] = f"token{interaction_id}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[interaction_id] = future
        sent = time.perf_counter()
        await self.fake.send_interaction(guild_id, payload)
        callback = await asyncio.wait_for(future, PATIENCE)
        return callback, callback.at - sent


def dm_click(user_id: int, dm: dict[str, Any], button: str) -> dict[str, Any]:
    """A click on a button of a DM the bot sent (as Discord sends it: no guild, the user)."""
    user = {
        "id": str(user_id),
        "username": f"player{user_id % 1000}",
        "discriminator": "0",
        "global_name": f"Player {user_id % 1000}",
        "avatar": None,
    }
    channel = {"id": dm["channel_id"], "type": 1, "recipients": [user], "last_message_id": None}
    return {
        "application_id": str(run.APPLICATION_ID),
        "type": 3,
        "version": 1,
        "channel_id": dm["channel_id"],
        "channel": channel,
        "user": user,
        "app_permissions": run.EVERY_PERMISSION,
        "locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "authorizing_integration_owners": {"1": str(user_id)},
        "context": 1,
        "data": {"custom_id": button, "component_type": 2},
        "message": dict(dm),
    }


async def stored(url: str, table_id: int) -> tuple[int, NoThanksGame]:
    """The table's stored revision and game, read outside the bots (a Start is saved
    before its answer, whether or not it was deferred)."""
    connection = await asyncpg.connect(url)
    try:
        row = await connection.fetchrow(
            "SELECT revision, state FROM tables WHERE id = $1", table_id
        )
    finally:
        await connection.close()
    assert row is not None and row["state"] is not None
    return int(row["revision"]), NoThanksGame.from_dict(json.loads(row["state"]))


def log_of(folder: Path) -> str:
    """What a bot logged."""
    return (folder / "cardtable.log").read_text(errors="replace")


async def test_a_dm_click_for_another_process_table_is_answered_by_that_process(
    postgres_url: str, tmp_path: Path
) -> None:
    """A turn-based table of three people on shard 1's process; its DM button clicked, the click
    delivered to shard 0's process: shard 1's process answers it (its callback) within
    Discord's 3 s, the move is saved, the DM says done and the table message is edited.
    A stale click and a stranger's click are refused by the owner's own checks. With the
    owner stopped, shard 0's process answers that the table's process is not answering,
    within 3 s, and nothing changes."""
    guilds = run.make_guilds(2)
    table_guild = guilds[1]  # on shard 1 of 2
    fake = run.FakeDiscord(guilds, record=True)
    base_url = await fake.start()
    owner_url = base_url.replace("127.0.0.1", "localhost")
    clicks = Clicks(fake)
    folders = {shard: tmp_path / f"shard{shard}" for shard in (0, 1)}
    for folder in folders.values():
        folder.mkdir()
    verbose = {"CARDTABLE_LOG_LEVEL": "INFO"}
    receiver = run.spawn(
        "cardtable", base_url, folders[0], None, None, postgres_url, (0, 2), verbose
    )
    owner = run.spawn("cardtable", owner_url, folders[1], None, None, postgres_url, (1, 2), verbose)
    bots = [receiver, owner]
    receiver_host = base_url.removeprefix("http://")
    owner_host = owner_url.removeprefix("http://")
    try:
        await until("both bots ready", lambda: all(map(beating, folders.values())), bots)

        # A turn-based game of three people at the table of shard 1's guild.
        start = run.slash(table_guild, PLAYERS[0], "nothanks", "start")
        start["data"]["options"][0]["options"] = [{"type": 3, "name": "pace", "value": "24h"}]
        callback, _ = await clicks.send(table_guild.id, start)
        assert callback.host == owner_host
        lobby = callback.message or {}
        table_id = int(CUSTOM_ID.search(json.dumps(lobby))["table"])  # type: ignore[index]
        table_message = int(lobby["id"])
        join = custom_id("nothanks", table_id, 0, "join")
        for player in PLAYERS[1:]:
            callback, _ = await clicks.send(
                table_guild.id, run.component(table_guild, player, lobby, join)
            )
            assert not callback.ephemeral, callback.data
            lobby = callback.message or lobby
        begin = custom_id("nothanks", table_id, 0, "start")
        callback, _ = await clicks.send(
            table_guild.id, run.component(table_guild, PLAYERS[0], lobby, begin)
        )
        assert not callback.ephemeral, callback.data
        revision, game = await stored(postgres_url, table_id)
        mover = game.active_player
        assert mover is not None

        # The real "your turn" notice waits until its player has had 30 s to move at the
        # table (bot.client.publishing.notices.RECENTLY), and every seat just acted (the
        # joins, the start): rather than wait for that timer, the click is made on the
        # player's DM with the bot (its living DM, sent at the start) showing the
        # notice's button, the move's own custom id.
        def player_dm() -> dict[str, Any] | None:
            return next((message for user, message in fake.dm_messages if user == mover), None)

        await until("the player's DM", lambda: player_dm() is not None, bots)
        dm = dict(player_dm() or {})
        button = custom_id("nothanks", table_id, game.move_number, "pass")
        dm["components"] = [
            {"type": 1, "components": [{"type": 2, "style": 2, "label": "No", "custom_id": button}]}
        ]
        edits_before = len(fake.edits)

        # The click reaches shard 0's process; shard 1's answers it.
        callback, took = await clicks.send(0, dm_click(int(mover), dm, button))
        assert callback.host == owner_host, "answered by the process that does not run it"
        assert took < DISCORD_LIMIT, took
        assert callback.type == 7 and not callback.ephemeral  # the DM itself, edited
        assert callback.data["content"].startswith("✅ Done"), callback.data
        assert callback.data.get("components") in (None, [])
        after, moved = await stored(postgres_url, table_id)
        assert after > revision and moved.move_number == game.move_number + 1
        assert moved.active_player != mover  # a pass: the turn went on

        def table_edited() -> bool:
            return any(
                channel == table_guild.channel_id and message == table_message
                for channel, message, _ in fake.edits[edits_before:]
            )

        await until("the table message's edit", table_edited, bots)
        said = log_of(folders[0])
        assert f"handed the DM click on nothanks table {table_id} (pass)" in said
        assert "to shard 1 (handed click" in said
        assert "took handed click" in log_of(folders[1])

        # The same button again (its turn passed), and a stranger on the current turn:
        # both refused by the owner's own checks, nothing changed.
        turn_over = t("notice.turn_over", "en-US")
        current = custom_id("nothanks", table_id, moved.move_number, "pass")
        for user, pressed in ((int(mover), button), (STRANGER, current)):
            callback, took = await clicks.send(0, dm_click(user, dm, pressed))
            assert callback.host == owner_host and took < DISCORD_LIMIT, (callback, took)
            assert callback.ephemeral and callback.data["content"] == turn_over
        # (Its revision may move on: the notices' bookkeeping is saved too; not the game.)
        assert (await stored(postgres_url, table_id))[1] == moved

        # The owner stops: shard 0's process answers, within Discord's limit.
        owner.kill()
        await asyncio.to_thread(owner.wait)
        player = moved.active_player
        assert player is not None
        callback, took = await clicks.send(0, dm_click(int(player), dm, current))
        assert callback.host == receiver_host
        assert took < DISCORD_LIMIT, took
        assert callback.ephemeral
        assert callback.data["content"] == t("table.owner_not_answering", "en-US")
        assert (await stored(postgres_url, table_id))[1] == moved
        assert "no process claimed handed click" in log_of(folders[0])
    finally:
        for bot in bots:
            if bot.poll() is None:
                await asyncio.to_thread(run.stop, bot)
        await fake.close()
