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
from bot.render.images.fonts import draw_text, text_width, two_lines
from bot.table.spec import TableFacts

MARGIN = 28
CARD_W, CARD_H = 52, 72  # a taken card
CARD_GAP = 4  # between the cards of one run
RUN_GAP = 14  # between runs
LINE_GAP = 14
BIG_W, BIG_H = 150, 210  # the face-up card
NAME_SIZE = 26
CARD_SIZE = 28
ROW_GAP = 30
NAME_WIDTH = 300  # the left column: name, points, chips
CARDS_WIDTH = 900 - 2 * MARGIN - NAME_WIDTH - 20


@dataclass(frozen=True, slots=True)
class Row:
    """One player as the picture shows them."""

    name: str
    runs: tuple[tuple[int, ...], ...]
    right: str  # points (live) or the score line (final)
    chips: str | None  # the chip count, only where everyone may see it
    marked: bool  # the active player (live) or a winner (final)
    rank: int | None = None


@dataclass(frozen=True, slots=True)
class TableScene:
    """What the live table picture shows."""

    card: int | None
    chips_on_card: int
    chips_label: str
    pile: int
    pile_label: str
    turn_label: str
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
    """The live table's scene, from the public view."""
    view = _public(view)
    rows = []
    for player in view.players:
        cards = view.cards[player]
        chips = view.chips[player] if view.open_chips else None
        rows.append(
            Row(
                name=facts.short_plain_name(player),
                runs=tuple(tuple(run) for run in runs(cards)),
                right=t("images.points", locale, count=score(cards, 0)),
                chips=None if chips is None else t("images.chips", locale, count=chips),
                marked=player == view.active_player,
            )
        )
    chips_label = (
        t("images.chips", locale, count=view.chips_on_card)
        if view.chips_on_card
        else t("images.nothanks.no_chips", locale)
    )
    return TableScene(
        card=view.current_card,
        chips_on_card=view.chips_on_card,
        chips_label=chips_label,
        pile=view.cards_left,
        pile_label=t("images.nothanks.pile", locale, count=view.cards_left),
        turn_label=t("images.turn", locale),
        rows=tuple(rows),
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


def _row_height(row: Row) -> float:
    lines = len(_card_lines(row.runs, CARDS_WIDTH)) if row.runs else 1
    return max(lines * (CARD_H + LINE_GAP) - LINE_GAP, NAME_SIZE + 40)


def _draw_runs(draw: ImageDraw.ImageDraw, row: Row, left: float, top: float) -> None:
    """A row's cards, runs side by side; a run's higher cards are dimmed (they do not count)."""
    if not row.runs:
        draw_text(draw, (left + 10, top + CARD_H / 2), "—", CARD_SIZE, c.MUTED)
        return
    for line_no, line in enumerate(_card_lines(row.runs, CARDS_WIDTH)):
        y = top + line_no * (CARD_H + LINE_GAP)
        # A run sits on one tray, so it reads as one group at a glance.
        groups: list[tuple[float, float]] = []
        for x, _number, counts in line:
            if counts:
                groups.append((x, x + CARD_W))
            else:
                groups[-1] = (groups[-1][0], x + CARD_W)
        for start, end in groups:
            if end - start > CARD_W:
                draw.rounded_rectangle(
                    (left + start - 5, y - 5, left + end + 5, y + CARD_H + 5),
                    radius=10,
                    fill=c.FELT_DARK,
                    outline=c.GOLD,
                    width=3,
                )
        for x, number, counts in line:
            box = (left + x, y, left + x + CARD_W, y + CARD_H)
            c.number_card(draw, box, number, CARD_SIZE, dim=not counts)


def _draw_row(draw: ImageDraw.ImageDraw, row: Row, top: float) -> float:
    """One player: name and figures on the left, the cards on the right; the row's height."""
    height = _row_height(row)
    if row.marked:
        draw.rounded_rectangle(
            (MARGIN - 14, top - 12, c.WIDTH - MARGIN + 14, top + height + 12),
            radius=14,
            outline=c.ACTIVE,
            width=4,
        )
    x: float = MARGIN
    name_mid = top + NAME_SIZE / 2 + 2
    if row.rank is not None:
        medal = {1: c.GOLD, 2: (200, 204, 212), 3: (205, 127, 50)}.get(row.rank, c.FELT_LINE)
        draw.ellipse((x, name_mid - 17, x + 34, name_mid + 17), fill=medal)
        ink = c.INK if row.rank <= 3 else c.WHITE
        draw_text(draw, (x + 17, name_mid), str(row.rank), 22, ink, bold=True, anchor="m")
        x += 44
    elif row.marked:
        draw.polygon([(x, name_mid - 12), (x + 18, name_mid), (x, name_mid + 12)], fill=c.ACTIVE)
        x += 26
    draw_text(
        draw,
        (x, name_mid),
        row.name,
        NAME_SIZE,
        c.WHITE,
        bold=True,
        max_width=NAME_WIDTH - (x - MARGIN),
    )
    # The second line: points (or the final score), open chips, whose turn.
    mid = name_mid + NAME_SIZE + 6
    x = MARGIN
    x += draw_text(draw, (x, mid), row.right, 22, c.GOLD, bold=True, max_width=NAME_WIDTH) + 16
    if row.chips is not None:
        c.chip(draw, x + 11, mid, 11)
        draw_text(draw, (x + 28, mid), row.chips, 22, c.MUTED)
    _draw_runs(draw, row, MARGIN + NAME_WIDTH + 20, top)
    return height


def _fitting(text: str, size: int, width: float, *, bold: bool = False) -> int:
    """The largest size, down to 18 px, at which a label fits its width."""
    while size > 18 and text_width(text, size, bold) > width:
        size -= 2
    return size


def _chips_on(draw: ImageDraw.ImageDraw, count: int, cx: float, cy: float) -> None:
    """The chips lying on the face-up card: a small heap, up to ten drawn."""
    spots = [
        (-34, 0),
        (0, 6),
        (34, 0),
        (-17, -22),
        (17, -18),
        (-34, -40),
        (0, -38),
        (34, -40),
        (-17, -60),
        (17, -58),
    ]
    for dx, dy in spots[: min(count, len(spots))]:
        c.chip(draw, cx + dx, cy + dy, 20)


def table_png(scene: TableScene) -> bytes:
    """The live table as a PNG."""
    head = BIG_H + 2 * MARGIN + 48
    rows_height = sum(_row_height(row) + ROW_GAP for row in scene.rows)
    image, draw = c.canvas(int(head + 16 + rows_height + MARGIN))
    draw.rectangle((0, 0, c.WIDTH, head - 10), fill=c.FELT_DARK)
    # The face-up card, large, with its chips lying on its lower half.
    x0, y0 = MARGIN + 20, MARGIN
    if scene.card is not None:
        c.number_card(draw, (x0, y0, x0 + BIG_W, y0 + BIG_H), scene.card, 84, number_at=0.36)
        _chips_on(draw, scene.chips_on_card, x0 + BIG_W / 2, y0 + BIG_H - 34)
    label_y = y0 + BIG_H + 24
    cx = x0 + BIG_W / 2
    size = _fitting(scene.chips_label, 26, 2 * cx - 8, bold=True)
    draw_text(
        draw,
        (cx, label_y),
        scene.chips_label,
        size,
        c.WHITE,
        bold=True,
        anchor="m",
        max_width=2 * cx - 8,
    )
    # The face-down pile (backs, no number: a big number read as a second face-up card),
    # with how many cards are left in it written below.
    px, py = x0 + BIG_W + 90, y0 + 30
    backs = min(scene.pile, 4)
    for index in range(backs):
        off = (backs - 1 - index) * 6
        c.card_back(draw, (px + off, py - off, px + off + 118, py - off + 164))
    pile_width = 2 * (px + 62 - (2 * cx - 4 + 12))
    for line_no, line in enumerate(two_lines(scene.pile_label, 22, pile_width)):
        draw_text(draw, (px + 62, label_y + 26 * line_no), line, 22, c.MUTED, anchor="m")
    # Whose turn it is, on the right.
    active = next((row for row in scene.rows if row.marked), None)
    if active is not None:
        tx = px + 118 + 50
        room = c.WIDTH - MARGIN - tx
        c.badge(draw, (tx, y0 + 70), scene.turn_label, 24, c.ACTIVE, c.INK, anchor="l")
        draw_text(draw, (tx, y0 + 124), active.name, 34, c.WHITE, bold=True, max_width=room)
        if active.chips is not None:
            c.chip(draw, tx + 13, y0 + 174, 13)
            draw_text(draw, (tx + 34, y0 + 174), active.chips, 24, c.MUTED, max_width=room - 34)
    top: float = head + 16
    for row in scene.rows:
        top += _draw_row(draw, row, top) + ROW_GAP
    return c.to_png(image)


def final_png(scene: FinalScene) -> bytes:
    """The final board as a PNG: ranked rows, then the nine removed cards revealed."""
    rows_height = sum(_row_height(row) + ROW_GAP for row in scene.rows)
    removed_height = 50 + CARD_H + MARGIN
    image, draw = c.canvas(int(MARGIN + 8 + rows_height + removed_height + MARGIN))
    top = float(MARGIN + 8)
    for row in scene.rows:
        top += _draw_row(draw, row, top) + ROW_GAP
    draw.rectangle((0, top, c.WIDTH, image.height), fill=c.FELT_DARK)
    draw_text(draw, (MARGIN, top + 30), scene.removed_label, 26, c.MUTED, bold=True)
    x = MARGIN
    for number in scene.removed:
        c.number_card(draw, (x, top + 56, x + CARD_W, top + 56 + CARD_H), number, CARD_SIZE)
        x += CARD_W + 10
    return c.to_png(image)
