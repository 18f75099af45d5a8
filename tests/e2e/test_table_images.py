"""Pictures of the table through SimCord: on the table message, changed by moves, uploaded
only when they change, turned off per server, never from a private view."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import discord
import pytest
from simcord import Env

from bot.client.publishing import TablePicture
from bot.render.images import cards
from bot.render.images import nothanks as nothanks_pictures
from bot.render.images import rage as rage_pictures
from bot.render.images.cache import FILENAME, PictureCache
from bot.render.table import public_picture
from tests.e2e.helpers import choose, open_table
from tests.e2e.test_cardtable_cog import setup_guild
from tests.e2e.test_rage_table import open_rage, pick

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def picture_of(env: Env, message: discord.Message) -> bytes | None:
    """The PNG a message carries as its picture, or None. The picture is a plain attachment,
    which a phone shows wider than an embed's image, so no embed names it."""
    assert not message.embeds or message.embeds[0].image.url is None
    if not message.attachments:
        return None
    (attachment,) = message.attachments
    assert attachment.filename == FILENAME
    data = env.backend.cdn.get(attachment.url)
    assert data is not None and data.startswith(b"\x89PNG")
    return data


async def until(env: Env, condition: Callable[[], bool]) -> None:
    """Let the bot's background edits run until ``condition`` holds."""
    for _ in range(200):
        if condition():
            return
        await env.settle()
        await asyncio.sleep(0.01)
    raise AssertionError("the table message never got there")


async def test_table_message_carries_the_picture_and_it_follows_moves(
    simcord_env: Env,
) -> None:
    """The running table's message carries the picture painted from the public view; a
    move changes it; the text embed stays as it was, as the accessible fallback."""
    table = await open_table(simcord_env, 3)
    first = picture_of(simcord_env, table.message)
    assert first is not None
    session = table.session
    facts = session.facts()
    expected = nothanks_pictures.table_png(
        nothanks_pictures.table_scene(facts, table.game.view(None), "en")
    )
    assert first == expected
    (attachment,) = table.message.attachments
    assert attachment.description and "No Thanks!" in attachment.description
    # The alt text reads what the picture shows; the text says what changes every move.
    assert "cards left" in attachment.description and "Turn: " not in attachment.description
    assert not table.embed.fields and "cards left" not in (table.embed.description or "")
    # A person's turn is said once, in the content's line that pings them.
    assert "Turn: " not in (table.embed.description or "")
    assert f"<@{table.game.active_player}>" in (table.message.content or "")
    await table.click(table.active(), "Take")  # a new card and hand: a new picture
    second = picture_of(simcord_env, table.message)
    assert second is not None and second != first


async def test_an_unchanged_picture_is_not_uploaded_again(simcord_env: Env) -> None:
    """Editing the message to the same state keeps its attachment: nothing is re-uploaded."""
    table = await open_table(simcord_env, 3)
    before = table.message.attachments[0].id
    painted = simcord_env.bot.publisher.pictures.painted
    await simcord_env.bot.publisher.tables.show(table.session)
    await simcord_env.bot.publisher.tables.show(table.session)
    assert table.message.attachments[0].id == before
    assert simcord_env.bot.publisher.pictures.painted == painted  # carried: not painted
    await table.click(table.active(), "Take")
    assert table.message.attachments[0].id != before


class PaintAndUpload:
    """Counts the pictures painted (canvases made by Pillow) and uploaded (files made)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.painted = 0
        self.uploaded = 0
        canvas, file = cards.canvas, TablePicture.file

        def counting_canvas(*args: Any, **kwargs: Any) -> Any:
            self.painted += 1
            return canvas(*args, **kwargs)

        def counting_file(picture: TablePicture) -> discord.File:
            self.uploaded += 1
            return file(picture)

        monkeypatch.setattr(cards, "canvas", counting_canvas)
        monkeypatch.setattr(TablePicture, "file", counting_file)


def expected_nothanks(table: Any) -> tuple[bytes, str]:
    """The picture and alt text the table's current public view should have."""
    picture = public_picture(table.session.public(), table.session.spec.renderer, "en")
    assert picture is not None
    return picture.paint(picture.scene), picture.alt


