"""No Thanks! pictures: the live table and the final board.

A scene is everything a picture shows, as plain values; the picture is drawn from the
scene alone, and the scene is built from the public view alone, so a card removed at
the start or a private chip count can reach a picture only through the public view.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import ImageDraw

from bot.engines.nothanks import PlayerView, rank_standings, runs, score
from bot.i18n import t
from bot.render.images import cards as c
from bot.render.images.fonts import draw_text, fit_lines, text_width, two_lines
from bot.render.table import rating_change
from bot.table.spec import TableFacts

# Sizes in CSS px as a phone shows them (see cards.SHOWN_WIDTH), painted at px().
MARGIN = c.px(7)
CARD_W, CARD_H = c.px(20), c.px(27)  # a taken card
CARD_GAP = c.px(1.5)  # between the cards of one run
RUN_GAP = c.px(6)  # between runs
LINE_GAP = c.px(5)
BIG_W, BIG_H = c.px(50), c.px(70)  # the face-up card
BIG_X = MARGIN + c.px(4)
BIG_SIZE = c.px(28)  # its number
TEXT = c.px(c.MIN_TEXT)  # names, figures, labels: the smallest text there is
CARD_SIZE = TEXT  # a taken card's number (one font size fewer to keep loaded)
ROW_GAP = c.px(8)
NAME_WIDTH = c.px(112)  # the left column: name, points, chips
CARDS_LEFT = MARGIN + NAME_WIDTH + c.px(6)
CARDS_WIDTH = c.WIDTH - MARGIN - CARDS_LEFT
LINE = c.px(15)  # one line of TEXT
# The final board: the name on a line of its own across the row, the sum ('46 − 14 chips
# = 32', never wrapped) in a left column as wide as the widest sum (at most SUM_WIDTH),
# the cards beside it.
SUM_WIDTH = c.px(140)


@dataclass(frozen=True, slots=True)
class Row:
    """One player as the picture shows them."""

    name: str
    runs: tuple[tuple[int, ...], ...]
    right: str  # points (live) or the score line (final)
    chips: str | None  # the chip count, only where everyone may see it
    marked: bool  # the active player (live) or a winner (final)
    rank: int | None = None
    note: str | None = None  # on the final board, the rating's change ('Δ +7')


@dataclass(frozen=True, slots=True)
class TableScene:
    """What the live table picture shows: only what changes when a card is taken.

    The chips on the card, open chip counts and whose turn it is change with every No
    thanks!; they are in the message text, so a pass repaints and uploads nothing (the
    picture, its key and its alt text stay as they were).
    """

    card: int | None
    pile: int
    pile_label: str
    rows: tuple[Row, ...]


@dataclass(frozen=True, slots=True)
class FinalScene:
    """What the final board shows: ranked rows and the removed cards."""

    rows: tuple[Row, ...]
    removed_label: str
    removed: tuple[int, ...]


def _public(view: PlayerView) -> PlayerView:
    # A player's own view holds their private chips: it must never become a public picture.
    if view.viewer is not None:
        raise ValueError("a public picture is drawn from the spectators' view only")
    return view


def table_scene(facts: TableFacts, view: PlayerView, locale: object) -> TableScene:
    """The live table's scene, from the public view: the card, the pile and every hand."""
    view = _public(view)
    rows = tuple(
        Row(
            name=facts.short_plain_name(player),
            runs=tuple(tuple(run) for run in runs(view.cards[player])),
            right=t("images.points", locale, count=score(view.cards[player], 0)),
            chips=None,
            marked=False,
        )
        for player in view.players
    )
    return TableScene(
        card=view.current_card,
        pile=view.cards_left,
        pile_label=t("images.nothanks.pile", locale, count=view.cards_left),
        rows=rows,
    )


