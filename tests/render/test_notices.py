"""The "your turn" DM and /cardtable turns: where, when, the move's buttons, names escaped."""

from __future__ import annotations

from bot.engines.nothanks import NoThanksGame
from bot.engines.rage import RageState
from bot.render.nothanks import NoThanksRenderer
from bot.render.notices import TURNS_LISTED, notice_over, turn_notice, turns_list
from bot.render.rage import RageRenderer
from bot.render.table import played_for
from tests.render.test_names import facts_for


def test_no_thanks_notice_has_where_when_and_take_or_pass() -> None:
    """The notice names the game, the server (escaped: no markdown, no ping), the channel,
    the link and the deadline, then the player's chips and the card, and carries exactly
    Take and No thanks! for the current move."""
    facts = facts_for("nothanks", "running", count=3)
    game = NoThanksGame.new([str(seat) for seat in facts.seats], seed=3)
    player = game.active_player
    assert player is not None
    fields = turn_notice(
        NoThanksRenderer(),
        facts,
        game.view(player),
        server="**@everyone** club",
        channel_id=55,
        link="https://discord.com/channels/1/55/66",
        deadline=1_800_000_000.7,
        locale="en",
    )
    text = fields["content"]
    assert "Your turn" in text and "No Thanks!" in text and "<#55>" in text
    assert "\\*\\*@\u200beveryone\\*\\* club" in text
    assert "<t:1800000000:R>" in text and "https://discord.com/channels/1/55/66" in text
    assert "You have **11** chips" in text and f"It is your turn: {game.current_card}" in text
    ids = [item.custom_id for item in fields["view"].children]
    assert ids == [
        f"ct:nothanks:7:{game.move_number}:take",
        f"ct:nothanks:7:{game.move_number}:pass",
    ]
    assert not fields["allowed_mentions"].everyone


def test_rage_notice_is_the_hand_panel() -> None:
    """Rage's notice carries the hand panel's bid buttons for the player to bid."""
    facts = facts_for("rage", "running", count=3)
    state = RageState.new([str(seat) for seat in facts.seats], seed=9)
    (player,) = state.acting_players()
    fields = turn_notice(
        RageRenderer(),
        facts,
        state.view(player),
        server=None,
        channel_id=5,
        link="L",
        deadline=1.0,
        locale="de",
    )
    assert "einem Server" in fields["content"]
    actions = {item.custom_id.split(":")[4] for item in fields["view"].children}
    assert actions == {"bid"}


def test_closed_notice_and_turns_list() -> None:
    """A passed notice has no buttons and says how it ended; the list is capped."""
    done = notice_over(NoThanksRenderer(), timed_out=True, server="S", link="L", locale="it")
    assert done["view"] is None and done["content"].startswith("⏰")
    assert turns_list([], "en")["content"] == "No table is waiting for you right now."
    entries = [("Rage", "S", 1, float(n), f"L{n}") for n in range(TURNS_LISTED + 3)]
    text = turns_list(entries, "en")["content"]
    assert text.count("\n• ") == TURNS_LISTED and "…and 3 more." in text


def test_how_long_a_game_took() -> None:
    """Hours up to two days (at least one), days beyond; in the reader's language."""
    assert played_for(100, "en") == "played in 1 hour"
    assert played_for(47 * 3600 + 59, "en") == "played in 47 hours"
    assert played_for(3 * 86400 + 5, "en") == "played over 3 days"
    assert played_for(5 * 86400, "ru") == "сыграно за 5 дней"
