"""High card's messages: plain English strings (test-only text needs no catalogue keys)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import discord

from bot.render.components import TableButton, TableSelect, static_view
from bot.table.spec import MessageFields, TableFacts
from tests.highcard.engine import HighCardView

COLOUR = 0x3498DB
HAND_LABEL = "Show my cards"


def _footer(facts: TableFacts, view: HighCardView) -> str:
    return f"Table #{facts.id} · move {view.move_number}"


def _points(facts: TableFacts, view: HighCardView) -> str:
    return "\n".join(f"{facts.name(p)}: {view.points[p]}" for p in view.players)


class HighCardRenderer:
    """High card's messages for the shared table."""

    colour = COLOUR

    def title(self, locale: object) -> str:
        """The game's name (test-only text, not in the catalogues)."""
        return "High card"

    def dm_closed_hint(self, locale: object) -> str:
        """Where to see one's cards when DMs are closed."""
        return "I could not DM you. Use **Show my cards** to see your cards privately."

    def option_lines(self, options: Mapping[str, Any], locale: object) -> list[str]:
        """High card has no variants."""
        return ["Two rounds; the highest card of each round scores a point"]

    def table(
        self, facts: TableFacts, public: HighCardView, locale: object, *, pictures: bool = False
    ) -> MessageFields:
        """The round, whose turn it is, this round's cards and the points; Show my cards."""
        embed = discord.Embed(title=f"High card — round {public.round}", colour=COLOUR)
        lines = [f"Turn: {facts.mention(public.active_player or '')}"]
        if public.last_round is not None:
            winner, card = public.last_round
            lines.append(f"Last round: {facts.name(winner)} won with {card}")
        embed.description = "\n".join(lines)
        played = "\n".join(f"{facts.name(p)}: {card}" for p, card in public.trick)
        embed.add_field(name="This round", value=played or "—", inline=False)
        embed.add_field(name="Points", value=_points(facts, public), inline=False)
        embed.set_footer(text=_footer(facts, public))
        view = static_view()
        view.add_item(
            TableButton.make(
                facts.game,
                facts.id,
                public.move_number,
                "hand",
                label=HAND_LABEL,
                style=discord.ButtonStyle.primary,
            )
        )
        return {"content": None, "embed": embed, "view": view}

    def final(
        self, facts: TableFacts, public: HighCardView, locale: object, *, pictures: bool = False
    ) -> MessageFields:
        """The final points, most first (High card has no picture)."""
        best = max(public.points.values())
        winners = [facts.name(p) for p in public.players if public.points[p] == best]
        embed = discord.Embed(title="High card — final scores", colour=COLOUR)
        embed.description = f"Won by {', '.join(winners)} with {best}"
        embed.add_field(name="Points", value=_points(facts, public), inline=False)
        embed.set_footer(text=_footer(facts, public))
        return {"embed": embed}

    def private(self, facts: TableFacts, view: HighCardView, locale: object) -> MessageFields:
        """The player's cards and, on their turn, a select of the cards they may play."""
        hand = view.hand or ()
        lines = [f"Your cards: {' · '.join(str(c) for c in hand) or '—'}"]
        components = static_view()
        if view.legal:
            lines.append("Your turn: play a card.")
            components.add_item(
                TableSelect.make(
                    facts.game,
                    facts.id,
                    view.move_number,
                    "play",
                    placeholder="Play a card",
                    options=[discord.SelectOption(label=str(c), value=str(c)) for c in view.legal],
                )
            )
        return {"content": "\n".join(lines), "view": components}

    def rules(self, locale: object) -> discord.Embed:
        """The rules in two lines."""
        return discord.Embed(
            title="High card",
            description="Everyone holds two cards of 1..20. Two rounds, one card each per "
            "round in seat order; the highest card scores a point.",
            colour=COLOUR,
        )

    def describe(self, name: str, value: object, facts: TableFacts, locale: object) -> str | None:
        """Card numbers read as they are."""
        return None
