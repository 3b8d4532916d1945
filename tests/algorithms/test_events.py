"""The event encoding a client process writes: json_line is json.dumps's text, faster."""

from __future__ import annotations

import json
from typing import Any

import pytest

from algorithms.events import json_line

EVENTS: list[dict[str, Any]] = [
    {},
    {"to": "redis-1", "call": 7, "op": "acquire", "ttl_ms": None, "key": 1819239275},
    {"from": "etcd-1", "call": 8, "op": "lock", "ok": True, "value": "lockviz/lock/1ec9a2"},
    {"node": "redis-1,redis-2", "nodes": ["redis-1", "redis-2"], "validity_ms": 1977.5},
    {"reason": 'held by "carol" — é\n\t', "nan": float("nan"), "inf": float("-inf")},
]


@pytest.mark.parametrize("details", EVENTS)
def test_json_line_is_the_text_json_dumps_writes(details: dict[str, Any]) -> None:
    expected = json.dumps({"t_ns": 123456789012345, "kind": "reply", **details})
    assert json_line(123456789012345, "reply", details) == expected


def test_json_line_refuses_what_json_cannot_encode() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_line(1, "note", {"text": object()})
