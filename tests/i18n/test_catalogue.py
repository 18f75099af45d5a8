"""Message catalogues: every key the code uses exists, catalogues agree, plurals, fallback.

Data-driven: each check runs over every ``data/locales/*.po``, so a new language only
needs its catalogue file.
"""

from __future__ import annotations

import ast
import logging
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import discord
import pytest
from babel.messages.pofile import read_po

from bot.i18n import FALLBACK, LOCALES_DIR, catalogues, language_of, number, t
from bot.i18n import catalogue as i18n

REPO = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("bot", "cogs")
# A message key: dotted lower-case words, e.g. "nothanks.button.take".
KEY_SHAPE = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+")
# Calls whose string arguments are message keys.
TRANSLATING_CALLS = frozenset({"t", "UserError", "_dm"})
# The parts of the rules embed (bot/render/nothanks.py rules_embed).
RULE_PARTS = ("setup", "turn", "end", "scoring")
# Slash command keys ("cmd.nothanks.start.name") are built from the command tree, not
# written in the code; tests/i18n/test_command_translator.py checks them against the real tree.
TREE_NAMESPACE = "cmd"


# -- reading catalogues ----------------------------------------------------------------


@dataclass(frozen=True)
class PoFile:
    """One catalogue as written on disk."""

    path: Path
    language: str
    locale: str
    num_plurals: int
    messages: dict[str, tuple[str, ...]]
    plural_keys: frozenset[str]
    msgid_count: int


@cache
def read_catalogue(path: Path) -> PoFile:
    """Parse a .po file with babel, keeping every message (even untranslated ones)."""
    with path.open("rb") as handle:
        catalog = read_po(handle)
    messages: dict[str, tuple[str, ...]] = {}
    plural_keys = set()
    for message in catalog:
        if not message.id:
            continue
        key = message.id[0] if isinstance(message.id, tuple) else message.id
        if isinstance(message.string, tuple):
            messages[key] = tuple(message.string)
            plural_keys.add(key)
        else:
            messages[key] = (message.string,)
    text = path.read_text(encoding="utf-8")
    return PoFile(
        path=path,
        language=path.stem,
        locale=str(catalog.locale or ""),
        num_plurals=catalog.num_plurals,
        messages=messages,
        plural_keys=frozenset(plural_keys),
        msgid_count=len(re.findall(r'^msgid "(?!")', text, flags=re.MULTILINE)),
    )


def catalogue_paths() -> list[Path]:
    """Every catalogue file, English first."""
    paths = sorted(LOCALES_DIR.glob("*.po"))
    return sorted(paths, key=lambda path: path.stem != FALLBACK)


def english() -> PoFile:
    """The English catalogue, the reference for keys and placeholders."""
    return read_catalogue(LOCALES_DIR / f"{FALLBACK}.po")


def placeholders(text: str) -> set[str]:
    """The names of the ``str.format`` fields in a message ('{player}' -> 'player')."""
    names = set()
    for _, field, _, _ in string.Formatter().parse(text):
        if field is not None:
            names.add(re.split(r"[.\[]", field, maxsplit=1)[0])
    return names


def key_placeholders(forms: tuple[str, ...]) -> set[str]:
    """The placeholders used by any form of a message."""
    return set().union(*(placeholders(form) for form in forms))


def sample_params(key: str, count: int = 3) -> dict[str, object]:
    """A value for every placeholder of an English message, with ``count`` as given."""
    params: dict[str, object] = {
        name: f"<{name}>" for name in key_placeholders(english().messages[key])
    }
    params["count"] = count
    return params


CATALOGUES = pytest.mark.parametrize(
    "path", catalogue_paths(), ids=lambda path: path.stem if isinstance(path, Path) else None
)


# -- scanning the code -----------------------------------------------------------------


@dataclass(frozen=True)
class KeyUse:
    """A message key, or a pattern of keys from an f-string, found in the code."""

    text: str
    where: str
    pattern: re.Pattern[str] | None = None


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _fstring_pattern(node: ast.JoinedStr) -> tuple[str, re.Pattern[str]] | None:
    """'nothanks.rules.{part}.title' -> a regex that matches the keys it can build."""
    regex, shown = [], []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            regex.append(re.escape(value.value))
            shown.append(value.value)
        else:
            regex.append("[a-z0-9_]+")
            shown.append("{…}")
    text = "".join(shown)
    # Keys may start with a placeholder too: f"{game}.lobby.title" in the shared table cog.
    if not re.match(r"(?:[a-z][a-z0-9_]*|\{…\})\.", text):
        return None
    return text, re.compile("".join(regex))


