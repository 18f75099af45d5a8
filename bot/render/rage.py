"""Embeds and texts for Rage tables: the live table, the score sheet, hands, rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import discord

from bot.engines.rage import JOKER, Bid, Card, Colour, Phase, Play, RageView, TrickResult, sort_hand
from bot.engines.rage.cards import CHANGE_TRUMP, MINUS_FIVE, NO_TRUMP, PLUS_FIVE
from bot.engines.rage.scoring import ScoreSheet
from bot.i18n import t
from bot.render.components import TableButton, TableSelect, static_view
from bot.render.limits import fit
from bot.render.table import rating_note
from bot.table.spec import MessageFields, TableFacts

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


def trump_line(state: RageView, locale: object) -> str:
    """The trump in force, or why there is none."""
    if state.no_trump_this_trick:
        return t("rage.game.no_trump_trick", locale)
    if state.trump is None:
        return t("rage.game.no_trump_round", locale)
    return t("rage.game.trump", locale, colour=colour_name(state.trump, locale))


def trick_line(facts: TableFacts, result: TrickResult, locale: object) -> str:
    """Who won the last trick and why."""
    play = result.winning_play
    params = {
        "player": facts.name(result.winner),
        "card": card_name(play.card, locale, play.colour),
    }
    line = t(f"rage.why.{result.reason.value}", locale, **params)
    if result.bonus:
        line += " " + t("rage.why.bonus", locale, bonus=f"{result.bonus:+d}")
    return line


def bid_text(state: RageView, seat: int, locale: object) -> str:
    """A player's bid as the public may see it."""
    bid = state.bids[seat]
    if bid is not None:
        return str(bid)
    if state.has_bid[seat]:
        return "✓"  # bid made, value hidden by the variant
    return "…"


def sheet_block(facts: TableFacts, sheet: ScoreSheet, locale: object) -> str:
    """The rule book's score sheet as a monospace table: points per round and the totals."""
    # Inside a code block markdown is not read (escapes would show), but a backtick would
    # end the block: plain names without backticks.
    names = [facts.plain_name(player)[:6] for player in sheet.players]
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


def round_summary(facts: TableFacts, sheet: ScoreSheet, locale: object) -> str | None:
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
                player=facts.name(entry.player),
                bid="?" if entry.bid is None else entry.bid,
                tricks=entry.tricks,
                bonus=f"{entry.bonus:+d}",
                points=f"{entry.points:+d}" if entry.points is not None else "?",
                total=entry.total,
            )
        )
    return "\n".join(lines)


def game_embed(facts: TableFacts, state: RageView, locale: object) -> discord.Embed:
    """The live table: round, dealer, trump, the trick so far, turn, bids, tricks, totals."""
    embed = discord.Embed(title=t("rage.game.title", locale, round=state.round), colour=COLOUR)
    lines = [
        t(
            "rage.game.dealer",
            locale,
            dealer=facts.name(state.dealer),
            count=state.cards_per_hand,
        ),
        trump_line(state, locale),
    ]
    waiting = state.players_to_act
    if state.phase is Phase.BIDDING:
        who = ", ".join(facts.mention(player) for player in waiting)
        lines.append(t("rage.game.bidding", locale, players=who))
    elif state.phase is Phase.PLAYING and waiting:
        lines.append(t("rage.game.turn", locale, player=facts.mention(waiting[0])))
    embed.description = "\n".join(lines)
    trick = state.trick
    if state.phase is Phase.PLAYING:
        value = "\n".join(
            f"{facts.name(play.player)}: {card_name(play.card, locale, play.colour)}"
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
            value=trick_line(facts, last, locale),
            inline=False,
        )
    rows = []
    for seat, player in enumerate(state.players):
        rows.append(
            t(
                "rage.game.player",
                locale,
                player=facts.name(player),
                bid=bid_text(state, seat, locale),
                tricks=state.tricks_won[seat],
                total=state.totals[seat],
            )
        )
    embed.add_field(name=t("rage.game.players", locale), value="\n".join(rows), inline=False)
    sheet = state.score_sheet
    summary = round_summary(facts, sheet, locale)
    if summary is not None:
        embed.add_field(
            name=t("rage.game.sheet", locale),
            value=sheet_block(facts, sheet, locale),
            inline=False,
        )
        embed.add_field(name=t("rage.game.last_round", locale), value=summary, inline=False)
    embed.set_footer(text=t("rage.game.footer", locale, table=facts.id, move=state.move_number))
    return embed


def final_embed(facts: TableFacts, state: RageView, locale: object) -> discord.Embed:
    """Final standings after round 10, with the whole score sheet."""
    outcome = state.outcome
    assert outcome is not None
    winners = [facts.name(player) for player in outcome.winners]
    embed = discord.Embed(title=t("rage.final.title", locale), colour=discord.Colour.gold())
    key = "rage.final.winner" if len(winners) == 1 else "rage.final.shared"
    embed.description = t(key, locale, players=", ".join(winners), total=outcome.standings[0].score)
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    embed.add_field(
        name=t("rage.final.standings", locale),
        value="\n".join(
            f"{medals.get(s.rank, f'{s.rank}.')} {facts.name(s.player)}: {s.score}"
            + rating_note(facts, str(s.player), locale)
            for s in outcome.standings
        ),
        inline=False,
    )
    sheet = state.score_sheet
    embed.add_field(
        name=t("rage.game.sheet", locale), value=sheet_block(facts, sheet, locale), inline=False
    )
    last = state.last_trick
    if last is not None:
        embed.add_field(
            name=t("rage.game.last_trick", locale),
            value=trick_line(facts, last, locale),
            inline=False,
        )
    embed.set_footer(text=t("rage.game.footer", locale, table=facts.id, move=state.move_number))
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


