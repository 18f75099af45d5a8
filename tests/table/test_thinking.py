"""Computer players think in worker processes: what they get and give back, and crashes.

Most tests start a real `ThinkingPool` (spawned worker processes); the SimCord tests use
none, so these are the tests of the workers themselves.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import pickle
import random
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.games.nothanks import SPEC as NOTHANKS
from bot.games.rage import SPEC as RAGE
from bot.table.spec import GameSpec
from bot.table.thinking import WORKER_NICENESS, ThinkingPool, reference
from tests.highcard.engine import HighCardGame
from tests.highcard.spec import SPEC as HIGHCARD
from tests.table import thinkers
from tests.table.harness import HOST, Harness, acting, open_lobby, play_one

THINKERS = ("tests.table.thinkers",)


@pytest.fixture
async def pool() -> AsyncIterator[ThinkingPool]:
    """One started worker process, warmed up with the test's choose functions."""
    thinking = ThinkingPool(1, timeout=2.0)
    await thinking.start(THINKERS)
    await thinking.ready()
    try:
        yield thinking
    finally:
        await thinking.close()


def wait_for_file(path: Path) -> None:
    """Until another process has written ``path`` (a minute at most)."""
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def first_view() -> Any:
    """A High card view of the first player to act (hand of two, both legal)."""
    game = HighCardGame.new(["1", "2"], 3)
    player = game.acting_players()[0]
    return game.view(player)


# Each game's options, so every kind of view is sent (hidden bids show as None, etc.).
OPTIONS = {
    "nothanks": [{}, {"open_chips": True}],
    "rage": [
        {},
        {"hidden_bids": True},
        {"secret_bids": True, "sweep": True},
        {"plus_minus_one": True},
    ],
}


# The level whose choices are sent: Rage hard keeps a memory worth sending; No Thanks!
# keeps none, and its hard search (about 100 ms a move) would only make the test slow.
LEVELS = {"nothanks": "normal", "rage": "hard"}


def random_game_views(
    spec: GameSpec, seed: int, players: int, options: dict[str, Any]
) -> list[tuple[Any, Any, Any]]:
    """(view, a computer's action, its memory after choosing) at every turn of a game."""
    rng = random.Random(seed)
    engine = spec.new_engine([str(-i) for i in range(1, players + 1)], seed, options)
    memories: dict[str, Any] = {}
    seen: list[tuple[Any, Any, Any]] = []
    while not engine.is_over:
        player = engine.acting_players()[0]
        view = engine.view(player)
        memory = memories.setdefault(player, spec.new_memory())
        action = spec.choose(view, LEVELS[spec.name], random.Random(f"{seed}:{player}"), memory)
        seen.append((view, action, memory))
        engine.apply(
            player, action if rng.random() < 0.5 else rng.choice(engine.legal_actions(player))
        )
    return seen


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(3, 5), variant=st.integers(0, 3))
@pytest.mark.parametrize("spec", [NOTHANKS, RAGE], ids=lambda spec: spec.name)
def test_views_actions_and_memory_survive_pickle(
    spec: GameSpec, seed: int, players: int, variant: int
) -> None:
    """What a search is sent (view, memory) and sends back (action, memory) pickles intact."""
    choices = OPTIONS[spec.name]
    options = spec.parse_options(choices[variant % len(choices)])
    for view, action, memory in random_game_views(spec, seed, players, options):
        sent = pickle.loads(pickle.dumps((view, memory)))
        assert sent == (view, memory)
        assert pickle.loads(pickle.dumps((action, memory))) == (action, memory)


def test_choose_functions_are_sent_by_name() -> None:
    """Every game's choose function can be named to a worker; a lambda cannot."""
    for spec in (NOTHANKS, RAGE, HIGHCARD):
        assert reference(spec.choose) == (spec.choose.__module__, spec.choose.__qualname__)
    assert reference(lambda view, level, rng, memory: None) is None


