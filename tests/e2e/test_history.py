"""`/cardtable history`, private replays and `/cardtable forget-me` through SimCord.

History and replays are per server; a replay shows what a spectator saw and ends on the
final board; forget-me turns a person into a "former player" everywhere while the games
still replay for the others.
"""

from __future__ import annotations

import copy
import random
import sqlite3
from functools import partial
from typing import Any

from simcord import Env
from simcord.builders import GuildHandle

from bot.i18n import t
from bot.records.results import GameResult, PlayerResult
from bot.storage import TableRecord
from bot.table.replay import is_anonymous
from bot.table.session import Draft
from tests.e2e.helpers import (
    NAMES,
    Table,
    choose,
    click_stored,
    open_table,
    select_stored,
)

FORMER = t("history.former_player", "en")
NOT_FOUND = t("history.not_found", "en")


def components(message: Any) -> dict[str, dict[str, Any]]:
    """custom_id to component, for every button and select of a message."""
    found = {}
    for row in message.components:
        for item in row.get("components", []):
            found[item["custom_id"]] = item
    return found


def labels(message: Any) -> dict[str, dict[str, Any]]:
    """Label to button, for every button of a message."""
    return {item["label"]: item for item in components(message).values() if item.get("label")}


def step_line(message: Any) -> str:
    """The 'Move x of y' line of a replay (its second line)."""
    return str(message.content).splitlines()[1]


async def finished_no_thanks(env: Env) -> tuple[Table, list[dict[str, Any]]]:
    """A three-player No Thanks! game clicked to its end on a new server, and the live
    table's embed after each move (index: the move it shows)."""
    table = await open_table(env, 3, pictures=False)  # the whole live table as text
    live = [table.embed.to_dict()]
    while table.running:
        await table.click(table.active(), choose(table.game))
        live.append(table.embed.to_dict())
    return table, live


def game_lines(embed: dict[str, Any]) -> list[str]:
    """A No Thanks! table's lines after whose turn it is, without the live timer."""
    lines = str(embed.get("description", "")).splitlines()[1:]
    return [line for line in lines if not line.startswith("⏰")]


async def finished_rage(env: Env, guild: GuildHandle) -> int:
    """A Rage game of three people, opened through Discord and played (random legal
    moves) through the table core; returns its table id."""
    channel = guild.create_text_channel("rage")
    players = [guild.add_member(env.create_user(name)) for name in NAMES[3:6]]
    opened = await players[0].slash(channel, "rage start")
    for player in players[1:]:
        await player.click(opened.response, label="Join")
    await players[0].click(opened.response, label="Start")
    session = env.bot.tables.in_channel(channel.id)
    assert session is not None
    rng = random.Random(3)
    while session.status == "running":
        engine = session.running_engine()
        player = rng.choice(engine.acting_players())
        action = rng.choice(list(engine.legal_actions(player)))
        move = engine.move_number
        await session.change(
            partial(Draft.human_move, player=player, action=action, expected_move=move, locale=None)
        )
    return session.id


async def stored_results(env: Env, guild_id: int, count: int, start: float) -> list[int]:
    """``count`` finished games kept in the records of one server (for paging); their ids,
    oldest first."""
    storage = env.bot.storage
    ids = []
    for number in range(count):
        record = await storage.create_table(
            TableRecord(
                game="nothanks",
                guild_id=guild_id,
                channel_id=70_000 + guild_id % 1000 * 100 + number,
                host_id=1,
                status="finished",
            )
        )
        assert record.id is not None
        seats = tuple(
            PlayerResult(seat, str(seat + 1), f"p{number}-{seat}", None, 10 + seat, seat + 1)
            for seat in range(3)
        )
        await storage.record_game(
            GameResult(
                table_id=record.id,
                guild_id=guild_id,
                channel_id=record.channel_id,
                game="nothanks",
                status="finished",
                seed="1",
                options={},
                started_at=start + number * 3600,
                ended_at=start + number * 3600 + 600,
                moves=0,
                players=seats,
            )
        )
        ids.append(record.id)
    return ids


