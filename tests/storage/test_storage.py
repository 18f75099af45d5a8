"""Storage on both backends: migrations, table round trips, one open table per channel, the
move log, optimistic concurrency and the shard claim."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import warnings
from collections.abc import AsyncIterator, Callable

import pytest

from bot.queries.players import NoThanksFigures, leaderboard, player_stats
from bot.records.results import GameResult, PlayerResult
from bot.storage import (
    MIGRATIONS,
    OPEN_STATUSES,
    ChannelBusy,
    SchemaTooNew,
    ShardClaimed,
    ShardCountMismatch,
    SqliteStorage,
    StaleWrite,
    Storage,
    TableRecord,
)
from bot.table.shards import shard_of
from tests.backends import Backend

LATEST = len(MIGRATIONS)
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


@pytest.fixture
async def storage(backend: Backend) -> AsyncIterator[Storage]:
    """A freshly migrated database, closed after the test."""
    opened = await backend.open()
    try:
        yield opened
    finally:
        await opened.close()


def lobby(channel_id: int = 100, **fields: object) -> TableRecord:
    """A No Thanks! lobby record in a channel."""
    values: dict[str, object] = {
        "game": "nothanks",
        "guild_id": 1,
        "channel_id": channel_id,
        "host_id": 11,
        "seats": [11],
    }
    values.update(fields)
    return TableRecord(**values)  # type: ignore[arg-type]


async def reopen(backend: Backend) -> Storage:
    """A second, independent connection to the same database."""
    return await backend.open()


# -- migrations ------------------------------------------------------------------------


async def test_new_database_is_migrated_to_latest(storage: Storage, backend: Backend) -> None:
    """A new database reaches the latest schema version with every table."""
    assert LATEST >= 1
    assert await storage.schema_version() == LATEST
    assert await backend.schema_version() == LATEST
    names = await backend.table_names()
    assert {"tables", "moves", "guild_settings", "games", "game_players", "ratings"} <= names


async def test_migrations_are_idempotent_on_reopen(backend: Backend) -> None:
    """Reopening a migrated database changes neither its version nor its data."""
    first = await backend.open()
    record = await first.create_table(lobby())
    await first.close()
    for _ in range(2):
        again = await reopen(backend)
        try:
            assert await again.schema_version() == LATEST
            await again.migrate()
            assert await again.schema_version() == LATEST
            assert await again.get_table(record.id or 0) == record
        finally:
            await again.close()


# The leaked connection is the subject of test_refused_database_is_closed below.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_database_newer_than_code_is_refused(backend: Backend) -> None:
    """A database from a newer version of the bot is refused, not downgraded or touched."""
    await backend.set_schema_version(LATEST + 1)
    with pytest.raises(SchemaTooNew, match="newer"):
        await backend.open()
    assert await backend.schema_version() == LATEST + 1
    assert "tables" not in await backend.table_names()


async def test_refused_database_is_closed(backend: Backend) -> None:
    """Refusing a newer database closes its connections instead of leaking them."""
    await backend.set_schema_version(LATEST + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(SchemaTooNew):
            await backend.open()
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


@SQLITE_ONLY
async def test_wal_mode(storage: Storage) -> None:
    """The SQLite file runs in WAL mode, so a crash never loses a committed move."""
    assert isinstance(storage, SqliteStorage)
    async with storage._db.execute("PRAGMA journal_mode") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    assert str(row[0]).lower() == "wal"


# -- tables ----------------------------------------------------------------------------


async def test_create_assigns_ids(storage: Storage) -> None:
    """create_table sets a fresh id on each record."""
    first = await storage.create_table(lobby(100))
    second = await storage.create_table(lobby(200))
    assert first.id is not None
    assert second.id is not None
    assert first.id != second.id


async def test_round_trip(storage: Storage, backend: Backend) -> None:
    """Options, seats, state and metadata survive create, save and a fresh get."""
    record = await storage.create_table(
        lobby(
            options={"open_chips": True},
            seats=[11, 22, 33],
            meta={"names": {"11": "Ann", "22": "Bo"}, "locale": "de"},
        )
    )
    assert record.id is not None
    assert await storage.get_table(record.id) == record

    record.status = "running"
    record.message_id = 555
    record.host_id = 22
    record.state = {"version": 1, "pile": [3, 35], "chips": [11, 11, 11], "nested": {"a": None}}
    record.move_number = 7
    record.meta["user_locales"] = {"11": "en-US", "22": "ru"}
    record.meta["names"]["33"] = "Čeněk 🃏"
    await storage.save_table(record)

    again = await reopen(backend)
    try:
        loaded = await again.get_table(record.id)
    finally:
        await again.close()
    assert loaded == record
    assert loaded is not None
    assert loaded.is_open


async def test_get_unknown_table(storage: Storage) -> None:
    """get_table of an id that does not exist is None."""
    assert await storage.get_table(12345) is None


async def test_save_without_id_is_refused(storage: Storage) -> None:
    """save_table of a record that was never created raises ValueError."""
    with pytest.raises(ValueError):
        await storage.save_table(lobby())


async def test_second_open_table_in_channel_is_busy(storage: Storage) -> None:
    """A second lobby or game in a channel with an open table raises ChannelBusy."""
    first = await storage.create_table(lobby(100))
    with pytest.raises(ChannelBusy):
        await storage.create_table(lobby(100))
    first.status = "running"
    await storage.save_table(first)
    with pytest.raises(ChannelBusy):
        await storage.create_table(lobby(100, status="running"))
    assert [table.id for table in await storage.open_tables()] == [first.id]


@pytest.mark.parametrize("status", ["finished", "cancelled", "abandoned"])
async def test_closed_table_does_not_block_channel(storage: Storage, status: str) -> None:
    """Once a channel's table is finished, cancelled or abandoned, a new one may open."""
    first = await storage.create_table(lobby(100))
    first.status = status
    await storage.save_table(first)
    second = await storage.create_table(lobby(100))
    assert second.id != first.id
    third_channel = await storage.create_table(lobby(300))
    assert third_channel.id is not None