def final_scene(facts: TableFacts, view: PlayerView, locale: object) -> FinalScene:
    """The final board's scene: rank order, card points − chips = total; removed cards."""
    view = _public(view)
    standings = rank_standings(
        [
            (player, seat, view.cards[player], view.chips[player] or 0)
            for seat, player in enumerate(view.players)
        ]
    )
    rows = tuple(
        Row(
            name=facts.plain_name(s.player),
            runs=tuple(tuple(run) for run in s.runs),
            right=t(
                "images.nothanks.final_score",
                locale,
                points=s.card_points,
                chips=s.chips,
                total=f"−{-s.total}" if s.total < 0 else s.total,
            ),
            chips=None,
            marked=s.rank == 1,
            rank=s.rank,
            note=rating_change(facts, s.player, locale),
        )
        for s in standings
    )
    return FinalScene(
        rows=rows,
        removed_label=t("images.nothanks.removed", locale),
        removed=tuple(sorted(view.removed or ())),
    )


# -- drawing ------------------------------------------------------------------------------


def _card_lines(
    row_runs: tuple[tuple[int, ...], ...], width: float
) -> list[list[tuple[float, int, bool]]]:
    """Where each card of a row goes: lines of (x offset, number, counts), runs kept whole."""
    lines: list[list[tuple[float, int, bool]]] = [[]]
    x = 0.0
    for run in row_runs:
        run_width = len(run) * CARD_W + (len(run) - 1) * CARD_GAP
        if lines[-1] and x + run_width > width:
            lines.append([])
            x = 0.0
        for index, number in enumerate(run):
            lines[-1].append((x, number, index == 0))
            x += CARD_W + (CARD_GAP if index < len(run) - 1 else RUN_GAP)
    return lines


def _name_lines(row: Row) -> tuple[str, ...]:
    """A row's name in one or two lines of the name column (never cut short)."""
    return two_lines(row.name, TEXT, NAME_WIDTH - _name_indent(row), True)


def _name_indent(row: Row) -> int:
    """Room left of the name for a rank medal or the turn marker."""
    if row.rank is not None:
        return c.px(20)
    return c.px(10) if row.marked else 0


def _right_lines(row: Row) -> tuple[str, ...]:
    """The points (or the final score) in one or two lines of the name column."""
    return two_lines(row.right, TEXT, NAME_WIDTH, True)


def _chips_below(row: Row) -> bool:
    """Whether open chips go on a line of their own (they do not fit after the points)."""
    if row.chips is None:
        return False
    last = text_width(_right_lines(row)[-1], TEXT, True)
    return last + c.px(15) + text_width(row.chips, TEXT) > NAME_WIDTH


def _row_height(row: Row) -> float:
    lines = len(_card_lines(row.runs, CARDS_WIDTH)) if row.runs else 1
    cards = lines * (CARD_H + LINE_GAP) - LINE_GAP
    text = (len(_name_lines(row)) + len(_right_lines(row)) + _chips_below(row)) * LINE
    return max(cards, text)


def _draw_runs(
    draw: ImageDraw.ImageDraw, row: Row, left: float, top: float, width: float = CARDS_WIDTH
) -> None:
    """A row's cards, runs side by side; a run's higher cards are dimmed (they do not count)."""
    if not row.runs:
        draw_text(draw, (left + c.px(4), top + CARD_H / 2), "—", TEXT, c.MUTED)
        return
    for line_no, line in enumerate(_card_lines(row.runs, width)):
        y = top + line_no * (CARD_H + LINE_GAP)
        # A run sits on one tray, so it reads as one group at a glance.
        groups: list[tuple[float, float]] = []
        for x, _number, counts in line:
            if counts:
                groups.append((x, x + CARD_W))
            else:
                groups[-1] = (groups[-1][0], x + CARD_W)
        pad = c.px(2)
        for start, end in groups:
            if end - start > CARD_W:
                draw.rounded_rectangle(
                    (left + start - pad, y - pad, left + end + pad, y + CARD_H + pad),
                    radius=c.px(4),
                    fill=c.FELT_DARK,
                    outline=c.GOLD,
                    width=c.px(1),
                )
        for x, number, counts in line:
            box = (left + x, y, left + x + CARD_W, y + CARD_H)
            c.number_card(draw, box, number, CARD_SIZE, dim=not counts)


