"""`/nothanks stats`, `/nothanks leaderboard` and the Rage ones, end to end through SimCord."""

from __future__ import annotations

import re
from typing import Any

import discord
from simcord import Env
from simcord.results import InteractionResult

from bot.records.ratings import MIN_RATED_GAMES
from bot.storage import Storage
from tests.e2e.helpers import open_table
from tests.queries.test_players import HARD, nothanks, rage, record

EMPTY_BOARD = f"Nobody here has played {MIN_RATED_GAMES} rated games yet."


def embed_of(result: InteractionResult) -> discord.Embed:
    """The one embed of a private answer."""
    assert result.ephemeral and result.response is not None
    (embed,) = result.response.embeds
    return embed


def fields_of(embed: discord.Embed) -> dict[str, str]:
    """An embed's fields, name to value."""
    return {str(field.name): str(field.value) for field in embed.fields}


def storage_of(env: Env) -> Storage:
    """The bot's database."""
    storage: Storage = env.bot.storage
    return storage


async def test_a_game_played_here_shows_in_stats_and_on_the_board(simcord_env: Env) -> None:
    """Three players, everyone takes: the stats show the game at once, the board after five."""
    table = await open_table(simcord_env, 3)
    # Whoever starts takes every card (the taker goes on): the other two tie for first.
    taker = table.active()
    ana, ben, cid = table.players
    first, second = [p for p in table.players if p is not taker]
    while table.running:
        await table.click(table.active(), "Take")
    mine = {row.player: row for row in table.game.standings()}[str(taker.id)]

    embed = embed_of(await taker.slash(table.channel, "nothanks stats"))
    assert embed.title == f"No Thanks! stats — {taker.name}"
    fields = fields_of(embed)
    assert fields["Games played"] == "1"
    assert fields["Wins"] == "0 (0% of games)"
    assert fields["Best score"] == str(mine.total)
    assert fields["Average chips left"] == f"{mine.chips:.1f}"
    assert fields["Longest run taken"] == f"{max(map(len, mine.runs))} cards"
    rating, provisional, explained = fields["Rating"].splitlines()
    assert re.fullmatch(r"\*\*[\d,]+\*\* after 1 rated game", rating)
    assert provisional == "On the leaderboard after 4 more rated games"
    # μ and σ appear only here, in the explanation the player asked for.
    assert explained.startswith("-# Everyone starts at 1,000. The rating is 1,000 + 20 × (μ − 3σ)")
    assert embed.footer.text == "Finished games in this server only · lower scores are better"
    # The other two kept their chips and took nothing: a shared win, which counts.
    theirs = await first.slash(table.channel, "nothanks stats", user=second)
    assert fields_of(embed_of(theirs))["Wins"] == "1 (100% of games)"

    board = embed_of(await ana.slash(table.channel, "nothanks leaderboard"))
    assert board.title == "No Thanks! — leaderboard"
    assert board.description == EMPTY_BOARD

    names = {str(p.id): p.name for p in table.players}
    for _ in range(MIN_RATED_GAMES - 1):
        seats = [(ana.id, nothanks(40, 5), 1), (ben.id, nothanks(50, 0), 2)]
        await record(
            storage_of(simcord_env),
            [*seats, (cid.id, nothanks(60, 0), 3)],
            guild=table.guild.id,
            names=names,
        )
    board = embed_of(await ben.slash(table.channel, "nothanks leaderboard"))
    lines = (board.description or "").splitlines()
    assert len(lines) == 3 and all(line.endswith(" · 5 games") for line in lines)
    assert {line.split(" — ")[0].split("** ")[1] for line in lines} == {"ana", "ben", "cid"}
    assert simcord_env.errors == []


