"""The Discord side every game shares: parse clicks and commands, call the session, answer.

A game adds a `GameSpec` (engine, renderer, AI, options) and a subclass of
`GameTableCog` with its slash commands and its own buttons; the lobby, the change path,
timers, publishing and errors are shared.
"""

from __future__ import annotations

import io
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.client.replies import Reply, answer_error, reply_ephemeral
from bot.i18n import t
from bot.queries.history import last_game_of, listed_game, load_game
from bot.queries.players import PlayerStats, leaderboard, player_stats
from bot.render.components import Click
from bot.render.images.cache import Picture
from bot.render.review import mistake_picture, picture_name, review_message
from bot.render.stats import STATS_ACTION, computer_label, leaderboard_message, stats_message
from bot.storage import TableRecord
from bot.table.errors import Localized, TableMovedOn, UserError
from bot.table.meta import TableMeta
from bot.table.replay import StoredGame
from bot.table.review import BrokenLog, Review
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec, escape_name, is_computer_id

if TYPE_CHECKING:
    from bot.client.bot import CardtableBot

log = logging.getLogger(__name__)


def level_choices(levels: tuple[str, ...]) -> list[app_commands.Choice[str]]:
    """The bot_level choices for a game that offers these levels."""
    return [app_commands.Choice(name=level, value=level) for level in levels]


LOBBY_ACTIONS = ("join", "leave", "start", "cancel", "addbot")
# How long `/<game> stop` waits for the table's message to show the table closed before it
# answers anyway (the answer is deferred after replies.ANSWER_WITHIN seconds).
STOP_SHOWN_WITHIN = 10.0


def can_manage(interaction: discord.Interaction, host_id: int) -> bool:
    """Whether the user is the host or may manage messages in this channel."""
    if interaction.user.id == host_id:
        return True
    permissions = interaction.permissions
    return bool(permissions.manage_messages or permissions.administrator)


def locale_code(interaction: discord.Interaction) -> str:
    """The clicking user's Discord language, as stored for their DMs."""
    return str(interaction.locale.value)


def computer_name(number: int, level: str, locale: object) -> str:
    """How a computer player is named at the table: "🤖 Computer 2 (hard)"."""
    return t("table.computer_name", locale, number=number, level=t(f"table.level.{level}", locale))