async def test_storage_usable_after_channel_busy(storage: Storage) -> None:
    """A refused create leaves no open transaction behind: later writes still commit."""
    first = await storage.create_table(lobby(100))
    with pytest.raises(ChannelBusy):
        await storage.create_table(lobby(100))
    first.move_number = 1
    await storage.save_table(first, ("11", "take"))
    assert await storage.moves(first.id or 0) == [(1, "11", "take")]


# -- the move log ----------------------------------------------------------------------


async def test_save_with_move_commits_both(storage: Storage, backend: Backend) -> None:
    """A saved move and the table state it produced are both visible to a new connection."""
    record = await storage.create_table(lobby(status="running", state={"n": 0}))
    assert record.id is not None
    for number, (player, action) in enumerate([("11", "pass"), ("22", "take")], start=1):
        record.move_number = number
        record.state = {"n": number}
        await storage.save_table(record, (player, action))

    other = await reopen(backend)
    try:
        assert await other.moves(record.id) == [(1, "11", "pass"), (2, "22", "take")]
        loaded = await other.get_table(record.id)
        assert loaded is not None
        assert loaded.state == {"n": 2}
        assert loaded.move_number == 2
    finally:
        await other.close()


async def test_save_without_move_leaves_log_alone(storage: Storage) -> None:
    """Saving a table without a move (a lobby change) adds nothing to the move log."""
    record = await storage.create_table(lobby())
    record.seats.append(22)
    await storage.save_table(record)
    assert await storage.moves(record.id or 0) == []


async def test_save_of_some_columns_leaves_the_others_as_stored(
    storage: Storage, backend: Backend
) -> None:
    """A save naming its changed columns writes those and keeps the rest as stored, with
    the revision check and the move log as for a whole save."""
    record = await storage.create_table(lobby(status="running", state={"n": 0}))
    assert record.id is not None
    record.move_number = 1
    record.state = {"n": 1}
    record.meta = {"turn": 1}
    # In memory only: a save that does not name them must not write them.
    record.seats = [99]
    record.options = {"open_chips": True}
    record.status = "finished"
    await storage.save_table(record, ("11", "pass"), columns=["state", "move_number", "meta"])
    assert record.revision == 1

    other = await reopen(backend)
    try:
        loaded = await other.get_table(record.id)
        assert loaded is not None
        assert (loaded.state, loaded.move_number, loaded.meta) == ({"n": 1}, 1, {"turn": 1})
        assert (loaded.seats, loaded.options, loaded.status) == ([11], {}, "running")
        assert loaded.revision == 1
        assert await other.moves(record.id) == [(1, "11", "pass")]
    finally:
        await other.close()
    with pytest.raises(StaleWrite):
        await storage.save_table(record, ("22", "take"), expect_revision=0, columns=["meta"])


async def test_save_refuses_a_column_that_is_not_one(storage: Storage) -> None:
    """A misspelt column is an error, not a column silently left unsaved."""
    record = await storage.create_table(lobby())
    with pytest.raises(ValueError, match="staus"):
        await storage.save_table(record, columns=["meta", "staus"])
    assert record.revision == 0


