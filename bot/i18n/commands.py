"""Slash command names, descriptions, options and choices in every catalogue language.

Keys are derived from where a string sits in the command tree, so a new command needs
only catalogue entries, no table here:

- ``cmd.<command path>.name`` / ``.description`` for groups and commands
  (``cmd.nothanks.name``, ``cmd.nothanks.start.description``);
- ``cmd.<command path>.<option>.name`` / ``.description`` for options
  (``cmd.nothanks.start.open_chips.name``);
- ``cmd.choice.<value>.name`` for choices: discord.py gives the translator only the
  choice itself, not its option, so choices are keyed by their value.

discord.py wraps every name, description and choice of a command in ``locale_str`` when
the command is built, so cogs keep writing plain strings and still get translated.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import Any, cast

import discord
from discord import app_commands
from discord.app_commands import TranslationContextLocation as Location
from discord.app_commands import locale_str

from bot.i18n import FALLBACK, catalogues, language_of

log = logging.getLogger(__name__)
PREFIX = "cmd"
# Discord's limits (API docs, Application Commands): names 1-32 characters, descriptions
# and choice names 1-100.
NAME_MAX = 32
TEXT_MAX = 100
NAME_LOCATIONS = frozenset({Location.command_name, Location.group_name, Location.parameter_name})
# Context menus (user/message commands) may use spaces and capitals in their names.
_NOT_SLUG = re.compile(r"[^a-z0-9_]+")


def _slug(text: object) -> str:
    """One key segment: 'Show Chips' -> 'show_chips', 2.5 -> '2_5'."""
    return _NOT_SLUG.sub("_", str(text).lower()).strip("_") or "_"


def _path(command: Any) -> list[str]:
    """The key segments of a command or group: 'nothanks start' -> ['nothanks', 'start']."""
    if isinstance(command, app_commands.ContextMenu):
        return [_slug(command.name)]
    return [_slug(part) for part in command.qualified_name.split()]


def command_key(context: app_commands.TranslationContextTypes) -> str | None:
    """The catalogue key of a command tree string, or None for strings outside the tree."""
    # The data's type follows from the location, which mypy cannot see: read it as Any.
    location, data = context.location, cast(Any, context.data)
    if location in (Location.command_name, Location.group_name):
        parts, field = _path(data), "name"
    elif location in (Location.command_description, Location.group_description):
        parts, field = _path(data), "description"
    elif location in (Location.parameter_name, Location.parameter_description):
        field = "name" if location is Location.parameter_name else "description"
        parts = [*_path(data.command), _slug(data.display_name)]
    elif location is Location.choice_name:
        parts, field = ["choice", _slug(data.value)], "name"
    else:
        return None
    return ".".join((PREFIX, *parts, field))


def is_valid_name(name: str) -> bool:
    """Whether Discord accepts this as a localised command or option name.

    The rule is ``^[-_\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$`` and lower case where
    the script has case; Python's ``re`` has no ``\\p``, so letters and digits are told
    apart by Unicode category (our languages need no Devanagari or Thai marks).
    """
    if not 1 <= len(name) <= NAME_MAX or name != name.lower():
        return False
    return all(char in "-_" or unicodedata.category(char)[0] in "LN" for char in name)


def is_valid_text(text: str) -> bool:
    """Whether Discord accepts this as a localised description or choice name."""
    return 1 <= len(text) <= TEXT_MAX


def localise(context: app_commands.TranslationContextTypes, locale: discord.Locale) -> str | None:
    """A command tree string in ``locale``, or None where Discord should show the default.

    None for English (the defaults already are English), for locales without a catalogue
    and for text Discord would reject (one bad name would fail the whole sync).
    """
    language = language_of(locale)
    if language == FALLBACK:
        return None
    key = command_key(context)
    if key is None:
        return None
    forms = catalogues()[language].messages.get(key)
    if not forms:
        log.warning("no %s translation of command key %r", language, key)
        return None
    text = forms[0]
    valid = is_valid_name(text) if context.location in NAME_LOCATIONS else is_valid_text(text)
    if not valid:
        log.error("%s translation of %r breaks Discord's rules: %r", language, key, text)
        return None
    return text


class CatalogueTranslator(app_commands.Translator):
    """Localises the slash commands from the .po catalogues when the tree is synced."""

    async def translate(
        self,
        string: locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        """The catalogue text for a command tree string, or None to keep Discord's default."""
        return localise(context, locale)