async def test_history_lists_the_servers_games_by_page(simcord_env: Env) -> None:
    """Twelve games: page 1 shows the ten newest, ▶ shows the other two, ◀ goes back;
    another server's game is never listed."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    other = simcord_env.create_guild()
    channel = guild.create_text_channel("lobby")
    ids = await stored_results(simcord_env, guild.id, 12, 1_700_000_000.0)
    await stored_results(simcord_env, other.id, 1, 1_800_000_000.0)  # newest of all
    member = guild.add_member(simcord_env.create_user("ana"))
    shown = await member.slash(channel, "cardtable history")
    assert shown.ephemeral
    page = shown.response
    embed = page.embeds[0]
    assert embed.title == "Recent games" and embed.footer.text == "Page 1"
    lines = [line for line in embed.description.splitlines() if not line.startswith("🏆")]
    assert len(lines) == 10
    assert lines[0] == (
        f"**1.** <t:{1_700_000_000 + 11 * 3600 + 600}:d> · **No Thanks!** · p11-0, p11-1, p11-2"
    )
    select = components(page)["hs:0"]
    assert [option["value"] for option in select["options"]] == [
        str(table_id) for table_id in reversed(ids[2:])
    ]
    assert select["options"][0]["label"] == "1. No Thanks! · 🏆 p11-0"
    assert labels(page)["◀"]["disabled"] and not labels(page)["▶"].get("disabled")
    second = await member.click(page, label="▶")
    embed = second.response.embeds[0]
    assert embed.footer.text == "Page 2"
    assert [o["value"] for o in components(second.response)["hs:1"]["options"]] == [
        str(ids[1]),
        str(ids[0]),
    ]
    assert labels(second.response)["▶"]["disabled"]
    assert "p0-0" in embed.description and "**11.**" in embed.description
    back = await member.click(second.response, label="◀")
    assert back.response.embeds[0].footer.text == "Page 1"
    elsewhere = other.create_text_channel("lobby")
    stranger = other.add_member(simcord_env.create_user("zed"))
    theirs = await stranger.slash(elsewhere, "cardtable history")
    assert theirs.response.embeds[0].description.count("**") == 4  # one game: number, title
    assert simcord_env.errors == []


async def test_empty_history(simcord_env: Env) -> None:
    """A server without finished games says so, with nothing to choose or page."""
    table = await open_table(simcord_env, 3)
    shown = await table.players[1].slash(table.channel, "cardtable history")
    assert shown.response.embeds[0].description == t("history.empty", "en")
    assert components(shown.response) == {}


async def test_replay_steps_through_the_game_as_spectators_saw_it(simcord_env: Env) -> None:
    """Choosing a game opens a private replay at the deal; ▶ ◀ ⏮ ⏭ step and jump, each
    step showing the live table of that move, the last one the final board."""
    table, live = await finished_no_thanks(simcord_env)
    final = table.embed
    last = len(live) - 1
    viewer = table.players[1]
    listed = await viewer.slash(table.channel, "cardtable history")
    opened = await viewer.select(listed.response, [str(table.table_id)], custom_id="hs:0")
    assert opened.ephemeral
    replay = opened.response
    assert step_line(replay) == f"Move 0 of {last}"
    # No rounds in No Thanks!: ⏪ ⏩ jump ten moves (a game has about 36).
    assert set(labels(replay)) == {"⏮", "◀", "▶", "⏭", "⏪ −10", "+10 ⏩"}
    assert labels(replay)["◀"]["disabled"] and labels(replay)["⏮"]["disabled"]
    # The game's lines (the pile, the players' cards, the last move) are the live table's
    # at move 0.
    assert game_lines(replay.embeds[0].to_dict()) == game_lines(live[0])
    # A replay names people, and pings nobody: the table's "@ana starts" is a name.
    assert "<@" not in replay.content and "<@" not in (replay.embeds[0].description or "")
    step = replay
    for move in range(1, 4):
        step = (await viewer.click(step, label="▶")).response
        assert step_line(step) == f"Move {move} of {last}"
        assert game_lines(step.embeds[0].to_dict()) == game_lines(live[move])
    step = (await viewer.click(step, label="◀")).response
    assert step_line(step) == f"Move 2 of {last}"
    end = (await viewer.click(step, label="⏭")).response
    assert step_line(end) == f"Move {last} of {last}"
    # The final board as the table had it (the table's picture is the table's own upload).
    board = {key: value for key, value in final.to_dict().items() if key != "image"}
    assert end.embeds[0].to_dict() == board
    assert labels(end)["▶"]["disabled"] and labels(end)["⏭"]["disabled"]
    before_end = (await viewer.click(end, label="◀")).response
    assert game_lines(before_end.embeds[0].to_dict()) == game_lines(live[last - 1])
    start = (await viewer.click(before_end, label="⏮")).response
    assert step_line(start) == f"Move 0 of {last}"
    ahead = (await viewer.click(start, label="+10 ⏩")).response
    assert step_line(ahead) == f"Move 10 of {last}"
    assert game_lines(ahead.embeds[0].to_dict()) == game_lines(live[10])
    back = (await viewer.click(ahead, label="⏪ −10")).response
    assert step_line(back) == f"Move 0 of {last}"
    assert simcord_env.errors == []


async def test_rage_replay_jumps_by_round_and_shows_no_hand(simcord_env: Env) -> None:
    """A Rage replay has round jumps; every step is the public table, without hands."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    table_id = await finished_rage(simcord_env, guild)
    member = guild.add_member(simcord_env.create_user("viewer"))
    channel = guild.create_text_channel("talk")
    listed = await member.slash(channel, "cardtable history")
    opened = await member.select(listed.response, [str(table_id)], custom_id="hs:0")
    replay = opened.response
    assert set(labels(replay)) == {"⏮", "◀", "▶", "⏭", "Previous round", "Next round"}
    assert "round 1" in step_line(replay)
    assert replay.embeds[0].title == "Rage — round 1 of 10"
    step = replay
    for number in range(2, 5):
        step = (await member.click(step, label="Next round")).response
        assert step.embeds[0].title == f"Rage — round {number} of 10"
        assert f"round {number}" in step_line(step)
        # The public table only: no "Show my hand", no bid or card choices.
        assert all(item["type"] == 2 for item in components(step).values())
        assert not any("hand" in str(label).lower() for label in labels(step))
    back = (await member.click(step, label="Previous round")).response
    assert back.embeds[0].title == "Rage — round 3 of 10"
    end = (await member.click(back, label="⏭")).response
    assert end.embeds[0].title == t("rage.final.title", "en")
    assert simcord_env.errors == []


