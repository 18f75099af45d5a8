"""Settings: `.env` parsing, precedence over the environment, validation, token secrecy."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from bot.runtime.settings import (
    ConfigError,
    RedactingFilter,
    Settings,
    database_path,
    load_dotenv,
    load_settings,
    machine_workers,
    parse_dotenv,
)

TOKEN = "A" * 24 + ".Bbbbbb." + "C" * 27
OTHER_TOKEN = "D" * 24 + ".Eeeeee." + "F" * 27


def environment(tmp_path: Path, **values: str) -> dict[str, str]:
    """A fake environment with a valid token and a database in the temporary folder."""
    env = {"DISCORD_TOKEN": TOKEN, "CARDTABLE_DATABASE": str(tmp_path / "db.sqlite")}
    env.update(values)
    return env


def load(tmp_path: Path, **values: str) -> Settings:
    """Load settings from a fake environment, without any `.env` file."""
    return load_settings(environment(tmp_path, **values), dotenv=None)


def config_error(tmp_path: Path, **values: str) -> str:
    """The message of the ConfigError these values cause (and check it is one line)."""
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, **values)
    message = str(caught.value)
    assert message
    assert "\n" not in message
    return message


# -- parse_dotenv ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("KEY=value", {"KEY": "value"}),
        ("  KEY = value  ", {"KEY": "value"}),
        ("KEY=", {"KEY": ""}),
        ("# a comment\nKEY=value\n   # indented comment", {"KEY": "value"}),
        ("\n\n  \nKEY=value\n\n", {"KEY": "value"}),
        ("export KEY=value", {"KEY": "value"}),
        ("export   KEY=value", {"KEY": "value"}),
        ('KEY="double quoted"', {"KEY": "double quoted"}),
        ("KEY='single quoted'", {"KEY": "single quoted"}),
        ('KEY="keeps # inside quotes"', {"KEY": "keeps # inside quotes"}),
        ("KEY=value # trailing comment", {"KEY": "value"}),
        ("KEY=a#b", {"KEY": "a#b"}),
        ("KEY=a=b=c", {"KEY": "a=b=c"}),
        ('KEY="unbalanced', {"KEY": '"unbalanced'}),
        ("no equals sign here\nKEY=value", {"KEY": "value"}),
        ("=value without key", {}),
        ("KEY=first\nKEY=second", {"KEY": "second"}),
        ("A=1\r\nB=2\r\n", {"A": "1", "B": "2"}),
    ],
)
def test_parse_dotenv(text: str, expected: dict[str, str]) -> None:
    """Comments, blank lines, quotes, `export` and `=` in values parse as documented."""
    assert parse_dotenv(text) == expected


def test_parse_dotenv_quoted_value_with_comment() -> None:
    """A quoted value followed by a comment loses both the quotes and the comment."""
    assert parse_dotenv('KEY="value" # comment') == {"KEY": "value"}


def test_parse_dotenv_example_file() -> None:
    """The shipped .env.example parses and names every setting the bot reads."""
    example = Path(__file__).resolve().parents[2] / ".env.example"
    keys = parse_dotenv(example.read_text(encoding="utf-8"))
    assert set(keys) == {
        "DISCORD_TOKEN",
        "CARDTABLE_DATABASE",
        "CARDTABLE_LOG_LEVEL",
        "CARDTABLE_DEV_GUILD_ID",
        "CARDTABLE_OWNER_IDS",
        "CARDTABLE_HTTP_DEBUG",
        "SHARD_COUNT",
        "SHARD_IDS",
        "CARDTABLE_AI_WORKERS",
        "CARDTABLE_REST_RATE",
        "CARDTABLE_REST_SHARE",
        "CARDTABLE_TABLE_IDLE_SECONDS",
        "DISCORD_API_BASE",
    }


# -- .env precedence -------------------------------------------------------------------


def test_dotenv_fills_missing_variables(tmp_path: Path) -> None:
    """A .env value is used when the environment does not set that variable."""
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        f"DISCORD_TOKEN={TOKEN}\nCARDTABLE_DATABASE={tmp_path / 'from-dotenv.db'}\n",
        encoding="utf-8",
    )
    settings = load_settings({}, dotenv=dotenv)
    assert settings.token == TOKEN
    assert settings.database == tmp_path / "from-dotenv.db"


def test_dotenv_never_overrides_environment(tmp_path: Path) -> None:
    """A variable already set in the environment wins over the same one in .env."""
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        f"DISCORD_TOKEN={OTHER_TOKEN}\nCARDTABLE_LOG_LEVEL=DEBUG\nCARDTABLE_DEV_GUILD_ID=42\n",
        encoding="utf-8",
    )
    env = environment(tmp_path, CARDTABLE_LOG_LEVEL="WARNING")
    settings = load_settings(env, dotenv=dotenv)
    assert settings.token == TOKEN
    assert settings.log_level == "WARNING"
    assert settings.dev_guild_id == 42  # only set in .env, so .env supplies it


def test_dotenv_empty_environment_value_still_wins(tmp_path: Path) -> None:
    """A variable set to an empty string in the environment is not replaced by .env."""
    environ = {"DISCORD_TOKEN": ""}
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"DISCORD_TOKEN={TOKEN}\n", encoding="utf-8")
    load_dotenv(dotenv, environ)
    assert environ["DISCORD_TOKEN"] == ""


def test_missing_dotenv_file_is_fine(tmp_path: Path) -> None:
    """A .env path that does not exist is simply skipped."""
    settings = load_settings(environment(tmp_path), dotenv=tmp_path / "missing.env")
    assert settings.token == TOKEN


def test_unreadable_dotenv_gives_config_error(tmp_path: Path) -> None:
    """A .env path that cannot be read (here a folder) gives a one-line ConfigError."""
    folder = tmp_path / ".env"
    folder.mkdir()
    with pytest.raises(ConfigError) as caught:
        load_settings(environment(tmp_path), dotenv=folder)
    assert "\n" not in str(caught.value)


# -- defaults and valid values ---------------------------------------------------------


def test_defaults(tmp_path: Path) -> None:
    """Only a token and a database: INFO logging, no dev guild, no extra owners."""
    settings = load(tmp_path)
    assert settings == Settings(token=TOKEN, database=tmp_path / "db.sqlite")
    assert settings.log_level == "INFO"
    assert settings.dev_guild_id is None
    assert settings.owner_ids == frozenset()


def test_default_database_is_under_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without CARDTABLE_DATABASE the database is data/cardtable.db, its folder created."""
    monkeypatch.chdir(tmp_path)
    settings = load_settings({"DISCORD_TOKEN": TOKEN}, dotenv=None)
    assert settings.database == Path("data") / "cardtable.db"
    assert (tmp_path / "data").is_dir()


