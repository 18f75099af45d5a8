"""End-to-end Rage tables through SimCord: full games per variant, hands, bids, restarts."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from simcord import Env

from bot.client.bot import CardtableBot
from bot.engines.rage import JOKER, Bid, Colour, Phase, Play, RageOptions, RageState
from tests.e2e.helpers import NAMES, click_stored, message_by_id, select_stored, snapshot

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class RageTable:
    """A Rage table in one channel, driven through its public and private messages."""

    def __init__(self, env: Env, guild: Any, channel: Any, players: list[Any], message_id: int):
        self.env, self.guild, self.channel = env, guild, channel
        self.players, self.message_id = players, message_id
        session = env.bot.tables.in_channel(channel.id)
        assert session is not None
        self.table_id = session.id
        self.last_state: RageState | None = None

    @property
    def cog(self) -> Any:
        """The running Rage cog."""
        return self.env.bot.get_cog("Rage")

    @property
    def state(self) -> RageState:
        """The engine behind the game (tests may look; players may not)."""
        session = self.env.bot.tables.get(self.table_id)
        if session is not None and isinstance(session.engine, RageState):
            self.last_state = session.engine
        assert self.last_state is not None
        return self.last_state

    @property
    def running(self) -> bool:
        """Whether the game is still on."""
        session = self.env.bot.tables.get(self.table_id)
        return session is not None and session.status == "running"

    @property
    def message(self) -> Any:
        """The public table message."""
        return message_by_id(self.env, self.channel, self.message_id)

    def actor(self, player: str) -> Any:
        """The member actor of a player id."""
        return next(p for p in self.players if str(p.id) == player)

    async def hand(self, actor: Any) -> Any:
        """Click Show my hand; return the private answer."""
        result = await actor.click(self.message, label="Show my hand")
        assert result.ephemeral, result
        return result.response

    async def act(self, player: str, action: Bid | Play) -> Any:
        """Make one bid or play through the private hand view, as the player would."""
        actor = self.actor(player)
        view = await self.hand(actor)
        return await self.choose(actor, view, action)

    async def choose(self, actor: Any, view: Any, action: Bid | Play) -> Any:
        """Tap an action in an already open hand view: one tap, two for a Joker."""
        if isinstance(action, Bid):
            return await actor.click(view.message, custom_id=button_id(view, "bid", action.tricks))
        result = await actor.click(
            view.message, custom_id=button_id(view, "play", action.card.code)
        )
        if action.card == JOKER:
            assert action.colour is not None
            colour_view = result.response
            assert "Name the Joker's colour" in colour_view.content
            result = await actor.click(
                colour_view.message, custom_id=button_id(colour_view, "joker", action.colour.code)
            )
        return result


def buttons(view: Any, action: str) -> list[dict[str, Any]]:
    """The buttons of one action ("bid", "play", "joker", "hand") in a private view."""
    found = []
    for row in view.components:
        for item in row.get("components", []):
            if item.get("type") == 2 and item.get("custom_id", "").split(":")[4:5] == [action]:
                found.append(item)
    return found


def arg_of(button: dict[str, Any]) -> str:
    """A button's choice: the card code, colour code or bid (without the round)."""
    arg = button["custom_id"].split(":")[5]
    return arg.partition("_")[2] if button["custom_id"].split(":")[4] == "bid" else arg


def choices(view: Any, action: str | None = None) -> list[str]:
    """The enabled choices of a private view (of one action, or of any of them)."""
    actions = [action] if action else ["bid", "play", "joker"]
    return [
        arg_of(button)
        for name in actions
        for button in buttons(view, name)
        if not button.get("disabled")
    ]


def button_id(view: Any, action: str, choice: object) -> str:
    """The custom_id of the enabled button for one choice."""
    for button in buttons(view, action):
        if arg_of(button).partition("_")[0] == str(choice):
            assert not button.get("disabled"), button
            return str(button["custom_id"])
    raise AssertionError(f"no {action} button for {choice!r}")


