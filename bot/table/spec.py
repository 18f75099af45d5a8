"""The contract a game signs to be played at a table: engine, renderer, AI and options."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple, Protocol

from bot.ai.levels import SEARCHING_LEVELS, STANDARD_LEVELS
from bot.engines.contract import GameEngine


def is_computer_id(player: str | int) -> bool:
    """Computer seats have negative ids; people have their Discord ids."""
    return int(player) < 0


class Letter(NamedTuple):
    """A DM to send once a change is saved: who, which message, its placeholders."""

    player: str
    key: str
    params: dict[str, Any]


# What Discord reads as markdown in a name, escaped as discord.utils.escape_markdown does
# (the core may not import discord): the inline marks anywhere, and at the start of the
# line a quote, heading, list or subtext marker; and what it leaves alone: an ordered
# list ("1. "), masked links ("[a](b)") and "<...>" syntax (<#channel>, <t:...>).
_MARKDOWN = re.compile(
    r"[_\\~|*`<\[\]]"  # inline marks, links and <...> syntax
    r"|^>(?:>>)?(?=\s)"  # a block quote
    r"|^#"  # a heading
    r"|^-"  # a list or -# subtext
    r"|(?<=^\d)\.|(?<=^\d\d)\.|(?<=^\d\d\d)\."  # an ordered list: escape its dot
)
# @everyone, @here and raw user or role mentions, as discord.utils.escape_mentions has it.
_MENTION = re.compile(r"@(everyone|here|[!&]?[0-9]{17,20})")


def one_line(name: str) -> str:
    """A name on one line, without the outer spaces that would hide a line-start mark."""
    return " ".join(name.split()).strip() if "\n" in name or "\r" in name else name.strip()


@lru_cache(maxsize=4096)
def escape_name(name: str) -> str:
    """A display name shown as written: no markdown, no mention, on one line."""
    # Cached: every table message escapes every seated name again, and names rarely change.
    escaped = _MARKDOWN.sub(lambda match: "\\" + match.group(0), one_line(name))
    return _MENTION.sub("@\u200b\\1", escaped)


def plain_name(name: str) -> str:
    """A display name for a code block: on one line, without the backticks that end it."""
    return one_line(name).replace("`", "'")


@dataclass(frozen=True, slots=True)
class TableFacts:
    """What any message about a table may show besides the game: no engine, nothing hidden."""

    id: int
    game: str
    status: str
    host_id: int
    seats: tuple[int, ...]
    options: Mapping[str, Any]
    names: Mapping[str, str]
    computers: Mapping[str, str]
    min_players: int
    max_players: int
    move_number: int = 0
    # The computer levels this game offers (the lobby's add-computer choices).
    levels: tuple[str, ...] = STANDARD_LEVELS
    # Rating change per player in the game that just finished (for the final board).
    rating_changes: Mapping[str, float] = field(default_factory=dict)

    def name(self, player: str | int) -> str:
        """The display name a player had when they sat down, escaped for markdown."""
        name = self.names.get(str(player))
        if name is None:
            return self.mention(player)
        return escape_name(name)

    def short_name(self, player: str | int) -> str:
        """The name for a table's own lines: a computer without its level ('🤖 Computer 1'),
        which the lobby and the final board still give, so a phone's line does not wrap."""
        return self._without_level(player, self.name(player))

    def short_plain_name(self, player: str | int) -> str:
        """`short_name` as text for a picture or a code block (no escaping)."""
        return self._without_level(player, self.plain_name(player))

    def _without_level(self, player: str | int, name: str) -> str:
        if is_computer_id(player) and str(player) in self.computers and name.endswith(")"):
            return name.rsplit(" (", 1)[0]
        return name

    def plain_name(self, player: str | int) -> str:
        """The display name as text for a code block (where escaping would show)."""
        name = self.names.get(str(player))
        if name is None:
            # A mention would show as "<@123>" inside a code block: the id reads better.
            return f"🤖 {-int(player)}" if is_computer_id(player) else str(player)
        return plain_name(name)

    def mention(self, player: str | int) -> str:
        """A mention for people, the name for computer players (who cannot be mentioned)."""
        if not is_computer_id(player):
            return f"<@{player}>"
        name = self.names.get(str(player))
        # A computer seat without a stored name is never shown as a broken "<@-1>".
        return escape_name(name) if name is not None else f"🤖 {-int(player)}"


@dataclass(frozen=True, slots=True)
class PublicTable:
    """Everything a public message may be built from: the facts and the public view only."""

    facts: TableFacts
    view: Any  # the game's public view (None in a lobby or a table closed before its game)
    notice: tuple[str, str] | None = None  # (message key, player) shown above the table
    deadline: float | None = None  # of the turn in progress
    away: tuple[str, ...] = ()  # seats a computer plays until "I'm back"
    turn_seconds: int = 60
    pace: int = 0  # seconds per move at a turn-based table; 0: live
    played_for: float | None = None  # seconds from the deal to the end of a finished game
    held: tuple[tuple[str, float], ...] = ()  # (player, away until) at a turn-based table
    closed_reason: str | None = None
    closed_by: int | None = None
    invited: tuple[int, ...] = ()