async def test_another_servers_game_cannot_be_opened(simcord_env: Env) -> None:
    """A game of another server is never listed, and neither a planted replay button nor
    a planted choice opens it; the server's own games still do."""
    theirs, _ = await finished_no_thanks(simcord_env)
    ours, _ = await finished_no_thanks(simcord_env)
    assert ours.guild.id != theirs.guild.id
    member = ours.players[0]
    listed = await member.slash(ours.channel, "cardtable history")
    options = components(listed.response)["hs:0"]["options"]
    assert [option["value"] for option in options] == [str(ours.table_id)]
    # A modded client's copy of the list, with a replay button naming the other game.
    stored = copy.deepcopy(
        simcord_env.backend.get_message(listed.response.channel_id, listed.response.id)
    )
    forged = f"rp:{theirs.table_id}:0:n"
    button = {"type": 2, "style": 2, "label": "▶", "custom_id": forged}
    stored.components.append({"type": 1, "components": [button]})
    refused = await click_stored(member, stored, forged)
    assert refused.ephemeral and refused.response.content == NOT_FOUND
    chosen = await select_stored(member, stored, "hs:0", [str(theirs.table_id)])
    assert chosen.ephemeral and chosen.response.content == NOT_FOUND
    own = await select_stored(member, stored, "hs:0", [str(ours.table_id)])
    assert own.ephemeral and step_line(own.response).startswith("Move 0 of")


