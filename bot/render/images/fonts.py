"""The shipped fonts and text drawing with per-character fallback (Latin, Cyrillic, emoji).

DejaVu Sans draws letters (Latin, Cyrillic, Greek and many symbols); Noto Emoji
(monochrome) draws the emoji DejaVu lacks. Both ship in data/fonts with their licences;
nothing is downloaded at run time.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = Path(__file__).resolve().parents[3] / "data" / "fonts"
REGULAR = FONT_DIR / "DejaVuSans.ttf"
BOLD = FONT_DIR / "DejaVuSans-Bold.ttf"
EMOJI = FONT_DIR / "NotoEmoji-Regular.ttf"
ELLIPSIS = "…"
# Joiners, variation selectors and skin tones have no glyph of their own in a monochrome
# font; left in, they would draw as boxes between the pictures they modify.
_INVISIBLE = frozenset(
    [0x200D, 0xFE0E, 0xFE0F, 0x20E3, *range(0x1F3FB, 0x1F400), *range(0xE0020, 0xE0080)]
)
_NOTDEF_PROBE = "\U0010fffd"  # a private-use code point no font here draws

Font = ImageFont.FreeTypeFont


@cache
def font(size: int, bold: bool = False) -> Font:
    """DejaVu Sans (bold or regular) at a pixel size; loaded once per size."""
    path = BOLD if bold else REGULAR
    return ImageFont.truetype(str(path), size, layout_engine=ImageFont.Layout.BASIC)


@cache
def emoji_font(size: int) -> Font:
    """Noto Emoji (monochrome) at a pixel size, the fallback for pictographs."""
    return ImageFont.truetype(str(EMOJI), size, layout_engine=ImageFont.Layout.BASIC)


@cache
def _notdef(path: str) -> bytes:
    probe = ImageFont.truetype(path, 32, layout_engine=ImageFont.Layout.BASIC)
    return bytes(probe.getmask(_NOTDEF_PROBE))


@lru_cache(maxsize=8192)
def _has_glyph(path: str, char: str) -> bool:
    """Whether a font file draws this character (anything but its 'missing' box)."""
    probe = ImageFont.truetype(path, 32, layout_engine=ImageFont.Layout.BASIC)
    return bytes(probe.getmask(char)) != _notdef(path) or char.isspace()


@lru_cache(maxsize=4096)
def runs(text: str, size: int, bold: bool = False) -> tuple[tuple[str, Font], ...]:
    """The text split into runs of one font each: DejaVu where it has the glyph, else emoji."""
    main, path = font(size, bold), str(BOLD if bold else REGULAR)
    result: list[tuple[str, Font]] = []
    for char in text:
        if ord(char) in _INVISIBLE:
            continue
        chosen = main if _has_glyph(path, char) else emoji_font(size)
        if result and result[-1][1] is chosen:
            result[-1] = (result[-1][0] + char, chosen)
        else:
            result.append((char, chosen))
    return tuple(result)


@lru_cache(maxsize=8192)
def text_width(text: str, size: int, bold: bool = False) -> float:
    """The width of a text in pixels, fonts mixed as drawn."""
    return sum(_mask(part, face)[3] for part, face in runs(text, size, bold))


def fit_text(text: str, size: int, width: float, bold: bool = False) -> str:
    """The text, shortened with an ellipsis so that it fits in ``width`` pixels."""
    if text_width(text, size, bold) <= width:
        return text
    # Cut whole characters from the end until the text and its ellipsis fit.
    chars = list(text)
    while chars and text_width("".join(chars).rstrip() + ELLIPSIS, size, bold) > width:
        chars.pop()
    return "".join(chars).rstrip() + ELLIPSIS


def draw_text(
    draw: ImageDraw.ImageDraw,
    xy: tuple[float, float],
    text: str,
    size: int,
    fill: tuple[int, ...] | str,
    *,
    bold: bool = False,
    anchor: str = "l",
    max_width: float | None = None,
) -> float:
    """Draw one line at ``xy`` (its baseline-middle height; anchor l, m or r); its width.

    Every run sits on one baseline, so DejaVu letters and emoji line up.
    """
    if max_width is not None:
        text = fit_text(text, size, max_width, bold)
    width = text_width(text, size, bold)
    x, y = xy
    if anchor == "m":
        x -= width / 2
    elif anchor == "r":
        x -= width
    # The visual middle of a capital letter sits about 0.36 em above the baseline.
    baseline = y + size * 0.36
    for part, face in runs(text, size, bold):
        mask, left, top, advance = _mask(part, face)
        if mask is not None:
            # Pasting a cached glyph mask is several times faster than drawing the text anew,
            # and a table's pictures repeat the same names and numbers move after move.
            draw.bitmap((round(x + left), round(baseline + top)), mask, fill=fill)
        x += advance
    return width


@lru_cache(maxsize=4096)
def _mask(part: str, face: Font) -> tuple[Image.Image | None, int, int, float]:
    """A run of text rendered once as a coverage mask: the mask, its offset from the
    baseline and the run's advance."""
    advance = face.getlength(part)
    left, top, right, bottom = face.getbbox(part, anchor="ls")
    if right <= left or bottom <= top:
        return None, 0, 0, advance
    mask = Image.new("L", (int(right - left), int(bottom - top)), 0)
    ImageDraw.Draw(mask).text((-left, -top), part, font=face, fill=255, anchor="ls")
    return mask, int(left), int(top), advance


