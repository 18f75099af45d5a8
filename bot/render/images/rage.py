"""Rage pictures: the trick on the table and the score sheet.

As for No Thanks!, a scene holds everything a picture shows and is built from the
spectators' view alone, so no hand and no hidden bid can reach a public picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from PIL import ImageDraw

from bot.engines.rage import JOKER, Phase, RageView, TrickPlay, resolve_trick
from bot.engines.rage.cards import CHANGE_TRUMP, MINUS_FIVE, NO_TRUMP, PLUS_FIVE, Card, Colour
from bot.i18n import t
from bot.render.images import cards as c
from bot.render.images.fonts import draw_text, fit_lines, text_width, two_lines
from bot.render.table import rating_change
from bot.table.spec import TableFacts

# Sizes in CSS px as a phone shows them (see cards.SHOWN_WIDTH), painted at px().
MARGIN = c.px(7)
PER_LINE = 4  # cards per line of the trick: 8 players make two lines
CARD_W, CARD_H = c.px(50), c.px(70)
# A card's slot, its name's width: the trick spans the whole picture (a narrow margin)
# so that 'Computer 3' fits under its card on one line.
TRICK_MARGIN = c.px(3)
SLOT_W = (c.WIDTH - 2 * TRICK_MARGIN) / PER_LINE
TEXT = c.px(c.MIN_TEXT)  # names and labels: the smallest text there is
LINE = c.px(15)  # one line of TEXT
TITLE = c.px(14)
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
    # The colours' words ('orange'), beside their tokens: a token alone was a 19-px badge
    # a phone's reader had to decode by its shape.
    trump_name: str | None = None
    led_name: str | None = None


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
    # While the next round is bid, its trump: the label, the colour (None: no trump) and
    # the colour's word, drawn with the colour's token and shape, never by hue alone.
    trump_label: str | None = None
    trump: str | None = None
    trump_name: str | None = None


@dataclass(frozen=True, slots=True)
class FinalSheetScene:
    """What the final picture shows: the whole score sheet, every round's points for every
    player, in rank order with the totals."""

    title: str
    rounds: tuple[int, ...]  # the round numbers, the columns
    names: tuple[str, ...]
    ranks: tuple[int, ...]
    points: tuple[tuple[str, ...], ...]  # per player, each round's points ('12', '−1')
    totals: tuple[str, ...]
    legend: str
    notes: tuple[str | None, ...] = ()  # each player's rating change ('Δ +12'), if rated


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
    shown_trump = None if (view.no_trump_this_trick and not showing_last) else trump
    return TrickScene(
        title=title,
        trump_label=t("images.rage.trump", locale),
        trump=None if shown_trump is None else shown_trump.code,
        trump_name=None if shown_trump is None else t(f"rage.colour.{shown_trump.code}", locale),
        led_name=None if led is None else t(f"rage.colour.{led.code}", locale),
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


def final_sheet_scene(facts: TableFacts, view: RageView, locale: object) -> FinalSheetScene:
    """The final picture: every round's points of every player, best first."""
    view = _public(view)
    sheet = view.score_sheet
    outcome = view.outcome
    rows = [row for row in sheet.rows if row.complete]
    order = (
        [(s.rank, sheet.players.index(s.player)) for s in outcome.standings]
        if outcome is not None
        else [(1, seat) for seat in range(len(sheet.players))]
    )
    return FinalSheetScene(
        title=t("rage.game.sheet", locale),
        rounds=tuple(row.round for row in rows),
        names=tuple(facts.short_plain_name(sheet.players[seat]) for _, seat in order),
        ranks=tuple(rank for rank, _ in order),
        points=tuple(
            tuple(
                # No '+': ten signed numbers in a line ran together on a phone; a loss
                # keeps its '−' and is drawn in the missed bid's colour.
                "?" if (points := row.entries[seat].points) is None else _total(points)
                for row in rows
            )
            for _, seat in order
        ),
        totals=tuple(_total(sheet.totals[seat]) for _, seat in order),
        legend=t("images.rage.final_legend", locale, last=len(rows)),
        notes=tuple(rating_change(facts, str(sheet.players[seat]), locale) for _, seat in order),
    )


