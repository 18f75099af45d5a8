"""Drawing primitives shared by the table pictures: the felt, cards, chips, symbols, PNG.

Everything here draws what it is given and nothing else; the scenes decide what is shown.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

from PIL import Image, ImageDraw

from bot.render.images.fonts import draw_text, text_width

Colour = tuple[int, int, int]

# A table picture is posted as a plain attachment, which a 390-px phone shows 302 CSS px
# wide (an embed image: at most 270, and 210 once it is taller than 280 px; measured in
# SimCord's preview, docs/features.md). Every size below is written in those CSS px and
# painted at SCALE pixels each: text of ``size`` reads as ``size / SCALE`` px on a phone.
SHOWN_WIDTH = 302
SCALE = 1.5
WIDTH = round(SHOWN_WIDTH * SCALE)
MIN_TEXT = 12  # the smallest text, in CSS px as shown on a phone
FELT: Colour = (24, 82, 54)  # opaque, so the picture reads the same on dark and light themes
FELT_DARK: Colour = (17, 62, 41)
FELT_LINE: Colour = (46, 112, 80)
INK: Colour = (28, 28, 30)
PAPER: Colour = (250, 246, 236)
WHITE: Colour = (255, 255, 255)
MUTED: Colour = (190, 214, 198)
GOLD: Colour = (247, 201, 72)
ACTIVE: Colour = (255, 221, 87)
CHIP: Colour = (204, 46, 46)
CHIP_EDGE: Colour = (255, 236, 236)
CARD_BACK: Colour = (176, 58, 46)
DIM_CARD: Colour = (198, 192, 178)
DIM_INK: Colour = (105, 100, 92)
ACTION_CARD: Colour = (44, 48, 58)
SORE: Colour = (236, 150, 140)  # a missed bid on the score sheet

# Rage colours, each with its own shape, so no colour is told by its hue alone.
RAGE_FILL: dict[str, Colour] = {
    "blue": (38, 102, 204),
    "green": (34, 140, 70),
    "red": (206, 48, 48),
    "yellow": (238, 190, 36),
    "violet": (132, 74, 190),
    "orange": (232, 116, 20),
}
RAGE_SHAPE: dict[str, str] = {
    "blue": "circle",
    "green": "triangle",
    "red": "heart",  # not a square: '🟥■' read as two squares, and grey on a disabled button
    "yellow": "star",
    "violet": "diamond",
    "orange": "cross",
}


def px(css: float) -> int:
    """A length in CSS px as shown on a phone, in the picture's own pixels."""
    return round(css * SCALE)


def canvas(height: int, width: int = WIDTH) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    """A felt-green picture of this size and a drawing context on it."""
    image = Image.new("RGB", (width, height), FELT)
    return image, ImageDraw.Draw(image)


def to_png(image: Image.Image) -> bytes:
    """The picture as a small PNG in the fixed 256-colour palette (well under 200 KB)."""
    quantised = image.quantize(palette=palette(), dither=Image.Dither.NONE)
    out = io.BytesIO()
    # zlib's fastest level: a third of level 3's time for a file a tenth larger.
    quantised.save(out, format="PNG", compress_level=1)
    return out.getvalue()