async def test_another_server_sees_nothing_of_it(simcord_env: Env) -> None:
    """The same person in another server has no stats there, and its board is empty."""
    table = await open_table(simcord_env, 3)
    ana, ben, _ = table.players
    while table.running:
        await table.click(table.active(), "Take")
    elsewhere = simcord_env.create_guild("Elsewhere")
    channel = elsewhere.create_text_channel("games")
    ana_there = elsewhere.add_member(ana.user)

    mine = embed_of(await ana_there.slash(channel, "nothanks stats"))
    assert mine.description == "ana has no finished No Thanks! games in this server yet."
    assert mine.fields == []
    # Asking about a player of the first server (not a member here) shows nothing either.
    theirs = embed_of(await ana_there.slash(channel, "nothanks stats", user=ben.user))
    assert theirs.description == "ben has no finished No Thanks! games in this server yet."
    board = embed_of(await ana_there.slash(channel, "nothanks leaderboard"))
    assert board.description == EMPTY_BOARD
    # At home the game is there.
    home = fields_of(embed_of(await ana.slash(table.channel, "nothanks stats")))
    assert home["Games played"] == "1"


async def five_games_with_a_computer(env: Env, players: list[Any], guild_id: int) -> None:
    """Ana, ben and a hard computer play five No Thanks! games; the computer comes second."""
    ana, ben = players
    for _ in range(MIN_RATED_GAMES):
        await record(
            storage_of(env),
            [
                (ana.id, nothanks(20, 0), 1),
                (HARD, nothanks(30, 0), 2),
                (ben.id, nothanks(40, 0), 3),
            ],
            guild=guild_id,
            names={str(ana.id): "ana", str(ben.id): "ben"},
        )


async def test_computer_stats_are_reached_from_the_board(simcord_env: Env) -> None:
    """Computers are listed apart; choosing "🤖 hard" on the board shows its stats."""
    table = await open_table(simcord_env, 2, start=False)
    ana, ben = table.players
    await five_games_with_a_computer(simcord_env, [ana, ben], table.guild.id)

    shown = await ana.slash(table.channel, "nothanks leaderboard")
    board = embed_of(shown)
    assert [line.split(" — ")[0] for line in (board.description or "").splitlines()] == [
        "**1.** ana",
        "**2.** ben",
    ]
    assert fields_of(board)["Computer players"].startswith("**1.** 🤖 hard — ")
    assert shown.response is not None
    chosen = await ana.select(shown.response, [HARD])
    stats = embed_of(chosen)
    assert stats.title == "No Thanks! stats — 🤖 hard"
    assert fields_of(stats)["Games played"] == "5"
    assert fields_of(stats)["Wins"] == "0 (0% of games)"

    hidden = await ana.slash(table.channel, "nothanks leaderboard", computers=False)
    assert "Computer players" not in fields_of(embed_of(hidden))
    assert hidden.response is not None
    options = [
        option["value"]
        for row in hidden.response.components
        for item in row["components"]
        for option in item.get("options", [])
    ]
    assert options == [str(ana.id), str(ben.id)]
    assert simcord_env.errors == []


async def test_rage_stats_and_board(simcord_env: Env) -> None:
    """Rage shows exact bids per round, points per round and the best game."""
    table = await open_table(simcord_env, 3, start=False)
    ana, ben, cid = table.players
    names = {str(p.id): p.name for p in table.players}
    for score, exact in [(35, 4), (62, 7), (10, 2), (20, 3), (-5, 0)]:
        await record(
            storage_of(simcord_env),
            [(ana.id, rage(score, exact), 2), (ben.id, rage(70, 8), 1), (cid.id, rage(-9, 1), 3)],
            game="rage",
            guild=table.guild.id,
            names=names,
        )
    embed = embed_of(await ana.slash(table.channel, "rage stats"))
    assert embed.title == "Rage stats — ana"
    fields = fields_of(embed)
    assert fields["Exact bids"] == "32% (16 of 50 rounds)"
    assert fields["Average points per round"] == "+2.4"
    assert fields["Best game"] == "62"
    assert embed.footer.text == "Finished games in this server only"
    board = embed_of(await cid.slash(table.channel, "rage leaderboard"))
    assert board.title == "Rage — leaderboard"
    assert (board.description or "").startswith("**1.** ben — ")
