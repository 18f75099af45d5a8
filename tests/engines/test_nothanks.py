"""Tests of the No Thanks! rules engine: scoring, setup, turns, views, serialisation."""

from __future__ import annotations

import json

import pytest

from bot.engines.errors import GameOver, InvalidSetup, NotYourTurn, UnknownPlayer
from bot.engines.nothanks import (
    PASS,
    PILE_SIZE,
    TAKE,
    Action,
    MustTake,
    NoThanksGame,
    UnknownAction,
    card_points,
    rank_standings,
    runs,
    score,
    starting_chips,
)

PLAYERS = ["ana", "ben", "cid"]


def actor(game: NoThanksGame) -> str:
    """The one player who must act now; the game must not be over."""
    (player,) = game.acting_players()
    return player


@pytest.mark.parametrize(
    ("cards", "chips", "expected"),
    [
        ([], 0, 0),
        ([], 11, -11),
        ([35], 0, 35),
        ([3], 0, 3),
        ([13, 15, 16], 0, 28),  # seed example
        ([13, 14, 15, 16], 0, 13),  # seed example: adding 14 joins the runs
        ([27, 28, 29, 30], 0, 27),  # seed example
        ([3, 7, 12, 15, 25], 8, 54),  # seed example: 62 points, 8 chips
        (list(range(3, 36)), 0, 3),  # every card is one run
        (list(range(3, 36)), 55, -52),
        ([20, 22], 0, 42),  # split by one missing card
        ([20, 21, 23, 24], 0, 43),  # two runs split by one missing card
        ([10, 11, 12, 13, 14, 15, 16, 17, 18, 19], 3, 7),  # long run
        ([5], 20, -15),  # negative total
        ([35, 33, 34], 2, 31),  # unsorted input
    ],
)
def test_score_table(cards: list[int], chips: int, expected: int) -> None:
    """Runs count their lowest card, lone cards their value, chips subtract."""
    assert score(cards, chips) == expected


def test_runs_grouping() -> None:
    """Cards are grouped into ascending runs of consecutive numbers."""
    assert runs([16, 13, 15, 30, 3]) == [[3], [13], [15, 16], [30]]
    assert runs([]) == []
    assert card_points([13, 15, 16]) == 28


@pytest.mark.parametrize(("players", "chips"), [(3, 11), (4, 11), (5, 11), (6, 9), (7, 7)])
def test_starting_chips(players: int, chips: int) -> None:
    """Chip allowance by player count follows the rules."""
    assert starting_chips(players) == chips
    game = NoThanksGame.new([f"p{i}" for i in range(players)], seed=1)
    assert game.chips == [chips] * players


@pytest.mark.parametrize("count", [0, 1, 2, 8, 10])
def test_player_count_out_of_range(count: int) -> None:
    """Fewer than 3 or more than 7 players cannot play."""
    with pytest.raises(InvalidSetup, match="3 to 7"):
        NoThanksGame.new([f"p{i}" for i in range(count)], seed=1)


def test_duplicate_player_rejected() -> None:
    """One person cannot hold two seats."""
    with pytest.raises(InvalidSetup):
        NoThanksGame.new(["a", "a", "b"], seed=1)


def test_setup_removes_nine_cards() -> None:
    """24 cards are in play, 9 removed, all 33 distinct."""
    game = NoThanksGame.new(PLAYERS, seed=42)
    assert game.current_card is not None
    in_play = [*game.pile, game.current_card]
    assert len(in_play) == PILE_SIZE == 24
    assert len(game.removed) == 9
    assert sorted([*in_play, *game.removed]) == list(range(3, 36))
    assert game.cards_left == 23


def test_seed_determines_setup() -> None:
    """The same seed deals the same game; different seeds usually differ."""
    a = NoThanksGame.new(PLAYERS, seed=7)
    b = NoThanksGame.new(PLAYERS, seed=7)
    c = NoThanksGame.new(PLAYERS, seed=8)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != c.to_dict()


def test_starting_player_is_drawn() -> None:
    """Over many seeds every seat gets to start."""
    starters = {NoThanksGame.new(PLAYERS, seed=s).active for s in range(100)}
    assert starters == {0, 1, 2}


def test_pass_puts_chip_and_moves_turn() -> None:
    """No thanks costs a chip, puts it on the card and passes the turn clockwise."""
    game = NoThanksGame.new(PLAYERS, seed=3)
    first = game.active
    card = game.current_card
    move = game.apply(PLAYERS[first], PASS)
    assert move.action is PASS and move.card == card and move.chips_on_card == 0
    assert game.chips[first] == 10
    assert game.chips_on_card == 1
    assert game.current_card == card
    assert game.active == (first + 1) % 3


def test_take_collects_chips_and_acts_again() -> None:
    """The taker gets the card and its chips, the next card is turned, same player acts."""
    game = NoThanksGame.new(PLAYERS, seed=3)
    card = game.current_card
    game.apply(actor(game), PASS)
    game.apply(actor(game), PASS)
    taker = game.active
    next_card = game.pile[-1]
    move = game.apply(PLAYERS[taker], TAKE)
    assert move.chips_on_card == 2
    assert game.cards[taker] == [card]
    assert game.chips[taker] == 13
    assert game.chips_on_card == 0
    assert game.current_card == next_card
    assert game.active == taker


