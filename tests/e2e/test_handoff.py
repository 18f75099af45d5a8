"""The receiving half of a DM click's handoff, in one process on PostgreSQL under SimCord:
the process of shard 0 gets (as Discord sends every DM interaction to shard 0) a click on
a DM button of a table of shard 1, which no process runs here. It hands the click over
and, when nobody claims it, answers privately that the table's process is not answering;
a click that was itself handed here is refused, never handed on. The owning half, with
two real processes, is tests/runtime/test_handoff_processes.py.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from simcord import Env

from bot import metrics
from bot.client.handoff import Handoff
from bot.i18n import t
from bot.runtime.settings import Settings
from bot.storage.postgres import PostgresStorage
from tests.conftest import TEST_TOKEN
from tests.e2e.helpers import Table
from tests.e2e.test_shards import (  # noqa: F401  (fixtures, used by name)
    REFUSED,
    MakeBot,
    click_in_dm,
    shard_bot,
    simcord_bot,
    stored_row,
    two_tables,
)


@pytest.fixture
def settings(tmp_path: Path, postgres_url: str) -> Settings:
    """Settings on a fresh PostgreSQL schema: only PostgreSQL hands clicks over."""
    return Settings(token=TEST_TOKEN, database=tmp_path / "cardtable.db", database_url=postgres_url)


async def only_shard_0(env: Env, request: pytest.FixtureRequest) -> tuple[Table, Table]:
    """A table on each shard, then a restart as the process of shard 0 alone (the first
    process's claims given up first: on PostgreSQL they are locks)."""
    make: MakeBot = request.getfixturevalue("shard_bot")
    tables = await two_tables(env)
    await env.bot.storage.close()
    await env.restart_bot(make((0,)))
    return tables


async def handed_rows(env: Env) -> list[Any]:
    """The handed clicks the database holds."""
    return await env.bot.storage.read("SELECT id, shard, cancelled FROM handed_clicks")


async def test_a_dm_click_nobody_claims_is_answered_by_its_receiver(
    simcord_env: Env,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Shard 1's table, no process of shard 1: the click is handed to shard 1, and after
    CLAIM_WAIT shard 0's process cancels it and answers privately that the table's
    process is not answering (the real processes' test times it against Discord's 3 s).
    Nothing changed; the log says what was handed to which shard, and the metrics count
    it unclaimed; the settled row is deleted."""
    monkeypatch.setattr(metrics, "_on", True)
    unclaimed = metrics.HANDED_CLICKS.labels("unclaimed")
    counted = unclaimed._value.get()
    _, odd = await only_shard_0(simcord_env, request)
    assert isinstance(simcord_env.bot.storage, PostgresStorage)
    before = await stored_row(simcord_env, odd)
    with caplog.at_level(logging.INFO, logger="bot.client.handoff"):
        result = await click_in_dm(simcord_env, odd)
    assert result.ephemeral
    assert result.response.content == t("table.owner_not_answering", "en-US")
    assert await stored_row(simcord_env, odd) == before
    said = [record.getMessage() for record in caplog.records]
    assert any(
        f"handed the DM click on nothanks table {odd.table_id} (pass)" in line
        and "to shard 1 (handed click" in line
        for line in said
    ), said
    assert any("no process claimed handed click" in line for line in said), said
    assert unclaimed._value.get() == counted + 1
    await simcord_env.settle()
    assert await handed_rows(simcord_env) == []


async def test_a_click_handed_here_for_a_table_not_run_here_is_refused_not_handed_on(
    simcord_env: Env, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A click handed to this process whose table is another shard's after all (the
    shard was lost meanwhile) is refused as another process's, and handed nowhere: two
    processes never pass a click back and forth."""
    _, odd = await only_shard_0(simcord_env, request)
    before = await stored_row(simcord_env, odd)
    # Every click arrives as one handed here 0.1 s after it was handed.
    monkeypatch.setattr(Handoff, "lag_of", lambda self, interaction_id: 0.1)
    result = await click_in_dm(simcord_env, odd)
    assert result.ephemeral and result.response.content.startswith(REFUSED)
    assert await stored_row(simcord_env, odd) == before
    assert await handed_rows(simcord_env) == []