class GameTableCog(commands.Cog):
    """One game's tables on Discord: commands, clicks and answers; the rest is shared."""

    spec: ClassVar[GameSpec]
    # Components that only read (a private view): answered without the table's lock.
    private_actions: ClassVar[tuple[str, ...]] = ()

    def __init__(self, bot: CardtableBot) -> None:
        self.bot = bot
        self.tables = bot.tables
        # Game reviews (shared by the games): worked out in the thinking pool, kept.
        self.reviews = bot.reviews

    async def cog_load(self) -> None:
        """Make the game playable and route its clicks here."""
        self.tables.register(self.spec)
        self.bot.table_cogs[self.spec.name] = self

    async def cog_unload(self) -> None:
        """Stop routing clicks to this cog."""
        self.bot.table_cogs.pop(self.spec.name, None)

    # -- what a game adds ---------------------------------------------------------------

    async def show_private(
        self, interaction: discord.Interaction, session: TableSession, click: Click
    ) -> None:
        """Answer a read-only component with the player's private view."""
        player = seat_of(interaction, session)
        view = session.player_view(player)
        locale = interaction.locale
        await interaction.response.send_message(
            **session.spec.renderer.private(session.facts(), view, locale), ephemeral=True
        )

    async def game_click(
        self, interaction: discord.Interaction, reply: Reply, session: TableSession, click: Click
    ) -> Draft | None:
        """A click or choice of the game's own; return the saved change, if any."""
        raise TableMovedOn()

    # -- rendering and answering ------------------------------------------------------------

    def table_locale(self, session: TableSession) -> object:
        """The language of the table's public messages."""
        return self.bot.publisher.tables.table_locale(session)

    def answer_on_table(
        self, interaction: discord.Interaction, reply: Reply, session: TableSession
    ) -> Callable[[], Awaitable[bool]]:
        """After a saved change: edit the table message through the click, if it is on it."""

        async def answer() -> bool:
            message = interaction.message
            if message is not None and message.id in (session.record.message_id, None):
                return await self.bot.publisher.tables.answer_click(reply, session)
            # A click on an older message of this table (it was posted again): answer by
            # turning that one into a pointer; the publisher edits the current message.
            await reply.edit(**self.bot.publisher.tables.pointer(session, interaction.locale))
            return False

        return answer

    # -- clicks ---------------------------------------------------------------------------

    async def on_click(self, interaction: discord.Interaction, click: Click) -> None:
        """Every button click or select choice: route it, answer errors in one place."""
        try:
            await self._route(interaction, click)
        except TableMovedOn as error:
            # Out of date: say why when it is because the table was stopped.
            stopped = await self.stopped_answer(interaction, click)
            await answer_error(interaction, stopped or error)
        except Exception as error:
            await answer_error(
                interaction, error, context=f"{click.game} table {click.table_id} ({click.action})"
            )
        session = self.tables.get(click.table_id)
        if session is not None and self.bot.publisher.tables.owes_notice(
            session, interaction.user.id
        ):
            # The table's message can neither be edited nor posted: say why, privately.
            await reply_ephemeral(interaction, t("table.cannot_post", interaction.locale))

    async def stopped_answer(
        self, interaction: discord.Interaction, click: Click
    ) -> UserError | None:
        """What to answer a click on a table that was stopped (by whom, when known), or
        None if the click's table was not stopped lately.

        The table's public message changes a moment after the stop (the outbound lane
        edits it), and stale clients keep showing the old buttons: such a click is told
        the table was stopped, not that it "moved on" to a later turn.
        """
        # From the table's row when it is not remembered: known across restarts.
        stopped = await self.tables.stopped_row(click.table_id)
        if (
            stopped is None
            or stopped.game != click.game
            or stopped.channel_id != interaction.channel_id
            or stopped.guild_id != interaction.guild_id
        ):
            return None  # as session_for: a forged id learns nothing of another table
        if stopped.reason == "expired":
            return UserError("closed.expired")
        if stopped.by is None:
            return UserError("table.stopped_unknown")
        return UserError("table.stopped_by", user=f"<@{stopped.by}>")

    async def session_for(self, interaction: discord.Interaction, click: Click) -> TableSession:
        """The open table a click names (loaded from its row if it is not in memory),
        checked against where the click came from."""
        session = await self.tables.load(click.table_id, interaction.channel_id)
        if (
            session is None
            or session.spec.name != click.game
            or session.channel_id != interaction.channel_id
            or session.record.guild_id != interaction.guild_id
        ):
            # Custom ids are visible to every client: one naming another channel's,
            # server's or game's table is treated as out of date, never obeyed.
            raise TableMovedOn()
        return session

    async def _route(self, interaction: discord.Interaction, click: Click) -> None:
        if click.action == "rematch":
            await self.rematch(interaction, click.table_id)
            return
        if click.action == STATS_ACTION:
            # A leaderboard's select names no table: it only reads the records.
            await self.stats_choice(interaction, click)
            return
        session = await self.session_for(interaction, click)
        if click.action in self.private_actions:
            await self.show_private(interaction, session, click)
            # The private view is what the closed-DM hint would point to: no hint needed.
            await self.tables.take_hint(session, str(interaction.user.id))
            return
        async with Reply(interaction) as reply:
            if click.action in LOBBY_ACTIONS or click.action == "back":
                step = self.table_step(interaction, session, click)
                await session.change(step, then=self.answer_on_table(interaction, reply, session))
            else:
                await self.game_click(interaction, reply, session, click)
        # The change's DMs are already queued in the outbound lane (the table core hands
        # them over under the lock): the answer never waits for them.
        await self.hint_if_dm_closed(interaction, session)

    def table_step(
        self, interaction: discord.Interaction, session: TableSession, click: Click
    ) -> Callable[[Draft], Any]:
        """The change a lobby button or "I'm back" makes."""
        user = interaction.user
        action = click.action
        if action == "join":
            name = user.display_name
            return lambda d: d.join(user.id, name, locale_code(interaction))
        if action == "leave":
            return lambda d: d.leave(user.id)
        if action == "start":
            seed = secrets.randbits(63)
            return lambda d: d.start(user.id, seed)
        if action == "cancel":
            manage = can_manage(interaction, session.record.host_id)
            return lambda d: d.cancel(user.id, manage)
        if action == "addbot":
            level = click.values[0] if click.values else "normal"
            locale = self.table_locale(session)

            def add(draft: Draft) -> None:
                number = len(draft.meta.computers) + 1
                draft.add_computer(user.id, level, computer_name(number, level, locale))

            return add
        player = seat_of(interaction, session)
        return lambda d: d.back(player)

    async def hint_if_dm_closed(
        self, interaction: discord.Interaction, session: TableSession
    ) -> None:
        """Tell a player once, privately, that their DMs are closed."""
        if await self.tables.take_hint(session, str(interaction.user.id)):
            hint = self.spec.renderer.dm_closed_hint(interaction.locale)
            await reply_ephemeral(interaction, hint)

    # -- commands -------------------------------------------------------------------------

    async def open_table(
        self,
        interaction: discord.Interaction,
        options: Mapping[str, Any],
        *,
        bots: int = 0,
        level: str = "normal",
        thread: bool | None = None,
    ) -> None:
        """`/<game> start`: open a lobby here with the caller as host and first seat; in a
        thread of its own with ``thread`` True, or where the server's default says so
        (None: follow it)."""
        if interaction.guild_id is None:
            # Discord applies guild_only to top-level commands only: a DM reaches here.
            raise UserError("error.guild_only")
        channel_id = interaction.channel_id
        assert channel_id is not None
        user = interaction.user
        guild_locale = interaction.guild_locale
        record = TableRecord(
            game=self.spec.name,
            guild_id=interaction.guild_id,
            channel_id=channel_id,
            host_id=user.id,
            options=self.spec.parse_options(options),
            meta={"locale": None if guild_locale is None else str(guild_locale.value)},
        )
        locale = self.bot.languages.language_for(interaction.guild_id) or guild_locale

        def seat(draft: Draft) -> None:
            draft.join(user.id, user.display_name, locale_code(interaction))
            for number in range(1, bots + 1):
                draft.seat_computer(level, computer_name(number, level, locale))

        in_thread, not_followed = self.thread_choice(interaction, thread)
        if in_thread:
            await self.open_in_thread(interaction, record, seat, explicit=thread is not None)
            return
        await self.open_lobby(interaction, record, seat)
        if not_followed is not None:
            note = t("table.thread_fallback", interaction.locale, reason=not_followed)
            await reply_ephemeral(interaction, note)

    def thread_choice(
        self, interaction: discord.Interaction, thread: bool | None
    ) -> tuple[bool, str | None]:
        """Whether to open the table in a new thread, and why the server's default of
        threads could not be followed here (None: it could, or it is off).

        An explicit ``thread`` True that cannot be followed is refused (UserError): the
        person asked for a thread and gets a clear reason and a way on, not a table
        where they did not want it. The server's default falls back to the channel with
        a private note instead, so that a channel where threads are impossible still
        hosts tables.
        """
        explicit = thread is not None
        if not (thread if explicit else self.bot.threads.threads_for(interaction.guild_id)):
            return False, None
        kind = getattr(interaction.channel, "type", None)
        if kind in THREAD_TYPES:
            if explicit:
                raise UserError("table.thread_in_thread")
            return False, None  # already in a thread: the table sits in it
        if kind not in THREAD_PARENTS:
            if explicit:
                raise UserError("table.thread_not_here")
            return False, None
        granted = interaction.app_permissions
        missing = [name for name in THREAD_PERMISSIONS if not getattr(granted, name)]
        if missing:
            names = ", ".join(t(f"permission.{name}", interaction.locale) for name in missing)
            if explicit:
                raise UserError("table.thread_missing_permissions", permissions=names)
            return False, names
        return True, None

    async def open_in_thread(
        self,
        interaction: discord.Interaction,
        record: TableRecord,
        seat: Callable[[Draft], None],
        *,
        explicit: bool,
    ) -> None:
        """Open the lobby in a new thread of the channel, named after the game and host.

        Creating the thread and posting in it are two requests through the outbound lane,
        so the command is deferred first (privately: its answer only points to the
        thread). If Discord refuses the thread, an explicit request is refused; the
        server's default falls back to the channel.
        """
        require_permissions(interaction)
        await interaction.response.defer(ephemeral=True, thinking=True)
        channel_id = record.channel_id
        threads = self.bot.publisher.threads
        locale = self.bot.languages.language_for(interaction.guild_id) or interaction.guild_locale
        name = t(
            "table.thread_name",
            locale,
            game=self.spec.renderer.title(locale),
            host=interaction.user.display_name,
        )
        try:
            thread_id = await threads.create(channel_id, name, key=interaction.id)
        except discord.HTTPException as error:
            log.warning("could not open a thread in channel %s: %s", channel_id, error)
            reason = t("table.thread_failed", interaction.locale)
            if explicit:
                raise UserError("table.thread_refused", reason=reason) from None
            await self.tables.open(
                self.spec, record, seat=seat, post=self.poster(channel_id, record.guild_id)
            )
            await reply_ephemeral(
                interaction, t("table.thread_fallback", interaction.locale, reason=reason)
            )
            return
        record.channel_id = thread_id
        record.meta["thread"] = channel_id
        try:
            await self.tables.open(
                self.spec, record, seat=seat, post=self.poster(thread_id, record.guild_id)
            )
        except BaseException:
            threads.abandon(thread_id)
            raise
        await reply_ephemeral(
            interaction, t("table.thread_opened", interaction.locale, thread=f"<#{thread_id}>")
        )

    def poster(
        self, channel_id: int, guild_id: int | None
    ) -> Callable[[TableSession], Awaitable[int]]:
        """How a lobby is posted outside the interaction's answer: a new message in the
        channel (or thread), through the outbound lane; it returns the message's id."""

        async def post(session: TableSession) -> int:
            fields = self.bot.publisher.tables.render(session)
            fields["allowed_mentions"] = discord.AllowedMentions.none()
            return await self.bot.publisher.threads.post(channel_id, guild_id, **fields)

        return post

    async def open_lobby(
        self,
        interaction: discord.Interaction,
        record: TableRecord,
        seat: Callable[[Draft], None],
        *,
        content: str | None = None,
        ping: Sequence[int] = (),
    ) -> TableSession:
        """Open a lobby and post it as the answer to this interaction."""
        require_permissions(interaction)

        async def post(session: TableSession) -> int:
            fields = self.bot.publisher.tables.render(session)
            if content is not None:
                fields["content"] = content
            fields["allowed_mentions"] = discord.AllowedMentions(
                everyone=False, roles=False, users=[discord.Object(p) for p in ping]
            )
            sent = await interaction.response.send_message(**fields)
            if sent.message_id is not None:
                return sent.message_id
            # Discord did not say which message it created: ask (one more request).
            message = await interaction.original_response()
            return message.id

        return await self.tables.open(self.spec, record, seat=seat, post=post)

    async def rematch(self, interaction: discord.Interaction, table_id: int) -> None:
        """Rematch: a lobby with the same options, hosted by the clicker; others are invited.

        Only the clicker is seated (and the computers, with their levels); the other former
        players are listed as invited and mentioned once, and each joins with Join. A
        finished table is rematched once, so nobody can ping the others again and again.
        """
        old = await self.tables.storage.get_table(table_id)
        if (
            old is None
            or old.status != "finished"
            or old.game != self.spec.name
            or old.channel_id != interaction.channel_id
            or old.guild_id != interaction.guild_id
        ):
            raise TableMovedOn()
        user = interaction.user
        if user.id not in old.seats:
            raise UserError("table.rematch_not_player")
        if await self.tables.storage.rematch_opened(table_id):
            raise TableMovedOn()
        old_meta = TableMeta.from_dict(old.meta)
        invited = [p for p in old.seats if not is_computer_id(p) and p != user.id]
        record = TableRecord(
            game=self.spec.name,
            guild_id=old.guild_id,
            channel_id=old.channel_id,
            host_id=user.id,
            options=dict(old.options),
            meta={"locale": old_meta.locale, "rematch_of": table_id, "invited": invited},
        )
        if old_meta.thread is not None:
            # The same thread of ours: archived again when the rematch ends (posting in
            # it takes it out of the archive).
            record.meta["thread"] = old_meta.thread

        def seat(draft: Draft) -> None:
            # The clicker and the computers keep their seats in the old order.
            for player in old.seats:
                if player == user.id:
                    draft.join(user.id, user.display_name, locale_code(interaction))
                elif is_computer_id(player):
                    key = str(player)
                    draft.record.seats.append(player)
                    draft.meta.computers[key] = old_meta.computers.get(key, "normal")
                    draft.meta.names[key] = old_meta.names.get(key, key)

        content = None
        if invited:
            mentions = ", ".join(f"<@{p}>" for p in invited)
            content = t("lobby.invite_ping", self.table_locale_of(old), players=mentions)
        await self.open_lobby(interaction, record, seat, content=content, ping=invited)

    def table_locale_of(self, record: TableRecord) -> object:
        """The language of a stored table's public messages."""
        chosen = self.bot.languages.language_for(record.guild_id)
        return chosen or record.meta.get("locale")

    async def repost_table(self, interaction: discord.Interaction) -> None:
        """`/<game> table`: post this channel's table again at the bottom of the channel."""
        assert interaction.channel_id is not None
        session = await self.tables.load_in_channel(interaction.channel_id)
        if session is None or session.spec.name != self.spec.name:
            raise UserError("table.no_game_here", game=self.spec.renderer.title(interaction.locale))
        require_permissions(interaction)
        old_message = session.record.message_id
        async with session.lock:
            send = interaction.response.send_message
            sent, picture = await self.bot.publisher.tables.send_table(session, send)
            message_id = sent.message_id
            if message_id is None:
                message_id = (await interaction.original_response()).id
            self.bot.publisher.pictures.carries(message_id, picture)
            await session.change_locked(lambda d: d.set_message(message_id), then=_published)
        if old_message is not None and old_message != session.record.message_id:
            # The old copy points to the new one, so its buttons are not used by mistake.
            tables = self.bot.publisher.tables
            tables.point_old_copy(session, old_message, self.table_locale(session))

    async def stop_table(self, interaction: discord.Interaction) -> None:
        """`/<game> stop`: end this channel's lobby or game (host, or Manage Messages)."""
        assert interaction.channel_id is not None
        session = await self.tables.load_in_channel(interaction.channel_id)
        if session is None:
            raise UserError("table.none_here")
        manage = can_manage(interaction, session.record.host_id)
        async with Reply(interaction) as reply:
            await session.change(lambda d: d.stop(interaction.user.id, manage))
            # The answer says the table is stopped once its message says so too, so the
            # two never disagree on screen; deferred meanwhile if that takes long (Reply),
            # and given at the latest after STOP_SHOWN_WITHIN seconds.
            await self.bot.publisher.tables.shown(session, STOP_SHOWN_WITHIN)
            await reply.send(t("table.stopped", interaction.locale))

    async def running_session(self, interaction: discord.Interaction) -> TableSession:
        """This channel's running game of this cog's game, or a UserError."""
        assert interaction.channel_id is not None
        session = await self.tables.load_in_channel(interaction.channel_id)
        if session is None or session.status != "running" or session.spec.name != self.spec.name:
            raise UserError("table.no_game_here", game=self.spec.renderer.title(interaction.locale))
        return session

    async def show_rules(self, interaction: discord.Interaction) -> None:
        """`/<game> rules`: the rules summary, privately."""
        await interaction.response.send_message(
            embed=self.spec.renderer.rules(interaction.locale), ephemeral=True
        )

    # -- records: stats and leaderboards (per server, answered privately) -----------------
    #
    # Both answers are ephemeral: a leaderboard asked for in a game channel would otherwise
    # push the table up; anyone may ask for it again, and share it by screenshot.

    async def show_stats(
        self, interaction: discord.Interaction, user: discord.User | discord.Member | None
    ) -> None:
        """`/<game> stats [user]`: a person's record and rating in this server, privately."""
        who = user or interaction.user
        stats = await self.stats_of(interaction, str(who.id))
        await self.send_stats(interaction, stats, escape_name(who.display_name))

    async def stats_choice(self, interaction: discord.Interaction, click: Click) -> None:
        """A player chosen in a leaderboard's select (computers too): their stats, privately."""
        player = click.values[0] if click.values else ""
        if interaction.guild_id is None or not player:
            raise TableMovedOn()
        stats = await self.stats_of(interaction, player)
        if stats.level is not None:
            name = computer_label(stats.level, interaction.locale)
        else:
            name = escape_name(stats.name) if stats.name else f"<@{player}>"
        await self.send_stats(interaction, stats, name)

    async def stats_of(self, interaction: discord.Interaction, player: str) -> PlayerStats:
        """A player's stats in this game on the interaction's server (and no other)."""
        assert interaction.guild_id is not None
        return await player_stats(self.tables.storage, interaction.guild_id, self.spec.name, player)

    async def send_stats(
        self, interaction: discord.Interaction, stats: PlayerStats, name: str
    ) -> None:
        """Answer privately with a player's stats embed."""
        renderer = self.spec.renderer
        locale = interaction.locale
        fields = stats_message(stats, name, renderer.title(locale), renderer.colour, locale)
        await interaction.response.send_message(**fields, ephemeral=True)

    async def show_leaderboard(self, interaction: discord.Interaction, computers: bool) -> None:
        """`/<game> leaderboard`: this server's best players by skill rating, privately."""
        assert interaction.guild_id is not None
        board = await leaderboard(
            self.tables.storage, interaction.guild_id, self.spec.name, computers=computers
        )
        renderer = self.spec.renderer
        locale = interaction.locale
        fields = leaderboard_message(board, renderer.title(locale), renderer.colour, locale)
        await interaction.response.send_message(**fields, ephemeral=True)

    # -- game reviews (private; the work runs in the thinking pool) ------------------------

    async def show_review(
        self, interaction: discord.Interaction, number: int | None, table: int | None
    ) -> None:
        """`/<game> review [number | table]`: the caller's costliest decisions, privately.

        Deferred first: working a review out takes seconds of a worker's time.
        """
        if interaction.guild_id is None:
            raise UserError("error.guild_only")
        await interaction.response.defer(ephemeral=True, thinking=True)
        game = await self.game_to_review(interaction, number, table)
        player = str(interaction.user.id)
        seat = next((seat for seat in game.seats if seat.player == player), None)
        if seat is None:
            raise UserError("review.not_yours")
        try:
            review = await self.reviews.review(self.spec, game, seat.seat_player)
        except BrokenLog:
            # A move log this version cannot read back, as the replay would say.
            log.warning("game %s could not be reviewed", game.table_id, exc_info=True)
            raise UserError("replay.broken") from None
        fields, files = await self.review_fields(interaction, game, review)
        await interaction.edit_original_response(**fields, attachments=files)

    async def game_to_review(
        self, interaction: discord.Interaction, number: int | None, table: int | None
    ) -> StoredGame:
        """The game a review asks for: the caller's last one of this game, the history
        list's ``number``, or the game at ``table``; UserError with the reason otherwise."""
        guild_id = interaction.guild_id
        assert guild_id is not None
        storage = self.tables.storage
        title = Localized(self.spec.renderer.title)
        if number is not None and table is not None:
            raise UserError("review.both")
        if number is not None:
            table_id = await listed_game(storage, guild_id, number)
            if table_id is None:
                raise UserError("review.no_number", number=number)
        elif table is not None:
            table_id = table
        else:
            last = await last_game_of(storage, guild_id, str(interaction.user.id), self.spec.name)
            if last is None:
                raise UserError("review.none", game=title)
            table_id = last
        game = await load_game(storage, guild_id, table_id)
        if game is None:
            record = await storage.get_table(table_id)
            if record is not None and record.guild_id == guild_id and record.status == "running":
                raise UserError("review.running")
            raise UserError("history.not_found")
        if game.game != self.spec.name:
            other = self.tables.specs.get(game.game)
            name = Localized(other.renderer.title) if other is not None else game.game
            raise UserError("review.other_game", game=name)
        return game

    async def review_fields(
        self, interaction: discord.Interaction, game: StoredGame, review: Review
    ) -> tuple[dict[str, Any], list[discord.File]]:
        """The review's message in the caller's language, and the pictures it shows (where
        the server shows pictures; painted off the event loop, like a replay's)."""
        locale = interaction.locale
        reviewer = self.spec.reviewer
        assert reviewer is not None
        files: list[discord.File] = []
        shown: list[bool] = []
        with_pictures = self.bot.images.images_for(interaction.guild_id)
        for rank, mistake in enumerate(review.mistakes, start=1):
            picture: Picture | None = None
            if with_pictures:
                picture = mistake_picture(self.spec, game, mistake, locale)
            png = None
            if picture is not None:
                try:
                    png = await self.bot.publisher.pictures.paint(picture)
                except Exception:
                    log.exception("could not paint a review of game %s; as text", game.table_id)
            shown.append(png is not None)
            if picture is not None and png is not None:
                name = picture_name(rank)
                files.append(discord.File(io.BytesIO(png), filename=name, description=picture.alt))
        samples = self.reviews.budget.samples or reviewer.samples
        fields = review_message(
            self.spec, game, review, reviewer.level, samples, locale, pictures=shown
        )
        return fields, files


