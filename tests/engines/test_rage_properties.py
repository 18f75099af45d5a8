"""Hypothesis property tests of the Rage invariants over many random games."""

from __future__ import annotations

import json
import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.engines.rage import (
    COLOURS,
    JOKER,
    Action,
    Card,
    Colour,
    MustFollowSuit,
    Phase,
    Play,
    PlayerId,
    RageOptions,
    RageState,
    TrickPlay,
)

from .test_rage_helpers import ALLOWED_OPTIONS, NAMES, assert_rejected, random_steps

GAME_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def game_setups(draw: st.DrawFn) -> tuple[RageState, random.Random]:
    """A fresh game (3..8 players, any allowed variants, any seed) and a move chooser."""
    n = draw(st.integers(3, 8))
    options = draw(st.sampled_from(ALLOWED_OPTIONS))
    seed = draw(st.integers(0, 2**63) | st.text(max_size=8))
    state = RageState.new(list(NAMES[:n]), seed=seed, options=options)
    return state, random.Random(draw(st.integers(0, 2**32)))


def led_colour(trick: tuple[TrickPlay, ...]) -> Colour | None:
    """The colour to follow, worked out from scratch: first colour card or Joker."""
    for play in trick:
        if play.card == JOKER:
            return play.colour
        if play.card.colour is not None:
            return play.card.colour
    return None


def follow_rule_allows(hand: tuple[Card, ...], trick: tuple[TrickPlay, ...], card: Card) -> bool:
    """Independent statement of the follow rule."""
    led = led_colour(trick)
    if led is None or card.colour is led:
        return True
    return all(held.colour is not led for held in hand)


@GAME_SETTINGS
@given(game_setups())
def test_random_games_keep_the_invariants(setup: tuple[RageState, random.Random]) -> None:
    """Cards dealt are played once, one winner per trick, tricks add up, follow rule holds."""
    state, rng = setup
    dealt: Counter[Card] = Counter()
    played: Counter[Card] = Counter()
    tricks_seen = 0
    round_seen = 0
    last_record = None
    while not state.is_over:
        player = rng.choice(state.acting_players())
        legal = state.legal_actions(player)
        action = rng.choice(legal)
        if state.round != round_seen:
            round_seen = state.round
            dealt = Counter(c for hand in state.hands for c in hand)
            played = Counter()
            tricks_seen = 0
        if state.phase is Phase.PLAYING:
            hand = state.hand(player)
            trick = state.current_trick
            assert isinstance(action, Play)
            assert follow_rule_allows(hand, trick, action.card)
            allowed = {c for c in hand if follow_rule_allows(hand, trick, c)}
            assert {a.card for a in legal if isinstance(a, Play)} == allowed
            if JOKER in allowed:
                jokers = {a.colour for a in legal if isinstance(a, Play) and a.card == JOKER}
                assert jokers == set(COLOURS)
            forbidden = sorted(set(hand) - allowed)
            if forbidden and rng.random() < 0.1:
                card = forbidden[0]
                bad = Play(card, Colour.RED if card == JOKER else None)
                assert_rejected(state, player, bad, MustFollowSuit)
        state.apply(player, action)
        record = state.last_trick_record
        if record is not None and record is not last_record:
            last_record = record
            result = state.last_trick
            assert result is not None
            assert len(result.plays) == len(state.players)
            assert len({p.player for p in result.plays}) == len(state.players)
            assert result.winner == result.plays[result.winning_index].player
            played.update(p.card for p in result.plays)
            tricks_seen += 1
            if result.number == 11 - result.round:  # the round's last trick
                scored = state.rounds[-1]
                assert scored.round == result.round
                assert played == dealt
                assert sum(scored.tricks) == scored.cards == tricks_seen
    assert state.phase is Phase.FINISHED
    assert len(state.rounds) == 10
    assert state.totals == [
        sum(r.scores[s].points for r in state.rounds) for s in range(len(state.players))
    ]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_setups())
def test_json_round_trip_at_every_step_and_replay(setup: tuple[RageState, random.Random]) -> None:
    """Every state survives JSON unchanged, and seed plus actions replay to the same game."""
    state, rng = setup
    start = RageState.from_dict(state.to_dict())
    history: list[tuple[PlayerId, Action]] = []
    for player, action, _ in random_steps(state, rng):
        history.append((player, action))
        data = state.to_dict()
        restored = RageState.from_dict(json.loads(json.dumps(data)))
        assert restored == state
        assert restored.to_dict() == data
    replay = RageState.new(list(state.players), seed=state.seed, options=state.options)
    assert replay == start
    for player, action in history:
        replay.apply(player, action)
    assert replay.to_dict() == state.to_dict()
    assert replay.move_number == len(history)


def may_see_bid(state: RageState, viewer: PlayerId | None, seat: int) -> bool:
    """Independent statement of bid visibility per RULES.md, for the current round."""
    if state.players[seat] == viewer or state.phase is Phase.FINISHED:
        return True
    if state.options.secret_bids:
        return False  # until the round is scored, when the bids move to the score sheet
    if state.options.hidden_bids:
        return state.phase is Phase.PLAYING  # revealed together once everyone has bid
    return True


def scramble_hidden(state: RageState, viewer: PlayerId | None, rng: random.Random) -> RageState:
    """A copy where everything `viewer` (None: a spectator) may not see is redealt or rebid."""
    other = state.clone()
    seats = [s for s, p in enumerate(state.players) if p != viewer]
    pool = [c for s in seats for c in state.hands[s]] + list(state.stack)
    rng.shuffle(pool)
    for s in seats:
        size = len(state.hands[s])
        other.hands[s] = sorted(pool[:size])
        pool = pool[size:]
    other.stack = pool
    for s in seats:
        if state.bids[s] is not None and not may_see_bid(state, viewer, s):
            other.bids[s] = rng.randint(0, other.cards_per_hand)
    return other


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_setups())
def test_views_never_leak_hidden_information(setup: tuple[RageState, random.Random]) -> None:
    """A view does not change when other hands, the stack order or hidden bids change."""
    state, rng = setup
    for step, _ in enumerate(random_steps(state, rng)):
        if step % 9:
            continue
        viewer = rng.choice([*state.players, None])
        view = state.view(viewer)
        assert scramble_hidden(state, viewer, rng).view(viewer) == view
        assert json.loads(json.dumps(view.to_dict()))["viewer"] == viewer


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 8), st.integers(0, 2**32))
def test_plus_minus_one_bids_never_add_up(n: int, seed: int) -> None:
    """Under plus/minus one the bids of every round differ from the number of tricks."""
    state = RageState.new(list(NAMES[:n]), seed=seed, options=RageOptions(plus_minus_one=True))
    rng = random.Random(seed)
    for _ in random_steps(state, rng):
        pass
    for record in state.rounds:
        assert sum(record.bids) != record.cards