async def open_rage(
    env: Env, count: int, nicks: list[str] | None = None, **options: bool
) -> RageTable:
    """Create a channel and seat ``count`` players at a started Rage table (with ``nicks``,
    the server nicknames they show)."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel("rage")
    players = [
        guild.add_member(env.create_user(name), nick=None if nicks is None else nicks[index])
        for index, name in enumerate(NAMES[:count])
    ]
    result = await players[0].slash(channel, "rage start", **options)
    assert not result.ephemeral, result.response.content
    message = result.response
    for player in players[1:]:
        await player.click(message.message, label="Join")
    await players[0].click(message.message, label="Start")
    return RageTable(env, guild, channel, players, message.id)


def pick(state: RageState, player: str) -> Bid | Play:
    """A deterministic legal choice: the middle bid, else the first legal play."""
    legal = state.legal_actions(player)
    if isinstance(legal[0], Bid):
        return legal[len(legal) // 2]
    return legal[0]


async def play_out(table: RageTable, *, limit: int = 5000) -> int:
    """Play the game to its end through the hand views; return the number of actions."""
    actions = 0
    while table.running:
        state = table.state
        player = state.acting_players()[0]
        await table.act(player, pick(state, player))
        actions += 1
        assert actions < limit
    return actions


VARIANTS = [
    {},
    {"plus_minus_one": True, "sweep": True},
    {"hidden_bids": True},
    {"secret_bids": True, "sweep": True},
]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "+".join(v) or "standard")
@pytest.mark.parametrize("count", [3, 8])
async def test_full_game(simcord_env: Env, count: int, variant: dict[str, bool]) -> None:
    """A whole ten-round game is played through private hand views; standings match."""
    table = await open_rage(simcord_env, count, **variant)
    assert table.state.options == RageOptions(**variant)
    embed = table.message.embeds[0]
    assert embed.title == "Rage — round 1 of 10"
    actions = await play_out(table)
    assert actions == 10 * count + count * 55
    final = table.message.embeds[0]
    assert final.title == "Rage — final standings"
    record = await simcord_env.bot.storage.get_table(table.table_id)
    assert record is not None and record.status == "finished"
    state = RageState.from_dict(record.state)
    outcome = state.outcome()
    assert outcome is not None
    # Pictures on (the default): the picture is the board (ranks, names, rating changes,
    # every round, totals) and its alt text says it all; the text is who won.
    assert final.fields == []
    (attachment,) = table.message.attachments
    alt = attachment.description or ""
    assert "rounds 1 to 10" in alt and alt.count("; total ") == count
    sheet = state.score_sheet()
    for standing in outcome.standings:
        seat = sheet.players.index(standing.player)
        points = [row.entries[seat].points for row in sheet.rows]
        shown = ", ".join(f"−{-p}" if p is not None and p < 0 else str(p) for p in points)
        score = f"−{-standing.score}" if standing.score < 0 else str(standing.score)
        name = table.actor(standing.player).name
        line = rf"{standing.rank}\. {name}: {re.escape(shown)}; total {score} · Δ [+−±][\d,]+"
        assert re.search(line, alt), (line, alt)
    assert "Show my hand" not in (final.footer.text or "")
    labels = [item.label for row in table.message.components for item in row.children]
    assert labels == ["Rematch"]


async def test_invalid_variant_combinations(simcord_env: Env) -> None:
    """Hidden+secret and plus/minus one with hidden bids are refused with a clear reason."""
    await simcord_env.bot.tree.sync()
    guild = simcord_env.create_guild()
    channel = guild.create_text_channel("rage")
    ana = guild.add_member(simcord_env.create_user("ana"))
    both = await ana.slash(channel, "rage start", hidden_bids=True, secret_bids=True)
    assert both.ephemeral and "exclude each other" in both.response.content
    pm = await ana.slash(channel, "rage start", plus_minus_one=True, hidden_bids=True)
    assert pm.ephemeral and "needs open bidding" in pm.response.content
    assert simcord_env.bot.tables.in_channel(channel.id) is None


async def install(table: RageTable, state: RageState, make_bot: Callable[[], CardtableBot]) -> None:
    """Replace the dealt game with a hand-built one in the database, then restart the bot.

    The restart restores the table from its row and refreshes its message, as after a
    crash: the test goes through storage, not through the bot's memory.
    """
    record = await table.env.bot.storage.get_table(table.table_id)
    assert record is not None
    record.state = state.to_dict()
    record.move_number = state.move_number
    record.meta.pop("turn", None)
    await table.env.bot.storage.save_table(record)
    await table.env.restart_bot(make_bot())


async def test_joker_asks_for_its_colour(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """Playing a Joker opens a colour choice; the trick then shows the named colour."""
    table = await open_rage(simcord_env, 3)
    a, b, c = (str(p.id) for p in table.players)
    state = RageState.from_deal(
        [a, b, c],
        {a: ["JOKER", "R3"], b: ["B4", "G5"], c: ["Y6", "V7"]},
        stack=["O9"],
        dealer=c,
        bids={a: 1, b: 0, c: 1},
    )
    await install(table, state, make_bot)
    view = await table.hand(table.actor(a))
    assert "JOKER" in choices(view, "play")
    await table.choose(table.actor(a), view, Play(JOKER, Colour.BLUE))
    assert table.state.current_trick[0].colour is Colour.BLUE
    alt = table.message.attachments[0].description or ""
    assert "Trick 1: ana Joker\u00a0(🟦\u2060●)" in alt
    # Ben holds blue and must follow: his choices are exactly his blue cards.
    ben = await table.hand(table.actor(b))
    assert choices(ben) == ["B4"]
    assert [arg_of(button) for button in buttons(ben, "play")] == ["B4", "G5"]


async def test_plus_minus_one_hides_the_forbidden_bid(simcord_env: Env) -> None:
    """Under plus/minus one the last bidder's select lacks the bid that would add up."""
    table = await open_rage(simcord_env, 3, plus_minus_one=True)
    state = table.state
    order = list(state.acting_players())
    first, second = order[0], None
    await table.act(first, Bid(1))
    second = table.state.acting_players()[0]
    await table.act(second, Bid(2))
    last = table.state.acting_players()[0]
    view = await table.hand(table.actor(last))
    values = choices(view)
    forbidden = str(table.state.cards_per_hand - 3)
    assert forbidden not in values
    assert len(values) == table.state.cards_per_hand  # 0..n without one
    # The forbidden bid is shown, disabled, with the reason.
    shown = [arg_of(button) for button in buttons(view, "bid")]
    assert shown == [str(bid) for bid in range(table.state.cards_per_hand + 1)]
    assert f"Not {forbidden}: under plus/minus one" in view.content


