"""The private Rage panel: buttons for every choice, and the taps a turn takes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from simcord import Env
from simcord.results import ResponseMessage

from bot.client.bot import CardtableBot
from bot.engines.rage import JOKER, Bid, Card, Colour, Phase, Play, RageState
from bot.i18n import t
from tests.e2e.helpers import click_stored, snapshot
from tests.e2e.test_rage_table import (
    RageTable,
    arg_of,
    button_id,
    buttons,
    choices,
    install,
    open_rage,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Taps:
    """A player's taps on private panels, counted."""

    def __init__(self, actor: Any) -> None:
        self.actor, self.count = actor, 0

    async def tap(self, view: Any, action: str, choice: object) -> Any:
        """Tap one button of a panel; return the panel as it is afterwards."""
        self.count += 1
        result = await self.actor.click(view.message, custom_id=button_id(view, action, choice))
        return result.response


async def joker_table(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> tuple[RageTable, str, str, str]:
    """A three-player trick after the bids: Ana leads and holds a Joker, red is trump."""
    table = await open_rage(simcord_env, 3)
    a, b, c = (str(p.id) for p in table.players)
    state = RageState.from_deal(
        [a, b, c],
        {a: ["JOKER", "R3"], b: ["B4", "G5"], c: ["Y6", "B7"]},
        stack=["R9"],
        dealer=c,
        bids={a: 1, b: 0, c: 1},
    )
    await install(table, state, make_bot)
    return table, a, b, c


async def test_a_bid_is_one_tap(simcord_env: Env) -> None:
    """With the panel open, a bid is one tap on a number button."""
    table = await open_rage(simcord_env, 3)
    player = table.state.acting_players()[0]
    panel = await table.hand(table.actor(player))
    taps = Taps(table.actor(player))
    after = await taps.tap(panel, "bid", 1)
    assert taps.count == 1
    assert table.state.bids[table.state.players.index(player)] == 1
    assert "Your bid: 1" in after.content


async def test_a_card_is_one_tap_and_a_joker_two(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """A Joker takes two taps (card, colour), a normal card one; the panel shows the trick."""
    table, a, b, _ = await joker_table(simcord_env, make_bot)
    waiting = await table.hand(table.actor(b))
    assert waiting.content.startswith("**Waiting for ana**")  # whose turn, on line one
    panel = await table.hand(table.actor(a))
    assert panel.content.startswith(
        "**Your turn: lead any card**\nRound 9 · Trump: 🟥\u2060♥\u00a0red"
    )
    # Trump first, action cards last; every card is a button, and the hand no text line.
    assert [arg_of(button) for button in buttons(panel, "play")] == ["R3", "JOKER"]
    assert "🟥\u2060♥\u00a03" not in panel.content
    taps = Taps(table.actor(a))
    colours = await taps.tap(panel, "play", "JOKER")
    assert "Name the Joker's colour" in colours.content
    labels = [button["label"] for button in buttons(colours, "joker")]
    assert "🟥\u2060♥\u00a0red (trump)" in labels
    assert buttons(colours, "hand"), "a Back button"
    await taps.tap(colours, "joker", Colour.BLUE.code)
    assert taps.count == 2
    assert table.state.current_trick[0].colour is Colour.BLUE

    panel = await table.hand(table.actor(b))
    assert panel.content.startswith("**Your turn: follow 🟦\u2060●\u00a0blue**")
    assert "Led colour: 🟦\u2060●\u00a0blue" in panel.content
    assert "Winning so far: ana with Joker\u00a0(🟦\u2060●)" in panel.content
    assert "Trick 1: ana Joker\u00a0(🟦\u2060●)" in panel.content
    assert choices(panel) == ["B4"]  # Ben must follow blue; G5 is shown disabled
    taps = Taps(table.actor(b))
    await taps.tap(panel, "play", "B4")
    assert taps.count == 1
    assert len(table.state.current_trick) == 2


async def test_back_shows_the_hand_again(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """Back from the Joker's colours shows the hand in the same message; nothing is played."""
    table, a, _, _ = await joker_table(simcord_env, make_bot)
    actor = table.actor(a)
    panel = await table.hand(actor)
    colours = (
        await actor.click(panel.message, custom_id=button_id(panel, "play", "JOKER"))
    ).response
    back = await actor.click(
        colours.message, custom_id=str(buttons(colours, "hand")[0]["custom_id"])
    )
    assert back.response.id == colours.id  # edited in place, not a new message
    assert choices(back.response, "play") == ["R3", "JOKER"]
    assert table.state.current_trick == ()


async def test_a_whole_round_by_buttons(simcord_env: Env) -> None:
    """Round 1 played by taps only: each turn one tap on a freshly opened panel."""
    table = await open_rage(simcord_env, 3)
    turns = taps = 0
    while table.state.round == 1 and table.running:
        state = table.state
        player = state.acting_players()[0]
        actor = table.actor(player)
        panel = await table.hand(actor)
        counter = Taps(actor)
        legal = state.legal_actions(player)
        action = legal[0]
        if isinstance(action, Bid):
            await counter.tap(panel, "bid", action.tricks)
        else:
            assert isinstance(action, Play)
            after = await counter.tap(panel, "play", action.card.code)
            if action.card == JOKER:
                await counter.tap(after, "joker", choices(after, "joker")[0])
        turns += 1
        taps += counter.count
        assert counter.count == (2 if isinstance(action, Play) and action.card == JOKER else 1)
    assert table.state.round == 2 or table.state.phase is Phase.BIDDING
    assert turns == 3 + 3 * 10


async def test_public_table_shows_the_trick_and_the_last_trick(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """The picture (and its alt text) shows the trick; the text says whose turn, one line
    per player and the last trick of this round, labelled with its number."""
    table, a, b, c = await joker_table(simcord_env, make_bot)
    await table.act(a, Play(JOKER, Colour.BLUE))
    message = table.message
    alt = message.attachments[0].description or ""
    assert "Led colour: 🟦\u2060●\u00a0blue" in alt
    assert "Winning so far: ana with Joker\u00a0(🟦\u2060●)" in alt
    assert "Led colour" not in (message.embeds[0].description or "")  # the picture shows it
    await table.act(b, Play(Card.parse("B4")))
    await table.act(c, Play(Card.parse("B7")))
    lines = (table.message.embeds[0].description or "").splitlines()
    assert "▶ ana · bid 1 · won 1 · 0 pts" in lines
    won = "Trick 1: ana won with Joker\u00a0(🟦\u2060●): a Joker is the highest card of its colour."
    assert won in lines


async def test_without_pictures_the_text_shows_the_trick(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """With pictures off, the text says what the picture would: trump, trick, led colour."""
    table, a, _, _ = await joker_table(simcord_env, make_bot)
    await simcord_env.bot.images.set(table.guild.id, False)
    await table.act(a, Play(JOKER, Colour.BLUE))
    message = table.message
    assert not message.attachments
    lines = (message.embeds[0].description or "").splitlines()
    assert lines[:4] == [
        "Trump: 🟥\u2060♥\u00a0red",
        "Trick 1: ana Joker\u00a0(🟦\u2060●)",
        "Led colour: 🟦\u2060●\u00a0blue",
        "Winning so far: ana with Joker\u00a0(🟦\u2060●)",
    ]


async def test_change_trump_is_announced(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """When Change Trump turns up a new trump, the table and the panel say so."""
    table = await open_rage(simcord_env, 3)
    a, b, c = (str(p.id) for p in table.players)
    state = RageState.from_deal(
        [a, b, c],
        {a: ["R3", "B2"], b: ["CT", "G5"], c: ["Y6", "B7"]},
        stack=["G9", "R9"],  # green is trump; Change Trump turns up red
        dealer=c,
        bids={a: 1, b: 0, c: 1},
    )
    await install(table, state, make_bot)
    await table.act(a, Play(Card.parse("R3")))
    await table.act(b, Play(Card.parse("CT")))
    line = "Change Trump turned up 🟥\u2060♥\u00a0red: the new trump counts for this trick too"
    assert line in (table.message.attachments[0].description or "")  # the alt text
    assert line in (await table.hand(table.actor(c))).content


@pytest.mark.parametrize("locale", ["en", "de", "ru", "it"])
def test_player_line_fits_a_phone(locale: str) -> None:
    """A player's line, with a ten-letter name and the widest numbers, stays within 47."""
    line = t("rage.game.player_line", locale, player="Alexandra1", bid="10", tricks=10, total=-105)
    assert len(line) <= 47, line


def current(env: Env, panel: Any) -> Any:
    """A private panel as it is now (the bot edits it in place)."""
    return ResponseMessage(env, env.backend.get_message(panel.channel_id, panel.id))


async def test_living_panel_one_tap_per_turn(simcord_env: Env) -> None:
    """Each player opens the panel once; after that it is kept current: a tap per turn."""
    table = await open_rage(simcord_env, 3)
    panels = {str(actor.id): await table.hand(actor) for actor in table.players}
    turns = 0
    while table.state.round == 1:
        await simcord_env.settle()
        state = table.state
        player = state.acting_players()[0]
        action = state.legal_actions(player)[0]
        panel = current(simcord_env, panels[player])
        counter = Taps(table.actor(player))
        if isinstance(action, Bid):
            after = await counter.tap(panel, "bid", action.tricks)
        else:
            assert isinstance(action, Play)
            after = await counter.tap(panel, "play", action.card.code)
            if action.card == JOKER:
                after = await counter.tap(after, "joker", choices(after, "joker")[0])
        assert "out of date" not in after.content
        assert counter.count == (2 if isinstance(action, Play) and action.card == JOKER else 1)
        turns += 1
    assert turns == 3 + 3 * 10


async def test_expired_panel_is_not_edited(simcord_env: Env) -> None:
    """A panel older than 14 minutes is forgotten, not edited: one tap reopens it."""
    table = await open_rage(simcord_env, 3)
    first = table.state.acting_players()[0]
    second = table.state.players[(table.state.players.index(first) + 1) % 3]
    panel = await table.hand(table.actor(second))
    cog = table.cog
    cog.panels[(table.table_id, second)].since -= 15 * 60
    await table.act(first, Bid(0))
    await simcord_env.settle()
    assert table.state.acting_players() == (second,)
    assert (table.table_id, second) not in cog.panels
    assert "Your bid: how many" not in current(simcord_env, panel).content


def live_buttons(view: Any) -> list[dict[str, Any]]:
    """The enabled buttons of a message."""
    return [
        item
        for row in view.components
        for item in row.get("components", [])
        if item.get("type") == 2 and not item.get("disabled")
    ]


async def test_a_new_panel_retires_the_old_one(simcord_env: Env) -> None:
    """Show my hand twice: the first panel says it was replaced, with no buttons; the
    second is live; a tap on a stale copy of the first is refused and plays nothing."""
    table = await open_rage(simcord_env, 3)
    player = table.state.acting_players()[0]
    actor = table.actor(player)
    first = await table.hand(actor)
    stale = snapshot(simcord_env, first.message)
    bid_id = button_id(first, "bid", 1)
    second = await table.hand(actor)
    await simcord_env.settle()
    old = current(simcord_env, first)
    assert old.content == "This hand is out of date: a newer one replaced it."
    assert not live_buttons(old)
    assert choices(current(simcord_env, second), "bid"), "the new panel is live"
    before = table.state
    refused = await click_stored(actor, stale, bid_id)
    assert refused.response.content == "This hand is out of date: a newer one replaced it."
    assert not live_buttons(refused.response)
    assert table.state is before and table.state.bids == before.bids
    # The current panel still plays.
    after = await Taps(actor).tap(current(simcord_env, second), "bid", 1)
    assert "Your bid: 1" in after.content


async def test_round_over_retires_the_panels(simcord_env: Env) -> None:
    """Play round 1 through the panels; when round 2 begins, the round-1 panels say the
    round is over, with no buttons; a tap on a stale copy changes nothing."""
    table = await open_rage(simcord_env, 3)
    panels = {str(actor.id): await table.hand(actor) for actor in table.players}
    stale: dict[str, Any] = {}
    while table.state.round == 1:
        await simcord_env.settle()
        state = table.state
        player = state.acting_players()[0]
        action = state.legal_actions(player)[0]
        panel = current(simcord_env, panels[player])
        if isinstance(action, Play) and action.card != JOKER:
            stale[player] = (
                snapshot(simcord_env, panel.message),
                button_id(panel, "play", action.card.code),
            )
        taps = Taps(table.actor(player))
        if isinstance(action, Bid):
            await taps.tap(panel, "bid", action.tricks)
        else:
            assert isinstance(action, Play)
            after = await taps.tap(panel, "play", action.card.code)
            if action.card == JOKER:
                await taps.tap(after, "joker", choices(after, "joker")[0])
        last = player
    await simcord_env.settle()
    assert table.state.round == 2
    for player, panel in panels.items():
        now = current(simcord_env, panel)
        if player == last:
            continue  # the last tap's answer is the round-2 hand, in the same panel
        assert now.content.startswith("Round 1 is over"), now.content
        assert not live_buttons(now)
    player = next(p for p in stale if p != last)
    copy, custom_id = stale[player]
    before = table.state
    refused = await click_stored(table.actor(player), copy, custom_id)
    assert refused.response.content.startswith("Round 1 is over")
    assert not live_buttons(refused.response)
    assert table.state is before


async def test_game_over_retires_the_panels(
    simcord_env: Env, make_bot: Callable[[], CardtableBot]
) -> None:
    """The last trick of the last round: every open panel says the game is over, without
    buttons, not only the panel of the player who played the last card."""
    table = await open_rage(simcord_env, 3)
    a, b, c = (str(p.id) for p in table.players)
    state = RageState.from_deal(
        [a, b, c],
        {a: ["R3"], b: ["B4"], c: ["Y6"]},
        stack=["G9"],
        dealer=c,
        bids={a: 0, b: 0, c: 0},
    )
    await install(table, state, make_bot)
    panels = {str(actor.id): await table.hand(actor) for actor in table.players}
    for player, card in ((a, "R3"), (b, "B4"), (c, "Y6")):
        await simcord_env.settle()
        await Taps(table.actor(player)).tap(current(simcord_env, panels[player]), "play", card)
    await simcord_env.settle()
    assert not table.running
    for panel in panels.values():
        now = current(simcord_env, panel)
        assert now.content == "The game is over: see the final standings on the table."
        assert not live_buttons(now)


async def test_a_panel_follows_a_move_made_for_its_absent_player(simcord_env: Env) -> None:
    """Issue 41: the player whose bid is awaited has their panel open and lets the turn run
    out. At the deadline a computer bids for them; their panel is then brought up to date
    (their bid shown, no live bid buttons left), and a tap on a stale copy of the old one
    changes nothing. The panels of the others who wait follow the table too."""
    table = await open_rage(simcord_env, 3)
    absent = table.state.acting_players()[0]
    actor = table.actor(absent)
    panel = await table.hand(actor)
    others = {p: await table.hand(table.actor(p)) for p in table.state.players if p != absent}
    assert choices(panel, "bid"), "the bid buttons are live before the deadline"
    stale = snapshot(simcord_env, panel.message)
    bid_id = button_id(panel, "bid", 0)
    await simcord_env.advance_time(61)  # past the turn's deadline: the computer bids
    await simcord_env.settle()
    state = table.state
    seat = state.players.index(absent)
    assert state.bids[seat] is not None and absent not in state.acting_players()
    now = current(simcord_env, panel)
    assert not live_buttons(now), now.components
    session = simcord_env.bot.tables.get(table.table_id)
    locale = table.cog.panels[(table.table_id, absent)].interaction.locale
    assert now.content == table.cog.hand(session, absent, locale)["content"]
    assert f"Your bid: {state.bids[seat]}" in now.content
    for player, other in others.items():
        shown = current(simcord_env, other).content
        if player not in state.acting_players():
            assert shown == table.cog.hand(session, player, locale)["content"], player
    before = table.state
    refused = await click_stored(actor, stale, bid_id)
    assert refused.acknowledged and table.state is before
    assert not live_buttons(refused.response)
