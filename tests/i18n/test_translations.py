"""The German, Russian and Italian catalogues: plural rules, the rule books' game terms,
Discord's length limits, and what players actually read (t() and the No Thanks! renders).

Key sets and placeholders of every catalogue are checked in tests/i18n/test_catalogue.py; these
tests are about the content of the three translations.
"""

from __future__ import annotations

import re
from pathlib import Path

import discord
import pytest

from bot.engines.nothanks import TAKE, NoThanksGame, PlayerView
from bot.i18n import LOCALES_DIR, catalogues, t
from bot.render import nothanks as render
from bot.table.spec import TableFacts

LANGUAGES = ("de", "ru", "it")
PLURAL_FORMS = {
    "en": "nplurals=2; plural=(n != 1);",
    "de": "nplurals=2; plural=(n != 1);",
    "it": "nplurals=2; plural=(n != 1);",
    "ru": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && "
    "(n%100<10 || n%100>=20) ? 1 : 2);",
}
LOCALES = {
    "de": discord.Locale.german,
    "ru": discord.Locale.russian,
    "it": discord.Locale.italian,
}
# Messages that rightly read the same as in English: symbols, proper names, the language
# names of the picker, words the languages share, and (Russian) the game's English name
# and call, as its text has them.
SAME_AS_ENGLISH = {
    "common": {
        "cmd.cardtable.name",
        "cmd.rage.name",
        "cmd.choice.en.name",
        "cmd.choice.de.name",
        "cmd.choice.ru.name",
        "cmd.choice.it.name",
        "nothanks.final.row_title",
        "rage.card.plus_five",
        "rage.card.minus_five",
        "rage.card.joker",
        "rage.why.bonus",
        "final.rating_change",  # "Δ +36": a symbol and a number
        "game.rage.name",  # a proper name, the same in every language
        "table.thread_name",  # "{game} — {host}": only placeholders and a dash
    },
    "ru": {
        "cmd.nothanks.name",
        "game.nothanks.name",
        "nothanks.game.title",
        "nothanks.button.pass",
        "nothanks.log.pass",
    },
    # "Computer" and "normal" are German words too; "Computer" is Italian as well.
    # "Thread" is Discord's own word for a thread in its German and Italian clients.
    "de": {
        "table.computer_name",
        "table.level.normal",
        "cmd.choice.normal.name",
        "cmd.cardtable.threads.name",
        "cmd.nothanks.start.thread.name",
        "cmd.rage.start.thread.name",
    },
    "it": {
        "table.computer_name",
        "cmd.cardtable.threads.name",
        "cmd.nothanks.start.thread.name",
        "cmd.rage.start.thread.name",
    },
}


def messages(language: str) -> dict[str, tuple[str, ...]]:
    """A loaded catalogue's messages."""
    return catalogues()[language].messages


def all_text(language: str) -> str:
    """Every form of every message of a catalogue, one per line, placeholders removed."""
    text = "\n".join(form for forms in messages(language).values() for form in forms)
    return re.sub(r"\{[a-z_]+\}", "", text)


# -- the catalogues and their plural rules ---------------------------------------------


def test_the_four_languages_are_there() -> None:
    """English plus the three translations, nothing half-added."""
    assert set(catalogues()) == {"en", *LANGUAGES}


@pytest.mark.parametrize("language", sorted(PLURAL_FORMS))
def test_plural_forms_header(language: str) -> None:
    """Each catalogue declares the plural rule of its language, verbatim."""
    text = (LOCALES_DIR / f"{language}.po").read_text(encoding="utf-8")
    header = re.search(r'"Plural-Forms: (.*?)\\n"', text)
    assert header is not None
    assert header.group(1) == PLURAL_FORMS[language]


@pytest.mark.parametrize(
    ("count", "form"),
    [
        *[(1, 0), (2, 1), (4, 1), (5, 2), (11, 2), (12, 2), (14, 2), (21, 0), (22, 1)],
        *[(25, 2), (0, 2), (101, 0), (111, 2), (112, 2), (1001, 0)],
    ],
)
def test_russian_plural_rule(count: int, form: int) -> None:
    """Russian picks 'one' for 1, 21, 101; 'few' for 2-4, 22; 'many' for 5-20, 11-14, 0."""
    assert catalogues()["ru"].plural(count) == form


@pytest.mark.parametrize("language", ["de", "it"])
@pytest.mark.parametrize(("count", "form"), [(0, 1), (1, 0), (2, 1), (21, 1)])
def test_two_form_plural_rule(language: str, count: int, form: int) -> None:
    """German and Italian use the singular for exactly one."""
    assert catalogues()[language].plural(count) == form


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (1, "В колоде осталась 1 карта"),
        (2, "В колоде осталось 2 карты"),
        (5, "В колоде осталось 5 карт"),
        (11, "В колоде осталось 11 карт"),
        (21, "В колоде осталась 21 карта"),
        (22, "В колоде осталось 22 карты"),
        (25, "В колоде осталось 25 карт"),
    ],
)
def test_russian_pile_forms(count: int, text: str) -> None:
    """The pile line agrees with its number in Russian."""
    assert t("nothanks.game.pile", discord.Locale.russian, count=count) == text


