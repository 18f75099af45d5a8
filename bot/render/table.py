"""The messages every game shares: lobby, closed table, and the frame of the live table.

Public messages are built from a `PublicTable` (facts and the public view) only, so a
hidden card or bid cannot reach a channel by a slip.
"""

from __future__ import annotations

import dataclasses
import re

import discord

from bot.i18n import number, t
from bot.records.ratings import displayed_change
from bot.render.components import TableButton, TableSelect, static_view
from bot.render.images.cache import Picture
from bot.render.limits import fit, units, words
from bot.table.spec import (
    GameRenderer,
    MessageFields,
    PublicTable,
    TableFacts,
    escape_name,
    is_computer_id,
    one_line,
)

_MENTION = re.compile(r"<@!?(\d+)>")
_ESCAPED = re.compile(r"\\(.)")
# Discord's limit for an attachment's description (its alt text).
ALT_TEXT = 1024
# A name in a live table's lines (Discord allows 32 characters; a phone's line is ~40).
LINE_NAME = 24
# A name in an alt text that would be too long with the whole names (32 at most on Discord).
SHORT_NAME = 16


def alt_text(facts: TableFacts, intro: str, lines: list[str], *shorter: list[str]) -> str:
    """A picture's alt text: the whole table as plain sentences (no markdown, names for
    mentions), so a screen reader reads what the picture shows.

    Discord drops what is past 1,024 characters, so a text that is too long is replaced by
    the first of ``shorter`` (the same lines, each shorter than the last: what is least
    useful goes first) that fits; if none does, the last is cut between two words.
    """
    text = ""
    for candidate in (lines, *shorter):
        text = ". ".join(line.rstrip(".") for line in [intro, *candidate] if line) + "."
        text = _MENTION.sub(lambda match: facts.plain_name(match.group(1)), text)
        text = _ESCAPED.sub(r"\1", text.replace("**", ""))
        if units(text) <= ALT_TEXT:
            return text
    return words(text, ALT_TEXT)


def line_name(facts: TableFacts, player: str | int, limit: int = LINE_NAME) -> str:
    """A name for a live table's lines, which a phone shows many of: `short_name`, cut to
    its first whole words within ``limit`` characters (the ping and the picture give the
    whole name), so a long name does not wrap a line, nor eight of them the screen."""
    short = facts.short_name(player)
    name = facts.names.get(str(player))
    if name is None or units(short) <= limit or units(name) <= limit:
        return short
    return escape_name(words(one_line(name), limit))


def short_names(facts: TableFacts, limit: int = SHORT_NAME) -> TableFacts:
    """The table with each name cut to its first words within ``limit`` UTF-16 units (a
    name of one longer word, to its first characters): for an alt text that would be too
    long with the whole names."""
    names = {player: words(name, limit) for player, name in facts.names.items()}
    return dataclasses.replace(facts, names=names)


def rating_note(facts: TableFacts, player: str, locale: object) -> str:
    """' · Δ +36' (the rating's change) after a finished game's row, or nothing for a
    player not rated."""
    change = rating_change(facts, player, locale)
    return "" if change is None else " · " + change


def rating_change(facts: TableFacts, player: str, locale: object) -> str | None:
    """'Δ +36', a player's rating change in a finished game, or None if not rated."""
    level = facts.computers.get(str(player))
    key = str(player) if level is None else f"computer:{level}"  # as the records count it
    change = facts.rating_changes.get(key)
    if change is None:
        return None
    shown = number(displayed_change(change), locale, signed=True)
    return t("final.rating_change", locale, change=shown)


