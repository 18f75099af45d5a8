"""Replays: a stored game dealt again from its seed and move log is the game that was played.

Games are played through the table core (random seeds, 3 to 8 seats, people and
computers), stored as they end, then replayed from the database alone.
"""

from __future__ import annotations

import json
import random
from functools import partial

import pytest

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.queries.history import load_game, recent_games
from bot.render.records import replay_message
from bot.render.table import public_message
from bot.table.replay import (
    ANONYMOUS_FLOOR,
    game_position,
    is_anonymous,
    new_anonymous_id,
    replay_game,
)
from bot.table.session import Draft, TableSession
from bot.table.spec import GameSpec
from tests.table.harness import BEN, CHANNEL, CID, DORA, GUILD, HOST, NAMES, Harness, open_lobby

# (spec, seed of the sample): random deals, seat counts and moves, the same every run.
SAMPLE = [(spec, seed) for spec in (NOTHANKS, RAGE) for seed in range(6)]
# Options a table may be opened with (Rage's variants in the combinations it allows).
OPTIONS = {
    "nothanks": [{}, {"open_chips": True}],
    "rage": [
        {},
        {"plus_minus_one": True, "sweep": True},
        {"hidden_bids": True},
        {"secret_bids": True, "sweep": True},
    ],
}
SAMPLE_IDS = [f"{spec.name}-{seed}" for spec, seed in SAMPLE]


async def play_random_game(
    h: Harness, spec: GameSpec, rng: random.Random, *, channel: int = CHANNEL
) -> TableSession:
    """Seat 1-4 people and computers up to a random count, deal a random seed with random
    options, and play it out: people make random legal moves, computers choose as at a
    real table."""
    options = rng.choice(OPTIONS[spec.name])
    session = await open_lobby(h, spec, channel=channel, options=options)
    people = rng.randint(1, 4)
    for user in (BEN, CID, DORA)[: people - 1]:
        await session.change(partial(Draft.join, user_id=user, name=NAMES[user], locale=None))
    seats = rng.randint(max(spec.min_players, people), spec.max_players)
    for number in range(seats - people):
        level = rng.choice(("easy", "normal"))  # "hard" searches: too slow for a sample
        name = f"🤖 {number + 1}"
        await session.change(partial(Draft.add_computer, by=HOST, level=level, name=name))
    await session.change(lambda d: d.start(HOST, rng.randrange(2**31)))
    while session.status == "running":
        engine = session.running_engine()
        player = rng.choice(engine.acting_players())
        if session.plays_itself(player):
            action = await h.tables.choose(session, player)
            await session.change(
                partial(Draft.auto_move, player=player, action=action, timed_out=False)
            )
        else:
            action = rng.choice(list(engine.legal_actions(player)))
            move = engine.move_number
            await session.change(
                partial(
                    Draft.human_move, player=player, action=action, expected_move=move, locale=None
                )
            )
    return session


@pytest.mark.parametrize(("spec", "seed"), SAMPLE, ids=SAMPLE_IDS)
async def test_replay_reproduces_the_final_board(h: Harness, spec: GameSpec, seed: int) -> None:
    """The replay's last view is the stored game's public view, and its final board is
    the live final board, embed for embed."""
    session = await play_random_game(h, spec, random.Random(seed))
    game = await load_game(h.storage, GUILD, session.id)
    assert game is not None and game.status == "finished"
    replay = replay_game(spec, game)
    stored = await h.storage.get_table(session.id)
    assert stored is not None and stored.state is not None
    final = spec.engine_from_dict(stored.state)
    assert replay.over and replay.last == final.move_number == len(game.moves)
    assert replay.views[-1] == final.view(None)
    live = public_message(session.public(), spec.renderer, "en")["embed"]
    shown = replay_message(spec, game, replay.position(replay.last), "en")["embed"]
    assert shown.to_dict() == live.to_dict()


@pytest.mark.parametrize("spec", [NOTHANKS, RAGE], ids=lambda spec: spec.name)
async def test_one_step_is_the_same_as_the_whole_replay(h: Harness, spec: GameSpec) -> None:
    """A button's one-step replay shows the view and rounds of the full replay, at every
    step (and clamps a step past the end)."""
    session = await play_random_game(h, spec, random.Random(99))
    game = await load_game(h.storage, GUILD, session.id)
    assert game is not None
    replay = replay_game(spec, game)
    for step in range(replay.last + 1):
        assert game_position(spec, game, step) == replay.position(step)
    assert game_position(spec, game, replay.last + 50).step == replay.last


