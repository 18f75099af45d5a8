"""Names are data, not markdown: every message shows a display name exactly as written.

A name is escaped once, in `TableFacts.name`, so it can turn into neither bold text, a
heading, a list, a quote, a broken code block nor a ping, wherever a renderer puts it;
the score sheet's code block gets the plain name without backticks instead.
"""

from __future__ import annotations

import re

import discord
import pytest

from bot.engines.nothanks import NoThanksGame
from bot.engines.rage import RageState
from bot.render import nothanks, rage
from bot.render.table import lobby_embed, public_message
from bot.table.spec import PublicTable, TableFacts, escape_name

BOLD = "**Fay** ~~the~~ great"
HEADING = "# Big Head"
FENCED = "a```b"
EVERYONE = "@everyone"
QUOTE = "> quoted"
LIST = "- listed"
ORDERED = "1. first"
NAMES = [BOLD, HEADING, FENCED, EVERYONE, QUOTE, LIST, ORDERED, "ana"]
PLAYERS = [str(2000 + seat) for seat in range(len(NAMES))]


def as_written(text: str) -> str:
    """What Discord shows for escaped text: escapes and zero-width spaces removed."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u200b", "")


def facts_for(game: str, status: str, count: int = 8, **extra: str) -> TableFacts:
    """A table whose players have the awkward names above (and any extra seats)."""
    names = dict(zip(PLAYERS, NAMES, strict=True)) | extra
    seats = tuple(int(player) for player in PLAYERS[:count])
    return TableFacts(
        id=7,
        game=game,
        status=status,
        host_id=seats[0],
        seats=seats,
        options={},
        names=names,
        computers={},
        min_players=3,
        max_players=8,
    )


def embed_lines(embed: discord.Embed) -> list[str]:
    """Every line of every markdown text of an embed (description, field names and values)."""
    texts = [embed.description or ""]
    for field in embed.fields:
        texts += [field.name or "", field.value or ""]
    return [line for text in texts for line in text.split("\n")]


def assert_no_markdown_from_names(lines: list[str]) -> None:
    """No name appears unescaped: as bold, a heading, a quote, a list, a fence or a ping."""
    for line in lines:
        for name in NAMES[:-1]:
            # Escaped, "# Big Head" still contains "# Big Head", but after a backslash.
            assert re.search(r"(?<!\\)" + re.escape(name), line) is None, (name, line)


# -- the escaping itself -------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_escaped_name_reads_as_written(name: str) -> None:
    """Escaping only adds backslashes (and a zero-width space in a ping): nothing is lost."""
    assert as_written(escape_name(name)) == name


@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        (BOLD, r"\*\*Fay\*\* \~\~the\~\~ great"),
        (HEADING, r"\# Big Head"),
        (FENCED, r"a\`\`\`b"),
        (QUOTE, r"\> quoted"),
        (LIST, r"\- listed"),
        (ORDERED, r"1\. first"),
        ("-# small", r"\-# small"),
        ("||spoiler||", r"\|\|spoiler\|\|"),
        ("[link](https://x.y)", r"\[link\](https://x.y)"),
        ("<@123456789012345678>", "\\<@\u200b123456789012345678>"),
        (EVERYONE, "@\u200beveryone"),
        ("Jean-Luc (3)", "Jean-Luc (3)"),
    ],
)
def test_escape_name(name: str, escaped: str) -> None:
    """Markdown Discord reads anywhere or at the start of a line is escaped, pings broken."""
    assert escape_name(name) == escaped


@pytest.mark.parametrize("name", NAMES)
def test_covers_what_discord_py_escapes(name: str) -> None:
    """Every character discord.utils.escape_markdown escapes is escaped here too."""
    ours = escape_name(name)
    theirs = discord.utils.escape_mentions(discord.utils.escape_markdown(name, ignore_links=False))
    assert ours.count("\\") >= theirs.count("\\")
    assert ("\u200b" in ours) == ("\u200b" in theirs)


def test_plain_name_cannot_break_a_code_block() -> None:
    """The code-block name has no backticks and no escapes that would show."""
    facts = facts_for("rage", "running")
    assert facts.plain_name(PLAYERS[2]) == "a'''b"
    assert facts.plain_name(PLAYERS[0]) == BOLD


def test_computers_are_named_never_mentioned() -> None:
    """A computer seat shows its name; without a stored name it is still no "<@-2>"."""
    facts = facts_for("rage", "running", **{"-1": "🤖 Computer 1 (hard)"})
    assert facts.mention(-1) == facts.name("-1") == "🤖 Computer 1 (hard)"
    for shown in (facts.mention(-2), facts.name(-2), facts.plain_name(-2)):
        assert "<@" not in shown and shown
    assert facts.mention(PLAYERS[0]) == f"<@{PLAYERS[0]}>"


# -- every message ------------------------------------------------------------------------


def test_lobby_shows_names_as_written() -> None:
    """The lobby's seats list each name escaped, and lists the invited as mentions."""
    facts = facts_for("rage", "lobby")
    embed = lobby_embed(
        PublicTable(facts, None, invited=(99, int(PLAYERS[0]))), rage.RageRenderer(), "en"
    )
    seats = embed.fields[0].value.split("\n")
    assert [as_written(line.split(". ", 1)[1]) for line in seats] == NAMES
    assert seats[1] == r"2. \# Big Head"
    # Said once, with the host, above the seats; those who sat down again are not listed.
    host = f"<@{facts.host_id}>"
    assert embed.description == f"Host: {host}. Invited: <@99>. Press **Join** to play again."
    assert_no_markdown_from_names(seats)