@cache
def palette() -> Image.Image:
    """One palette for every picture: the colours drawn here and the edges between them.

    Mapping to a fixed palette is several times faster than choosing one per picture, and
    every colour a picture can hold is known: the fills, the inks and their anti-aliased
    blends (text and shapes over each background).
    """
    inks = [INK, WHITE, MUTED, GOLD, DIM_INK, ACTIVE, CHIP_EDGE, SORE, *RAGE_FILL.values()]
    grounds = [
        FELT,
        FELT_DARK,
        FELT_LINE,
        PAPER,
        DIM_CARD,
        ACTIVE,
        GOLD,
        ACTION_CARD,
        CHIP,
        CARD_BACK,
        (226, 132, 112),
        *RAGE_FILL.values(),
    ]
    blends: list[Colour] = []
    for ink in inks:
        for ground in grounds:
            for step in range(9):
                a = step / 8
                blends.append(
                    (
                        round(ink[0] * a + ground[0] * (1 - a)),
                        round(ink[1] * a + ground[1] * (1 - a)),
                        round(ink[2] * a + ground[2] * (1 - a)),
                    )
                )
    swatch = Image.new("RGB", (len(blends), 1))
    swatch.putdata(blends)
    # The pure colours weigh more, so each keeps an exact entry of its own.
    pure = Image.new("RGB", (len(inks) + len(grounds), 1))
    pure.putdata(inks + grounds)
    both = Image.new("RGB", (swatch.width + 40 * pure.width, 1))
    both.paste(swatch, (0, 0))
    for copy in range(40):
        both.paste(pure, (swatch.width + copy * pure.width, 0))
    return both.quantize(colors=256, method=Image.Quantize.FASTOCTREE)


def text_colour_on(fill: Colour) -> Colour:
    """Dark ink on light fills (yellow, orange), white on dark ones."""
    r, g, b = fill
    return INK if 0.299 * r + 0.587 * g + 0.114 * b > 150 else WHITE


def shape(
    draw: ImageDraw.ImageDraw, kind: str, cx: float, cy: float, r: float, fill: Colour
) -> None:
    """One colour's symbol centred at (cx, cy) with radius r."""
    if kind == "circle":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
    elif kind == "heart":
        # Two round lobes over a point: red's shape, never mistaken for its square.
        lobe, top = r * 0.52, cy - r * 0.35
        for side in (-1, 1):
            x = cx + side * r * 0.47
            draw.ellipse((x - lobe, top - lobe, x + lobe, top + lobe), fill=fill)
        base = cy - r * 0.2
        draw.polygon([(cx - r * 0.98, base), (cx + r * 0.98, base), (cx, cy + r)], fill=fill)
    elif kind == "triangle":
        draw.polygon([(cx, cy - r), (cx + r, cy + r * 0.8), (cx - r, cy + r * 0.8)], fill=fill)
    elif kind == "diamond":
        draw.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=fill)
    elif kind == "star":
        points = []
        for i in range(10):
            radius = r if i % 2 == 0 else r * 0.45
            angle = -math.pi / 2 + i * math.pi / 5
            points.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
        draw.polygon(points, fill=fill)
    elif kind == "cross":
        a = r * 0.38
        draw.rectangle((cx - a, cy - r, cx + a, cy + r), fill=fill)
        draw.rectangle((cx - r, cy - a, cx + r, cy + a), fill=fill)


def colour_swatch(draw: ImageDraw.ImageDraw, colour: str, cx: float, cy: float, r: float) -> None:
    """A colour as a round token with its symbol: the trump or led colour."""
    fill = RAGE_FILL[colour]
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=WHITE, width=px(1.5))
    shape(draw, RAGE_SHAPE[colour], cx, cy, r * 0.55, text_colour_on(fill))


def no_colour_swatch(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    """No trump: an empty token struck through."""
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=FELT_DARK, outline=WHITE, width=px(1.5))
    d = r * 0.7
    draw.line((cx - d, cy + d, cx + d, cy - d), fill=WHITE, width=px(2))


def _paint_number_card(
    draw: ImageDraw.ImageDraw,
    box: tuple[float, float, float, float],
    number: int,
    size: int,
    *,
    dim: bool = False,
    number_at: float = 0.5,
) -> None:
    """A No Thanks! card: cream with its number (a dimmed one does not count)."""
    x0, y0, x1, y1 = box
    radius = max(px(3), int((x1 - x0) * 0.12))
    fill, ink = (DIM_CARD, DIM_INK) if dim else (PAPER, INK)
    draw.rounded_rectangle(box, radius=radius, fill=fill, outline=INK, width=px(1))
    middle = y0 + (y1 - y0) * number_at
    draw_text(draw, ((x0 + x1) / 2, middle), str(number), size, ink, bold=True, anchor="m")