async def test_secret_bids_stay_private(simcord_env: Env) -> None:
    """With secret bids nobody but the bidder sees a bid until the round is scored."""
    table = await open_rage(simcord_env, 3, secret_bids=True)
    a = str(table.players[0].id)
    await table.act(a, Bid(2))
    public = table.message.embeds[0]
    text = str(public.to_dict())
    assert "bid 2" not in text and "bid ✓" in text
    for other in table.players[1:]:
        view = await table.hand(other)
        assert "Your turn: bid" in view.content and "bid: 2" not in view.content
        assert "bid 2" not in view.content
    mine = await table.hand(table.players[0])
    assert "Your bid: 2" in mine.content
    # Everyone bids at once: all others can bid now, in any order.
    assert set(table.state.acting_players()) == {str(p.id) for p in table.players[1:]}


async def test_stale_private_view_gets_a_fresh_one(simcord_env: Env) -> None:
    """A select from an outdated hand view is re-validated: a fresh view, no move applied."""
    table = await open_rage(simcord_env, 3)
    player = table.state.acting_players()[0]
    actor = table.actor(player)
    old = await table.hand(actor)
    frozen = snapshot(table.env, old.message)
    first = button_id(old, "bid", choices(old)[0])
    await table.choose(actor, old, pick(table.state, player))
    moves = table.state.move_number
    again = await click_stored(actor, frozen, first)
    assert table.state.move_number == moves
    assert again.response is not None and "out of date" in again.response.content
    assert choices(again.response) == []  # no longer this player's turn


