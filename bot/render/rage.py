"""Embeds and texts for Rage tables: the live table, the score sheet, hands, rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import discord

from bot.engines.rage import (
    JOKER,
    Bid,
    Card,
    Colour,
    Phase,
    Play,
    RageView,
    TrickPlay,
    TrickResult,
    resolve_trick,
    sort_hand,
)
from bot.engines.rage.cards import CHANGE_TRUMP, MINUS_FIVE, NO_TRUMP, PLUS_FIVE
from bot.engines.rage.scoring import ScoreSheet
from bot.i18n import t
from bot.render.components import balanced_rows, custom_id, static_view
from bot.render.images import rage as pictures
from bot.render.images.cache import Picture
from bot.render.images.cards import RAGE_SHAPE
from bot.render.limits import fit, words
from bot.render.table import SHORT_NAME, alt_text, line_name, rating_note
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
# The shape each colour has in the pictures (RAGE_SHAPE), as a glyph: colour is never told
# by hue alone (green, red, yellow and orange merge for deuteranopes).
GLYPHS = {"circle": "●", "triangle": "▲", "heart": "♥", "star": "★", "diamond": "◆", "cross": "✚"}
SHAPES = {colour: GLYPHS[RAGE_SHAPE[colour.code]] for colour in Colour}
# A colour's square, shape and number or name are one token: joined by a WORD JOINER and
# NO-BREAK SPACEs, a phone never wraps a line between them ('🟥' ending one line, '♥ 6'
# starting the next).
WORD_JOINER = "\u2060"
NBSP = "\u00a0"
# What stands for a colour in text and on buttons: its square and its shape, e.g. '🟦●'.
TOKENS = {colour: f"{SQUARES[colour]}{WORD_JOINER}{SHAPES[colour]}" for colour in Colour}
ACTION_KEYS = {
    JOKER: "rage.card.joker",
    NO_TRUMP: "rage.card.no_trump",
    CHANGE_TRUMP: "rage.card.change_trump",
    PLUS_FIVE: "rage.card.plus_five",
    MINUS_FIVE: "rage.card.minus_five",
}


def colour_name(colour: Colour, locale: object) -> str:
    """A colour with its token, e.g. '🟥♥ red'."""
    name = t(f"rage.colour.{colour.code}", locale).replace(" ", NBSP)
    return f"{TOKENS[colour]}{NBSP}{name}"


def card_name(card: Card, locale: object, named: Colour | None = None) -> str:
    """A card as players read it: '🟥♥ 7', 'Joker (🟦●)', 'No Trump'."""
    if card.colour is not None:
        return f"{TOKENS[card.colour]}{NBSP}{card.value}"
    text = t(ACTION_KEYS[card], locale)
    if card == JOKER and named is not None:
        text = f"{text}{NBSP}({TOKENS[named]})"
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
    if state.phase is Phase.PLAYING and any(play.card == CHANGE_TRUMP for play in state.trick):
        # Change Trump turned up a new trump (or found none) for this trick already.
        if state.trump is None:
            return t("rage.game.trump_changed_none", locale)
        return t("rage.game.trump_changed", locale, colour=colour_name(state.trump, locale))
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
        line += " " + t("rage.why.bonus", locale, bonus=signed(result.bonus))
    return line


def bid_text(state: RageView, seat: int, locale: object) -> str:
    """A player's bid as the public may see it."""
    bid = state.bids[seat]
    if bid is not None:
        return str(bid)
    if state.has_bid[seat]:
        return "✓"  # bid made, value hidden by the variant
    return "…"


def signed(points: int) -> str:
    """Round points as a score sheet shows them: +12, −1 (a real minus sign), 0."""
    return f"+{points}" if points > 0 else f"−{-points}" if points < 0 else "0"


def total_text(total: int) -> str:
    """A total as a score sheet shows it: 19, −4 (the same real minus sign as `signed`)."""
    return f"−{-total}" if total < 0 else str(total)


