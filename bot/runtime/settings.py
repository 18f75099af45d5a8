"""Settings from the environment, with an optional `.env` file that never overrides it."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

DEFAULT_DATABASE = Path("data") / "cardtable.db"
# Three base64url parts separated by dots: the shape of every Discord bot token.
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("", "0", "false", "no", "off")
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
# Far above any real bot's shard count: a stray digit in SHARD_COUNT would otherwise make
# discord.py open that many gateway connections (and SHARD_IDS expand to that many ids).
MAX_SHARD_COUNT = 100_000
# Requests a second outside interaction answers: below Discord's global limit of 50, with
# room for what the lane does not send (command syncs, a fetched message after an answer).
DEFAULT_REST_RATE = 45.0


def machine_workers() -> int:
    """Thinking workers for this machine: every core but one for the event loop, at least 1."""
    return max(1, (os.cpu_count() or 1) - 1)


class ConfigError(Exception):
    """A setting is missing or wrong; the message names it in one line."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the bot reads from its environment."""

    token: str
    database: Path
    log_level: str = "INFO"
    dev_guild_id: int | None = None
    owner_ids: frozenset[int] = frozenset()
    http_debug: bool = False
    # DATABASE_URL: a PostgreSQL database instead of the SQLite file. The file's folder
    # still holds the heartbeat (bot.runtime.health).
    database_url: str | None = None

    @property
    def database_secrets(self) -> tuple[str, ...]:
        """The database password, in every spelling that may reach a log line."""
        if self.database_url is None:
            return ()
        # A URL that cannot be read is refused at start-up and never gets this far.
        return parse_database_url(self.database_url).secrets

    @property
    def storage_target(self) -> Path | str:
        """What the bot's storage opens: the PostgreSQL URL if set, else the SQLite file."""
        return self.database_url or self.database

    # None: discord.py asks Discord for the count and this process runs every shard.
    shard_count: int | None = None
    # None: every shard of shard_count; otherwise the ones this process runs, ascending.
    shard_ids: tuple[int, ...] | None = None
    # Worker processes for computer players' searches; 0 thinks in a thread of the bot.
    ai_workers: int = field(default_factory=machine_workers)
    # CARDTABLE_REST_RATE: requests a second the token may make outside interaction
    # answers (Discord's global limit is 50; bots granted more may raise it).
    rest_rate: float = DEFAULT_REST_RATE
    # CARDTABLE_REST_SHARE: the part of that rate this process paces itself to, when
    # several processes share the token (behind a rate-limiting proxy, say).
    rest_share: float = 1.0
    # DISCORD_API_BASE: a rate-limiting REST proxy every process talks to instead of
    # https://discord.com (nirn-proxy); None talks to Discord directly.
    api_base: str | None = None
    # CARDTABLE_TABLE_IDLE_SECONDS: a table with no click, change or timed event for this
    # long leaves memory (its row stays; its next click, command or due time loads it).
    table_idle_seconds: float = 300.0

    @property
    def lane_rate(self) -> float:
        """Requests a second this process's outbound lane may start."""
        return self.rest_rate * self.rest_share

    def __repr__(self) -> str:
        # The token (and a database password) must never reach a log line or a traceback.
        url = None if self.database_url is None else hide_password(self.database_url)
        return (
            f"Settings(token=<hidden>, database={str(self.database)!r}, database_url={url!r}, "
            f"log_level={self.log_level!r}, dev_guild_id={self.dev_guild_id!r}, "
            f"owner_ids={sorted(self.owner_ids)!r}, http_debug={self.http_debug!r}, "
            f"shard_count={self.shard_count!r}, shard_ids={self.shard_ids!r}, "
            f"ai_workers={self.ai_workers!r}, rest_rate={self.rest_rate!r}, "
            f"rest_share={self.rest_share!r}, api_base={self.api_base!r}, "
            f"table_idle_seconds={self.table_idle_seconds!r})"
        )


def parse_dotenv(text: str) -> dict[str, str]:
    """Parse `.env` text: KEY=VALUE lines, `#` comments, optional quotes and `export`."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, value = line.split("=", 1)
        key, value = key.strip(), value.strip()
        if value[:1] in ("'", '"') and value.find(value[0], 1) > 0:
            # A quoted value ends at its closing quote; anything after it is a comment.
            value = value[1 : value.find(value[0], 1)]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if key:
            values[key] = value
    return values


def load_dotenv(path: Path, environ: MutableMapping[str, str]) -> None:
    """Copy `.env` values into ``environ`` for keys it does not already have."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    for key, value in parse_dotenv(text).items():
        environ.setdefault(key, value)


