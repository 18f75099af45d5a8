"""`/cardtable`: the bot's settings on a server (the language of its tables, pictures, turn
pings, threads), the server's game history with private replays, and forget-me."""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.client.game_cog import pace_choices
from bot.client.guild_settings import NOTIFY_MODES, PACE_PING_MODES, TURN_PING_MODES
from bot.client.replies import answer_error, answers_user_errors
from bot.i18n import language_of, t
from bot.queries.history import load_game, recent_games
from bot.render.images.cache import FILENAME
from bot.render.notices import turns_list
from bot.render.records import (
    ITEMS,
    PAGE_SIZE,
    RECORDS_COG,
    forget_confirmation,
    history_message,
    replay_message,
    replay_picture,
)
from bot.table.errors import UserError
from bot.table.meta import PACES
from bot.table.replay import StoredGame, game_position, new_anonymous_id

if TYPE_CHECKING:
    from bot.client.bot import CardtableBot

log = logging.getLogger(__name__)
# The records' components find this cog by its name.
COG_NAME = RECORDS_COG
# Catalogue code -> the language's own name, as the picker shows it in every locale.
LANGUAGES: dict[str, str] = {"en": "English", "de": "Deutsch", "ru": "Русский", "it": "Italiano"}
# The choice that clears the setting, so tables follow the server's Discord language.
SERVER_DEFAULT = "default"


def language_name(code: str) -> str:
    """A catalogue language by its own name ('de' -> 'Deutsch')."""
    return LANGUAGES.get(code, code)


# A person may be away (/cardtable away) this many days a calendar year, at most.
AWAY_DAYS = 14
DAY = 24 * 3600


def can_configure(interaction: discord.Interaction) -> bool:
    """Whether the user may change the bot's settings here (Manage Server); a UserError
    in a DM (the group works there for `turns`, the server's settings do not)."""
    if interaction.guild_id is None:
        raise UserError("error.guild_only")
    permissions = interaction.permissions
    return bool(permissions.manage_guild or permissions.administrator)