async def test_forget_me(simcord_env: Env) -> None:
    """After forget-me (confirmed) a person is a former player in history and replays of
    every server, their stats and ratings are gone, and the others' games still replay."""
    here, live = await finished_no_thanks(simcord_env)
    ana, ben = here.players[0], here.players[1]
    there = simcord_env.create_guild()
    elsewhere = await open_table(simcord_env, 3, guild=there, start=False)
    storage = simcord_env.bot.storage
    # ana is the first seat of a game on another server too.
    await stored_results(simcord_env, there.id, 1, 1_700_000_000.0)
    await _seat_in_records(simcord_env, there.id, ana.id)
    # Seated at an open table, forget-me is refused: that game would record her again.
    seated = await elsewhere.players[0].slash(elsewhere.channel, "cardtable forget-me")
    assert seated.ephemeral and seated.response.content == t("forget.seated", "en")
    asked = await ana.slash(here.channel, "cardtable forget-me")
    assert asked.ephemeral and asked.response.content == t("forget.confirm", "en")
    kept = await ana.click(asked.response, label="Cancel")
    assert kept.response.content == t("forget.cancelled", "en")
    assert await storage.read("SELECT 1 FROM ratings WHERE player = ?", (str(ana.id),))
    asked = await ana.slash(here.channel, "cardtable forget-me")
    done = await ana.click(asked.response, label="Forget me")
    assert done.response.content == t("forget.done", "en")
    assert components(done.response) == {}
    # Her stats and ratings are gone in every server; the others' stay.
    for table in ("ratings", "game_players"):
        rows = await storage.read(f"SELECT 1 FROM {table} WHERE player = ?", (str(ana.id),))
        assert rows == []
    assert await storage.read("SELECT 1 FROM ratings WHERE player = ?", (str(ben.id),))
    seats = await storage.read(
        "SELECT player, name FROM game_players WHERE guild_id IN (?, ?) AND seat = 0",
        (here.guild.id, there.id),
    )
    forgotten = [row for row in seats if is_anonymous(row["player"])]
    assert len(forgotten) == 2 and {row["name"] for row in forgotten} == {FORMER}
    # History and the replay call her a former player, and the replay still plays out.
    listed = await ben.slash(here.channel, "cardtable history")
    description = listed.response.embeds[0].description
    assert FORMER in description and "ana" not in description
    opened = await ben.select(listed.response, [str(here.table_id)], custom_id="hs:0")
    assert "ana" not in str(opened.response.embeds[0].to_dict())
    end = (await ben.click(opened.response, label="⏭")).response
    board = end.embeds[0].to_dict()
    assert FORMER in str(board) and "ana" not in str(board)
    assert len(live) - 1 == int(step_line(end).split()[-1])
    assert simcord_env.errors == []


async def _seat_in_records(env: Env, guild_id: int, user_id: int) -> None:
    """Put a person in the first seat of a server's stored games, rated there (a hand edit
    of the database, as another game night would have left it)."""
    connection = sqlite3.connect(str(env.bot.settings.database))
    try:
        connection.execute(
            "UPDATE game_players SET player = ?, seat_player = ? WHERE guild_id = ? AND seat = 0",
            (str(user_id), str(user_id), guild_id),
        )
        connection.execute(
            "INSERT INTO ratings (guild_id, game, player, name, is_computer, mu, sigma, games)"
            " VALUES (?, 'nothanks', ?, 'ana', 0, 25, 8, 1)",
            (guild_id, str(user_id)),
        )
        connection.commit()
    finally:
        connection.close()


async def test_a_move_log_that_no_longer_reads_is_explained(simcord_env: Env) -> None:
    """A stored game whose moves do not replay (a hand edit) is still listed; opening it
    says it cannot be replayed instead of failing."""
    table, _ = await finished_no_thanks(simcord_env)
    connection = sqlite3.connect(str(simcord_env.bot.settings.database))
    try:
        connection.execute("UPDATE moves SET action = 'jump' WHERE table_id = ?", (table.table_id,))
        connection.commit()
    finally:
        connection.close()
    listed = await table.players[0].slash(table.channel, "cardtable history")
    opened = await table.players[0].select(listed.response, [str(table.table_id)], custom_id="hs:0")
    assert opened.ephemeral and opened.response.content == t("replay.broken", "en")
    assert simcord_env.errors == []


async def test_a_replay_shows_the_picture_where_the_server_shows_pictures(
    simcord_env: Env,
) -> None:
    """On a server with pictures, each replay step carries the table's picture of that
    move, with the short text beside it, as the live table had."""
    table = await open_table(simcord_env, 3)
    while table.running:
        await table.click(table.active(), choose(table.game))
    viewer = table.players[0]
    listed = await viewer.slash(table.channel, "cardtable history")
    opened = await viewer.select(listed.response, [str(table.table_id)], custom_id="hs:0")
    replay = opened.response
    (attachment,) = replay.attachments
    # The alt text reads the picture: the card, the pile and the hands.
    assert "Face-up card: " in (attachment.description or "")
    assert attachment.filename.endswith(".png")
    assert replay.embeds[0].image.url is None  # a plain attachment, shown wider on a phone
    before = step_line(replay)
    step = (await viewer.click(replay, label="▶")).response
    # One move on (the picture changes only when a card is taken, not with this step).
    assert step_line(step) != before
    assert step.attachments and step.attachments[0].filename.endswith(".png")
    assert simcord_env.errors == []
