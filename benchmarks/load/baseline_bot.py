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
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

import discord
from discord.enums import InteractionResponseType
from discord.http import Route, handle_message_parameters
from discord.webhook.async_ import async_context
from heap import trace_on_signal
from wire import point_at

TOKEN = "x" * 24 + ".yyyyyy." + "z" * 27


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

    def __init__(self, *, living_dm: bool = False, lean: bool = False) -> None:
        shard: dict[str, int] = {}
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

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Edit the clicked message, or post one for a slash command (then the DM)."""
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
    args = parser.parse_args()
    point_at(args.base_url)
    if args.tracemalloc is not None:
        trace_on_signal(Path(args.tracemalloc))
    with contextlib.suppress(KeyboardInterrupt):
        Baseline(living_dm=args.living_dm, lean=args.lean).run(TOKEN, log_handler=None)
    return 0


if __name__ == "__main__":
    sys.exit(run())