# One seat's result for the records: (player, score, rank, game-specific figures).
ResultRow = tuple[str, int, int, dict[str, Any]]


# A message as keyword arguments for discord.py's send/edit (content, embed, view).
MessageFields = dict[str, Any]


class GameRenderer(Protocol):
    """Builds a game's own messages; public ones from the public view only."""

    colour: int  # the game's embed colour (0xRRGGBB)

    def title(self, locale: object) -> str:
        """The game's name in a language ("Geschenkt!"), for the shared messages."""
        ...

    def dm_closed_hint(self, locale: object) -> str:
        """Where a player whose DMs are closed finds their private information instead."""
        ...

    def option_lines(self, options: Mapping[str, Any], locale: object) -> list[str]:
        """The table's options in words, for the lobby."""
        ...

    def table(
        self, facts: TableFacts, public: Any, locale: object, *, pictures: bool = False
    ) -> MessageFields:
        """The public message of a running game, from the public view; with ``pictures``
        the game's picture goes with it and shows the table, so the text can be short."""
        ...

    def final(
        self, facts: TableFacts, public: Any, locale: object, *, pictures: bool = False
    ) -> MessageFields:
        """The public message of a finished game (its scoreboard), from the public view;
        with ``pictures`` the final picture goes with it, so the text says only what the
        picture does not."""
        ...

    def private(self, facts: TableFacts, view: Any, locale: object) -> MessageFields:
        """A player's private message, from that player's view."""
        ...

    def rules(self, locale: object) -> Any:
        """The rules summary embed."""
        ...

    def describe(self, name: str, value: object, facts: TableFacts, locale: object) -> str | None:
        """An engine error detail in words (a colour, a card), or None to show it as is."""
        ...


# A computer's choice: (the seat's own view, level, seeded rng, the seat's memory).
ChooseAction = Callable[[Any, str, random.Random, Any], Any]


@dataclass(frozen=True, slots=True)
class Reviewer:
    """How a game's decisions are judged for a game review (see bot/table/review.py).

    ``values`` and ``expert`` have a computer's shape, (the player's own view, level, rng,
    ``bot.ai.review.Ask``), so they run in the thinking pool: ``values`` gives each choice
    (as the move log writes it) and its expected points, more being better; ``expert``
    the choice of the game's strongest ``level``.
    """

    values: ChooseAction
    expert: ChooseAction
    level: str
    samples: int  # playouts or guessed deals per choice
    # What a player remembers, updated with each of their views (None: nothing to keep).
    observe: Callable[[Any, Any], None] | None = None


@dataclass(frozen=True, slots=True)
class GameSpec:
    """One game as the table core sees it: its engine, renderer and computer player.

    Usage (bot/games/ registers one per game; docs/adding-a-game.md walks through one)::

        SPEC = GameSpec(
            name="highcard",
            min_players=2,
            max_players=4,
            new_engine=lambda players, seed, options: HighCardGame.new(players, seed),
            engine_from_dict=HighCardGame.from_dict,
            renderer=HighCardRenderer(),
            choose=choose,
        )
    """

    name: str
    min_players: int
    max_players: int
    # (seated player ids in seat order, seed, the table's options) -> a fresh game
    new_engine: Callable[[Sequence[str], int, Mapping[str, Any]], GameEngine[Any]]
    engine_from_dict: Callable[[Mapping[str, Any]], GameEngine[Any]]
    renderer: GameRenderer
    choose: ChooseAction
    # Checks and normalises `start` options; raises UserError with the reason.
    parse_options: Callable[[Mapping[str, Any]], dict[str, Any]] = dict
    new_memory: Callable[[], Any] = field(default=lambda: None)
    # DMs a saved move causes: (game after the move, player, what apply returned).
    letters: Callable[[GameEngine[Any], str, Any], list[Letter]] = field(
        default=lambda engine, player, move: []
    )
    start_letters: Callable[[GameEngine[Any]], list[Letter]] = field(default=lambda engine: [])
    # The computer levels this game offers, weakest first (No Thanks! adds "expert").
    levels: tuple[str, ...] = STANDARD_LEVELS
    # Levels that think in a worker process (see thinking.py).
    searching_levels: frozenset[str] = SEARCHING_LEVELS
    # How a move is written in the move log, and read back for a replay.
    encode_action: Callable[[Any], str] = str
    decode_action: Callable[[str], Any] = field(default=lambda text: text)
    # The records of a game: (player, score, rank, game-specific figures) in seat order.
    result_rows: Callable[[GameEngine[Any]], list[ResultRow]] = field(default=lambda engine: [])
    # How a game review judges a player's decisions (None: the game has no review).
    reviewer: Reviewer | None = None