def test_database_folder_is_created(tmp_path: Path) -> None:
    """Missing parent folders of the database are created."""
    path = tmp_path / "a" / "b" / "cardtable.db"
    assert load(tmp_path, CARDTABLE_DATABASE=str(path)).database == path
    assert path.parent.is_dir()


def test_token_whitespace_is_stripped(tmp_path: Path) -> None:
    """Spaces or a newline around a pasted token are ignored."""
    assert load(tmp_path, DISCORD_TOKEN=f"  {TOKEN}\n").token == TOKEN


def test_log_level_is_case_insensitive(tmp_path: Path) -> None:
    """The log level may be written in lower case."""
    assert load(tmp_path, CARDTABLE_LOG_LEVEL="debug").log_level == "DEBUG"


def test_ids_are_parsed(tmp_path: Path) -> None:
    """The dev guild id and comma- or space-separated owner ids become integers."""
    settings = load(
        tmp_path, CARDTABLE_DEV_GUILD_ID=" 123456789012345678 ", CARDTABLE_OWNER_IDS="1, 2 3,"
    )
    assert settings.dev_guild_id == 123456789012345678
    assert settings.owner_ids == frozenset({1, 2, 3})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", False),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
        ("1", True),
        ("true", True),
        (" YES ", True),
        ("on", True),
    ],
)
def test_http_debug_is_a_boolean(tmp_path: Path, raw: str, expected: bool) -> None:
    """CARDTABLE_HTTP_DEBUG accepts the usual spellings of yes and no, in any case."""
    assert load(tmp_path, CARDTABLE_HTTP_DEBUG=raw).http_debug is expected


def test_http_debug_is_off_by_default(tmp_path: Path) -> None:
    """Without CARDTABLE_HTTP_DEBUG, discord.py's request bodies stay out of the logs."""
    assert load(tmp_path).http_debug is False


def test_http_debug_environment_wins_over_dotenv(tmp_path: Path) -> None:
    """CARDTABLE_HTTP_DEBUG off in the environment stays off, whatever .env says."""
    dotenv = tmp_path / ".env"
    dotenv.write_text("CARDTABLE_HTTP_DEBUG=1\n", encoding="utf-8")
    settings = load_settings(environment(tmp_path, CARDTABLE_HTTP_DEBUG="0"), dotenv=dotenv)
    assert settings.http_debug is False
    assert load_settings(environment(tmp_path), dotenv=dotenv).http_debug is True


