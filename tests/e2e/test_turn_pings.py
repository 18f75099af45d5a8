"""Turn pings in SimCord: a new message mentions whom a turn waits for when it starts, and is
deleted when the turn passes; whoever acted in the last 30 s is not pinged; /cardtable pings
chooses every turn, half time only or off; computers are never pinged; restarts keep it.

Time is SimCord's virtual clock (the bot's clock reads it): "31 s later" is
``advance_time(31)``, never a sleep.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import discord
import pytest
from simcord import Env

from bot.client.bot import CardtableBot
from bot.client.publishing.pings import RECENTLY
from bot.engines.rage import Bid, Phase
from bot.storage.rows import TableRecord
from tests.e2e.helpers import NAMES, Table
from tests.e2e.test_rage_table import RageTable

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# Long enough that half time (60 s) never comes unless a test waits for it.
TURN = 120
PING_TEXT = "your turn at"


def pings(channel: Any) -> list[discord.Message]:
    """The turn-start pings in a channel now (half-time reminders say 'at this table')."""
    return [
        m for m in channel.history() if PING_TEXT in m.content and "this table" not in m.content
    ]


def reminders(channel: Any) -> list[discord.Message]:
    """The half-time reminders in a channel now."""
    return [m for m in channel.history() if "your turn at this table" in m.content]


def sent_mentions(env: Env, message_id: int) -> dict[str, Any]:
    """The allowed_mentions the bot sent with the message that became ``message_id``."""
    for request in env.http_requests:
        body = request.json
        if (
            request.method == "POST"
            and request.path.endswith("/messages")
            and isinstance(body, dict)
            and PING_TEXT in str(body.get("content"))
        ):
            last = body
    # The newest ping request is the one whose message is asked about (tests ask at once).
    assert last is not None, message_id
    return dict(last["allowed_mentions"])


async def setup(env: Env, *, pings_mode: str | None = None) -> tuple[Any, Any, list[Any], Any]:
    """A server (text only: faster) with an admin and three more people; its pings setting
    set by the admin through /cardtable pings when ``pings_mode`` is given."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    await env.bot.images.set(guild.id, False)
    channel = guild.create_text_channel("games")
    admins = guild.create_role("Admins", permissions=discord.Permissions(manage_guild=True))
    admin = guild.add_member(env.create_user("ada"), roles=[admins])
    players = [guild.add_member(env.create_user(name)) for name in NAMES[:3]]
    if pings_mode is not None:
        answer = await admin.slash(channel, "cardtable pings", when=pings_mode)
        assert answer.ephemeral
    return guild, channel, players, admin


async def nothanks(env: Env, pings_mode: str | None = None, **options: Any) -> Table:
    """A started No Thanks! table of three people who joined more than 30 s before the deal,
    so that the first turn's player is owed a ping unless they dealt."""
    guild, channel, players, _ = await setup(env, pings_mode=pings_mode)
    options.setdefault("turn_seconds", TURN)
    result = await players[0].slash(channel, "nothanks start", **options)
    session = env.bot.tables.in_channel(channel.id)
    table = Table(env, guild, channel, players, result.response.id, session.id)
    for player in players[1:]:
        await table.click(player, "Join")
    await env.advance_time(RECENTLY + 1)
    await table.click(players[0], "Start")
    await env.advance_time(0.1)
    return table


async def pass_turn(table: Table) -> str:
    """The player to act passes (or takes, without chips); returns who acted."""
    actor = table.active()
    label = "No thanks!" if table.game.chips[table.game.active] else "Take"
    await table.click(actor, label)
    await table.env.advance_time(0.1)
    return str(actor.id)


async def test_a_turn_start_pings_the_player_with_a_real_mention(simcord_env: Env) -> None:
    """The first player (not the dealer) gets a new message that mentions them and only them."""
    table = await nothanks(simcord_env)
    if table.game.active_player == str(table.players[0].id):
        await pass_turn(table)  # the dealer acted just now: the next player is the one owed
    active = table.game.active_player
    (ping,) = pings(table.channel)
    assert f"<@{active}>" in ping.content
    assert "No Thanks!" in ping.content and "discord.com/channels/" in ping.content
    assert [user.id for user in ping.mentions] == [int(active)]
    mentions = sent_mentions(simcord_env, ping.id)
    assert mentions.get("parse", []) == [] and mentions.get("replied_user") is not True
    assert list(map(str, mentions["users"])) == [active]
    assert table.session.meta.ping_message[0] == ping.id


