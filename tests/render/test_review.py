"""A game review's message: in every language, and built from the public view plus the
reviewed player's own chips or hand, nothing else."""

from __future__ import annotations

import asyncio
from functools import cache

import discord
import pytest

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.i18n import t
from bot.render.records import replay_facts, replay_picture
from bot.render.review import mistake_picture, review_message
from bot.table.replay import game_position
from bot.table.review import Budget, Review, review_game
from bot.table.spec import GameSpec
from bot.table.thinking import ThinkingPool
from tests.table.test_review import SMALL, nothanks_with_a_35_taken, rage_with_a_hopeless_bid

LANGUAGES = ["en", "de", "ru", "it"]
GAMES = {
    "nothanks": (NOTHANKS, nothanks_with_a_35_taken, SMALL),
    "rage": (RAGE, lambda: rage_with_a_hopeless_bid()[0], Budget(samples=8, confirm=4)),
}


@cache
def reviewed(name: str) -> tuple[GameSpec, object, Review]:
    """A hand-built game of ``name`` and seat "1"'s review of it (worked out once)."""
    spec, build, budget = GAMES[name]
    game = build()
    review = asyncio.run(review_game(ThinkingPool(0), spec, game, "1", budget))
    return spec, game, review


def texts(embed: discord.Embed) -> list[str]:
    """Every text of an embed a reader sees."""
    data = embed.to_dict()
    found = [data.get("title", ""), data.get("description", "")]
    found += [data.get("author", {}).get("name", ""), data.get("footer", {}).get("text", "")]
    return [text for text in found if text]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", list(GAMES))
def test_the_review_reads_in_every_language(name: str, language: str) -> None:
    """Every text is translated (no key shows), costs are written as the language writes
    numbers, and the message fits Discord's limits."""
    spec, game, review = reviewed(name)
    level = spec.reviewer.level  # type: ignore[union-attr]
    fields = review_message(spec, game, review, level, 64, language, pictures=[True] * 3)  # type: ignore[arg-type]
    summary, *decisions = fields["embeds"]
    title = t("review.title", language, game=spec.renderer.title(language), table=7)
    assert summary.title == title
    assert len(decisions) == len(review.mistakes) >= 1
    for embed in fields["embeds"]:
        for text in texts(embed):
            assert "review." not in text and "{" not in text
    cost = round(review.mistakes[0].cost, 1)
    written = f"{cost:.1f}".rstrip("0").rstrip(".")
    if language != "en":
        written = written.replace(".", ",")
    assert written in decisions[0].description
    assert sum(len(text) for embed in fields["embeds"] for text in texts(embed)) <= 6000


@pytest.mark.parametrize("name", list(GAMES))
def test_a_decision_shows_the_public_table_and_only_the_players_own_secrets(name: str) -> None:
    """Each decision's text is the verdict, the player's own chips or hand, then the live
    table's text of that move from the public view; its picture is the replay's."""
    spec, game, review = reviewed(name)
    renderer = spec.renderer
    level = spec.reviewer.level  # type: ignore[union-attr]
    fields = review_message(spec, game, review, level, 64, "en", pictures=[True] * 3)  # type: ignore[arg-type]
    for mistake, embed in zip(review.mistakes, fields["embeds"][1:], strict=True):
        assert mistake.public.viewer is None and mistake.view.viewer == "1"
        facts = replay_facts(spec, game, "en", final=False)  # type: ignore[arg-type]
        public = renderer.table(facts, mistake.public, "en", pictures=True)["embed"].description
        own = renderer.review_own(mistake.view, "en")  # type: ignore[attr-defined]
        verdict, _, table = embed.description.partition("\n\n")
        assert verdict.splitlines()[-1] == own and table == (public or "")
        position = game_position(spec, game, mistake.step)  # type: ignore[arg-type]
        replayed = replay_picture(spec, game, position, "en")  # type: ignore[arg-type]
        picture = mistake_picture(spec, game, mistake, "en")  # type: ignore[arg-type]
        assert picture is not None and replayed is not None
        assert picture.key == replayed.key and picture.alt == replayed.alt


def test_a_clean_game_and_a_game_without_choices_say_so() -> None:
    """No mistake: well played; no real choice at all: nothing to review."""
    spec, game, review = reviewed("nothanks")
    clean = Review(review.table_id, "1", 12, ())
    fields = review_message(spec, game, clean, "expert", 64, "en")  # type: ignore[arg-type]
    assert fields["embeds"][0].description == t("review.clean", "en", count=12, level="expert")
    assert len(fields["embeds"]) == 1
    none = Review(review.table_id, "1", 0, ())
    fields = review_message(spec, game, none, "expert", 64, "en")  # type: ignore[arg-type]
    assert fields["embeds"][0].description == t("review.no_choices", "en")