class Cardtable(commands.Cog, name=COG_NAME):
    """Server settings (cached by the language service), history, replays and forget-me."""

    # Open to every member: history and forget-me are for everyone, so the group has no
    # default permission; `language` checks Manage Server itself.
    group = app_commands.Group(
        name="cardtable",
        description="Settings of the cardtable bot on this server",
        # Not guild-only: `turns` (and forget-me) work in a DM with the bot; each command
        # about a server refuses there (error.guild_only).
        guild_only=False,
    )

    def __init__(self, bot: CardtableBot) -> None:
        self.bot = bot
        self.languages = bot.languages
        self.images = bot.images
        self.settings = (
            bot.languages,
            bot.images,
            bot.turn_pings,
            bot.threads,
            bot.pace,
            bot.pace_pings,
        )

    async def cog_load(self) -> None:
        """Answer the records' components; read the settings of servers already connected."""
        self.bot.add_dynamic_items(*ITEMS)
        for guild in self.bot.guilds:
            await self.load_settings(guild.id)

    async def cog_unload(self) -> None:
        """Stop answering the records' components."""
        self.bot.remove_dynamic_items(*ITEMS)

    @commands.Cog.listener()
    async def on_guild_available(self, guild: discord.Guild) -> None:
        """Cache a server's settings when it comes online, before its first click."""
        await self.load_settings(guild.id)

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        """Cache the settings of a server the bot joins (normally none yet)."""
        await self.load_settings(guild.id)

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """Forget a server the bot left; its settings stay stored for a return."""
        for setting in self.settings:
            setting.forget(guild.id)

    async def load_settings(self, guild_id: int) -> None:
        """Read every setting of a server into its cache."""
        for setting in self.settings:
            await setting.load(guild_id)

    def language_for(self, guild_id: int | None) -> str | None:
        """The server's chosen language for public table messages (see GuildLanguages)."""
        return self.languages.language_for(guild_id)

    # -- commands --------------------------------------------------------------------

    @group.command(
        name="language",
        description="Choose the language of public table messages on this server",
    )
    @app_commands.describe(language="The language for lobbies, game tables and final scores")
    @app_commands.choices(
        language=[
            *(app_commands.Choice(name=name, value=code) for code, name in LANGUAGES.items()),
            app_commands.Choice(
                name="Server default (the server's Discord language)",
                value=SERVER_DEFAULT,
            ),
        ]
    )
    @answers_user_errors
    async def language(self, interaction: discord.Interaction, language: str) -> None:
        """Set or clear the server's language for public table messages (Manage Server)."""
        if not can_configure(interaction):
            raise UserError("settings.not_admin")
        assert interaction.guild_id is not None  # the group is guild-only
        if language == SERVER_DEFAULT:
            await self.languages.set(interaction.guild_id, None)
            text = t(
                "settings.language.cleared",
                interaction.locale,
                language=language_name(language_of(interaction.guild_locale)),
            )
        elif language in LANGUAGES:
            await self.languages.set(interaction.guild_id, language)
            text = t("settings.language.set", interaction.locale, language=LANGUAGES[language])
        else:
            # Discord only sends the offered choices; anything else is a bug worth a log.
            raise ValueError(f"unknown language choice {language!r}")
        await interaction.response.send_message(text, ephemeral=True)

    @group.command(
        name="images",
        description="Show pictures of the table in this server's table messages, or text only",
    )
    @app_commands.describe(show="On: a picture of the cards in each table message; off: text only")
    @app_commands.choices(
        show=[
            app_commands.Choice(name="on", value="on"),
            app_commands.Choice(name="off", value="off"),
        ]
    )
    @answers_user_errors
    async def images_setting(self, interaction: discord.Interaction, show: str) -> None:
        """Turn pictures of the table on or off for this server (Manage Server)."""
        if not can_configure(interaction):
            raise UserError("settings.not_admin")
        assert interaction.guild_id is not None  # the group is guild-only
        if show not in ("on", "off"):
            raise ValueError(f"unknown images choice {show!r}")
        await self.images.set(interaction.guild_id, show == "on")
        await interaction.response.send_message(
            t(f"settings.images.{show}", interaction.locale), ephemeral=True
        )
        # Every open table of the server shows the change now, not at its next move: the
        # ones out of memory are loaded for it (after the answer, which must come at once).
        for session in await self.bot.tables.load_guild(interaction.guild_id):
            self.bot.publisher.refresh(session)

    @group.command(name="pings", description="When a turn pings the players it waits for")
    @app_commands.describe(
        when="Every turn: at its start and at half time; half time only: one reminder; off: never"
    )
    @app_commands.choices(
        when=[
            app_commands.Choice(name="every turn", value="every"),
            app_commands.Choice(name="half time only", value="half"),
            app_commands.Choice(name="off", value="off"),
        ]
    )
    @answers_user_errors
    async def pings_setting(self, interaction: discord.Interaction, when: str) -> None:
        """Choose when this server's turns ping the player (Manage Server)."""
        if not can_configure(interaction):
            raise UserError("settings.not_admin")
        assert interaction.guild_id is not None  # the group is guild-only
        if when not in TURN_PING_MODES:
            # Discord sends only the offered choices; an old client's command may not.
            raise UserError("settings.bad_choice", value=when, choices=", ".join(TURN_PING_MODES))
        await self.bot.turn_pings.set(interaction.guild_id, when)
        await interaction.response.send_message(
            t(f"settings.pings.{when}", interaction.locale), ephemeral=True
        )

    @group.command(
        name="threads",
        description="Open new tables in a thread of their own by default, or in the channel",
    )
    @app_commands.describe(
        use="On: each new table opens in a thread, archived when it ends; off: in the channel"
    )
    @app_commands.choices(
        use=[
            app_commands.Choice(name="on", value="on"),
            app_commands.Choice(name="off", value="off"),
        ]
    )
    @answers_user_errors
    async def threads_setting(self, interaction: discord.Interaction, use: str) -> None:
        """Choose whether this server's new tables open in a thread (Manage Server)."""
        if not can_configure(interaction):
            raise UserError("settings.not_admin")
        assert interaction.guild_id is not None  # the group is guild-only
        if use not in ("on", "off"):
            raise UserError("settings.bad_choice", value=use, choices="on, off")
        await self.bot.threads.set(interaction.guild_id, use == "on")
        await interaction.response.send_message(
            t(f"settings.threads.{use}", interaction.locale), ephemeral=True
        )

    @group.command(
        name="pace", description="The pace new tables get by default, and turn-based pings"
    )
    @app_commands.describe(
        default="Live, or turn-based: hours per move for people (a start can still choose)",
        pings="Turn-based tables: a DM only, or a DM and the channel's turn ping",
    )
    @app_commands.choices(
        default=pace_choices(),
        pings=[
            app_commands.Choice(name="DM only", value="dm"),
            app_commands.Choice(name="DM and channel ping", value="both"),
        ],
    )
    @answers_user_errors
    async def pace_setting(
        self, interaction: discord.Interaction, default: str, pings: str | None = None
    ) -> None:
        """Choose the server's default pace and turn-based pings (Manage Server)."""
        if not can_configure(interaction):
            raise UserError("settings.not_admin")
        assert interaction.guild_id is not None  # the group is guild-only
        if default not in PACES:
            raise UserError("settings.bad_choice", value=default, choices=", ".join(PACES))
        if pings is not None and pings not in PACE_PING_MODES:
            choices = ", ".join(PACE_PING_MODES)
            raise UserError("settings.bad_choice", value=pings, choices=choices)
        await self.bot.pace.set(interaction.guild_id, default)
        if pings is not None:
            await self.bot.pace_pings.set(interaction.guild_id, pings)
        mode = self.bot.pace_pings.mode_for(interaction.guild_id)
        locale = interaction.locale
        lines = [self.pace_text(default, locale), t(f"settings.pace_pings.{mode}", locale)]
        await interaction.response.send_message("\n".join(lines), ephemeral=True)

    @staticmethod
    def pace_text(pace: str, locale: object) -> str:
        """The server's default pace, in words."""
        if not PACES[pace]:
            return t("settings.pace.live", locale)
        return t("settings.pace.turn_based", locale, hours=PACES[pace] // 3600)

    @group.command(name="about", description="What cardtable plays, and this server's settings")
    @answers_user_errors
    async def about(self, interaction: discord.Interaction) -> None:
        """Show the games and the server's table language privately."""
        if interaction.guild_id is None:
            raise UserError("error.guild_only")
        locale = interaction.locale
        chosen = self.language_for(interaction.guild_id)
        if chosen in LANGUAGES:
            line = t("settings.about.language", locale, language=LANGUAGES[chosen])
        else:
            current = language_name(language_of(interaction.guild_locale))
            line = t("settings.about.language_default", locale, language=current)
        shown = self.images.images_for(interaction.guild_id)
        pictures = t("settings.about.images_on" if shown else "settings.about.images_off", locale)
        mode = self.bot.turn_pings.mode_for(interaction.guild_id)
        pings = t(f"settings.about.pings.{mode}", locale)
        state = "on" if self.bot.threads.threads_for(interaction.guild_id) else "off"
        thread_line = t(f"settings.about.threads.{state}", locale)
        pace = self.pace_text(self.bot.pace.pace_for(interaction.guild_id), locale)
        pace_pings = t(
            f"settings.pace_pings.{self.bot.pace_pings.mode_for(interaction.guild_id)}", locale
        )
        lines = (
            t("settings.about.text", locale),
            line,
            pictures,
            pings,
            thread_line,
            pace,
            pace_pings,
        )
        await interaction.response.send_message("\n".join(lines), ephemeral=True)

    # -- play by post ----------------------------------------------------------------

    @group.command(name="turns", description="Every table, in every server, waiting for you")
    @answers_user_errors
    async def turns(self, interaction: discord.Interaction) -> None:
        """List privately the turn-based tables waiting for the caller, soonest deadline
        first, with links and the time left (in a server or in a DM with the bot)."""
        locale = interaction.locale
        # From the database (one read, as history's): most turn-based tables are out of
        # memory.
        entries = await self.bot.publisher.notices.waiting(str(interaction.user.id), locale)
        await interaction.response.send_message(**turns_list(entries, locale), ephemeral=True)

    @group.command(name="notify", description="How you hear of your turns at turn-based tables")
    @app_commands.describe(
        when="A DM for every turn, one daily summary of the tables waiting for you, or none"
    )
    @app_commands.choices(
        when=[
            app_commands.Choice(name="every turn", value="every"),
            app_commands.Choice(name="daily summary", value="daily"),
            app_commands.Choice(name="none", value="none"),
        ]
    )
    @answers_user_errors
    async def notify(self, interaction: discord.Interaction, when: str) -> None:
        """Choose, for yourself, how turn-based tables tell you it is your turn (anywhere,
        a DM with the bot included)."""
        if when not in NOTIFY_MODES:
            raise UserError("settings.bad_choice", value=when, choices=", ".join(NOTIFY_MODES))
        await self.bot.notify.set(interaction.user.id, when)
        await interaction.response.send_message(
            t(f"notify.set.{when}", interaction.locale), ephemeral=True
        )

    @group.command(name="away", description="Hold your turn-based deadlines while you are away")
    @app_commands.describe(days="Days away (at most 14 a year); 0: you are back")
    @answers_user_errors
    async def away(
        self, interaction: discord.Interaction, days: app_commands.Range[int, 0, AWAY_DAYS]
    ) -> None:
        """Say you are away for some days (or back): your turn-based tables hold your
        turns meanwhile (anywhere, a DM with the bot included)."""
        user_id = interaction.user.id
        now = self.bot.tables.clock()
        year = datetime.fromtimestamp(now, UTC).year
        until, counted, used = await self.bot.storage.get_user_away(user_id)
        if counted != year:
            used = 0
        if until is not None and until > now:
            # Ending or replacing an absence gives back its whole days not yet taken.
            used = max(used - int((until - now) // DAY), 0)
        elif days == 0:
            raise UserError("away.not_away")
        if used + days > AWAY_DAYS:
            raise UserError("away.over_budget", left=AWAY_DAYS - used)
        await interaction.response.defer(ephemeral=True, thinking=True)
        back = None if days == 0 else now + days * DAY
        # Stamped, so that the processes of other shards hold (or release) their tables
        # of this person's at their next look; this one does so now, and counts them all.
        await self.bot.storage.set_user_away(user_id, back, year, used + days, now)
        count = await self.bot.tables.hold(user_id, back)
        left = AWAY_DAYS - used - days
        locale = interaction.locale
        if back is None:
            text = t("away.back", locale, left=left)
        else:
            text = t("away.set", locale, until=int(back), count=count, left=left)
        await interaction.followup.send(text, ephemeral=True)

    # -- history and replays ---------------------------------------------------------

    @group.command(name="history", description="This server's recent games, to replay")
    @answers_user_errors
    async def history(self, interaction: discord.Interaction) -> None:
        """List the server's recent finished games privately, with a replay for each."""
        await interaction.response.send_message(
            **await self.history_fields(interaction, 0), ephemeral=True
        )

    async def history_fields(self, interaction: discord.Interaction, page: int) -> dict[str, Any]:
        """One page of the asking server's history (one game more tells if a next exists)."""
        if interaction.guild_id is None:
            raise UserError("error.guild_only")
        games = await recent_games(
            self.bot.storage, interaction.guild_id, page * PAGE_SIZE, PAGE_SIZE + 1
        )
        renderers = {name: spec.renderer for name, spec in self.bot.tables.specs.items()}
        return history_message(
            games[:PAGE_SIZE], page, len(games) > PAGE_SIZE, renderers, interaction.locale
        )

    async def show_history_page(self, interaction: discord.Interaction, page: int) -> None:
        """◀ ▶: the history list shows another page."""
        try:
            fields = await self.history_fields(interaction, page)
            await interaction.response.edit_message(**fields)
        except UserError as error:
            await answer_error(interaction, error)

    async def stored_game(self, interaction: discord.Interaction, table_id: int) -> StoredGame:
        """A game of the clicker's server; UserError for any other (a planted id included)."""
        game = await load_game(self.bot.storage, interaction.guild_id, table_id)
        if game is None:
            raise UserError("history.not_found")
        return game

    async def replay_fields(
        self, interaction: discord.Interaction, table_id: int, step: int
    ) -> tuple[dict[str, Any], discord.File | None]:
        """One step of a game's replay, in the clicker's language, and its picture when
        the server shows pictures (painted off the event loop, cached like the table's)."""
        game = await self.stored_game(interaction, table_id)
        spec = self.bot.tables.specs.get(game.game)
        if spec is None:
            raise UserError("error.unavailable")
        try:
            position = game_position(spec, game, step)
        except Exception:
            # A move log this version cannot read (a hand edit, an old back-fill): the
            # history still lists the game, the replay says it cannot show it.
            log.warning("stored game %s does not replay", table_id, exc_info=True)
            raise UserError("replay.broken") from None
        locale = interaction.locale
        picture = None
        if self.bot.images.images_for(interaction.guild_id):
            picture = replay_picture(spec, game, position, locale)
        png = None
        if picture is not None:
            try:
                png = await self.bot.publisher.pictures.paint(picture)
            except Exception:
                log.exception("could not paint step %s of game %s; as text", step, table_id)
        fields = replay_message(spec, game, position, locale, pictures=png is not None)
        if picture is None or png is None:
            return fields, None
        return fields, discord.File(io.BytesIO(png), filename=FILENAME, description=picture.alt)

    async def open_replay(self, interaction: discord.Interaction, table_id: int) -> None:
        """A game chosen in the history list opens as a new private replay, at the deal."""
        try:
            fields, picture = await self.replay_fields(interaction, table_id, 0)
            if picture is not None:
                fields["file"] = picture
            await interaction.response.send_message(**fields, ephemeral=True)
        except UserError as error:
            await answer_error(interaction, error)

    async def show_replay_step(
        self, interaction: discord.Interaction, table_id: int, step: int
    ) -> None:
        """A replay button: the replay message shows another step (and its picture)."""
        try:
            fields, picture = await self.replay_fields(interaction, table_id, step)
            fields["attachments"] = [] if picture is None else [picture]
            await interaction.response.edit_message(**fields)
        except UserError as error:
            await answer_error(interaction, error)

    # -- forget-me -------------------------------------------------------------------

    @group.command(
        name="forget-me",
        description="Remove your name, ratings and stats from the bot's game records",
    )
    @answers_user_errors
    async def forget_me(self, interaction: discord.Interaction) -> None:
        """Explain what forgetting does and ask to confirm, privately."""
        await self.refuse_if_seated(interaction.user.id)
        await interaction.response.send_message(
            **forget_confirmation(interaction.locale), ephemeral=True
        )

    async def refuse_if_seated(self, user_id: int) -> None:
        """UserError while the person sits at an open table (its game would record them),
        in memory or not."""
        if await self.bot.tables.seated_at_open_table(user_id):
            raise UserError("forget.seated")

    async def answer_forget(self, interaction: discord.Interaction, confirmed: bool) -> None:
        """The confirmation's answer: forget the clicker everywhere, or change nothing."""
        locale = interaction.locale
        try:
            if not confirmed:
                await interaction.response.edit_message(
                    content=t("forget.cancelled", locale), view=None
                )
                return
            await self.refuse_if_seated(interaction.user.id)
            # The stored name, for readers of the raw records; messages translate it anew.
            name = t("history.former_player", "en")
            changed = await self.bot.storage.forget_user(
                interaction.user.id, new_anonymous_id(), name
            )
            log.info("forgot a user (%d rows changed)", changed)
            await interaction.response.edit_message(content=t("forget.done", locale), view=None)
        except UserError as error:
            await answer_error(interaction, error)


async def setup(bot: CardtableBot) -> None:
    """Load the settings cog."""
    await bot.add_cog(Cardtable(bot))
