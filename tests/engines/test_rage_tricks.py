"""Hand-built tricks for every Rage trick rule: following, trump, action cards, Jokers."""

from __future__ import annotations

from collections.abc import Sequence

from bot.engines.rage import (
    JOKER,
    Colour,
    MustFollowSuit,
    Play,
    RageState,
    WinReason,
    card,
)

from .test_rage_helpers import assert_rejected, deal, play, play_action


def started(hands: list[list[str]], stack: list[str]) -> RageState:
    """A round already bid (all zero), ready for anja to lead; the last seat deals."""
    return deal(hands, stack=stack, bids=[0] * len(hands))


def codes(actions: Sequence[object]) -> list[str]:
    """Legal actions as short strings, "JOKER:red" for a Joker play."""
    out = []
    for action in actions:
        assert isinstance(action, Play)
        out.append(action.card.code + ("" if action.colour is None else f":{action.colour}"))
    return out


def test_follow_suit_is_enforced() -> None:
    """A player holding the led colour may play only that colour: no trump, action or Joker."""
    state = started(
        [["Y5", "B1", "G0"], ["Y9", "R3", "NT"], ["Y2", "JOKER", "G2"], ["B7", "R8", "+5"]],
        stack=["R0"],
    )
    play(state, "Y5")
    assert codes(state.legal_actions("bernd")) == ["Y9"]
    assert_rejected(state, "bernd", play_action("R3"), MustFollowSuit)
    error = assert_rejected(state, "bernd", play_action("NT"), MustFollowSuit)
    assert "must follow yellow" in str(error)
    play(state, "Y9")
    assert_rejected(state, "claudia", play_action("JOKER:yellow"), MustFollowSuit)
    assert_rejected(state, "claudia", play_action("JOKER:red"), MustFollowSuit)
    assert codes(state.legal_actions("claudia")) == ["Y2"]
    play(state, "Y2")
    # Dieter has no yellow: any card is allowed.
    assert codes(state.legal_actions("dieter")) == ["B7", "R8", "+5"]


def test_a_player_who_cannot_follow_may_play_anything_and_name_any_joker_colour() -> None:
    """Without the led colour every card is legal; a Joker may name each of the six colours."""
    state = started([["Y5", "B1"], ["B7", "JOKER"], ["Y2", "G2"]], stack=["R0"])
    play(state, "Y5")
    assert codes(state.legal_actions("bernd")) == [
        "B7",
        *(f"JOKER:{c}" for c in ("blue", "green", "red", "yellow", "violet", "orange")),
    ]


def test_trump_beats_the_led_colour() -> None:
    """A low trump from a player who cannot follow beats the highest led card."""
    state = started([["Y5"], ["Y15"], ["R0"], ["B9"]], stack=["R1"])
    play(state, "Y5", "Y15", "R0", "B9")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.trump, result.led) == (
        "claudia",
        WinReason.TRUMP,
        Colour.RED,
        Colour.YELLOW,
    )


def test_highest_led_colour_wins_without_trump_and_off_colours_never_win() -> None:
    """A higher card of a colour that is neither led nor trump cannot take the trick."""
    state = started([["Y5", "B1"], ["Y9", "B2"], ["G15", "B3"]], stack=["R0"])
    play(state, "Y5", "Y9", "G15")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason) == ("bernd", WinReason.LED_COLOUR)
    assert state.current_player == "bernd"  # the winner leads the next trick
    assert state.tricks_won == [0, 1, 0]


def test_no_trump_after_a_trump_was_played() -> None:
    """The rule book's example: a No Trump turns the red 4 into an ordinary card."""
    state = started(
        [["Y8", "B1"], ["R4", "B2"], ["NT", "B3"], ["Y3", "B4"]], stack=["R0", "CT", "G5", "O1"]
    )
    play(state, "Y8", "R4")
    assert state.trump is Colour.RED
    play(state, "NT")
    assert state.trump is None
    assert state.no_trump_this_trick
    play(state, "Y3")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.trump) == ("anja", WinReason.LED_COLOUR, None)
    # After the trick the next colour card (skipping the Change Trump) is the new trump.
    assert state.trump is Colour.GREEN
    assert not state.no_trump_this_trick
    assert [c.code for c in state.turned_up] == ["R0", "CT", "G5"]
    assert [c.code for c in state.stack] == ["O1"]


def test_change_trump_re_ranks_cards_already_played() -> None:
    """A green card played before the Change Trump becomes trump; the old red trump does not."""
    state = started([["Y5"], ["G3"], ["R9"], ["CT"]], stack=["R0", "-5", "G5", "O1"])
    play(state, "Y5", "G3", "R9", "CT")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.trump) == ("bernd", WinReason.TRUMP, Colour.GREEN)
    assert [c.code for c in state.turned_up] == ["R0", "-5", "G5"]


