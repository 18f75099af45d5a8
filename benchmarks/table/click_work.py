"""The game's own work per No Thanks! move, in-process, with no Discord and no database.

A load run (``benchmarks/load``) tells what a click costs in all; this tells the parts that
are cardtable's own and run on every move: the draft and the engine move (``change``
without the save), the public table message as discord.py sends it (rendered, fitted and
made into the callback's payload), the living DM's text, and the next timed event. Each
is timed over the positions of whole games of three people (the load run's tables), in
microseconds of CPU per move, best of ``--repeat`` passes (the machine is shared).

Then the table picture's work per move, as the table message makes it with pictures on
(``--pictures``): the picture's scene, key and alt text every move, and painting only when
what it shows changed. Over the positions of the games in order, it prints the CPU per
move whose picture did not change (the quick path: no Pillow work, nothing to upload) and
per move that repaints, and how many moves repaint.

Run: ``uv run python benchmarks/table/click_work.py [--games 20 --repeat 5] [--only PART]``

CPU time on a shared machine drifts by a third from one run to the next; for a figure
that does not, count instructions with valgrind, which runs it unchanged (two runs, one
and three passes; the difference over two is one pass over every position)::

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        .venv/bin/python benchmarks/table/click_work.py --games 2 --repeat 1
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import discord

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.client.publishing.pictures import TablePicture
from bot.client.replies import message_update_params
from bot.engines.nothanks import PASS, TAKE, Move, NoThanksGame
from bot.games.nothanks import SPEC
from bot.render.images.cache import PictureCache
from bot.render.nothanks import NoThanksRenderer
from bot.render.table import public_message, public_picture
from bot.storage import Storage, TableRecord
from bot.table.session import Draft, TableSession
from bot.table.timers import next_event

PLAYERS = ["1456074443980800009", "1456074443980800010", "1456074443980800011"]
NAMES = dict(zip(PLAYERS, ("ana", "ben", "cid"), strict=True))
T0 = 1_767_225_600.0
LOCALE = discord.Locale.american_english


def sessions(games: int) -> list[TableSession]:
    """A running table at every position of ``games`` whole games (random Take / No thanks!)."""
    found: list[TableSession] = []
    chooser = random.Random(7)
    for game in range(games):
        engine = SPEC.new_engine(PLAYERS, game, SPEC.parse_options({}))
        while not engine.is_over:
            record = TableRecord(
                game=SPEC.name,
                channel_id=500,
                guild_id=1,
                host_id=int(PLAYERS[0]),
                status="running",
                options={**SPEC.parse_options({}), "turn_seconds": 60},
                seats=[int(p) for p in PLAYERS],
                state=engine.to_dict(),
                move_number=engine.move_number,
                message_id=900,
                meta={
                    "names": NAMES,
                    "user_locales": dict.fromkeys(PLAYERS, "en-US"),
                    "locale": "en-US",
                    "opened_at": T0,
                    "started_at": T0,
                    "turn": {"move": engine.move_number, "deadline": T0 + 60, "pinged": False},
                    "dm_messages": {p: [1000 + i, 2000 + i] for i, p in enumerate(PLAYERS)},
                },
                id=42,
            )
            session = TableSession(SPEC, record, cast(Storage, None), asyncio.Lock(), lambda: T0)
            # A live table's engine has written its history's rows at the save before; one
            # rebuilt from a record (after a restart) writes them all at its first save.
            session.running_engine().to_dict()
            found.append(session)
            player = engine.acting_players()[0]
            actions = engine.legal_actions(player)
            engine.apply(player, TAKE if len(actions) == 1 or chooser.random() < 0.4 else PASS)
    return found


def move(session: TableSession) -> Draft:
    """A person's move on a draft, folded into the record to save (the save left out)."""
    draft = Draft(session, T0)
    engine = session.running_engine()
    player = engine.acting_players()[0]
    action = TAKE if len(engine.legal_actions(player)) == 1 else PASS
    draft.human_move(player, action, expected_move=engine.move_number, locale="en-US")
    draft.finish()
    draft.changed_columns(session.record)
    return draft


