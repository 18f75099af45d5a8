"""`/nothanks review` and `/rage review` through SimCord: a private answer with the
player's costliest decisions, each with its picture; clear answers for bad input.
"""

from __future__ import annotations

import random
import re
import sqlite3
from functools import partial
from typing import Any

import pytest
from simcord import Env

from bot.games.nothanks import SPEC as NOTHANKS
from bot.i18n import t
from bot.queries.history import load_game
from bot.render.records import replay_picture
from bot.table.replay import game_position
from bot.table.review import Budget, Reviews
from bot.table.session import Draft
from tests.e2e.helpers import NAMES, Table, choose, open_table

# Enough work for a sensible review, little enough for a test.
SMALL = Budget(samples=12, confirm=4, expert_iterations=400)


def reviews_of(env: Env, cog: str) -> Reviews:
    """A game cog's reviews, set to the test's small budget."""
    reviews: Reviews = env.bot.get_cog(cog).reviews  # type: ignore[union-attr]
    reviews.budget = SMALL
    return reviews


@pytest.fixture(autouse=True)
def fixed_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every game of these tests is dealt from one seed, so each review is the same run
    after run (the table draws its seed from `secrets`)."""
    monkeypatch.setattr("bot.client.game_cog.secrets.randbits", lambda bits: 81)


async def a_game_where_ana_grabs_high_cards(env: Env) -> Table:
    """A finished three-player No Thanks! game (private chips, pictures on) where ana takes
    every card of 25 or more at once, whatever it costs; otherwise she and the others
    play a simple rule."""
    table = await open_table(env, 3)
    ana = table.players[0]
    while table.running:
        actor = table.active()
        grab = actor is ana and (table.game.current_card or 0) >= 25
        await table.click(actor, "Take" if grab else choose(table.game))
    return table


def watch_deferral(env: Env, reviews: Reviews, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether Discord showed "thinking…" when each review's work began (it must: the
    answer is deferred before any work)."""
    seen: list[bool] = []
    original = reviews.review

    async def watching(*args: Any) -> Any:
        latest = max(env.backend.interactions.values(), key=lambda record: record.id)
        seen.append(latest.loading)
        return await original(*args)

    monkeypatch.setattr(reviews, "review", watching)
    return seen


async def test_a_review_shows_the_costliest_decisions_privately_with_pictures(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ana's review of her game is private and deferred at once; it shows three decisions,
    each the table's picture of that move (the replay's, as everyone saw it) with what she
    did, what the expert would have done, the cost, and only her own chips."""
    reviews = reviews_of(simcord_env, "NoThanks")
    table = await a_game_where_ana_grabs_high_cards(simcord_env)
    ana = table.players[0]
    deferred = watch_deferral(simcord_env, reviews, monkeypatch)
    asked = await ana.slash(table.channel, "nothanks review")
    assert asked.ephemeral and deferred == [True]
    answer = asked.response
    summary, *decisions = answer.embeds
    assert summary.title == f"🎓 Your No Thanks! game · table #{table.table_id}"
    assert len(decisions) == 3 and len(answer.attachments) == 3
    game = await load_game(simcord_env.bot.storage, table.guild.id, table.table_id)
    assert game is not None
    costs, steps = [], []
    for rank, (embed, attachment) in enumerate(zip(decisions, answer.attachments, strict=True), 1):
        assert embed.image.url == f"attachment://{attachment.filename}"
        title = re.fullmatch(rf"#{rank} · move (\d+)", embed.author.name)
        stated = re.search(r"\*\*Cost:\*\* about ([\d.]+) expected points", embed.description)
        assert title is not None and stated is not None
        step, cost = int(title[1]), float(stated[1])
        costs.append(cost)
        steps.append(step)
        text = embed.description
        assert "**You:** Take" in text and "**Computer (expert):** No thanks!" in text
        # The picture is the replay's of that move: the public table, nothing private.
        position = game_position(NOTHANKS, game, step)
        public = replay_picture(NOTHANKS, game, position, "en")
        assert public is not None and attachment.description == public.alt
        # Chips are private at this table: only ana's own count is shown, once.
        assert text.count("🪙") == 1 and "You had 🪙" in text
        engine = NOTHANKS.new_engine(game.seat_players, int(game.seed), game.options)
        for player, action in game.moves[:step]:
            engine.apply(player, NOTHANKS.decode_action(action))
        assert f"You had 🪙 **{engine.view(str(ana.id)).chips[str(ana.id)]}**" in text
    assert costs == sorted(costs, reverse=True) and costs[0] > 1
    assert reviews.computed == 1
    # Asked again: the same answer, from memory.
    again = await ana.slash(table.channel, "nothanks review")
    assert [e.to_dict() for e in again.response.embeds] == [e.to_dict() for e in answer.embeds]
    assert reviews.computed == 1
    # Each decision opens the replay at its move, with the replay's own controls.
    opened = await ana.click(again.response, label="▶ Replay from #2")
    replay = opened.response
    assert replay.content.splitlines()[1] == f"Move {steps[1]} of {len(game.moves)}"
    labels = {item.get("label") for row in replay.components for item in row["components"]}
    assert {"⏪ −10", "+10 ⏩"} <= labels
    assert simcord_env.errors == []


async def test_each_player_reviews_their_own_decisions(simcord_env: Env) -> None:
    """ben's review of the same game is his: every decision shown is one where it was his
    turn, with his own chips then; ana's (by the history's number) is another."""
    reviews = reviews_of(simcord_env, "NoThanks")
    table = await a_game_where_ana_grabs_high_cards(simcord_env)
    ben = table.players[1]
    asked = await ben.slash(table.channel, "nothanks review", table=table.table_id)
    assert asked.ephemeral
    game = await load_game(simcord_env.bot.storage, table.guild.id, table.table_id)
    assert game is not None
    decisions = asked.response.embeds[1:]
    assert decisions
    for embed in decisions:
        title = re.fullmatch(r"#\d · move (\d+)", embed.author.name)
        assert title is not None
        engine = NOTHANKS.new_engine(game.seat_players, int(game.seed), game.options)
        for player, action in game.moves[: int(title[1])]:
            engine.apply(player, NOTHANKS.decode_action(action))
        assert engine.active_player == str(ben.id)
        assert f"You had 🪙 **{engine.chips[1]}**" in embed.description
    ana_review = await table.players[0].slash(table.channel, "nothanks review", number=1)
    assert ana_review.response.embeds[0].title == asked.response.embeds[0].title
    assert [e.author.name for e in ana_review.response.embeds[1:]] != [
        e.author.name for e in decisions
    ]
    assert reviews.computed == 2
    assert simcord_env.errors == []


async def test_bad_requests_get_clear_answers(simcord_env: Env) -> None:
    """No finished game, an unknown table, someone else's game, a game still running, a
    game of the other kind, both options, and a number past the history's end."""
    reviews = reviews_of(simcord_env, "NoThanks")
    table = await a_game_where_ana_grabs_high_cards(simcord_env)
    ana = table.players[0]
    stranger = table.guild.add_member(simcord_env.create_user("zed"))

    async def told(actor: Any, command: str, **options: Any) -> str:
        result = await actor.slash(table.channel, command, **options)
        assert result.ephemeral
        answer = result.response
        assert answer is not None and not answer.embeds and not answer.attachments
        return str(answer.content)

    assert await told(stranger, "nothanks review") == t("review.none", "en", game="No Thanks!")
    assert await told(ana, "nothanks review", table=987_654) == t("history.not_found", "en")
    assert await told(stranger, "nothanks review", table=table.table_id) == t(
        "review.not_yours", "en"
    )
    assert await told(ana, "rage review") == t("review.none", "en", game="Rage")
    assert await told(ana, "rage review", number=1) == t(
        "review.other_game", "en", game="No Thanks!"
    )
    assert await told(ana, "nothanks review", number=1, table=table.table_id) == t(
        "review.both", "en"
    )
    assert await told(ana, "nothanks review", number=2) == t("review.no_number", "en", number=2)
    running = await open_table(simcord_env, 3, guild=table.guild, channel_name="second")
    assert await told(running.players[0], "nothanks review", table=running.table_id) == t(
        "review.running", "en"
    )
    assert reviews.computed == 0
    assert simcord_env.errors == []


