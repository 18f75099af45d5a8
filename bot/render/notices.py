"""Turn notices: the "your turn" DM of a turn-based table, and what it says afterwards."""

from __future__ import annotations

from typing import Any

import discord

from bot.i18n import t
from bot.render.limits import fit
from bot.table.spec import GameRenderer, MessageFields, TableFacts, escape_name


def turn_notice(
    renderer: GameRenderer,
    facts: TableFacts,
    view: Any,
    *,
    server: str | None,
    channel_id: int,
    link: str,
    deadline: float,
    locale: object,
) -> MessageFields:
    """A person's "your turn" DM: which game, where (server, channel, a link), the
    deadline, and the move's own buttons (the game's `turn_panel`)."""
    panel: MessageFields = getattr(renderer, "turn_panel")(facts, view, locale)  # noqa: B009
    where = escape_name(server) if server else t("notice.server_unknown", locale)
    header = t(
        "notice.your_turn",
        locale,
        game=renderer.title(locale),
        server=where,
        channel=f"<#{channel_id}>",
        link=link,
        deadline=int(deadline),
    )
    body = panel.get("content") or ""
    return fit(
        {
            "content": f"{header}\n\n{body}".strip(),
            "view": panel.get("view"),
            "allowed_mentions": discord.AllowedMentions.none(),
        }
    )


def notice_over(
    renderer: GameRenderer, *, timed_out: bool, server: str | None, link: str, locale: object
) -> MessageFields:
    """A notice whose turn has passed: done, or played by the computer at the deadline;
    without buttons."""
    where = escape_name(server) if server else t("notice.server_unknown", locale)
    key = "notice.timed_out" if timed_out else "notice.done"
    text = t(key, locale, game=renderer.title(locale), server=where, link=link)
    return {"content": text, "view": None, "allowed_mentions": discord.AllowedMentions.none()}


# The most tables `/cardtable turns` lists (the soonest deadlines); the rest are counted.
TURNS_LISTED = 15


def turns_list(
    entries: list[tuple[str, str | None, int, float, str]],
    locale: object,
    *,
    title: str = "turns.title",
) -> MessageFields:
    """`/cardtable turns` (and the daily summary, with its own ``title``): every table
    waiting for the reader, soonest deadline first.

    Each entry is (game's title, server's name, channel id, deadline, link to the table).
    """
    if not entries:
        return {"content": t("turns.none", locale)}
    lines = [t(title, locale, count=len(entries))]
    for title, server, channel_id, deadline, link in entries[:TURNS_LISTED]:
        where = escape_name(server) if server else t("notice.server_unknown", locale)
        lines.append(
            t(
                "turns.line",
                locale,
                game=title,
                server=where,
                channel=f"<#{channel_id}>",
                deadline=int(deadline),
                link=link,
            )
        )
    if len(entries) > TURNS_LISTED:
        lines.append(t("turns.more", locale, count=len(entries) - TURNS_LISTED))
    return fit({"content": "\n".join(lines), "allowed_mentions": discord.AllowedMentions.none()})