def _paint_card_back(draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float]) -> None:
    """The back of a card: the face-down pile."""
    x0, y0, x1, y1 = box
    radius = max(px(3), int((x1 - x0) * 0.12))
    draw.rounded_rectangle(box, radius=radius, fill=CARD_BACK, outline=PAPER, width=px(1.5))
    inset = (x1 - x0) * 0.14
    draw.rounded_rectangle(
        (x0 + inset, y0 + inset, x1 - inset, y1 - inset),
        radius=max(px(2), radius - px(2)),
        outline=(226, 132, 112),
        width=px(1),
    )
    # A lattice of small diamonds: a back, which a face-up card (a number on white) never is.
    step = max(float(px(4)), (x1 - x0) / 7)
    r = step * 0.22
    row = 0
    y = y0 + inset + step * 0.75
    while y < y1 - inset - step * 0.5:
        x = x0 + inset + step * (0.75 if row % 2 == 0 else 1.25)
        while x < x1 - inset - step * 0.5:
            draw.polygon([(x, y - r), (x + r, y), (x, y + r), (x - r, y)], fill=(226, 132, 112))
            x += step
        y += step * 0.5
        row += 1


def chip(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    """One chip, seen from above."""
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=CHIP, outline=CHIP_EDGE, width=px(1))
    inner = r * 0.55
    draw.ellipse((cx - inner, cy - inner, cx + inner, cy + inner), outline=CHIP_EDGE, width=px(1))


def _paint_rage_card(
    draw: ImageDraw.ImageDraw,
    box: tuple[float, float, float, float],
    colour: str,
    value: int,
) -> None:
    """A Rage colour card: its colour, its value large, its colour's symbol in two corners."""
    x0, y0, x1, y1 = box
    w = x1 - x0
    fill = RAGE_FILL[colour]
    ink = text_colour_on(fill)
    draw.rounded_rectangle(box, radius=int(w * 0.1), fill=fill, outline=WHITE, width=px(1.5))
    r = w * 0.11
    shape(draw, RAGE_SHAPE[colour], x0 + w * 0.2, y0 + w * 0.2, r, ink)
    shape(draw, RAGE_SHAPE[colour], x1 - w * 0.2, y1 - w * 0.2, r, ink)
    draw_text(
        draw, ((x0 + x1) / 2, (y0 + y1) / 2), str(value), int(w * 0.46), ink, bold=True, anchor="m"
    )


def _paint_action_card(
    draw: ImageDraw.ImageDraw,
    box: tuple[float, float, float, float],
    mark: str,
    lines: list[str],
    named: str | None = None,
) -> None:
    """A Rage action card: a dark card with its mark large and its name below.

    A Joker shows the colour named for it as a band with that colour's symbol.
    """
    x0, y0, x1, y1 = box
    w = x1 - x0
    draw.rounded_rectangle(box, radius=int(w * 0.1), fill=ACTION_CARD, outline=GOLD, width=px(1.5))
    if named is not None:
        band = (x0 + px(3), y0 + px(3), x1 - px(3), y0 + w * 0.36)
        draw.rounded_rectangle(band, radius=int(w * 0.07), fill=RAGE_FILL[named])
        shape(
            draw,
            RAGE_SHAPE[named],
            (x0 + x1) / 2,
            (band[1] + band[3]) / 2,
            w * 0.1,
            text_colour_on(RAGE_FILL[named]),
        )
    mid = y0 + (y1 - y0) * (0.5 if named is not None else 0.4)
    draw_text(draw, ((x0 + x1) / 2, mid), mark, int(w * 0.34), GOLD, bold=True, anchor="m")
    size = max(px(MIN_TEXT), int(w * 0.13))
    top = y1 - size * 1.15 * len(lines) - px(2)
    for index, line in enumerate(lines):
        draw_text(
            draw,
            ((x0 + x1) / 2, top + size * 1.15 * index + size * 0.5),
            line,
            size,
            WHITE,
            bold=True,
            anchor="m",
            max_width=w - px(4),
        )


