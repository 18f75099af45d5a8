"""The Rage table: `/rage` commands, the live table message, private hands, bids and plays."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, ClassVar

import discord
from discord import app_commands

from bot.ai import RageMemory, choose_rage_action
from bot.engines.errors import IllegalMove, InvalidSetup, NotYourTurn, UnknownPlayer
from bot.engines.rage import (
    JOKER,
    Bid,
    Card,
    Colour,
    MustFollowSuit,
    Phase,
    Play,
    RageOptions,
    RageState,
    WrongPhase,
)
from bot.i18n import t
from bot.render import rage as render
from bot.storage import TableRecord
from bot.table import TableMovedOn, UserError, answers_user_errors
from bot.tablecog import (
    LEVEL_CHOICES,
    GameTableCog,
    Letter,
    TableButton,
    TableSelect,
    remember_locale,
    static_view,
)

if TYPE_CHECKING:
    from bot.app import CardtableBot

GAME = "rage"
OPTION_NAMES = ("plus_minus_one", "hidden_bids", "secret_bids", "sweep")


def table_view(record: TableRecord, state: RageState, locale: object) -> discord.ui.View:
    """The one public button: Show my hand (bids and plays happen in the private view)."""
    assert record.id is not None
    view = static_view()
    view.add_item(
        TableButton.make(
            GAME,
            record.id,
            state.move_number,
            "hand",
            label=t("rage.button.hand", locale),
            style=discord.ButtonStyle.primary,
            emoji="🂠",
        )
    )
    return view


def hand_message(
    record: TableRecord,
    state: RageState,
    player: str,
    locale: object,
    *,
    note: str | None = None,
    joker: bool = False,
) -> dict[str, Any]:
    """A player's private view: the sorted hand and, on their turn, exactly the legal choices."""
    assert record.id is not None
    seat = state.seat(player)
    lines = [note] if note else []
    lines.append(t("rage.hand.title", locale, round=state.round))
    lines.append(render.hand_text(state.hand(player), locale, state.trump))
    lines.append(render.trump_line(state, locale))
    own_bid = state.bids[seat]
    if own_bid is not None:
        lines.append(t("rage.hand.status", locale, bid=own_bid, tricks=state.tricks_won[seat]))
    view = static_view()
    move = state.move_number
    if player in state.players_to_act():
        legal = state.legal_actions(player)
        if state.phase is Phase.BIDDING:
            lines.append(t("rage.hand.your_bid", locale))
            options = [
                discord.SelectOption(
                    label=t("rage.select.bid", locale, count=a.tricks), value=str(a.tricks)
                )
                for a in legal
                if isinstance(a, Bid)
            ]
            view.add_item(
                TableSelect.make(
                    GAME,
                    record.id,
                    move,
                    "bid",
                    placeholder=t("rage.select.bid_placeholder", locale),
                    options=options,
                    arg=str(state.round),
                )
            )
        elif joker:
            lines.append(t("rage.hand.joker_colour", locale))
            colours = sorted(
                {
                    a.colour
                    for a in legal
                    if isinstance(a, Play) and a.card == JOKER and a.colour is not None
                }
            )
            options = [
                discord.SelectOption(label=render.colour_name(colour, locale), value=colour.code)
                for colour in colours
            ]
            view.add_item(
                TableSelect.make(
                    GAME,
                    record.id,
                    move,
                    "joker",
                    placeholder=t("rage.select.colour_placeholder", locale),
                    options=options,
                )
            )
        else:
            lines.append(t("rage.hand.your_turn", locale))
            cards: list[Card] = []
            for action in legal:
                if isinstance(action, Play) and action.card not in cards:
                    cards.append(action.card)
            options = [
                discord.SelectOption(label=render.card_name(card, locale), value=card.code)
                for card in render.sort_hand(cards, state.trump)
            ]
            view.add_item(
                TableSelect.make(
                    GAME,
                    record.id,
                    move,
                    "play",
                    placeholder=t("rage.select.card_placeholder", locale),
                    options=options,
                )
            )
    return {"content": "\n".join(lines), "view": view}