def check_token(token: str | None) -> str:
    """Return the token if it looks like a Discord bot token, else raise ConfigError."""
    if not token or not token.strip():
        raise ConfigError(
            "DISCORD_TOKEN is not set: put your bot token in the environment or in .env"
        )
    token = token.strip()
    if not TOKEN_SHAPE.match(token):
        raise ConfigError(
            "DISCORD_TOKEN is malformed: expected three dot-separated parts "
            "as shown in the Discord developer portal"
        )
    return token


def check_database(path: Path) -> Path:
    """Make sure the database's folder exists and the database can be opened for writing."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"CARDTABLE_DATABASE {path}: cannot create folder {path.parent} ({exc.strerror})"
        ) from None
    if path.is_dir():
        raise ConfigError(f"CARDTABLE_DATABASE {path} is a folder, not a database file")
    try:
        # A write transaction proves the file and its folder (journal files) are writable.
        connection = sqlite3.connect(path, timeout=5)
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("ROLLBACK")
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise ConfigError(f"CARDTABLE_DATABASE {path} is not writable ({exc})") from None
    return path


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """A DATABASE_URL as the driver reads it: where it points, and the password to hide."""

    user: str | None
    database: str | None
    addresses: tuple[str, ...]  # host:port, or a Unix socket's path
    # Every spelling of the password that may appear in text (as given, percent-encoded).
    secrets: tuple[str, ...]

    def shown(self) -> str:
        """The URL for messages and logs: no password, no query (which may hold one)."""
        user = self.user or ""
        if self.secrets:
            user += ":***"
        at = f"{user}@" if user else ""
        return f"postgresql://{at}{','.join(self.addresses)}/{self.database or ''}"


UNREADABLE_URL = (
    "DATABASE_URL cannot be read as a PostgreSQL URL (its value is not shown, as it may"
    " hold a password): expected postgresql://user:password@host:5432/database, with a"
    " port from 1 to 65535 and any / # ? @ : in the password percent-encoded (/ is %2F)"
)


def parse_database_url(raw: str) -> DatabaseUrl:
    """Read a DATABASE_URL with asyncpg's own DSN parser (what the bot will connect with);
    ConfigError, never echoing the value, for anything it would not take as given."""
    # asyncpg's DSN parser is internal (connect_utils); uv.lock pins the version, and
    # tests/test_settings.py checks every form against it.
    from asyncpg import connect_utils  # type: ignore[import-untyped]

    scheme = urlsplit(raw).scheme if "://" in raw else ""
    if scheme not in ("postgresql", "postgres") or not raw.startswith(f"{scheme}://"):
        # Not a URL asyncpg reads as one: a libpq key=value string, `postgresql:/…` or a
        # scheme-less `user:password@host` (where the password may be anywhere).
        raise ConfigError(UNREADABLE_URL)
    try:
        addresses, params = connect_utils._parse_connect_dsn_and_args(
            dsn=raw,
            host=None,
            port=None,
            user=None,
            password=None,
            passfile=None,
            database=None,
            ssl=None,
            service=None,
            servicefile=None,
            direct_tls=None,
            server_settings=None,
            target_session_attrs=None,
            krbsrvname=None,
            gsslib=None,
        )
    except Exception:
        # The driver's message may quote part of the value (a password cut at a `/`).
        raise ConfigError(UNREADABLE_URL) from None
    shown: list[str] = []
    for address in addresses:
        if isinstance(address, tuple):
            host, port = address
            if "@" in str(host):
                # The driver split the user part at its first @: the rest of a password
                # holding an unescaped @ would pass for the host, and be shown as one.
                raise ConfigError(UNREADABLE_URL)
            if not 1 <= int(port) <= 65535:
                raise ConfigError(f"DATABASE_URL has port {port}: a port is from 1 to 65535")
            shown.append(f"{host}:{port}")
        else:
            shown.append(str(address))
    secrets: set[str] = set()
    if params.password:
        secrets.update({params.password, quote(params.password, safe="")})
    given = urlsplit(raw).password  # the password as written, percent-encoded or not
    if given:
        secrets.add(given)
    # Longest first: a redaction must not leave the tail of a longer spelling behind.
    ordered = tuple(sorted(secrets, key=len, reverse=True))
    return DatabaseUrl(params.user, params.database, tuple(shown), ordered)


def hide_password(url: str) -> str:
    """A database URL for messages and logs: read by the driver's parser, its password
    (and query) left out; a URL that cannot be read is not shown at all."""
    try:
        return parse_database_url(url).shown()
    except ConfigError:
        return "<unreadable DATABASE_URL>"


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Text with every secret replaced by ***."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def check_database_url(raw: str | None) -> str | None:
    """A postgresql:// URL the driver can read, None when unset, else ConfigError (which
    never shows the value: it may hold a password)."""
    url = (raw or "").strip()
    if not url:
        return None
    parse_database_url(url)
    return url


def check_heartbeat_folder(path: Path) -> Path:
    """With PostgreSQL the SQLite file is unused, but its folder keeps the heartbeat."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"CARDTABLE_DATABASE {path}: cannot create folder {path.parent} ({exc.strerror})"
        ) from None
    return path


