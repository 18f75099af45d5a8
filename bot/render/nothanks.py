"""Embeds for No Thanks! tables: lobby, live game, final scoreboard, private chips, rules."""

from __future__ import annotations

import discord

from bot.engines.nothanks import PASS, NoThanksGame, runs, score
from bot.i18n import t
from bot.storage import TableRecord
from bot.tablecog import mention, name_of

COLOUR = discord.Colour(0xE67E22)
HISTORY_LINES = 5


def format_runs(cards: list[int]) -> str:
    """Cards as runs, lowest card first: '3 · 12–14 · 27'."""
    parts = []
    for run in runs(cards):
        parts.append(str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}")
    return " · ".join(parts)


def history_lines(record: TableRecord, game: NoThanksGame, locale: object) -> list[str]:
    """The last few moves in words, newest last."""
    lines = []
    for move in game.history[-HISTORY_LINES:]:
        player = name_of(record, game.players[move.seat])
        if move.action is PASS:
            lines.append(t("nothanks.log.pass", locale, player=player, card=move.card))
        else:
            lines.append(
                t(
                    "nothanks.log.take",
                    locale,
                    player=player,
                    card=move.card,
                    count=move.chips_on_card,
                )
            )
    return lines


def _player_field_value(game: NoThanksGame, seat: int, locale: object) -> str:
    cards = game.cards[seat]
    if not cards:
        return t("nothanks.game.no_cards", locale)
    points = score(cards, 0)
    return t("nothanks.game.cards", locale, runs=format_runs(cards), points=points)


def game_embed(record: TableRecord, game: NoThanksGame, locale: object) -> discord.Embed:
    """The live table: current card, chips on it, whose turn, pile, players' cards, last moves."""
    embed = discord.Embed(title=t("nothanks.game.title", locale), colour=COLOUR)
    active = game.active_player
    embed.description = "\n".join(
        [
            t(
                "nothanks.game.card",
                locale,
                card=game.current_card,
                count=game.chips_on_card,
            ),
            t("nothanks.game.turn", locale, player=mention(record, active or "")),
            t("nothanks.game.pile", locale, count=game.cards_left),
        ]
    )
    for seat, player in enumerate(game.players):
        name = name_of(record, player)
        if game.open_chips:
            name = t("nothanks.game.player_chips", locale, player=name, count=game.chips[seat])
        if seat == game.active:
            name = f"▶ {name}"
        embed.add_field(name=name, value=_player_field_value(game, seat, locale), inline=True)
    lines = history_lines(record, game, locale)
    if lines:
        embed.add_field(
            name=t("nothanks.game.last_moves", locale), value="\n".join(lines), inline=False
        )
    chips_mode = (
        "nothanks.option.open_chips_on" if game.open_chips else "nothanks.option.open_chips_off"
    )
    embed.set_footer(
        text=t(
            "nothanks.game.footer",
            locale,
            table=record.id,
            move=game.move_number,
            mode=t(chips_mode, locale),
        )
    )
    return embed


def final_embed(record: TableRecord, game: NoThanksGame, locale: object) -> discord.Embed:
    """The final scoreboard: runs, card points, chips, total and rank; the removed cards."""
    standings = game.standings()
    winners = [name_of(record, s.player) for s in standings if s.rank == 1]
    embed = discord.Embed(title=t("nothanks.final.title", locale), colour=discord.Colour.gold())
    key = "nothanks.final.winner" if len(winners) == 1 else "nothanks.final.shared"
    embed.description = t(key, locale, players=", ".join(winners), total=standings[0].total)
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    for row in standings:
        cards = [card for run in row.runs for card in run]
        embed.add_field(
            name=t(
                "nothanks.final.row_title",
                locale,
                medal=medals.get(row.rank, f"{row.rank}."),
                player=name_of(record, row.player),
                total=row.total,
            ),
            value=t(
                "nothanks.final.row",
                locale,
                runs=format_runs(cards) or "—",
                points=row.card_points,
                chips=row.chips,
                total=row.total,
            ),
            inline=False,
        )
    embed.add_field(
        name=t("nothanks.final.removed", locale),
        value=", ".join(str(card) for card in game.removed),
        inline=False,
    )
    embed.set_footer(
        text=t("nothanks.final.footer", locale, table=record.id, moves=game.move_number)
    )
    return embed


def private_text(game: NoThanksGame, player: str, locale: object) -> str:
    """A player's private summary: chips, cards and current score."""
    seat = game.seat_of(player)
    cards = game.cards[seat]
    chips = game.chips[seat]
    lines = [t("nothanks.private.chips", locale, count=chips)]
    if cards:
        lines.append(t("nothanks.private.cards", locale, runs=format_runs(cards)))
    else:
        lines.append(t("nothanks.private.no_cards", locale))
    lines.append(
        t("nothanks.private.score", locale, points=score(cards, 0), total=score(cards, chips))
    )
    if game.active_player == player:
        lines.append(
            t(
                "nothanks.private.your_turn",
                locale,
                card=game.current_card,
                count=game.chips_on_card,
            )
        )
    return "\n".join(lines)


def rules_embed(locale: object) -> discord.Embed:
    """A short summary of the rules."""
    embed = discord.Embed(title=t("nothanks.rules.title", locale), colour=COLOUR)
    embed.description = t("nothanks.rules.intro", locale)
    for part in ("setup", "turn", "end", "scoring"):
        embed.add_field(
            name=t(f"nothanks.rules.{part}.title", locale),
            value=t(f"nothanks.rules.{part}.text", locale),
            inline=False,
        )
    return embed
