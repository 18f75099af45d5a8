"""DATABASE_URL read by asyncpg's own DSN parser: every form the driver or libpq takes is
either accepted and shown without its password, or refused in one line that never shows
the value; a bad port is one line and exit 2; the password never reaches a log line."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from bot.runtime.settings import (
    ConfigError,
    RedactingFilter,
    Settings,
    check_database_url,
    hide_password,
    parse_database_url,
)
from tests.runtime.test_cli import TOKEN, assert_config_error, run_bot

# Two halves, so that a password cut at an unescaped character is caught too.
FIRST, SECOND = "hunter", "2xyzzy"

# (form, what the driver makes of it): None where it must be refused.
FORMS = {
    "url": f"postgresql://bot:{FIRST}{SECOND}@db:5432/cards",
    "short scheme": f"postgres://bot:{FIRST}{SECOND}@db/cards",
    "password in the query": f"postgresql://bot@db/cards?password={FIRST}{SECOND}",
    "percent-encoded /": f"postgresql://bot:{FIRST}%2F{SECOND}@db/cards",
    "socket in the query": f"postgresql://bot:{FIRST}{SECOND}@/cards?host=/tmp/pg",
    "several hosts": f"postgresql://bot:{FIRST}{SECOND}@db1:5432,db2:5433/cards",
    "one slash": f"postgresql:/bot:{FIRST}{SECOND}@db",
    "no scheme": f"bot:{FIRST}{SECOND}@db",
    "libpq key=value": f"host=db user=bot password={FIRST}{SECOND} dbname=cards",
    "quoted key=value": f"host=db password='{FIRST} {SECOND}'",
    "unescaped /": f"postgresql://bot:{FIRST}/{SECOND}@db/cards",
    "unescaped #": f"postgresql://bot:{FIRST}#{SECOND}@db/cards",
    "unescaped ?": f"postgresql://bot:{FIRST}?{SECOND}@db/cards",
    "unescaped @": f"postgresql://bot:{FIRST}@{SECOND}@db/cards",
}
ACCEPTED = {
    "url": "postgresql://bot:***@db:5432/cards",
    "short scheme": "postgresql://bot:***@db:5432/cards",
    "password in the query": "postgresql://bot:***@db:5432/cards",
    "percent-encoded /": "postgresql://bot:***@db:5432/cards",
    "socket in the query": "postgresql://bot:***@/tmp/pg/.s.PGSQL.5432/cards",
    "several hosts": "postgresql://bot:***@db1:5432,db2:5433/cards",
}


def leaks(text: str) -> bool:
    """Whether any part of the password is in the text."""
    return FIRST in text or SECOND in text


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_is_read_or_refused_without_its_password(form: str) -> None:
    """A form the driver reads is shown without its password; any other is refused with a
    message that shows nothing of the value."""
    raw = FORMS[form]
    if form in ACCEPTED:
        assert check_database_url(raw) == raw
        assert hide_password(raw) == ACCEPTED[form]
        parsed = parse_database_url(raw)
        assert parsed.secrets and all(FIRST in secret for secret in parsed.secrets)
        return
    with pytest.raises(ConfigError) as refused:
        check_database_url(raw)
    message = str(refused.value)
    assert "DATABASE_URL" in message and "\n" not in message
    assert not leaks(message), message
    assert hide_password(raw) == "<unreadable DATABASE_URL>"


@pytest.mark.parametrize("form", list(FORMS))
def test_repr_of_settings_never_shows_the_password(form: str, tmp_path: Path) -> None:
    """Whatever DATABASE_URL holds, repr(Settings) shows nothing of its password."""
    settings = Settings(token=TOKEN, database=tmp_path / "x.db", database_url=FORMS[form])
    assert not leaks(repr(settings))


@pytest.mark.parametrize(
    ("port", "said"),
    [("notaport", "cannot be read"), ("70000", "port 70000"), ("0", "port 0")],
)
def test_a_bad_port_is_one_line_and_exit_2(tmp_path: Path, port: str, said: str) -> None:
    """`python -m bot` with a port that is not a number or outside 1-65535: one line naming
    DATABASE_URL, exit status 2, no traceback, no password."""
    url = f"postgresql://bot:{FIRST}{SECOND}@db:{port}/cards"
    result = run_bot(tmp_path, DISCORD_TOKEN=TOKEN, DATABASE_URL=url)
    line = assert_config_error(result, "DATABASE_URL")
    assert said in line and not leaks(result.stderr)


def test_every_spelling_of_the_password_is_redacted_from_logs() -> None:
    """A log line or a traceback quoting the password, as given or percent-encoded, shows
    *** in its place (the token as <token>)."""
    raw = FORMS["percent-encoded /"]
    settings = Settings(token=TOKEN, database=Path("x.db"), database_url=raw)
    redacting = RedactingFilter(settings.token, *settings.database_secrets)
    try:
        raise RuntimeError(f"connect to {raw} failed for {FIRST}/{SECOND}")
    except RuntimeError:
        record = logging.LogRecord(
            "asyncpg", logging.ERROR, __file__, 1, "gave up on %s", (raw,), sys.exc_info()
        )
    assert redacting.filter(record) is True
    text = logging.Formatter().format(record)
    assert not leaks(text), text
    assert "***" in text and "Traceback" in text