def sheet_block(facts: TableFacts, sheet: ScoreSheet, locale: object) -> str:
    """The score sheet, one line per player: 'Ana: Rd 1 +12 · Rd 2 −1 · Rd 3 +8 = 19'.

    One short line per player reads on a phone, where a grid of ten columns did not; each
    round's points carry its label, held together by no-break spaces when the line wraps.
    """
    lines = []
    for seat, player in enumerate(sheet.players):
        points = [
            t("rage.sheet.round_points", locale, round=row.round, points=signed(points))
            for row in sheet.rows
            if row.complete and (points := row.entries[seat].points) is not None
        ]
        results = " · ".join(point.replace(" ", "\u00a0") for point in points) or "…"
        lines.append(f"{facts.name(player)}: {results} = **{total_text(sheet.totals[seat])}**")
    return "\n".join(lines)


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
                bonus=signed(entry.bonus),
                points=signed(entry.points) if entry.points is not None else "?",
                total=total_text(entry.total),
            )
        )
    return "\n".join(lines)


def game_embed(
    facts: TableFacts, state: RageView, locale: object, *, pictures: bool = False
) -> discord.Embed:
    """The live table in a phone's screen: the trick (unless the picture shows it), whose
    turn, one line per player, and the last trick or the last round's points.

    The score sheet is a tap away (Scores); nothing is said twice.
    """
    embed = discord.Embed(title=t("rage.game.title", locale, round=state.round), colour=COLOUR)
    # While a round is bid the trump is public and decides the bids: said in the text even
    # when the picture shows it too (between rounds the picture is the score sheet).
    if not pictures:
        lines = [trump_line(state, locale), *trick_lines(facts, state, locale)]
    elif state.phase is Phase.BIDDING:
        lines = [trump_line(state, locale)]
    else:
        lines = []
    # Whose turn it is (in play, or who still bids) is the message's own line ('▶ @Ana:
    # your turn', which pings); the embed only marks those players' rows, so a computer's
    # turn shows too, and the alt text names them.
    lines += [
        player_line(facts, state, seat, locale, marked=True) for seat in range(len(state.players))
    ]
    latest = latest_line(facts, state, locale)
    if latest is not None:
        lines.append(latest)
    embed.description = "\n".join(lines)
    embed.set_footer(text=t("rage.game.footer", locale, table=facts.id, move=state.move_number))
    return embed


# A name's length in the round-scored line (see latest_line).
ROUND_NAME = 14


def latest_line(facts: TableFacts, state: RageView, locale: object) -> str | None:
    """The last trick of this round, labelled with its number; at a round's start, what
    the round just scored gave each player instead (never a trick of an earlier round)."""
    last = state.last_trick
    if state.phase is Phase.PLAYING and state.trick_number > 1 and last is not None:
        return t(
            "rage.game.last_trick_line",
            locale,
            number=state.trick_number - 1,
            result=trick_line(facts, last, locale),
        )
    done = [row for row in state.score_sheet.rows if row.complete]
    if not done:
        return None
    row = done[-1]
    # One line of every player's points: the names shorter still than in the rows above
    # (which name each player in full), so eight long names take a phone's few lines.
    points = " · ".join(
        f"{line_name(facts, entry.player, ROUND_NAME)} {signed(entry.points or 0)}"
        for entry in row.entries
    )
    return t("rage.game.round_scored", locale, round=row.round, points=points)


def scores_message(facts: TableFacts, state: RageView, locale: object) -> MessageFields:
    """The score sheet on demand (Scores): every round so far, and the last one in full."""
    sheet = state.score_sheet
    embed = discord.Embed(title=t("rage.game.sheet", locale), colour=COLOUR)
    summary = round_summary(facts, sheet, locale)
    embed.description = (
        sheet_block(facts, sheet, locale) if summary else t("rage.game.no_scores", locale)
    )
    if summary is not None:
        embed.add_field(name=t("rage.game.last_round", locale), value=summary, inline=False)
    return fit({"embed": embed})


