"""What a computer Rage player remembers of the round in play, from its own views only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.engines.rage import JOKER, Card, Colour, PlayerId, RageView, TrickPlay


@dataclass(slots=True)
class RageMemory:
    """What one player remembers of the round in play, built only from their own views.

    The view shows the trick on the table and the last finished trick; a player who acts
    once per trick sees every finished trick that way. Keep one memory per computer seat
    and pass it to every call for that seat. A plain dataclass, so it can be pickled to a
    worker process and back.
    """

    round: int = 0
    tricks: set[int] = field(default_factory=set)  # trick numbers already recorded
    played: list[Card] = field(default_factory=list)  # cards of the recorded tricks
    voids: dict[PlayerId, set[Colour]] = field(default_factory=dict)  # shown by not following

    def observe(self, view: RageView) -> None:
        """Record the last finished trick and any colour someone failed to follow."""
        if view.round != self.round:
            self.round = view.round
            self.tricks.clear()
            self.played.clear()
            self.voids.clear()
        last = view.last_trick
        if last is not None and last.round == view.round and last.number not in self.tricks:
            self.tricks.add(last.number)
            self.played.extend(p.card for p in last.plays)
            self._note_voids(last.plays)
        self._note_voids(view.trick)

    def _note_voids(self, plays: Sequence[TrickPlay]) -> None:
        """A player who did not follow the led colour holds none of it (a Joker never follows)."""
        led: Colour | None = None
        for play in plays:
            colour = play.colour if play.card == JOKER else play.card.colour
            if led is not None and (play.card == JOKER or colour is not led):
                self.voids.setdefault(play.player, set()).add(led)
            if led is None and colour is not None:
                led = colour

    def void_colours(self, player: PlayerId) -> frozenset[Colour]:
        """The colours ``player`` has shown they do not hold this round."""
        return frozenset(self.voids.get(player, ()))

    def seen(self, card: Card) -> int:
        """How many copies of ``card`` this player has seen played this round."""
        return self.played.count(card)
