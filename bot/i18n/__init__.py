"""Every user-facing string: `t(key, locale, **params)` over the catalogues in data/locales.

Usage::

    from bot.i18n import t
    t("error.not_your_turn", "de", players="@Ada")  # "Du bist nicht am Zug: …"

`bot.i18n.commands` translates slash-command names and descriptions for Discord.
"""

from bot.i18n.catalogue import (
    FALLBACK,
    LOCALES_DIR,
    Catalogue,
    catalogues,
    language_of,
    number,
    t,
    translated_text,
)

__all__ = [
    "FALLBACK",
    "LOCALES_DIR",
    "Catalogue",
    "catalogues",
    "language_of",
    "number",
    "t",
    "translated_text",
]
