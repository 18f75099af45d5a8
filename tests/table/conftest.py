"""Fixtures of the table-core tests."""

from __future__ import annotations

from tests.table.harness import h

__all__ = ["h"]
