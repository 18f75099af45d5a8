"""The contract every rules engine meets, so tables, computers and tools can drive any game.

An engine is a seeded, deterministic state that changes only through ``apply``. It is
generic in its player id type: ``NoThanksGame`` is a ``GameEngine[str]``, ``RageState`` a
``GameEngine[str | int]`` (Rage also accepts integer ids). Code that drives either one
without caring which takes a ``GameEngine[Any]`` (or a bare ``GameEngine`` outside strict
modules); the table layer seats both with string ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar, runtime_checkable

# Invariant: ids go into the engine (apply, seat_of) and come out of it (players).
PlayerT = TypeVar("PlayerT")


@runtime_checkable
class GameEngine(Protocol[PlayerT]):
    """A game in progress: who sits where, who may act, what they may do, and the result.

    Usage::

        game = NoThanksGame.new(["ann", "bob", "cid"], seed=7)
        while not game.is_over:
            (player,) = game.acting_players()
            game.apply(player, game.legal_actions(player)[0])
        game.standings()  # best first; tied players share a rank
    """

    @property
    def players(self) -> Sequence[PlayerT]:
        """The player ids in seat order."""

    @property
    def seed(self) -> int | str:
        """The seed the deal (and every later deal) was drawn from."""

    @property
    def move_number(self) -> int:
        """How many actions have been applied."""

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""

    def acting_players(self) -> tuple[PlayerT, ...]:
        """Who may act now (several while Rage bids are simultaneous); empty once it is over."""

    def seat_of(self, player: PlayerT) -> int:
        """The seat index of a player; UnknownPlayer if they have no seat."""

    def legal_actions(self, player: PlayerT | None = None) -> Sequence[Any]:
        """The actions ``player`` may take now (None: the one player to act); empty if none."""

    def apply(self, player: PlayerT, action: Any) -> Any:
        """Validate and apply one action, returning the move as applied; IllegalMove if not."""

    def view(self, player: PlayerT | None = None) -> Any:
        """What ``player`` may see (None: the public view of a spectator)."""

    def standings(self) -> Sequence[Any]:
        """Every player's current result, best first; tied players share a rank."""

    def to_dict(self) -> dict[str, Any]:
        """The full state, hidden cards included, as plain JSON data."""

    def clone(self) -> Self:
        """An independent copy: a move applied to it leaves this state as it is."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild a state written by ``to_dict``."""