def lobby_embed(public: PublicTable, renderer: GameRenderer, locale: object) -> discord.Embed:
    """The lobby: host, seats, options, what is still needed."""
    facts = public.facts
    embed = discord.Embed(
        title=t("lobby.title", locale, game=renderer.title(locale)),
        colour=discord.Colour(renderer.colour),
    )
    host = f"<@{facts.host_id}>"
    # A rematch's former players, until they join (mentions in an embed do not ping): said
    # once, with the host, above the seats (not inside the last seat's line).
    invited = [player for player in public.invited if player not in facts.seats]
    if invited:
        players = ", ".join(facts.mention(player) for player in invited)
        embed.description = t("lobby.invited", locale, host=host, players=players)
    else:
        embed.description = t("lobby.host", locale, host=host)
    seats = "\n".join(
        f"{index}. {facts.name(player)}" for index, player in enumerate(facts.seats, 1)
    )
    embed.add_field(
        name=t("lobby.players", locale, count=len(facts.seats), max=facts.max_players),
        value=seats or t("lobby.empty", locale),
        inline=False,
    )
    lines = [
        *renderer.option_lines(facts.options, locale),
        pace_line(public, locale),
    ]
    embed.add_field(name=t("lobby.options", locale), value="\n".join(lines), inline=False)
    missing = facts.min_players - len(facts.seats)
    footer = (
        t("lobby.need_more", locale, count=missing) if missing > 0 else t("lobby.ready", locale)
    )
    embed.set_footer(text=f"{footer} · #{facts.id}")
    return embed