def table_scene(facts: TableFacts, view: RageView, locale: object) -> TrickScene | SheetScene:
    """The picture of the live table: the trick while playing, the sheet between rounds
    with the trump of the round being bid."""
    if view.phase is Phase.BIDDING and any(row.complete for row in view.score_sheet.rows):
        sheet = sheet_scene(facts, view, locale)
        trump = view.trump
        return replace(
            sheet,
            trump_label=t("images.rage.trump", locale),
            trump=None if trump is None else trump.code,
            trump_name=t(
                "images.rage.none" if trump is None else f"rage.colour.{trump.code}", locale
            ),
        )
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


SWATCH_R = c.px(10)  # a colour's token: 20 CSS px across on a phone


def _token_width(label: str, note: str | None, name: str | None = None) -> float:
    """How wide a 'Trump ● blue (note)' token is drawn."""
    width = text_width(label, TEXT, True) + 2 * SWATCH_R + c.px(10)
    if name:
        width += text_width(name, TEXT, True) + c.px(4)
    if note:
        width += text_width(note, TEXT, True) + TEXT + c.px(4)
    return width


def _token(
    draw: ImageDraw.ImageDraw,
    x: float,
    y: float,
    label: str,
    colour: str | None,
    note: str | None,
    name: str | None = None,
) -> None:
    """'Trump ● blue (note)': a label, the colour's token and its word, a note."""
    width = draw_text(draw, (x, y), label, TEXT, c.MUTED, bold=True) + c.px(4)
    r = SWATCH_R
    if colour is None:
        c.no_colour_swatch(draw, x + width + r, y, r)
    else:
        c.colour_swatch(draw, colour, x + width + r, y, r)
    width += 2 * r + c.px(4)
    if name:
        width += draw_text(draw, (x + width, y), name, TEXT, c.WHITE, bold=True) + c.px(4)
    if note:
        c.badge(draw, (x + width, y), note, TEXT, c.ACTIVE, c.INK, anchor="l")


def name_lines(name: str) -> tuple[tuple[str, ...], bool]:
    """A name under its card: whole words in two lines of the card's slot (three if it
    needs them, 'Компьютер' alone filling one), bold, or regular where bold is too wide;
    a word wider than the slot ends in an ellipsis. Never broken inside a word."""
    return fit_lines(name, TEXT, SLOT_W - c.px(1.5), True, 3, lighter=True)