def table_payload(session: TableSession) -> dict[str, Any]:
    """The public message as the interaction callback sends it."""
    fields = public_message(session.public(), SPEC.renderer, LOCALE)
    params = message_update_params(fields, discord.AllowedMentions.none())
    return cast(dict[str, Any], params.payload)


def living_text(session: TableSession) -> str:
    """The mover's living DM after their move."""
    engine = cast(NoThanksGame, session.running_engine())
    player = engine.acting_players()[0]
    seat = engine.players.index(player)
    assert engine.current_card is not None  # a running game always shows a card
    applied = Move(seat, PASS, engine.current_card, engine.chips_on_card)
    (letter,) = SPEC.letters(engine, player, applied)
    view = engine.view(player)
    renderer = cast(NoThanksRenderer, SPEC.renderer)
    return renderer.living_dm(view, letter, session.jump_url, "en-US")


def timed(work: Callable[[TableSession], object], tables: list[TableSession], repeat: int) -> float:
    """CPU microseconds per call over every table, best of ``repeat`` passes."""
    best = float("inf")
    for _ in range(repeat):
        started = time.thread_time()
        for session in tables:
            work(session)
        best = min(best, time.thread_time() - started)
    return 1e6 * best / len(tables)


def picture_work(tables: list[TableSession]) -> None:
    """Print the picture's CPU per move, quick path and repaint apart, over the positions
    in order (each game's moves one after another, as a table sees them)."""
    cache = PictureCache()
    quick: list[float] = []
    repaint: list[float] = []
    previous = None
    for session in tables:
        started = time.thread_time()
        fields = public_message(session.public(), SPEC.renderer, LOCALE, pictures=True)
        picture = public_picture(session.public(), SPEC.renderer, LOCALE)
        assert picture is not None and fields.get("embed") is not None
        png = cache.get(picture.key)
        painted = png is None
        if png is None:
            png = cache.paint(picture)
        upload = TablePicture(picture.key, png, picture.alt).upload_key
        (repaint if painted else quick).append(time.thread_time() - started)
        # A message keeps its picture while the upload key stays: then nothing is sent.
        assert painted or upload == previous, "an unchanged picture with another alt text"
        previous = upload
    moves = len(quick) + len(repaint)
    print(f"table message with its picture ({moves} moves in order):")
    for name, spent in (("quick path", quick), ("repaint", repaint)):
        micros = 1e6 * sum(spent) / max(1, len(spent))
        share = len(spent) / moves
        print(f"  {name:<24} {micros:8.1f} µs a move, {len(spent)} moves ({share:.0%})")
    mean = 1e6 * (sum(quick) + sum(repaint)) / moves
    print(f"  {'per move on average':<24} {mean:8.1f}")


PARTS: dict[str, Callable[[TableSession], object]] = {
    "draft and engine move": move,
    "table message payload": table_payload,
    "living DM text": living_text,
    "next timed event": lambda session: next_event(session, T0),
}


def main() -> None:
    """Print the microseconds per move of each part, and their sum."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=PARTS, default=None, help="time one part alone")
    parser.add_argument(
        "--pictures", action="store_true", help="also the table picture's work per move"
    )
    args = parser.parse_args()
    tables = sessions(args.games)
    parts = {name: work for name, work in PARTS.items() if args.only in (None, name)}
    for work in parts.values():
        timed(work, tables[:50], 1)  # warm the text caches as a running bot has them
    total = 0.0
    print(f"{len(tables)} positions of {args.games} games; CPU µs per move, best of {args.repeat}")
    for name, work in parts.items():
        micros = timed(work, tables, args.repeat)
        total += micros
        print(f"  {name:<24} {micros:8.1f}")
    print(f"  {'in all':<24} {total:8.1f}")
    if args.pictures:
        picture_work(tables)


if __name__ == "__main__":
    main()
