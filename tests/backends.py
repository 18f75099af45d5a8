"""The two storage backends under test, and a real PostgreSQL server for the second one.

The server comes from CARDTABLE_TEST_DATABASE_URL when set (`.ci/run` starts one), else
from the PostgreSQL binaries found on this machine (a throw-away cluster in a temporary
folder, on a Unix socket only); without either the PostgreSQL half is skipped, except
under CI=true, where it fails. Each test gets a schema of its own on that server.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import pwd
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg
import pytest

from bot.storage import Storage, open_storage

URL_VARIABLE = "CARDTABLE_TEST_DATABASE_URL"
BACKENDS = ("sqlite", "postgres")


def with_query(url: str, **values: str) -> str:
    """The URL with query parameters added (asyncpg passes unknown ones as server settings)."""
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query), *values.items()]
    return urlunsplit(parts._replace(query=urlencode(query)))


def postgres_binaries() -> Path | None:
    """The folder of `initdb` and `pg_ctl`: on PATH, else the newest Debian install."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    return Path(candidates[-1]).parent if candidates else None


def unavailable(reason: str) -> None:
    """Skip the PostgreSQL half, or fail it under CI, where it must run."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL is required under CI: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL half skipped: {reason}")


class TemporaryServer:
    """A PostgreSQL cluster of its own in a temporary folder, reachable by a Unix socket."""

    def __init__(self, binaries: Path, *, durable: bool = False) -> None:
        self.binaries = binaries
        self.durable = durable
        self.folder = Path(tempfile.mkdtemp(prefix="cardtable-pg-"))
        self.data = self.folder / "data"
        self.url = ""  # set once started
        self._options = ""
        # initdb refuses to run as root: run the server as the `postgres` account then.
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.folder)
                raise RuntimeError("running as root and there is no `postgres` account") from None
            self.user = "postgres"
            shutil.chown(self.folder, user="postgres")

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        subprocess.run(
            [*prefix, *command], check=True, capture_output=True, text=True, cwd=self.folder
        )

    def start(self) -> str:
        """Create and start the cluster; its URL."""
        self._run(
            str(self.binaries / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "cardtable",
            "--no-sync",
        )
        # No TCP port opened. Test data is thrown away: durability off, unless measuring.
        options = f"-k {self.folder} -c listen_addresses="
        if not self.durable:
            options += " -c fsync=off -c full_page_writes=off"
        self._options = options
        self.resume()
        self.url = f"postgresql://cardtable@/postgres?host={self.folder}"
        return self.url

    def resume(self) -> None:
        """Start the (initialised) server and wait until it takes connections."""
        self._run(
            str(self.binaries / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            self._options,
            "-l",
            str(self.folder / "log"),
            "-w",
            "-t",
            "120",  # crash recovery on a loaded machine
            "start",
        )

    def halt(self, mode: str = "immediate") -> None:
        """Stop the server (``immediate``: as a crash would, no goodbye to clients)."""
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def processes(self) -> list[int]:
        """The pids of the running cluster: its postmaster and every child of it."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        found = [postmaster]
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # gone meanwhile
            # The fourth field, after the command in parentheses (which may hold spaces).
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                found.append(int(entry.name))
        return found

    def freeze(self) -> None:
        """Stop every process of the cluster in its tracks (SIGSTOP): a server that keeps
        its connections open and answers nothing. Always `thaw` afterwards."""
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """Let a frozen cluster run on (SIGCONT)."""
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    def stop(self) -> None:
        """Stop the cluster and remove its folder."""
        try:
            self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def module_server(purpose: str) -> Iterator[TemporaryServer]:
    """A PostgreSQL server of a test module's own, for tests that ``purpose`` (stop, start
    or freeze it); skipped without binaries (failed under CI). Thawed and stopped at the
    end, whatever a test left it in."""
    binaries = postgres_binaries()
    if binaries is None:
        unavailable(f"no PostgreSQL binaries (initdb) found to start a server to {purpose}")
        return
    server = TemporaryServer(binaries)
    try:
        server.start()
    except Exception as error:
        unavailable(f"cannot start a temporary server with {binaries}: {error}")
        return
    try:
        yield server
    finally:
        if (server.data / "postmaster.pid").exists():
            server.thaw()  # a test that failed while it was frozen
        server.stop()