async def test_the_ping_is_deleted_when_the_turn_passes(simcord_env: Env) -> None:
    """When the pinged player acts, their ping goes; the channel never holds two."""
    table = await nothanks(simcord_env)
    if table.game.active_player == str(table.players[0].id):
        await pass_turn(table)
    (first,) = pings(table.channel)
    await simcord_env.advance_time(RECENTLY + 1)  # so that everyone is owed a ping again
    for _ in range(3):
        before = pings(table.channel)
        assert len(before) == 1
        acted = await pass_turn(table)
        after = pings(table.channel)
        assert len(after) <= 1
        assert before[0].id not in [m.id for m in after]  # the passed turn's ping is gone
        if after:
            assert f"<@{acted}>" not in after[0].content
        await simcord_env.advance_time(RECENTLY + 1)
    assert first.id not in [m.id for m in table.channel.history()]


async def test_no_ping_for_whoever_acted_in_the_last_30_seconds(simcord_env: Env) -> None:
    """A quick round: every player acted moments ago, so their next turns ping nobody."""
    table = await nothanks(simcord_env)
    for _ in range(4):
        await pass_turn(table)  # everyone has now acted within a few seconds
    for _ in range(3):
        acted = await pass_turn(table)
        assert pings(table.channel) == [], acted
        assert table.session.meta.ping_message == []
    # Once their last action is more than 30 s old, a turn that starts pings again.
    await simcord_env.advance_time(RECENTLY + 1)
    await pass_turn(table)
    assert len(pings(table.channel)) == 1


@pytest.mark.parametrize("mode", ["every", "half", "off"])
async def test_each_setting_of_the_server(simcord_env: Env, mode: str) -> None:
    """every turn: a ping at the start and a reminder at half time; half time only: the
    reminder alone; off: no ping message at all. One message at a time in every case."""
    table = await nothanks(simcord_env, pings_mode=mode)
    if table.game.active_player == str(table.players[0].id):
        await pass_turn(table)
    assert simcord_env.bot.turn_pings.mode_for(table.guild.id) == mode
    assert len(pings(table.channel)) == (1 if mode == "every" else 0)
    await simcord_env.advance_time(TURN / 2 + 1)
    assert len(reminders(table.channel)) == (0 if mode == "off" else 1)
    # The reminder replaced the turn-start ping: never two at a time.
    assert pings(table.channel) == []