def test_player_without_chips_must_take() -> None:
    """Passing with no chips raises MustTake; TAKE is the only legal action."""
    game = NoThanksGame.new(PLAYERS, seed=5)
    while game.chips[game.active] > 0:
        game.apply(actor(game), PASS)
    assert game.chips_on_card == 33
    assert game.legal_actions() == [TAKE]
    before = game.to_dict()
    with pytest.raises(MustTake, match="no chips"):
        game.apply(actor(game), PASS)
    assert game.to_dict() == before


def test_illegal_actions_leave_state_unchanged() -> None:
    """Out-of-turn, unknown players and unknown actions raise and change nothing."""
    game = NoThanksGame.new(PLAYERS, seed=9)
    before = game.to_dict()
    other = PLAYERS[(game.active + 1) % 3]
    with pytest.raises(NotYourTurn, match="turn"):
        game.apply(other, TAKE)
    with pytest.raises(UnknownPlayer):
        game.apply("zed", TAKE)
    with pytest.raises(UnknownAction):
        game.apply(actor(game), "steal")
    assert game.to_dict() == before
    assert game.legal_actions(other) == []


def test_actions_after_end_raise_game_over() -> None:
    """Once the last card is taken, every action is refused."""
    game = NoThanksGame.new(PLAYERS, seed=11)
    while not game.is_over:
        game.apply(actor(game), TAKE)
    assert game.move_number == 24
    before = game.to_dict()
    with pytest.raises(GameOver):
        game.apply("ana", TAKE)
    assert game.to_dict() == before
    assert game.legal_actions() == []


def test_string_actions_accepted() -> None:
    """Actions may be given as their JSON strings."""
    game = NoThanksGame.new(PLAYERS, seed=1)
    assert game.apply(actor(game), "pass").action is Action.PASS


def test_view_hides_private_information() -> None:
    """A player sees only their own chips and never the pile or the removed cards."""
    game = NoThanksGame.new(PLAYERS, seed=2)
    view = game.view("ana")
    assert view.chips == {"ana": 11, "ben": None, "cid": None}
    assert view.removed is None
    text = json.dumps(view.to_dict())
    assert "pile" not in text
    spectator = game.view(None)
    assert set(spectator.chips.values()) == {None}


def test_view_with_open_chips() -> None:
    """With open chips every player's chips are visible."""
    game = NoThanksGame.new(PLAYERS, seed=2, open_chips=True)
    assert game.view("ben").chips == {"ana": 11, "ben": 11, "cid": 11}


def test_view_reveals_removed_cards_after_end() -> None:
    """After the end everything is revealed, including the nine removed cards."""
    game = NoThanksGame.new(PLAYERS, seed=2)
    while not game.is_over:
        game.apply(actor(game), TAKE)
    view = game.view("ana")
    assert view.removed == game.removed and len(view.removed) == 9
    assert None not in view.chips.values()


def test_view_of_unknown_player() -> None:
    """Asking for an unseated player's view is refused."""
    with pytest.raises(UnknownPlayer):
        NoThanksGame.new(PLAYERS, seed=2).view("zed")


def test_standings_share_ties() -> None:
    """Tied totals share a rank; the next rank skips."""
    table = rank_standings(
        [("a", 0, [10], 0), ("b", 1, [20], 10), ("c", 2, [30], 0), ("d", 3, [5], 0)]
    )
    assert [(s.player, s.total, s.rank) for s in table] == [
        ("d", 5, 1),
        ("a", 10, 2),
        ("b", 10, 2),
        ("c", 30, 4),
    ]
    all_tied = rank_standings([("a", 0, [], 0), ("b", 1, [], 0), ("c", 2, [], 0)])
    assert [s.rank for s in all_tied] == [1, 1, 1]
    assert all(s.is_winner for s in all_tied)


def test_standings_fields() -> None:
    """Standings carry runs, card points, chips and total for each player."""
    game = NoThanksGame.new(PLAYERS, seed=4)
    while not game.is_over:
        game.apply(actor(game), TAKE)
    table = game.standings()
    assert sorted(s.player for s in table) == sorted(PLAYERS)
    for row in table:
        seat = row.seat
        assert row.runs == runs(game.cards[seat])
        assert row.card_points == card_points(game.cards[seat])
        assert row.total == row.card_points - row.chips
        assert json.loads(json.dumps(row.to_dict()))["total"] == row.total
    assert game.winners() == [s.player for s in table if s.rank == 1]


def test_replay_reproduces_game() -> None:
    """The seed and the action list rebuild the exact same state."""
    game = NoThanksGame.new(PLAYERS, seed=12)
    actions = []
    for i in range(40):
        action = game.legal_actions()[i % len(game.legal_actions())]
        game.apply(actor(game), action)
        actions.append(action)
    again = NoThanksGame.replay(PLAYERS, 12, actions)
    assert again.to_dict() == game.to_dict()


def test_from_dict_rejects_foreign_state() -> None:
    """A state of another game or version is refused."""
    with pytest.raises(ValueError, match="No Thanks"):
        NoThanksGame.from_dict({"game": "rage", "version": 1})
