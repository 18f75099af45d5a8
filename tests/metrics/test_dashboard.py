"""deploy/grafana/cardtable.json: it loads, has its rows, and every metric it queries is in a
real scrape of the bot (cardtable_*, process_*) or is one the nirn proxy exports."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import Counter, Gauge, Histogram
from simcord import Env

from bot.client.bot import CardtableBot
from bot.runtime.settings import Settings
from tests.e2e.helpers import choose, open_table
from tests.metrics.test_scrape import metrics_off_afterwards, scrape

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "deploy" / "grafana" / "cardtable.json"
ROWS = ["Tables", "Clicks", "The lane and Discord's limits", "Database", "Computer players"]
# A metric name inside a PromQL expression: what follows is not a function's "(".
NAME = re.compile(r"\b((?:cardtable|process|nirn_proxy)_[a-z0-9_]+)\b(?!\s*\()")

__all__ = ["metrics_off_afterwards"]  # the fixture, used here by name


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The usual test settings with the metrics server on a port the kernel picks."""
    return dataclasses.replace(settings, metrics_port=0)


def dashboard() -> dict[str, Any]:
    """The dashboard's JSON."""
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return loaded


def expressions(board: dict[str, Any]) -> list[str]:
    """Every PromQL expression of every panel (rows' nested panels too) and variable."""
    found: list[str] = []
    for panel in board["panels"]:
        for each in [panel, *panel.get("panels", [])]:
            found += [target["expr"] for target in each.get("targets", [])]
    for variable in board["templating"]["list"]:
        query = variable.get("query")
        if isinstance(query, dict):
            found.append(query["query"])
    return found


def nirn_samples() -> set[str]:
    """The sample names the nirn proxy's metrics can have (nirn-py, the proxy in the tests,
    exports the same families as nirn-proxy)."""
    from nirn_proxy import metrics as nirn

    names: set[str] = set()
    for value in vars(nirn).values():
        if not isinstance(value, Counter | Gauge | Histogram):
            continue
        for family in value.describe():
            base = family.name
            kind = family.type
            if kind == "counter":
                names |= {f"{base}_total", f"{base}_created"}
            elif kind == "histogram":
                names |= {f"{base}_bucket", f"{base}_count", f"{base}_sum", f"{base}_created"}
            else:
                names.add(base)
    return names


def test_the_dashboard_has_its_rows_and_queries() -> None:
    """The JSON loads, with the five rows in order, each panel with at least one query."""
    board = dashboard()
    assert board["uid"] == "cardtable"
    rows = [panel["title"] for panel in board["panels"] if panel["type"] == "row"]
    assert rows[: len(ROWS)] == ROWS
    for panel in board["panels"]:
        if panel["type"] != "row":
            assert panel["targets"] and all(t["expr"].strip() for t in panel["targets"])
    assert len({panel["id"] for panel in board["panels"]}) == len(board["panels"])


async def test_every_queried_metric_is_in_a_real_scrape(simcord_env: Env) -> None:
    """After a few moves, each cardtable_ and process_ metric the dashboard queries is a
    sample of a scrape of the bot over HTTP; each nirn_proxy_ one is the proxy's."""
    bot = simcord_env.bot
    assert isinstance(bot, CardtableBot)
    table = await open_table(simcord_env, 3)
    for _ in range(3):
        await table.click(table.active(), choose(table.game))
    scraped = set(await scrape(bot))
    queried = {name for expr in expressions(dashboard()) for name in NAME.findall(expr)}
    ours = {name for name in queried if not name.startswith("nirn_proxy_")}
    assert len(ours) >= 20
    assert sorted(ours - scraped) == []
    proxy = queried - ours
    assert proxy and sorted(proxy - nirn_samples()) == []