def table_view(facts: TableFacts, state: RageView, locale: object) -> discord.ui.View:
    """The one public button: Show my hand (bids and plays happen in the private view)."""
    view = static_view()
    view.add_item(
        TableButton.make(
            facts.game,
            facts.id,
            state.move_number,
            "hand",
            label=t("rage.button.hand", locale),
            style=discord.ButtonStyle.primary,
            emoji="🂠",
        )
    )
    return view


def hand_message(
    facts: TableFacts,
    view: RageView,
    locale: object,
    *,
    note: str | None = None,
    joker: bool = False,
) -> MessageFields:
    """A player's private view: the sorted hand and, on their turn, exactly the legal choices.

    Within Discord's limits, since the cogs send it as it is.
    """
    assert view.viewer is not None
    seat = view.players.index(view.viewer)
    lines = [note] if note else []
    lines.append(t("rage.hand.title", locale, round=view.round))
    lines.append(hand_text(view.hand, locale, view.trump))
    lines.append(trump_line(view, locale))
    own_bid = view.bids[seat]
    if own_bid is not None:
        lines.append(t("rage.hand.status", locale, bid=own_bid, tricks=view.tricks_won[seat]))
    components = static_view()
    move = view.move_number
    if view.viewer in view.players_to_act:
        legal = view.legal_actions
        if view.phase is Phase.BIDDING:
            lines.append(t("rage.hand.your_bid", locale))
            options = [
                discord.SelectOption(
                    label=t("rage.select.bid", locale, count=a.tricks), value=str(a.tricks)
                )
                for a in legal
                if isinstance(a, Bid)
            ]
            components.add_item(
                TableSelect.make(
                    facts.game,
                    facts.id,
                    move,
                    "bid",
                    placeholder=t("rage.select.bid_placeholder", locale),
                    options=options,
                    arg=str(view.round),
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
            components.add_item(
                TableSelect.make(
                    facts.game,
                    facts.id,
                    move,
                    "joker",
                    placeholder=t("rage.select.colour_placeholder", locale),
                    options=[
                        discord.SelectOption(label=colour_name(c, locale), value=c.code)
                        for c in colours
                    ],
                )
            )
        else:
            lines.append(t("rage.hand.your_turn", locale))
            cards: list[Card] = []
            for action in legal:
                if isinstance(action, Play) and action.card not in cards:
                    cards.append(action.card)
            components.add_item(
                TableSelect.make(
                    facts.game,
                    facts.id,
                    move,
                    "play",
                    placeholder=t("rage.select.card_placeholder", locale),
                    options=[
                        discord.SelectOption(label=card_name(card, locale), value=card.code)
                        for card in sort_hand(cards, view.trump)
                    ],
                )
            )
    return fit({"content": "\n".join(lines), "view": components})


OPTION_NAMES = ("plus_minus_one", "hidden_bids", "secret_bids", "sweep")


class RageRenderer:
    """Rage's messages for the shared table."""

    colour = COLOUR.value

    def title(self, locale: object) -> str:
        """The game's name in a language."""
        return t("game.rage.name", locale)

    def dm_closed_hint(self, locale: object) -> str:
        """Where to see private information when DMs are closed."""
        return t("rage.dm_closed", locale)

    def option_lines(self, options: Mapping[str, Any], locale: object) -> list[str]:
        """The variants in force, or 'standard rules'."""
        lines = [t(f"rage.option.{name}", locale) for name in OPTION_NAMES if options.get(name)]
        return lines or [t("rage.option.none", locale)]

    def table(self, facts: TableFacts, public: RageView, locale: object) -> MessageFields:
        """The live table with its Show my hand button."""
        return {
            "embed": game_embed(facts, public, locale),
            "view": table_view(facts, public, locale),
        }

    def final(self, facts: TableFacts, public: RageView, locale: object) -> MessageFields:
        """The final standings and the whole score sheet."""
        return {"embed": final_embed(facts, public, locale)}

    def private(self, facts: TableFacts, view: RageView, locale: object) -> MessageFields:
        """A player's hand with their legal choices."""
        return hand_message(facts, view, locale)

    def rules(self, locale: object) -> discord.Embed:
        """The rules summary."""
        return rules_embed(locale)

    def describe(self, name: str, value: object, facts: TableFacts, locale: object) -> str | None:
        """A colour or card code from an engine error in words."""
        try:
            if name == "colour" and isinstance(value, str):
                return colour_name(Colour.parse(value), locale)
            if name == "card" and isinstance(value, str):
                return card_name(Card.parse(value), locale)
        except ValueError:
            return None
        return None