def test_lobby_without_invited_has_no_invited_line() -> None:
    """A first lobby lists the seats only."""
    embed = lobby_embed(PublicTable(facts_for("rage", "lobby"), None), rage.RageRenderer(), "de")
    assert "Eingeladen" not in embed.fields[0].value


def nothanks_running(facts: TableFacts) -> NoThanksGame:
    """A seven-player No Thanks! game after a few takes and passes."""
    game = NoThanksGame.new([str(seat) for seat in facts.seats], seed=11, open_chips=True)
    for move in range(12):
        assert game.active_player is not None
        legal = game.legal_actions()
        game.apply(game.active_player, legal[move % len(legal)])
    return game


def test_nothanks_table_and_log_show_names_as_written() -> None:
    """Player fields, the move log and the turn line never read a name as markdown."""
    facts = facts_for("nothanks", "running", count=7)
    game = nothanks_running(facts)
    fields = public_message(PublicTable(facts, game.view(None)), nothanks.NoThanksRenderer(), "en")
    embed = fields["embed"]
    lines = embed_lines(embed)
    assert_no_markdown_from_names([line.replace("**", "") for line in lines])
    rows = (embed.description or "").splitlines()[2:9]
    names = [
        re.sub(
            r" \(\d+ chips?\)$", "", as_written(row.replace("**", "")).split(" — ")[0]
        ).removeprefix("▶ ")
        for row in rows
    ]
    assert names == NAMES[:7]
    last = as_written((embed.description or "").splitlines()[9].removeprefix("Last move: "))
    assert any(last.startswith(name) for name in NAMES)


def test_nothanks_final_shows_names_as_written() -> None:
    """The scoreboard's rows and winner line escape names too."""
    facts = facts_for("nothanks", "finished", count=7)
    game = nothanks_running(facts)
    while not game.is_over:
        assert game.active_player is not None
        game.apply(game.active_player, game.legal_actions()[0])
    embed = nothanks.final_embed(facts, game.view(None), "en")
    assert_no_markdown_from_names(embed_lines(embed))
    assert any(BOLD in as_written(field.name) for field in embed.fields)


def rage_after_rounds(facts: TableFacts, rounds: int) -> RageState:
    """An eight-player Rage game mid-trick after some scored rounds, or at its end."""
    state = RageState.new([str(seat) for seat in facts.seats], seed=9)
    while not state.is_over and (state.round <= rounds or not state.view(None).trick):
        player = state.acting_players()[0]
        state.apply(player, state.legal_actions(player)[0])
    return state


@pytest.mark.parametrize("locale", ["en", "de", "ru", "it"])
def test_rage_table_shows_names_as_written(locale: str) -> None:
    """Trick, last trick, players and round summary escape names; the sheet stays a block."""
    facts = facts_for("rage", "running")
    state = rage_after_rounds(facts, 2)
    embed = rage.game_embed(facts, state.view(None), locale)
    sheet = rage.scores_message(facts, state.view(None), locale)["embed"]
    texts = [embed.description or "", sheet.description or ""]
    texts += [field.value for field in sheet.fields]
    assert not any("```" in value for value in texts)  # the sheet is lines, not a grid
    lines = [line for value in texts for line in value.split("\n")]
    assert_no_markdown_from_names([line.replace("**", "") for line in lines])
    assert any(line.startswith(r"\# Big Head") for line in lines)


def test_rage_final_sheet_has_a_line_per_player() -> None:
    """The final score sheet, names with backticks too: one line per player, no code block."""
    facts = facts_for("rage", "finished")
    state = rage_after_rounds(facts, 99)
    assert state.is_over
    embed = rage.final_embed(facts, state.view(None), "en")
    sheet = embed.fields[1].value
    assert "```" not in sheet and sheet.count("\n") == len(facts.seats) - 1
    standings = embed.fields[0].value.split("\n")
    assert_no_markdown_from_names([line.split(" ", 1)[1] for line in standings])


def test_rage_bidding_names_computers() -> None:
    """While computers bid, the table names them instead of mentioning "<@-1>"."""
    names = {"-1": "🤖 Computer 1 (hard)", "-2": "🤖 Computer 2 (easy)", PLAYERS[0]: BOLD}
    facts = TableFacts(
        id=8,
        game="rage",
        status="running",
        host_id=int(PLAYERS[0]),
        seats=(int(PLAYERS[0]), -1, -2, -3),
        options={},
        names=names,  # "-3" has no stored name
        computers={"-1": "hard", "-2": "easy", "-3": "normal"},
        min_players=3,
        max_players=8,
    )
    state = RageState.new([PLAYERS[0], "-1", "-2", "-3"], seed=1)
    embed = rage.game_embed(facts, state.view(None), "en")
    assert "<@-" not in (embed.description or "")
    lines = (embed.description or "").splitlines()
    assert "🤖 Computer 1 · bid … · won 0 · 0 pts" in lines  # the level is the lobby's
    assert "🤖 3 · bid … · won 0 · 0 pts" in lines  # no stored name: its number
    assert all("<@-" not in line for line in embed_lines(embed))