async def test_a_pass_paints_nothing_and_uploads_nothing(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A No thanks! changes the chips and whose turn it is, which the text says; the
    picture (card, pile, hands) and its alt text stay true, so the click's answer paints
    nothing (not even from the cache), uploads nothing and the message keeps its
    attachment."""
    table = await open_table(simcord_env, 4, open_chips=True)
    before = table.message.attachments[0]
    counts = PaintAndUpload(monkeypatch)
    # Even once the cache has let the picture go (many tables), the message carries it.
    simcord_env.bot.publisher.pictures.cache = PictureCache()
    passer = table.active()
    result = await table.click(passer, "No thanks!")
    assert result.acknowledged and not result.followups
    await simcord_env.settle()
    assert (counts.painted, counts.uploaded) == (0, 0)
    (after,) = table.message.attachments
    assert after.id == before.id and after.description == before.description
    png, alt = expected_nothanks(table)
    assert picture_of(simcord_env, table.message) == png and after.description == alt
    text = table.embed.description or ""
    assert f"<@{table.game.active_player}>" in (table.message.content or "")
    assert f"{passer.user.name} 10" in text  # the open chips, in the text
    assert "🪙 1" in (table.embed.title or "")  # the chip on the card


async def test_a_take_repaints_and_uploads_the_new_picture(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Take changes the card and a hand: the click's answer repaints once and uploads
    the new picture with an alt text that reads the new card and the taker's cards."""
    table = await open_table(simcord_env, 3)
    before = table.message.attachments[0]
    counts = PaintAndUpload(monkeypatch)
    card = table.game.current_card
    result = await table.click(table.active(), "Take")
    assert result.acknowledged and not result.followups
    await simcord_env.settle()
    assert (counts.painted, counts.uploaded) == (1, 1)
    (after,) = table.message.attachments
    assert after.id != before.id
    png, alt = expected_nothanks(table)
    assert picture_of(simcord_env, table.message) == png and after.description == alt
    assert f"Face-up card: {table.game.current_card}" in alt and f"— {card}" in alt


async def test_images_off_removes_the_picture_and_on_brings_it_back(simcord_env: Env) -> None:
    """`/cardtable images off` (Manage Server) takes the picture off the running table at
    once and keeps it off after moves; `on` brings it back. Others may not change it."""
    guild, channel, (admin, member) = await setup_guild(simcord_env)
    table = await open_table(simcord_env, 3, guild=guild, channel_name="nt")
    assert picture_of(simcord_env, table.message) is not None
    refused = await member.slash(channel, "cardtable images", show="off")
    assert refused.ephemeral and "Manage Server" in refused.response.content
    answer = await admin.slash(channel, "cardtable images", show="off")
    assert answer.ephemeral and "text only" in answer.response.content
    await until(simcord_env, lambda: not table.message.attachments)
    assert table.message.embeds[0].image.url is None
    assert "cards left" in (table.embed.description or "")  # the whole table, as text
    await table.click(table.active(), choose(table.game))
    assert picture_of(simcord_env, table.message) is None
    await admin.slash(channel, "cardtable images", show="on")
    await until(simcord_env, lambda: bool(table.message.attachments))
    assert picture_of(simcord_env, table.message) is not None
    about = await admin.slash(channel, "cardtable about")
    assert "Pictures of the table: on" in about.response.content


async def test_images_setting_survives_a_restart(simcord_env: Env) -> None:
    """The setting is stored per server (a guild_settings column), not only cached."""
    guild, channel, (admin, _) = await setup_guild(simcord_env)
    await admin.slash(channel, "cardtable images", show="off")
    assert await simcord_env.bot.storage.get_guild_images(guild.id) is False
    other = simcord_env.create_guild()
    assert await simcord_env.bot.storage.get_guild_images(other.id) is None
    assert simcord_env.bot.images.images_for(other.id) is True


async def test_a_picture_that_cannot_be_painted_leaves_the_text_table(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """If painting fails, the move still happens and shows as text; the failure is logged
    with the table it happened at."""
    table = await open_table(simcord_env, 3)

    def broken(image: Any) -> bytes:
        raise OSError("no fonts today")

    monkeypatch.setattr(cards, "to_png", broken)  # whatever the painter, it fails
    simcord_env.bot.publisher.pictures.cache = PictureCache()
    move = table.game.move_number
    with caplog.at_level(logging.ERROR, logger="bot.client.publishing.tables"):
        result = await table.click(table.active(), "Take")  # a new card: a new picture
    assert not result.ephemeral
    assert table.game.move_number == move + 1
    assert picture_of(simcord_env, table.message) is None
    assert table.embed.footer.text and f"move {move + 1}" in table.embed.footer.text
    assert any(
        f"table {table.table_id}" in record.getMessage() and record.exc_info
        for record in caplog.records
    )


async def test_rage_picture_is_the_public_trick_and_never_a_hand(simcord_env: Env) -> None:
    """The Rage table carries the picture painted from the spectators' view (no hand in
    it); the private hand answer carries no picture at all."""
    table = await open_rage(simcord_env, 3)
    state = table.state
    while state.phase.value == "bidding" or not state.view(None).trick:
        player = state.acting_players()[0]
        await table.act(player, pick(state, player))
        state = table.state
    session = simcord_env.bot.tables.get(table.table_id)
    assert session is not None
    public = rage_pictures.trick_png(
        rage_pictures.trick_scene(session.facts(), state.view(None), "en")
    )
    await until(simcord_env, lambda: picture_of(simcord_env, table.message) == public)
    player = state.acting_players()[0]
    hand = await table.hand(table.actor(player))
    assert not hand.attachments
    assert not any(embed.image.url for embed in getattr(hand, "embeds", []))


async def test_a_refused_picture_falls_back_to_text(
    simcord_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Where Discord refuses the upload (no Attach Files), the table is shown as text at
    once, the refusal is logged, and the channel's next messages skip the picture."""
    table = await open_table(simcord_env, 3)
    publisher = simcord_env.bot.publisher
    real_edit = publisher.tables.edit

    async def no_uploads(session: Any, **fields: Any) -> None:
        if any(isinstance(item, discord.File) for item in fields.get("attachments", [])):
            response = SimpleNamespace(status=403, reason="Forbidden")
            raise discord.Forbidden(response, "Missing Permissions")  # type: ignore[arg-type]
        await real_edit(session, **fields)

    monkeypatch.setattr(publisher.tables, "edit", no_uploads)
    publisher.pictures._carried.clear()  # as after a restart: the next edit uploads
    with caplog.at_level(logging.WARNING, logger="bot.client.publishing.pictures"):
        await publisher.tables.show(table.session)
    assert picture_of(simcord_env, table.message) is None
    assert "cards left" in (table.embed.description or "")  # the whole table, as text
    assert any("cannot attach the picture" in r.getMessage() for r in caplog.records)
    fields, picture = await publisher.tables.message(table.session)
    assert picture is None and fields["embed"].image.url is None


async def test_final_board_carries_the_final_picture(simcord_env: Env) -> None:
    """When the game ends, the final board's message carries the final picture, painted
    from the public view of the finished game (the removed cards revealed)."""
    table = await open_table(simcord_env, 3)
    while table.running:
        await table.click(table.active(), choose(table.game))
    game = table.game
    assert game.is_over
    expected = nothanks_pictures.final_png(
        nothanks_pictures.final_scene(table.session.facts(), game.view(None), "en")
    )
    await until(simcord_env, lambda: picture_of(simcord_env, table.message) == expected)
    (attachment,) = table.message.attachments
    assert attachment.description and "final" in attachment.description


def picture_is_true(env: Env, table: Any) -> bool:
    """Whether the Rage table message's picture and alt text are those of its current
    public view (neither stale)."""
    session = env.bot.tables.get(table.table_id)
    picture = public_picture(session.public(), session.spec.renderer, "en")
    assert picture is not None
    (attachment,) = table.message.attachments
    return attachment.description == picture.alt and picture_of(
        env, table.message
    ) == picture.paint(picture.scene)


@pytest.mark.parametrize("variant", [{}, {"hidden_bids": True}], ids=["standard", "hidden"])
async def test_rage_picture_and_alt_text_stay_true_after_every_move(
    simcord_env: Env, variant: dict[str, bool]
) -> None:
    """Pictures on: after every bid and every card of a whole game, the picture and its alt
    text (what a screen reader reads) are those of the table as it is. The alt text says
    what the picture shows (the trick, or the sheet and the trump while a round is bid);
    bids, tricks won and totals are in the text, so a bid neither repaints nor uploads."""
    table = await open_rage(simcord_env, 3, **variant)
    pictures = simcord_env.bot.publisher.pictures
    moves = 0
    while table.running:
        state = table.state
        player = state.acting_players()[0]
        bidding = state.view(None).phase.value == "bidding"
        painted, attachment = pictures.painted, table.message.attachments[0].id
        await table.act(player, pick(state, player))
        moves += 1
        if not table.running:
            break
        try:
            await until(simcord_env, lambda: picture_is_true(simcord_env, table))
        except AssertionError:
            raise AssertionError(f"after move {moves}, the picture is stale") from None
        if bidding and table.state.view(None).phase.value == "bidding":
            # A bid that leaves the round bidding: the same picture, kept as it was.
            assert pictures.painted == painted
            assert table.message.attachments[0].id == attachment
        if table.state.phase.value == "bidding":  # the trump is public while bidding
            text = table.message.embeds[0].description or ""
            assert "Trump: " in text or "No trump this round" in text
    assert moves == 10 * 3 + 3 * 55