def test_change_trump_acts_at_once_and_lasts_for_the_round() -> None:
    """The new trump shows as soon as the card is played and stays for later tricks."""
    state = started(
        [["Y5", "O2", "B1"], ["R9", "O3", "B2"], ["CT", "B4", "O4"], ["G3", "V6", "O5"]],
        stack=["R0", "G5"],
    )
    play(state, "Y5", "R9", "CT")
    assert state.trump is Colour.GREEN
    assert not state.no_trump_this_trick
    play(state, "G3")
    assert state.last_trick is not None and state.last_trick.winner == "dieter"
    play(state, "V6", "O2", "O3", "O4")
    assert state.round == 8
    assert state.trump is Colour.GREEN


def test_no_trump_then_change_trump_in_one_trick() -> None:
    """A Change Trump after a No Trump sets a trump for the trick; nothing is turned after it."""
    state = started(
        [["Y5", "B1"], ["G3", "B2"], ["NT", "B3"], ["CT", "B4"]], stack=["R0", "G5", "O7"]
    )
    play(state, "Y5", "G3", "NT")
    assert state.trump is None
    play(state, "CT")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.trump) == ("bernd", WinReason.TRUMP, Colour.GREEN)
    assert state.trump is Colour.GREEN
    assert [c.code for c in state.turned_up] == ["R0", "G5"]
    assert [c.code for c in state.stack] == ["O7"]


def test_no_trump_change_trump_no_trump_leaves_the_trick_without_trump() -> None:
    """Action cards act in order: the last No Trump wins out and one card is turned after."""
    state = started([["Y5"], ["G3"], ["NT"], ["CT"], ["NT"]], stack=["R0", "G5", "-5", "O7", "B9"])
    play(state, "Y5", "G3", "NT", "CT")
    assert state.trump is Colour.GREEN
    play(state, "NT")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.trump) == ("anja", WinReason.LED_COLOUR, None)
    assert [c.code for c in state.turned_up] == ["R0", "G5", "-5", "O7"]
    # The trick ended the round (one card each); the turn-up still happened before scoring.
    assert state.rounds[-1].tricks == (1, 0, 0, 0, 0)


def test_several_no_trumps_in_one_trick_turn_up_one_card() -> None:
    """Two No Trumps in a trick still turn up a single new trump afterwards."""
    state = started(
        [["Y5", "B1"], ["NT", "B2"], ["NT", "B3"], ["Y2", "B4"]], stack=["R0", "G5", "O7"]
    )
    play(state, "Y5", "NT", "NT", "Y2")
    assert state.trump is Colour.GREEN
    assert [c.code for c in state.stack] == ["O7"]


def test_second_joker_beats_the_first_in_the_led_colour() -> None:
    """Both Jokers named red: the one played second wins; the led colour is the named one."""
    state = started([["JOKER", "B1"], ["JOKER", "B2"], ["R15", "Y3"], ["R2", "Y4"]], stack=["B0"])
    play(state, "JOKER:red")
    assert state.led_colour is Colour.RED
    assert "B2" in codes(state.legal_actions("bernd"))  # bernd holds no red
    play(state, "JOKER:red")
    assert codes(state.legal_actions("claudia")) == ["R15"]
    play(state, "R15", "R2")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.winning_index) == ("bernd", WinReason.JOKER, 1)
    assert result.plays[0].colour is Colour.RED


def test_second_joker_beats_the_first_as_trump() -> None:
    """Both Jokers named for trump: the second beats the first and the real 15 of trump."""
    state = started([["Y5"], ["JOKER"], ["JOKER"], ["B15"]], stack=["B0"])
    play(state, "Y5", "JOKER:blue", "JOKER:blue", "B15")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.trump) == ("claudia", WinReason.JOKER, Colour.BLUE)


def test_joker_named_for_trump_beats_a_real_trump() -> None:
    """A Joker is the highest card of its colour (16): named trump, it beats the trump 15."""
    state = started([["Y5"], ["B15"], ["JOKER"]], stack=["B0"])
    play(state, "Y5", "B15", "JOKER:blue")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason) == ("claudia", WinReason.JOKER)


def test_joker_named_off_colour_cannot_win() -> None:
    """A Joker named neither led nor trump loses, like any off-colour card."""
    state = started([["Y5"], ["JOKER"], ["Y9"], ["G15"]], stack=["B0"])
    play(state, "Y5", "JOKER:green", "Y9", "G15")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason) == ("claudia", WinReason.LED_COLOUR)


def test_joker_in_the_led_colour_loses_to_any_trump() -> None:
    """A Joker leading yellow sets yellow to follow but a trump 0 still beats it."""
    state = started([["JOKER", "G1"], ["B0", "G2"], ["Y15", "Y1"], ["Y3", "G4"]], stack=["B5"])
    play(state, "JOKER:yellow")
    assert codes(state.legal_actions("bernd")) == ["B0", "G2"]
    play(state, "B0")
    assert codes(state.legal_actions("claudia")) == ["Y1", "Y15"]
    play(state, "Y15", "Y3")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason) == ("bernd", WinReason.TRUMP)