# What a table needs in its channel: see it, post and edit its message, embeds, replies.
REQUIRED_PERMISSIONS = ("view_channel", "send_messages", "embed_links", "read_message_history")
# What a table in a thread of its own needs besides: to open the thread and post in it.
THREAD_PERMISSIONS = ("create_public_threads", "send_messages_in_threads")
# Channels a table's thread can be opened from, and the channels that are threads.
THREAD_PARENTS = (discord.ChannelType.text, discord.ChannelType.news)
THREAD_TYPES = (
    discord.ChannelType.public_thread,
    discord.ChannelType.private_thread,
    discord.ChannelType.news_thread,
)


def require_permissions(interaction: discord.Interaction) -> None:
    """Refuse, naming what is missing, to open a table where the bot could not show it."""
    granted = interaction.app_permissions
    missing = [name for name in REQUIRED_PERMISSIONS if not getattr(granted, name)]
    if missing:
        names = ", ".join(t(f"permission.{name}", interaction.locale) for name in missing)
        raise UserError("table.missing_permissions", permissions=names)


async def _published() -> bool:
    """For a change whose message is being posted by its caller."""
    return True


def seat_of(interaction: discord.Interaction, session: TableSession) -> str:
    """The clicking player's id, or a UserError if they have no seat."""
    if interaction.user.id not in session.record.seats:
        raise UserError("table.not_seated")
    return str(interaction.user.id)
