"""Pictures are keyed by what they show, painted once per state, off the event loop."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from typing import Any

from bot.client.publishing.pictures import Pictures
from bot.engines.nothanks import PASS
from bot.render.images import nothanks as pictures
from bot.render.images.cache import Picture, PictureCache
from bot.render.nothanks import NoThanksRenderer, table_alt
from tests.render.images.scenes import facts, nothanks_game


def picture_at(takes: int, locale: str = "en") -> Picture:
    """The table picture of a fixed game once ``takes`` cards were taken (the picture
    shows the card, the pile and the hands, which only a take changes)."""
    moves = 0
    while sum(map(len, (game := nothanks_game(4, moves, open_chips=False)).cards)) < takes:
        moves += 1
    scene = pictures.table_scene(facts("nothanks", 4), game.view(None), locale)
    return Picture(scene, pictures.table_png, "alt")


def test_key_is_what_the_picture_shows() -> None:
    """Equal states give equal keys; another card taken, another language, another key;
    a pass (chips and turn, which the text says) the same key."""
    assert picture_at(5).key == picture_at(5).key
    assert picture_at(5).key != picture_at(6).key
    assert picture_at(5).key != picture_at(5, "de").key
    game = nothanks_game(4, 0, open_chips=True)
    before = pictures.table_scene(facts("nothanks", 4), game.view(None), "en")
    player = game.active_player
    assert player is not None
    game.apply(player, game.legal_actions(player)[1])  # No thanks!
    after = pictures.table_scene(facts("nothanks", 4), game.view(None), "en")
    assert (
        Picture(after, pictures.table_png, "alt").key
        == Picture(before, pictures.table_png, "alt").key
    )


def test_one_state_is_painted_once() -> None:
    """The cache paints a state once and returns the same bytes for every later look."""
    cache = PictureCache(capacity=2)
    first = cache.paint(picture_at(5))
    again = cache.paint(picture_at(5))
    assert again is first and cache.painted == 1
    cache.paint(picture_at(6))
    cache.paint(picture_at(7))  # the least recently used (move 5) is dropped
    assert cache.get(picture_at(5).key) is None and cache.painted == 3


def test_cache_is_bounded_in_bytes() -> None:
    """However many tables paint, the cache holds at most its bound in bytes (but always
    the newest picture), dropping the least recently used."""
    first = PictureCache().paint(picture_at(5))
    cache = PictureCache(max_bytes=int(len(first) * 2.5))
    for move in range(5, 12):
        cache.paint(picture_at(move))
    assert cache.bytes <= cache.max_bytes
    assert cache.bytes == sum(len(png) for png in cache._pngs.values())
    assert cache.get(picture_at(11).key) is not None and cache.get(picture_at(5).key) is None
    tiny = PictureCache(max_bytes=1)
    assert tiny.paint(picture_at(5)) == first and tiny.get(picture_at(5).key) == first


async def test_many_lookers_wait_for_one_painting_in_a_worker_thread() -> None:
    """Five lookers at once share one painting, which runs off the event loop's thread."""
    threads: list[threading.Thread] = []
    base = picture_at(5)

    def paint(scene: Any) -> bytes:
        threads.append(threading.current_thread())
        return pictures.table_png(scene)

    picture = Picture(base.scene, paint, "alt")
    shown = Pictures()
    pngs = await asyncio.gather(*(shown.paint(picture) for _ in range(5)))
    assert len(set(pngs)) == 1 and shown.painted == 1
    assert threads and all(thread is not threading.main_thread() for thread in threads)


def test_the_live_picture_is_looked_up_by_what_it_shows() -> None:
    """At every position of a game (a computer seated, open chips), the renderer's cached
    picture is the one made from the real view (scene, key, alt text); a No thanks!
    looks up the same picture object, a Take makes a new one."""
    renderer = NoThanksRenderer()
    table = replace(facts("nothanks", 4), computers={"103": "hard"})
    game = nothanks_game(4, 0, open_chips=True)
    previous: Picture | None = None
    passed = False
    while not game.is_over:
        view = game.view(None)
        picture = renderer.picture(table, view, "de")
        assert picture.scene == pictures.table_scene(table, view, "de")
        assert picture.alt == table_alt(table, view, "de")
        assert picture.key == Picture(picture.scene, pictures.table_png, picture.alt).key
        if previous is not None:
            assert (picture is previous) == passed
        player = game.active_player
        assert player is not None
        action = game.legal_actions(player)[-1]  # No thanks! while there are chips
        game.apply(player, action)
        passed, previous = action is PASS, picture
