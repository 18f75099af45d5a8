"""Helpers for driving No Thanks! tables through SimCord as players would."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import discord
from simcord import Env
from simcord.actors import _component_interaction
from simcord.builders import ChannelHandle, GuildHandle
from simcord.results import InteractionResult, to_discord_message

from bot.engines.nothanks import NoThanksGame
from bot.table.session import TableSession
from cogs.nothanks import NoThanks

NAMES = ["ana", "ben", "cid", "dora", "eli", "fay", "gus", "hal"]


@dataclass
class Table:
    """One channel with its seated players and the table's public message."""

    env: Env
    guild: GuildHandle
    channel: ChannelHandle
    players: list[Any]
    message_id: int
    table_id: int
    last_session: TableSession | None = None

    @property
    def session(self) -> TableSession:
        """The table's session: the live one, or the last one seen once the table closed
        or left memory (it holds the stored state)."""
        live = self.env.bot.tables.get(self.table_id)
        if live is not None:
            self.last_session = live
        assert self.last_session is not None
        return self.last_session

    @property
    def cog(self) -> NoThanks:
        """The running No Thanks! cog."""
        cog = self.env.bot.get_cog("NoThanks")
        # discord.py loads extensions as fresh modules, so compare by name, not class.
        assert cog is not None and type(cog).__name__ == NoThanks.__name__
        return cog  # type: ignore[return-value]

    @property
    def game(self) -> NoThanksGame:
        """The engine behind the game (the test may look; players may not)."""
        engine = self.session.engine
        assert isinstance(engine, NoThanksGame)
        return engine

    @property
    def running(self) -> bool:
        """Whether the game is still being played (in memory, or out of it since its
        last change)."""
        return self.session.status == "running"

    @property
    def message(self) -> discord.Message:
        """The table's public message as it is now."""
        return message_by_id(self.env, self.channel, self.message_id)

    @property
    def embed(self) -> discord.Embed:
        """The first embed of the table message."""
        return self.message.embeds[0]

    def actor(self, user_id: str | int) -> Any:
        """The player actor with this Discord id."""
        return next(p for p in self.players if p.id == int(user_id))

    def active(self) -> Any:
        """The actor whose turn it is."""
        player = self.game.active_player
        assert player is not None
        return self.actor(player)

    async def click(self, actor: Any, label: str) -> InteractionResult:
        """Click a button of the table message by its label."""
        return await actor.click(self.message, label=label)


def message_by_id(env: Env, channel: ChannelHandle, message_id: int) -> discord.Message:
    """A message of a channel as it is now, looked up by id (not by scanning the history)."""
    return to_discord_message(env, env.backend.get_message(channel.id, message_id))


def button_ids(message: discord.Message) -> dict[str, str]:
    """Label to custom_id for every button of a message."""
    ids = {}
    for row in message.components:
        for item in getattr(row, "children", []):
            ids[item.label] = item.custom_id
    return ids


def snapshot(env: Env, message: discord.Message) -> Any:
    """A frozen copy of a message as Discord stored it, to click later as a stale client."""
    return copy.deepcopy(env.backend.get_message(message.channel.id, message.id))


async def click_stored(actor: Any, stored: Any, custom_id: str) -> InteractionResult:
    """Click a custom_id on a stored (possibly outdated) copy of a message."""
    data = {"custom_id": custom_id, "component_type": discord.ComponentType.button.value}
    return await _component_interaction(actor, stored, data)


async def open_table(
    env: Env,
    count: int,
    *,
    guild: GuildHandle | None = None,
    channel_name: str = "games",
    start: bool = True,
    open_chips: bool = False,
    names: list[str] | None = None,
    pictures: bool = True,
    turn_seconds: int | None = None,
) -> Table:
    """Create a channel, seat ``count`` players through the lobby and (optionally) start;
    without ``pictures`` the server shows tables as text only; ``turn_seconds`` as the
    command's option (the default turn otherwise)."""
    if guild is None:
        await env.bot.tree.sync()
        guild = env.create_guild()
    if not pictures:
        await env.bot.images.set(guild.id, False)
    channel = guild.create_text_channel(channel_name)
    players = [guild.add_member(env.create_user(name)) for name in (names or NAMES)[:count]]
    options: dict[str, object] = {"open_chips": open_chips}
    if turn_seconds is not None:
        options["turn_seconds"] = turn_seconds
    result = await players[0].slash(channel, "nothanks start", **options)
    assert result.response is not None and not result.ephemeral
    session = env.bot.tables.in_channel(channel.id)
    table = Table(env, guild, channel, players, result.response.id, session.id)
    for player in players[1:]:
        joined = await table.click(player, "Join")
        assert joined.acknowledged and not joined.followups
    if start:
        await table.click(players[0], "Start")
    return table


def dms(actor: Any) -> list[str]:
    """The contents of every DM the bot sent to a user, oldest first."""
    return [m.content for m in actor.user.dm_channel.history()] if hasattr(actor, "user") else []


def choose(game: NoThanksGame) -> str:
    """A simple, deterministic player: take cheap cards or rich pots, else pass."""
    seat = game.active
    if game.chips[seat] == 0:
        return "Take"
    card = game.current_card or 0
    if game.chips_on_card * 3 >= card or card - 1 in game.cards[seat]:
        return "Take"
    return "No thanks!"


async def select_stored(
    actor: Any, stored: Any, custom_id: str, values: list[str]
) -> InteractionResult:
    """Choose in a select of a stored (possibly outdated) copy of a message."""
    data = {
        "custom_id": custom_id,
        "component_type": discord.ComponentType.string_select.value,
        "values": values,
    }
    return await _component_interaction(actor, stored, data)