def test_ai_workers_default_to_every_core_but_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unset or empty, the thinking workers leave one core to the bot, and are at least 1."""
    for cores, workers in ((8, 7), (2, 1), (1, 1), (None, 1)):
        monkeypatch.setattr("os.cpu_count", lambda cores=cores: cores)
        assert machine_workers() == workers
        assert load(tmp_path).ai_workers == workers
        assert load(tmp_path, CARDTABLE_AI_WORKERS=" ").ai_workers == workers


@pytest.mark.parametrize("raw, expected", [("0", 0), ("3", 3), (" 12 ", 12)])
def test_ai_workers_are_read(tmp_path: Path, raw: str, expected: int) -> None:
    """A number of workers is taken as given; 0 thinks in the bot's own process."""
    assert load(tmp_path, CARDTABLE_AI_WORKERS=raw).ai_workers == expected


@pytest.mark.parametrize("raw", ["-1", "two", "1.5", "auto"])
def test_invalid_ai_workers(tmp_path: Path, raw: str) -> None:
    """Anything but a whole number gives a ConfigError naming CARDTABLE_AI_WORKERS."""
    assert "CARDTABLE_AI_WORKERS" in config_error(tmp_path, CARDTABLE_AI_WORKERS=raw)


@pytest.mark.parametrize("raw", ["2", "yep", "debug", "tru"])
def test_invalid_http_debug(tmp_path: Path, raw: str) -> None:
    """Anything but a yes or a no gives a ConfigError naming CARDTABLE_HTTP_DEBUG."""
    assert "CARDTABLE_HTTP_DEBUG" in config_error(tmp_path, CARDTABLE_HTTP_DEBUG=raw)


def test_database_path_needs_no_token(tmp_path: Path) -> None:
    """The health check finds the database path without checking anything else."""
    assert database_path({"CARDTABLE_DATABASE": " x/y.db "}) == Path("x/y.db")
    assert database_path({}) == Path("data") / "cardtable.db"


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "", "   "])
def test_missing_token(tmp_path: Path, token: str | None) -> None:
    """A missing or blank token gives a one-line ConfigError naming DISCORD_TOKEN."""
    env = environment(tmp_path)
    if token is None:
        del env["DISCORD_TOKEN"]
    else:
        env["DISCORD_TOKEN"] = token
    with pytest.raises(ConfigError) as caught:
        load_settings(env, dotenv=None)
    assert "DISCORD_TOKEN" in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "token",
    [
        "not-a-token",
        "abc.def.ghi",
        TOKEN.replace(".", ""),
        TOKEN + ".extra",
        TOKEN.replace("A", "A ", 1),
        "Bot " + TOKEN,
    ],
)
def test_malformed_token(tmp_path: Path, token: str) -> None:
    """A token of the wrong shape gives a ConfigError naming DISCORD_TOKEN, not the value."""
    message = config_error(tmp_path, DISCORD_TOKEN=token)
    assert "DISCORD_TOKEN" in message
    assert token not in message


def test_database_under_a_file(tmp_path: Path) -> None:
    """A database whose folder would have to be created inside a regular file is refused."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder", encoding="utf-8")
    message = config_error(tmp_path, CARDTABLE_DATABASE=str(afile / "db.sqlite"))
    assert "CARDTABLE_DATABASE" in message


def test_database_deeper_under_a_file(tmp_path: Path) -> None:
    """A database several folders below a regular file is refused too."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder", encoding="utf-8")
    message = config_error(tmp_path, CARDTABLE_DATABASE=str(afile / "x" / "y" / "db.sqlite"))
    assert "CARDTABLE_DATABASE" in message


def test_database_path_is_a_folder(tmp_path: Path) -> None:
    """A database path that is an existing folder is refused."""
    folder = tmp_path / "folder.db"
    folder.mkdir()
    message = config_error(tmp_path, CARDTABLE_DATABASE=str(folder))
    assert "CARDTABLE_DATABASE" in message


def test_database_file_is_not_sqlite(tmp_path: Path) -> None:
    """An existing file that is not an SQLite database is refused, and left unchanged."""
    junk = tmp_path / "junk.db"
    content = b"this is not an sqlite database, just some bytes " * 50
    junk.write_bytes(content)
    message = config_error(tmp_path, CARDTABLE_DATABASE=str(junk))
    assert "CARDTABLE_DATABASE" in message
    assert junk.read_bytes() == content


