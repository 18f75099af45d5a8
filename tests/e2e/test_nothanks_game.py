"""End-to-end No Thanks! games through SimCord: full games, embeds, DMs, scoreboard."""

from __future__ import annotations

import re

import pytest
from simcord import Env

from bot.engines.nothanks import score, starting_chips
from tests.e2e.helpers import button_ids, choose, dms, message_by_id, open_table


async def play_to_end(table, *, check_each_move: bool = True) -> int:
    """Click through the game with a simple policy, checking the message after every move."""
    clicks = 0
    while table.running:
        game = table.game
        actor = table.active()
        label = choose(game)
        card, pot = game.current_card, game.chips_on_card
        result = await table.click(actor, label)
        clicks += 1
        assert result.acknowledged and not result.ephemeral
        assert not result.followups, [f.content for f in result.followups]
        if check_each_move and table.running:
            embed = table.embed
            now = table.game
            pot_now = now.chips_on_card
            chips_part = f"🪙 {pot_now}" if pot_now else "no chips"
            assert embed.title == f"🃏 {now.current_card} · {chips_part}"
            # The turn pings in the content; the picture shows the card, the pile and the
            # hands (its alt text says so); the text says whose turn it is and the last move.
            assert f"<@{now.active_player}>" in (table.message.content or "")
            alt = table.message.attachments[0].description or ""
            assert f"{now.cards_left} card" in alt
            assert not embed.fields
            lines = (embed.description or "").splitlines()
            assert not any(line.startswith("Turn: ") for line in lines)  # said in content
            (last,) = [line for line in lines if line.startswith("Last move: ")]
            last = last.removeprefix("Last move: ")
            name = actor.name
            if label == "Take" and pot == 0:
                assert last == f"{name} took {card} with no chips"
            elif label == "Take":
                assert last == f"{name} took {card} with {pot} chip{'s' if pot != 1 else ''}"
            else:
                assert last == f"{name}: No thanks! ({card})"
        assert clicks < 2000
    return clicks


@pytest.mark.parametrize("count", [3, 7])
async def test_full_game_by_clicking(simcord_env: Env, count: int) -> None:
    """A whole game is played by clicks; DMs and the final scoreboard match the engine."""
    table = await open_table(simcord_env, count)
    chips = starting_chips(count)
    assert table.message.content.startswith("The game has begun!")
    assert set(button_ids(table.message)) == {"Take", "No thanks!", "My chips"}
    for player in table.players:
        first = dms(player)
        assert len(first) == 1
        assert f"You have {chips} chips" in first[0]
    await play_to_end(table)
    game = table.game  # every saved move swaps in a new game state
    assert game.is_over
    # One living DM per player: sent at the start, then edited after each of their moves.
    expected_edits = {str(p.id): 0 for p in table.players}
    for move in game.history:
        expected_edits[game.players[move.seat]] += 1
    for player in table.players:
        dm_id = player.user.dm_channel.id
        requests = [r for r in simcord_env.http_requests if f"/channels/{dm_id}/" in r.path]
        sends = [r for r in requests if r.method == "POST"]
        edits = [r for r in requests if r.method == "PATCH"]
        assert len(sends) == 1 and len(dms(player)) == 1
        assert len(edits) == expected_edits[str(player.id)]
        seat = game.players.index(str(player.id))
        (living,) = dms(player)  # current: the final chips, cards and score
        cards, chips_left = game.cards[seat], game.chips[seat]
        assert f"score so far **{score(cards, chips_left)}**" in living
        assert table.session.jump_url in living
    final = table.embed
    assert final.title == "No Thanks! — final scores"
    standings = game.standings()
    # Pictures on (the default): the picture is the board and its alt text says every row
    # as the text-only board would; the text itself is who won.
    assert final.fields == []
    (attachment,) = table.message.attachments
    alt = attachment.description or ""
    for row in standings:
        total = f"−{-row.total}" if row.total < 0 else str(row.total)
        name = re.escape(table.actor(row.player).name)
        # "🥇 ana: 42 · Δ +36: Cards: 12–14 · 27, Card points 48 − chips 6 = 42"
        points = re.escape(f"Card points {row.card_points} − chips {row.chips} = {total}")
        assert re.search(rf"{name}: {total} · Δ [+−±][\d,]+: Cards: [^:]*, {points}", alt), alt
    removed = ", ".join(str(c) for c in game.removed)
    assert f"The nine cards removed at the start: {removed}." in alt
    winners = [table.actor(s.player).name for s in standings if s.rank == 1]
    assert all(name in final.description for name in winners)
    assert set(button_ids(table.message)) == {"Rematch"}
    record = await simcord_env.bot.storage.get_table(table.table_id)
    assert record is not None and record.status == "finished"
    assert record.move_number == game.move_number
    log = await simcord_env.bot.storage.moves(table.table_id)
    assert len(log) == game.move_number