async def test_game_end_saved_without_meta_still_keeps_the_rating_changes(
    storage: Storage,
) -> None:
    """The rating changes a finished game's save adds go into the stored metadata even
    when the change itself named no metadata."""
    record = await storage.create_table(
        lobby(guild_id=DISCORD_ID, channel_id=DISCORD_ID + 1, status="running")
    )
    record.status = "finished"
    record.move_number = 5
    result = result_of(record, ("11", 30), ("22", 12))
    await storage.save_table(record, ("11", "take"), result=result, columns=["status"])
    loaded = await storage.get_table(record.id or 0)
    assert loaded is not None and loaded.status == "finished"
    assert set(loaded.meta["rating_changes"]) == {"11", "22"}


async def test_failed_move_rolls_back_state(storage: Storage, backend: Backend) -> None:
    """If the move cannot be logged, the table update is rolled back with it."""
    record = await storage.create_table(lobby(status="running", state={"n": 0}))
    assert record.id is not None
    record.move_number = 1
    record.state = {"n": 1}
    await storage.save_table(record, ("11", "pass"))

    record.state = {"n": "clobbered"}  # same move number: the log refuses a duplicate
    with pytest.raises(backend.integrity_error):
        await storage.save_table(record, ("22", "take"))

    other = await reopen(backend)
    try:
        loaded = await other.get_table(record.id)
        assert loaded is not None
        assert loaded.state == {"n": 1}
        assert await other.moves(record.id) == [(1, "11", "pass")]
    finally:
        await other.close()


async def test_moves_are_per_table(storage: Storage) -> None:
    """Each table has its own move log, numbered independently."""
    one = await storage.create_table(lobby(100, status="running"))
    two = await storage.create_table(lobby(200, status="running"))
    one.move_number = two.move_number = 1
    await storage.save_table(one, ("11", "take"))
    await storage.save_table(two, ("22", "pass"))
    assert await storage.moves(one.id or 0) == [(1, "11", "take")]
    assert await storage.moves(two.id or 0) == [(1, "22", "pass")]


# -- open tables -----------------------------------------------------------------------


async def test_open_tables_only_lobby_and_running(storage: Storage) -> None:
    """open_tables lists lobbies and running games, oldest first, never closed tables."""
    statuses = ["lobby", "finished", "running", "cancelled", "abandoned", "lobby"]
    created = [
        await storage.create_table(lobby(1000 + index, status=status))
        for index, status in enumerate(statuses)
    ]
    expected = [record.id for record in created if record.status in OPEN_STATUSES]
    assert [record.id for record in await storage.open_tables()] == expected
    assert all(record.is_open for record in await storage.open_tables())
    assert not any(record.is_open for record in created if record.id not in expected)


async def test_open_tables_filters_by_game(storage: Storage) -> None:
    """open_tables(game) lists only that game's tables."""
    nothanks = await storage.create_table(lobby(100))
    rage = await storage.create_table(lobby(200, game="rage"))
    assert [r.id for r in await storage.open_tables("nothanks")] == [nothanks.id]
    assert [r.id for r in await storage.open_tables("rage")] == [rage.id]
    assert await storage.open_tables("other") == []


@pytest.mark.parametrize(
    ("count", "ids"),
    [(1, [0]), (2, [0]), (2, [1]), (4, [1, 3]), (4, [0, 1, 2, 3]), (7, [5]), (7, [1, 3])],
)
async def test_open_tables_of_some_shards(storage: Storage, count: int, ids: list[int]) -> None:
    """open_tables with shards reads exactly the tables Discord routes to them: the guild's
    (guild_id >> 22) % count, direct messages on shard 0, up to the largest snowflakes."""
    guilds: list[int | None] = [None, 1, (1 << 22) * 3, (1 << 22) * 5 + 17]
    guilds += [(1 << 63) - 1, 1_234_567_890_123_456_789, 987_654_321 << 22]
    created = [
        await storage.create_table(lobby(100 + index, guild_id=guild, status=status))
        for index, guild in enumerate(guilds)
        for status in ("running", "finished")
    ]
    expected = [
        record.id
        for record in created
        if record.is_open and shard_of(record.guild_id, count) in ids
    ]
    assert expected  # every case reads some tables, and most leave some out
    read = await storage.open_tables(None, count, ids)
    assert [record.id for record in read] == expected
    assert [r.id for r in await storage.open_tables("rage", count, ids)] == []
    with pytest.raises(ValueError, match="shard count"):
        await storage.open_tables(None, None, ids)


async def test_closing_a_table_removes_it_from_open_tables(storage: Storage) -> None:
    """A table saved as finished no longer appears among the open tables."""
    record = await storage.create_table(lobby(status="running"))
    assert [r.id for r in await storage.open_tables()] == [record.id]
    record.status = "finished"
    await storage.save_table(record)
    assert await storage.open_tables() == []


# -- optimistic concurrency, records, settings -------------------------------------------

GUILD = 1
DISCORD_ID = 1 << 62  # a snowflake far beyond 32 bits