@cache
def keys_in_code() -> tuple[KeyUse, ...]:
    """Every key-shaped string the code passes to t()/UserError()/_dm() or that lives
    in a namespace of the English catalogue (e.g. keys picked by a conditional expression),
    plus key patterns from f-strings such as f"nothanks.rules.{part}.title"."""
    namespaces = {key.split(".", 1)[0] for key in english().messages}
    uses: list[KeyUse] = []
    for folder in SOURCE_DIRS:
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            call_args: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _call_name(node) in TRANSLATING_CALLS:
                    for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                        call_args.add(id(arg))
            for node in ast.walk(tree):
                where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')}"
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                    if not KEY_SHAPE.fullmatch(text):
                        continue
                    if id(node) in call_args or text.split(".", 1)[0] in namespaces:
                        uses.append(KeyUse(text, where))
                elif isinstance(node, ast.JoinedStr):
                    found = _fstring_pattern(node)
                    if found is None:
                        continue
                    text, pattern = found
                    if id(node) in call_args or text.split(".", 1)[0] in namespaces:
                        uses.append(KeyUse(text, where, pattern))
    return tuple(uses)


# -- keys: code against English --------------------------------------------------------


def test_scanner_finds_keys() -> None:
    """The code scan finds direct keys, UserError keys and the rules f-strings."""
    texts = {use.text for use in keys_in_code()}
    assert "nothanks.button.take" in texts  # t("...")
    assert "lobby.already_seated" in texts  # UserError("...")
    assert "table.moved_on" in texts  # passed to a base class
    assert "nothanks.dm.started" in texts  # passed to the DM helper
    assert "nothanks.rules.{…}.title" in texts  # f-string


def test_every_key_used_in_code_exists_in_english() -> None:
    """Every message key in bot/ and cogs/ is in data/locales/en.po."""
    known = english().messages
    missing = [
        f"{use.where}: {use.text}"
        for use in keys_in_code()
        if (use.pattern is None and use.text not in known)
        or (use.pattern is not None and not any(use.pattern.fullmatch(key) for key in known))
    ]
    assert missing == []


@pytest.mark.parametrize("part", RULE_PARTS)
def test_rules_parts_exist(part: str) -> None:
    """Each part of the rules embed has a title and a text in English."""
    assert f"nothanks.rules.{part}.title" in english().messages
    assert f"nothanks.rules.{part}.text" in english().messages


def test_every_english_key_is_used() -> None:
    """No key of en.po is left unused by the code (command tree keys are checked elsewhere)."""
    used: set[str] = set()
    for use in keys_in_code():
        if use.pattern is None:
            used.add(use.text)
        else:
            used.update(key for key in english().messages if use.pattern.fullmatch(key))
    written = {key for key in english().messages if key.split(".", 1)[0] != TREE_NAMESPACE}
    assert sorted(written - used) == []


def test_english_messages_are_complete() -> None:
    """Every English message has text in every form (nothing falls back to the key)."""
    empty = [key for key, forms in english().messages.items() if not all(forms)]
    assert empty == []


def test_english_plural_keys_use_count() -> None:
    """Every English plural message has a {count} placeholder to choose its form by."""
    english_file = english()
    without = [
        key
        for key in english_file.plural_keys
        if "count" not in key_placeholders(english_file.messages[key])
    ]
    assert without == []


# -- every catalogue -------------------------------------------------------------------


@CATALOGUES
def test_catalogue_has_no_duplicate_keys(path: Path) -> None:
    """No msgid appears twice (babel would silently keep only one)."""
    catalogue = read_catalogue(path)
    assert catalogue.msgid_count == len(catalogue.messages)


@CATALOGUES
def test_catalogue_language_matches_file_name(path: Path) -> None:
    """The Language header agrees with the file name the bot looks the catalogue up by."""
    catalogue = read_catalogue(path)
    assert catalogue.locale.replace("_", "-").lower() == path.stem
    assert "Plural-Forms:" in path.read_text(encoding="utf-8")


@CATALOGUES
def test_catalogue_has_the_english_keys(path: Path) -> None:
    """Every catalogue has exactly the keys of en.po: none missing, none extra."""
    keys = set(read_catalogue(path).messages)
    reference = set(english().messages)
    assert sorted(reference - keys) == [], "missing"
    assert sorted(keys - reference) == [], "extra"


@CATALOGUES
def test_catalogue_is_fully_translated(path: Path) -> None:
    """Every message of every catalogue has text in every form."""
    untranslated = [key for key, forms in read_catalogue(path).messages.items() if not all(forms)]
    assert untranslated == []


@CATALOGUES
def test_catalogue_placeholders_match_english(path: Path) -> None:
    """Each message uses exactly the placeholders of its English original."""
    catalogue = read_catalogue(path)
    reference = english().messages
    wrong = {
        key: (sorted(key_placeholders(forms)), sorted(key_placeholders(reference[key])))
        for key, forms in catalogue.messages.items()
        if key in reference and key_placeholders(forms) != key_placeholders(reference[key])
    }
    assert wrong == {}


