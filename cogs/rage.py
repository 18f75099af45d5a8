"""The Rage cog: `/rage` commands, and bids and plays from private hands."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import discord
from discord import app_commands

from bot.client.game_cog import GameTableCog, level_choices, locale_code, seat_of
from bot.client.replies import Reply, answers_user_errors
from bot.engines.rage import (
    JOKER,
    Bid,
    Card,
    Colour,
    Phase,
    Play,
    RageState,
)
from bot.games.rage import GAME, SPEC
from bot.i18n import t
from bot.render.components import Click
from bot.render.rage import hand_message, scores_message
from bot.table.errors import TableMovedOn, UserError
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec

if TYPE_CHECKING:
    from bot.client.bot import CardtableBot

log = logging.getLogger(__name__)
# An interaction's token lets its message be edited for 15 minutes: stop a little before.
PANEL_LIFETIME = 14 * 60


@dataclass
class Panel:
    """A player's open private panel: the interaction that last showed it (its token edits
    the message), when, the message's id once known, and the round it shows."""

    interaction: discord.Interaction
    since: float
    message_id: int | None
    round: int


def panel_id(interaction: discord.Interaction) -> int | None:
    """The id of the private panel a click is on (None: the click is not on one)."""
    message = interaction.message
    return message.id if message is not None and message.flags.ephemeral else None


class StaleHand(TableMovedOn):
    """A choice from a private view that is out of date: answered with the current one."""


