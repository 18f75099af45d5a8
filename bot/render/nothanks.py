"""Embeds for No Thanks! tables: lobby, live game, final scoreboard, private chips, rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import discord

from bot.engines.nothanks import PASS, PlayerView, rank_standings, runs, score
from bot.i18n import t, translated_text
from bot.render.components import StaticView, custom_id, static_view
from bot.render.images import nothanks as pictures
from bot.render.images.cache import Picture
from bot.render.limits import fit
from bot.render.table import alt_text, line_name, rating_note, short_names
from bot.table.spec import Letter, MessageFields, TableFacts, is_computer_id

COLOUR = discord.Colour(0xE67E22)
HISTORY_LINES = 5


def format_runs(cards: list[int]) -> str:
    """Cards as runs, lowest card first: '3 · 12–14 · 27'."""
    parts = []
    for run in runs(cards):
        parts.append(str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}")
    return " · ".join(parts)


def history_lines(facts: TableFacts, game: PlayerView, locale: object) -> list[str]:
    """The last few moves in words, newest last."""
    return [
        _move_line(
            facts.name(game.players[move.seat]),
            move.action is PASS,
            move.card,
            move.chips_on_card,
            locale,
        )
        for move in game.history[-HISTORY_LINES:]
    ]


@translated_text
def _move_line(player: str, passed: bool, card: int, chips: int, locale: object) -> str:
    """One move in words (cached: each stays in the last moves for five moves)."""
    if passed:
        return t("nothanks.log.pass", locale, player=player, card=card)
    if chips == 0:
        return t("nothanks.log.take_none", locale, player=player, card=card)
    return t("nothanks.log.take", locale, player=player, card=card, count=chips)


def heading(card: object, chips: int, locale: object) -> str:
    """The current card and the chips on it, e.g. '🃏 27 · 🪙 3' (or '· no chips')."""
    if chips == 0:
        return t("nothanks.game.heading_none", locale, card=card)
    return f"🃏 {card} · 🪙 {chips}"


def _player_cards(game: PlayerView, player: str, locale: object) -> str:
    """A player's runs and card points on one line: '12–14 · 27 — **66** points'."""
    return _cards_line(tuple(game.cards[player]), locale)


@translated_text
def _cards_line(cards: tuple[int, ...], locale: object) -> str:
    """The line for these cards (cached: a player's cards change only when they take)."""
    if not cards:
        return t("nothanks.game.no_cards", locale)
    points = score(list(cards), 0)
    text = t("nothanks.game.cards", locale, runs=format_runs(list(cards)), points=points)
    return " — ".join(part.strip() for part in text.splitlines() if part.strip())


def game_embed(
    facts: TableFacts, game: PlayerView, locale: object, *, pictures: bool = False
) -> discord.Embed:
    """The live table in a phone's screen: the card and its chips first, then whose turn;
    without a picture the pile and one line per player, with one the open chips (the
    picture shows only what a take changes); the last move."""
    embed = discord.Embed(
        title=heading(game.current_card, game.chips_on_card, locale), colour=COLOUR
    )
    embed.set_author(name=t("nothanks.game.title", locale))
    lines = moving_lines(facts, game, locale) if pictures else table_lines(facts, game, locale)
    last = history_lines(facts, game, locale)[-1:]
    if last:
        lines.append(t("nothanks.game.last_move", locale, move=last[0]))
    embed.description = "\n".join(lines)
    chips_mode = (
        "nothanks.option.open_chips_on" if game.open_chips else "nothanks.option.open_chips_off"
    )
    embed.set_footer(
        text=t(
            "nothanks.game.footer",
            locale,
            table=facts.id,
            move=game.move_number,
            mode=t(chips_mode, locale),
        )
    )
    return embed


# A name's length in the open chips' line (see moving_lines).
CHIPS_NAME = 14


def moving_lines(facts: TableFacts, game: PlayerView, locale: object) -> list[str]:
    """What changes with every move, beside the picture: a computer's turn (a person's is
    the content's line, which pings them: said once), and with open chips everyone's chips
    ('🪙 Ana 11 · Ben 9', names short enough for seven on a phone)."""
    active = game.active_player or ""
    lines = []
    if active in facts.computers:
        lines.append(t("nothanks.game.turn", locale, player=facts.mention(active)))
    if game.open_chips:
        counts = " · ".join(
            f"{line_name(facts, player, CHIPS_NAME)} {game.chips[player]}"
            for player in game.players
            if game.chips[player] is not None
        )
        lines.append(f"🪙 {counts}")
    return lines