def trick_alt(
    facts: TableFacts, state: RageView, scene: pictures.TrickScene, locale: object
) -> str:
    """What the trick picture shows, as plain text for its alt text (screen readers): the
    trick (or, between tricks, the last one and who took it), the trump and the led colour.

    Like the picture, it changes only with a card played: bids, tricks won and totals are
    in the message text, so a bid uploads nothing. Whose turn it is in play, too.
    """
    last = state.last_trick
    # As the picture chooses (pictures.trick_scene): between tricks, the last one.
    showing_last = not state.trick and state.phase is Phase.PLAYING
    if showing_last and last is not None and last.round == state.round:
        none = t("images.rage.none", locale)
        trump = none if last.trump is None else colour_name(last.trump, locale)
        lines = [scene.title, f"{scene.trump_label}: {trump}"]
        if last.led is not None:
            lines.append(t("rage.game.led", locale, colour=colour_name(last.led, locale)))
        lines += last_trick_text(facts, last, locale).splitlines()
    else:
        lines = [scene.title, trump_line(state, locale), *trick_lines(facts, state, locale)]
        if not scene.cards:
            lines.append(scene.empty_label)
    if state.phase is Phase.PLAYING and state.players_to_act:
        # In play the turn passes only with a card, which changes the picture anyway; the
        # embed marks the row, the message's line is a mention: said here by name.
        lines.append(t("rage.game.turn", locale, player=facts.name(state.players_to_act[0])))
    return alt_text(facts, t("images.alt.rage_trick", locale), lines)


def table_alt(facts: TableFacts, state: RageView, locale: object) -> str:
    """The live table picture's alt text: what the trick or the sheet shows."""
    scene = pictures.table_scene(facts, state, locale)
    if isinstance(scene, pictures.SheetScene):
        return sheet_alt(facts, state, locale)
    return trick_alt(facts, state, scene, locale)


def sheet_alt(facts: TableFacts, state: RageView, locale: object) -> str:
    """What the score sheet shows while a round is bid, for its alt text: the trump of the
    round being bid and the last scored round (bid, tricks, bonus, points, total each).

    The bids being made are in the message text, so a bid uploads nothing.
    """
    lines = [trump_line(state, locale)]
    summary = (round_summary(facts, state.score_sheet, locale) or "").splitlines()
    lines += [line.rstrip(":") for line in summary]
    return alt_text(facts, t("images.alt.rage_sheet_bidding", locale), lines)


def player_line(
    facts: TableFacts, state: RageView, seat: int, locale: object, *, marked: bool = False
) -> str:
    """One short line per player, to fit a phone: 'Ana · bid 2 · won 1 · 34 pts'; with
    ``marked``, '▶ ' before the line of the player who is to play (or who still bids)."""
    line = t(
        "rage.game.player_line",
        locale,
        player=line_name(facts, state.players[seat]),
        bid=bid_text(state, seat, locale),
        tricks=state.tricks_won[seat],
        total=state.totals[seat],
    )
    acting = state.players_to_act
    if marked and state.phase is Phase.PLAYING and acting and acting[0] == state.players[seat]:
        return f"▶ {line}"
    if marked and state.phase is Phase.BIDDING and state.players[seat] in acting:
        return f"▶ {line}"
    return line


def last_trick_text(facts: TableFacts, result: TrickResult, locale: object) -> str:
    """A finished trick: every card with who played it, then who won it and why."""
    lines = [
        f"{facts.name(play.player)}: {card_name(play.card, locale, play.colour)}"
        for play in result.plays
    ]
    lines.append(trick_line(facts, result, locale))
    return "\n".join(lines)