def _boolean(environ: Mapping[str, str], name: str) -> bool:
    raw = environ.get(name, "").strip().lower()
    if raw in TRUE_WORDS:
        return True
    if raw in FALSE_WORDS:
        return False
    raise ConfigError(f"{name} must be 1, true, yes or on, or 0, false, no or off")


def database_path(environ: Mapping[str, str]) -> Path:
    """The configured database path, unchecked (the health check only reads beside it)."""
    return Path(environ.get("CARDTABLE_DATABASE", "").strip() or DEFAULT_DATABASE)


def _optional_int(environ: Mapping[str, str], name: str) -> int | None:
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise ConfigError(f"{name} must be a Discord id (digits only), not {raw!r}")
    return int(raw)


def parse_shard_count(raw: str) -> int | None:
    """SHARD_COUNT: empty for Discord's choice, else a whole number from 1."""
    raw = raw.strip()
    if not raw:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_SHARD_COUNT:
        raise ConfigError(
            f"SHARD_COUNT must be a whole number from 1 to {MAX_SHARD_COUNT}, not {raw!r}"
        )
    return int(raw)


def parse_shard_ids(raw: str, count: int) -> tuple[int, ...]:
    """SHARD_IDS such as ``0-3`` or ``0,2,5-7``: ids and inclusive ranges, each id once."""
    ids: set[int] = set()
    for part in raw.split(","):
        item = part.strip()
        if not item:
            raise ConfigError(f"SHARD_IDS has an empty entry in {raw.strip()!r}")
        low_text, dash, high_text = (text.strip() for text in item.partition("-"))
        if not low_text.isdigit() or (dash and not high_text.isdigit()):
            raise ConfigError(
                f"SHARD_IDS entry {item!r} is neither a shard id nor a range like 0-3"
            )
        low = int(low_text)
        high = int(high_text) if dash else low
        if high < low:
            raise ConfigError(f"SHARD_IDS range {item!r} runs backwards")
        if high >= count:
            raise ConfigError(
                f"SHARD_IDS entry {item!r} is outside 0-{count - 1} (SHARD_COUNT is {count})"
            )
        repeated = ids.intersection(range(low, high + 1))
        if repeated:
            raise ConfigError(f"SHARD_IDS lists shard {min(repeated)} more than once")
        ids.update(range(low, high + 1))
    return tuple(sorted(ids))


def shard_settings(environ: Mapping[str, str]) -> tuple[int | None, tuple[int, ...] | None]:
    """SHARD_COUNT and SHARD_IDS together: ids need a count; neither means Discord's choice."""
    count = parse_shard_count(environ.get("SHARD_COUNT", ""))
    raw_ids = environ.get("SHARD_IDS", "").strip()
    if not raw_ids:
        return count, None
    if count is None:
        raise ConfigError(
            "SHARD_IDS needs SHARD_COUNT: set the total number of shards of every process too"
        )
    return count, parse_shard_ids(raw_ids, count)