def result_of(record: TableRecord, *scores: tuple[str, int]) -> GameResult:
    """A finished game's result: players ranked by score, lowest first (No Thanks!)."""
    ranked = sorted(scores, key=lambda pair: pair[1])
    return GameResult(
        table_id=record.id or 0,
        guild_id=record.guild_id,
        channel_id=record.channel_id,
        game=record.game,
        status="finished",
        seed="7",
        options={},
        started_at=10.0,
        ended_at=20.5,
        moves=record.move_number,
        players=tuple(
            PlayerResult(
                seat=seat,
                player=player,
                name=f"p{player}",
                level=None,
                score=score,
                rank=1 + [s for _, s in ranked].index(score),
                stats={"chips": 3 + seat, "longest_run": 2},
            )
            for seat, (player, score) in enumerate(scores)
        ),
    )


async def test_stale_save_is_refused_and_changes_nothing(
    storage: Storage, backend: Backend
) -> None:
    """Two writers load revision 0; the second save is StaleWrite and leaves the first's work."""
    mine = await storage.create_table(lobby(status="running", state={"n": 0}))
    other = await reopen(backend)
    try:
        theirs = await other.get_table(mine.id or 0)
        assert theirs is not None
        theirs.move_number = 1
        theirs.state = {"n": "theirs"}
        await other.save_table(theirs, ("22", "take"))
    finally:
        await other.close()
    mine.move_number = 1
    mine.state = {"n": "mine"}
    with pytest.raises(StaleWrite):
        await storage.save_table(mine, ("11", "pass"))
    assert mine.revision == 0
    loaded = await storage.get_table(mine.id or 0)
    assert loaded is not None and loaded.state == {"n": "theirs"} and loaded.revision == 1
    assert await storage.moves(mine.id or 0) == [(1, "22", "take")]


async def test_racing_saves_of_one_revision_let_exactly_one_through(
    storage: Storage, backend: Backend
) -> None:
    """Saves racing from separate connections on one revision: one commits, the rest are stale."""
    created = await storage.create_table(lobby(status="running", state={"n": 0}))
    writers = [await reopen(backend) for _ in range(4)]
    try:
        records = [await writer.get_table(created.id or 0) for writer in writers]

        async def save(writer: Storage, record: TableRecord | None, player: str) -> str:
            assert record is not None
            record.move_number = 1
            record.state = {"n": player}
            try:
                await writer.save_table(record, (player, "take"))
            except StaleWrite:
                return "stale"
            except backend.integrity_error:
                # The move log's key refuses a second move 1 (a racer that read before
                # the winner's commit): the transaction is rolled back all the same.
                return "stale"
            return "saved"

        outcomes = await asyncio.gather(
            *(save(w, r, str(i)) for i, (w, r) in enumerate(zip(writers, records, strict=True)))
        )
    finally:
        for writer in writers:
            await writer.close()
    assert sorted(outcomes) == ["saved", "stale", "stale", "stale"]
    winner = str(outcomes.index("saved"))
    loaded = await storage.get_table(created.id or 0)
    assert loaded is not None and loaded.state == {"n": winner} and loaded.revision == 1
    assert await storage.moves(created.id or 0) == [(1, winner, "take")]


def count_hops(storage: SqliteStorage) -> list[int]:
    """Count the trips to the SQLite thread from now on (in the list's one item)."""
    hops = [0]
    original = storage._in_thread

    async def counting(function: object, *args: object) -> object:
        hops[0] += 1
        return await original(function, *args)  # type: ignore[arg-type]

    storage._in_thread = counting  # type: ignore[method-assign]
    return hops


@SQLITE_ONLY
async def test_a_lone_save_goes_straight_and_those_behind_it_keep_their_order(
    storage: Storage,
) -> None:
    """On an idle database a save makes one hop with no writer task; saves that arrive
    while it is under way wait for it and commit after it, in the order they came."""
    assert isinstance(storage, SqliteStorage)
    record = await storage.create_table(lobby(status="running", state={"n": 0}))
    hops = count_hops(storage)
    record.move_number, record.state = 1, {"n": 1}
    await storage.save_table(record, ("11", "take"))
    assert hops == [1] and storage._writer is None

    def move(number: int) -> TableRecord:
        return dataclasses.replace(record, move_number=number, state={"n": number})

    # Each names the revision the one before it makes: only this order can succeed.
    await asyncio.gather(
        *(storage.save_table(move(n), ("11", "pass"), expect_revision=n - 1) for n in range(2, 7))
    )
    loaded = await storage.get_table(record.id or 0)
    assert loaded is not None and loaded.revision == 6 and loaded.state == {"n": 6}
    assert [number for number, _, _ in await storage.moves(record.id or 0)] == [1, 2, 3, 4, 5, 6]
    assert hops[0] <= 3  # the first straight, the rest together (at most one more round)