def table_lines(facts: TableFacts, game: PlayerView, locale: object) -> list[str]:
    """Whose turn, the pile, and one line per player: '▶ cid — 12–14 · 27 — **66** points'."""
    active = game.active_player
    lines = [
        t("nothanks.game.turn", locale, player=facts.mention(active or "")),
        t("nothanks.game.pile", locale, count=game.cards_left),
    ]
    for player in game.players:
        name = f"**{line_name(facts, player)}**"
        chips = game.chips[player]
        if game.open_chips and chips is not None:
            name = t("nothanks.game.player_chips", locale, player=name, count=chips)
        if player == active:
            name = f"▶ {name}"
        lines.append(f"{name} — {_player_cards(game, player, locale)}")
    return lines


def table_alt(facts: TableFacts, game: PlayerView, locale: object) -> str:
    """What the table picture shows, as plain text for its alt text (screen readers): the
    card, the pile and every player's cards and points. Only what a take changes, like
    the picture, so a pass keeps both; the chips and the turn are in the message text."""
    lines = [t("images.alt.nothanks_card", locale, card=game.current_card)]
    lines.append(t("nothanks.game.pile", locale, count=game.cards_left))
    lines += [
        f"{facts.short_name(player)} — {_player_cards(game, player, locale)}"
        for player in game.players
    ]
    return alt_text(facts, t("images.alt.nothanks", locale), lines)


def final_rows(facts: TableFacts, game: PlayerView, locale: object) -> list[tuple[str, str]]:
    """Each player in rank order as (title, body): '🥇 Ana: 8 · Δ +7' and 'Cards: 13–14',
    'Card points 13 − chips 5 = 8'; last, the removed cards."""
    # At the end every chip is public, so the view holds all a scoreboard needs.
    standings = rank_standings(
        [
            (player, seat, game.cards[player], game.chips[player] or 0)
            for seat, player in enumerate(game.players)
        ]
    )
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    rows = []
    for row in standings:
        cards = [card for run in row.runs for card in run]
        title = t(
            "nothanks.final.row_title",
            locale,
            medal=medals.get(row.rank, f"{row.rank}."),
            player=facts.name(row.player),
            total=_signed_total(row.total),
        ) + rating_note(facts, row.player, locale)
        body = t(
            "nothanks.final.row",
            locale,
            runs=format_runs(cards) or "—",
            points=row.card_points,
            chips=row.chips,
            total=_signed_total(row.total),
        )
        rows.append((title, body))
    removed = ", ".join(str(card) for card in game.removed or [])
    rows.append((t("nothanks.final.removed", locale), removed))
    return rows


def _signed_total(total: int) -> str:
    """A total with a real minus sign, as the picture writes it."""
    return f"−{-total}" if total < 0 else str(total)


def final_alt(facts: TableFacts, game: PlayerView, locale: object) -> str:
    """The final board as plain text for the picture's alt text: every row the picture
    shows (rank, name, rating change, cards, card points − chips = total), and the removed
    cards, as the text-only board says them. Seven long names would push the removed cards
    past Discord's 1,024 characters: the names are shortened first (the picture has them
    whole)."""

    def lines(names: TableFacts) -> list[str]:
        rows = final_rows(names, game, locale)
        return [f"{title}: {body}".replace("\n", ", ") for title, body in rows]

    intro = t("images.alt.nothanks_final_board", locale)
    return alt_text(facts, intro, lines(facts), lines(short_names(facts)))


def final_embed(
    facts: TableFacts, game: PlayerView, locale: object, *, pictures: bool = False
) -> discord.Embed:
    """The final scoreboard: who won, then (unless the picture shows them) each player's
    runs, card points, chips, total and rank, and the removed cards."""
    standings = rank_standings(
        [
            (player, seat, game.cards[player], game.chips[player] or 0)
            for seat, player in enumerate(game.players)
        ]
    )
    winners = [facts.name(s.player) for s in standings if s.rank == 1]
    embed = discord.Embed(title=t("nothanks.final.title", locale), colour=discord.Colour.gold())
    key = "nothanks.final.winner" if len(winners) == 1 else "nothanks.final.shared"
    embed.description = t(key, locale, players=", ".join(winners), total=standings[0].total)
    if not pictures:
        for title, body in final_rows(facts, game, locale):
            embed.add_field(name=title, value=body, inline=False)
    embed.set_footer(
        text=t("nothanks.final.footer", locale, table=facts.id, moves=game.move_number)
    )
    return embed


