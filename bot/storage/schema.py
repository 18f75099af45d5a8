"""The schema, expressed once for both backends: the migration steps and the tables they make.

Steps are written in SQLite's SQL. PostgreSQL runs the same text after `postgres_ddl`, which
applies three rules: the `INTEGER PRIMARY KEY AUTOINCREMENT` id becomes a BIGINT identity,
a column named `*_id` declared INTEGER becomes BIGINT (Discord ids and table ids do not fit
in 32 bits), and REAL becomes DOUBLE PRECISION (timestamps). Every other INTEGER stays a
32-bit integer, so that SUM over it is a plain integer, not a numeric, on PostgreSQL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

# Every SQL table the bot keeps, parents before children (the order a copy inserts them).
# Not `handed_clicks`: its rows are clicks of the last few seconds, worthless in a copy.
TABLES = (
    "tables",
    "moves",
    "guild_settings",
    "games",
    "game_players",
    "ratings",
    "user_settings",
)


def dump(value: Any) -> str:
    """Compact JSON, as every JSON column is written.

    orjson writes the same JSON as ``json.dumps`` several times faster (every save writes
    the whole state); what it refuses (an integer past 64 bits, a lone surrogate) goes the slow way.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value, separators=(",", ":"))


def upgrade_extra(extra: dict[str, Any]) -> dict[str, Any]:
    """Rename the v2 `extra` keys to the v3 metadata fields; unknown keys are dropped."""
    meta: dict[str, Any] = {
        key: extra[key]
        for key in (
            "names",
            "user_locales",
            "locale",
            "opened_at",
            "away",
            "timeouts",
            "turn",
            "dm_closed",
            "hint_pending",
            "rematch_of",
        )
        if key in extra
    }
    if "bots" in extra:
        meta["computers"] = extra["bots"]
    notice = extra.get("notice")
    if isinstance(notice, list) and len(notice) == 2:
        meta["notice"] = {"key": notice[0], "player": str(notice[1].get("player", ""))}
    if extra.get("expired"):
        meta["closed_reason"] = "expired"
    return meta


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A data step SQL alone cannot express (a JSON column reshaped, say).

    Every row ``select`` returns is handed to ``convert`` as a tuple; its result are the
    parameters (``?``) of ``update``. Runs in the step's transaction on either backend.
    """

    select: str
    update: str
    convert: Callable[[tuple[Any, ...]], tuple[Any, ...]]


def _meta_from_extra(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """v3: the untyped `extra` bag becomes the typed table metadata (bot.table.meta)."""
    table_id, text = row
    return (dump(upgrade_extra(json.loads(text or "{}"))), table_id)


# A migration step is SQL (statements separated by `;`) or a Rewrite of existing rows.
Migration = str | Rewrite

# Each entry moves the schema one version up; never edit a released step, add a new one.
MIGRATIONS: Sequence[Migration] = (
    """
    CREATE TABLE tables (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        game TEXT NOT NULL,
        guild_id INTEGER,
        channel_id INTEGER NOT NULL,
        message_id INTEGER,
        host_id INTEGER NOT NULL,
        status TEXT NOT NULL,
        options TEXT NOT NULL,
        seats TEXT NOT NULL,
        state TEXT,
        move_number INTEGER NOT NULL DEFAULT 0,
        extra TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE UNIQUE INDEX one_open_table_per_channel
        ON tables (channel_id) WHERE status IN ('lobby', 'running');
    CREATE INDEX tables_by_status ON tables (status);
    CREATE TABLE moves (
        table_id INTEGER NOT NULL REFERENCES tables (id),
        move_number INTEGER NOT NULL,
        player TEXT NOT NULL,
        action TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (table_id, move_number)
    );
    """,
    # v2: per-server settings; language is the catalogue code of public table messages,
    # NULL for "follow the server's Discord language".
    """
    CREATE TABLE guild_settings (
        guild_id INTEGER PRIMARY KEY,
        language TEXT
    );
    """,
    # v3: optimistic concurrency (every save names the revision it replaces) and the
    # typed metadata column, converted from the old `extra` bag.
    """
    ALTER TABLE tables ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tables RENAME COLUMN extra TO meta;
    """,
    Rewrite(
        "SELECT id, meta FROM tables", "UPDATE tables SET meta = ? WHERE id = ?", _meta_from_extra
    ),
    # v4: the records. Every game that ends is kept (players in seat order, scores, ranks,
    # game-specific figures); ratings are maintained per server, game and player, so stats
    # and leaderboards are indexed reads, never replays.
    """
    CREATE TABLE games (
        table_id INTEGER PRIMARY KEY REFERENCES tables (id),
        guild_id INTEGER,
        channel_id INTEGER NOT NULL,
        game TEXT NOT NULL,
        status TEXT NOT NULL,
        seed TEXT NOT NULL,
        options TEXT NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL NOT NULL,
        moves INTEGER NOT NULL
    );
    CREATE INDEX games_by_guild ON games (guild_id, ended_at);
    CREATE TABLE game_players (
        table_id INTEGER NOT NULL REFERENCES games (table_id),
        seat INTEGER NOT NULL,
        guild_id INTEGER,
        game TEXT NOT NULL,
        status TEXT NOT NULL,
        player TEXT NOT NULL,
        seat_player TEXT NOT NULL,
        name TEXT NOT NULL,
        level TEXT,
        score INTEGER NOT NULL,
        rank INTEGER NOT NULL,
        won INTEGER NOT NULL,
        stats TEXT NOT NULL,
        rating_change REAL,
        PRIMARY KEY (table_id, seat)
    );
    CREATE INDEX game_players_by_player ON game_players (guild_id, game, player, status);
    CREATE TABLE ratings (
        guild_id INTEGER NOT NULL,
        game TEXT NOT NULL,
        player TEXT NOT NULL,
        name TEXT NOT NULL,
        is_computer INTEGER NOT NULL,
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        games INTEGER NOT NULL,
        PRIMARY KEY (guild_id, game, player)
    );
    CREATE INDEX ratings_board ON ratings (guild_id, game, is_computer, games);
    """,
    # Whether a server's table messages carry a picture of the table; NULL is the default
    # (on), 0 is off (/cardtable images).
    "ALTER TABLE guild_settings ADD COLUMN images INTEGER",
    # When a server's turns ping the player (NULL: the default, every turn; "half": at
    # half time only; "off": never; /cardtable pings) and whether its tables open in a
    # thread of their own by default (NULL or 0: no; 1: yes; /cardtable threads).
    """
    ALTER TABLE guild_settings ADD COLUMN turn_pings TEXT;
    ALTER TABLE guild_settings ADD COLUMN threads INTEGER;
    """,
    # When a table's next timed event (a computer's move, a ping, a timeout, a lobby's
    # expiry) falls due, in the bot's clock, written by the save that plans it: one loop
    # per process reads what falls due from the index, so an idle table need not be in
    # memory. NULL when nothing is due. Open tables of an older version are due at once:
    # the first start loads them and writes their real due times.
    """
    ALTER TABLE tables ADD COLUMN due_at REAL;
    UPDATE tables SET due_at = 0 WHERE status IN ('lobby', 'running');
    CREATE INDEX tables_by_due ON tables (due_at) WHERE due_at IS NOT NULL;
    """,
    # Play by post: the pace new tables get by default (NULL: live; else a name of
    # bot.table.meta.PACES, /cardtable pace) and whether turn-based tables also ping in
    # the channel beside the "your turn" DM (NULL or "dm": DM only; "both"); and each
    # person's choice of turn notices (/cardtable notify; NULL: every turn) and their
    # absence (/cardtable away: until when, and the days of that year already taken).
    """
    ALTER TABLE guild_settings ADD COLUMN pace TEXT;
    ALTER TABLE guild_settings ADD COLUMN pace_pings TEXT;
    CREATE TABLE user_settings (
        user_id INTEGER PRIMARY KEY,
        notify TEXT,
        away_until REAL,
        away_year INTEGER,
        away_used INTEGER
    );
    """,
    # When a person's last daily summary of turn-based tables went out (the bot's clock;
    # NULL: never), so that a restart does not send a second one within the day.
    "ALTER TABLE user_settings ADD COLUMN summary_at REAL",
    # Issue 43, several processes: when each person's absence was last set or ended, on
    # the tables' clock (NULL: never since this step). Every process reads the absences
    # changed since its last look from this index on its scheduler's wake, and holds or
    # releases their tables of its own shards; start-up reads the running ones by
    # away_until.
    """
    ALTER TABLE user_settings ADD COLUMN away_set_at REAL;
    CREATE INDEX user_settings_by_away_set ON user_settings (away_set_at)
        WHERE away_set_at IS NOT NULL;
    CREATE INDEX user_settings_by_away_until ON user_settings (away_until)
        WHERE away_until IS NOT NULL;
    """,
    # Clicks handed between processes (PostgreSQL, several processes): Discord sends every
    # DM interaction to shard 0, so a "your turn" DM's click for a table of another shard
    # is handed to the process that runs it, which claims it and answers it through the
    # interaction's token; the receiver cancels it if nobody claims it in time. Rows live
    # seconds (deleted once settled, and any left old); never copied by migrate-to-postgres.
    """
    CREATE TABLE handed_clicks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        shard INTEGER NOT NULL,
        payload TEXT NOT NULL,
        handed_at REAL NOT NULL,
        claimed_at REAL,
        claimed_by TEXT,
        cancelled INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX handed_clicks_by_time ON handed_clicks (handed_at);
    """,
)

_ID_COLUMN = re.compile(r"\b(\w+_id) INTEGER\b")
_REAL = re.compile(r"\bREAL\b")


def postgres_ddl(sql: str) -> str:
    """A step's SQLite DDL in PostgreSQL's types (the three rules in the module docstring)."""
    sql = sql.replace(
        "INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    )
    sql = _ID_COLUMN.sub(r"\1 BIGINT", sql)
    return _REAL.sub("DOUBLE PRECISION", sql)


def statements(script: str) -> list[str]:
    """The statements of a step's SQL, split at `;` (steps hold no `;` inside literals)."""
    return [statement for statement in script.split(";") if statement.strip()]