class Rage(GameTableCog):
    """Rage tables: one per channel, persisted move by move."""

    spec: ClassVar[GameSpec] = SPEC
    private_actions: ClassVar[tuple[str, ...]] = ("hand", "scores")

    group = app_commands.Group(name="rage", description="Play Rage at this table")

    def __init__(self, bot: CardtableBot) -> None:
        super().__init__(bot)
        # Each player's one current panel per table. In memory only (tokens expire, and a
        # restart forgets them: one tap reopens).
        self.panels: dict[tuple[int, str], Panel] = {}
        # Panels taken out of use, by (table, message id): what a click on one is told.
        self.retired: dict[tuple[int, int], tuple[str, dict[str, Any]]] = {}
        # The edit last queued for each panel message: edits of one panel go in order.
        self._panel_edits: dict[object, asyncio.Task[None]] = {}

    def keep_panel(
        self,
        session: TableSession,
        player: str,
        interaction: discord.Interaction,
        message_id: int | None,
    ) -> None:
        """Remember the panel this interaction shows, to edit it after later changes; a
        different panel the player had open at this table is marked out of date."""
        key = (session.id, player)
        old = self.panels.get(key)
        engine = session.engine
        round_ = engine.round if isinstance(engine, RageState) else 0
        self.panels[key] = Panel(interaction, self.tables.clock(), message_id, round_)
        if message_id is None:
            log.warning("the new Rage panel of %s at table %s has no message id", player, key[0])
            return
        self.retired.pop((session.id, message_id), None)
        if old is not None and old.message_id is not None and old.message_id != message_id:
            self.retire(session.id, player, old, "rage.hand.replaced", {})

    def retire(
        self, table_id: int, player: str, panel: Panel, key: str, params: dict[str, Any]
    ) -> None:
        """Edit a panel that is no longer current to say so, without buttons (while its
        token is valid); a later click on a copy of it is answered the same way."""
        if panel.message_id is not None:
            self.retired[(table_id, panel.message_id)] = (key, params)
        if self.tables.clock() - panel.since > PANEL_LIFETIME:
            log.info("the replaced Rage panel of %s at table %s has expired", player, table_id)
            return
        fields = {"content": t(key, panel.interaction.locale, **params), "view": None}
        self._queue_edit(table_id, player, panel, fields)

    def retired_answer(
        self, session: TableSession, player: str, interaction: discord.Interaction
    ) -> str | None:
        """What a click on a panel that is not the player's current one is told (None: the
        click is on the current panel, or on no panel, or the bot no longer knows)."""
        message_id = panel_id(interaction)
        if message_id is None:
            return None
        locale = interaction.locale
        retired = self.retired.get((session.id, message_id))
        if retired is not None:
            return t(retired[0], locale, **retired[1])
        current = self.panels.get((session.id, player))
        if current is not None and current.message_id not in (None, message_id):
            return t("rage.hand.replaced", locale)
        return None

    async def cog_load(self) -> None:
        """Register the game, and keep open panels current after every change."""
        await super().cog_load()
        self.tables.listeners.append(self.refresh_panels)

    async def cog_unload(self) -> None:
        """Stop routing clicks here and stop editing panels."""
        await super().cog_unload()
        if self.refresh_panels in self.tables.listeners:
            self.tables.listeners.remove(self.refresh_panels)

    def refresh_panels(self, session: TableSession) -> None:
        """After a change: panels of a finished round say so; the open panel of each
        player who has something to decide shows the decision."""
        if session.spec.name != GAME:
            return
        engine = session.engine
        mine = [key for key in self.panels if key[0] == session.id]
        if not isinstance(engine, RageState) or not session.is_open:
            over = isinstance(engine, RageState) and engine.is_over
            for key in mine:
                panel = self.panels.pop(key)
                if over:
                    self.retire(session.id, key[1], panel, "rage.hand.game_over", {})
            for gone in [gone for gone in self.retired if gone[0] == session.id]:
                del self.retired[gone]
            return
        now = self.tables.clock()
        for key in mine:
            panel = self.panels[key]
            if now - panel.since > PANEL_LIFETIME:
                del self.panels[key]  # the token has run out
            elif panel.round != engine.round:
                del self.panels[key]
                self.retire(
                    session.id, key[1], panel, "rage.hand.round_over", {"round": panel.round}
                )
        for acting in engine.acting_players():
            player = str(acting)
            kept = self.panels.get((session.id, player))
            if kept is None:
                continue
            fields = self.hand(session, player, kept.interaction.locale)
            self._queue_edit(session.id, player, kept, fields)

    def _queue_edit(self, table_id: int, player: str, panel: Panel, fields: dict[str, Any]) -> None:
        """Edit a panel through its token, after any edit of it already on its way."""
        mark: object = panel.message_id or panel.interaction.id
        before = self._panel_edits.get(mark)
        task = asyncio.get_running_loop().create_task(
            self._edit_panel(table_id, player, panel, fields, before)
        )
        self._panel_edits[mark] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self._panel_edits.get(mark) is finished:
                del self._panel_edits[mark]

        task.add_done_callback(done)

    async def _edit_panel(
        self,
        table_id: int,
        player: str,
        panel: Panel,
        fields: dict[str, Any],
        before: asyncio.Task[None] | None,
    ) -> None:
        if before is not None:
            await asyncio.wait([before])
        try:
            await panel.interaction.edit_original_response(**fields)
        except discord.HTTPException as error:
            # Expired or deleted: forget it; Show my hand opens a new one.
            log.warning("cannot edit the Rage panel of %s at table %s: %s", player, table_id, error)
            if self.panels.get((table_id, player)) is panel:
                del self.panels[(table_id, player)]

    async def show_private(
        self, interaction: discord.Interaction, session: TableSession, click: Click
    ) -> None:
        """Show my hand: a new private panel; Back inside the panel shows the hand in place.
        Scores: the score sheet, privately, for anyone who looks (it is public)."""
        if click.action == "scores":
            engine = session.engine
            if not isinstance(engine, RageState):
                raise TableMovedOn()
            sheet = scores_message(session.facts(), engine.view(None), interaction.locale)
            await interaction.response.send_message(**sheet, ephemeral=True)
            return
        player = seat_of(interaction, session)
        on_panel = panel_id(interaction)
        refusal = self.retired_answer(session, player, interaction)
        if refusal is not None:
            # Back on a copy of a panel that is out of date: it stays out of date.
            await interaction.response.edit_message(content=refusal, view=None)
            return
        fields = self.hand(session, player, interaction.locale)
        if on_panel is not None:
            await interaction.response.edit_message(**fields)
            self.keep_panel(session, player, interaction, on_panel)
        else:
            await self.open_panel(interaction, session, player, fields)

    async def open_panel(
        self,
        interaction: discord.Interaction,
        session: TableSession,
        player: str,
        fields: dict[str, Any],
    ) -> None:
        """Send a new private panel; it becomes the player's current one."""
        sent = await interaction.response.send_message(**fields, ephemeral=True)
        self.keep_panel(session, player, interaction, sent.message_id)

    def hand(self, session: TableSession, player: str, locale: object, **kw: Any) -> Any:
        """A player's private hand message."""
        return hand_message(session.facts(), session.player_view(player), locale, **kw)

    async def game_click(
        self, interaction: discord.Interaction, reply: Reply, session: TableSession, click: Click
    ) -> Draft | None:
        """A bid, a card, or a Joker's colour from a player's private view."""
        player = seat_of(interaction, session)
        locale = interaction.locale
        refusal = self.retired_answer(session, player, interaction)
        if refusal is not None:
            # A copy of a replaced or finished panel: nothing is played from it.
            await reply.edit(content=refusal, view=None)
            return None
        on_panel = panel_id(interaction)
        chosen = parse_choice(click)  # None: a Joker whose colour is still to be named

        def step(draft: Draft) -> None:
            engine = draft.engine
            if click.move != engine.move_number and not bid_still_open(engine, player, click):
                raise StaleHand()
            if chosen is None:
                # Asking for a colour is itself an answer: only to the player who may play.
                if player not in engine.acting_players():
                    waiting = ", ".join(draft.facts().mention(p) for p in engine.acting_players())
                    raise UserError("error.not_your_turn", players=waiting)
                raise JokerNeedsColour()
            draft.human_move(player, chosen, expected_move=None, locale=locale_code(interaction))

        async def answer() -> bool:
            if session.engine is not None and session.engine.is_over:
                await reply.edit(content=t("rage.hand.game_over", locale), view=None)
            else:
                await reply.edit(**self.hand(session, player, locale))
                self.keep_panel(session, player, interaction, on_panel)
            return False  # the public table is edited by the publisher

        try:
            return await session.change(step, then=answer)
        except StaleHand:
            # An old private view (from before other moves or a restart): show the current one.
            note = t("rage.hand.stale", locale)
            await reply.edit(**self.hand(session, player, locale, note=note))
        except JokerNeedsColour:
            await reply.edit(**self.hand(session, player, locale, joker=True))
        self.keep_panel(session, player, interaction, on_panel)
        return None

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
        thread="Open the table in a thread of its own (default: the server's setting)",
    )
    @app_commands.choices(bot_level=level_choices(SPEC.levels))
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
        thread: bool | None = None,
    ) -> None:
        """Open a lobby in this channel with the chosen variants."""
        options = {
            "plus_minus_one": plus_minus_one,
            "hidden_bids": hidden_bids,
            "secret_bids": secret_bids,
            "sweep": sweep,
            "turn_seconds": turn_seconds,
        }
        await self.open_table(interaction, options, bots=bots, level=bot_level, thread=thread)

    @group.command(name="stop", description="End the Rage table in this channel")
    @app_commands.guild_only()
    @answers_user_errors
    async def stop(self, interaction: discord.Interaction) -> None:
        """End this channel's lobby or game (host, or Manage Messages)."""
        await self.stop_table(interaction)

    @group.command(name="review", description="Your costliest decisions in a finished Rage game")
    @app_commands.describe(
        number="The game's number in /cardtable history (default: your last game)",
        table="The game's table number, as its replay shows it (default: your last game)",
    )
    @app_commands.guild_only()
    @answers_user_errors
    async def review(
        self,
        interaction: discord.Interaction,
        number: app_commands.Range[int, 1, 10_000] | None = None,
        table: app_commands.Range[int, 1, 2**53] | None = None,
    ) -> None:
        """Review the caller's own decisions in a finished game, privately."""
        await self.show_review(interaction, number, table)

    @group.command(name="rules", description="A short summary of the Rage rules")
    @answers_user_errors
    async def rules(self, interaction: discord.Interaction) -> None:
        """Show the rules privately."""
        await self.show_rules(interaction)

    @group.command(
        name="table", description="Post this channel's table again at the bottom of the channel"
    )
    @app_commands.guild_only()
    @answers_user_errors
    async def table(self, interaction: discord.Interaction) -> None:
        """Re-post the table message, for when it has scrolled away."""
        await self.repost_table(interaction)

    @group.command(
        name="stats", description="A player's Rage games, wins and rating in this server"
    )
    @app_commands.describe(user="Whose stats to show (default: yours)")
    @app_commands.guild_only()
    @answers_user_errors
    async def stats(
        self, interaction: discord.Interaction, user: discord.User | None = None
    ) -> None:
        """Show a person's record in this server privately (computers: via the leaderboard)."""
        await self.show_stats(interaction, user)

    @group.command(
        name="leaderboard", description="This server's best Rage players by skill rating"
    )
    @app_commands.describe(computers="List the computer players too, apart (default: on)")
    @app_commands.guild_only()
    @answers_user_errors
    async def leaderboard(self, interaction: discord.Interaction, computers: bool = True) -> None:
        """Show this server's leaderboard privately, people and computers apart."""
        await self.show_leaderboard(interaction, computers)

    @group.command(name="hand", description="Your hand in this channel's Rage game")
    @app_commands.guild_only()
    @answers_user_errors
    async def hand_command(self, interaction: discord.Interaction) -> None:
        """Show the caller's hand privately, with the bid or card choices on their turn."""
        session = await self.running_session(interaction)
        player = seat_of(interaction, session)
        await self.open_panel(
            interaction, session, player, self.hand(session, player, interaction.locale)
        )
        await self.tables.take_hint(session, player)