@pytest.mark.parametrize(
    ("count", "word"),
    [
        *[(1, "монетка"), (2, "монетки"), (5, "монеток"), (11, "монеток")],
        *[(21, "монетка"), (22, "монетки"), (25, "монеток")],
    ],
)
def test_russian_chip_forms(count: int, word: str) -> None:
    """The private chip count uses монетка / монетки / монеток as the number demands."""
    assert t("nothanks.private.chips", discord.Locale.russian, count=count) == (
        f"🪙 У вас **{count}** {word}."
    )


@pytest.mark.parametrize(
    ("locale", "one", "many"),
    [
        (discord.Locale.german, "Noch 1 Karte im Stapel", "Noch 3 Karten im Stapel"),
        (discord.Locale.italian, "Resta 1 carta nel mazzo", "Restano 3 carte nel mazzo"),
    ],
    ids=str,
)
def test_two_form_pile(locale: discord.Locale, one: str, many: str) -> None:
    """German and Italian pile lines agree with their number."""
    assert t("nothanks.game.pile", locale, count=1) == one
    assert t("nothanks.game.pile", locale, count=3) == many


# -- t() with Discord locales ----------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "params", "expected"),
    [
        ("nothanks.button.take", {}, ("Nehmen", "Взять", "Prendi")),
        ("nothanks.button.pass", {}, ("Nein danke!", "No thanks!", "No grazie!")),
        ("nothanks.button.chips", {}, ("Meine Spielsteine", "Мои монетки", "Le mie fiches")),
        (
            "error.must_take",
            {"card": 17},
            (
                "Du hast keine Spielsteine mehr, also musst du die 17 nehmen.",
                "У вас не осталось монеток, поэтому карту 17 придётся взять.",
                "Non hai più fiches, quindi devi prendere la carta 17.",
            ),
        ),
        (
            "nothanks.dm.started",
            {"link": "<link>", "count": 1},
            (
                "Dein Geschenkt!-Spiel hat [begonnen](<link>). Du hast 1 Spielstein – halte ihn "
                "geheim!",
                "Ваша игра No Thanks! [началась](<link>). У вас 1 монетка — держите её в секрете!",
                "La tua partita a No grazie! è [iniziata](<link>). Hai 1 fiche: tienila segreta!",
            ),
        ),
    ],
)
def test_t_speaks_the_discord_locale(
    key: str, params: dict[str, object], expected: tuple[str, str, str]
) -> None:
    """Discord's Locale values pick the German, Russian and Italian texts."""
    for language, text in zip(LANGUAGES, expected, strict=True):
        assert t(key, LOCALES[language], **params) == text


@pytest.mark.parametrize("language", LANGUAGES)
def test_nothing_left_in_english(language: str) -> None:
    """Only symbols, names and deliberate borrowings read the same as in English."""
    english = messages("en")
    same = {key for key, forms in messages(language).items() if forms == english.get(key)}
    allowed = SAME_AS_ENGLISH["common"] | SAME_AS_ENGLISH.get(language, set())
    assert sorted(same - allowed) == []


# -- the rule books' terms -------------------------------------------------------------

