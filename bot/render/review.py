"""A game review's private message: the costliest decisions, each drawn like a replay step.

Each decision is the game's own live-table embed of that move, as the replay shows it
(with the table's picture where the server shows pictures), headed by what the player
chose, what the strongest computer would have chosen and the estimated cost. The
picture and the table's text are the public view; only the player's own chips or hand
are added, in the text of a message only they see.
"""

from __future__ import annotations

from collections.abc import Sequence

import discord

from bot.i18n import number, t
from bot.render.components import static_view
from bot.render.images.cache import Picture
from bot.render.limits import fit
from bot.render.records import ReplayButton, replay_facts
from bot.render.table import public_picture
from bot.table.replay import StoredGame
from bot.table.review import Mistake, Review
from bot.table.spec import GameSpec, MessageFields, PublicTable

# The replay buttons' tags (a replay step's custom id ends with one; the replay's own
# buttons use others), one per decision shown.
REPLAY_TAGS = ("x", "y", "z")


def picture_name(rank: int) -> str:
    """The attachment name of the picture of the ``rank``-th decision (from 1)."""
    return f"review-{rank}.png"


def points(cost: float, locale: object) -> str:
    """A cost in points as the language writes it, to one decimal ("15.5", "15,5")."""
    return number(round(cost, 1), locale)


def mistake_picture(
    spec: GameSpec, game: StoredGame, mistake: Mistake, locale: object
) -> Picture | None:
    """The table's picture at the decision, as everyone saw it (None: the game has none)."""
    facts = replay_facts(spec, game, locale, final=False)
    return public_picture(PublicTable(facts, mistake.public), spec.renderer, locale)


def _action(spec: GameSpec, action: str, locale: object) -> str:
    describe = getattr(spec.renderer, "review_action", None)
    return str(describe(action, locale)) if describe is not None else action


def mistake_embed(
    spec: GameSpec,
    game: StoredGame,
    mistake: Mistake,
    rank: int,
    level: str,
    locale: object,
    *,
    picture: bool,
) -> discord.Embed:
    """One decision: the live table of that move (the replay's), and the verdict on it."""
    renderer = spec.renderer
    facts = replay_facts(spec, game, locale, final=False)
    fields = renderer.table(facts, mistake.public, locale, pictures=picture)
    embed = fields.get("embed")
    if not isinstance(embed, discord.Embed):
        embed = discord.Embed(colour=renderer.colour)
    embed.set_author(name=t("review.item.title", locale, rank=rank, step=mistake.step))
    own = getattr(renderer, "review_own", None)
    lines = [
        t("review.item.made", locale, action=_action(spec, mistake.made, locale)),
        t(
            "review.item.better",
            locale,
            level=t(f"table.level.{level}", locale),
            action=_action(spec, mistake.better, locale),
        ),
        t("review.item.cost", locale, cost=points(mistake.cost, locale)),
    ]
    if own is not None:
        lines.append(str(own(mistake.view, locale)))
    table_text = embed.description or ""
    embed.description = "\n".join(lines) + (f"\n\n{table_text}" if table_text else "")
    embed.set_footer(text=t("review.item.footer", locale, table=game.table_id, step=mistake.step))
    if picture:
        # In the embed, not as a plain attachment like the live table's: a message's plain
        # attachments show together above its embeds, as a mosaic narrower than an embed
        # image, away from each verdict. The replay button opens the move at full width.
        embed.set_image(url=f"attachment://{picture_name(rank)}")
    return embed


def review_message(
    spec: GameSpec,
    game: StoredGame,
    review: Review,
    level: str,
    samples: int,
    locale: object,
    *,
    pictures: Sequence[bool] = (),
) -> MessageFields:
    """The whole review: a summary, then one embed per costly decision, costliest first.

    ``pictures[i]`` tells whether the ``i``-th decision's picture is attached (as
    `picture_name(i + 1)`).
    """
    renderer = spec.renderer
    summary = discord.Embed(
        title=t("review.title", locale, game=renderer.title(locale), table=game.table_id),
        colour=renderer.colour,
    )
    level_name = t(f"table.level.{level}", locale)
    if not review.decisions:
        summary.description = t("review.no_choices", locale)
    elif not review.mistakes:
        summary.description = t("review.clean", locale, count=review.decisions, level=level_name)
    else:
        summary.description = t(
            "review.summary",
            locale,
            count=len(review.mistakes),
            decisions=review.decisions,
            level=level_name,
        )
    summary.set_footer(text=t("review.method", locale, count=samples))
    embeds = [summary]
    for index, mistake in enumerate(review.mistakes):
        shown = index < len(pictures) and pictures[index]
        embeds.append(mistake_embed(spec, game, mistake, index + 1, level, locale, picture=shown))
    view = static_view()
    for rank, (mistake, tag) in enumerate(zip(review.mistakes, REPLAY_TAGS, strict=False), 1):
        # Opens the replay at that move, in place of the review (asked again, the review
        # comes back at once: it is kept).
        label = t("review.replay", locale, rank=rank)
        view.add_item(
            ReplayButton.make(game.table_id, mistake.step, tag, label=label, disabled=False)
        )
    return fit(
        {
            "content": None,
            "embeds": embeds,
            "view": view,
            "allowed_mentions": discord.AllowedMentions.none(),
        }
    )
