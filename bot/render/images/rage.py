"""Rage pictures: the trick on the table and the score sheet.

As for No Thanks!, a scene holds everything a picture shows and is built from the
spectators' view alone, so no hand and no hidden bid can reach a public picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PIL import ImageDraw

from bot.engines.rage import JOKER, Phase, RageView, TrickPlay, resolve_trick
from bot.engines.rage.cards import CHANGE_TRUMP, MINUS_FIVE, NO_TRUMP, PLUS_FIVE, Card, Colour
from bot.i18n import t
from bot.render.images import cards as c
from bot.render.images.fonts import draw_text, text_width, two_lines
from bot.table.spec import TableFacts

MARGIN = 28
PER_LINE = 4  # cards per line of the trick: 8 players make two lines
CARD_W, CARD_H = 150, 208
SLOT_W = (c.WIDTH - 2 * MARGIN) / PER_LINE
HEAD_H = 150
ACTION_MARKS = {JOKER: "J", NO_TRUMP: "⊘", CHANGE_TRUMP: "⇄", PLUS_FIVE: "+5", MINUS_FIVE: "−5"}
ACTION_KEYS = {
    JOKER: "rage.card.joker",
    NO_TRUMP: "rage.card.no_trump",
    CHANGE_TRUMP: "rage.card.change_trump",
    PLUS_FIVE: "rage.card.plus_five",
    MINUS_FIVE: "rage.card.minus_five",
}


@dataclass(frozen=True, slots=True)
class Face:
    """A card as drawn: a colour and value, or an action card's mark and name."""

    colour: str | None
    value: int | None
    mark: str | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class Laid:
    """One card of the trick and who played it; `best` marks the card taking the trick."""

    face: Face
    name: str
    best: bool


@dataclass(frozen=True, slots=True)
class TrickScene:
    """What the trick picture shows."""

    title: str
    trump_label: str
    trump: str | None
    trump_note: str | None  # "new" after a Change Trump, "none in this trick", ...
    led_label: str
    led: str | None
    cards: tuple[Laid, ...]
    best_label: str
    empty_label: str


@dataclass(frozen=True, slots=True)
class Cell:
    """One player's line for one round on the score sheet."""

    bid: str
    tricks: int
    exact: bool | None  # None while a bid is secret
    bonus: int
    points: str


@dataclass(frozen=True, slots=True)
class SheetScene:
    """What the score sheet picture shows: every scored round and the totals."""

    title: str
    names: tuple[str, ...]
    round_label: str
    rounds: tuple[tuple[int, tuple[Cell, ...]], ...]
    total_label: str
    totals: tuple[int, ...]
    leaders: tuple[bool, ...]
    legend: str


def _public(view: RageView) -> RageView:
    # A player's view carries their hand and their own hidden bid: never a public picture.
    if view.viewer is not None:
        raise ValueError("a public picture is drawn from the spectators' view only")
    return view


def face(card: Card, named: Colour | None, locale: object) -> Face:
    """How a card is drawn, its name in the table's language for action cards."""
    colour = card.colour
    if colour is not None:
        return Face(colour=colour.code, value=card.value)
    return Face(
        colour=None if named is None else named.code,
        value=None,
        mark=ACTION_MARKS[card],
        label=t(ACTION_KEYS[card], locale),
    )


def _laid(
    facts: TableFacts, plays: Sequence[TrickPlay], best: int | None, locale: object
) -> tuple[Laid, ...]:
    return tuple(
        Laid(
            face=face(play.card, play.colour, locale),
            name=facts.short_plain_name(play.player),
            best=index == best,
        )
        for index, play in enumerate(plays)
    )


def trick_scene(facts: TableFacts, view: RageView, locale: object) -> TrickScene:
    """The trick in play (or, between tricks, the last one with its winner)."""
    view = _public(view)
    last = view.last_trick
    showing_last = (
        not view.trick
        and last is not None
        and last.round == view.round
        and view.phase is Phase.PLAYING
    )
    changed = any(play.card == CHANGE_TRUMP for play in view.trick)
    if showing_last and last is not None:
        title = (
            t("images.rage.last_trick", locale)
            + " · "
            + t("images.rage.round_trick", locale, round=last.round, trick=last.number)
        )
        cards = _laid(facts, last.plays, last.winning_index, locale)
        trump, led = last.trump, last.led
        note = None if trump is not None else t("images.rage.none", locale)
        best_label = t("images.rage.won", locale)
    else:
        if view.phase is Phase.PLAYING:
            title = t("images.rage.round_trick", locale, round=view.round, trick=view.trick_number)
        else:
            title = t("images.rage.round", locale, round=view.round)
        best = None
        if view.trick:
            index, _ = resolve_trick(
                [p.card for p in view.trick],
                [p.colour for p in view.trick],
                view.trump,
                view.led_colour,
            )
            best = index
        cards = _laid(facts, view.trick, best, locale)
        trump, led = view.trump, view.led_colour
        if view.no_trump_this_trick:
            note = t("images.rage.none_this_trick", locale)
        elif trump is None:
            note = t("images.rage.none", locale)
        elif changed:
            note = t("images.rage.changed", locale)
        else:
            note = None
        best_label = t("images.rage.winning", locale)
    return TrickScene(
        title=title,
        trump_label=t("images.rage.trump", locale),
        trump=None
        if trump is None or (view.no_trump_this_trick and not showing_last)
        else trump.code,
        trump_note=note,
        led_label=t("images.rage.led", locale),
        led=None if led is None else led.code,
        cards=cards,
        best_label=best_label,
        empty_label=(
            t("images.rage.leads", locale, player=facts.plain_name(view.leader))
            if view.phase is Phase.PLAYING
            else t("images.rage.waiting", locale)
        ),
    )