@SQLITE_ONLY
async def test_concurrent_saves_share_hops_but_not_transactions(storage: Storage) -> None:
    """Saves of many tables at once go to the database thread together (fewer hops than
    saves), yet each commits or fails alone: a stale one rolls back only itself."""
    assert isinstance(storage, SqliteStorage)
    tables = [
        await storage.create_table(lobby(channel_id=500 + n, status="running", state={"n": 0}))
        for n in range(20)
    ]
    stale = tables[7]
    stale.revision = 5  # a revision it never had: this save must fail, and only it
    hops = count_hops(storage)

    async def save(record: TableRecord) -> str:
        record.move_number = 1
        record.state = {"n": record.channel_id}
        try:
            await storage.save_table(record, ("11", "take"))
        except StaleWrite:
            return "stale"
        return "saved"

    outcomes = await asyncio.gather(*(save(record) for record in tables))
    assert outcomes == ["stale" if record is stale else "saved" for record in tables]
    assert 1 <= hops[0] < len(tables)
    for record in tables:
        loaded = await storage.get_table(record.id or 0)
        assert loaded is not None
        if record is stale:
            assert loaded.state == {"n": 0} and loaded.revision == 0
            assert await storage.moves(record.id or 0) == []
        else:
            assert loaded.state == {"n": record.channel_id} and loaded.revision == 1
            assert await storage.moves(record.id or 0) == [(1, "11", "take")]


@SQLITE_ONLY
async def test_close_commits_the_saves_already_handed_over(backend: Backend) -> None:
    """Saves started just before close() are committed, not dropped with the connection."""
    storage = await backend.open()
    tables = [
        await storage.create_table(lobby(channel_id=700 + n, status="running", state={"n": 0}))
        for n in range(5)
    ]
    for record in tables:
        record.move_number = 1
        record.state = {"n": 1}
    saves = [asyncio.create_task(storage.save_table(record, ("11", "take"))) for record in tables]
    await asyncio.sleep(0)  # every save has joined the writer's queue
    await storage.close()
    await asyncio.gather(*saves)
    again = await reopen(backend)
    try:
        for record in tables:
            loaded = await again.get_table(record.id or 0)
            assert loaded is not None and loaded.state == {"n": 1}
    finally:
        await again.close()


async def test_game_end_records_in_the_same_transaction(storage: Storage) -> None:
    """The last move, the table, the game, its seats and the ratings commit together."""
    record = await storage.create_table(
        lobby(guild_id=DISCORD_ID, channel_id=DISCORD_ID + 1, status="running")
    )
    record.status = "finished"
    record.move_number = 5
    result = result_of(record, ("11", 30), ("22", 12))
    await storage.save_table(record, ("11", "take"), result=result)
    assert set(record.meta["rating_changes"]) == {"11", "22"}
    games = await storage.read("SELECT * FROM games WHERE table_id = ?", (record.id,))
    assert [(g["guild_id"], g["moves"], g["ended_at"]) for g in games] == [(DISCORD_ID, 5, 20.5)]
    seats = await storage.read(
        "SELECT player, rank, won, rating_change FROM game_players WHERE table_id = ?"
        " ORDER BY seat",
        (record.id,),
    )
    assert [(s["player"], s["rank"], s["won"]) for s in seats] == [("11", 2, 0), ("22", 1, 1)]
    assert seats[1]["rating_change"] == record.meta["rating_changes"]["22"] > 0
    ratings = await storage.read("SELECT player, games FROM ratings ORDER BY player")
    assert [(r["player"], r["games"]) for r in ratings] == [("11", 1), ("22", 1)]
    loaded = await storage.get_table(record.id or 0)
    assert loaded == record


async def test_failed_game_end_records_nothing(storage: Storage) -> None:
    """A stale final save writes no game, no seat and no rating either."""
    record = await storage.create_table(lobby(status="running"))
    record.status = "finished"
    record.move_number = 3
    with pytest.raises(StaleWrite):
        await storage.save_table(
            record,
            ("11", "take"),
            expect_revision=7,
            result=result_of(record, ("11", 3), ("22", 5)),
        )
    for table in ("games", "game_players", "ratings", "moves"):
        assert await storage.read(f"SELECT * FROM {table}") == []


