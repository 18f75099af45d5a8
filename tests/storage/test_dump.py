"""The JSON every column is written with: what json.dumps wrote, only faster."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot.storage.schema import dump

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@given(JSON)
def test_dump_reads_back_as_json_dumps_would(value: Any) -> None:
    """Any JSON value reads back equal to what the standard library's dump reads back."""
    assert json.loads(dump(value)) == json.loads(json.dumps(value))


def test_dump_is_compact_and_keys_integers_as_strings() -> None:
    """No spaces; integer keys (seat numbers) become strings, as json.dumps made them."""
    assert dump({1: [1, 2], "a": {"b": None}}) == '{"1":[1,2],"a":{"b":null}}'


def test_dump_takes_what_orjson_refuses() -> None:
    """An integer past 64 bits and a lone surrogate still dump, as json.dumps writes them."""
    assert json.loads(dump({"n": 2**70})) == {"n": 2**70}
    assert dump(["\ud800"]) == json.dumps(["\ud800"], separators=(",", ":"))
