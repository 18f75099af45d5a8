"""Embeds and texts for Rage tables: the live table, the score sheet, hands, rules."""

from __future__ import annotations

from collections.abc import Sequence

import discord

from bot.engines.rage import JOKER, Card, Colour, Phase, RageState, TrickResult, sort_hand
from bot.engines.rage.cards import CHANGE_TRUMP, MINUS_FIVE, NO_TRUMP, PLUS_FIVE
from bot.engines.rage.scoring import ScoreSheet
from bot.i18n import t
from bot.storage import TableRecord
from bot.tablecog import mention, name_of

COLOUR = discord.Colour(0xC0392B)
SQUARES = {
    Colour.BLUE: "🟦",
    Colour.GREEN: "🟩",
    Colour.RED: "🟥",
    Colour.YELLOW: "🟨",
    Colour.VIOLET: "🟪",
    Colour.ORANGE: "🟧",
}
ACTION_KEYS = {
    JOKER: "rage.card.joker",
    NO_TRUMP: "rage.card.no_trump",
    CHANGE_TRUMP: "rage.card.change_trump",
    PLUS_FIVE: "rage.card.plus_five",
    MINUS_FIVE: "rage.card.minus_five",
}


def colour_name(colour: Colour, locale: object) -> str:
    """A colour with its square, e.g. '🟥 red'."""
    return f"{SQUARES[colour]} {t(f'rage.colour.{colour.code}', locale)}"


def card_name(card: Card, locale: object, named: Colour | None = None) -> str:
    """A card as players read it: '🟥 7', 'Joker (🟦)', 'No Trump'."""
    if card.colour is not None:
        return f"{SQUARES[card.colour]} {card.value}"
    text = t(ACTION_KEYS[card], locale)
    if card == JOKER and named is not None:
        text = f"{text} ({SQUARES[named]})"
    return text


def hand_text(cards: Sequence[Card], locale: object, trump: Colour | None = None) -> str:
    """A hand sorted by colour and value (trump first), action cards last."""
    if not cards:
        return t("rage.hand.empty", locale)
    return " · ".join(card_name(card, locale) for card in sort_hand(cards, trump))


def trump_line(state: RageState, locale: object) -> str:
    """The trump in force, or why there is none."""
    if state.no_trump_this_trick:
        return t("rage.game.no_trump_trick", locale)
    if state.trump is None:
        return t("rage.game.no_trump_round", locale)
    return t("rage.game.trump", locale, colour=colour_name(state.trump, locale))


def trick_line(record: TableRecord, result: TrickResult, locale: object) -> str:
    """Who won the last trick and why."""
    play = result.winning_play
    params = {
        "player": name_of(record, result.winner),
        "card": card_name(play.card, locale, play.colour),
    }
    line = t(f"rage.why.{result.reason.value}", locale, **params)
    if result.bonus:
        line += " " + t("rage.why.bonus", locale, bonus=f"{result.bonus:+d}")
    return line


def bid_text(state: RageState, seat: int, locale: object) -> str:
    """A player's bid as the public may see it."""
    bid = state.visible_bids(None)[seat]
    if bid is not None:
        return str(bid)
    if state.bids[seat] is not None:
        return "✓"  # bid made, value hidden by the variant
    return "…"


def sheet_block(record: TableRecord, sheet: ScoreSheet, locale: object) -> str:
    """The rule book's score sheet as a monospace table: points per round and the totals."""
    names = [name_of(record, player)[:6] for player in sheet.players]
    width = max(5, *(len(name) for name in names))
    lines = ["R  " + " ".join(name.rjust(width) for name in names)]
    for row in sheet.rows:
        if not row.complete:
            continue
        cells = []
        for entry in row.entries:
            cells.append(f"{entry.points:+d}".rjust(width) if entry.points is not None else "")
        lines.append(f"{row.round:<2} " + " ".join(cells))
    lines.append("Σ  " + " ".join(str(total).rjust(width) for total in sheet.totals))
    return "```\n" + "\n".join(lines) + "\n```"


def round_summary(record: TableRecord, sheet: ScoreSheet, locale: object) -> str | None:
    """The last scored round per player: bid, tricks, bonus, round points, total."""
    done = [row for row in sheet.rows if row.complete]
    if not done:
        return None
    row = done[-1]
    lines = [t("rage.sheet.round", locale, round=row.round)]
    for entry in row.entries:
        lines.append(
            t(
                "rage.sheet.entry",
                locale,
                player=name_of(record, entry.player),
                bid="?" if entry.bid is None else entry.bid,
                tricks=entry.tricks,
                bonus=f"{entry.bonus:+d}",
                points=f"{entry.points:+d}" if entry.points is not None else "?",
                total=entry.total,
            )
        )
    return "\n".join(lines)


