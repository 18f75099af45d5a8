"""`python -m bot health` against the real bot process: `python -m bot run` connected to the
load benchmark's fake Discord (a real gateway and REST over loopback) with a real
PostgreSQL server of this module's own, stopped under it and started again, then the bot
killed. Each step waits for the heartbeat file to say what happened, never a fixed time.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.runtime.health import HEALTHY, NOT_READY, UNHEALTHY, heartbeat_path
from tests.backends import TemporaryServer, module_server
from tests.benchmark_scripts import load

ROOT = Path(__file__).resolve().parents[2]
# How long a step may take on a loaded machine (start-up, migrations): a limit, not a wait.
PATIENCE = 60.0
# The database's loss and return must reach the heartbeat this fast, not at the next
# 30 s beat (the loaded machine's slack included).
PROMPTLY = 10.0


@pytest.fixture(scope="module")
def server() -> Iterator[TemporaryServer]:
    """A PostgreSQL server of this module's own, to stop and start under the bot."""
    yield from module_server("stop and start under a running bot")


def read_beat(path: Path) -> dict[str, Any] | None:
    """The heartbeat the bot wrote last, or None if there is none (yet)."""
    try:
        beat = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    assert isinstance(beat, dict)
    return beat


async def until(
    what: str, ready: Callable[[], bool], bot: subprocess.Popen[bytes], limit: float
) -> float:
    """Poll ``ready`` (a file the bot writes) until it holds; the seconds it took. Fails if
    the bot exits first or ``limit`` passes."""
    began = time.monotonic()
    while not ready():
        assert bot.poll() is None, f"the bot exited with {bot.returncode} before {what}"
        assert time.monotonic() - began < limit, f"{what}: not within {limit:.0f} s"
        await asyncio.sleep(0.02)
    return time.monotonic() - began


async def health(folder: Path, *words: str) -> tuple[int, str]:
    """`python -m bot health [words]` for the bot whose database is in ``folder``: its exit
    status and what it said (run without blocking the fake Discord's loop)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "DISCORD_TOKEN")
    }
    env.update(CARDTABLE_DATABASE=str(folder / "cardtable.db"), PYTHONPATH=str(ROOT))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "health",
        *words,
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode()


def log_of(folder: Path) -> str:
    """What the bot logged (warnings and worse), for a failing assertion's message."""
    return (folder / "cardtable.log").read_text(errors="replace")


async def test_health_of_the_real_bot_alive_database_down_and_killed(
    server: TemporaryServer, tmp_path: Path
) -> None:
    """The real bot: healthy (0, live 0); its PostgreSQL stopped, the heartbeat says so
    within seconds and health answers 3 (live 0: do not restart it); started again, 0
    within seconds; the bot killed, 1 and live 1 at once."""
    run = load("load/run", name="load_run")
    fake = run.FakeDiscord([])
    base_url = await fake.start()
    bot: subprocess.Popen[bytes] = run.spawn(
        "cardtable", base_url, tmp_path, None, None, server.url, None, {}
    )
    beat_file = heartbeat_path(tmp_path / "cardtable.db")

    def beat_says(**fields: object) -> bool:
        beat = read_beat(beat_file)
        return beat is not None and all(beat.get(k) == v for k, v in fields.items())

    try:
        await until(
            "a connected heartbeat",
            lambda: beat_says(connected=True, database=True),
            bot,
            PATIENCE,
        )
        beat = read_beat(beat_file)
        assert beat is not None and beat["pid"] == bot.pid
        assert await health(tmp_path) == (
            HEALTHY,
            "cardtable: healthy: gateway connected, database answering\n",
        )
        assert (await health(tmp_path, "--live"))[0] == HEALTHY

        server.halt("immediate")  # as a crash: the connections drop without a goodbye
        await until("the outage in the heartbeat", lambda: beat_says(database=False), bot, PROMPTLY)
        status, said = await health(tmp_path)
        assert status == NOT_READY, said
        assert said.startswith("cardtable: alive, not ready: database down (for "), said
        status, said = await health(tmp_path, "--live")
        assert status == HEALTHY, said
        assert said.startswith("cardtable: alive, not ready: database down"), said

        server.resume()
        await until("the return in the heartbeat", lambda: beat_says(database=True), bot, PROMPTLY)
        assert await health(tmp_path) == (
            HEALTHY,
            "cardtable: healthy: gateway connected, database answering\n",
        ), log_of(tmp_path)

        bot.kill()
        await asyncio.to_thread(bot.wait)
        assert beat_file.exists()  # killed: nobody removed it
        status, said = await health(tmp_path)
        assert status == UNHEALTHY, said
        assert f"the bot (pid {bot.pid}) is not running" in said
        assert (await health(tmp_path, "--live"))[0] == UNHEALTHY
    finally:
        if bot.poll() is None:
            bot.kill()
            await asyncio.to_thread(bot.wait)
        await fake.close()
        if not (server.data / "postmaster.pid").exists():
            server.resume()  # stopped by a failing step: the fixture stops it cleanly