async def test_rage_rounds_start_where_the_round_changes(h: Harness) -> None:
    """Rage's ten rounds start where the views' round number changes; the round jumps
    go to the neighbouring starts, and past the last round to the final board."""
    session = await play_random_game(h, RAGE, random.Random(5))
    game = await load_game(h.storage, GUILD, session.id)
    assert game is not None
    replay = replay_game(RAGE, game)
    starts = replay.rounds
    assert len(starts) == 10 and starts[0] == 0
    for number, start in enumerate(starts, start=1):
        assert replay.views[start].round == number
        if start:
            assert replay.views[start - 1].round == number - 1
    middle = replay.position(starts[3] + 1)
    assert middle.round == 4
    assert middle.previous_round() == starts[2] and middle.next_round() == starts[4]
    assert replay.position(starts[-1]).next_round() == replay.last
    assert replay.position(0).previous_round() == 0


async def test_no_thanks_has_no_rounds(h: Harness) -> None:
    """A game without rounds has no round jumps."""
    session = await play_random_game(h, NOTHANKS, random.Random(6))
    game = await load_game(h.storage, GUILD, session.id)
    assert game is not None
    replay = replay_game(NOTHANKS, game)
    assert replay.rounds == () and replay.position(3).round == 0


async def test_rage_replay_shows_no_hand(h: Harness) -> None:
    """Every step of a Rage replay is a spectator's view: no hand, no legal moves."""
    session = await play_random_game(h, RAGE, random.Random(7))
    game = await load_game(h.storage, GUILD, session.id)
    assert game is not None
    for view in replay_game(RAGE, game).views:
        assert view.viewer is None and view.hand == () and view.legal_actions == ()


async def test_history_is_per_server_and_newest_first(h: Harness) -> None:
    """recent_games lists one server's finished games newest first, a page at a time;
    load_game refuses a game of another server."""
    rng = random.Random(8)
    ids = []
    for number in range(3):
        h.clock.advance(3600)
        session = await play_random_game(h, NOTHANKS, rng, channel=CHANNEL + number)
        ids.append(session.id)
    page = await recent_games(h.storage, GUILD, 0, 2)
    assert [game.table_id for game in page] == [ids[2], ids[1]]
    assert [game.table_id for game in await recent_games(h.storage, GUILD, 2, 2)] == [ids[0]]
    assert await recent_games(h.storage, GUILD + 1, 0, 10) == []
    summary = page[0]
    assert summary.game == "nothanks" and summary.winners
    assert all(seat.rank == 1 for seat in summary.winners)
    assert await load_game(h.storage, GUILD + 1, ids[0]) is None
    assert await load_game(h.storage, None, ids[0]) is None
    assert await load_game(h.storage, GUILD, 10_000) is None


@pytest.mark.parametrize("spec", [NOTHANKS, RAGE], ids=lambda spec: spec.name)
async def test_forgotten_player_still_replays(h: Harness, spec: GameSpec) -> None:
    """After forget-me the game replays to the same board; the person's seat, name and
    ratings are gone, everyone else's stay."""
    session = await play_random_game(h, spec, random.Random(11))
    played = await load_game(h.storage, GUILD, session.id)
    assert played is not None
    before = replay_game(spec, played)
    anonymous = new_anonymous_id()
    assert is_anonymous(anonymous) and int(anonymous) >= ANONYMOUS_FLOOR
    changed = await h.storage.forget_user(HOST, anonymous, "former player")
    assert changed > 0
    game = await load_game(h.storage, GUILD, session.id)
    assert game is not None
    host = next(seat for seat in game.seats if seat.seat == 0)
    assert (host.player, host.seat_player, host.name) == (anonymous, anonymous, "former player")
    after = replay_game(spec, game)
    assert after.last == before.last and after.over
    # Every step is the same but for the forgotten seat's id.
    for old, new in zip(before.views, after.views, strict=True):
        assert json.dumps(new.to_dict()).replace(anonymous, str(HOST)) == json.dumps(old.to_dict())
    assert await h.storage.read("SELECT * FROM ratings WHERE player = ?", (str(HOST),)) == []
    assert await h.storage.read("SELECT * FROM game_players WHERE player = ?", (str(HOST),)) == []
    assert await h.storage.read("SELECT * FROM moves WHERE player = ?", (str(HOST),)) == []
    rated = {row["player"] for row in await h.storage.read("SELECT player FROM ratings")}
    assert rated == {seat.player for seat in game.seats if seat.player != anonymous}
    stored = await h.storage.get_table(session.id)
    assert stored is not None and stored.meta["names"][str(HOST)] == "former player"
    assert str(HOST) not in stored.meta.get("user_locales", {})
