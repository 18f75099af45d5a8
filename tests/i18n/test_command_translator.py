"""Slash command localisation: every command, option and choice of the real tree, per locale.

The tree is the production one: ``create_bot`` plus the bot's own ``setup_hook`` (which
loads every extension), plus the settings cog in case it is not yet an extension.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import discord
import pytest
from discord import app_commands
from discord.app_commands import TranslationContext, locale_str
from discord.app_commands import TranslationContextLocation as Location

from bot.client.bot import CardtableBot
from bot.i18n import catalogues
from bot.i18n.commands import (
    NAME_LOCATIONS,
    PREFIX,
    CatalogueTranslator,
    command_key,
    is_valid_name,
    localise,
)

TRANSLATED = (discord.Locale.german, discord.Locale.russian, discord.Locale.italian)
# Every Discord locale without a catalogue of its own, English included (the defaults
# are English already, so Discord needs no localisation for it).
UNTRANSLATED = tuple(
    locale
    for locale in discord.Locale
    if locale not in TRANSLATED and locale.value.split("-")[0] not in {"de", "ru", "it"}
)
SETTINGS_EXTENSION = "cogs.cardtable"


@dataclass(frozen=True)
class TreeString:
    """One string Discord shows for a command: where it sits and its English default."""

    context: TranslationContext[Any, Any]
    default: str
    # Strings that must differ from each other once localised (names at one level).
    level: str | None

    @property
    def key(self) -> str:
        """The catalogue key the translator derives for it."""
        key = command_key(self.context)
        assert key is not None
        return key

    @property
    def is_name(self) -> bool:
        """Whether Discord's name rules apply (else the description/choice rules)."""
        return self.context.location in NAME_LOCATIONS


def tree_strings(tree: app_commands.CommandTree[Any]) -> Iterator[TreeString]:
    """Every translatable string of the tree, as discord.py hands it to a translator."""
    for command in tree.walk_commands():
        level = command.parent.qualified_name if command.parent else "/"
        if isinstance(command, app_commands.Group):
            yield TreeString(TranslationContext(Location.group_name, command), command.name, level)
            yield TreeString(
                TranslationContext(Location.group_description, command), command.description, None
            )
            continue
        yield TreeString(TranslationContext(Location.command_name, command), command.name, level)
        yield TreeString(
            TranslationContext(Location.command_description, command), command.description, None
        )
        for parameter in command.parameters:
            options = f"{command.qualified_name} options"
            yield TreeString(
                TranslationContext(Location.parameter_name, parameter),
                parameter.display_name,
                options,
            )
            yield TreeString(
                TranslationContext(Location.parameter_description, parameter),
                parameter.description,
                None,
            )
            for choice in parameter.choices:
                yield TreeString(
                    TranslationContext(Location.choice_name, choice),
                    choice.name,
                    f"{command.qualified_name} {parameter.display_name} choices",
                )
    for kind in (discord.AppCommandType.user, discord.AppCommandType.message):
        for menu in tree.get_commands(type=kind):
            yield TreeString(TranslationContext(Location.command_name, menu), menu.name, None)


@pytest.fixture
async def bot(make_bot: Callable[[], CardtableBot]) -> CardtableBot:
    """A production bot with every extension loaded (no Discord connection needed)."""
    bot = make_bot()
    await bot.setup_hook()
    # Never logged in, so never ready: the table scheduler that setup_hook starts would
    # wait for a readiness that cannot come (and fail); this bot only shows its tree.
    bot.tables.close()
    if SETTINGS_EXTENSION not in bot.extensions:
        await bot.load_extension(SETTINGS_EXTENSION)
    return bot


@pytest.fixture
def strings(bot: CardtableBot) -> list[TreeString]:
    """The translatable strings of the bot's tree."""
    return list(tree_strings(bot.tree))


def english_cmd_keys() -> set[str]:
    """The command keys of the English catalogue."""
    return {key for key in catalogues()["en"].messages if key.startswith(f"{PREFIX}.")}


# -- keys against the tree -------------------------------------------------------------


def test_tree_has_the_games_and_settings(strings: list[TreeString]) -> None:
    """The walk sees the real commands, options and choices (the tests below are not empty)."""
    keys = {string.key for string in strings}
    assert "cmd.nothanks.name" in keys
    assert "cmd.nothanks.start.open_chips.description" in keys
    assert "cmd.cardtable.language.language.name" in keys
    assert "cmd.choice.de.name" in keys


def test_every_tree_string_has_an_english_key(strings: list[TreeString]) -> None:
    """A new command, option or choice fails here until en.po has its keys."""
    missing = sorted({string.key for string in strings} - english_cmd_keys())
    assert missing == []


def test_every_english_command_key_is_in_the_tree(strings: list[TreeString]) -> None:
    """A renamed or removed command leaves no stale keys in the catalogues."""
    unused = sorted(english_cmd_keys() - {string.key for string in strings})
    assert unused == []


def test_english_command_texts_match_the_code(strings: list[TreeString]) -> None:
    """en.po says exactly what the code declares, so the catalogue cannot drift from it."""
    english = catalogues()["en"].messages
    drift = {
        string.key: (english[string.key][0], string.default)
        for string in strings
        if english.get(string.key, (string.default,))[0] != string.default
    }
    assert drift == {}