async def test_stats_queries_read_the_same_on_both(storage: Storage) -> None:
    """The records' own queries (TOTAL, json_extract) give the same figures on both backends."""
    for game, (first, second) in enumerate([(30, 12), (8, 40)]):
        record = await storage.create_table(lobby(channel_id=100 + game, status="running"))
        record.status = "finished"
        await storage.save_table(record, result=result_of(record, ("11", first), ("22", second)))
    stats = await player_stats(storage, GUILD, "nothanks", "11")
    assert (stats.games, stats.wins) == (2, 1)
    assert stats.figures == NoThanksFigures(
        average_score=19.0, best_score=8, average_chips=3.0, longest_run=2
    )
    assert stats.rating is not None and stats.rating.games == 2
    board = await leaderboard(storage, GUILD, "nothanks")
    assert board.people == ()  # nobody has played enough rated games yet


async def test_guild_language_round_trip(storage: Storage) -> None:
    """A server's language is stored, replaced and cleared; other servers keep theirs."""
    assert await storage.get_guild_language(DISCORD_ID) is None
    await storage.set_guild_language(DISCORD_ID, "de")
    await storage.set_guild_language(5, "it")
    await storage.set_guild_language(DISCORD_ID, "ru")
    assert await storage.get_guild_language(DISCORD_ID) == "ru"
    await storage.set_guild_language(DISCORD_ID, None)
    assert await storage.get_guild_language(DISCORD_ID) is None
    assert await storage.get_guild_language(5) == "it"


async def test_guild_images_round_trip(storage: Storage) -> None:
    """Pictures default to unset, are turned off and on, and keep the server's language."""
    assert await storage.get_guild_images(DISCORD_ID) is None
    await storage.set_guild_language(DISCORD_ID, "de")
    await storage.set_guild_images(DISCORD_ID, False)
    assert await storage.get_guild_images(DISCORD_ID) is False
    assert await storage.get_guild_language(DISCORD_ID) == "de"
    await storage.set_guild_images(DISCORD_ID, True)
    assert await storage.get_guild_images(DISCORD_ID) is True
    await storage.set_guild_language(DISCORD_ID, None)
    assert await storage.get_guild_images(DISCORD_ID) is True
    assert await storage.get_guild_images(5) is None


async def test_guild_turn_pings_and_threads_round_trip(storage: Storage) -> None:
    """Turn pings and the threads default start unset, are stored and replaced, and keep
    the server's other settings (each is an upsert of its own column)."""
    assert await storage.get_guild_turn_pings(DISCORD_ID) is None
    assert await storage.get_guild_threads(DISCORD_ID) is None
    await storage.set_guild_images(DISCORD_ID, False)
    await storage.set_guild_turn_pings(DISCORD_ID, "half")
    await storage.set_guild_threads(DISCORD_ID, True)
    await storage.set_guild_turn_pings(DISCORD_ID, "off")
    assert await storage.get_guild_turn_pings(DISCORD_ID) == "off"
    assert await storage.get_guild_threads(DISCORD_ID) is True
    assert await storage.get_guild_images(DISCORD_ID) is False
    await storage.set_guild_threads(DISCORD_ID, False)
    assert await storage.get_guild_threads(DISCORD_ID) is False
    assert await storage.get_guild_turn_pings(DISCORD_ID) == "off"
    assert await storage.get_guild_turn_pings(5) is None
    assert await storage.get_guild_threads(5) is None


async def test_rematch_and_forget_user(storage: Storage) -> None:
    """A rematch is found by its metadata; a forgotten player leaves no name or rating."""
    old = await storage.create_table(
        lobby(status="running", meta={"names": {"11": "Ann", "22": "Bo"}})
    )
    old.status = "finished"
    old.move_number = 2
    await storage.save_table(old, ("11", "take"), result=result_of(old, ("11", 3), ("22", 9)))
    assert not await storage.rematch_opened(old.id or 0)
    await storage.create_table(lobby(200, meta={"rematch_of": old.id}))
    assert await storage.rematch_opened(old.id or 0)
    changed = await storage.forget_user(11, "gone-1", "former player")
    assert changed >= 4
    loaded = await storage.get_table(old.id or 0)
    assert loaded is not None and loaded.meta["names"]["11"] == "former player"
    assert await storage.moves(old.id or 0) == [(2, "gone-1", "take")]
    assert await storage.read("SELECT 1 FROM ratings WHERE player = ?", ("11",)) == []
    seats = await storage.read("SELECT player, name FROM game_players ORDER BY seat")
    assert [(s["player"], s["name"]) for s in seats] == [
        ("gone-1", "former player"),
        ("22", "p22"),
    ]


async def test_discard_and_quarantine(storage: Storage) -> None:
    """A discarded table is gone; a quarantined one is `broken` and frees its channel."""
    gone = await storage.create_table(lobby(100))
    await storage.discard_table(gone.id or 0)
    assert await storage.get_table(gone.id or 0) is None
    broken = await storage.create_table(lobby(100))
    await storage.quarantine(broken.id or 0)
    loaded = await storage.get_table(broken.id or 0)
    assert loaded is not None and loaded.status == "broken" and loaded.revision == 1
    assert await storage.open_tables() == []
    await storage.create_table(lobby(100))


