"""The one translation function every user-facing string goes through.

Catalogues are gettext `.po` files under ``data/locales/<lang>.po`` whose msgids are
stable keys (``nothanks.button.take``); English is the fallback for unknown locales and
missing keys. Placeholders use ``str.format`` names; ``count`` picks the plural form; a
negative whole number is written with a real minus sign ("−3"), as players read numbers
everywhere.
"""

from __future__ import annotations

import gettext
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache, wraps
from pathlib import Path
from typing import Any, TypeVar, cast

from babel.messages.pofile import read_po
from babel.numbers import format_decimal

LOCALES_DIR = Path(__file__).resolve().parents[2] / "data" / "locales"
FALLBACK = "en"
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Catalogue:
    """One language's messages: key to a tuple of plural forms."""

    language: str
    messages: dict[str, tuple[str, ...]]
    plural: Callable[[int], int]


def _load(path: Path) -> Catalogue:
    with path.open("rb") as handle:
        catalog = read_po(handle)
    messages: dict[str, tuple[str, ...]] = {}
    for message in catalog:
        if not message.id:
            continue
        key = str(message.id[0] if isinstance(message.id, tuple) else message.id)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        forms = tuple(str(form or "") for form in strings)
        if any(forms):
            messages[key] = forms
    return Catalogue(path.stem, messages, gettext.c2py(catalog.plural_expr))


@cache
def catalogues() -> dict[str, Catalogue]:
    """Every catalogue under data/locales, loaded once."""
    return {path.stem: _load(path) for path in sorted(LOCALES_DIR.glob("*.po"))}


def language_of(locale: object | None) -> str:
    """The catalogue language for a Discord locale ('de', 'en-US', Locale.russian...)."""
    if locale is None:
        return FALLBACK
    memo = _memo()
    try:
        return memo.languages[locale]
    except KeyError:
        language = memo.languages[locale] = _find_language(locale, memo.table)
        return language
    except TypeError:  # unhashable: worked out each time
        return _find_language(locale, memo.table)


def _find_language(locale: object, available: dict[str, Catalogue]) -> str:
    code = str(getattr(locale, "value", locale)).replace("_", "-").lower()
    if code in available:
        return code
    base = code.split("-", 1)[0]
    return base if base in available else FALLBACK


class _Memo:
    """Lookups worked out once per set of catalogues: a table message translates a score of
    lines on every move. Each map is bounded by Discord's locales times the keys."""

    def __init__(self, table: dict[str, Catalogue]) -> None:
        self.table = table  # held, so a reloaded set of catalogues is told apart
        self.languages: dict[object, str] = {}
        # (locale, key) -> the key's forms and their catalogue, None if missing
        self.lookups: dict[tuple[object, str], tuple[tuple[str, ...], Catalogue] | None] = {}
        # (locale, key) -> the finished text of a key used without placeholders
        self.plain: dict[tuple[object, str], str] = {}


_memos: list[_Memo] = []


def _memo() -> _Memo:
    table = catalogues()
    if not _memos or _memos[0].table is not table:
        _memos[:] = [_Memo(table)]
        for cache in _texts:
            cache.cache_clear()
    return _memos[0]


_texts: list[Any] = []  # the translated_text caches, emptied with the catalogues
F = TypeVar("F", bound=Callable[..., Any])


def translated_text(function: F) -> F:
    """Cache a function that builds a text (or a tuple of texts) from translations, by its
    (hashable) arguments.

    For texts a message repeats move after move (a player's cards, the last moves, button
    labels): the cache is emptied whenever the catalogues are loaded anew, as tests do.
    """
    cached = lru_cache(maxsize=4096)(function)
    _texts.append(cached)

    @wraps(function)
    def lookup(*args: Any) -> Any:
        _memo()  # a reload of the catalogues empties the cache first
        return cached(*args)

    return cast(F, lookup)


def _lookup(
    table: dict[str, Catalogue], locale: object | None, key: str
) -> tuple[tuple[str, ...], Catalogue] | None:
    """A key's forms for a locale (else in English) and their catalogue; None if missing."""
    language = language_of(locale)
    catalogue = table.get(language)
    forms = catalogue.messages.get(key) if catalogue is not None else None
    if forms is None:
        catalogue = table.get(FALLBACK)
        forms = catalogue.messages.get(key) if catalogue is not None else None
    if forms is None or catalogue is None:
        return None
    return forms, catalogue


def t(key: str, locale: object | None = None, /, **params: object) -> str:
    """Translate ``key`` for ``locale`` and fill its placeholders (``count`` picks plurals)."""
    memo = _memo()
    if params:
        return _translate(memo, key, locale, params)
    try:
        return memo.plain[locale, key]
    except KeyError:
        text = memo.plain[locale, key] = _translate(memo, key, locale, params)
        return text
    except TypeError:  # an unhashable locale
        return _translate(memo, key, locale, params)


def _translate(memo: _Memo, key: str, locale: object | None, params: dict[str, object]) -> str:
    try:
        found = memo.lookups[locale, key]
    except KeyError:
        found = memo.lookups[locale, key] = _lookup(memo.table, locale, key)
    except TypeError:
        found = _lookup(memo.table, locale, key)
    if found is None:
        log.error("missing translation key %r", key)
        return key
    forms, catalogue = found
    count = params.get("count")
    index = catalogue.plural(int(count)) if isinstance(count, int) and len(forms) > 1 else 0
    text = forms[min(index, len(forms) - 1)]
    # Players read one minus sign everywhere: "−13 pts", not "-13 pts" (issue 41).
    if any(type(value) is int and value < 0 for value in params.values()):
        params = {k: f"−{-v}" if type(v) is int and v < 0 else v for k, v in params.items()}
    try:
        return text.format(**params)
    except (KeyError, IndexError, ValueError):
        log.exception("bad placeholders in %s translation of %r", catalogue.language, key)
        return forms[0]


def number(value: float, locale: object | None, *, signed: bool = False) -> str:
    """A number as the language writes it ("1,036", "1.036", "1 036"); with ``signed``, a
    change with its sign ("+36", "−12": a real minus sign; "±0")."""
    text = format_decimal(abs(value) if signed else value, locale=language_of(locale))
    if not signed:
        return text
    return f"+{text}" if value > 0 else f"−{text}" if value < 0 else f"±{text}"
