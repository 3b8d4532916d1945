"""Who is at the other end of a loopback connection: the process that owns its socket.

The proxy's *fronts* (:mod:`lockviz.lab.children.proxy`) give each server of a group one address
that every other server of the group dials (a replica its primary, a Sentinel each node, an etcd
member its peers), because those servers learn each other's addresses from each other: Redis
replicas announce theirs, Sentinels gossip, etcd keeps its members' peer URLs in its own log.
One address per server, many sources: to cut one pair and not the others, the front must know
which server dialled. Every server of the lab runs on this machine as a child of the lab, so the
kernel knows: the connecting socket is the entry of ``/proc/net/tcp`` whose local address is the
accepted connection's peer, and its inode is an open file (``socket:[inode]``) of exactly one
of the group's processes.

Linux only, as the rest of the lab (``PR_SET_PDEATHSIG``, libfaketime). A lookup reads
``/proc/net/tcp`` once and lists the descriptors of at most the group's few processes: about a
millisecond, once per connection (the servers keep theirs open for the whole run).
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Mapping

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")


def _hex_address(host: str, port: int) -> tuple[str, ...]:
    """How ``/proc/net/tcp`` (and ``tcp6``, for an IPv4 address mapped into IPv6) write it."""
    packed = socket.inet_aton(host)
    v4 = "%08X:%04X" % (struct.unpack("<I", packed)[0], port)
    mapped = socket.inet_pton(socket.AF_INET6, f"::ffff:{host}")
    v6 = "".join("%08X" % word for word in struct.unpack("<4I", mapped)) + ":%04X" % port
    return v4, v6


def socket_inode(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """The inode of the socket whose own address is ``peer`` and whose remote is ``local``
    (the other end of a connection this process accepted on ``local``); None if not found."""
    mine, theirs = _hex_address(*peer), _hex_address(*local)
    for table in TABLES:
        try:
            with open(table) as f:
                next(f, None)  # the header
                for line in f:
                    fields = line.split()
                    if len(fields) > 9 and fields[1] in mine and fields[2] in theirs:
                        return int(fields[9]) or None
        except OSError:
            continue
    return None


def owner(inode: int, pids: Mapping[int, str]) -> str | None:
    """The name (``pids``: pid → name) of the process holding socket ``inode`` open."""
    target = f"socket:[{inode}]"
    for pid, name in pids.items():
        fds = f"/proc/{pid}/fd"
        try:
            entries = os.listdir(fds)
        except OSError:  # gone, or not ours to read
            continue
        for entry in entries:
            try:
                if os.readlink(os.path.join(fds, entry)) == target:
                    return name
            except OSError:
                continue
    return None


def who_dialled(
    peer: tuple[str, int], local: tuple[str, int], pids: Mapping[int, str]
) -> str | None:
    """Which of ``pids`` opened the connection accepted on ``local`` from ``peer``."""
    inode = socket_inode(peer, local)
    return owner(inode, pids) if inode is not None else None