def private_text(game: PlayerView, locale: object) -> str:
    """A player's private summary: chips, cards and current score."""
    player = game.viewer
    assert player is not None
    cards = game.cards[player]
    chips = game.chips[player] or 0
    lines = [t("nothanks.private.chips", locale, count=chips)]
    if cards:
        lines.append(t("nothanks.private.cards", locale, runs=format_runs(cards)))
    else:
        lines.append(t("nothanks.private.no_cards", locale))
    lines.append(
        t("nothanks.private.score", locale, points=score(cards, 0), total=score(cards, chips))
    )
    if game.active_player == player:
        lines.append(
            t(
                "nothanks.private.your_turn",
                locale,
                card=game.current_card,
                count=game.chips_on_card,
            )
        )
    elif game.current_card is not None and game.chips_on_card == 0:
        lines.append(heading(game.current_card, 0, locale))
    elif game.current_card is not None:
        lines.append(
            t("nothanks.game.card", locale, card=game.current_card, count=game.chips_on_card)
        )
    return "\n".join(lines)


def living_dm_text(game: PlayerView, letter: Letter, link: str, locale: object) -> str:
    """A player's one DM per game: what just changed, chips, cards, score, the table link.

    It is sent at the start and edited in place after each change of the player's
    chips or cards, so it notifies once and stays current.
    """
    player = game.viewer
    assert player is not None
    cards = game.cards[player]
    chips = game.chips[player] or 0
    params = letter.params
    if letter.key == "nothanks.dm.started":
        lines = [t(letter.key, locale, link=link, count=chips)]
    else:
        lines = [t("nothanks.dm.living_title", locale, link=link)]
        if letter.key == "nothanks.dm.passed":
            lines.append(t(letter.key, locale, card=params["card"], count=chips))
        else:
            gained = int(params.get("gained", 0))
            if gained:
                lines.append(
                    t("nothanks.dm.took_gained", locale, card=params["card"], count=gained)
                )
            else:
                lines.append(t("nothanks.dm.took_none", locale, card=params["card"]))
            lines.append(t("nothanks.private.chips", locale, count=chips))
    if cards:
        lines.append(t("nothanks.private.cards", locale, runs=format_runs(cards)))
    else:
        lines.append(t("nothanks.private.no_cards", locale))
    lines.append(
        t("nothanks.private.score", locale, points=score(cards, 0), total=score(cards, chips))
    )
    return "\n".join(lines)


def rules_embed(locale: object) -> discord.Embed:
    """A short summary of the rules."""
    embed = discord.Embed(title=t("nothanks.rules.title", locale), colour=COLOUR)
    embed.description = t("nothanks.rules.intro", locale)
    for part in ("setup", "turn", "end", "scoring"):
        embed.add_field(
            name=t(f"nothanks.rules.{part}.title", locale),
            value=t(f"nothanks.rules.{part}.text", locale),
            inline=False,
        )
    return embed


_GAME_BUTTONS = (
    ("take", "nothanks.button.take", discord.ButtonStyle.success, None),
    ("pass", "nothanks.button.pass", discord.ButtonStyle.danger, None),
    ("chips", "nothanks.button.chips", discord.ButtonStyle.secondary, "🪙"),
)


def game_view(facts: TableFacts, game: PlayerView, locale: object) -> StaticView:
    """Take, No thanks! and My chips, stamped with the current move number."""
    view = static_view()
    for action, label, style, emoji in _game_buttons(locale):
        view.add_button(
            custom_id(facts.game, facts.id, game.move_number, action),
            label=label,
            style=style,
            emoji=emoji,
        )
    return view


@translated_text
def _game_buttons(locale: object) -> tuple[tuple[str, str, discord.ButtonStyle, str | None], ...]:
    """The game's buttons in a language (cached: only their custom ids change move by move)."""
    return tuple(
        (action, t(key, locale), style, emoji) for action, key, style, emoji in _GAME_BUTTONS
    )