def _frame(draw: ImageDraw.ImageDraw, top: float, height: float) -> None:
    """The frame around a marked row (the turn's player, or a final board's winner)."""
    edge = c.px(4)
    draw.rounded_rectangle(
        (MARGIN - edge, top - edge, c.WIDTH - MARGIN + edge, top + height + edge),
        radius=c.px(5),
        outline=c.ACTIVE,
        width=c.px(1.5),
    )


def _draw_row(draw: ImageDraw.ImageDraw, row: Row, top: float) -> float:
    """One player: name and figures on the left, the cards on the right; the row's height."""
    height = _row_height(row)
    if row.marked:
        _frame(draw, top, height)
    x: float = MARGIN
    name_mid = top + LINE / 2
    if row.rank is not None:
        medal = {1: c.GOLD, 2: (200, 204, 212), 3: (205, 127, 50)}.get(row.rank, c.FELT_LINE)
        r = c.px(8)
        draw.ellipse((x, name_mid - r, x + 2 * r, name_mid + r), fill=medal)
        ink = c.INK if row.rank <= 3 else c.WHITE
        draw_text(draw, (x + r, name_mid), str(row.rank), TEXT, ink, bold=True, anchor="m")
    elif row.marked:
        a = c.px(4)
        draw.polygon([(x, name_mid - a), (x + 1.5 * a, name_mid), (x, name_mid + a)], fill=c.ACTIVE)
    x += _name_indent(row)
    lines = _name_lines(row)
    for line_no, line in enumerate(lines):
        draw_text(draw, (x, name_mid + LINE * line_no), line, TEXT, c.WHITE, bold=True)
    # The next line: points (or the final score), open chips.
    mid = name_mid + LINE * len(lines)
    x = MARGIN
    right = _right_lines(row)
    for line_no, line in enumerate(right):
        width = draw_text(draw, (x, mid + LINE * line_no), line, TEXT, c.GOLD, bold=True)
    mid += LINE * (len(right) - 1)
    x += width + c.px(5)
    if _chips_below(row):
        x, mid = MARGIN, mid + LINE
    if row.chips is not None:
        c.chip(draw, x + c.px(4), mid, c.px(4))
        draw_text(draw, (x + c.px(10), mid), row.chips, TEXT, c.MUTED)
    _draw_runs(draw, row, CARDS_LEFT, top)
    return height


def _head_height() -> int:
    return MARGIN + BIG_H + c.px(10)


def table_png(scene: TableScene) -> bytes:
    """The live table as a PNG: the face-up card, the pile, then a row per player."""
    head = _head_height()
    rows_height = sum(_row_height(row) + ROW_GAP for row in scene.rows)
    image, draw = c.canvas(int(head + ROW_GAP + rows_height + MARGIN / 2))
    draw.rectangle((0, 0, c.WIDTH, head - c.px(4)), fill=c.FELT_DARK)
    # The face-up card, large (its chips are in the text: they change every move).
    x0, y0 = BIG_X, MARGIN
    if scene.card is not None:
        c.number_card(draw, (x0, y0, x0 + BIG_W, y0 + BIG_H), scene.card, BIG_SIZE, number_at=0.36)
    # The face-down pile (backs, no number: a big number read as a second face-up card),
    # with how many cards are left in it written beside.
    px0, py = x0 + BIG_W + c.px(24), y0 + c.px(8)
    pile_w, pile_h = c.px(38), c.px(54)
    backs = min(scene.pile, 4)
    for index in range(backs):
        off = (backs - 1 - index) * c.px(2)
        c.card_back(draw, (px0 + off, py - off, px0 + off + pile_w, py - off + pile_h))
    label_x = px0 + pile_w + c.px(14)
    draw_text(
        draw,
        (label_x, py + pile_h / 2),
        scene.pile_label,
        TEXT,
        c.MUTED,
        max_width=c.WIDTH - MARGIN - label_x,
    )
    top: float = head + ROW_GAP
    for row in scene.rows:
        top += _draw_row(draw, row, top) + ROW_GAP
    return c.to_png(image)