def trick_png(scene: TrickScene) -> bytes:
    """The trick as a PNG: cards in play order, names under them, trump and led colour."""
    lines = max(1, (len(scene.cards) + PER_LINE - 1) // PER_LINE)
    trump_w = _token_width(scene.trump_label, scene.trump_note, scene.trump_name)
    led_w = _token_width(scene.led_label, None, scene.led_name)
    room = c.WIDTH - 2 * MARGIN
    # The led colour goes beside the trump where both fit, else on a line of its own.
    led_beside = scene.led is None or trump_w + c.px(12) + led_w <= room
    head_h = c.px(52) if led_beside else c.px(76)
    names = [name_lines(laid.name) for laid in scene.cards]
    # Room for the longest name (two lines, three for a name that needs them) and the badge.
    name_count = max((len(lines_) for lines_, _ in names), default=2)
    slot_h = CARD_H + c.px(26) + LINE * max(2, name_count)
    image, draw = c.canvas(int(head_h + lines * slot_h + c.px(2)))
    draw.rectangle((0, 0, c.WIDTH, head_h - c.px(6)), fill=c.FELT_DARK)
    draw_text(draw, (MARGIN, c.px(12)), scene.title, TITLE, c.WHITE, bold=True, max_width=room)
    trump_y = c.px(34)
    _token(
        draw, MARGIN, trump_y, scene.trump_label, scene.trump, scene.trump_note, scene.trump_name
    )
    if scene.led is not None:
        x, y = (MARGIN + trump_w + c.px(12), trump_y) if led_beside else (MARGIN, c.px(58))
        _token(draw, x, y, scene.led_label, scene.led, None, scene.led_name)
    if not scene.cards:
        for line_no, text in enumerate(two_lines(scene.empty_label, TITLE, room)):
            y = head_h + c.px(30) + c.px(18) * line_no
            draw_text(draw, (c.WIDTH / 2, y), text, TITLE, c.MUTED, anchor="m")
    for index, laid in enumerate(scene.cards):
        line, column = divmod(index, PER_LINE)
        cx = TRICK_MARGIN + SLOT_W * column + SLOT_W / 2
        top = head_h + c.px(4) + line * slot_h
        box = (cx - CARD_W / 2, top, cx + CARD_W / 2, top + CARD_H)
        edge = c.px(3)
        if laid.best:
            draw.rounded_rectangle(
                (box[0] - edge, box[1] - edge, box[2] + edge, box[3] + edge),
                radius=c.px(8),
                outline=c.GOLD,
                width=c.px(2),
            )
        draw_face(draw, box, laid.face)
        names_, bold = names[index]
        for line_no, line_text in enumerate(names_):
            y = top + CARD_H + c.px(10) + LINE * line_no
            draw_text(draw, (cx, y), line_text, TEXT, c.WHITE, bold=bold, anchor="m")
        if laid.best:
            crown = c.px(16)
            draw.rounded_rectangle(
                (box[2] - crown + edge, box[1] - edge, box[2] + edge, box[1] + crown - edge),
                radius=crown // 2,
                fill=c.GOLD,
            )
            # Top right: the card's own symbols sit in the other two corners.
            middle = (box[2] - crown / 2 + edge, box[1] + crown / 2 - edge)
            draw_text(draw, middle, "♛", TEXT, c.INK, anchor="m")
            badge_y = top + CARD_H + c.px(10) + LINE * len(names_) + c.px(2)
            c.badge(draw, (cx, badge_y), scene.best_label, TEXT, c.GOLD, c.INK)
    return c.to_png(image)


def sheet_png(scene: SheetScene) -> bytes:
    """The score sheet as a PNG: a line per player with the last round's bid, tricks, bonus
    and points, and the total (every round is a Scores click away)."""
    room = c.WIDTH - 2 * MARGIN
    name_w = c.px(110)
    last_round = scene.rounds[-1] if scene.rounds else None
    # The trump of the round being bid, if any, on a line of its own under the title.
    trump_h = c.px(20) if scene.trump_label is not None else 0
    head_h = c.px(44) + trump_h
    names = [two_lines(name, TEXT, name_w, True) for name in scene.names]
    row_hs = [max(len(lines) * LINE, c.px(22)) + c.px(6) for lines in names]
    legend = two_lines(f"Σ = {scene.total_label} · {scene.legend}", TEXT, room)
    height = head_h + sum(row_hs) + c.px(8) + len(legend) * LINE + c.px(4)
    image, draw = c.canvas(int(height))
    draw.rectangle((0, 0, c.WIDTH, head_h - c.px(4)), fill=c.FELT_DARK)
    draw_text(draw, (MARGIN, c.px(13)), scene.title, TITLE, c.WHITE, bold=True, max_width=room)
    if scene.trump_label is not None:
        y = c.px(33)
        _token(draw, MARGIN, y, scene.trump_label, scene.trump, None)
        name_x = MARGIN + _token_width(scene.trump_label, None)
        name, left = scene.trump_name or "", c.WIDTH - MARGIN - name_x
        draw_text(draw, (name_x, y), name, TEXT, c.WHITE, bold=True, max_width=left)
    # Column heads: the round's figures, then the total.
    cell_x = MARGIN + name_w + c.px(6)
    points_x = c.WIDTH - MARGIN - c.px(62)
    total_x = c.WIDTH - MARGIN
    if last_round is not None:
        head = f"{scene.round_label} {last_round[0]}"
        draw_text(draw, (cell_x, c.px(32) + trump_h), head, TEXT, c.MUTED, bold=True)
    draw_text(draw, (total_x, c.px(32) + trump_h), "Σ", TEXT, c.GOLD, bold=True, anchor="r")
    top = float(head_h)
    for index, lines in enumerate(names):
        row_h = row_hs[index]
        if index % 2 == 0:
            draw.rectangle((0, top, c.WIDTH, top + row_h), fill=c.FELT_DARK)
        mid = top + row_h / 2
        first = mid - LINE * (len(lines) - 1) / 2
        for line_no, line in enumerate(lines):
            draw_text(draw, (MARGIN, first + LINE * line_no), line, TEXT, c.WHITE, bold=True)
        if last_round is not None:
            cell = last_round[1][index]
            mark = "" if cell.exact is None else (" ✓" if cell.exact else " ✗")
            small = f"{cell.bid}/{cell.tricks}{mark}"
            if cell.bonus:
                small += f" {_signed(cell.bonus)}"
            tone = c.MUTED if cell.exact is not False else c.SORE
            draw_text(draw, (cell_x, mid), small, TEXT, tone, max_width=points_x - cell_x)
            draw_text(draw, (points_x, mid), cell.points, TEXT, c.WHITE, bold=True, anchor="r")
        total = _total(scene.totals[index]) if index < len(scene.totals) else ""
        if index < len(scene.leaders) and scene.leaders[index]:
            c.badge(draw, (total_x, mid), total, TITLE, c.GOLD, c.INK, anchor="r")
        else:
            draw_text(draw, (total_x - c.px(6), mid), total, TITLE, c.GOLD, bold=True, anchor="r")
        top += row_h
    draw.line((MARGIN, top + c.px(2), c.WIDTH - MARGIN, top + c.px(2)), fill=c.GOLD, width=c.px(1))
    for line_no, line in enumerate(legend):
        draw_text(draw, (MARGIN, top + c.px(14) + LINE * line_no), line, TEXT, c.MUTED)
    return c.to_png(image)


def final_sheet_png(scene: FinalSheetScene) -> bytes:
    """The whole score sheet as a PNG: per player, a line with the rank, the name and the
    total, and under it each round's points in a column headed by the round's number."""
    room = c.WIDTH - 2 * MARGIN
    columns = max(1, len(scene.rounds))
    cell = room / columns
    head_h = c.px(44)
    row_h = 2 * LINE + c.px(6)
    legend = two_lines(scene.legend, TEXT, room)
    height = head_h + len(scene.names) * row_h + c.px(8) + len(legend) * LINE + c.px(4)
    image, draw = c.canvas(int(height))
    draw.rectangle((0, 0, c.WIDTH, head_h - c.px(4)), fill=c.FELT_DARK)
    draw_text(draw, (MARGIN, c.px(13)), scene.title, TITLE, c.WHITE, bold=True, max_width=room)
    # The rounds' numbers head the columns of points.
    for index, number in enumerate(scene.rounds):
        x = MARGIN + cell * index + cell / 2
        draw_text(draw, (x, c.px(32)), str(number), TEXT, c.MUTED, bold=True, anchor="m")
    top = float(head_h)
    medals = {1: c.GOLD, 2: (200, 204, 212), 3: (205, 127, 50)}
    for index, name in enumerate(scene.names):
        if index % 2 == 0:
            draw.rectangle((0, top, c.WIDTH, top + row_h), fill=c.FELT_DARK)
        mid = top + c.px(3) + LINE / 2
        rank = scene.ranks[index]
        r = c.px(8)
        draw.ellipse((MARGIN, mid - r, MARGIN + 2 * r, mid + r), fill=medals.get(rank, c.FELT_LINE))
        ink = c.INK if rank <= 3 else c.WHITE
        draw_text(draw, (MARGIN + r, mid), str(rank), TEXT, ink, bold=True, anchor="m")
        total = scene.totals[index]
        total_w = text_width(total, TITLE, True) + TITLE
        name_room = room - c.px(20) - total_w - c.px(6)
        note = scene.notes[index] if index < len(scene.notes) else None
        if note:
            # The rating's change, left of the total (the message's text is who won).
            note_w = text_width(note, TEXT)
            x = c.WIDTH - MARGIN - total_w - c.px(6)
            draw_text(draw, (x, mid), note, TEXT, c.MUTED, anchor="r")
            name_room -= note_w + c.px(8)
        (shown,), bold = fit_lines(name, TEXT, name_room, True, 1, lighter=True)
        draw_text(draw, (MARGIN + c.px(20), mid), shown, TEXT, c.WHITE, bold=bold)
        if rank == 1:
            c.badge(draw, (c.WIDTH - MARGIN, mid), total, TITLE, c.GOLD, c.INK, anchor="r")
        else:
            x = c.WIDTH - MARGIN - TITLE / 2
            draw_text(draw, (x, mid), total, TITLE, c.GOLD, bold=True, anchor="r")
        points_mid = mid + LINE
        for column, points in enumerate(scene.points[index]):
            x = MARGIN + cell * column + cell / 2
            tone = c.SORE if points.startswith("−") else c.WHITE
            draw_text(draw, (x, points_mid), points, TEXT, tone, anchor="m")
        top += row_h
    draw.line((MARGIN, top + c.px(2), c.WIDTH - MARGIN, top + c.px(2)), fill=c.GOLD, width=c.px(1))
    for line_no, line in enumerate(legend):
        draw_text(draw, (MARGIN, top + c.px(14) + LINE * line_no), line, TEXT, c.MUTED)
    return c.to_png(image)
