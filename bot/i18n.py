"""The one translation function every user-facing string goes through.

Catalogues are gettext `.po` files under ``data/locales/<lang>.po`` whose msgids are
stable keys (``nothanks.button.take``); English is the fallback for unknown locales and
missing keys. Placeholders use ``str.format`` names; ``count`` picks the plural form.
"""

from __future__ import annotations

import gettext
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from babel.messages.pofile import read_po

LOCALES_DIR = Path(__file__).resolve().parent.parent / "data" / "locales"
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
    try:
        return _language_of(locale)
    except TypeError:  # unhashable: worked out each time
        return _find_language(locale)


@lru_cache(maxsize=256)
def _language_of(locale: object) -> str:
    # Every translated line asks; there are only a few dozen locales.
    return _find_language(locale)


def _find_language(locale: object) -> str:
    code = str(getattr(locale, "value", locale)).replace("_", "-").lower()
    available = catalogues()
    if code in available:
        return code
    base = code.split("-", 1)[0]
    return base if base in available else FALLBACK


def t(key: str, locale: object | None = None, /, **params: object) -> str:
    """Translate ``key`` for ``locale`` and fill its placeholders (``count`` picks plurals)."""
    language = language_of(locale)
    table = catalogues()
    forms = table[language].messages.get(key) if language in table else None
    catalogue = table.get(language)
    if forms is None:
        catalogue = table.get(FALLBACK)
        forms = catalogue.messages.get(key) if catalogue else None
    if forms is None or catalogue is None:
        log.error("missing translation key %r", key)
        return key
    count = params.get("count")
    index = catalogue.plural(int(count)) if isinstance(count, int) and len(forms) > 1 else 0
    text = forms[min(index, len(forms) - 1)]
    try:
        return text.format(**params)
    except (KeyError, IndexError, ValueError):
        log.exception("bad placeholders in %s translation of %r", language, key)
        return forms[0]