@pytest.mark.skipif(sys.platform != "linux", reason="needs /proc")
def test_database_in_uncreatable_folder() -> None:
    """A database folder that cannot be created even by root (/proc) is refused."""
    with pytest.raises(ConfigError) as caught:
        load_settings(
            {"DISCORD_TOKEN": TOKEN, "CARDTABLE_DATABASE": "/proc/cardtable-test/db.sqlite"},
            dotenv=None,
        )
    assert "CARDTABLE_DATABASE" in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("level", ["LOUD", "verbose", "10", "WARN"])
def test_invalid_log_level(tmp_path: Path, level: str) -> None:
    """An unknown log level gives a ConfigError naming CARDTABLE_LOG_LEVEL."""
    assert "CARDTABLE_LOG_LEVEL" in config_error(tmp_path, CARDTABLE_LOG_LEVEL=level)


@pytest.mark.parametrize("guild", ["abc", "12a", "-5", "1.5", "1 2"])
def test_dev_guild_id_must_be_digits(tmp_path: Path, guild: str) -> None:
    """A dev guild id that is not all digits gives a ConfigError naming the variable."""
    assert "CARDTABLE_DEV_GUILD_ID" in config_error(tmp_path, CARDTABLE_DEV_GUILD_ID=guild)


@pytest.mark.parametrize("owners", ["abc", "1;2", "1,-2", "@me"])
def test_owner_ids_must_be_digits(tmp_path: Path, owners: str) -> None:
    """Owner ids that are not digits give a ConfigError naming CARDTABLE_OWNER_IDS."""
    assert "CARDTABLE_OWNER_IDS" in config_error(tmp_path, CARDTABLE_OWNER_IDS=owners)


def test_token_checked_before_database(tmp_path: Path) -> None:
    """With both a missing token and a bad database, the token is reported first."""
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    env = {"CARDTABLE_DATABASE": str(afile / "db.sqlite")}
    with pytest.raises(ConfigError, match="DISCORD_TOKEN"):
        load_settings(env, dotenv=None)


def test_require_token_false_allows_missing_token(tmp_path: Path) -> None:
    """Tools that do not log in may load the settings without a token."""
    env = {"CARDTABLE_DATABASE": str(tmp_path / "db.sqlite")}
    assert load_settings(env, dotenv=None, require_token=False).token == ""


# -- token secrecy ---------------------------------------------------------------------


def test_token_not_in_repr(tmp_path: Path) -> None:
    """Neither repr() nor str() of Settings shows the token."""
    settings = load(tmp_path, CARDTABLE_OWNER_IDS="7")
    for text in (repr(settings), str(settings), f"{settings}", f"{settings!r}"):
        assert TOKEN not in text
        assert "<hidden>" in text


def test_config_errors_never_show_the_token(tmp_path: Path) -> None:
    """An error about another setting does not echo the (valid) token."""
    message = config_error(tmp_path, CARDTABLE_LOG_LEVEL="LOUD")
    assert TOKEN not in message


def make_record(
    msg: object, args: tuple[object, ...] = (), exc_info: object = None
) -> logging.LogRecord:
    """A log record as a library would emit it."""
    return logging.LogRecord(
        "discord.http",
        logging.INFO,
        __file__,
        1,
        msg,
        args,
        exc_info,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("msg", "args"),
    [
        (f"token is {TOKEN}", ()),
        ("token is %s", (TOKEN,)),
        ("headers %r", ({"Authorization": f"Bot {TOKEN}"},)),
        ("%s and again %s", (TOKEN, TOKEN)),
    ],
)
def test_redacting_filter(msg: str, args: tuple[object, ...]) -> None:
    """A log record mentioning the token, in its message or its arguments, is redacted."""
    record = make_record(msg, args)
    assert RedactingFilter(TOKEN).filter(record) is True
    text = logging.Formatter("%(name)s %(message)s").format(record)
    assert TOKEN not in text
    assert "<token>" in text


def test_redacting_filter_keeps_other_records() -> None:
    """Records without the token pass through unchanged, arguments and all."""
    record = make_record("hello %s", ("world",))
    assert RedactingFilter(TOKEN).filter(record) is True
    assert record.msg == "hello %s"
    assert record.args == ("world",)
    assert record.getMessage() == "hello world"


def test_redacting_filter_with_empty_secret() -> None:
    """An empty secret (no token loaded) redacts nothing."""
    record = make_record("nothing %s", ("here",))
    assert RedactingFilter("").filter(record) is True
    assert record.getMessage() == "nothing here"