# Per language: (key, words its text must contain), and words that must appear nowhere.
GLOSSARY: dict[str, tuple[list[tuple[str, tuple[str, ...]]], tuple[str, ...]]] = {
    # 000 (German No Thanks! book): "Spielsteine", '"No Thanks!" (Nein danke!)', "Stapel",
    # "Serie"; 001/003: the original German title is "Geschenkt!".
    # 004 (German Rage book): "Stich", "Trumpf", "Ohne Trumpf", "Neue Trumpffarbe",
    # "Kartengeber", "Voraussage", "Abrechnungsblatt", "Durchmarsch".
    "de": (
        [
            ("nothanks.game.title", ("Geschenkt!",)),
            ("nothanks.button.pass", ("Nein danke!",)),
            ("nothanks.private.chips", ("Spielstein",)),
            ("nothanks.game.pile", ("Stapel",)),
            ("nothanks.rules.scoring.text", ("Serie",)),
            ("rage.card.no_trump", ("Ohne Trumpf",)),
            ("rage.card.change_trump", ("Neue Trumpffarbe",)),
            ("rage.game.trick", ("Stich",)),
            ("rage.rules.bidding.text", ("Kartengeber",)),
            ("rage.game.sheet", ("Abrechnungsblatt",)),
            ("rage.option.sweep", ("Durchmarsch",)),
        ],
        ("Chip", "Plättchen", "Jeton"),
    ),
    # 001 (Russian text): the game is "No Thanks!", players declare "No thanks!", chips are
    # "монетки", the deck is the "колода", runs are a "последовательная комбинация".
    "ru": (
        [
            ("nothanks.game.title", ("No Thanks!",)),
            ("nothanks.button.pass", ("No thanks!",)),
            ("nothanks.private.chips", ("монетк", "монеток")),
            ("nothanks.game.pile", ("колоде",)),
            ("nothanks.rules.scoring.text", ("Последовательная комбинация",)),
        ],
        ("фишк", "жетон"),
    ),
    # 003 (Italian text): "No grazie!" is both the game and the call, chips are "fiches"
    # (una "fiche"), the deck is the "mazzo", runs are a "serie".
    "it": (
        [
            ("nothanks.game.title", ("No grazie!",)),
            ("nothanks.button.pass", ("No grazie!",)),
            ("nothanks.private.chips", ("fiche", "fiches")),
            ("nothanks.game.pile", ("mazzo",)),
            ("nothanks.rules.scoring.text", ("serie",)),
        ],
        ("gettone", "gettoni", "chip"),
    ),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_rule_book_terms(language: str) -> None:
    """Game terms are the ones the rule books of each language use."""
    required, _ = GLOSSARY[language]
    missing = [
        (key, words)
        for key, words in required
        if not all(any(word in form for form in messages(language)[key]) for word in words)
    ]
    assert missing == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_foreign_terms(language: str) -> None:
    """No other word for the chips (or the like) slips in anywhere."""
    _, forbidden = GLOSSARY[language]
    text = all_text(language).lower()
    assert [word for word in forbidden if word.lower() in text] == []


# -- Discord's limits ------------------------------------------------------------------

# Button labels 80, select placeholders 150, select option labels 100, embed titles and
# field names 256 characters (Discord API docs); placeholders filled with short values.
LIMITS = [
    (re.compile(r".*\.button\..*"), 80),
    (re.compile(r".*_placeholder"), 150),
    (re.compile(r"rage\.select\.bid"), 100),
    (re.compile(r".*\.title|.*\.lobby\.players|.*\.final\.removed"), 256),
]


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_component_texts_fit(language: str) -> None:
    """Labels, placeholders and titles stay within Discord's limits in every language."""
    too_long = []
    for key, forms in messages(language).items():
        for pattern, limit in LIMITS:
            if pattern.fullmatch(key):
                too_long += [(key, len(form)) for form in forms if len(form) > limit]
    assert too_long == []


# -- the No Thanks! texts as rendered --------------------------------------------------


def finished_game() -> tuple[TableFacts, PlayerView]:
    """A three-player game played to the end (everyone always takes): its facts and view."""
    players = ["11", "22", "33"]
    game = NoThanksGame.new(players, seed=7)
    while not game.is_over:
        assert game.active_player is not None
        game.apply(game.active_player, TAKE)
    facts = TableFacts(
        id=42,
        game="nothanks",
        status="finished",
        host_id=11,
        seats=(11, 22, 33),
        options={},
        names={"11": "ana", "22": "ben", "33": "cid"},
        computers={},
        min_players=3,
        max_players=7,
    )
    return facts, game.view(None)


def embed_texts(embed: discord.Embed) -> list[str]:
    """Every text of an embed a player reads."""
    texts = [embed.title or "", embed.description or "", embed.footer.text or ""]
    for field in embed.fields:
        texts += [field.name or "", field.value or ""]
    return texts


@pytest.mark.parametrize("language", LANGUAGES)
def test_rules_embed_is_translated(language: str) -> None:
    """Every part of the rules embed is in the reader's language."""
    locale = LOCALES[language]
    ours = embed_texts(render.rules_embed(locale))
    english = embed_texts(render.rules_embed(discord.Locale.american_english))
    assert ours[0] == t("nothanks.rules.title", language)
    assert all(a != b for a, b in zip(ours, english, strict=True) if b)


@pytest.mark.parametrize("language", LANGUAGES)
def test_final_scoreboard_is_translated(language: str) -> None:
    """The final scoreboard's title, result line and footer are translated."""
    record, game = finished_game()
    ours = render.final_embed(record, game, LOCALES[language])
    english = render.final_embed(record, game, "en")
    assert ours.title == t("nothanks.final.title", language)
    assert ours.description != english.description
    assert ours.footer.text == t("nothanks.final.footer", language, table=42, moves=24)
    assert ours.fields[-1].name == t("nothanks.final.removed", language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_private_chips_text_is_translated(language: str) -> None:
    """A player's private summary (the ephemeral My chips answer) is in their language."""
    game = NoThanksGame.new(["11", "22", "33"], seed=3)
    player = game.active_player
    assert player is not None
    text = render.private_text(game.view(player), LOCALES[language])
    lines = text.splitlines()
    assert lines[0] == t("nothanks.private.chips", language, count=11)
    assert lines[1] == t("nothanks.private.no_cards", language)
    assert lines[-1] == t("nothanks.private.your_turn", language, card=game.current_card, count=0)


def test_catalogue_files_are_utf8() -> None:
    """The catalogues declare UTF-8, as their Cyrillic and accented text needs."""
    for language in LANGUAGES:
        text = Path(LOCALES_DIR / f"{language}.po").read_text(encoding="utf-8")
        assert "charset=UTF-8" in text