@CATALOGUES
def test_catalogue_plural_forms(path: Path) -> None:
    """Plural keys are the English ones and have as many forms as the language needs."""
    catalogue = read_catalogue(path)
    assert catalogue.plural_keys == english().plural_keys
    wrong = {
        key: len(catalogue.messages[key])
        for key in catalogue.plural_keys
        if len(catalogue.messages[key]) != catalogue.num_plurals
    }
    assert wrong == {}


@CATALOGUES
def test_catalogue_messages_format(path: Path) -> None:
    """Every form of every message formats with the English placeholders filled in."""
    catalogue = read_catalogue(path)
    for key, forms in catalogue.messages.items():
        for form in forms:
            form.format(**sample_params(key))


@CATALOGUES
def test_t_translates_every_key(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """t() gives every key of a catalogue without logging a missing key or bad placeholder."""
    language = path.stem
    with caplog.at_level(logging.ERROR, logger="bot.i18n.catalogue"):
        for key in english().messages:
            for count in (0, 1, 2, 5, 21):
                text = t(key, language, **sample_params(key, count))
                assert text
                assert text != key
    assert caplog.records == []


def test_loaded_catalogues_match_files() -> None:
    """The bot loads exactly the catalogue files on disk, keyed by file name."""
    assert set(catalogues()) == {path.stem for path in catalogue_paths()}
    assert FALLBACK in catalogues()


# -- plurals and fallback --------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(english().plural_keys))
def test_english_plural_one_and_two_differ(key: str) -> None:
    """count=1 and count=2 pick different English forms, each showing the count."""
    one = t(key, "en", **sample_params(key, 1))
    two = t(key, "en", **sample_params(key, 2))
    assert one != two
    assert "1" in one
    assert "2" in two


def test_plural_zero_is_plural_in_english() -> None:
    """English uses the plural form for zero ('0 cards')."""
    assert t("nothanks.game.pile", "en", count=0) == t("nothanks.game.pile", "en", count=2).replace(
        "2", "0"
    )


@pytest.mark.parametrize("locale", ["xx", "pt-BR", "zz-ZZ", "", "klingon"])
def test_unknown_locale_falls_back_to_english(locale: str) -> None:
    """A locale without a catalogue gets the English text."""
    expected = language_of(locale)
    if locale.split("-", 1)[0].lower() not in catalogues():
        assert expected == FALLBACK
    key = "nothanks.button.pass"
    assert t(key, locale) == t(key, expected)
    if expected == FALLBACK:
        assert t(key, locale) == "No thanks!"


def test_none_locale_is_english() -> None:
    """No locale at all means English."""
    assert language_of(None) == FALLBACK
    assert t("nothanks.button.take", None) == t("nothanks.button.take", "en")


def expected_language(code: str) -> str:
    """The catalogue a locale code should map to, given the catalogues on disk."""
    code = code.replace("_", "-").lower()
    if code in catalogues():
        return code
    base = code.split("-", 1)[0]
    return base if base in catalogues() else FALLBACK


@pytest.mark.parametrize(
    ("locale", "code"),
    [
        ("en-US", "en-us"),
        ("en-GB", "en-gb"),
        ("en", "en"),
        ("EN_us", "en-us"),
        ("de", "de"),
        ("de-DE", "de-de"),
        (discord.Locale.german, "de"),
        (discord.Locale.american_english, "en-us"),
        (discord.Locale.british_english, "en-gb"),
        (discord.Locale.russian, "ru"),
        (discord.Locale.italian, "it"),
        (discord.Locale.brazil_portuguese, "pt-br"),
    ],
    ids=str,
)
def test_language_of(locale: object, code: str) -> None:
    """Discord locales and codes map to the matching catalogue, else English."""
    assert language_of(locale) == expected_language(code)


def test_language_of_english_variants() -> None:
    """Every English variant Discord sends maps to the English catalogue."""
    assert language_of("en-US") == "en"
    assert language_of(discord.Locale.american_english) == "en"
    assert language_of(discord.Locale.british_english) == "en"


def test_unknown_key_returns_key_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    """A key missing from every catalogue is shown as itself and logged as an error."""
    with caplog.at_level(logging.ERROR, logger="bot.i18n.catalogue"):
        assert t("no.such.key", "en") == "no.such.key"
    assert any("no.such.key" in record.getMessage() for record in caplog.records)


def test_missing_placeholder_value_does_not_raise(caplog: pytest.LogCaptureFixture) -> None:
    """A message formatted without one of its values is returned unformatted and logged."""
    with caplog.at_level(logging.ERROR, logger="bot.i18n.catalogue"):
        text = t("lobby.full", "en")
    assert "{max}" in text
    assert caplog.records


# -- the lookup machinery, with a temporary second language ----------------------------

GERMAN = """\
msgid ""
msgstr ""
"Language: de\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

msgid "nothanks.button.take"
msgstr "Nehmen"
"""

RUSSIAN = """\
msgid ""
msgstr ""
"Language: ru\\n"
"Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && \
(n%100<10 || n%100>=20) ? 1 : 2);\\n"

msgid "nothanks.game.pile"
msgid_plural "nothanks.game.pile"
msgstr[0] "{count} карта"
msgstr[1] "{count} карты"
msgstr[2] "{count} карт"
"""


@pytest.fixture
def extra_languages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Catalogues for English plus partial German and Russian ones, in a temporary folder."""
    (tmp_path / "en.po").write_bytes((LOCALES_DIR / "en.po").read_bytes())
    (tmp_path / "de.po").write_text(GERMAN, encoding="utf-8")
    (tmp_path / "ru.po").write_text(RUSSIAN, encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALES_DIR", tmp_path)
    catalogues.cache_clear()
    yield
    catalogues.cache_clear()


@pytest.mark.usefixtures("extra_languages")
def test_translated_key_is_used() -> None:
    """A key present in a language's catalogue is shown in that language."""
    assert t("nothanks.button.take", discord.Locale.german) == "Nehmen"
    assert t("nothanks.button.take", "de-AT") == "Nehmen"


@pytest.mark.usefixtures("extra_languages")
def test_key_missing_in_language_falls_back_to_english() -> None:
    """A key a catalogue lacks is shown in English, not as the raw key."""
    assert t("nothanks.button.pass", "de") == "No thanks!"


@pytest.mark.usefixtures("extra_languages")
def test_language_plural_rules() -> None:
    """A language's own plural rule picks among its forms (Russian has three)."""
    forms = {count: t("nothanks.game.pile", "ru", count=count) for count in (1, 2, 5, 21, 11)}
    assert forms == {
        1: "1 карта",
        2: "2 карты",
        5: "5 карт",
        21: "21 карта",
        11: "11 карт",
    }


def test_cached_texts_follow_the_catalogues_when_they_are_loaded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text built from translations and cached (translated_text) is built anew from the
    catalogues loaded afterwards, not kept from the ones before."""
    calls: list[str] = []

    @i18n.translated_text
    def take_button(locale: object) -> str:
        calls.append(str(locale))
        return t("nothanks.button.take", locale)

    catalogues.cache_clear()
    try:
        assert take_button("de") == take_button("de") == "Nehmen"
        assert calls == ["de"]  # the second call came from the cache
        (tmp_path / "en.po").write_bytes((LOCALES_DIR / "en.po").read_bytes())
        (tmp_path / "de.po").write_text(GERMAN.replace("Nehmen", "Nimm"), encoding="utf-8")
        monkeypatch.setattr(i18n, "LOCALES_DIR", tmp_path)
        catalogues.cache_clear()
        assert take_button("de") == "Nimm"
        assert calls == ["de", "de"]
    finally:
        monkeypatch.undo()
        catalogues.cache_clear()


def test_texts_without_placeholders_are_looked_up_once() -> None:
    """t() without placeholders answers from its memo after the first call: the same text."""
    first = t("nothanks.button.pass", "it")
    assert t("nothanks.button.pass", "it") is first
    assert t("nothanks.button.pass", discord.Locale.italian) == first
    assert t("nothanks.button.pass", ["unhashable"]) == t("nothanks.button.pass", None)


@pytest.mark.parametrize(
    ("language", "plain", "signed", "decimal"),
    [
        ("en", "1,036", "−12", "16.5"),
        ("de", "1.036", "−12", "16,5"),
        ("ru", "1\xa0036", "−12", "16,5"),
        ("it", "1.036", "−12", "16,5"),
    ],
)
def test_numbers_are_written_as_the_language_writes_them(
    language: str, plain: str, signed: str, decimal: str
) -> None:
    """Ratings and figures follow the language (German "16,5", not "16.5")."""
    assert number(1036, language) == plain
    assert number(-12, language, signed=True) == signed
    assert number(16.5, language) == decimal
    assert number(36, language, signed=True) == "+36"
    assert number(0, language, signed=True) == "±0"


@pytest.mark.parametrize("locale", ["en", "de", "ru", "it"])
def test_negative_numbers_get_a_real_minus_sign(locale: str) -> None:
    """A negative whole number in a message is written "−13" (U+2212), as everywhere
    else players read numbers; a positive one is left as it is."""
    line = t("rage.game.player_line", locale, player="Ana", bid="2", tricks=1, total=-13)
    assert "−13" in line and "-13" not in line
    line = t("rage.game.player_line", locale, player="Ana", bid="2", tricks=1, total=13)
    assert "13" in line and "−" not in line
