"""The do-nothing baseline: a plain discord.py client answering every interaction at once.

Each component click is answered by editing its message with an embed and buttons the
size of a No Thanks! table message; each slash command with such a message. No state, no
database: what any discord.py bot pays to receive and answer a click. With SHARD_COUNT and
SHARD_IDS (one id) in the environment, as the real bot's processes get them, it connects
on that one shard only.

With ``--living-dm`` it also makes the REST calls a No Thanks! move makes besides the
answer: after answering, it edits the clicking player's DM in place (a DM sent once per
player, then edited), as the real bot keeps each player's chips in a living DM. That is
the do-nothing bot with the same traffic: what is left between it and cardtable is
cardtable's own work.

With ``--save`` it also commits each click to a SQLite file before answering, as a game
bot must: the table's state and metadata as JSON of a No Thanks! table's size, and a move
row, in one transaction on aiosqlite's thread (WAL, synchronous=NORMAL, as cardtable),
conditional on the table's revision. With ``--lean --living-dm --save`` it is the leanest
bot with a move's traffic and its durable save, and no game.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import aiosqlite
import discord
import orjson
from discord.enums import InteractionResponseType
from discord.http import Route, handle_message_parameters
from discord.webhook.async_ import async_context
from heap import trace_on_signal
from wire import point_at

TOKEN = "x" * 24 + ".yyyyyy." + "z" * 27

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tables (id INTEGER PRIMARY KEY, revision INTEGER NOT NULL,"
    " state TEXT, meta TEXT, move_number INTEGER, updated_at REAL)",
    "CREATE TABLE IF NOT EXISTS moves (id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL,"
    " move_number INTEGER NOT NULL, player TEXT, action TEXT, at REAL)",
)


def table_state(moves: int) -> dict[str, Any]:
    """A No Thanks! state of the size a real one has after ``moves`` moves."""
    return {
        "players": ["123456789012345678", "223456789012345678", "323456789012345678"],
        "chips": [11 - moves % 5, 9 + moves % 3, 10],
        "cards": [[3, 4, 5, 27], [12, 30], [33, 35]],
        "pile": list(range(6, 30)),
        "removed": [1, 2, 7, 8, 9, 15, 19, 22, 28],
        "current_card": 17,
        "chips_on_card": moves % 4,
        "active": moves % 3,
        "open_chips": False,
        "seed": 1234567,
        "history": [[n % 3, "pass" if n % 2 else "take", 10 + n % 20, n % 4] for n in range(moves)],
    }


TABLE_META = {
    "names": {"123456789012345678": "Player 1", "223456789012345678": "Player 2"},
    "user_locales": {"123456789012345678": "en-US", "223456789012345678": "en-US"},
    "locale": "en-US",
    "opened_at": 1767225600.0,
    "turn": {"move": 7, "deadline": 1767225660.0, "pinged": False},
    "dm_messages": {"123456789012345678": [1234567890123, 1234567890124]},
}


def save_move(
    connection: sqlite3.Connection, table_id: int, revision: int, state: str, meta: str, move: int
) -> None:
    """One move's transaction: the table at its next revision and the move row."""
    try:
        connection.execute("BEGIN")
        changed = connection.execute(
            "UPDATE tables SET state = ?, meta = ?, move_number = ?, revision = revision + 1,"
            " updated_at = ? WHERE id = ? AND revision = ?",
            (state, meta, move, 1767225600.0, table_id, revision),
        ).rowcount
        if changed != 1:
            connection.execute(
                "INSERT INTO tables (id, revision, state, meta, move_number)"
                " VALUES (?, ?, ?, ?, ?)",
                (table_id, revision + 1, state, meta, move),
            )
        connection.execute(
            "INSERT INTO moves (table_id, move_number, player, action, at) VALUES (?, ?, ?, ?, ?)",
            (table_id, move, "123456789012345678", "pass", 1767225600.0),
        )
        connection.commit()
    except BaseException:
        connection.rollback()
        raise


def table_like_message() -> tuple[discord.Embed, discord.ui.View]:
    """An embed and three buttons about the size of a running No Thanks! table."""
    embed = discord.Embed(
        title="No Thanks! - table 12",
        description="**Card 27** with 3 chips on it\n<@1234567890123> to play · 14 cards left",
        colour=0x2E86C1,
    )
    for seat in range(3):
        embed.add_field(
            name=f"Player {seat + 1}",
            value="Cards: 5 6 7 · 12 · 30\nPoints: 47 · chips: hidden",
            inline=False,
        )
    embed.add_field(
        name="Last moves",
        value="\n".join(f"Player {n % 3 + 1}: no thanks on 27" for n in range(5)),
        inline=False,
    )
    embed.set_footer(text="Turn ends <t:1767225600:R>")
    view = discord.ui.View(timeout=None)
    for action, label in (("take", "Take"), ("pass", "No thanks!"), ("chips", "My chips")):
        view.add_item(discord.ui.Button(label=label, custom_id=f"ct:nothanks:12:7:{action}"))
    view.stop()  # answered by on_interaction, never stored per message
    return embed, view


