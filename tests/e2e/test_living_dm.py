"""No Thanks!'s one living DM per player per game: sent once, then edited in place."""

from __future__ import annotations

from typing import Any

import pytest
from simcord import Env

from bot.client.publishing import dms as dm_publishing
from bot.engines.nothanks import NoThanksGame
from bot.render import nothanks as render
from bot.table.meta import TableMeta
from bot.table.spec import Letter
from tests.e2e.helpers import Table, choose, dms, open_table
from tests.e2e.test_nothanks_game import play_to_end


def dm_requests(env: Env, player: Any) -> tuple[int, int]:
    """How many DMs the bot sent to a player, and how many edits it made to them."""
    dm_id = player.user.dm_channel.id
    requests = [r for r in env.http_requests if f"/channels/{dm_id}/messages" in r.path]
    sends = sum(1 for r in requests if r.method == "POST")
    edits = sum(1 for r in requests if r.method == "PATCH")
    return sends, edits


@pytest.mark.parametrize("count", [3, 5, 7])
async def test_one_dm_per_player_per_game(simcord_env: Env, count: int) -> None:
    """Each player's DMs per game: one send (one notification), the rest are edits."""
    table = await open_table(simcord_env, count)
    await play_to_end(table, check_each_move=False)
    game = table.game
    moves = {p: 0 for p in game.players}
    for move in game.history:
        moves[game.players[move.seat]] += 1
    for player in table.players:
        sends, edits = dm_requests(simcord_env, player)
        assert sends == 1  # was one per move that changed the player's chips (about 23)
        assert edits == moves[str(player.id)]
        assert len(dms(player)) == 1
    # Remembered in the table's metadata, and kept through a save and a reload.
    meta = table.session.meta
    assert set(meta.dm_messages) == set(game.players)
    assert TableMeta.from_dict(meta.to_dict()).dm_messages == meta.dm_messages


async def test_the_living_dm_follows_the_chips(simcord_env: Env) -> None:
    """After a pass the same message shows the chips left, the cards and the table link."""
    table = await open_table(simcord_env, 3)
    actor = table.active()
    (started,) = dms(actor)
    assert f"has [started]({table.session.jump_url})" in started
    await table.click(actor, "No thanks!")
    (living,) = dms(actor)
    card = table.game.history[-1].card
    assert f"You said No thanks! to {card}." in living
    assert "You have no cards yet." in living
    assert table.session.jump_url in living
    assert dm_requests(simcord_env, actor) == (1, 1)


async def test_a_deleted_dm_is_sent_again(simcord_env: Env) -> None:
    """If the player deleted the living DM, the next change sends a new one and keeps it."""
    table = await open_table(simcord_env, 3)
    actor = table.active()
    dm_id = actor.user.dm_channel.id
    simcord_env.inject_error(
        "PATCH", f"/channels/{dm_id}/messages/*", status=404, code=10008, times=1
    )
    await table.click(actor, "No thanks!")
    assert dm_requests(simcord_env, actor)[0] == 2
    first = table.session.meta.dm_messages[str(actor.id)]
    await _next_turn_of(table, actor)
    await table.click(actor, "No thanks!")
    assert table.session.meta.dm_messages[str(actor.id)] == first
    assert dm_requests(simcord_env, actor)[0] == 2


async def _next_turn_of(table: Table, actor: Any) -> None:
    while table.active() is not actor:
        other = table.active()
        await table.click(other, choose(table.game))


@pytest.mark.parametrize(
    ("language", "gained", "text"),
    [
        ("en", 1, "You took 30 and 1 chip with it."),
        ("en", 3, "You took 30 and 3 chips with it."),
        ("en", 0, "You took 30 with no chips on it."),
        ("ru", 1, "Вы взяли карту 30 и 1 монетку на ней."),
        ("ru", 3, "Вы взяли карту 30 и 3 монетки на ней."),
        ("ru", 5, "Вы взяли карту 30 и 5 монеток на ней."),
        ("de", 1, "Du hast die 30 mit 1 Spielstein genommen."),
        ("it", 2, "Hai preso la carta 30 con 2 fiches."),
    ],
)
def test_chips_gained_are_pluralised(language: str, gained: int, text: str) -> None:
    """The chips taken with a card take their own plural form (and a zero form)."""
    game = NoThanksGame.new(["11", "22", "33"], seed=3)
    letter = Letter("11", "nothanks.dm.took", {"card": 30, "gained": gained, "count": 11})
    living = render.living_dm_text(game.view("11"), letter, "https://link", language)
    assert text in living.splitlines()
    assert "https://link" in living