def ai_workers(environ: Mapping[str, str]) -> int:
    """CARDTABLE_AI_WORKERS: worker processes for searches (default: sized to the machine)."""
    raw = environ.get("CARDTABLE_AI_WORKERS", "").strip()
    if not raw:
        return machine_workers()
    if not raw.isdigit():
        raise ConfigError(
            f"CARDTABLE_AI_WORKERS must be a number of worker processes (0 thinks in the "
            f"bot's own process), not {raw!r}"
        )
    return int(raw)


def _positive_number(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ConfigError(f"{name} must be a positive number, not {raw!r}")
    return value


def rest_share(environ: Mapping[str, str]) -> float:
    """CARDTABLE_REST_SHARE: the part of the token's rate this process uses (0 to 1]."""
    share = _positive_number(environ, "CARDTABLE_REST_SHARE", 1.0)
    if share > 1:
        raise ConfigError(f"CARDTABLE_REST_SHARE must be at most 1 (all of it), not {share!r}")
    return share


def api_base(environ: Mapping[str, str]) -> str | None:
    """DISCORD_API_BASE: http(s)://host[:port] of a REST proxy, without /api/v10."""
    raw = environ.get("DISCORD_API_BASE", "").strip().rstrip("/")
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
        raise ConfigError(
            f"DISCORD_API_BASE must be a proxy's address such as http://nirn-proxy:8080 "
            f"(no path: /api/v10 is added), not {raw!r}"
        )
    return raw


def load_settings(
    environ: MutableMapping[str, str] | None = None,
    dotenv: Path | None = Path(".env"),
    *,
    require_token: bool = True,
) -> Settings:
    """Read and check every setting; raise ConfigError naming the first problem."""
    environ = os.environ if environ is None else environ
    if dotenv is not None:
        load_dotenv(dotenv, environ)
    token = check_token(environ.get("DISCORD_TOKEN")) if require_token else ""
    level = environ.get("CARDTABLE_LOG_LEVEL", "INFO").strip().upper() or "INFO"
    if level not in LOG_LEVELS:
        raise ConfigError(f"CARDTABLE_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}")
    owners_raw = environ.get("CARDTABLE_OWNER_IDS", "").replace(",", " ").split()
    if any(not part.isdigit() for part in owners_raw):
        raise ConfigError("CARDTABLE_OWNER_IDS must be Discord ids separated by commas")
    http_debug = _boolean(environ, "CARDTABLE_HTTP_DEBUG")
    database = database_path(environ)
    database_url = check_database_url(environ.get("DATABASE_URL"))
    shard_count, shard_ids = shard_settings(environ)
    return Settings(
        token=token,
        database=check_heartbeat_folder(database) if database_url else check_database(database),
        database_url=database_url,
        log_level=level,
        dev_guild_id=_optional_int(environ, "CARDTABLE_DEV_GUILD_ID"),
        owner_ids=frozenset(int(part) for part in owners_raw),
        http_debug=http_debug,
        shard_count=shard_count,
        shard_ids=shard_ids,
        ai_workers=ai_workers(environ),
        rest_rate=_positive_number(environ, "CARDTABLE_REST_RATE", DEFAULT_REST_RATE),
        rest_share=rest_share(environ),
        api_base=api_base(environ),
        table_idle_seconds=_positive_number(environ, "CARDTABLE_TABLE_IDLE_SECONDS", 300.0),
    )


class RedactingFilter(logging.Filter):
    """Replaces the token (and any other secret: the database password) in every log
    record, in case a library ever prints it."""

    def __init__(self, secret: str, *others: str) -> None:
        super().__init__()
        self.secret = secret
        # The token is named as such; other secrets become ***. Longest first, so that no
        # tail of a longer spelling is left behind.
        self.replacements = [(secret, "<token>")] if secret else []
        self.replacements += [
            (other, "***") for other in sorted(set(others), key=len, reverse=True) if other
        ]

    def _redacted(self, text: str) -> str:
        for secret, replacement in self.replacements:
            text = text.replace(secret, replacement)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the secrets from the message, the exception text and the stack."""
        if not self.replacements:
            return True
        message = record.getMessage()
        redacted = self._redacted(message)
        if redacted != message:
            record.msg = redacted
            record.args = ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            text = self._redacted(record.exc_text)
            if text != record.exc_text:
                record.exc_text = text
                # The formatter would rebuild the text from exc_info; keep the redacted copy.
                record.exc_info = None
        if record.stack_info:
            record.stack_info = self._redacted(record.stack_info)
        return True