def words(text: str) -> list[str]:
    """A text cut where a line may break: after a space or a hyphen ("Анна-" / "Мария"),
    each piece keeping its trailing space or hyphen."""
    return [piece for piece in re.split(r"(?<=[ \-])", text) if piece]


def _fill(pieces: list[str], size: int, width: float, bold: bool, lines: int) -> list[str] | None:
    """Whole words in at most ``lines`` lines of ``width`` pixels, each line as full as it
    can be ('🤖 Computer 2' / '(hard)': the number stays with its name); None if some word
    does not fit a line or the words need more lines."""
    taken: list[str] = []
    rest = pieces
    while rest:
        end = 0
        while (
            end < len(rest) and text_width("".join(rest[: end + 1]).rstrip(), size, bold) <= width
        ):
            end += 1
        if end == 0 or len(taken) == lines:
            return None
        taken.append("".join(rest[:end]).rstrip())
        rest = rest[end:]
    return taken


@lru_cache(maxsize=4096)
def fit_lines(
    text: str, size: int, width: float, bold: bool = False, lines: int = 2, lighter: bool = False
) -> tuple[tuple[str, ...], bool]:
    """A name (or a sum) in at most ``lines`` lines of ``width`` pixels, and whether it is
    drawn bold: a line breaks only between words, never inside one ("Compu" / "ter 3").

    Fewer lines first; with ``lighter`` a bold text that does not fit is tried in the
    regular weight (narrower, same size) before anything is cut. What still does not fit
    is cut at the end of a word with an ellipsis, on its last line.
    """
    pieces = words(text)
    weights = [bold, False] if bold and lighter else [bold]
    for count in range(1, lines + 1):
        for weight in weights:
            found = _fill(pieces, size, width, weight, count)
            if found is not None:
                return tuple(found), weight
    # Too long: the weight that shows the most of it, cut at the end of a word.
    return max((_cut(pieces, size, width, weight, lines) for weight in weights), key=_shown)


def _shown(fitted: tuple[tuple[str, ...], bool]) -> int:
    return sum(len(line.removesuffix(ELLIPSIS)) for line in fitted[0])


def _cut(
    pieces: list[str], size: int, width: float, bold: bool, lines: int
) -> tuple[tuple[str, ...], bool]:
    """As many whole words as fit the first lines; the rest on the last line, cut with an
    ellipsis (a word wider than a line is cut on its own line)."""
    taken: list[str] = []
    rest = pieces
    while len(taken) < lines - 1 and rest:
        end = 0
        while (
            end < len(rest) and text_width("".join(rest[: end + 1]).rstrip(), size, bold) <= width
        ):
            end += 1
        if end == 0:
            break
        taken.append("".join(rest[:end]).rstrip())
        rest = rest[end:]
    if rest:
        taken.append(fit_text("".join(rest).strip(), size, width, bold))
    return tuple(taken), bold


def two_lines(text: str, size: int, width: float, bold: bool = False) -> tuple[str, ...]:
    """A text in at most two lines of ``width`` pixels, broken between words only; what
    still does not fit ends in an ellipsis."""
    return fit_lines(text, size, width, bold)[0]