def test_a_worker_imports_the_games_ai_without_discord() -> None:
    """The real games' choose functions live in bot.ai, so a worker never loads discord.py
    (about 30 MB more per worker process)."""
    import subprocess
    import sys

    modules = sorted({spec.choose.__module__ for spec in (NOTHANKS, RAGE)})
    assert all(module.startswith("bot.ai.") for module in modules)
    code = f"import importlib, sys; [importlib.import_module(m) for m in {modules!r}];"
    code += " print(sorted(m for m in sys.modules if m.split('.')[0] in ('discord', 'cogs')))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert loaded.strip() == "[]"


async def test_search_runs_in_a_worker_and_brings_memory_back(pool: ThinkingPool) -> None:
    """The worker decides as the bot's process would, with the same seed and memory."""
    engine = RAGE.new_engine(["1", "2", "3", "4"], 11, {})
    player = engine.acting_players()[0]
    view = engine.view(player)
    here = RAGE.new_memory()
    expected = RAGE.choose(view, "hard", random.Random("7:0:1"), here)
    action, memory = await pool.search(RAGE.choose, view, "hard", "7:0:1", RAGE.new_memory())
    assert action == expected
    assert memory == here and memory.round == 1  # the worker's memory of the round
    assert await pool.search(thinkers.plays_highest, first_view(), "hard", "s", None) == (
        (max(first_view().legal), "worker"),
        None,
    )


async def test_memory_updated_in_the_worker_is_kept_by_the_session(
    h: Harness, pool: ThinkingPool, tmp_path: Path
) -> None:
    """A computer's memory lives in the session; each search updates it, move after move."""
    spec = dataclasses.replace(
        HIGHCARD, name="highcard", choose=thinkers.counts_calls, new_memory=list
    )
    h.tables.register(spec)
    h.tables.thinking = pool
    session = await open_lobby(h, spec)
    await session.change(lambda d: d.add_computer(HOST, "hard", "🤖"))
    # A second computer moves last, so the game is still running after the first one's.
    await session.change(lambda d: d.add_computer(HOST, "normal", "🤖 2"))
    await session.change(lambda d: d.start(HOST, 5))
    moves: list[int] = []
    kept: list[list[int]] = []
    while session.status == "running":
        computer = acting(session) == "-1"
        if computer:
            moves.append(session.running_engine().move_number)
        await play_one(h, session)
        if computer:
            kept.append(list(session.memory.get("-1", [])))
    # Every search saw what the earlier ones kept; the memory is freed with the table.
    assert moves == [1, 4]
    assert kept == [[1], [1, 4]]
    assert session.memory == {}


async def test_a_killed_worker_is_replaced_and_the_move_retried(
    pool: ThinkingPool, tmp_path: Path
) -> None:
    """A worker killed in the middle of a search: a new pool thinks the move again."""
    view = first_view()
    search = asyncio.create_task(
        pool.search(thinkers.waits_to_be_killed, view, "hard", "s", str(tmp_path))
    )
    started = tmp_path / "started"
    await asyncio.to_thread(wait_for_file, started)
    os.kill(int(started.read_text()), signal.SIGKILL)
    (tmp_path / "release").touch()
    assert await search == ((max(view.legal), "worker"), str(tmp_path))
    assert pool.replacements == 1
    # The new pool thinks the next moves too.
    assert await pool.search(thinkers.plays_highest, view, "hard", "s", None) == (
        (max(view.legal), "worker"),
        None,
    )


async def test_a_search_that_kills_its_worker_is_tried_again(
    pool: ThinkingPool, tmp_path: Path
) -> None:
    """A search that crashes its worker once is made on the replacement pool."""
    (tmp_path / "die").touch()
    view = first_view()
    result = await pool.search(thinkers.dies_once, view, "hard", "s", str(tmp_path))
    assert result == ((max(view.legal), "worker"), str(tmp_path))
    assert pool.replacements == 1 and not (tmp_path / "die").exists()


async def test_a_stuck_search_times_out_and_its_worker_is_stopped(
    pool: ThinkingPool, tmp_path: Path
) -> None:
    """A search that never answers frees the table after the timeout; its worker is killed."""
    (tmp_path / "hang").touch()
    stuck = pool.processes()
    assert len(stuck) == 1
    view = first_view()
    result = await pool.search(thinkers.hangs_once, view, "hard", "s", str(tmp_path))
    assert result == ((max(view.legal), "worker"), str(tmp_path))
    assert pool.replacements == 1
    await asyncio.to_thread(stuck[0].join, 10)
    assert not stuck[0].is_alive()


