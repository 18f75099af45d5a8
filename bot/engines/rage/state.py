"""The Rage game state machine: bidding, trick play and round scoring, driven by apply()."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from bot.engines.errors import GameOver, InvalidSetup, NotYourTurn, UnknownPlayer, plain_id

from .actions import BIDS, JOKER_PLAYS, PLAYS, Action, Bid, Play
from .cards import (
    CHANGE_TRUMP,
    COLOUR_OF,
    JOKER,
    NO_TRUMP,
    Card,
    Colour,
    to_card,
)
from .codec import FORMAT, VERSION, card_codes, colour_code, decode_state
from .dealing import (
    ROUNDS,
    cards_in_round,
    check_card_counts,
    check_seed,
    deal_hands,
    seed_stream,
    shuffled_deck,
)
from .errors import (
    AlreadyBid,
    CardNotInHand,
    IllegalBid,
    IllegalMove,
    InvalidAction,
    JokerColourError,
    MustFollowSuit,
    WrongPhase,
)
from .options import RageOptions
from .phase import Phase
from .players import PlayerId, validate_players
from .scoring import (
    Outcome,
    RoundRecord,
    ScoreSheet,
    Standing,
    open_row,
    rank_players,
    score_player,
    scored_row,
)
from .trick import TrickPlay, TrickRecord, TrickResult, resolve_trick, trick_bonus
from .view import RageView

_FIRST_ACTION = int(JOKER)  # codes below this are colour cards


# Module globals are cheaper to reach than enum class attributes on the hot path.
_BIDDING = Phase.BIDDING
_PLAYING = Phase.PLAYING
_FINISHED = Phase.FINISHED


@dataclass(slots=True)
class RageState:
    """A game of Rage in progress; mutate it only through apply().

    Per-player lists (hands, bids, tricks_won, bonus, totals) are indexed by seat, the
    position in `players`. Use view(player) for what one player may see.
    """

    players: tuple[PlayerId, ...]
    options: RageOptions
    seed: int | str
    deal_seeds: tuple[int, ...]
    round: int
    dealer_seat: int
    phase: Phase
    hands: list[list[Card]]
    stack: list[Card]  # undealt cards, top first
    turned_up: list[Card]  # cards turned up from the stack this round, in order
    trump: Colour | None  # trump in force right now (None: no trump, or No Trump played)
    no_trump_this_trick: bool  # a No Trump was played this trick: turn up a card after it
    bids: list[int | None]
    tricks_won: list[int]
    bonus: list[int]
    leader_seat: int
    trick_cards: list[Card]
    trick_named: list[Colour | None]  # the colour named for each Joker, None for other cards
    trick_number: int
    last_trick_record: TrickRecord | None
    totals: list[int]
    rounds: list[RoundRecord]
    move_number: int
    _seats: dict[PlayerId, int] = field(init=False, repr=False, compare=False)
    _n: int = field(init=False, repr=False, compare=False)
    _turn: int = field(init=False, repr=False, compare=False)
    _led: Colour | None = field(init=False, repr=False, compare=False)
    _simultaneous: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Derive the caches that are not part of the serialised state."""
        self._seats = {player: seat for seat, player in enumerate(self.players)}
        self._n = len(self.players)
        self._simultaneous = self.options.simultaneous_bids
        self._led = None
        for card, named in zip(self.trick_cards, self.trick_named, strict=True):
            colour = named if card == JOKER else COLOUR_OF[card]
            if colour is not None:
                self._led = colour
                break
        if self.phase is _PLAYING:
            self._turn = (self.leader_seat + len(self.trick_cards)) % self._n
        elif self.phase is _BIDDING and not self._simultaneous:
            self._turn = (self.leader_seat + self._n - self.bids.count(None)) % self._n
        else:
            self._turn = -1

    # ----------------------------------------------------------------- creation

    @classmethod
    def new(
        cls,
        players: Sequence[PlayerId],
        seed: int | str | None = None,
        options: RageOptions | None = None,
    ) -> RageState:
        """A new game: random first dealer and deals from the seed (a fresh one if None)."""
        seats = validate_players(players)
        seed = secrets.randbits(63) if seed is None else check_seed(seed)
        options = RageOptions() if options is None else options
        if not isinstance(options, RageOptions):
            raise InvalidSetup(f"options must be RageOptions, not {options!r}")
        first_dealer, deal_seeds = seed_stream(seed, len(seats))
        state = cls._empty(seats, options, seed, deal_seeds, 1, first_dealer)
        state._deal()
        return state

    @classmethod
    def from_deal(
        cls,
        players: Sequence[PlayerId],
        hands: Mapping[PlayerId, Iterable[Card | str]],
        stack: Iterable[Card | str] = (),
        *,
        dealer: PlayerId | None = None,
        round: int | None = None,
        bids: Mapping[PlayerId, int] | None = None,
        options: RageOptions | None = None,
        seed: int | str = 0,
    ) -> RageState:
        """A round dealt by hand (for tests, puzzles and replays of real tables).

        `stack` is listed top first; the trump is turned from it as in a real deal. The
        dealer defaults to the last seat, so the first seat bids and leads first. The round
        defaults to the one whose hand size matches. With `bids`, the round starts in the
        playing phase. Later rounds are dealt from `seed`.
        """
        seats = validate_players(players)
        options = RageOptions() if options is None else options
        seed = check_seed(seed)
        if set(hands) != set(seats) or len(hands) != len(seats):
            raise InvalidSetup("hands must give exactly one hand for every player")
        try:
            dealt = [sorted(to_card(c) for c in hands[player]) for player in seats]
            pile = [to_card(c) for c in stack]
        except ValueError as exc:
            raise InvalidSetup(str(exc)) from None
        size = len(dealt[0])
        if any(len(hand) != size for hand in dealt) or not 1 <= size <= ROUNDS:
            raise InvalidSetup("every hand must hold the same number of cards, 1 to 10")
        round_number = cards_in_round(size) if round is None else round
        if round_number != cards_in_round(size):
            raise InvalidSetup(
                f"round {round_number} deals {cards_in_round(round_number)} cards, not {size}"
            )
        check_card_counts([*(c for hand in dealt for c in hand), *pile])
        dealer_seat = len(seats) - 1 if dealer is None else _seat_or_setup_error(seats, dealer)
        _, deal_seeds = seed_stream(seed, len(seats))
        state = cls._empty(seats, options, seed, deal_seeds, round_number, dealer_seat)
        state.stack = pile
        state._start_round(dealt)
        if bids is not None:
            state._apply_setup_bids(bids)
        return state

    @classmethod
    def _empty(
        cls,
        players: tuple[PlayerId, ...],
        options: RageOptions,
        seed: int | str,
        deal_seeds: tuple[int, ...],
        round_number: int,
        dealer_seat: int,
    ) -> RageState:
        """A state with no cards dealt yet; _deal or _start_round fills it."""
        n = len(players)
        return cls(
            players=players,
            options=options,
            seed=seed,
            deal_seeds=deal_seeds,
            round=round_number,
            dealer_seat=dealer_seat,
            phase=_BIDDING,
            hands=[[] for _ in range(n)],
            stack=[],
            turned_up=[],
            trump=None,
            no_trump_this_trick=False,
            bids=[None] * n,
            tricks_won=[0] * n,
            bonus=[0] * n,
            leader_seat=(dealer_seat + 1) % n,
            trick_cards=[],
            trick_named=[],
            trick_number=1,
            last_trick_record=None,
            totals=[0] * n,
            rounds=[],
            move_number=0,
        )

    def _apply_setup_bids(self, bids: Mapping[PlayerId, int]) -> None:
        """Enter the given bids in bidding order, validated like real bids."""
        if set(bids) != set(self.players) or len(bids) != self._n:
            raise InvalidSetup("bids must give exactly one bid for every player")
        try:
            for i in range(self._n):
                player = self.players[(self.leader_seat + i) % self._n]
                self.apply(player, Bid(bids[player]))
        except IllegalMove as exc:
            raise InvalidSetup(str(exc)) from None
        self.move_number = 0

    def clone(self) -> RageState:
        """An independent copy."""
        return RageState(
            players=self.players,
            options=self.options,
            seed=self.seed,
            deal_seeds=self.deal_seeds,
            round=self.round,
            dealer_seat=self.dealer_seat,
            phase=self.phase,
            hands=[list(hand) for hand in self.hands],
            stack=list(self.stack),
            turned_up=list(self.turned_up),
            trump=self.trump,
            no_trump_this_trick=self.no_trump_this_trick,
            bids=list(self.bids),
            tricks_won=list(self.tricks_won),
            bonus=list(self.bonus),
            leader_seat=self.leader_seat,
            trick_cards=list(self.trick_cards),
            trick_named=list(self.trick_named),
            trick_number=self.trick_number,
            last_trick_record=self.last_trick_record,
            totals=list(self.totals),
            rounds=list(self.rounds),
            move_number=self.move_number,
        )

    # ------------------------------------------------------------ serialisation

    def to_dict(self) -> dict[str, Any]:
        """The full state (hidden cards included) as plain JSON types."""
        record = self.last_trick_record
        return {
            "format": FORMAT,
            "version": VERSION,
            "players": list(self.players),
            "options": self.options.to_dict(),
            "seed": self.seed,
            "deal_seeds": list(self.deal_seeds),
            "round": self.round,
            "dealer": self.dealer_seat,
            "phase": self.phase.value,
            "hands": [card_codes(hand) for hand in self.hands],
            "stack": card_codes(self.stack),
            "turned_up": card_codes(self.turned_up),
            "trump": colour_code(self.trump),
            "no_trump_this_trick": self.no_trump_this_trick,
            "bids": list(self.bids),
            "tricks_won": list(self.tricks_won),
            "bonus": list(self.bonus),
            "leader": self.leader_seat,
            "trick": [
                {"card": card.code, "colour": colour_code(named)}
                for card, named in zip(self.trick_cards, self.trick_named, strict=True)
            ],
            "trick_number": self.trick_number,
            "last_trick": None if record is None else record.to_dict(),
            "totals": list(self.totals),
            "rounds": [rec.to_dict() for rec in self.rounds],
            "move_number": self.move_number,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RageState:
        """Rebuild a state from to_dict output; InvalidSetup if it is malformed."""
        return cls(**decode_state(data))

    # ------------------------------------------------------------ public queries

    @property
    def is_over(self) -> bool:
        """True once round 10 has been scored."""
        return self.phase is _FINISHED

    @property
    def cards_per_hand(self) -> int:
        """Cards dealt to each player this round (the number of tricks in the round)."""
        return cards_in_round(self.round)

    @property
    def dealer(self) -> PlayerId:
        """The dealer of the current round."""
        return self.players[self.dealer_seat]

    @property
    def leader(self) -> PlayerId:
        """Who leads (or led) the current trick."""
        return self.players[self.leader_seat]

    @property
    def led_colour(self) -> Colour | None:
        """The colour to follow in the current trick, once a colour card or Joker sets it."""
        return self._led

    @property
    def current_trick(self) -> tuple[TrickPlay, ...]:
        """The cards of the trick in play, in play order, with each Joker's colour."""
        n = self._n
        return tuple(
            TrickPlay(self.players[(self.leader_seat + i) % n], card, self.trick_named[i])
            for i, card in enumerate(self.trick_cards)
        )

    @property
    def last_trick(self) -> TrickResult | None:
        """The most recently completed trick (kept across the deal of the next round)."""
        record = self.last_trick_record
        return None if record is None else record.to_result(self.players)

    @property
    def current_player(self) -> PlayerId | None:
        """The one player to act, or None when nobody or several players may act."""
        actors = self.acting_players()
        return actors[0] if len(actors) == 1 else None

    def seat_of(self, player: PlayerId) -> int:
        """The seat index of a player; UnknownPlayer if they have no seat."""
        return self._seat_of(player)

    def acting_players(self) -> tuple[PlayerId, ...]:
        """Players who may act now (several during hidden or secret bidding)."""
        if self.phase is _FINISHED:
            return ()
        if self.phase is _BIDDING and self._simultaneous:
            return tuple(p for p, bid in zip(self.players, self.bids, strict=True) if bid is None)
        return (self.players[self._turn],)

    def hand(self, player: PlayerId) -> tuple[Card, ...]:
        """A player's hand, sorted (omniscient: the caller decides who may see it)."""
        return tuple(self.hands[self._seat_of(player)])

    def bid_visible(self, viewer: PlayerId | None, player: PlayerId) -> bool:
        """Whether `viewer` (None: a spectator) may see `player`'s bid this round."""
        if self.phase is _FINISHED or (viewer == player and viewer is not None):
            return True
        if self.options.secret_bids:
            return False
        if self.options.hidden_bids:
            return self.phase is not _BIDDING
        return True

    def visible_bids(self, viewer: PlayerId | None = None) -> tuple[int | None, ...]:
        """This round's bids in seat order as `viewer` sees them (None: unknown or not made)."""
        if viewer is not None:
            self._seat_of(viewer)
        return tuple(
            bid if self.bid_visible(viewer, player) else None
            for player, bid in zip(self.players, self.bids, strict=True)
        )

    def score_sheet(self, viewer: PlayerId | None = None) -> ScoreSheet:
        """The score sheet: scored rounds plus the round in play, bids as `viewer` sees them."""
        rows = [scored_row(self.players, record) for record in self.rounds]
        if self.phase is not _FINISHED:
            rows.append(
                open_row(
                    self.players,
                    self.round,
                    self.cards_per_hand,
                    self.dealer_seat,
                    self.visible_bids(viewer),
                    self.tricks_won,
                    self.bonus,
                    self.totals,
                )
            )
        return ScoreSheet(self.players, tuple(rows), tuple(self.totals))

    def standings(self) -> tuple[Standing, ...]:
        """Players ranked by running total; tied players share a rank."""
        return rank_players(self.players, self.totals)

    def outcome(self) -> Outcome | None:
        """Winners and standings once the game is over, else None."""
        if self.phase is not _FINISHED:
            return None
        standings = self.standings()
        winners = tuple(s.player for s in standings if s.rank == 1)
        return Outcome(winners, standings)

    def view(self, player: PlayerId | None = None) -> RageView:
        """What `player` may see (None: a spectator); other hands and the stack are hidden."""
        if player is not None:
            self.seat_of(player)  # UnknownPlayer for strangers
        return RageView(
            viewer=player,
            players=self.players,
            options=self.options,
            phase=self.phase,
            round=self.round,
            cards_per_hand=self.cards_per_hand,
            dealer=self.dealer,
            move_number=self.move_number,
            players_to_act=self.acting_players(),
            hand=() if player is None else self.hand(player),
            legal_actions=() if player is None else tuple(self.legal_actions(player)),
            hand_sizes=tuple(len(hand) for hand in self.hands),
            trump=self.trump,
            no_trump_this_trick=self.no_trump_this_trick,
            turned_up=tuple(self.turned_up),
            stack_size=len(self.stack),
            bids=self.visible_bids(player),
            has_bid=tuple(bid is not None for bid in self.bids),
            tricks_won=tuple(self.tricks_won),
            bonus=tuple(self.bonus),
            leader=self.leader,
            led_colour=self.led_colour,
            trick_number=self.trick_number,
            trick=self.current_trick,
            last_trick=self.last_trick,
            totals=tuple(self.totals),
            score_sheet=self.score_sheet(player),
            outcome=self.outcome(),
        )

    # ------------------------------------------------------------ legal actions

    def legal_actions(self, player: PlayerId | None = None) -> list[Action]:
        """The actions `player` may take now ([] if none); None means the one player to act.

        Raises ValueError for None while several players may bid at once.
        """
        if player is None:
            actors = self.acting_players()
            if not actors:
                return []
            if len(actors) > 1:
                raise ValueError("several players may bid now; name the player")
            seat = self._seats[actors[0]]
        else:
            seat = self._seat_of(player)
        phase = self.phase
        if phase is _PLAYING:
            return self._legal_plays(seat) if seat == self._turn else []
        if phase is _BIDDING:
            if self._simultaneous:
                return self._legal_bids(seat) if self.bids[seat] is None else []
            return self._legal_bids(seat) if seat == self._turn else []
        return []

    def _legal_plays(self, seat: int) -> list[Action]:
        """Plays allowed by the follow rule; a Joker once per colour it may name."""
        hand = self.hands[seat]
        led = self._led
        if led is not None:
            follow: list[Action] = [PLAYS[c] for c in hand if COLOUR_OF[c] is led]
            if follow:
                return follow
        result: list[Action] = []
        previous = -1
        # Hands are kept sorted, so equal action cards sit next to each other.
        for c in hand:
            if c == previous:
                continue
            previous = c
            if c == JOKER:
                result.extend(JOKER_PLAYS)
            else:
                result.append(PLAYS[c])
        return result

    def _legal_bids(self, seat: int) -> list[Action]:
        """Bids 0..hand size, minus the one plus/minus one forbids the last bidder."""
        size = cards_in_round(self.round)
        forbidden = self._forbidden_bid()
        return [BIDS[b] for b in range(size + 1) if b != forbidden]

    def _forbidden_bid(self) -> int:
        """The bid that would make the bids add up to the tricks (plus/minus one), or -1."""
        if not self.options.plus_minus_one or self.bids.count(None) != 1:
            return -1
        return cards_in_round(self.round) - sum(b for b in self.bids if b is not None)

    # ------------------------------------------------------------------- apply

    def apply(self, player: PlayerId, action: Action) -> Action:
        """Validate and apply one action and return it as applied; IllegalMove changes nothing.

        The returned Play carries its Card (even if the card was given by code) and, for a
        Joker, the colour it names.
        """
        seat = self._seat_of(player)
        phase = self.phase
        applied: Action
        if phase is _PLAYING:
            if type(action) is not Play:
                self._reject_kind(player, action, Play)
            if seat != self._turn:
                raise NotYourTurn(
                    f"it is {self.players[self._turn]!r}'s turn to play, not {player!r}'s",
                    player=player,
                    players=[self.players[self._turn]],
                )
            applied = self._play(seat, action)
        elif phase is _BIDDING:
            if type(action) is not Bid:
                self._reject_kind(player, action, Bid)
            self._bid(seat, action.tricks)
            applied = action
        else:
            raise GameOver("the game is over: all ten rounds have been scored", player=player)
        self.move_number += 1
        return applied

    def _seat_of(self, player: PlayerId) -> int:
        """Seat of a seated player, else UnknownPlayer."""
        # True and False would otherwise find the players whose ids are 1 and 0.
        if player is True or player is False:
            raise UnknownPlayer(f"{player!r} has no seat at this table", player=plain_id(player))
        try:
            return self._seats[player]
        except (KeyError, TypeError):
            # TypeError: callers outside the type checker may pass an unhashable id.
            raise UnknownPlayer(
                f"{player!r} has no seat at this table", player=plain_id(player)
            ) from None

    def _reject_kind(self, player: PlayerId, action: object, expected: type[Action]) -> NoReturn:
        """Raise WrongPhase for the other action type, InvalidAction for anything else."""
        if isinstance(action, Bid | Play):
            raise WrongPhase(
                f"cannot {type(action).__name__.lower()} now: the round is in the "
                f"{self.phase.value} phase",
                player=player,
                phase=self.phase.value,
            )
        raise InvalidAction(
            f"expected a {expected.__name__} action, not {action!r}",
            player=player,
            action=repr(action),
        )

    def _bid(self, seat: int, tricks: object) -> None:
        """Validate and record one bid."""
        bids = self.bids
        player = self.players[seat]
        if self._simultaneous:
            if bids[seat] is not None:
                raise AlreadyBid(
                    f"{player!r} has already bid this round",
                    player=player,
                    players=list(self.acting_players()),
                )
        elif seat != self._turn:
            raise NotYourTurn(
                f"it is {self.players[self._turn]!r}'s turn to bid, not {player!r}'s",
                player=player,
                players=[self.players[self._turn]],
            )
        size = cards_in_round(self.round)
        # type() rather than isinstance: True is not a bid of one trick.
        if type(tricks) is not int or not 0 <= tricks <= size:
            raise IllegalBid(
                f"a bid must be a whole number from 0 to {size}, not {tricks!r}",
                player=player,
                bid=tricks if type(tricks) is int else repr(tricks),
                allowed=self._allowed_bids(),
            )
        if tricks == self._forbidden_bid():
            raise IllegalBid(
                f"plus/minus one: the bids may not add up to {size}, so the last bidder "
                f"may not bid {tricks}",
                player=player,
                bid=tricks,
                allowed=self._allowed_bids(),
            )
        bids[seat] = tricks
        if None not in bids:
            self.phase = _PLAYING
            self._turn = self.leader_seat
        elif not self._simultaneous:
            self._turn = (seat + 1) % self._n

    def _allowed_bids(self) -> list[int]:
        """The bids open to the player bidding now, for an IllegalBid's details."""
        forbidden = self._forbidden_bid()
        return [b for b in range(cards_in_round(self.round) + 1) if b != forbidden]

    def _play(self, seat: int, action: Play) -> Play:
        """Validate and play one card, finishing the trick (and round) when it is complete.

        Returns the play as applied: `action` itself unless its card had to be coerced.
        """
        card = action.card
        named = action.colour
        player = self.players[seat]
        if type(card) is not Card:
            # Callers outside the type checker may name the card by its code or number.
            card = self._coerce_card(player, card)
            action = Play(card, named)
        hand = self.hands[seat]
        if card not in hand:
            raise CardNotInHand(f"{player!r} does not hold {card}", player=player, card=card.code)
        if card == JOKER:
            if type(named) is not Colour:
                if named is None:
                    raise JokerColourError(
                        "a Joker must name one of the six colours", player=player, card=card.code
                    )
                raise JokerColourError(
                    f"a Joker must name one of the six colours, not {named!r}",
                    player=player,
                    card=card.code,
                    colour=repr(named),
                )
        elif named is not None:
            raise JokerColourError(
                f"only a Joker names a colour; play {card} without one",
                player=player,
                card=card.code,
                colour=named.code if type(named) is Colour else repr(named),
            )
        led = self._led
        if led is not None and COLOUR_OF[card] is not led:
            for held in hand:
                if COLOUR_OF[held] is led:
                    raise MustFollowSuit(
                        f"{player!r} holds {led} and must follow {led}, so cannot play {card}",
                        player=player,
                        card=card.code,
                        colour=led.code,
                    )

        hand.remove(card)
        self.trick_cards.append(card)
        self.trick_named.append(named)
        if card < _FIRST_ACTION:
            if led is None:
                self._led = COLOUR_OF[card]
        elif card == JOKER:
            if led is None:
                self._led = named
        elif card == NO_TRUMP:
            # Trump is off for this trick; a card is turned up once the trick is over.
            self.trump = None
            self.no_trump_this_trick = True
        elif card == CHANGE_TRUMP:
            # The new trump counts at once, for the cards already played too, and it
            # cancels the turn-up a No Trump earlier in this trick would have caused.
            self.trump = self._turn_up()
            self.no_trump_this_trick = False
        if len(self.trick_cards) == self._n:
            self._finish_trick()
        else:
            self._turn = (seat + 1) % self._n
        return action

    def _coerce_card(self, player: PlayerId, card: object) -> Card:
        """A Card from an int or code string inside a Play; InvalidAction otherwise."""
        try:
            return to_card(card)
        except ValueError:
            raise InvalidAction(
                f"{card!r} is not a Rage card", player=player, card=repr(card)
            ) from None

    # --------------------------------------------------------------- internals

    def _turn_up(self) -> Colour | None:
        """Turn up stack cards until a colour card shows; its colour, or None if none is left."""
        stack = self.stack
        while stack:
            card = stack.pop(0)
            self.turned_up.append(card)
            if card < _FIRST_ACTION:
                return COLOUR_OF[card]
        return None

    def _finish_trick(self) -> None:
        """Award the complete trick, then turn up a trump if a No Trump asked for one."""
        cards = tuple(self.trick_cards)
        named = tuple(self.trick_named)
        index, reason = resolve_trick(cards, named, self.trump, self._led)
        leader = self.leader_seat
        winner = (leader + index) % self._n
        bonus = trick_bonus(cards)
        self.tricks_won[winner] += 1
        self.bonus[winner] += bonus
        self.last_trick_record = TrickRecord(
            self.round,
            self.trick_number,
            leader,
            cards,
            named,
            winner,
            reason,
            self.trump,
            self._led,
            bonus,
        )
        self.trick_cards = []
        self.trick_named = []
        self._led = None
        if self.no_trump_this_trick:
            self.no_trump_this_trick = False
            self.trump = self._turn_up()
        self.leader_seat = winner
        self._turn = winner
        self.trick_number += 1
        if not self.hands[winner]:
            self._finish_round()

    def _finish_round(self) -> None:
        """Score the round, then deal the next one or end the game."""
        size = cards_in_round(self.round)
        sweep = self.options.sweep
        bids = tuple(bid for bid in self.bids if bid is not None)
        if len(bids) != self._n:  # play starts only once every seat has bid
            raise RuntimeError("a round cannot be scored before every player has bid")
        scores = tuple(
            score_player(bid, tricks, bonus, size, sweep=sweep)
            for bid, tricks, bonus in zip(bids, self.tricks_won, self.bonus, strict=True)
        )
        totals = self.totals
        for seat, score in enumerate(scores):
            totals[seat] += score.points
        self.rounds.append(
            RoundRecord(
                round=self.round,
                cards=size,
                dealer=self.dealer_seat,
                bids=bids,
                tricks=tuple(self.tricks_won),
                scores=scores,
                totals=tuple(totals),
            )
        )
        if self.round == ROUNDS:
            self.phase = _FINISHED
            self._turn = -1
            return
        self.round += 1
        self.dealer_seat = (self.dealer_seat + 1) % self._n
        self._deal()

    def _deal(self) -> None:
        """Shuffle with this round's seed and deal from the dealer's left; the rest is the stack."""
        deck = shuffled_deck(self.deal_seeds[self.round - 1])
        hands, self.stack = deal_hands(
            deck, self._n, cards_in_round(self.round), self.dealer_seat + 1
        )
        self._start_round(hands)

    def _start_round(self, hands: list[list[Card]]) -> None:
        """Reset the per-round state around freshly dealt hands and turn up the trump."""
        n = self._n
        self.hands = hands
        self.turned_up = []
        self.trump = self._turn_up()
        self.no_trump_this_trick = False
        self.bids = [None] * n
        self.tricks_won = [0] * n
        self.bonus = [0] * n
        self.leader_seat = (self.dealer_seat + 1) % n
        self.trick_cards = []
        self.trick_named = []
        self._led = None
        self.trick_number = 1
        self.phase = _BIDDING
        self._turn = -1 if self._simultaneous else self.leader_seat


def _seat_or_setup_error(players: tuple[PlayerId, ...], player: PlayerId) -> int:
    """Seat of a player for setup; InvalidSetup if unknown."""
    try:
        return players.index(player)
    except ValueError:
        raise InvalidSetup(f"{player!r} is not one of the players") from None


__all__ = ["Phase", "RageState"]