def test_redacting_filter_through_a_logger() -> None:
    """A logger whose handler has the filter never writes the token."""
    logger = logging.getLogger("cardtable.test.redact")
    stream = _ListHandler()
    stream.addFilter(RedactingFilter(TOKEN))
    logger.addHandler(stream)
    try:
        logger.warning("login with %s failed", TOKEN)
    finally:
        logger.removeHandler(stream)
    assert stream.lines == ["login with <token> failed"]


def test_redacting_filter_covers_exception_text() -> None:
    """A logged exception whose text contains the token is redacted too."""
    try:
        raise RuntimeError(f"request failed with token {TOKEN}")
    except RuntimeError:
        record = make_record("request failed", exc_info=sys.exc_info())
    RedactingFilter(TOKEN).filter(record)
    assert TOKEN not in logging.Formatter().format(record)


class _ListHandler(logging.Handler):
    """Collects formatted messages."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


# -- DATABASE_URL ---------------------------------------------------------------------------


def test_database_url_chooses_postgres_and_leaves_the_file_alone(tmp_path: Path) -> None:
    """With DATABASE_URL no SQLite file is created; its folder still takes the heartbeat."""
    url = "postgresql://bot:pw@db.example:5432/cardtable"
    path = tmp_path / "data" / "cardtable.db"
    settings = load(tmp_path, DATABASE_URL=f"  {url} ", CARDTABLE_DATABASE=str(path))
    assert settings.database_url == url
    assert settings.storage_target == url
    assert path.parent.is_dir() and not path.exists()
    assert load(tmp_path).storage_target == tmp_path / "db.sqlite"
    assert load(tmp_path, DATABASE_URL="").database_url is None


def test_database_password_never_shows(tmp_path: Path) -> None:
    """repr(Settings) and a refused URL hide the database password."""
    settings = load(tmp_path, DATABASE_URL="postgres://bot:hunter2@db:5432/x")
    assert "hunter2" not in repr(settings)
    assert "bot:***@db:5432" in repr(settings)
    with pytest.raises(ConfigError, match="DATABASE_URL") as raised:
        load(tmp_path, DATABASE_URL="mysql://bot:hunter2@db/x")
    assert "hunter2" not in str(raised.value)
    with pytest.raises(ConfigError, match="port"):
        load(tmp_path, DATABASE_URL="postgresql://bot@db:notaport/x")


def test_the_rest_rate_share_and_proxy_are_read(tmp_path: Path) -> None:
    """45 requests a second and all of it by default; a granted rate, a share, a proxy."""
    settings = load(tmp_path)
    assert (settings.rest_rate, settings.rest_share, settings.api_base) == (45.0, 1.0, None)
    assert settings.lane_rate == 45.0
    settings = load(
        tmp_path,
        CARDTABLE_REST_RATE="200",
        CARDTABLE_REST_SHARE="0.5",
        DISCORD_API_BASE=" http://nirn-proxy:8080/ ",
    )
    assert settings.lane_rate == 100.0
    assert settings.api_base == "http://nirn-proxy:8080"


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("CARDTABLE_REST_RATE", "0"),
        ("CARDTABLE_REST_RATE", "fast"),
        ("CARDTABLE_REST_RATE", "inf"),
        ("CARDTABLE_REST_SHARE", "1.5"),
        ("CARDTABLE_REST_SHARE", "-1"),
        ("DISCORD_API_BASE", "nirn-proxy:8080"),
        ("DISCORD_API_BASE", "http://nirn-proxy:8080/api/v10"),
    ],
)
def test_a_wrong_rate_setting_is_named(tmp_path: Path, name: str, raw: str) -> None:
    """A rate, share or proxy address that cannot be used stops the bot, naming it."""
    with pytest.raises(ConfigError, match=name):
        load(tmp_path, **{name: raw})


def test_the_table_idle_time_is_read(tmp_path: Path) -> None:
    """Tables leave memory after five minutes unused by default, or after the time set;
    a time that is not a positive number stops the bot, naming the setting."""
    assert load(tmp_path).table_idle_seconds == 300.0
    assert load(tmp_path, CARDTABLE_TABLE_IDLE_SECONDS="90").table_idle_seconds == 90.0
    for raw in ("0", "soon", "-5"):
        with pytest.raises(ConfigError, match="CARDTABLE_TABLE_IDLE_SECONDS"):
            load(tmp_path, CARDTABLE_TABLE_IDLE_SECONDS=raw)