def final_embed(
    facts: TableFacts, state: RageView, locale: object, *, pictures: bool = False
) -> discord.Embed:
    """Who won after round 10; then, unless the picture shows them (the final board then
    fits a phone's screen), the standings, the whole score sheet and the last trick."""
    outcome = state.outcome
    assert outcome is not None
    winners = [facts.name(player) for player in outcome.winners]
    embed = discord.Embed(title=t("rage.final.title", locale), colour=discord.Colour.gold())
    key = "rage.final.winner" if len(winners) == 1 else "rage.final.shared"
    embed.description = t(key, locale, players=", ".join(winners), total=outcome.standings[0].score)
    if pictures:
        # The picture is the board: ranks, names, rating changes, every round, totals.
        embed.set_footer(
            text=t("rage.game.footer_final", locale, table=facts.id, move=state.move_number)
        )
        return embed
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    embed.add_field(
        name=t("rage.final.standings", locale),
        value="\n".join(
            f"{medals.get(s.rank, f'{s.rank}.')} {facts.name(s.player)}: {total_text(s.score)}"
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
            value=last_trick_text(facts, last, locale),
            inline=False,
        )
    embed.set_footer(
        text=t("rage.game.footer_final", locale, table=facts.id, move=state.move_number)
    )
    return embed


def final_alt(facts: TableFacts, scene: pictures.FinalSheetScene, locale: object) -> str:
    """The final picture as plain text: each player's rank, name, points round by round
    and total, in the picture's order ('1. Ana: 12, −1, 8; total 19'). Eight long names
    and ten rounds can pass Discord's 1,024 characters: the names are shortened first,
    then the rating changes go (the picture has both)."""
    last = scene.rounds[-1] if scene.rounds else 0

    def lines(shorten_names: bool, notes: bool) -> list[str]:
        return [
            t(
                "images.alt.rage_final_row",
                locale,
                rank=rank,
                player=words(name, SHORT_NAME) if shorten_names else name,
                points=", ".join(points),
                total=total,
            )
            + ("" if note is None or not notes else f" · {note}")
            for rank, name, points, total, note in zip(
                scene.ranks,
                scene.names,
                scene.points,
                scene.totals,
                scene.notes or (None,) * len(scene.names),
                strict=True,
            )
        ]

    intro = t("images.alt.rage_final", locale, last=last)
    return alt_text(facts, intro, lines(False, True), lines(True, True), lines(True, False))


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
    """Show my hand (bids and plays happen in the private view) and Scores (the sheet)."""
    view = static_view().add_button(
        custom_id(facts.game, facts.id, state.move_number, "hand"),
        label=t("rage.button.hand", locale),
        style=discord.ButtonStyle.primary,
        emoji="🂠",
    )
    return view.add_button(
        custom_id(facts.game, facts.id, state.move_number, "scores"),
        label=t("rage.button.scores", locale),
        emoji="📋",
    )


def trick_plays(facts: TableFacts, plays: Sequence[TrickPlay], locale: object) -> str:
    """Who played what in a trick: 'Ana 🟥 7 · Ben Joker (🟦)'."""
    return " · ".join(
        f"{facts.name(play.player)} {card_name(play.card, locale, play.colour)}" for play in plays
    )


def winning_now(view: RageView) -> TrickPlay | None:
    """The play winning the trick in progress, with the trump and led colour as they are."""
    if not view.trick:
        return None
    cards = [play.card for play in view.trick]
    named = [play.colour for play in view.trick]
    index, _ = resolve_trick(cards, named, view.trump, view.led_colour)
    return view.trick[index]


def trick_lines(facts: TableFacts, view: RageView, locale: object) -> list[str]:
    """The trick in progress: its cards, the led colour and who is winning it now."""
    if view.phase is not Phase.PLAYING:
        return []
    plays = trick_plays(facts, view.trick, locale) or t("rage.game.trick_empty", locale)
    lines = [f"{t('rage.game.trick', locale, number=view.trick_number)}: {plays}"]
    if view.led_colour is not None:
        lines.append(t("rage.game.led", locale, colour=colour_name(view.led_colour, locale)))
    best = winning_now(view)
    if best is not None:
        card = card_name(best.card, locale, best.colour)
        lines.append(t("rage.game.winning", locale, player=facts.name(best.player), card=card))
    return lines


def forbidden_bid(view: RageView) -> int | None:
    """Under plus/minus one: the bid this player may not make, if any."""
    legal = {a.tricks for a in view.legal_actions if isinstance(a, Bid)}
    missing = [bid for bid in range(view.cards_per_hand + 1) if bid not in legal]
    return missing[0] if legal and missing else None


# Buttons a row on the private panel: card labels ('🟦● 12') fit four on a phone's row,
# bid numbers five, colour names ('🟥♥ red (trump)') three.
CARDS_PER_ROW = 4
BIDS_PER_ROW = 5
COLOURS_PER_ROW = 3


def what_to_do(facts: TableFacts, view: RageView, locale: object, *, joker: bool) -> str:
    """The panel's first line: what this player does now, or whom everyone waits for."""
    assert view.viewer is not None
    if view.viewer not in view.players_to_act:
        if not view.players_to_act:
            return t("rage.hand.game_over", locale)
        waiting = ", ".join(facts.name(p) for p in view.players_to_act)
        return t("rage.panel.waiting", locale, players=waiting)
    if view.phase is Phase.BIDDING:
        return t("rage.panel.bid", locale, max=view.cards_per_hand)
    if joker:
        return t("rage.hand.joker_colour", locale)
    led = view.led_colour
    if led is None:
        return t("rage.panel.lead", locale)
    follows = any(isinstance(a, Play) and a.card.colour is led for a in view.legal_actions)
    key = "rage.panel.follow" if follows else "rage.panel.free"
    return t(key, locale, colour=colour_name(led, locale))


def hand_message(
    facts: TableFacts,
    view: RageView,
    locale: object,
    *,
    note: str | None = None,
    joker: bool = False,
) -> MessageFields:
    """A player's private panel: what to do first, then the round, the trick, and the
    hand once (as the card buttons; as text while the buttons are bids).

    Every card is a button (disabled when it may not be played now), bids are number
    buttons and a Joker's colour is colour buttons with Back, in even rows. Within
    Discord's limits.
    """
    assert view.viewer is not None
    seat = view.players.index(view.viewer)
    lines = [note] if note else []
    lines.append(f"**{what_to_do(facts, view, locale, joker=joker)}**")
    lines.append(f"{t('rage.panel.round', locale, round=view.round)} · {trump_line(view, locale)}")
    lines += trick_lines(facts, view, locale)
    own_bid = view.bids[seat]
    if own_bid is not None:
        lines.append(t("rage.hand.status", locale, bid=own_bid, tricks=view.tricks_won[seat]))
    components = static_view()
    move = view.move_number
    my_turn = view.viewer in view.players_to_act
    legal = view.legal_actions if my_turn else ()
    # (action, label, arg, disabled) of each button, laid out in even rows at the end.
    buttons: list[tuple[str, str, str, bool]] = []
    per_row = CARDS_PER_ROW

    if view.phase is Phase.BIDDING:
        # The buttons are bids (or none): the hand is shown as text, once.
        lines.append(t("rage.panel.hand", locale, cards=hand_text(view.hand, locale, view.trump)))
        if my_turn:
            legal_bids = {a.tricks for a in legal if isinstance(a, Bid)}
            forbidden = forbidden_bid(view)
            if forbidden is not None:
                lines.append(
                    t("rage.hand.forbidden", locale, bid=forbidden, tricks=view.cards_per_hand)
                )
            per_row = BIDS_PER_ROW
            buttons = [
                ("bid", str(bid), f"{view.round}_{bid}", bid not in legal_bids)
                for bid in range(view.cards_per_hand + 1)
            ]
    elif joker and my_turn:
        colours = sorted(
            {
                a.colour
                for a in legal
                if isinstance(a, Play) and a.card == JOKER and a.colour is not None
            }
        )
        for colour in colours:
            label = colour_name(colour, locale)
            if colour is view.trump:
                label = t("rage.hand.colour_trump", locale, colour=label)
            elif colour is view.led_colour:
                label = t("rage.hand.colour_led", locale, colour=label)
            buttons.append(("joker", label, colour.code, False))
        per_row = COLOURS_PER_ROW
    elif view.phase is Phase.PLAYING:
        playable = {a.card for a in legal if isinstance(a, Play)}
        seen: list[Card] = []
        for card in sort_hand(view.hand, view.trump):
            # Two copies of a card (Jokers, action cards) need two custom ids.
            arg = card.code if card not in seen else f"{card.code}_{seen.count(card)}"
            seen.append(card)
            buttons.append(("play", card_name(card, locale), arg, card not in playable))
    back = joker and my_turn and view.phase is Phase.PLAYING
    rows = balanced_rows(len(buttons) + back, per_row)
    for (action, label, arg, disabled), row in zip(buttons, rows, strict=False):
        style = discord.ButtonStyle.secondary if disabled else discord.ButtonStyle.primary
        components.add_button(
            custom_id(facts.game, facts.id, move, action, arg),
            label=label,
            style=style,
            disabled=disabled,
            row=row,
        )
    if back:
        components.add_button(
            custom_id(facts.game, facts.id, move, "hand"),
            label=t("rage.button.back", locale),
            emoji="↩️",
            row=rows[-1],
        )
    return fit({"content": "\n".join(lines), "view": components})


OPTION_NAMES = ("plus_minus_one", "hidden_bids", "secret_bids", "sweep")


class RageRenderer:
    """Rage's messages for the shared table."""

    colour = COLOUR.value

    def title(self, locale: object) -> str:
        """The game's name in a language."""
        return t("game.rage.name", locale)

    def turn_panel(self, facts: TableFacts, view: RageView, locale: object) -> MessageFields:
        """A person's move away from the table (their "your turn" DM): the panel the
        channel's "Show my hand" opens, with the bid or the playable cards."""
        return hand_message(facts, view, locale)

    def dm_closed_hint(self, locale: object) -> str:
        """Where to see private information when DMs are closed."""
        return t("rage.dm_closed", locale)

    def option_lines(self, options: Mapping[str, Any], locale: object) -> list[str]:
        """The variants in force, or 'standard rules'."""
        lines = [t(f"rage.option.{name}", locale) for name in OPTION_NAMES if options.get(name)]
        return lines or [t("rage.option.none", locale)]

    def table(
        self, facts: TableFacts, public: RageView, locale: object, *, pictures: bool = False
    ) -> MessageFields:
        """The live table with its Show my hand and Scores buttons."""
        return {
            "embed": game_embed(facts, public, locale, pictures=pictures),
            "view": table_view(facts, public, locale),
        }

    def scores(self, facts: TableFacts, public: RageView, locale: object) -> MessageFields:
        """The score sheet, privately, for whoever taps Scores."""
        return scores_message(facts, public, locale)

    def final(
        self, facts: TableFacts, public: RageView, locale: object, *, pictures: bool = False
    ) -> MessageFields:
        """Who won (and, unless the picture shows them, the standings and the sheet)."""
        return {"embed": final_embed(facts, public, locale, pictures=pictures)}

    def picture(self, facts: TableFacts, public: RageView, locale: object) -> Picture:
        """The trick while playing, the score sheet between rounds and at the end."""
        if public.outcome is not None:
            final = pictures.final_sheet_scene(facts, public, locale)
            return Picture(final, pictures.final_sheet_png, final_alt(facts, final, locale))
        scene = pictures.table_scene(facts, public, locale)
        if isinstance(scene, pictures.SheetScene):
            # The sheet while a round is bid: the picture shows the trump and the last
            # round; the message text the bids being made.
            alt = sheet_alt(facts, public, locale)
            return Picture(scene, pictures.sheet_png, alt)
        return Picture(scene, pictures.trick_png, trick_alt(facts, public, scene, locale))

    def private(self, facts: TableFacts, view: RageView, locale: object) -> MessageFields:
        """A player's hand with their legal choices."""
        return hand_message(facts, view, locale)

    def rules(self, locale: object) -> discord.Embed:
        """The rules summary."""
        return rules_embed(locale)

    def review_action(self, action: str, locale: object) -> str:
        """A choice as the move log writes it ("bid 2", "play R7", "play JOKER b") in words."""
        kind, _, rest = action.partition(" ")
        if kind == "bid":
            return t("review.rage.bid", locale, count=int(rest))
        code, _, colour = rest.partition(" ")
        return card_name(Card.parse(code), locale, Colour.parse(colour) if colour else None)

    def review_own(self, view: RageView, locale: object) -> str:
        """What only the reviewed player knew at a decision: their own hand."""
        return t("review.rage.own", locale, hand=hand_text(view.hand, locale, view.trump))

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
