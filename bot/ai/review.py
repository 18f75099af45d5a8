"""A game review's judgement of one decision, from the deciding player's own view only.

Two questions are asked of each decision a person made:

- **What is each choice worth?** ``*_values`` plays the rest out many times from the view
  (the hidden cards dealt anew each time, the same deals for every choice, so the choices
  are compared on equal luck) and returns each choice's expected points for the player,
  more being better: minus the final score in No Thanks!, the round's points in Rage.
- **What would the strongest computer have done?** ``*_expert`` asks the strongest level
  (No Thanks! expert, Rage hard) through its public entry point.

Both have the shape of a computer's choice, ``(view, level, rng, ask)``, so the table
core runs them in the thinking pool exactly as it runs a computer's move. Nothing here
sees the engine: only the view, and what the player remembers from earlier views.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

from bot.ai.levels import Level
from bot.ai.nothanks import card_cost, choose_nothanks_action, mask_points, table_from_view
from bot.ai.rage import choose_rage_action
from bot.ai.rage_memory import RageMemory
from bot.ai.rage_search import bidding_order, candidate_plays, determinise, hidden_pool
from bot.ai.rage_sim import NONE, SimRound, heuristic_bid
from bot.engines.nothanks import PASS, TAKE, PlayerView
from bot.engines.rage import Bid, Phase, Play, RageView

# The expert's search in a review: its own iteration cap decides (deterministic for the
# seed); the clock is only a safety cap, set well above the cap's time on a quiet core and
# below the thinking pool's timeout for a stuck worker.
EXPERT_SECONDS = 3.0


@dataclass(frozen=True, slots=True)
class Ask:
    """What a review asks about one decision besides the view."""

    made: Any  # the action the player chose
    samples: int  # playouts (No Thanks!) or guessed deals (Rage) per choice
    memory: Any = None  # what the player remembered then (Rage), built from their views
    expert_iterations: int | None = None  # None: the expert level's own cap


# -- No Thanks! --------------------------------------------------------------------------

# The playouts' policy: the normal level's run-aware threshold with some noise, the same
# for every seat (an average table, not a guess at the people who sat there).
BASE_LIMIT = 3
LOW_CHIPS = 6
LOW_CHIP_BONUS = 2
NOISE = 5


def _policy_takes(mask: int, mine: int, card: int, on: int, noise: float) -> bool:
    """Whether an average player with these cards and chips takes the card."""
    if mine == 0:
        return True
    cost = card_cost(mask, card)
    if cost <= 0:
        # A card that fits a run goes round once for chips, then is taken.
        return on >= 1 or mine <= 2 or noise < 0.5
    limit = BASE_LIMIT + LOW_CHIP_BONUS * max(0, LOW_CHIPS - mine) + int(noise * NOISE) - 2
    return cost - on <= limit


def _nothanks_playout(
    masks: list[int], chips: list[int], pile: list[int], card: int, on: int, active: int, rand: Any
) -> None:
    """Play to the end with ``_policy_takes`` for every seat (the lists change in place)."""
    n = len(masks)
    while True:
        mine = chips[active]
        if _policy_takes(masks[active], mine, card, on, rand()):
            masks[active] |= 1 << card
            chips[active] = mine + on
            on = 0
            if not pile:
                return
            card = pile.pop()
        else:
            chips[active] = mine - 1
            on += 1
            active = (active + 1) % n


def _hidden_chips(chips: list[int | None], hidden_total: int, rng: random.Random) -> list[int]:
    """Everyone's chips: the counted ones as they are, hidden ones shared out at random."""
    hidden = [seat for seat, count in enumerate(chips) if count is None]
    filled = [0 if count is None else count for count in chips]
    for _ in range(hidden_total):
        filled[rng.choice(hidden)] += 1
    return filled


def nothanks_values(view: PlayerView, level: str, rng: random.Random, ask: Ask) -> dict[str, float]:
    """Each legal choice ("take", "pass") and its expected points (minus the final score).

    Each playout deals the unseen cards into a pile (the rest are the removed ones) and
    shares out any chips the player could not count; both choices are played on it.
    """
    table = table_from_view(view)
    choices = [TAKE, PASS] if table.my_chips > 0 else [TAKE]
    totals = dict.fromkeys(choices, 0.0)
    me = table.me
    for _ in range(ask.samples):
        pile = rng.sample(table.unseen, table.pile_size)
        chips = _hidden_chips(table.chips, table.hidden_total, rng)
        seed = rng.getrandbits(32)
        for choice in choices:
            masks, held, rest = list(table.masks), list(chips), list(pile)
            rand = random.Random(seed).random  # the same noise for both choices
            card, on = table.card, table.chips_on
            if choice is TAKE:
                masks[me] |= 1 << card
                held[me] += on
                if rest:
                    _nothanks_playout(masks, held, rest, rest.pop(), 0, me, rand)
            else:
                held[me] -= 1
                _nothanks_playout(masks, held, rest, card, on + 1, (me + 1) % table.n, rand)
            totals[choice] -= mask_points(masks[me]) - held[me]
    return {choice.value: total / ask.samples for choice, total in totals.items()}


