"""Shards: SHARD_COUNT and SHARD_IDS as settings, and which process owns a guild's tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.runtime.settings import ConfigError, Settings, load_settings, parse_shard_ids
from bot.table.shards import ShardSet, describe_ids, shard_of

TOKEN = "A" * 24 + ".Bbbbbb." + "C" * 27
# Discord snowflakes are 64-bit; a guild's shard comes from its top 42 bits.
SNOWFLAKES = st.integers(min_value=0, max_value=2**64 - 1)


def load(tmp_path: Path, **values: str) -> Settings:
    """Settings from a fake environment with these shard variables (no `.env` file)."""
    environ = {"DISCORD_TOKEN": TOKEN, "CARDTABLE_DATABASE": str(tmp_path / "db.sqlite")}
    environ.update(values)
    return load_settings(environ, dotenv=None)


def config_error(tmp_path: Path, **values: str) -> str:
    """The one-line ConfigError message these shard variables cause."""
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, **values)
    message = str(caught.value)
    assert message and "\n" not in message
    return message


# -- the settings ----------------------------------------------------------------------


def test_neither_setting_leaves_the_count_to_discord(tmp_path: Path) -> None:
    """Without SHARD_COUNT and SHARD_IDS discord.py picks the count; one process owns all."""
    settings = load(tmp_path)
    assert (settings.shard_count, settings.shard_ids) == (None, None)
    shards = ShardSet.of(settings.shard_count, settings.shard_ids)
    assert shards.owns_everything and shards.owns(123 << 22) and shards.owns(None)


def test_empty_values_count_as_unset(tmp_path: Path) -> None:
    """`SHARD_COUNT=` and `SHARD_IDS=` (as in .env.example) are the defaults."""
    settings = load(tmp_path, SHARD_COUNT="  ", SHARD_IDS="")
    assert (settings.shard_count, settings.shard_ids) == (None, None)


def test_count_alone_runs_every_shard_of_it(tmp_path: Path) -> None:
    """SHARD_COUNT without SHARD_IDS: this process runs shards 0 to count-1."""
    settings = load(tmp_path, SHARD_COUNT="4")
    assert (settings.shard_count, settings.shard_ids) == (4, None)
    shards = ShardSet.of(settings.shard_count, settings.shard_ids)
    assert shards.owns_everything and shards.claims() == (0, 1, 2, 3)


@pytest.mark.parametrize(
    ("raw", "count", "expected"),
    [
        ("0-3", 8, (0, 1, 2, 3)),
        ("4-7", 8, (4, 5, 6, 7)),
        ("0,2,5-7", 8, (0, 2, 5, 6, 7)),
        (" 1 , 3 - 4 ", 8, (1, 3, 4)),
        ("5", 8, (5,)),
        ("7,0", 8, (0, 7)),
        ("0", 1, (0,)),
        ("2-2", 3, (2,)),
    ],
)
def test_shard_ids_take_ids_and_ranges(
    tmp_path: Path, raw: str, count: int, expected: tuple[int, ...]
) -> None:
    """SHARD_IDS lists ids and inclusive ranges, in any order; they come back sorted."""
    settings = load(tmp_path, SHARD_COUNT=str(count), SHARD_IDS=raw)
    assert settings.shard_count == count
    assert settings.shard_ids == expected


def test_shard_settings_are_in_the_repr(tmp_path: Path) -> None:
    """The log line of the settings says which shards a process runs."""
    text = repr(load(tmp_path, SHARD_COUNT="8", SHARD_IDS="4-5"))
    assert "shard_count=8" in text and "shard_ids=(4, 5)" in text


@pytest.mark.parametrize(
    ("values", "fragment"),
    [
        ({"SHARD_IDS": "0-3"}, "SHARD_IDS needs SHARD_COUNT"),
        ({"SHARD_COUNT": "0"}, "SHARD_COUNT must be a whole number from 1"),
        ({"SHARD_COUNT": "-2"}, "not '-2'"),
        ({"SHARD_COUNT": "two"}, "SHARD_COUNT must be a whole number"),
        ({"SHARD_COUNT": "1.5"}, "SHARD_COUNT must be a whole number"),
        ({"SHARD_COUNT": "100001"}, "from 1 to 100000"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "8"}, "'8' is outside 0-7 (SHARD_COUNT is 8)"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "4-9"}, "'4-9' is outside 0-7"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "3-1"}, "range '3-1' runs backwards"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0-3,2"}, "lists shard 2 more than once"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "1,1"}, "lists shard 1 more than once"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0,,1"}, "empty entry"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0-3,"}, "empty entry"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "a-b"}, "'a-b' is neither a shard id nor a range"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "1-"}, "'1-' is neither"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "-1"}, "'-1' is neither"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0-1-2"}, "'0-1-2' is neither"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0..3"}, "'0..3' is neither"),
    ],
)
def test_invalid_shard_settings(tmp_path: Path, values: dict[str, str], fragment: str) -> None:
    """A wrong shard setting stops the bot with one line naming the variable and the fault."""
    assert fragment in config_error(tmp_path, **values)


def test_a_huge_range_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    """A range far past SHARD_COUNT is an error at once, not a billion ids in memory."""
    message = config_error(tmp_path, SHARD_COUNT="2", SHARD_IDS="0-999999999999")
    assert "outside 0-1" in message


# -- the shard of a guild --------------------------------------------------------------


@given(st.integers(min_value=0, max_value=2**41), st.integers(min_value=1, max_value=5000))
def test_a_guild_built_from_a_shard_number_lands_on_it(n: int, count: int) -> None:
    """``guild_id = n << 22`` is on shard ``n % count``, whatever its low bits."""
    assert shard_of(n << 22, count) == n % count
    assert shard_of((n << 22) | (2**22 - 1), count) == n % count


def test_direct_messages_belong_to_shard_zero() -> None:
    """Discord sends direct messages to shard 0, so a guild-less table is there too."""
    assert shard_of(None, 4) == 0
    assert ShardSet.of(4, [0]).owns(None) and not ShardSet.of(4, [1, 2, 3]).owns(None)


def test_shard_of_needs_a_count() -> None:
    """There is no shard 0 of 0."""
    with pytest.raises(ValueError, match="at least 1"):
        shard_of(5 << 22, 0)


@st.composite
def partitions(draw: st.DrawFn) -> tuple[int, list[str]]:
    """A shard count and SHARD_IDS values of processes that split its shards between them."""
    count = draw(st.integers(min_value=1, max_value=40))
    processes = draw(st.integers(min_value=1, max_value=count))
    owner_of = draw(st.lists(st.integers(0, processes - 1), min_size=count, max_size=count))
    # A process that drew no shard is not started: every process runs at least one.
    values = [
        describe_ids(shard for shard in range(count) if owner_of[shard] == owner)
        for owner in sorted(set(owner_of))
    ]
    return count, values


@given(partitions(), st.lists(SNOWFLAKES, min_size=1, max_size=30))
def test_processes_that_split_the_shards_own_each_guild_exactly_once(
    partition: tuple[int, list[str]], guilds: list[int]
) -> None:
    """Every guild maps to one shard in range, and exactly one process of a partition owns it."""
    count, values = partition
    processes = [ShardSet.of(count, parse_shard_ids(value, count)) for value in values]
    for guild in guilds:
        shard = shard_of(guild, count)
        assert 0 <= shard < count
        owners = [process for process in processes if process.owns(guild)]
        assert len(owners) == 1
        assert owners[0].ids is not None and shard in owners[0].ids
    claimed = [shard for process in processes for shard in process.claims()]
    assert sorted(claimed) == list(range(count))


@st.composite
def shard_choices(draw: st.DrawFn) -> tuple[int, frozenset[int]]:
    """A shard count and a non-empty set of its shards."""
    count = draw(st.integers(min_value=1, max_value=300))
    return count, draw(st.frozensets(st.integers(0, count - 1), min_size=1))


@given(shard_choices())
def test_describe_ids_reads_back_as_the_same_shards(case: tuple[int, frozenset[int]]) -> None:
    """The compact form a process logs is a valid SHARD_IDS for the same shards."""
    count, ids = case
    assert parse_shard_ids(describe_ids(ids), count) == tuple(sorted(ids))


# -- the ownership object --------------------------------------------------------------


def test_a_shard_set_owns_only_its_shards() -> None:
    """Shards {0} of 2 own the even shard numbers' guilds, not the odd ones'."""
    shards = ShardSet.of(2, [0])
    assert shards.owns(4 << 22) and not shards.owns(5 << 22)
    assert not shards.owns_everything
    assert shards.claims() == (0,)
    assert str(shards) == "shards 0 of 2"
    assert str(ShardSet.of(8, [0, 1, 2, 3, 6])) == "shards 0-3,6 of 8"


def test_leaving_the_count_to_discord_claims_shard_zero() -> None:
    """With the count unknown until connect time, the process claims shard 0 (every
    process on the database would), and owns every guild."""
    shards = ShardSet()
    assert shards.claims() == (0,) and shards.shard_of(7 << 22) is None
    assert str(shards) == "every shard (count chosen by Discord)"


@pytest.mark.parametrize(
    ("count", "ids", "fragment"),
    [
        (0, None, "at least 1"),
        (None, [0], "need a shard count"),
        (4, [], "at least one shard"),
        (4, [4], "shard 4 is not between 0 and 3"),
    ],
)
def test_an_impossible_shard_set_is_refused(
    count: int | None, ids: list[int] | None, fragment: str
) -> None:
    """The core never runs with shards that cannot exist."""
    with pytest.raises(ValueError, match=fragment):
        ShardSet.of(count, ids)