async def test_restart_mid_trick(simcord_env: Env, make_bot: Callable[[], CardtableBot]) -> None:
    """After a restart mid-trick the public button and an open hand view keep working."""
    table = await open_rage(simcord_env, 3)
    while table.state.phase is Phase.BIDDING:
        player = table.state.acting_players()[0]
        await table.act(player, pick(table.state, player))
    player = table.state.acting_players()[0]
    await table.act(player, pick(table.state, player))
    assert len(table.state.current_trick) == 1
    next_player = table.state.acting_players()[0]
    open_view = await table.hand(table.actor(next_player))
    before = table.state.to_dict()
    await simcord_env.restart_bot(make_bot())
    assert table.state.to_dict() == before
    result = await table.choose(table.actor(next_player), open_view, pick(table.state, next_player))
    assert not (result.response and "out of date" in result.response.content)
    assert len(table.state.current_trick) == 2
    await play_out(table)


async def test_racing_selects_apply_once(simcord_env: Env) -> None:
    """The same choice sent twice from one view applies once; the second sees a fresh view."""
    table = await open_rage(simcord_env, 3)
    player = table.state.acting_players()[0]
    actor = table.actor(player)
    view = await table.hand(actor)
    frozen = snapshot(table.env, view.message)
    tap = button_id(view, "bid", choices(view)[0])
    await click_stored(actor, frozen, tap)
    assert table.state.move_number == 1
    second = await click_stored(actor, frozen, tap)
    assert table.state.move_number == 1
    assert "out of date" in second.response.content


async def test_not_your_turn_view_has_no_choices(simcord_env: Env) -> None:
    """A player whose turn it is not sees their hand without a select; strangers are refused."""
    table = await open_rage(simcord_env, 3)
    waiting = table.state.acting_players()[0]
    other = next(p for p in table.players if str(p.id) != waiting)
    view = await table.hand(other)
    assert choices(view) == []
    stranger = table.guild.add_member(simcord_env.create_user("zed"))
    refused = await stranger.click(table.message, label="Show my hand")
    assert refused.ephemeral and refused.response.content.startswith("You are not at this table")


async def test_one_table_per_channel_across_games(simcord_env: Env) -> None:
    """A Rage table blocks /nothanks start in the same channel, with a link to it."""
    table = await open_rage(simcord_env, 3)
    busy = await table.players[1].slash(table.channel, "nothanks start")
    assert busy.ephemeral and "already has a table" in busy.response.content


async def test_select_from_an_older_view_still_plays(simcord_env: Env) -> None:
    """A bid select posted before the panel had buttons is still obeyed."""
    table = await open_rage(simcord_env, 3)
    player = table.state.acting_players()[0]
    actor = table.actor(player)
    view = await table.hand(actor)
    frozen = snapshot(table.env, view.message)
    select = f"selct:rage:{table.table_id}:0:bid:1"
    options = [{"label": str(bid), "value": str(bid)} for bid in (0, 1)]
    frozen.components = [
        {"type": 1, "components": [{"type": 3, "custom_id": select, "options": options}]}
    ]
    result = await select_stored(actor, frozen, select, ["1"])
    assert table.state.move_number == 1, result.response
    assert table.state.bids[table.state.players.index(player)] == 1
