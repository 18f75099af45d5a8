"""Embeds for `/… stats` and `/… leaderboard`: a player's record and a server's skill board."""

from __future__ import annotations

import discord

from bot.i18n import number, t
from bot.queries.players import (
    BOARD_THRESHOLD,
    BoardEntry,
    Leaderboard,
    NoThanksFigures,
    PlayerStats,
    RageFigures,
    shown_rating,
)
from bot.records.ratings import DISPLAY_BASE, DISPLAY_SCALE
from bot.render.components import TableSelect, static_view
from bot.render.limits import fit
from bot.table.spec import MessageFields, escape_name, one_line

# The leaderboard's select names no table: its choices are answered by the game's cog.
STATS_ACTION = "stats"
NO_TABLE = 0


def computer_label(level: str, locale: object) -> str:
    """How the records name a computer level: "🤖 hard"."""
    # The robot is the whole label in every language: no catalogue entry needed.
    return "🤖 " + t(f"table.level.{level}", locale)


def entry_name(entry: BoardEntry, locale: object) -> str:
    """A board entry's name for markdown: the level of a computer, a person's last name."""
    return computer_label(entry.level, locale) if entry.level else escape_name(entry.name)


def percent(fraction: float) -> str:
    """A fraction as a whole percentage, without the sign (the catalogue places it)."""
    return f"{fraction * 100:.0f}"


def stats_message(
    stats: PlayerStats, name: str, title: str, colour: int, locale: object
) -> MessageFields:
    """A player's record in one game on this server: games, wins, rating and figures.

    ``name`` is shown as it is (the caller escapes a person's name); ``title`` is the
    game's name in the reader's language.
    """
    embed = discord.Embed(
        title=t("stats.title", locale, game=title, player=name), colour=discord.Colour(colour)
    )
    if not stats.games:
        embed.description = t("stats.none", locale, player=name, game=title)
        return fit({"embed": embed})
    win_rate = stats.win_rate or 0.0
    embed.add_field(name=t("stats.games", locale), value=str(stats.games))
    embed.add_field(
        name=t("stats.wins", locale),
        value=t("stats.wins_value", locale, wins=stats.wins, percent=percent(win_rate)),
    )
    embed.add_field(name=t("stats.rating", locale), value=rating_text(stats, locale))
    figures = stats.figures
    if isinstance(figures, NoThanksFigures):
        embed.add_field(
            name=t("stats.nothanks.average_score", locale), value=f"{figures.average_score:.1f}"
        )
        embed.add_field(name=t("stats.nothanks.best_score", locale), value=str(figures.best_score))
        embed.add_field(
            name=t("stats.nothanks.average_chips", locale), value=f"{figures.average_chips:.1f}"
        )
        embed.add_field(
            name=t("stats.nothanks.longest_run", locale),
            value=t("stats.nothanks.cards", locale, count=figures.longest_run),
        )
        embed.set_footer(text=t("stats.nothanks.footer", locale))
    elif isinstance(figures, RageFigures):
        rate = figures.exact_bid_rate
        exact = (
            "—"
            if rate is None
            else t(
                "stats.rage.exact_bids_value",
                locale,
                percent=percent(rate),
                exact=figures.exact_bids,
                count=figures.rounds,
            )
        )
        embed.add_field(name=t("stats.rage.exact_bids", locale), value=exact)
        per_round = figures.points_per_round
        embed.add_field(
            name=t("stats.rage.points_per_round", locale),
            value="—" if per_round is None else number(round(per_round, 1), locale, signed=True),
        )
        embed.add_field(name=t("stats.rage.best_game", locale), value=str(figures.best_game))
        embed.set_footer(text=t("stats.footer", locale))
    else:
        embed.set_footer(text=t("stats.footer", locale))
    return fit({"embed": embed})


def rating_text(stats: PlayerStats, locale: object) -> str:
    """The rating field: the rating, how far the player is from the board, and what the
    number means (the only place μ and σ are shown, and only to whoever asked)."""
    rating = stats.rating
    if rating is None:
        return t("stats.unrated", locale, base=number(DISPLAY_BASE, locale))
    text = t(
        "stats.rating_value",
        locale,
        rating=number(shown_rating(rating.conservative), locale),
        count=rating.games,
    )
    if rating.games_to_board:
        text += "\n" + t("stats.provisional", locale, count=rating.games_to_board)
    explained = t(
        "stats.rating_explained",
        locale,
        base=number(DISPLAY_BASE, locale),
        scale=number(DISPLAY_SCALE, locale),
        mu=number(round(rating.mu, 1), locale),
        sigma=number(round(rating.sigma, 1), locale),
    )
    return f"{text}\n-# {explained}"


def board_lines(entries: tuple[BoardEntry, ...], locale: object) -> str:
    """One line per entry: rank, name, rating and games."""
    return "\n".join(
        t(
            "leaderboard.row",
            locale,
            rank=entry.rank,
            player=entry_name(entry, locale),
            rating=number(shown_rating(entry.rating), locale),
            count=entry.games,
        )
        for entry in entries
    )


def leaderboard_message(
    board: Leaderboard, title: str, colour: int, locale: object
) -> MessageFields:
    """A server's leaderboard: people ranked by μ − 3σ, computers apart; a select for stats."""
    embed = discord.Embed(
        title=t("leaderboard.title", locale, game=title), colour=discord.Colour(colour)
    )
    if board.people:
        lines = board_lines(board.people, locale)
        left_out = board.people_total - len(board.people)
        if left_out > 0:
            lines += "\n" + t("leaderboard.more", locale, count=left_out)
        embed.description = lines
    else:
        embed.description = t("leaderboard.empty", locale, count=BOARD_THRESHOLD)
    if board.computers:
        embed.add_field(
            name=t("leaderboard.computers", locale),
            value=board_lines(board.computers, locale),
            inline=False,
        )
    embed.set_footer(text=t("leaderboard.footer", locale, count=BOARD_THRESHOLD))
    fields: MessageFields = {"embed": embed}
    entries = [*board.people, *board.computers]
    if entries:
        fields["view"] = stats_picker(board.game, entries, locale)
    return fit(fields)


def stats_picker(game: str, entries: list[BoardEntry], locale: object) -> discord.ui.View:
    """A select of the listed players; choosing one shows their stats privately.

    It is the way to a computer's stats (no user option can name a computer). The choice
    carries the records id only: the server is the one the choice is made in.
    """
    options = [
        discord.SelectOption(
            label=f"{entry.rank}. "
            + (computer_label(entry.level, locale) if entry.level else one_line(entry.name)),
            value=entry.player,
        )
        for entry in entries
    ]
    view = static_view()
    view.add_item(
        TableSelect.make(
            game,
            NO_TABLE,
            0,
            STATS_ACTION,
            placeholder=t("leaderboard.pick_placeholder", locale),
            options=options[:25],
        )
    )
    return view
