"""External servers (LOCKVIZ_SERVERS): lockviz empties a server before each run, so it uses
only servers marked as set aside for it, never whatever the setting happens to point at."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
import redis

from lockviz.lab.errors import LabError
from lockviz.lab.labs import ExternalLab
from lockviz.lab.ports import free_port
from lockviz.lab.procs import wait_until

pytestmark = pytest.mark.live


@pytest.fixture
def plain_redis() -> Iterator[list[int]]:
    """Two redis-servers someone else runs (no password: as a user's own might be)."""
    ports = [free_port(), free_port()]
    procs = [
        subprocess.Popen(
            ["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--save", ""],
            stdout=subprocess.DEVNULL,
        )
        for p in ports
    ]
    for port in ports:
        wait_until(lambda p=port: _ping(p), 10, f"redis on {port}")
    yield ports
    for proc in procs:
        proc.kill()
        proc.wait()


def _ping(port: int) -> bool:
    try:
        return bool(redis.Redis(port=port, socket_timeout=0.2).ping())
    except redis.RedisError:
        return False


def test_an_unmarked_server_is_never_wiped_and_a_marked_one_is(plain_redis: list[int]) -> None:
    first, second = (redis.Redis(port=p, decode_responses=True) for p in plain_redis)
    first.set("precious", "data")
    lab = ExternalLab(f"redis-1=127.0.0.1:{plain_redis[0]},storage=127.0.0.1:{plain_redis[1]}")
    with pytest.raises(LabError, match="not marked as lockviz's"), lab.servers(["redis-1"]):
        pass
    assert first.get("precious") == "data"  # untouched
    first.set("lockviz:marker", "1")
    second.set("lockviz:marker", "1")
    with lab.servers(["redis-1", "storage"]) as servers:
        assert set(servers.addresses()) == {"redis-1", "storage"} and not servers.local
    assert first.get("precious") is None and first.get("lockviz:marker") == "1"