async def test_the_setting_is_stored_shown_and_refuses_bad_input(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """/cardtable pings is for admins, kept across a restart and shown by about. Discord
    offers only the three choices; a value outside them that reaches the bot anyway (a
    hand-edited row) reads as the default and is never written."""
    guild, channel, players, admin = await setup(simcord_env, pings_mode="half")
    refused = await players[0].slash(channel, "cardtable pings", when="off")
    assert refused.ephemeral and "Manage Server" in refused.response.content
    about = await admin.slash(channel, "cardtable about")
    assert "Turn pings: at half time only" in about.response.content
    await simcord_env.restart_bot(make_bot())
    assert await simcord_env.bot.turn_pings.load(guild.id) == "half"
    with pytest.raises(ValueError, match="sometimes"):
        await simcord_env.bot.turn_pings.set(guild.id, "sometimes")
    await simcord_env.bot.storage.set_guild_turn_pings(guild.id, "sometimes")
    await simcord_env.restart_bot(make_bot())
    assert await simcord_env.bot.turn_pings.load(guild.id) == "every"


async def test_computers_are_never_pinged(simcord_env: Env) -> None:
    """With a computer at the table, pings mention the people and never the computer."""
    _, channel, players, _ = await setup(simcord_env)
    ana, ben = players[:2]
    result = await ana.slash(channel, "nothanks start", bots=1, turn_seconds=TURN)
    message = result.response.message
    await ben.click(message, label="Join")
    await simcord_env.advance_time(RECENTLY + 1)
    await ana.click(message, label="Start")
    people = {ana.id, ben.id}
    seen: set[int] = set()
    for _ in range(12):
        await simcord_env.advance_time(RECENTLY + 1)  # the computer moves; people are owed pings
        for ping in pings(channel):
            assert {u.id for u in ping.mentions} <= people
            seen |= {u.id for u in ping.mentions}
        session = simcord_env.bot.tables.in_channel(channel.id)
        assert session is not None and session.status == "running"
        (acting,) = session.acting_players()
        actor = next(p for p in players if str(p.id) == acting)
        game: Any = session.engine
        label = "No thanks!" if game.chips[game.active] else "Take"
        await actor.click(message, label=label)
    assert seen == people
    for request in simcord_env.http_requests:
        body = request.json
        if isinstance(body, dict) and isinstance(body.get("allowed_mentions"), dict):
            assert {int(u) for u in body["allowed_mentions"].get("users", [])} <= people


async def test_the_ping_survives_a_restart(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """After a restart the ping is neither posted twice nor forgotten: it goes when the turn
    passes."""
    table = await nothanks(simcord_env)
    if table.game.active_player == str(table.players[0].id):
        await pass_turn(table)
    (ping,) = pings(table.channel)
    await simcord_env.restart_bot(make_bot())
    await simcord_env.advance_time(0.1)
    assert [m.id for m in pings(table.channel)] == [ping.id]  # not pinged again
    await pass_turn(table)
    assert ping.id not in [m.id for m in table.channel.history()]
    assert table.session.meta.ping_message != [ping.id, ping.id]


async def test_rage_pings_everyone_awaited_at_once_and_keeps_it_while_they_bid(
    simcord_env: Env,
) -> None:
    """Hidden bids: everyone bids at once. One ping names the bidders who did not deal; it
    stays while the bidding goes on and goes when the first card is awaited."""
    guild, channel, players, _ = await setup(simcord_env)
    host = players[0]
    result = await host.slash(channel, "rage start", hidden_bids=True, turn_seconds=TURN)
    for player in players[1:]:
        await player.click(result.response.message, label="Join")
    await simcord_env.advance_time(RECENTLY + 1)
    await host.click(result.response.message, label="Start")
    await simcord_env.advance_time(0.1)
    table = RageTable(simcord_env, guild, channel, players, result.response.id)
    assert table.state.phase is Phase.BIDDING
    awaited = set(table.state.acting_players())
    assert awaited == {str(p.id) for p in players}  # simultaneous: all three at once
    (ping,) = pings(channel)
    others = sorted(p.id for p in players[1:])
    assert sorted(u.id for u in ping.mentions) == others  # the host just dealt
    assert sorted(int(u) for u in sent_mentions(simcord_env, ping.id)["users"]) == others
    await table.act(str(players[1].id), Bid(0))
    await simcord_env.advance_time(0.1)
    assert [m.id for m in pings(channel)] == [ping.id]  # the same turn: no new ping
    await table.act(str(players[2].id), Bid(0))
    await table.act(str(host.id), Bid(0))
    await simcord_env.advance_time(0.1)
    assert table.state.phase is not Phase.BIDDING
    assert ping.id not in [m.id for m in channel.history()]


def ping_posts(env: Env) -> list[str]:
    """The content of every ping the bot has asked Discord to post so far, in order."""
    return [
        str(request.json["content"])
        for request in env.http_requests
        if request.method == "POST"
        and request.path.endswith("/messages")
        and isinstance(request.json, dict)
        and PING_TEXT in str(request.json.get("content"))
    ]


async def test_a_player_who_moves_while_their_ping_is_prepared_is_not_pinged(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 41, defect 4: the ping of a turn waits while the previous ping is deleted; the
    player moves meanwhile. The ping is then not sent at all (it used to land after the
    move, notify them for nothing and be deleted 0.1 s later)."""
    table = await nothanks(simcord_env)
    if table.game.active_player == str(table.players[0].id):
        await pass_turn(table)
    (first,) = pings(table.channel)
    await simcord_env.advance_time(RECENTLY + 1)  # everyone is owed a ping again
    turn_pings = simcord_env.bot.publisher.pings
    delete = turn_pings._delete
    holding, release = asyncio.Event(), asyncio.Event()

    async def held_delete(session: Any, message_id: int) -> bool:
        if message_id == first.id:  # the old ping: its deletion waits for the test
            holding.set()
            await simcord_env.external_wait(release.wait(), reason="the test holds the delete")
        return await delete(session, message_id)

    monkeypatch.setattr(turn_pings, "_delete", held_delete)
    await pass_turn(table)  # the next turn starts: its ping waits on the old one's deletion
    assert holding.is_set()
    mover = str(table.active().id)
    posted = len(ping_posts(simcord_env))
    await pass_turn(table)  # they move while their ping is being prepared
    release.set()
    await simcord_env.advance_time(0.1)
    late = [content for content in ping_posts(simcord_env)[posted:] if f"<@{mover}>" in content]
    assert late == []  # never sent, so never notified
    # The turn that started meanwhile is pinged as usual, and alone.
    (now,) = pings(table.channel)
    assert f"<@{table.game.active_player}>" in now.content
    assert table.session.meta.ping_message[0] == now.id


def fail_recording_pings(env: Env, monkeypatch: pytest.MonkeyPatch, times: int = 1) -> list[int]:
    """Make the next ``times`` saves that record a new ping message fail (the rest go
    through); returns the list of the ping messages whose record failed."""
    storage = env.bot.storage
    save = storage.save_table
    failed: list[int] = []

    async def failing(record: TableRecord, *args: Any, **kwargs: Any) -> None:
        session = env.bot.tables.get(record.id) if record.id is not None else None
        recorded = record.meta.get("ping_message", [])
        if (
            len(failed) < times
            and recorded
            and session is not None
            and recorded != session.meta.ping_message
        ):
            failed.append(int(recorded[0]))
            raise RuntimeError("storage exploded")
        await save(record, *args, **kwargs)

    monkeypatch.setattr(storage, "save_table", failing)
    return failed


async def test_a_ping_that_cannot_be_recorded_is_deleted_and_not_repeated(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 41, defect 5: the save that records a just-posted ping fails. The ping is
    deleted at once (nothing else would know to delete it), the failure is logged, and the
    rest of the same turn pings nobody again; the next turn's ping is recorded as usual.
    Rage with hidden bids, so that a turn has several changes (one per bid)."""
    guild, channel, players, _ = await setup(simcord_env)
    host = players[0]
    result = await host.slash(channel, "rage start", hidden_bids=True, turn_seconds=TURN)
    for player in players[1:]:
        await player.click(result.response.message, label="Join")
    await simcord_env.advance_time(RECENTLY + 1)
    failed = fail_recording_pings(simcord_env, monkeypatch)
    with caplog.at_level(logging.WARNING, logger="bot.client.publishing.pings"):
        await host.click(result.response.message, label="Start")
        await simcord_env.advance_time(0.1)
    table = RageTable(simcord_env, guild, channel, players, result.response.id)
    assert table.state.phase is Phase.BIDDING
    (lost,) = failed
    assert len(ping_posts(simcord_env)) == 1  # the bidders were pinged once...
    assert pings(channel) == []  # ...and the unrecorded ping is gone at once
    session = simcord_env.bot.tables.in_channel(channel.id)
    assert session is not None and session.meta.ping_message == []
    assert any("could not remember the ping" in r.getMessage() for r in caplog.records)
    # The same turn goes on (one bid of three): nobody is pinged again.
    await table.act(str(players[1].id), Bid(0))
    await simcord_env.advance_time(0.1)
    assert len(ping_posts(simcord_env)) == 1 and pings(channel) == []
    await simcord_env.advance_time(RECENTLY + 1)  # even once the bidders are owed pings
    await table.act(str(players[2].id), Bid(0))
    await simcord_env.advance_time(0.1)
    assert len(ping_posts(simcord_env)) == 1 and pings(channel) == []
    # The next turn is pinged, recorded (the save works again) and alone in the channel.
    await table.act(str(host.id), Bid(0))
    await simcord_env.advance_time(0.1)
    assert table.state.phase is not Phase.BIDDING
    assert len(pings(channel)) <= 1
    for ping in pings(channel):
        assert ping.id != lost and session.meta.ping_message[0] == ping.id


async def test_an_unrecorded_ping_that_cannot_be_deleted_goes_when_its_turn_passes(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect 5's fallback: the record of a ping fails and so does its deletion at once
    (both logged). The bot keeps it in memory and deletes it when its turn passes; the
    next turn's ping never shares the channel with it."""
    table = await nothanks(simcord_env)
    if table.game.active_player == str(table.players[0].id):
        await pass_turn(table)
    await simcord_env.advance_time(RECENTLY + 1)  # everyone is owed a ping again
    failed = fail_recording_pings(simcord_env, monkeypatch)
    delete = discord.PartialMessage.delete
    refused: list[int] = []

    async def flaky_delete(message: discord.PartialMessage, *args: Any, **kwargs: Any) -> None:
        if message.id in failed and message.id not in refused:
            refused.append(message.id)
            response = SimpleNamespace(status=503, reason="Service Unavailable")
            raise discord.HTTPException(response, "upstream connect error")  # type: ignore[arg-type]
        await delete(message, *args, **kwargs)

    monkeypatch.setattr(discord.PartialMessage, "delete", flaky_delete)
    with caplog.at_level(logging.WARNING, logger="bot.client.publishing.pings"):
        await pass_turn(table)
    (lost,) = failed
    assert refused == [lost]
    logged = [r.getMessage() for r in caplog.records]
    assert any("could not remember the ping" in m for m in logged)
    assert any("could not delete the ping" in m for m in logged)
    assert [m.id for m in pings(table.channel)] == [lost]  # still up while its turn lasts
    assert table.session.meta.ping_message == []
    await simcord_env.advance_time(RECENTLY + 1)
    await pass_turn(table)  # its turn passes: it goes, and the next turn's ping is alone
    (now,) = pings(table.channel)
    assert now.id != lost and table.session.meta.ping_message[0] == now.id
    assert f"<@{table.game.active_player}>" in now.content


async def test_a_recorded_ping_that_cannot_be_deleted_holds_back_the_next(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 41: the deletion of a table's recorded ping fails (twice: when the next turn's
    ping is prepared, and when the passed turn is tidied). No second ping is sent beside it,
    both failures are logged, and the record keeps it; once a deletion works the turn in
    progress is pinged, alone in the channel and recorded."""
    table = await nothanks(simcord_env)
    if table.game.active_player == str(table.players[0].id):
        await pass_turn(table)
    (first,) = pings(table.channel)
    await simcord_env.advance_time(RECENTLY + 1)  # everyone is owed a ping again
    delete = discord.PartialMessage.delete
    refused: list[int] = []

    async def flaky_delete(message: discord.PartialMessage, *args: Any, **kwargs: Any) -> None:
        if message.id == first.id and len(refused) < 2:
            refused.append(message.id)
            response = SimpleNamespace(status=503, reason="Service Unavailable")
            raise discord.HTTPException(response, "upstream connect error")  # type: ignore[arg-type]
        await delete(message, *args, **kwargs)

    monkeypatch.setattr(discord.PartialMessage, "delete", flaky_delete)
    posted = len(ping_posts(simcord_env))
    with caplog.at_level(logging.WARNING, logger="bot.client.publishing.pings"):
        await pass_turn(table)
        await simcord_env.advance_time(0.5)
    assert refused == [first.id, first.id]
    assert sum("could not delete the ping" in r.getMessage() for r in caplog.records) == 2
    # The old ping still stands alone, still recorded, so nothing forgets to delete it.
    assert [m.id for m in pings(table.channel)] == [first.id]
    assert len(ping_posts(simcord_env)) == posted
    assert table.session.meta.ping_message[0] == first.id
    # The next change deletes it, and only then is the turn in progress pinged.
    await pass_turn(table)
    await simcord_env.advance_time(0.5)
    (now,) = pings(table.channel)
    assert now.id != first.id and table.session.meta.ping_message[0] == now.id
    assert f"<@{table.game.active_player}>" in now.content
    assert reminders(table.channel) == []