def _final_name(row: Row) -> tuple[str, bool]:
    """The name on one line beside the medal and left of the rating's change (ellipsized
    if even the regular weight is too wide), and whether it is bold."""
    room: float = c.WIDTH - 2 * MARGIN - c.px(20)
    if row.note:
        room -= text_width(row.note, TEXT) + c.px(8)
    (line,), bold = fit_lines(row.name, TEXT, room, True, 1, lighter=True)
    return line, bold


def _final_sum(row: Row) -> tuple[str, bool]:
    """The sum on one line of the left column, in the regular weight if bold is too wide."""
    (line,), bold = fit_lines(row.right, TEXT, SUM_WIDTH, True, 1, lighter=True)
    return line, bold


def _cards_left(scene: FinalScene) -> float:
    """Where the final board's cards start: right of the widest sum."""
    widest = 0.0
    for row in scene.rows:
        line, bold = _final_sum(row)
        widest = max(widest, text_width(line, TEXT, bold))
    return MARGIN + min(widest, SUM_WIDTH) + c.px(10)


def _final_row_height(row: Row, left: float) -> float:
    lines = len(_card_lines(row.runs, c.WIDTH - MARGIN - left)) if row.runs else 1
    return LINE + max(LINE, lines * (CARD_H + LINE_GAP) - LINE_GAP) + c.px(2)


def _draw_final_row(draw: ImageDraw.ImageDraw, row: Row, top: float, left: float) -> float:
    """One player of the final board: medal, name and rating change on the first line;
    the sum, then the cards beside it; the row's height."""
    height = _final_row_height(row, left)
    if row.marked:
        _frame(draw, top, height)
    mid = top + LINE / 2
    rank = row.rank or 0
    medal = {1: c.GOLD, 2: (200, 204, 212), 3: (205, 127, 50)}.get(rank, c.FELT_LINE)
    r = c.px(8)
    draw.ellipse((MARGIN, mid - r, MARGIN + 2 * r, mid + r), fill=medal)
    ink = c.INK if rank <= 3 else c.WHITE
    draw_text(draw, (MARGIN + r, mid), str(rank), TEXT, ink, bold=True, anchor="m")
    name, bold = _final_name(row)
    draw_text(draw, (MARGIN + c.px(20), mid), name, TEXT, c.WHITE, bold=bold)
    if row.note:
        draw_text(draw, (c.WIDTH - MARGIN, mid), row.note, TEXT, c.MUTED, anchor="r")
    cards_top = top + LINE + c.px(2)
    total, bold = _final_sum(row)
    draw_text(draw, (MARGIN, cards_top + CARD_H / 2), total, TEXT, c.GOLD, bold=bold)
    _draw_runs(draw, row, left, cards_top, c.WIDTH - MARGIN - left)
    return height


def final_png(scene: FinalScene) -> bytes:
    """The final board as a PNG: ranked rows, then the nine removed cards revealed."""
    left = _cards_left(scene)
    rows_height = sum(_final_row_height(row, left) + ROW_GAP for row in scene.rows)
    removed_height = LINE + CARD_H + MARGIN + c.px(6)
    image, draw = c.canvas(int(MARGIN + c.px(4) + rows_height + removed_height))
    top = float(MARGIN + c.px(4))
    for row in scene.rows:
        top += _draw_final_row(draw, row, top, left) + ROW_GAP
    draw.rectangle((0, top, c.WIDTH, image.height), fill=c.FELT_DARK)
    draw_text(draw, (MARGIN, top + c.px(12)), scene.removed_label, TEXT, c.MUTED, bold=True)
    x = MARGIN
    card_top = top + c.px(22)
    for number in scene.removed:
        c.number_card(draw, (x, card_top, x + CARD_W, card_top + CARD_H), number, CARD_SIZE)
        x += CARD_W + c.px(3)
    return c.to_png(image)
