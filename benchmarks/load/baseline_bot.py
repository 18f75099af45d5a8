"""The do-nothing baseline: a plain discord.py client answering every interaction at once.

Each component click is answered by editing its message with an embed and buttons the
size of a No Thanks! table message; each slash command with such a message. No state, no
database: what any discord.py bot pays to receive and answer a click. With SHARD_COUNT and
SHARD_IDS (one id) in the environment, as the real bot's processes get them, it connects
on that one shard only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

import discord
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

    def __init__(self) -> None:
        shard: dict[str, int] = {}
        if os.environ.get("SHARD_COUNT"):
            shard = {
                "shard_count": int(os.environ["SHARD_COUNT"]),
                "shard_id": int(os.environ["SHARD_IDS"]),
            }
        super().__init__(intents=discord.Intents.default(), **shard)
        self.embed, self.view = table_like_message()

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Edit the clicked message, or post one for a slash command."""
        if interaction.type is discord.InteractionType.component:
            await interaction.response.edit_message(embed=self.embed, view=self.view)
        else:
            await interaction.response.send_message(embed=self.embed, view=self.view)


def run() -> int:
    """Connect to the fake Discord and answer until stopped."""
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("--tracemalloc", default=None)
    args = parser.parse_args()
    point_at(args.base_url)
    if args.tracemalloc is not None:
        trace_on_signal(Path(args.tracemalloc))
    with contextlib.suppress(KeyboardInterrupt):
        Baseline().run(TOKEN, log_handler=None)
    return 0


if __name__ == "__main__":
    sys.exit(run())