def server_url() -> Iterator[str]:
    """The URL of a PostgreSQL server for this test session (see the module docstring)."""
    given = os.environ.get(URL_VARIABLE, "").strip()
    if given:
        yield given
        return
    binaries = postgres_binaries()
    if binaries is None:
        unavailable(f"no PostgreSQL binaries found and {URL_VARIABLE} is not set")
        return
    try:
        server = TemporaryServer(binaries)
        url = server.start()
    except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        unavailable(f"cannot start a temporary server with {binaries}: {detail}")
        return
    try:
        yield url
    finally:
        server.stop()


@contextlib.contextmanager
def own_database(url: str) -> Iterator[str]:
    """A database of this test process's own on the server: its URL, dropped afterwards.

    PostgreSQL's advisory locks (the bot's shard claims) are per database, not per schema:
    processes of tests running side by side (pytest-xdist workers, another checkout's suite)
    must not claim each other's shards.
    """
    name = f"cardtable_test_{os.getpid()}"

    async def run(statement: str) -> None:
        connection = await asyncpg.connect(url)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    asyncio.run(run(f"CREATE DATABASE {name}"))
    try:
        yield urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    finally:
        asyncio.run(run(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


async def fresh_schema(url: str) -> tuple[str, str]:
    """A new empty schema on the server: (its name, a URL whose search_path is it)."""
    name = "test_" + uuid.uuid4().hex[:12]
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(f"CREATE SCHEMA {name}")
    finally:
        await connection.close()
    return name, with_query(url, search_path=name)


async def drop_schema(url: str, name: str) -> None:
    """Remove a test's schema and everything in it."""
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(f"DROP SCHEMA {name} CASCADE")
    finally:
        await connection.close()


@dataclass
class Backend:
    """One backend for a test: what Storage.open takes, and raw access behind the bot's back."""

    name: str
    target: Path | str

    async def open(self) -> Storage:
        """A Storage on this test's database (migrated)."""
        return await open_storage(self.target)

    async def execute(self, sql: str, *params: Any) -> None:
        """Run one statement (`?` placeholders) outside the bot, committed."""
        if isinstance(self.target, Path):
            with sqlite3.connect(self.target) as connection:
                connection.execute(sql, params)
            return
        from bot.storage.postgres import numbered

        connection = await asyncpg.connect(self.target)
        try:
            await connection.execute(numbered(sql), *params)
        finally:
            await connection.close()

    async def set_schema_version(self, version: int) -> None:
        """Mark the database as written by schema ``version`` (creating it if empty)."""
        if isinstance(self.target, Path):
            await self.execute(f"PRAGMA user_version = {version}")
            return
        await self.execute("CREATE TABLE IF NOT EXISTS cardtable_schema (version INTEGER)")
        await self.execute("DELETE FROM cardtable_schema")
        await self.execute(f"INSERT INTO cardtable_schema VALUES ({version})")

    async def schema_version(self) -> int:
        """The recorded schema version, read outside the bot."""
        if isinstance(self.target, Path):
            with sqlite3.connect(self.target) as connection:
                return int(connection.execute("PRAGMA user_version").fetchone()[0])
        connection = await asyncpg.connect(self.target)
        try:
            return int(await connection.fetchval("SELECT version FROM cardtable_schema"))
        finally:
            await connection.close()

    async def table_names(self) -> set[str]:
        """The SQL tables in the database, read outside the bot."""
        if isinstance(self.target, Path):
            with sqlite3.connect(self.target) as connection:
                rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                return {row[0] for row in rows}
        connection = await asyncpg.connect(self.target)
        try:
            rows = await connection.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        finally:
            await connection.close()
        return {row[0] for row in rows}

    @property
    def integrity_error(self) -> type[BaseException]:
        """What a broken constraint raises on this backend."""
        if isinstance(self.target, Path):
            return sqlite3.IntegrityError
        return asyncpg.IntegrityConstraintViolationError  # type: ignore[no-any-return]
