"""Fixtures of the query tests: the table core's harness, whose tables write the records."""

from __future__ import annotations

from tests.table.harness import h

__all__ = ["h"]
