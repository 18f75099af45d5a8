"""The log's formats (CARDTABLE_LOG_FORMAT): text and JSON lines, and neither ever shows the
token or the database password, wherever in a record they stand."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bot.__main__ import configure_logging
from bot.runtime.settings import ConfigError, Settings, load_settings
from tests.runtime.test_cli import TOKEN
from tests.runtime.test_database_url import ACCEPTED, FORMS, leaks


def log_everywhere(secret_url: str) -> None:
    """Log the token and the URL in a message, in its arguments, in a traceback and in a
    stack, from the bot's loggers and from discord.py's and asyncpg's."""
    log = logging.getLogger("bot.table.session")
    log.warning(f"token {TOKEN} and url {secret_url} in the message")
    log.error("in the arguments: %s %s", TOKEN, secret_url)
    try:
        raise RuntimeError(f"connect to {secret_url} with {TOKEN} failed")
    except RuntimeError:
        logging.getLogger("asyncpg").exception("gave up")
    logging.getLogger("discord.client").warning("url %s", secret_url, stack_info=True)
    logging.getLogger("discord.http").info("Authorization: Bot %s", TOKEN)


@pytest.mark.parametrize("kind", ["text", "json"])
@pytest.mark.parametrize("form", list(ACCEPTED))
def test_no_token_or_password_in_any_log_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, form: str
) -> None:
    """Whatever a line quotes (message, arguments, traceback, stack; the bot's loggers or a
    library's), neither format shows the token or any part of the password."""
    url = FORMS[form]
    settings = Settings(
        TOKEN, tmp_path / "db", database_url=url, log_level="DEBUG", log_format=kind
    )
    configure_logging(settings)
    log_everywhere(url)
    text = capsys.readouterr().err
    assert text.count("<token>") >= 3  # the lines were written, redacted
    assert TOKEN not in text
    assert not leaks(text), text
    assert "Traceback" in text


def test_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CARDTABLE_LOG_FORMAT=json: each record is one line of JSON with its time (UTC),
    level, logger and message, and a traceback in "exception" (not on lines of its own)."""
    configure_logging(Settings(TOKEN, tmp_path / "db", log_format="json"))
    logging.getLogger("bot.table.tables").warning("table %d waits, «%s»", 7, "naïve")
    try:
        raise ValueError("broken row")
    except ValueError:
        logging.getLogger("bot.storage.base").exception("the database is unavailable")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["level"] == "WARNING" and first["logger"] == "bot.table.tables"
    assert first["message"] == "table 7 waits, «naïve»"
    assert first["time"].endswith("Z") and "T" in first["time"]
    assert "exception" not in first
    assert second["message"] == "the database is unavailable"
    assert (
        second["exception"].startswith("Traceback")
        and "ValueError: broken row" in second["exception"]
    )


def test_the_format_is_a_setting(tmp_path: Path) -> None:
    """CARDTABLE_LOG_FORMAT is read (any case), defaults to text, and refuses other words."""
    base = {"DISCORD_TOKEN": TOKEN, "CARDTABLE_DATABASE": str(tmp_path / "cardtable.db")}
    assert load_settings(dict(base), dotenv=None).log_format == "text"
    assert load_settings({**base, "CARDTABLE_LOG_FORMAT": "JSON"}, dotenv=None).log_format == (
        "json"
    )
    with pytest.raises(ConfigError, match="CARDTABLE_LOG_FORMAT must be one of text, json"):
        load_settings({**base, "CARDTABLE_LOG_FORMAT": "xml"}, dotenv=None)


def test_the_metrics_port_is_a_setting(tmp_path: Path) -> None:
    """CARDTABLE_METRICS_PORT: unset is no server; a port is read; anything else refused.
    CARDTABLE_METRICS_HOST defaults to this machine only."""
    base = {"DISCORD_TOKEN": TOKEN, "CARDTABLE_DATABASE": str(tmp_path / "cardtable.db")}
    plain = load_settings(dict(base), dotenv=None)
    assert (plain.metrics_port, plain.metrics_host) == (None, "127.0.0.1")
    on = load_settings(
        {**base, "CARDTABLE_METRICS_PORT": "9464", "CARDTABLE_METRICS_HOST": "0.0.0.0"},
        dotenv=None,
    )
    assert (on.metrics_port, on.metrics_host) == (9464, "0.0.0.0")
    for wrong in ("0", "65536", "http", "-1"):
        with pytest.raises(ConfigError, match="CARDTABLE_METRICS_PORT must be a TCP port"):
            load_settings({**base, "CARDTABLE_METRICS_PORT": wrong}, dotenv=None)
