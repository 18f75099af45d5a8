"""Shared fixtures: settings on a temporary database, the bot factory for SimCord, and the
two storage backends (SQLite in a temporary folder, a schema on a real PostgreSQL server)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from simcord import Env

from bot.client.bot import EXTENSIONS, CardtableBot, create_bot
from bot.runtime.settings import Settings
from tests.backends import (
    BACKENDS,
    Backend,
    drop_schema,
    fresh_schema,
    own_database,
    server_url,
)
from tests.virtual_time import VirtualTimeEnv

WIRE_LOGGERS = ("discord.http", "discord.gateway")


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """Put the root logger and discord.py's loggers back as they were after every test.

    A test that runs `python -m bot`'s main in-process installs a stderr handler bound to
    pytest's capture, which is closed after that test: later log lines would fail to print.
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    wire_levels = {name: logging.getLogger(name).level for name in WIRE_LOGGERS}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, wire_level in wire_levels.items():
        logging.getLogger(name).setLevel(wire_level)


TEST_TOKEN = "x" * 24 + ".yyyyyy." + "z" * 27
# Requests a second that no test reaches.
UNPACED = 1e9


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings on a fresh database; computers think in a thread (no worker start-up cost).

    Tests of the worker processes themselves start a `ThinkingPool` of their own. The
    outbound lane is not paced: SimCord's settle() joins runnable work only, and a lane
    waiting for its next token is parked; its pacing is tested on a fake clock
    (tests/test_outbound_lane.py).
    """
    return Settings(
        token=TEST_TOKEN,
        database=tmp_path / "cardtable.db",
        ai_workers=0,
        rest_rate=UNPACED,
    )


@pytest.fixture
def bot_extensions() -> tuple[str, ...]:
    """The extensions each test bot loads (a module may add a game of its own)."""
    return EXTENSIONS


@pytest.fixture
async def make_bot(
    settings: Settings, bot_extensions: tuple[str, ...]
) -> AsyncIterator[Callable[[], CardtableBot]]:
    """A factory of fresh bots on the test database; their databases are closed afterwards."""
    bots: list[CardtableBot] = []

    def make() -> CardtableBot:
        bot = create_bot(settings, extensions=bot_extensions)
        bots.append(bot)
        return bot

    yield make
    for bot in bots:
        storage = getattr(bot, "storage", None)
        if storage is not None:
            # SimCord never calls bot.close(); an open aiosqlite thread would outlive the test.
            await storage.close()
        tables = getattr(bot, "tables", None)
        if tables is not None:
            await tables.thinking.close()


@pytest.fixture
def simcord_bot(make_bot: Callable[[], CardtableBot]) -> CardtableBot:
    """The bot under test, built by the same factory as production."""
    return make_bot()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A database of this test process's own on the PostgreSQL server of this test session
    (tests/backends.py): pytest-xdist's workers never share one."""
    for url in server_url():
        with own_database(url) as own:
            yield own


@pytest.fixture
async def postgres_url(postgres_server: str) -> AsyncIterator[str]:
    """A URL on an empty schema of its own for this test, dropped afterwards."""
    name, url = await fresh_schema(postgres_server)
    try:
        yield url
    finally:
        await drop_schema(postgres_server, name)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each storage backend in turn: a SQLite file, then a PostgreSQL schema."""
    if request.param == "postgres":
        return Backend("postgres", request.getfixturevalue("postgres_url"))
    return Backend("sqlite", tmp_path / "cardtable.db")


@pytest.fixture
async def simcord_env(
    simcord_bot: CardtableBot, request: pytest.FixtureRequest
) -> AsyncIterator[Env]:
    """SimCord around the bot, as its pytest plugin makes it, with one default added.

    Without SHARD_COUNT the bot leaves the shard count to Discord (AutoShardedBot asks at
    connect time); SimCord stands in for that answer with its ``shard_count`` option, here
    one shard unless the test's ``simcord`` marker says otherwise.
    """
    marker = request.node.get_closest_marker("simcord")
    options = dict(marker.kwargs) if marker else {}
    if simcord_bot.shard_count is None:
        options.setdefault("shard_count", 1)
    env = VirtualTimeEnv(simcord_bot, **options)
    await env.start()
    try:
        yield env
    finally:
        await env.shutdown()
        if env.check_errors:
            # What the plugin's own fixture does: errors the bot swallowed fail the test.
            env._raise_errors_since(env._errors_acknowledged)