def test_no_chips_on_the_card_reads_so() -> None:
    """The heading and the log say "no chips" rather than "with 0 chips"."""
    assert render.heading(27, 3, "en") == "🃏 27 · 🪙 3"
    assert render.heading(27, 0, "en") == "🃏 27 · no chips"
    assert render.heading(27, 0, "ru") == "🃏 27 · без монеток"


async def test_a_move_makes_two_requests_and_asks_nothing_back(simcord_env: Env) -> None:
    """A move is answered by one interaction callback that does not ask for the edited
    message back, and the mover's living DM is edited once: nothing else goes to Discord."""
    table = await open_table(simcord_env, 3)
    actor = table.active()
    await table.click(actor, "No thanks!")  # the first move: the living DM starts here
    actor = table.active()
    await table.click(actor, "No thanks!")
    before = len(simcord_env.http_requests)
    actor = table.active()
    await table.click(actor, "No thanks!")
    made = simcord_env.http_requests[before:]
    assert [(r.method, r.path.split("/")[1]) for r in made] == [
        ("POST", "interactions"),
        ("PATCH", "channels"),
    ]
    callback, dm = made
    assert not callback.params.get("with_response")
    assert callback.json["type"] == 7 and callback.json["data"]["embeds"]
    assert dm.path.startswith(f"/channels/{actor.user.dm_channel.id}/messages/")
    assert dm.json == {"content": dms(actor)[0], "tts": False, "allowed_mentions": {"parse": []}}
    assert f"move {table.game.move_number}" in (table.message.embeds[0].footer.text or "")


async def seat_again(table: Table, channel_name: str) -> Table:
    """The same players open and start a new table in another channel of the guild."""
    env = table.env
    channel = table.guild.create_text_channel(channel_name)
    host, *others = table.players
    result = await host.slash(channel, "nothanks start")
    assert result.response is not None and not result.ephemeral
    session = env.bot.tables.in_channel(channel.id)
    again = Table(env, table.guild, channel, table.players, result.response.id, session.id)
    for player in others:
        assert (await again.click(player, "Join")).acknowledged
    await again.click(host, "Start")
    return again


def dm_channels_opened(env: Env) -> int:
    """How many times the bot asked Discord for a DM channel."""
    return sum(
        1
        for r in env.http_requests
        if r.method == "POST" and r.path.endswith("/channels") and "/users/@me/" in r.path
    )


async def test_a_dm_channel_is_opened_once_per_player(simcord_env: Env) -> None:
    """A later game's first DM goes to the remembered channel, past discord.py's small cache."""
    table = await open_table(simcord_env, 3)
    opened = dm_channels_opened(simcord_env)
    assert 1 <= opened <= 3
    state = simcord_env.bot._connection
    # discord.py keeps 128 DM channels; a busy bot has long forgotten these players'.
    state._private_channels.clear()
    state._private_channels_by_user.clear()
    again = await seat_again(table, "second")
    assert dm_channels_opened(simcord_env) == opened
    for player in table.players:
        assert dm_requests(simcord_env, player)[0] == 2  # one living DM per game, same channel
        assert again.session.jump_url in dms(player)[-1]


async def test_remembered_dm_channels_are_bounded(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past DM_CHANNELS_KEPT the oldest player's channel is forgotten (and opened again)."""
    monkeypatch.setattr(dm_publishing, "DM_CHANNELS_KEPT", 2)
    table = await open_table(simcord_env, 3)
    kept = simcord_env.bot.publisher.dms._dm_channels
    assert len(kept) == 2
    for player in table.players:
        assert len(dms(player)) == 1  # everyone got their DM all the same
