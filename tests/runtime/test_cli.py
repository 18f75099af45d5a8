"""`python -m bot` as a user runs it: configuration errors are one line and exit status 2."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.__main__ import configure_logging
from bot.runtime.settings import Settings

REPO = Path(__file__).resolve().parents[2]
TOKEN = "A" * 24 + ".Bbbbbb." + "C" * 27
EXIT_CONFIG = 2


def clean_environment(**values: str) -> dict[str, str]:
    """The current environment without any bot setting, plus ``values``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DISCORD_TOKEN", "DATABASE_URL")
        and not key.startswith(("CARDTABLE_", "PYTHON"))
    }
    env["PYTHONPATH"] = str(REPO)
    env.update(values)
    return env


def run_bot(cwd: Path, *args: str, **values: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m bot ARGS` in ``cwd`` (no stdin) and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=cwd,
        env=clean_environment(**values),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def assert_config_error(result: subprocess.CompletedProcess[str], name: str) -> str:
    """Exit status 2, one stderr line naming ``name``, no traceback, nothing on stdout."""
    assert result.returncode == EXIT_CONFIG, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert name in lines[0]
    assert result.stdout == ""
    return lines[0]


def test_missing_token(tmp_path: Path) -> None:
    """Without DISCORD_TOKEN the bot prints one line naming it and exits with status 2."""
    result = run_bot(tmp_path, CARDTABLE_DATABASE=str(tmp_path / "db.sqlite"))
    assert_config_error(result, "DISCORD_TOKEN")


def test_missing_token_with_defaults(tmp_path: Path) -> None:
    """With no setting at all the token error comes first and no database is created."""
    result = run_bot(tmp_path)
    assert_config_error(result, "DISCORD_TOKEN")
    assert not (tmp_path / "data" / "cardtable.db").exists()


@pytest.mark.parametrize("token", ["not-a-token", "abc.def.ghi"])
def test_malformed_token(tmp_path: Path, token: str) -> None:
    """A malformed token gives one line naming DISCORD_TOKEN, without echoing it."""
    result = run_bot(tmp_path, DISCORD_TOKEN=token, CARDTABLE_DATABASE=str(tmp_path / "db.sqlite"))
    line = assert_config_error(result, "DISCORD_TOKEN")
    assert token not in line


def test_unwritable_database(tmp_path: Path) -> None:
    """A well-formed token with an uncreatable database path names CARDTABLE_DATABASE."""
    afile = tmp_path / "afile"
    afile.write_text("a regular file", encoding="utf-8")
    result = run_bot(tmp_path, DISCORD_TOKEN=TOKEN, CARDTABLE_DATABASE=str(afile / "db.sqlite"))
    line = assert_config_error(result, "CARDTABLE_DATABASE")
    assert TOKEN not in line


def test_database_is_a_folder(tmp_path: Path) -> None:
    """A database path that is a folder names CARDTABLE_DATABASE."""
    folder = tmp_path / "db"
    folder.mkdir()
    result = run_bot(tmp_path, DISCORD_TOKEN=TOKEN, CARDTABLE_DATABASE=str(folder))
    assert_config_error(result, "CARDTABLE_DATABASE")


def test_sync_command_checks_settings_first(tmp_path: Path) -> None:
    """`python -m bot sync` without a token fails the same way, before any network call."""
    result = run_bot(tmp_path, "sync", "--guild", "123")
    assert_config_error(result, "DISCORD_TOKEN")


def test_dotenv_in_working_directory_is_read(tmp_path: Path) -> None:
    """A .env file in the working directory supplies missing settings."""
    (tmp_path / ".env").write_text("DISCORD_TOKEN=malformed\n", encoding="utf-8")
    result = run_bot(tmp_path, CARDTABLE_DATABASE=str(tmp_path / "db.sqlite"))
    assert "malformed" in assert_config_error(result, "DISCORD_TOKEN")


def test_environment_wins_over_dotenv(tmp_path: Path) -> None:
    """A setting in the environment is used even when .env sets it differently."""
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    (tmp_path / ".env").write_text(
        f"DISCORD_TOKEN=malformed\nCARDTABLE_DATABASE={tmp_path / 'db.sqlite'}\n",
        encoding="utf-8",
    )
    result = run_bot(tmp_path, DISCORD_TOKEN=TOKEN, CARDTABLE_DATABASE=str(afile / "db.sqlite"))
    assert_config_error(result, "CARDTABLE_DATABASE")


def test_help(tmp_path: Path) -> None:
    """`python -m bot --help` prints usage, mentions sync, and exits 0 without settings."""
    result = run_bot(tmp_path, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout
    assert "sync" in result.stdout
    assert result.stderr == ""


def test_sync_help(tmp_path: Path) -> None:
    """`python -m bot sync --help` documents --guild and --global."""
    result = run_bot(tmp_path, "sync", "--help")
    assert result.returncode == 0, result.stderr
    assert "--guild" in result.stdout
    assert "--global" in result.stdout


def test_unknown_command(tmp_path: Path) -> None:
    """An unknown subcommand is a usage error (argparse's status 2), not a traceback."""
    result = run_bot(tmp_path, "frobnicate")
    assert result.returncode == EXIT_CONFIG
    assert "Traceback" not in result.stderr
    assert "usage:" in result.stderr


# -- logging ------------------------------------------------------------------------------


def logged_at(settings: Settings, capsys: pytest.CaptureFixture[str]) -> str:
    """Configure logging for ``settings``, log like discord.py does, return what was written."""
    configure_logging(settings)
    logging.getLogger("discord.http").debug("POST /interactions/1/itoken-secret/callback")
    logging.getLogger("discord.gateway").debug("WebSocket Event: {'token': 'itoken-gw'}")
    logging.getLogger("discord.http").info("http info line")
    logging.getLogger("discord.client").debug("client debug line")
    logging.getLogger("cardtable.test").debug("bot debug line")
    return capsys.readouterr().err


def test_debug_log_keeps_request_bodies_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At DEBUG, discord.py's HTTP and gateway payloads (interaction tokens) are not logged."""
    text = logged_at(Settings(TOKEN, tmp_path / "db", log_level="DEBUG"), capsys)
    assert "itoken" not in text
    assert "http info line" in text
    assert "client debug line" in text
    assert "bot debug line" in text


def test_http_debug_setting_logs_request_bodies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CARDTABLE_HTTP_DEBUG asks for discord.py's HTTP and gateway payloads at DEBUG."""
    text = logged_at(Settings(TOKEN, tmp_path / "db", log_level="DEBUG", http_debug=True), capsys)
    assert "itoken-secret" in text
    assert "itoken-gw" in text


def test_quieter_levels_stay_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """At WARNING, discord.py's HTTP INFO lines stay out too (the cap never lowers a level)."""
    text = logged_at(Settings(TOKEN, tmp_path / "db", log_level="WARNING"), capsys)
    assert text == ""