class Rage(GameTableCog):
    """Rage tables: one per channel, persisted move by move."""

    game: ClassVar[str] = GAME
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 8
    colour: ClassVar[discord.Colour] = render.COLOUR

    group = app_commands.Group(name="rage", description="Play Rage at this table")

    def __init__(self, bot: CardtableBot) -> None:
        super().__init__(bot)
        self.memories: dict[tuple[str, str], RageMemory] = {}

    # -- the game's hooks -------------------------------------------------------------

    def create_engine(self, record: TableRecord, seed: int) -> RageState:
        """Deal round 1 for the seated players with the table's variants."""
        options = RageOptions(**{name: bool(record.options.get(name)) for name in OPTION_NAMES})
        return RageState.new([str(seat) for seat in record.seats], seed=seed, options=options)

    def engine_from_dict(self, state: dict[str, Any]) -> RageState:
        """Rebuild a stored game."""
        return RageState.from_dict(state)

    def option_lines(self, record: TableRecord, locale: object) -> list[str]:
        """The variants in force, or 'standard rules'."""
        lines = [
            t(f"rage.option.{name}", locale) for name in OPTION_NAMES if record.options.get(name)
        ]
        return lines or [t("rage.option.none", locale)]

    def render_table(
        self, record: TableRecord, engine: RageState, locale: object
    ) -> dict[str, Any]:
        """The live table, or the final standings after round 10."""
        if engine.is_over:
            return {
                "content": None,
                "embed": render.final_embed(record, engine, locale),
                "view": self.final_view(record, locale),
            }
        return {
            "content": None,
            "embed": render.game_embed(record, engine, locale),
            "view": table_view(record, engine, locale),
        }

    async def unlocked_action(
        self, interaction: discord.Interaction, record: TableRecord, action: str
    ) -> bool:
        """Show my hand only reads, so it needs no lock."""
        if action != "hand":
            return False
        await self._show_hand(interaction, record)
        return True

    async def _show_hand(self, interaction: discord.Interaction, record: TableRecord) -> None:
        assert record.id is not None
        state = self.engines.get(record.id)
        if state is None or record.status != "running":
            raise TableMovedOn()
        player = str(interaction.user.id)
        if player not in state.players:
            raise UserError("table.not_seated")
        message = hand_message(record, state, player, interaction.locale)
        await interaction.response.send_message(**message, ephemeral=True)

    async def game_action(
        self,
        interaction: discord.Interaction,
        record: TableRecord,
        engine: RageState,
        move: int,
        action: str,
        arg: str,
        values: list[str],
    ) -> list[Letter]:
        """A bid, a card, or a Joker's colour from a player's private view."""
        player = self.seat_check(interaction, record)
        locale = interaction.locale
        if action not in ("bid", "play", "joker") or len(values) != 1:
            raise TableMovedOn()
        if move != engine.move_number and not self._bid_still_open(engine, player, action, arg):
            # An old private view (from before other moves or a restart): show the current one.
            note = t("rage.hand.stale", locale)
            await interaction.response.edit_message(
                **hand_message(record, engine, player, locale, note=note)
            )
            return []
        choice = values[0]
        try:
            if action == "bid":
                chosen: Bid | Play = Bid(int(choice))
            elif action == "joker":
                chosen = Play(JOKER, Colour.parse(choice))
            else:
                card = Card.parse(choice)
                if card == JOKER:
                    await interaction.response.edit_message(
                        **hand_message(record, engine, player, locale, joker=True)
                    )
                    return []
                chosen = Play(card)
        except ValueError:
            raise TableMovedOn() from None
        self._apply(engine, player, chosen)
        remember_locale(record, interaction)
        await self.commit(record, engine, player, str(chosen))
        if engine.is_over:
            await interaction.response.edit_message(
                content=t("rage.hand.game_over", locale), view=None
            )
        else:
            await interaction.response.edit_message(**hand_message(record, engine, player, locale))
        await self.edit_table_message(record, **self.publish(record, engine))
        return []

    def acting_players(self, engine: RageState) -> list[str]:
        """Everyone who may act now (several during hidden or secret bidding)."""
        return list(engine.players_to_act())

    def computer_action(
        self, engine: RageState, player: str, level: str, rng: random.Random
    ) -> Bid | Play:
        """A computer's bid or card from the player's own view (and its memory of the round)."""
        # One memory per seat, built only from that seat's views; after a restart it starts
        # again from the last finished trick, as a player who looked away would.
        memory = self.memories.setdefault((str(engine.seed), player), RageMemory())
        return choose_rage_action(engine.view(player), level, rng, memory)

    def apply_action(
        self, record: TableRecord, engine: RageState, player: str, action: Bid | Play
    ) -> tuple[str, list[Letter]]:
        """Apply a computer's (or a timed-out player's) bid or card."""
        engine.apply(player, action)
        if engine.is_over:
            for key in [key for key in self.memories if key[0] == str(engine.seed)]:
                del self.memories[key]
        return str(action), []

    @staticmethod
    def _bid_still_open(engine: RageState, player: str, action: str, arg: str) -> bool:
        """With simultaneous bids other players' bids move the game on; a bid stays valid."""
        return (
            action == "bid"
            and engine.options.simultaneous_bids
            and engine.phase is Phase.BIDDING
            and arg == str(engine.round)
            and player in engine.players_to_act()
        )

    @staticmethod
    def _apply(engine: RageState, player: str, chosen: Bid | Play) -> None:
        try:
            engine.apply(player, chosen)
        except UnknownPlayer:
            raise UserError("table.not_seated") from None
        except NotYourTurn:
            waiting = ", ".join(f"<@{p}>" for p in engine.players_to_act())
            raise UserError("rage.not_your_turn", players=waiting) from None
        except MustFollowSuit:
            led = engine.led_colour
            assert led is not None
            raise UserError("rage.must_follow", colour=render.colour_name(led, None)) from None
        except WrongPhase:
            raise TableMovedOn() from None
        except IllegalMove as error:
            raise UserError("rage.illegal", reason=str(error)) from None

    # -- commands -----------------------------------------------------------------------

    @group.command(name="start", description="Open a Rage table in this channel")
    @app_commands.describe(
        plus_minus_one="Bids may not add up to the number of tricks (last bidder restricted)",
        hidden_bids="Everyone bids at once; bids are revealed before the first trick",
        secret_bids="Everyone bids at once; bids stay secret until the round is scored",
        sweep="Winning every trick of a round scores 2 points per trick",
        bots="Computer players to seat right away (default: none)",
        bot_level="How well the computer players play (default: normal)",
        turn_seconds="Seconds per turn before the computer moves for you (default: 60)",
    )
    @app_commands.choices(bot_level=LEVEL_CHOICES)
    @app_commands.guild_only()
    @answers_user_errors
    async def start(
        self,
        interaction: discord.Interaction,
        plus_minus_one: bool = False,
        hidden_bids: bool = False,
        secret_bids: bool = False,
        sweep: bool = False,
        bots: app_commands.Range[int, 0, 7] = 0,
        bot_level: str = "normal",
        turn_seconds: app_commands.Range[int, 15, 600] = 60,
    ) -> None:
        """Open a lobby in this channel with the chosen variants."""
        options = {
            "plus_minus_one": plus_minus_one,
            "hidden_bids": hidden_bids,
            "secret_bids": secret_bids,
            "sweep": sweep,
        }
        try:
            RageOptions(**options)
        except InvalidSetup:
            key = (
                "rage.options.hidden_and_secret"
                if hidden_bids and secret_bids
                else "rage.options.plus_minus_open"
            )
            raise UserError(key) from None
        options["turn_seconds"] = turn_seconds
        await self.open_table(interaction, options, bots=bots, level=bot_level)

    @group.command(name="stop", description="End the Rage table in this channel")
    @app_commands.guild_only()
    @answers_user_errors
    async def stop(self, interaction: discord.Interaction) -> None:
        """End this channel's lobby or game (host, or Manage Messages)."""
        await self.stop_table(interaction)

    @group.command(name="rules", description="A short summary of the Rage rules")
    @answers_user_errors
    async def rules(self, interaction: discord.Interaction) -> None:
        """Show the rules privately."""
        await interaction.response.send_message(
            embed=render.rules_embed(interaction.locale), ephemeral=True
        )

    @group.command(name="hand", description="Your hand in this channel's Rage game")
    @app_commands.guild_only()
    @answers_user_errors
    async def hand(self, interaction: discord.Interaction) -> None:
        """Show the caller's hand privately, with the bid or card choices on their turn."""
        await self._show_hand(interaction, self.running_record(interaction))


async def setup(bot: CardtableBot) -> None:
    """Load the Rage cog."""
    await bot.add_cog(Rage(bot))
