"""Display names on Discord are data: the lobby and the live table show them as written.

Players join with nicknames that are markdown (bold, a heading, a code fence) or a ping;
the table message must show each name escaped, and computers by their names.
"""

from __future__ import annotations

import re

from simcord import Env

from tests.e2e.helpers import Table, choose

BOLD = "**Fay** ~~the~~ great"
HEADING = "# Big Head"
FENCED = "a```b"
EVERYONE = "@everyone"
NICKS = [BOLD, HEADING, FENCED, EVERYONE]


def as_written(text: str) -> str:
    """What Discord shows for escaped text: escapes and zero-width spaces removed."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u200b", "")


def unescaped(text: str) -> list[str]:
    """The nicknames that appear in a text without their escapes (as markdown)."""
    # Escaped, "# Big Head" still contains "# Big Head", but after a backslash.
    return [nick for nick in NICKS if re.search(r"(?<!\\)" + re.escape(nick), text)]


async def open_named_table(env: Env, *, start: bool) -> Table:
    """A No Thanks! lobby whose four players have markdown nicknames (optionally started)."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel("games")
    players = [
        guild.add_member(env.create_user(f"user{number}"), nick=nick)
        for number, nick in enumerate(NICKS)
    ]
    result = await players[0].slash(channel, "nothanks start", open_chips=True)
    assert result.response is not None and not result.ephemeral
    session = env.bot.tables.in_channel(channel.id)
    table = Table(env, guild, channel, players, result.response.id, session.id)
    for player in players[1:]:
        joined = await table.click(player, "Join")
        assert joined.acknowledged and not joined.followups
    if start:
        await table.click(players[0], "Start")
    return table


async def test_lobby_shows_nicknames_as_written(simcord_env: Env) -> None:
    """The seats list every nickname escaped: no bold, heading, broken fence or ping."""
    table = await open_named_table(simcord_env, start=False)
    seats = table.embed.fields[0].value.split("\n")
    assert [as_written(line.split(". ", 1)[1]) for line in seats] == NICKS
    assert unescaped(table.embed.fields[0].value) == []
    assert seats[1] == r"2. \# Big Head"
    assert seats[3] == "4. @\u200beveryone"


async def test_live_table_shows_nicknames_as_written(simcord_env: Env) -> None:
    """Player fields and the move log escape the nicknames, move after move."""
    table = await open_named_table(simcord_env, start=True)
    await simcord_env.bot.images.set(table.guild.id, False)  # the whole table as text
    for _ in range(6):
        await table.click(table.active(), choose(table.game))
    lines = (table.embed.description or "").splitlines()
    assert [nick for line in lines for nick in unescaped(line)] == []
    rows = lines[2 : 2 + len(NICKS)]
    names = {
        re.sub(
            r" \(\d+ chips?\)$", "", as_written(row.replace("**", "")).split(" — ")[0]
        ).removeprefix("▶ ")
        for row in rows
    }
    assert set(NICKS) <= names
    last = as_written(lines[2 + len(NICKS)].removeprefix("Last move: "))
    assert any(last.startswith(nick) for nick in NICKS)


async def test_computers_are_named_in_the_lobby(simcord_env: Env) -> None:
    """Computer seats show "🤖 Computer …", never a broken mention like "<@-1>"."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("games")
    host = guild.add_member(simcord_env.create_user("host"), nick=BOLD)
    result = await host.slash(channel, "nothanks start", bots=2, bot_level="hard")
    assert result.response is not None
    session = simcord_env.bot.tables.in_channel(channel.id)
    table = Table(simcord_env, guild, channel, [host], result.response.id, session.id)
    seats = table.embed.fields[0].value.split("\n")
    assert seats[0] == r"1. \*\*Fay\*\* \~\~the\~\~ great"
    assert all("<@-" not in line and "🤖" in line for line in seats[1:])
    assert len(seats) == 3
