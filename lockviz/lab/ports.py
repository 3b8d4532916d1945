"""Loopback ports for the lab's servers."""

from __future__ import annotations

import random
import socket
import threading
import time

from lockviz.lab.errors import LabError

# Ports browsers refuse to open (Chromium's net/base/port_util.cc, those above 1023): a page
# served on one would fail with ERR_UNSAFE_PORT, so no server of the lab or the app gets one.
UNSAFE_FOR_BROWSERS = frozenset(
    {1719, 1720, 1723, 2049, 3659, 4045, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669,
     6697, 10080}
)  # fmt: skip
_handed_out: dict[int, float] = {}  # port -> when; not handed out again for a minute
_ports_lock = threading.Lock()


def _ephemeral_range() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(n) for n in f.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A loopback port for a server to listen on later.

    Chosen below the kernel's ephemeral range: a port handed out here is closed again until the
    server binds it, and in that gap a port the kernel picks for someone else (a proxy's
    listener, an outgoing connection) must not land on it. Not the same port twice within a
    minute in this process, and never one a browser refuses to open.
    """
    low, _ = _ephemeral_range()
    first = 10_000 if low > 12_000 else 1024
    with _ports_lock:
        now = time.monotonic()
        for _ in range(1000):
            port = random.randrange(first, low)
            if port in UNSAFE_FOR_BROWSERS or now - _handed_out.get(port, -3600.0) < 60:
                continue
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _handed_out[port] = now
            return port
    raise LabError("no free loopback port below the ephemeral range")


def split_address(address: str) -> tuple[str, int]:
    """``"127.0.0.1:6379"`` as ``("127.0.0.1", 6379)``; ValueError for anything else."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{address!r} is not host:port")
    return host, int(port)