# -- the shard claim ------------------------------------------------------------------------


async def test_second_claim_of_a_shard_is_refused(storage: Storage, backend: Backend) -> None:
    """On PostgreSQL a shard belongs to one process; on SQLite the instance lock does this."""
    await storage.claim_shards([0, 1, 2, 3])
    other = await reopen(backend)
    try:
        if backend.name == "sqlite":
            await other.claim_shards([2, 3])  # a no-op: bot.runtime.instance_lock refuses instead
            return
        with pytest.raises(ShardClaimed) as raised:
            await other.claim_shards([3, 4, 2])
        assert raised.value.shards == (2, 3)
        assert "2, 3" in str(raised.value)
        # The refused claim kept nothing: shard 4 is still free for a third process.
        await other.claim_shards([4, 5])
        await storage.close()  # the first process stops: its shards are free again
        await other.claim_shards([0, 1])
    finally:
        await other.close()


async def test_another_shard_count_is_refused(storage: Storage, backend: Backend) -> None:
    """Processes splitting the guilds into different shard counts never run side by side."""
    await storage.claim_shards([0, 1], 4)
    other = await reopen(backend)
    third = await reopen(backend)
    try:
        if backend.name == "sqlite":
            await other.claim_shards([0], 2)  # a no-op: bot.runtime.instance_lock refuses instead
            return
        # Shard 0 of 2 holds guilds of shards 0 and 2 of 4: the shard ids alone miss it.
        with pytest.raises(ShardCountMismatch) as raised:
            await other.claim_shards([1], 2)
        assert (raised.value.count, raised.value.others) == (2, (4,))
        assert "SHARD_COUNT=2" in str(raised.value) and "SHARD_COUNT=4" in str(raised.value)
        # Nor may a process running every shard (the count left to Discord) join them.
        with pytest.raises(ShardCountMismatch, match="SHARD_COUNT unset"):
            await other.claim_shards([0], 0)
        # The refusals kept nothing: the same count and other shards are welcome.
        await other.claim_shards([2, 3], 4)
        # A claim refused for its shards gives its count up again.
        with pytest.raises(ShardClaimed):
            await third.claim_shards([3], 4)
        await storage.close()
        await other.close()
        await third.claim_shards([0], 2)  # everyone on 4 is gone: 2 may start
    finally:
        await other.close()
        await third.close()


# -- the upgrade path -----------------------------------------------------------------------