def choice_of(click: Click) -> str:
    """The chosen value: a button's argument, or the value of a select from an older view."""
    if click.values:
        if len(click.values) != 1:
            raise ValueError(f"unknown Rage choice {click.action!r} {click.values!r}")
        return click.values[0]
    if click.action == "bid":
        # "3_2": the round, then the bid (older selects carried the round alone).
        return click.arg.partition("_")[2]
    # A second copy of a card in one hand carries "_1" to keep its custom id unique.
    return click.arg.partition("_")[0]


def parse_choice(click: Click) -> Bid | Play | None:
    """The bid or play a click names; None for a Joker whose colour is still to be named."""
    if click.action not in ("bid", "play", "joker"):
        raise ValueError(f"unknown Rage choice {click.action!r} {click.values!r}")
    choice = choice_of(click)
    try:
        if click.action == "bid":
            return Bid(int(choice))
        if click.action == "joker":
            return Play(JOKER, Colour.parse(choice))
        card = Card.parse(choice)
    except ValueError:
        raise TableMovedOn() from None
    return None if card == JOKER else Play(card)


class JokerNeedsColour(TableMovedOn):
    """A Joker was chosen: ask for its colour before anything is played."""


def bid_still_open(engine: Any, player: str, click: Click) -> bool:
    """With simultaneous bids other players' bids move the game on; a bid stays valid."""
    return (
        click.action == "bid"
        and engine.options.simultaneous_bids
        and engine.phase is Phase.BIDDING
        and click.arg.partition("_")[0] == str(engine.round)
        and player in engine.acting_players()
    )


async def setup(bot: CardtableBot) -> None:
    """Load the Rage cog."""
    await bot.add_cog(Rage(bot))