def _signed(points: int) -> str:
    return f"+{points}" if points > 0 else f"−{-points}" if points < 0 else "0"


def _total(points: int) -> str:
    return f"−{-points}" if points < 0 else str(points)


def sheet_scene(facts: TableFacts, view: RageView, locale: object) -> SheetScene:
    """The score sheet: each scored round's bid, tricks, bonus and points, and the totals."""
    view = _public(view)
    sheet = view.score_sheet
    rounds = []
    for row in sheet.rows:
        if not row.complete:
            continue
        cells = tuple(
            Cell(
                bid="?" if entry.bid is None else str(entry.bid),
                tricks=entry.tricks,
                exact=None if entry.bid is None else entry.bid == entry.tricks,
                bonus=entry.bonus,
                points="?" if entry.points is None else _signed(entry.points),
            )
            for entry in row.entries
        )
        rounds.append((row.round, cells))
    best = max(sheet.totals) if sheet.totals else 0
    return SheetScene(
        title=t("rage.game.sheet", locale),
        names=tuple(facts.short_plain_name(player) for player in sheet.players),
        round_label=t("images.rage.round_short", locale),
        rounds=tuple(rounds),
        total_label=t("images.total", locale),
        totals=tuple(sheet.totals),
        leaders=tuple(total == best and bool(rounds) for total in sheet.totals),
        legend=t("images.rage.legend", locale),
    )


def table_scene(facts: TableFacts, view: RageView, locale: object) -> TrickScene | SheetScene:
    """The picture of the live table: the trick while playing, the sheet between rounds."""
    if view.phase is Phase.BIDDING and any(row.complete for row in view.score_sheet.rows):
        return sheet_scene(facts, view, locale)
    return trick_scene(facts, view, locale)


# -- drawing ------------------------------------------------------------------------------


def draw_face(
    draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float], card: Face
) -> None:
    """One Rage card."""
    if card.mark is None and card.colour is not None and card.value is not None:
        c.rage_card(draw, box, card.colour, card.value)
    else:
        lines = c.wrap_words(card.label or "")
        if card.label == card.mark:
            lines = []  # "+5" needs no caption under its mark
        c.action_card(draw, box, card.mark or "?", lines, card.colour)


def _token(
    draw: ImageDraw.ImageDraw, x: float, y: float, label: str, colour: str | None, note: str | None
) -> float:
    """'Trump ● blue-token (note)': a label, the colour's token, a note; the width used."""
    width = draw_text(draw, (x, y), label, 26, c.MUTED, bold=True) + 14
    if colour is None:
        c.no_colour_swatch(draw, x + width + 22, y, 22)
    else:
        c.colour_swatch(draw, colour, x + width + 22, y, 22)
    width += 52
    if note:
        c.badge(draw, (x + width, y), note, 20, c.ACTIVE, c.INK, anchor="l")
        width += text_width(note, 20, True) + 24
    return width