async def test_a_move_log_that_no_longer_reads_is_explained(simcord_env: Env) -> None:
    """A stored game whose moves do not replay (a hand edit) gets the replay's answer."""
    reviews = reviews_of(simcord_env, "NoThanks")
    table = await a_game_where_ana_grabs_high_cards(simcord_env)
    connection = sqlite3.connect(str(simcord_env.bot.settings.database))
    try:
        connection.execute("UPDATE moves SET action = 'jump' WHERE table_id = ?", (table.table_id,))
        connection.commit()
    finally:
        connection.close()
    asked = await table.players[0].slash(table.channel, "nothanks review")
    assert asked.ephemeral and asked.response.content == t("replay.broken", "en")
    assert reviews.computed == 0
    assert simcord_env.errors == []


async def finished_rage(env: Env) -> tuple[Any, list[Any], int]:
    """A Rage game of three people, opened through Discord and played (random legal
    moves) through the table core: its channel, players and table id."""
    await env.bot.tree.sync()
    guild = env.create_guild()
    channel = guild.create_text_channel("rage")
    players = [guild.add_member(env.create_user(name)) for name in NAMES[3:6]]
    opened = await players[0].slash(channel, "rage start")
    for player in players[1:]:
        await player.click(opened.response, label="Join")
    await players[0].click(opened.response, label="Start")
    session = env.bot.tables.in_channel(channel.id)
    assert session is not None
    rng = random.Random(3)
    while session.status == "running":
        engine = session.running_engine()
        player = rng.choice(engine.acting_players())
        action = rng.choice(list(engine.legal_actions(player)))
        move = engine.move_number
        await session.change(
            partial(Draft.human_move, player=player, action=action, expected_move=move, locale=None)
        )
    return channel, players, session.id


async def test_a_rage_review(simcord_env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Rage player's review: private, deferred, each decision with the table's picture
    of that move and only the player's own hand."""
    reviews = reviews_of(simcord_env, "Rage")
    reviews.budget = Budget(samples=4, confirm=3)
    channel, players, table_id = await finished_rage(simcord_env)
    deferred = watch_deferral(simcord_env, reviews, monkeypatch)
    asked = await players[0].slash(channel, "rage review")
    assert asked.ephemeral and deferred == [True]
    summary, *decisions = asked.response.embeds
    assert summary.title == f"🎓 Your Rage game · table #{table_id}"
    # Random moves: a game full of costly decisions. How many of the costliest the hard
    # level would have played differently depends on the level, so not exactly three;
    # each shown decision has its picture.
    assert 1 <= len(decisions) <= 3
    assert len(asked.response.attachments) == len(decisions)
    for embed, attachment in zip(decisions, asked.response.attachments, strict=True):
        assert embed.description.count("Your hand:") == 1
        assert embed.image.url == f"attachment://{attachment.filename}"
        assert "Your hand" not in (attachment.description or "")  # the picture is public
    assert simcord_env.errors == []