def test_keys_are_unique_per_string(strings: list[TreeString]) -> None:
    """Two different strings never share a key (choices share one only for one value)."""
    by_key: dict[str, set[str]] = {}
    for string in strings:
        by_key.setdefault(string.key, set()).add(string.default)
    assert {key: texts for key, texts in by_key.items() if len(texts) > 1} == {}


# -- translations by Discord's rules --------------------------------------------------


@pytest.mark.parametrize("locale", TRANSLATED, ids=str)
async def test_every_string_is_localised_validly(
    strings: list[TreeString], locale: discord.Locale
) -> None:
    """Each command, option and choice gets a text Discord accepts: names lower case, no
    spaces, 1-32 letters/digits/-/_; descriptions and choices 1-100 characters."""
    translator = CatalogueTranslator()
    problems = []
    for string in strings:
        text = await translator.translate(locale_str(string.default), locale, string.context)
        if text is None:
            problems.append(f"{string.key}: not localised")
        elif string.is_name and not is_valid_name(text):
            problems.append(f"{string.key}: invalid name {text!r}")
        elif not string.is_name and not 1 <= len(text) <= 100:
            problems.append(f"{string.key}: {len(text)} characters")
    assert problems == []


@pytest.mark.parametrize("locale", TRANSLATED, ids=str)
def test_sibling_names_stay_distinct(strings: list[TreeString], locale: discord.Locale) -> None:
    """Commands of one group, options of one command and choices of one option keep
    distinct localised names (Discord rejects duplicates)."""
    seen: dict[tuple[str, str], str] = {}
    clashes = []
    for string in strings:
        if string.level is None:
            continue
        text = localise(string.context, locale)
        assert text is not None
        previous = seen.setdefault((string.level, text), string.key)
        if previous != string.key:
            clashes.append((previous, string.key, text))
    assert clashes == []


@pytest.mark.parametrize("locale", TRANSLATED, ids=str)
def test_game_command_is_localised(bot: CardtableBot, locale: discord.Locale) -> None:
    """The No Thanks! group carries the game's local name where the rule books give one."""
    group = bot.tree.get_command("nothanks")
    assert group is not None
    name = localise(TranslationContext(Location.group_name, group), locale)
    assert name == {"de": "geschenkt", "ru": "nothanks", "it": "nograzie"}[locale.value]


@pytest.mark.parametrize("locale", UNTRANSLATED, ids=str)
async def test_other_locales_get_none(strings: list[TreeString], locale: discord.Locale) -> None:
    """Locales without a catalogue (and English) get None, so Discord shows the default."""
    translator = CatalogueTranslator()
    for string in strings:
        assert (
            await translator.translate(locale_str(string.default), locale, string.context) is None
        )


async def test_other_strings_are_not_translated() -> None:
    """Strings outside the command tree (location 'other') are left alone."""
    context = TranslationContext(Location.other, None)
    assert command_key(context) is None
    translator = CatalogueTranslator()
    assert await translator.translate(locale_str("x"), discord.Locale.german, context) is None


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("geschenkt", True),
        ("offene_spielsteine", True),
        ("открытые_монетки", True),
        ("più_meno_uno", True),
        ("plus-minus", True),
        ("x" * 32, True),
        ("x" * 33, False),
        ("", False),
        ("Geschenkt", False),
        ("Открытые", False),
        ("open chips", False),
        ("nein!", False),
    ],
)
def test_name_rule(name: str, valid: bool) -> None:
    """The name check follows Discord's pattern and its lower-case rule."""
    assert is_valid_name(name) is valid


def test_invalid_translation_is_dropped(
    strings: list[TreeString], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A catalogue name Discord would reject is not sent (it would fail the whole sync)."""
    name = next(string for string in strings if string.key == "cmd.nothanks.name")
    german = catalogues()["de"]
    monkeypatch.setitem(german.messages, name.key, ("Geschenkt Spiel",))
    assert localise(name.context, discord.Locale.german) is None
    assert "breaks Discord's rules" in caplog.text


# -- what discord.py actually sends ----------------------------------------------------


def localisations(payload: dict[str, Any]) -> Iterator[tuple[str, dict[str, str]]]:
    """(what, localisations) for every name and description in a command payload."""
    yield f"{payload['name']} name", payload.get("name_localizations") or {}
    if "description" in payload:
        yield f"{payload['name']} description", payload.get("description_localizations") or {}
    for option in payload.get("options", []):
        yield from localisations(option)
    for choice in payload.get("choices", []):
        yield f"choice {choice['name']}", choice.get("name_localizations") or {}


async def test_sync_payload_is_localised(bot: CardtableBot) -> None:
    """What discord.py sends on sync has de/ru/it text for every command, option and
    choice, with no locale_str needed in the cogs."""
    translator = CatalogueTranslator()
    wanted = {locale.value for locale in TRANSLATED}
    missing = []
    for command in bot.tree.get_commands():
        payload = await command.get_translated_payload(bot.tree, translator)
        for what, localised in localisations(payload):
            if set(localised) != wanted:
                missing.append((what, sorted(localised)))
    assert missing == []