def wrap_words(text: str) -> list[str]:
    """A label in at most two lines, split at the space nearest its middle."""
    words = text.split()
    if len(words) < 2:
        return [text]
    best = min(
        range(1, len(words)),
        key=lambda i: abs(len(" ".join(words[:i])) - len(" ".join(words[i:]))),
    )
    return [" ".join(words[:best]), " ".join(words[best:])]


def badge(
    draw: ImageDraw.ImageDraw,
    xy: tuple[float, float],
    text: str,
    size: int,
    fill: Colour,
    ink: Colour,
    *,
    anchor: str = "m",
) -> None:
    """A pill-shaped label (e.g. 'wins so far') centred, left- or right-aligned at xy."""
    width = text_width(text, size, True) + size
    x, y = xy
    if anchor == "m":
        x -= width / 2
    elif anchor == "r":
        x -= width
    height = size * 1.5
    draw.rounded_rectangle(
        (x, y - height / 2, x + width, y + height / 2), radius=int(height / 2), fill=fill
    )
    draw_text(draw, (x + width / 2, y), text, size, ink, bold=True, anchor="m")


# -- sprites: a card is painted once per look and size, then pasted -------------------------

Box = tuple[float, float, float, float]


# 5-32 KB each (a big card 75 x 105 px, 4 bytes a pixel): 160 are at most 5 MB, enough for
# a No Thanks! deck at both sizes or the Rage cards of several tricks.
@lru_cache(maxsize=160)
def _sprite(
    painter: Callable[..., None], width: int, height: int, args: tuple[Any, ...]
) -> Image.Image:
    """A card painted once on a transparent ground (a table repeats its cards move after move)."""
    sprite = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    painter(ImageDraw.Draw(sprite), (0, 0, width - 1, height - 1), *args)
    return sprite


def _paste(draw: ImageDraw.ImageDraw, box: Box, painter: Callable[..., None], *args: Any) -> None:
    """Paste the sprite of ``painter(box, *args)`` where the box is."""
    x0, y0 = round(box[0]), round(box[1])
    width, height = round(box[2]) - x0 + 1, round(box[3]) - y0 + 1
    sprite = _sprite(painter, width, height, args)
    # The core paste: Image.paste's checks cost as much as the copy of a small card.
    draw.im.paste(sprite.im, (x0, y0, x0 + width, y0 + height), sprite.im)


def number_card(
    draw: ImageDraw.ImageDraw,
    box: Box,
    number: int,
    size: int,
    *,
    dim: bool = False,
    number_at: float = 0.5,
) -> None:
    """A No Thanks! card: cream with its number (a dimmed one does not count)."""
    _paste(draw, box, _number_card_at, number, size, dim, number_at)


def _number_card_at(
    draw: ImageDraw.ImageDraw, box: Box, number: int, size: int, dim: bool, number_at: float
) -> None:
    _paint_number_card(draw, box, number, size, dim=dim, number_at=number_at)


def card_back(draw: ImageDraw.ImageDraw, box: Box) -> None:
    """The back of a card: the face-down pile."""
    _paste(draw, box, _paint_card_back)


def rage_card(draw: ImageDraw.ImageDraw, box: Box, colour: str, value: int) -> None:
    """A Rage colour card: its colour, its value large, its colour's symbol in two corners."""
    _paste(draw, box, _paint_rage_card, colour, value)


def action_card(
    draw: ImageDraw.ImageDraw, box: Box, mark: str, lines: list[str], named: str | None = None
) -> None:
    """A Rage action card: a dark card with its mark large and its name below."""
    _paste(draw, box, _action_card_of, mark, tuple(lines), named)


def _action_card_of(
    draw: ImageDraw.ImageDraw, box: Box, mark: str, lines: tuple[str, ...], named: str | None
) -> None:
    _paint_action_card(draw, box, mark, list(lines), named)
