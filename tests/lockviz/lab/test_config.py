"""What a client process receives: one frozen value, the same on both sides of the pipe."""

from __future__ import annotations

import pytest

from lockviz.lab.config import ClientConfig


def test_the_config_survives_the_pipe_whole() -> None:
    config = ClientConfig(
        name="alice", backend="redlock", variant="safe", ttl_ms=2000, fencing=False,
        clients=("alice", "bob"), nodes=("redis-1", "redis-2"),
        servers={"redis-1": "127.0.0.1:4001", "storage": "127.0.0.1:4002"},
        node_timeout_ms=150, clock_file="/tmp/x/alice.clock",
    )  # fmt: skip
    again = ClientConfig.from_json(config.to_json())
    assert again == config
    assert again.address("redis-1") == ("127.0.0.1", 4001)
    with pytest.raises(KeyError):
        again.address("redis-9")


def test_passwords_cross_the_pipe_but_never_show_in_a_repr() -> None:
    config = ClientConfig(
        name="alice", backend="redis", variant="safe", ttl_ms=2000, fencing=True,
        clients=("alice",), nodes=("redis-1",), passwords={"redis-1": "s3cret"},
    )  # fmt: skip
    again = ClientConfig.from_json(config.to_json())
    assert again.password("redis-1") == "s3cret" and again.password("storage") is None
    assert "s3cret" not in repr(again)