def pace_line(public: PublicTable, locale: object) -> str:
    """The table's pace: its live turn timer, or hours per move when turn-based."""
    if public.pace:
        return t("table.pace", locale, hours=max(public.pace // 3600, 1))
    return t("table.turn_time", locale, count=public.turn_seconds)


def played_for(seconds: float, locale: object) -> str:
    """How long a game took, in days past two days, else in hours (at least one)."""
    hours = int(seconds // 3600)
    if hours >= 48:
        return t("table.played_days", locale, count=hours // 24)
    return t("table.played_hours", locale, count=max(hours, 1))


def _add_line(fields: MessageFields, line: str) -> None:
    """Append a line to the message's embed (to its content when it has none)."""
    embed = fields.get("embed")
    if embed is not None:
        embed.description = f"{embed.description or ''}\n{line}".strip()
    else:
        fields["content"] = f"{fields.get('content') or ''}\n{line}".strip()


def lobby_view(public: PublicTable, locale: object) -> discord.ui.View:
    """Join, Leave, Start (enabled with enough players), add a computer, Cancel."""
    facts = public.facts
    g, table_id = facts.game, facts.id
    full = len(facts.seats) >= facts.max_players
    view = static_view()
    view.add_item(
        TableButton.make(
            g,
            table_id,
            0,
            "join",
            label=t("button.join", locale),
            style=discord.ButtonStyle.success,
            disabled=full,
        )
    )
    view.add_item(TableButton.make(g, table_id, 0, "leave", label=t("button.leave", locale)))
    view.add_item(
        TableButton.make(
            g,
            table_id,
            0,
            "start",
            label=t("button.start", locale),
            style=discord.ButtonStyle.primary,
            disabled=len(facts.seats) < facts.min_players,
        )
    )
    if not full:
        view.add_item(
            TableSelect.make(
                g,
                table_id,
                0,
                "addbot",
                placeholder=t("table.add_computer", locale),
                options=[
                    discord.SelectOption(label=t(f"table.level.{level}", locale), value=level)
                    for level in facts.levels
                ],
            )
        )
    view.add_item(
        TableButton.make(
            g,
            table_id,
            0,
            "cancel",
            label=t("button.cancel", locale),
            style=discord.ButtonStyle.danger,
        )
    )
    return view


def closed_embed(public: PublicTable, renderer: GameRenderer, locale: object) -> discord.Embed:
    """A lobby cancelled or expired, or a game stopped before its end."""
    facts = public.facts
    how = "cancelled" if facts.status == "cancelled" else "abandoned"
    if public.closed_reason in ("expired", "stalled"):
        how = public.closed_reason
    by = f"<@{public.closed_by}>" if public.closed_by is not None else ""
    return discord.Embed(
        title=t("closed.title", locale, game=renderer.title(locale)),
        description=t(f"closed.{how}", locale, user=by),
        colour=discord.Colour.dark_grey(),
    )


def rematch_view(facts: TableFacts, locale: object) -> discord.ui.View:
    """The Rematch button under the final standings."""
    view = static_view()
    view.add_item(
        TableButton.make(
            facts.game,
            facts.id,
            0,
            "rematch",
            label=t("button.rematch", locale),
            style=discord.ButtonStyle.primary,
        )
    )
    return view


def public_message(
    public: PublicTable, renderer: GameRenderer, locale: object, *, pictures: bool = False
) -> MessageFields:
    """The table's one public message, whatever state it is in, within Discord's limits.

    It pings nobody unless the game names who: mentions in its text only show names. With
    ``pictures`` the running game's picture is the table, and the text says only what the
    picture does not.
    """
    fields = _public_message(public, renderer, locale, pictures)
    if "allowed_mentions" not in fields:
        fields["allowed_mentions"] = discord.AllowedMentions.none()
    return fit(fields)


def public_picture(public: PublicTable, renderer: GameRenderer, locale: object) -> Picture | None:
    """The picture of a running or finished game, from the public view; None for the rest.

    A game without pictures has no `picture` method and keeps its text-only message.
    """
    facts = public.facts
    picture = getattr(renderer, "picture", None)
    if picture is None or public.view is None or facts.status not in ("running", "finished"):
        return None
    result: Picture = picture(facts, public.view, locale)
    return result


def people_to_act(public: PublicTable) -> list[str]:
    """The people (not computers, not seats a computer plays) who decide now."""
    view = public.view
    acting = getattr(view, "players_to_act", None)
    if acting is None:
        active = getattr(view, "active_player", None)
        acting = () if active is None else (active,)
    return [str(p) for p in acting if not is_computer_id(str(p)) and str(p) not in public.away]


def _prompt(fields: MessageFields, facts: TableFacts, deciding: list[str], locale: object) -> None:
    """Mention who is to act in the content (embeds never ping), and let only them be pinged."""
    if not deciding:
        return
    mentions = [facts.mention(p) for p in deciding]
    content = fields.get("content") or ""
    if not all(mention in content for mention in mentions):
        key = "table.turn_prompt" if len(deciding) == 1 else "table.turn_prompt_many"
        line = t(key, locale, players=", ".join(mentions))
        fields["content"] = f"{content}\n{line}".strip()
    fields["allowed_mentions"] = discord.AllowedMentions(
        everyone=False,
        roles=False,
        users=[discord.Object(int(p)) for p in deciding],
        replied_user=False,
    )


def _public_message(
    public: PublicTable, renderer: GameRenderer, locale: object, pictures: bool
) -> MessageFields:
    facts = public.facts
    if facts.status == "lobby":
        return {
            "content": None,
            "embed": lobby_embed(public, renderer, locale),
            "view": lobby_view(public, locale),
        }
    if facts.status in ("cancelled", "abandoned") or public.view is None:
        return {"content": None, "embed": closed_embed(public, renderer, locale), "view": None}
    if facts.status == "finished":
        fields = renderer.final(facts, public.view, locale, pictures=pictures)
        fields["view"] = rematch_view(facts, locale)
        fields.setdefault("content", None)
        if public.pace:
            line = pace_line(public, locale)
            if public.played_for is not None:
                line += " · " + played_for(public.played_for, locale)
            _add_line(fields, line)
        return fields
    fields = renderer.table(facts, public.view, locale, pictures=pictures)
    fields.setdefault("content", None)
    if public.notice is not None:
        key, player = public.notice
        fields["content"] = t(key, locale, player=facts.mention(player))
    deciding = people_to_act(public)
    _prompt(fields, facts, deciding, locale)
    embed = fields.get("embed")
    if public.pace and embed is not None:
        _add_line(fields, pace_line(public, locale))
        for player, until in public.held:
            away = t("away.line", locale, player=facts.mention(player), until=int(until))
            _add_line(fields, away)
    if public.deadline is not None and embed is not None:
        key = "table.deadline" if len(deciding) > 1 else "table.deadline_one"
        deadline = t(key, locale, deadline=int(public.deadline))
        embed.description = f"{embed.description or ''}\n{deadline}".strip()
    if public.away and fields.get("view") is not None:
        fields["view"].add_item(
            TableButton.make(
                facts.game, facts.id, 0, "back", label=t("table.button.back", locale), emoji="👋"
            )
        )
    return fields