def test_joker_named_for_the_led_colour_by_a_void_player_wins() -> None:
    """A player who cannot follow may name the led colour and take the trick with 16."""
    state = started([["Y5"], ["JOKER"], ["Y15"]], stack=["B0"])
    play(state, "Y5", "JOKER:yellow", "Y15")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.led) == ("bernd", WinReason.JOKER, Colour.YELLOW)


def test_trick_of_action_cards_only_goes_to_the_first_action_card() -> None:
    """No colour card and no Joker: the leader's action card wins, with the bonus cards."""
    state = started(
        [["+5", "B1"], ["NT", "B2"], ["-5", "B3"], ["+5", "B4"]], stack=["R0", "G1", "O1"]
    )
    play(state, "+5", "NT", "-5", "+5")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.led, result.bonus) == (
        "anja",
        WinReason.ACTION_ONLY,
        None,
        5,
    )
    assert state.bonus == [5, 0, 0, 0]
    assert state.trump is Colour.GREEN  # the No Trump still turned up a new trump


def test_after_an_action_card_lead_the_first_colour_card_sets_the_colour() -> None:
    """Behind a leading action card anything goes, until a colour card sets the led colour."""
    state = started([["NT", "B1"], ["G3", "Y2"], ["G9", "R2"], ["B4", "Y3"]], stack=["R0", "O4"])
    play(state, "NT")
    assert state.led_colour is None
    assert codes(state.legal_actions("bernd")) == ["G3", "Y2"]
    play(state, "G3")
    assert state.led_colour is Colour.GREEN
    assert codes(state.legal_actions("claudia")) == ["G9"]
    play(state, "G9", "B4")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason) == ("claudia", WinReason.LED_COLOUR)


def test_bonus_cards_go_to_the_trick_winner_and_into_the_round_score() -> None:
    """The "+5" in Claudia's trick adds 5 to her round score, the "-5" costs Anja 5."""
    state = deal([["R5"], ["+5"], ["R9"]], stack=["G0"], bids=[0, 0, 1])
    play(state, "R5", "+5", "R9")
    assert state.rounds[-1].scores[2].bonus == 5
    assert state.totals == [10, 10, 1 + 5 + 10]
    state = deal([["-5"], ["B1"], ["B2"]], stack=["G0"], bids=[0, 0, 0])
    play(state, "-5", "B1", "B2")
    assert state.totals == [10, 10, 1 - 5 - 5]


def test_round_without_trump_when_the_stack_has_no_colour_card() -> None:
    """No trump: the highest card of the led colour wins even against high other colours."""
    state = started([["Y5"], ["B15"], ["Y9"]], stack=["NT"])
    assert state.trump is None
    play(state, "Y5", "B15", "Y9")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.trump) == ("claudia", WinReason.LED_COLOUR, None)


def test_no_trump_with_an_empty_stack_leaves_the_round_without_trump() -> None:
    """After a No Trump with nothing left to turn up, the rest of the round has no trump."""
    state = started([["Y5", "R1"], ["NT", "B2"], ["R3", "B3"]], stack=["R0"])
    play(state, "Y5", "NT", "R3")
    assert state.last_trick is not None and state.last_trick.winner == "anja"
    assert state.trump is None
    play(state, "R1", "B2", "B3")
    assert state.last_trick is not None
    assert (state.last_trick.winner, state.last_trick.reason) == ("anja", WinReason.LED_COLOUR)


def test_change_trump_with_no_colour_card_left_switches_trump_off() -> None:
    """Change Trump that finds no colour card: the old trump is gone and none replaces it."""
    state = started([["Y5"], ["R9"], ["CT"]], stack=["R0", "NT"])
    play(state, "Y5", "R9", "CT")
    result = state.last_trick
    assert result is not None
    assert (result.winner, result.reason, result.trump) == ("anja", WinReason.LED_COLOUR, None)
    assert [c.code for c in state.turned_up] == ["R0", "NT"]


def test_current_trick_lists_plays_in_order_with_joker_colours() -> None:
    """The UI sees who played what, in order, with the colour named for a Joker."""
    state = started([["Y5", "B1"], ["JOKER", "B2"], ["Y9", "B3"]], stack=["R0"])
    play(state, "Y5", "JOKER:violet")
    trick = state.current_trick
    assert [(p.player, p.card.code, p.colour) for p in trick] == [
        ("anja", "Y5", None),
        ("bernd", "JOKER", Colour.VIOLET),
    ]
    assert state.view("claudia").trick == trick
    assert state.leader == "anja"
    assert trick[1].card is JOKER
    assert card(Colour.YELLOW, 5) == trick[0].card


def test_last_trick_survives_into_the_next_round() -> None:
    """The final trick of a round stays visible after the next round is dealt."""
    state = started([["Y5", "B1"], ["Y6", "B2"], ["Y9", "B3"]], stack=["R0"])
    play(state, "Y5", "Y6", "Y9", "B3", "B1", "B2")
    assert state.round == 10
    result = state.last_trick
    assert result is not None
    assert (result.round, result.number, result.winner) == (9, 2, "claudia")
    assert result.leader == "claudia"
    assert result.winning_play.card.code == "B3"