def game_embed(record: TableRecord, state: RageState, locale: object) -> discord.Embed:
    """The live table: round, dealer, trump, the trick so far, turn, bids, tricks, totals."""
    embed = discord.Embed(title=t("rage.game.title", locale, round=state.round), colour=COLOUR)
    lines = [
        t(
            "rage.game.dealer",
            locale,
            dealer=name_of(record, state.dealer),
            count=state.cards_per_hand,
        ),
        trump_line(state, locale),
    ]
    waiting = state.players_to_act()
    if state.phase is Phase.BIDDING:
        who = ", ".join(mention(record, player) for player in waiting)
        lines.append(t("rage.game.bidding", locale, players=who))
    elif state.phase is Phase.PLAYING and waiting:
        lines.append(t("rage.game.turn", locale, player=mention(record, waiting[0])))
    embed.description = "\n".join(lines)
    trick = state.current_trick
    if state.phase is Phase.PLAYING:
        value = "\n".join(
            f"{name_of(record, play.player)}: {card_name(play.card, locale, play.colour)}"
            for play in trick
        )
        embed.add_field(
            name=t("rage.game.trick", locale, number=state.trick_number),
            value=value or t("rage.game.trick_empty", locale),
            inline=False,
        )
    last = state.last_trick
    if last is not None:
        embed.add_field(
            name=t("rage.game.last_trick", locale),
            value=trick_line(record, last, locale),
            inline=False,
        )
    rows = []
    for seat, player in enumerate(state.players):
        rows.append(
            t(
                "rage.game.player",
                locale,
                player=name_of(record, player),
                bid=bid_text(state, seat, locale),
                tricks=state.tricks_won[seat],
                total=state.totals[seat],
            )
        )
    embed.add_field(name=t("rage.game.players", locale), value="\n".join(rows), inline=False)
    sheet = state.score_sheet(None)
    summary = round_summary(record, sheet, locale)
    if summary is not None:
        embed.add_field(
            name=t("rage.game.sheet", locale),
            value=sheet_block(record, sheet, locale),
            inline=False,
        )
        embed.add_field(name=t("rage.game.last_round", locale), value=summary, inline=False)
    embed.set_footer(text=t("rage.game.footer", locale, table=record.id, move=state.move_number))
    return embed


def final_embed(record: TableRecord, state: RageState, locale: object) -> discord.Embed:
    """Final standings after round 10, with the whole score sheet."""
    outcome = state.outcome()
    assert outcome is not None
    winners = [name_of(record, player) for player in outcome.winners]
    embed = discord.Embed(title=t("rage.final.title", locale), colour=discord.Colour.gold())
    key = "rage.final.winner" if len(winners) == 1 else "rage.final.shared"
    embed.description = t(key, locale, players=", ".join(winners), total=outcome.standings[0].score)
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    embed.add_field(
        name=t("rage.final.standings", locale),
        value="\n".join(
            f"{medals.get(s.rank, f'{s.rank}.')} {name_of(record, s.player)}: {s.score}"
            for s in outcome.standings
        ),
        inline=False,
    )
    sheet = state.score_sheet(None)
    embed.add_field(
        name=t("rage.game.sheet", locale), value=sheet_block(record, sheet, locale), inline=False
    )
    last = state.last_trick
    if last is not None:
        embed.add_field(
            name=t("rage.game.last_trick", locale),
            value=trick_line(record, last, locale),
            inline=False,
        )
    embed.set_footer(text=t("rage.game.footer", locale, table=record.id, move=state.move_number))
    return embed


def rules_embed(locale: object) -> discord.Embed:
    """A short summary of the Rage rules."""
    embed = discord.Embed(title=t("rage.rules.title", locale), colour=COLOUR)
    embed.description = t("rage.rules.intro", locale)
    for part in ("bidding", "tricks", "actions", "scoring", "variants"):
        embed.add_field(
            name=t(f"rage.rules.{part}.title", locale),
            value=t(f"rage.rules.{part}.text", locale),
            inline=False,
        )
    return embed