async def test_older_schema_is_upgraded_in_place(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database left at v3 by an older bot reaches the latest version, its rows converted."""
    import bot.storage.postgres
    import bot.storage.sqlite

    for module in (bot.storage.sqlite, bot.storage.postgres):
        monkeypatch.setattr(module, "MIGRATIONS", MIGRATIONS[:3])
    old = await backend.open()
    await old.close()
    assert await backend.schema_version() == 3
    # v3 renamed `extra` to `meta` but kept its old keys; the next step converts them.
    await backend.execute(
        "INSERT INTO tables (id, game, guild_id, channel_id, host_id, status, options, seats,"
        " meta, created_at, updated_at) VALUES (7, 'nothanks', 1, 100, 11, 'lobby', '{}',"
        " '[11]', ?, 1.0, 2.0)",
        '{"names": {"11": "Ann"}, "bots": {"22": "hard"}, "expired": true, "junk": 1}',
    )
    monkeypatch.undo()
    storage = await backend.open()
    try:
        assert await storage.schema_version() == LATEST
        loaded = await storage.get_table(7)
        assert loaded is not None
        assert loaded.meta == {
            "names": {"11": "Ann"},
            "computers": {"22": "hard"},
            "closed_reason": "expired",
        }
        # The records' tables arrived too, and the upgraded database takes new tables.
        assert {"games", "game_players", "ratings"} <= await backend.table_names()
        fresh = await storage.create_table(lobby(200))
        assert fresh.id is not None and fresh.id != 7
    finally:
        await storage.close()


TERMINATE_CLAIM = (
    "SELECT pg_terminate_backend(pid) FROM pg_locks"
    " WHERE locktype = 'advisory' AND objid = 5 AND pid <> pg_backend_pid()"
)


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait for a condition the storage's background work makes true."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never came true")


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_lost_claim_is_claimed_again(
    storage: Storage, backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    """If the server drops the claim's connection, the shards and the count are claimed
    again on a new one, and the process goes on."""
    await storage.claim_shards([5], 3)
    lost: list[tuple[list[int], str]] = []
    storage.on_shards_lost = lambda shards, reason: lost.append((shards, reason))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="bot.storage.postgres"):
        await backend.execute(TERMINATE_CLAIM)
        await until(lambda: any("claimed shards [5] again" in r.message for r in caplog.records))
    errors = [r.message for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == ["lost the database connection holding shards [5]; claiming them again"]
    assert lost == []
    other = await reopen(backend)
    try:
        with pytest.raises(ShardClaimed):
            await other.claim_shards([5], 3)  # ours again
        with pytest.raises(ShardCountMismatch):
            await other.claim_shards([6], 4)  # and so is the count's lock
    finally:
        await other.close()


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_lost_claim_taken_meanwhile_is_given_up(
    storage: Storage,
    backend: Backend,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If another process claims a shard before it is claimed again, the storage says so at
    CRITICAL and tells its owner which shards are gone; the shards still free are claimed
    again and kept, and nothing of the taken one is kept."""
    import bot.storage.postgres

    monkeypatch.setattr(bot.storage.postgres, "RECLAIM_DELAYS", (0.5, 0.5))
    await storage.claim_shards([5, 6])
    lost: list[tuple[list[int], str]] = []
    storage.on_shards_lost = lambda shards, reason: lost.append((shards, reason))
    other = await reopen(backend)
    try:
        with caplog.at_level(logging.WARNING, logger="bot.storage.postgres"):
            await backend.execute(TERMINATE_CLAIM)
            for _ in range(100):
                try:
                    await other.claim_shards([5])
                    break
                except ShardClaimed:
                    await asyncio.sleep(0.02)  # the server has not let go yet
            await until(lambda: bool(lost))
            again = "claimed shards [6] again"
            await until(lambda: any(again in r.message for r in caplog.records))
        assert lost[0][0] == [5] and "shard 5 already claimed" in lost[0][1]
        critical = [r.getMessage() for r in caplog.records if r.levelno >= logging.CRITICAL]
        assert len(critical) == 1 and "shards [5] were claimed by another process" in critical[0]
        with pytest.raises(ShardClaimed):
            await other.claim_shards([6])  # still ours
    finally:
        await other.close()
    third = await reopen(backend)
    try:
        await third.claim_shards([5])  # the refused attempts kept nothing of shard 5
    finally:
        await third.close()


async def test_due_tables_are_read_soonest_first_by_shard(storage: Storage) -> None:
    """due_tables reads the open tables due in a window, soonest first, of some shards;
    next_due the due times after an instant; closed tables and tables with nothing due
    never come back."""
    odd = 1 << 22  # a guild of shard 1 of 2
    rows = [
        lobby(100, due_at=50.0),
        lobby(101, due_at=10.0),
        lobby(102, due_at=30.0, guild_id=odd),
        lobby(103, due_at=None),
        lobby(104, due_at=20.0, status="finished"),
        lobby(105, due_at=90.0),
    ]
    created = [await storage.create_table(row) for row in rows]
    ids = [record.id for record in created]
    assert [r.id for r in await storage.due_tables(60.0)] == [ids[1], ids[2], ids[0]]
    assert [r.id for r in await storage.due_tables(60.0, 30.0)] == [ids[2], ids[0]]
    assert [r.id for r in await storage.due_tables(60.0, None, 2, [0])] == [ids[1], ids[0]]
    assert [r.id for r in await storage.due_tables(60.0, None, 2, [1])] == [ids[2]]
    assert await storage.next_due(30.0, 5) == [(ids[0], 50.0), (ids[5], 90.0)]
    assert await storage.next_due(0.0, 1, 2, [1]) == [(ids[2], 30.0)]


async def test_set_due_writes_only_the_revision_it_names(storage: Storage) -> None:
    """set_due stores a table's next due time without bumping its revision, and changes
    nothing if the row moved on meanwhile."""
    record = await storage.create_table(lobby(due_at=10.0))
    assert await storage.set_due(record.id or 0, 0, 500.0)
    stored = await storage.get_table(record.id or 0)
    assert stored is not None and stored.due_at == 500.0 and stored.revision == 0
    assert not await storage.set_due(record.id or 0, 3, 1.0)
    stored = await storage.get_table(record.id or 0)
    assert stored is not None and stored.due_at == 500.0


async def test_a_save_writes_the_due_time_and_quarantine_clears_it(storage: Storage) -> None:
    """The due time is one of the columns a save writes; a quarantined table has none."""
    record = await storage.create_table(lobby(due_at=10.0))
    record.due_at = 99.5
    await storage.save_table(record, columns=["due_at", "meta"])
    assert [(r.id, r.due_at) for r in await storage.due_tables(100.0)] == [(record.id, 99.5)]
    await storage.quarantine(record.id or 0)
    assert await storage.due_tables(1e12) == []
    stored = await storage.load_table(record.id or 0)
    assert isinstance(stored, TableRecord) and stored.due_at is None