def trick_png(scene: TrickScene) -> bytes:
    """The trick as a PNG: cards in play order, names under them, trump and led colour."""
    lines = max(1, (len(scene.cards) + PER_LINE - 1) // PER_LINE)
    slot_h = CARD_H + 118
    image, draw = c.canvas(int(HEAD_H + lines * slot_h + MARGIN))
    draw.rectangle((0, 0, c.WIDTH, HEAD_H - 20), fill=c.FELT_DARK)
    draw_text(
        draw, (MARGIN, 42), scene.title, 30, c.WHITE, bold=True, max_width=c.WIDTH - 2 * MARGIN
    )
    x = MARGIN + _token(draw, MARGIN, 98, scene.trump_label, scene.trump, scene.trump_note) + 30
    if scene.led is not None:
        _token(draw, x, 98, scene.led_label, scene.led, None)
    if not scene.cards:
        draw_text(
            draw,
            (c.WIDTH / 2, HEAD_H + slot_h / 2 - 20),
            scene.empty_label,
            30,
            c.MUTED,
            anchor="m",
            max_width=c.WIDTH - 2 * MARGIN,
        )
    for index, laid in enumerate(scene.cards):
        line, column = divmod(index, PER_LINE)
        cx = MARGIN + SLOT_W * column + SLOT_W / 2
        top = HEAD_H + 10 + line * slot_h
        box = (cx - CARD_W / 2, top, cx + CARD_W / 2, top + CARD_H)
        if laid.best:
            draw.rounded_rectangle(
                (box[0] - 9, box[1] - 9, box[2] + 9, box[3] + 9),
                radius=22,
                outline=c.GOLD,
                width=6,
            )
        draw_face(draw, box, laid.face)
        names = two_lines(laid.name, 21, SLOT_W - 12, True)
        for line_no, line_text in enumerate(names):
            draw_text(
                draw,
                (cx, top + CARD_H + 26 + 26 * line_no),
                line_text,
                21,
                c.WHITE,
                bold=True,
                anchor="m",
            )
        if laid.best:
            draw.rounded_rectangle(
                (box[2] - 40, box[1] - 9, box[2] + 9, box[1] + 40), radius=20, fill=c.GOLD
            )
            # Top right: the card's own symbols sit in the other two corners.
            draw_text(draw, (box[2] - 15, box[1] + 15), "♛", 30, c.INK, anchor="m")
            c.badge(
                draw,
                (cx, top + CARD_H + 26 + 26 * len(names) + 8),
                scene.best_label,
                18,
                c.GOLD,
                c.INK,
            )
    return c.to_png(image)


def sheet_png(scene: SheetScene) -> bytes:
    """The score sheet as a PNG: a round per line, a column per player, totals below."""
    players = len(scene.names)
    label_w = 64
    col_w = (c.WIDTH - 2 * MARGIN - label_w) / max(players, 1)
    head_h, row_h, total_h = 130, 62, 64
    height = head_h + row_h * max(len(scene.rounds), 1) + total_h + 60
    image, draw = c.canvas(int(height))
    draw.rectangle((0, 0, c.WIDTH, head_h - 8), fill=c.FELT_DARK)
    draw_text(draw, (MARGIN, 34), scene.title, 30, c.WHITE, bold=True)
    name_size = 22 if col_w > 120 else 18
    for index, name in enumerate(scene.names):
        cx = MARGIN + label_w + col_w * index + col_w / 2
        lines = two_lines(name, name_size, col_w - 8, True)
        for line_no, line_text in enumerate(lines):
            y = 92 - 12 * (len(lines) - 1) + 24 * line_no
            draw_text(draw, (cx, y), line_text, name_size, c.WHITE, bold=True, anchor="m")
    top = head_h
    draw_text(
        draw, (MARGIN + label_w / 2, 92), scene.round_label, 20, c.MUTED, bold=True, anchor="m"
    )
    for number, (round_no, cells) in enumerate(scene.rounds):
        y = top + row_h * number
        if number % 2 == 0:
            draw.rectangle((MARGIN - 10, y, c.WIDTH - MARGIN + 10, y + row_h), fill=c.FELT_DARK)
        draw_text(
            draw,
            (MARGIN + label_w / 2, y + row_h / 2),
            str(round_no),
            24,
            c.MUTED,
            bold=True,
            anchor="m",
        )
        for index, cell in enumerate(cells):
            cx = MARGIN + label_w + col_w * index + col_w / 2
            mark = "" if cell.exact is None else (" ✓" if cell.exact else " ✗")
            small = f"{cell.bid}/{cell.tricks}{mark}"
            if cell.bonus:
                small += f" {_signed(cell.bonus)}"
            tone = c.MUTED if cell.exact is not False else c.SORE
            draw_text(draw, (cx, y + 18), small, 17, tone, anchor="m", max_width=col_w - 6)
            draw_text(draw, (cx, y + 43), cell.points, 24, c.WHITE, bold=True, anchor="m")
    y = top + row_h * max(len(scene.rounds), 1)
    draw.line((MARGIN - 10, y + 4, c.WIDTH - MARGIN + 10, y + 4), fill=c.GOLD, width=3)
    draw_text(
        draw, (MARGIN + label_w / 2, y + total_h / 2 + 4), "Σ", 28, c.GOLD, bold=True, anchor="m"
    )
    for index, total in enumerate(scene.totals):
        cx = MARGIN + label_w + col_w * index + col_w / 2
        if scene.leaders[index]:
            c.badge(draw, (cx, y + total_h / 2 + 4), _total(total), 28, c.GOLD, c.INK)
        else:
            draw_text(
                draw, (cx, y + total_h / 2 + 4), _total(total), 28, c.GOLD, bold=True, anchor="m"
            )
    draw_text(
        draw,
        (MARGIN, height - 30),
        f"Σ = {scene.total_label} · {scene.legend}",
        19,
        c.MUTED,
        max_width=c.WIDTH - 2 * MARGIN,
    )
    return c.to_png(image)