def nothanks_expert(view: PlayerView, level: str, rng: random.Random, ask: Ask) -> str:
    """The expert level's choice ("take" or "pass") for the view."""
    action = choose_nothanks_action(
        view, Level.EXPERT, rng, time_budget=EXPERT_SECONDS, iterations=ask.expert_iterations
    )
    return action.value


# -- Rage ----------------------------------------------------------------------------------


def _guess_bids(sim: SimRound, view: RageView, seat: int, own: int | None) -> None:
    """The bids the player cannot see, guessed from the guessed hands (as the hard level
    guesses them): later bidders bid the heuristic estimate, kept off the forbidden total
    under plus/minus one; a secret bid is the tricks won plus the hand's sure winners."""
    if own is not None:
        sim.bids[seat] = own
    order = bidding_order(view)
    if view.phase is Phase.BIDDING:
        for position, other in enumerate(order):
            if sim.bids[other] != NONE:
                continue
            forbidden = -1
            if view.options.plus_minus_one and position == len(order) - 1:
                forbidden = sim.size - sum(b for s, b in enumerate(sim.bids) if s != other)
            sim.bids[other] = heuristic_bid(sim.hands[other], sim.trump, sim.size, forbidden)
        return
    for other in order:
        if sim.bids[other] == NONE:
            guess = sim.won[other] + heuristic_bid(sim.hands[other], sim.trump, sim.size, -1)
            sim.bids[other] = min(sim.size, guess)


def rage_choices(view: RageView, made: Bid | Play | None = None) -> list[Bid | Play]:
    """The choices a review weighs: every legal bid, or the distinct plays (and the one made)."""
    if view.phase is Phase.BIDDING:
        return [action for action in view.legal_actions if isinstance(action, Bid)]
    plays: list[Bid | Play] = list(candidate_plays(view))
    if made is not None and made not in plays:
        plays.append(made)
    return plays


def rage_key(action: Bid | Play) -> str:
    """A choice as a plain key ("bid 2", "play R7", "play JOKER b"), as the move log writes it."""
    if isinstance(action, Bid):
        return f"bid {action.tricks}"
    colour = f" {action.colour.code}" if action.colour is not None else ""
    return f"play {action.card.code}{colour}"


def rage_values(view: RageView, level: str, rng: random.Random, ask: Ask) -> dict[str, float]:
    """Each choice (by `rage_key`) and the round points it is expected to bring the player.

    Each guess deals the unseen cards to the other hands (keeping the colours they have
    shown to be out of) and the stack; every choice is played out on the same guesses.
    """
    if view.viewer is None:
        raise ValueError("a review judges a player's own view")
    seat = view.players.index(view.viewer)
    memory: RageMemory | None = ask.memory
    choices = rage_choices(view, ask.made)
    unseen = hidden_pool(view, memory)
    totals = [0.0] * len(choices)
    for _ in range(ask.samples):
        base = determinise(view, memory, unseen, rng)
        if view.phase is Phase.BIDDING:
            for i, choice in enumerate(choices):
                assert isinstance(choice, Bid)
                sim = base.copy()
                _guess_bids(sim, view, seat, choice.tricks)
                sim.turn = sim.leader
                sim.play_out()
                totals[i] += sim.score(seat)
            continue
        _guess_bids(base, view, seat, None)
        for i, choice in enumerate(choices):
            assert isinstance(choice, Play)
            sim = base.copy()
            sim.play(int(choice.card), NONE if choice.colour is None else int(choice.colour))
            sim.play_out()
            totals[i] += sim.score(seat)
    return {rage_key(c): total / ask.samples for c, total in zip(choices, totals, strict=True)}


def rage_expert(view: RageView, level: str, rng: random.Random, ask: Ask) -> str:
    """The hard level's choice for the view (its key), with the player's memory then."""
    # A copy: the level records the view in the memory it is given.
    memory = copy.deepcopy(ask.memory)
    # No clock: a loaded host must not make the review depend on who asked, or when.
    return rage_key(choose_rage_action(view, Level.HARD, rng, memory, time_budget=None))