class Baseline(discord.Client):
    """Answers every interaction, and does nothing else."""

    def __init__(
        self,
        *,
        living_dm: bool = False,
        lean: bool = False,
        save: bool = False,
    ) -> None:
        shard: dict[str, Any] = {}
        if os.environ.get("SHARD_COUNT"):
            shard = {
                "shard_count": int(os.environ["SHARD_COUNT"]),
                "shard_id": int(os.environ["SHARD_IDS"]),
            }
        super().__init__(intents=discord.Intents.default(), **shard)
        self.embed, self.view = table_like_message()
        self.living_dm = living_dm
        self.lean = lean
        self.update_payload = {
            "type": InteractionResponseType.message_update.value,
            "data": {"embeds": [self.embed.to_dict()], "components": self.view.to_components()},
        }
        self.dms: dict[int, tuple[int, int]] = {}  # user id -> (DM channel id, message id)
        self.clicks = 0
        self.save = save
        self.db: aiosqlite.Connection | None = None
        self.revisions: dict[int, int] = {}  # table (channel) id -> revision saved

    async def setup_hook(self) -> None:
        """Open the database when saving (in the working directory, as cardtable does)."""
        if not self.save:
            return
        self.db = await aiosqlite.connect("baseline.db")
        for statement in ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", *SCHEMA):
            await (await self.db.execute(statement)).fetchall()
        await self.db.commit()

    async def close(self) -> None:
        """Close the database too."""
        if self.db is not None:
            await self.db.close()
        await super().close()

    async def save_click(self, interaction: discord.Interaction) -> None:
        """Commit the click as a move, in one hop to the database thread."""
        assert self.db is not None
        table_id = interaction.channel_id or 0
        revision = self.revisions.get(table_id, 0)
        state = orjson.dumps(table_state(revision % 70)).decode()
        meta = orjson.dumps(TABLE_META).decode()
        db = self.db
        await db._execute(lambda: save_move(db._conn, table_id, revision, state, meta, revision))
        self.revisions[table_id] = revision + 1

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Edit the clicked message, or post one for a slash command (then the DM)."""
        if self.save and interaction.type is discord.InteractionType.component:
            await self.save_click(interaction)
        if interaction.type is discord.InteractionType.component and self.lean:
            await self.answer_lean(interaction)
        elif interaction.type is discord.InteractionType.component:
            await interaction.response.edit_message(embed=self.embed, view=self.view)
        else:
            await interaction.response.send_message(embed=self.embed, view=self.view)
        if self.living_dm:
            await self.edit_dm(interaction.user)

    async def answer_lean(self, interaction: discord.Interaction) -> None:
        """The leanest answer discord.py allows: the message update's JSON, made once, posted
        without asking for the message back (Discord then answers 204, nothing to parse)."""
        route = Route(
            "POST",
            "/interactions/{webhook_id}/{webhook_token}/callback",
            webhook_id=interaction.id,
            webhook_token=interaction.token,
        )
        await async_context.get().request(
            route, session=interaction._session, payload=self.update_payload
        )
        interaction.response._response_type = InteractionResponseType.message_update

    async def edit_dm(self, user: discord.abc.User) -> None:
        """Edit the user's DM in place with a chips line, as cardtable does after a move."""
        self.clicks += 1
        text = (
            f"**No Thanks!** in #table: you hold {self.clicks % 11} chips.\n"
            "Cards: 5 6 7 · 12 · 30 (47 points)\n"
            "https://discord.com/channels/1234567890123/1234567890123/1234567890123"
        )
        ids = self.dms.get(user.id)
        if ids is None:
            channel = await self.create_dm(user)
            message = await channel.send(text)
            self.dms[user.id] = (channel.id, message.id)
            return
        # The same plain request cardtable's publisher makes for a living DM.
        with handle_message_parameters(
            content=text, previous_allowed_mentions=self.allowed_mentions
        ) as params:
            await self.http.edit_message(ids[0], ids[1], params=params)


def run() -> int:
    """Connect to the fake Discord and answer until stopped."""
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("--tracemalloc", default=None)
    parser.add_argument("--living-dm", action="store_true")
    parser.add_argument("--lean", action="store_true")
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    point_at(args.base_url)
    if args.tracemalloc is not None:
        trace_on_signal(Path(args.tracemalloc))
    with contextlib.suppress(KeyboardInterrupt):
        bot = Baseline(living_dm=args.living_dm, lean=args.lean, save=args.save)
        bot.run(TOKEN, log_handler=None)
    return 0


if __name__ == "__main__":
    sys.exit(run())
