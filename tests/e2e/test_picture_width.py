"""How wide a phone shows the table picture, measured in a real browser (SimCord's preview
in Debian's Chromium at 390 px wide): as a plain attachment it is the widest Discord
allows, and exactly the width the pictures are drawn for (cards.SHOWN_WIDTH)."""

from __future__ import annotations

import io
from typing import Any

import discord
import pytest
from simcord import Env
from simcord.preview import _capture

from bot.render.images import cards
from tests.e2e.helpers import choose, open_table
from tests.e2e.test_phone_heights import PHONE, _system_chromium
from tests.e2e.test_phone_heights import pytestmark as pytestmark  # skipped without chromium

_shown: list[list[dict[str, Any]]] = []


async def _raf_and_measure(page: Any) -> None:
    """The preview's settle step, then every image's shown size (CSS px) as laid out."""
    await page.evaluate("() => new Promise(done => requestAnimationFrame(() => done(null)))")
    _shown.append(
        await page.evaluate(
            """() => [...document.querySelectorAll('img')]
                .filter(img => img.naturalWidth > 100)
                .map(img => ({kind: img.className, width: img.getBoundingClientRect().width,
                              natural: img.naturalWidth}))"""
        )
    )


@pytest.fixture(autouse=True)
def measuring_chromium(monkeypatch: pytest.MonkeyPatch) -> None:
    """Captures use Debian's chromium and record the images' shown sizes."""
    monkeypatch.setattr(_capture.ManagedCapture, "_ensure_browser", _system_chromium)
    monkeypatch.setattr(_capture.ManagedCapture, "_raf", staticmethod(_raf_and_measure))


async def shown_width(env: Env, channel: Any, viewer: Any, message_id: int) -> float:
    """The width at which the phone shows the message's one picture."""
    _shown.clear()
    async with env.preview(
        channel, viewers=[viewer], width=PHONE[0], height=PHONE[1], locale="en-US"
    ) as preview:
        await preview.screenshot(None, target=message_id, allow_incomplete=True, layout="message")
    (image,) = _shown[-1]
    return float(image["width"])


async def test_the_table_picture_is_shown_as_wide_as_a_phone_allows(simcord_env: Env) -> None:
    """The table's picture (a plain attachment) is shown cards.SHOWN_WIDTH px wide, and the
    same picture as an embed's image or in a Components V2 media gallery no wider."""
    table = await open_table(simcord_env, 4)
    for _ in range(6):
        await table.click(table.active(), choose(table.game))
    viewer = table.players[0]
    table_width = await shown_width(simcord_env, table.channel, viewer, table.message_id)
    assert abs(table_width - cards.SHOWN_WIDTH) <= 1, table_width

    (attachment,) = table.message.attachments
    png = simcord_env.backend.cdn.get(attachment.url)
    assert png is not None
    channel = simcord_env.bot.get_channel(table.channel.id)
    assert isinstance(channel, discord.TextChannel)

    def upload() -> discord.File:
        return discord.File(io.BytesIO(png), filename="picture.png")

    embed = discord.Embed(description="table")
    embed.set_image(url="attachment://picture.png")
    as_embed = await channel.send(embed=embed, file=upload())
    view = discord.ui.LayoutView()
    gallery = discord.ui.MediaGallery()
    gallery.add_item(media="attachment://picture.png")
    view.add_item(discord.ui.TextDisplay("table"))
    view.add_item(gallery)
    as_gallery = await channel.send(view=view, file=upload())
    await simcord_env.settle()
    embed_width = await shown_width(simcord_env, table.channel, viewer, as_embed.id)
    gallery_width = await shown_width(simcord_env, table.channel, viewer, as_gallery.id)
    print(f"at 390 px: attachment {table_width}, embed {embed_width}, gallery {gallery_width}")
    assert embed_width < table_width - 20 and gallery_width <= table_width + 1