class NoThanksRenderer:
    """No Thanks!'s messages for the shared table."""

    colour = COLOUR.value

    def title(self, locale: object) -> str:
        """The game's name in a language."""
        return t("game.nothanks.name", locale)

    def dm_closed_hint(self, locale: object) -> str:
        """Where to see private information when DMs are closed."""
        return t("nothanks.dm_closed", locale)

    def option_lines(self, options: Mapping[str, Any], locale: object) -> list[str]:
        """Open or private chips."""
        if options.get("open_chips", False):
            return [t("nothanks.option.open_chips_on", locale)]
        return [t("nothanks.option.open_chips_off", locale)]

    def table(
        self, facts: TableFacts, public: PlayerView, locale: object, *, pictures: bool = False
    ) -> MessageFields:
        """The live table; the first move's message says who starts."""
        content = None
        pinged: list[discord.Object] = []
        if public.move_number == 0:
            starter = public.active_player or ""
            content = t("nothanks.game.started", locale, player=facts.mention(starter))
            if not is_computer_id(starter):
                pinged.append(discord.Object(int(starter)))  # the one person to ping: the starter
        return {
            "content": content,
            "embed": game_embed(facts, public, locale, pictures=pictures),
            "view": game_view(facts, public, locale),
            "allowed_mentions": discord.AllowedMentions(
                everyone=False, roles=False, users=pinged, replied_user=False
            ),
        }

    def living_dm(self, view: PlayerView, letter: Letter, link: str, locale: object) -> str:
        """The text of a player's living DM after ``letter``'s change."""
        return living_dm_text(view, letter, link, locale)

    def living_dm_starts(self, letter: Letter) -> bool:
        """Whether the letter begins the game's living DM (sent anew, not edited)."""
        return letter.key == "nothanks.dm.started"

    def turn_panel(self, facts: TableFacts, view: PlayerView, locale: object) -> MessageFields:
        """A person's move away from the table (their "your turn" DM): their chips and
        cards, the card and the chips on it, and Take / No thanks! for this move."""
        components = static_view()
        for action, label, style, emoji in _game_buttons(locale)[:2]:
            components.add_button(
                custom_id(facts.game, facts.id, view.move_number, action),
                label=label,
                style=style,
                emoji=emoji,
            )
        return fit({"content": private_text(view, locale), "view": components})

    def final(
        self, facts: TableFacts, public: PlayerView, locale: object, *, pictures: bool = False
    ) -> MessageFields:
        """The final scoreboard (with ``pictures``, who won: the picture has the rest)."""
        return {"embed": final_embed(facts, public, locale, pictures=pictures)}

    def picture(self, facts: TableFacts, public: PlayerView, locale: object) -> Picture:
        """The picture of the table (or of the final board), from the public view."""
        if public.is_over:
            final = pictures.final_scene(facts, public, locale)
            return Picture(final, pictures.final_png, final_alt(facts, public, locale))
        seats = tuple(
            (
                player,
                facts.names.get(player),
                facts.computers.get(player),
                tuple(public.cards[player]),
            )
            for player in public.players
        )
        return live_picture(locale, public.current_card, public.cards_left, seats)

    def private(self, facts: TableFacts, view: PlayerView, locale: object) -> MessageFields:
        """A player's chips, cards and score, within Discord's limits."""
        return fit({"content": private_text(view, locale)})

    def rules(self, locale: object) -> discord.Embed:
        """The rules summary."""
        return rules_embed(locale)

    def review_action(self, action: str, locale: object) -> str:
        """A choice as the move log writes it ("take", "pass"), as its button reads."""
        return t("nothanks.button.take" if action == "take" else "nothanks.button.pass", locale)

    def review_own(self, view: PlayerView, locale: object) -> str:
        """What only the reviewed player knew at a decision: their own chips (and cards)."""
        player = view.viewer
        assert player is not None
        cards = view.cards[player]
        return t(
            "review.nothanks.own",
            locale,
            count=view.chips[player] or 0,
            runs=format_runs(cards) or "—",
        )

    def describe(self, name: str, value: object, facts: TableFacts, locale: object) -> str | None:
        """No Thanks! details (card numbers) read as they are."""
        return None


@translated_text
def live_picture(
    locale: object,
    card: int | None,
    pile: int,
    seats: tuple[tuple[str, str | None, str | None, tuple[int, ...]], ...],
) -> Picture:
    """The live table's picture (scene, key and alt text) from exactly what it shows: the
    card, the pile and each seat's (player, name, computer level, cards).

    Cached: every No thanks! shows the same, so its click looks the picture up instead of
    making the scene, its key and its alt text again. Built from these values alone (a
    view and facts holding nothing else), so a cached picture cannot carry anything else.
    """
    players = [seat[0] for seat in seats]
    facts = TableFacts(
        id=0,
        game="nothanks",
        status="running",
        host_id=0,
        seats=(),
        options={},
        names={player: name for player, name, _, _ in seats if name is not None},
        computers={player: level for player, _, level, _ in seats if level is not None},
        min_players=0,
        max_players=0,
    )
    view = PlayerView(
        viewer=None,
        players=players,
        open_chips=False,
        current_card=card,
        chips_on_card=0,
        cards_left=pile,
        active_player=None,
        cards={player: list(cards) for player, _, _, cards in seats},
        chips=dict.fromkeys(players),
        move_number=0,
        is_over=False,
        removed=None,
        history=[],
    )
    scene = pictures.table_scene(facts, view, locale)
    return Picture(scene, pictures.table_png, table_alt(facts, view, locale))