async def test_a_search_no_worker_survives_is_made_in_the_bot_process(
    pool: ThinkingPool, caplog: pytest.LogCaptureFixture
) -> None:
    """Workers that die on every try: the move is still made (here), logged as an error."""
    view = first_view()
    with caplog.at_level(logging.WARNING, logger="bot.table.thinking"):
        result = await pool.search(thinkers.always_dies, view, "hard", "s", None)
    assert result == ((max(view.legal), "here"), None)
    assert pool.replacements == pool.attempts
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "thinking in the bot's process" in errors[0].getMessage()
    # The pool is whole again for the next move.
    assert await pool.search(thinkers.plays_highest, view, "hard", "s", None) == (
        (max(view.legal), "worker"),
        None,
    )


async def test_searches_at_many_tables_share_the_workers(tmp_path: Path) -> None:
    """More searches at once than workers: each waits its turn and every one is answered."""
    thinking = ThinkingPool(2, timeout=5.0)
    await thinking.start(THINKERS)  # the searches wait for the workers to start
    try:
        view = first_view()
        results = await asyncio.gather(
            *(thinking.search(thinkers.plays_highest, view, "hard", str(i), i) for i in range(9))
        )
        assert results == [((max(view.legal), "worker"), i) for i in range(9)]
        assert thinking.replacements == 0
    finally:
        await thinking.close()


async def test_workers_think_at_a_lower_priority_than_the_bot(pool: ThinkingPool) -> None:
    """On a busy machine the bot's answers to clicks come before the workers' searches."""
    (worker,) = pool.processes()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, worker.pid) == min(19, mine + WORKER_NICENESS)


async def test_without_workers_searches_run_in_this_process() -> None:
    """With no workers (the tests' and a one-core machine's choice) a thread thinks."""
    thinking = ThinkingPool(0)
    await thinking.start(THINKERS)
    assert thinking.in_process and thinking.processes() == []
    view = first_view()
    memory: list[int] = []
    assert await thinking.search(thinkers.counts_calls, view, "hard", "s", memory) == (
        max(view.legal),
        [view.move_number],
    )
    assert memory == [view.move_number]  # the same object, updated in place


async def test_a_closed_pool_still_answers_in_this_process() -> None:
    """A search after the bot closed its workers is made here, not lost."""
    thinking = ThinkingPool(1)
    await thinking.start(THINKERS)
    await thinking.close()  # while the workers are still starting
    assert thinking.in_process
    view = first_view()
    assert await thinking.search(thinkers.plays_highest, view, "hard", "s", None) == (
        (max(view.legal), "here"),
        None,
    )


async def test_workers_that_cannot_start_leave_the_thinking_here(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A machine that refuses new processes: an error is logged and every move still made."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr("bot.table.thinking.ProcessPoolExecutor", refuse)
    thinking = ThinkingPool(1)
    with caplog.at_level(logging.ERROR, logger="bot.table.thinking"):
        await thinking.start(THINKERS)
        await thinking.ready()
    assert thinking.in_process
    assert "no thinking worker could start" in caplog.text
    view = first_view()
    assert await thinking.search(thinkers.plays_highest, view, "hard", "s", None) == (
        (max(view.legal), "here"),
        None,
    )
    await thinking.close()


CHILD_BOT = """
import asyncio, sys, time
from bot.table.thinking import ThinkingPool

async def main():
    pool = ThinkingPool(1)
    await pool.start(())
    await pool.ready()
    print(*(p.pid for p in pool.processes()), flush=True)
    time.sleep(60)

asyncio.run(main())
"""


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting to be reaped counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_workers_leave_when_the_bot_is_killed() -> None:
    """A bot killed outright (SIGKILL) leaves no worker behind waiting for work forever."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", CHILD_BOT], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        workers = [int(pid) for pid in child.stdout.readline().split()]
        assert workers and all(alive(pid) for pid in workers)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        deadline = time.monotonic() + 20
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in workers)
        # The orphans closed the bot's output pipe too: whoever reads it sees its end.
        assert child.stdout.read() == ""
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