async def test_open_chips_shown_in_embed(simcord_env: Env) -> None:
    """With open chips the embed shows every player's chips; without, nobody's."""
    table = await open_table(simcord_env, 3, open_chips=True, pictures=False)
    rows = (table.embed.description or "").splitlines()[2:5]
    assert all(re.search(r"\(11 chips\) — no cards$", row) for row in rows), rows
    other = await open_table(simcord_env, 3, guild=table.guild, channel_name="quiet")
    assert "chips)" not in (other.embed.description or "")


async def test_my_chips_is_private(simcord_env: Env) -> None:
    """My chips answers a seated player ephemerally with chips, cards and score."""
    table = await open_table(simcord_env, 3)
    player = table.players[1]
    result = await table.click(player, "My chips")
    assert result.ephemeral
    assert "You have **11** chips." in result.response.content
    assert "no cards yet" in result.response.content
    active = table.active()
    await table.click(active, "No thanks!")
    result = await table.click(active, "My chips")
    assert "You have **10** chips." in result.response.content


async def test_chips_command(simcord_env: Env) -> None:
    """/nothanks chips shows the caller's private state, or says no game runs."""
    table = await open_table(simcord_env, 3)
    result = await table.players[0].slash(table.channel, "nothanks chips")
    assert result.ephemeral and "You have **11** chips." in result.response.content
    empty = table.guild.create_text_channel("empty")
    result = await table.players[0].slash(empty, "nothanks chips")
    assert result.ephemeral
    assert result.response.content == "There is no No Thanks! game running in this channel."


async def test_rules_command(simcord_env: Env) -> None:
    """/nothanks rules answers privately with a formatted summary."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("games")
    ana = guild.add_member(simcord_env.create_user("ana"))
    result = await ana.slash(channel, "nothanks rules")
    assert result.ephemeral
    embed = result.response.embeds[0]
    assert embed.title == "No Thanks! — the rules in short"
    assert [f.name for f in embed.fields] == ["Setup", "Your turn", "End", "Scoring"]


async def test_rematch_invites_former_players(simcord_env: Env) -> None:
    """Rematch seats only the clicker; the others are invited, mentioned once, and join."""
    table = await open_table(simcord_env, 3)
    await play_to_end(table, check_each_move=False)
    ana, ben, cid = table.players
    result = await table.click(cid, "Rematch")
    assert not result.ephemeral
    lobby = result.response
    assert lobby.content == (
        f"<@{ana.id}>, <@{ben.id}>: a rematch is open. Press **Join** to play again."
    )
    request = [r for r in simcord_env.http_requests if r.path.endswith("/callback")][-1]
    mentions = request.json["data"]["allowed_mentions"]
    assert sorted(map(str, mentions["users"])) == sorted([str(ana.id), str(ben.id)])
    assert mentions["parse"] == []
    fields = lobby.embeds[0].fields
    assert fields[0].name == "Players (1/7)"
    assert fields[0].value.splitlines() == ["1. cid"]  # the invited are not in the seats
    # Said once, with the host, above the seats.
    description = lobby.embeds[0].description or ""
    assert description.startswith(f"Host: <@{cid.id}>. Invited: ")
    assert f"<@{ana.id}>" in description and f"<@{ben.id}>" in description
    assert description.count("Press **Join**") == 1
    shown = message_by_id(simcord_env, table.channel, lobby.id)
    start = next(i for row in shown.components for i in row.children if i.label == "Start")
    assert start.disabled
    # Nobody else is seated, DMed or pinged again: a finished table is rematched once.
    again = await table.click(ana, "Rematch")
    assert again.ephemeral and "moved on" in again.response.content
    outsider = table.guild.add_member(simcord_env.create_user("zed"))
    refused = await table.click(outsider, "Rematch")
    assert refused.ephemeral
    for player in (ana, ben):
        joined = await player.click(lobby, label="Join")
        assert joined.acknowledged and not joined.ephemeral
    message = message_by_id(simcord_env, table.channel, lobby.id)
    assert message.embeds[0].fields[0].value.splitlines() == ["1. cid", "2. ana", "3. ben"]
    started = await cid.click(message, label="Start")
    assert not started.ephemeral
