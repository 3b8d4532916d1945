"""The lab's network: one TCP proxy per client↔server link, all in one asyncio process.

Forked from the lab's warm fork server (:mod:`lockviz.lab.forkserver`), or run as
``python -m lockviz.lab.children.proxy``. It reads its links as the first line on stdin
(``{"links": {"alice>redis-1": "127.0.0.1:6379"}}``), listens on a free loopback port per link,
prints ``{"ready": true, "ports": {link: port}}`` and then takes one command per line on stdin,
answering each with one line on stdout:

    {"op": "set", "link": "alice>redis-1", "mode": "blackhole"}           -> {"ok": true}
    {"op": "set", "link": "alice>redis-1", "mode": "delay", "ms": 300, "jitter_ms": 50}

Modes, as a real network does them:

* ``pass``      bytes flow.
* ``blackhole`` bytes stop in both directions and are held; on heal (``pass``) they are
  delivered in order, as TCP does when a partition ends. The proxy's kernel still acknowledges
  what the client sends, so the client sees no error, only silence: its own timeouts decide.
* ``reset``     open connections are reset (RST) and new ones are accepted and reset at once.
* ``delay``     each chunk is delivered ``ms`` (± ``jitter_ms``) after it arrived, in order.

A proxy cannot refuse a connection the way a server that is not listening does: the kernel
accepts it before the proxy knows, so a refused upstream becomes a reset. For most links that is
the same news (the server is not there) and it comes at once. A link listed as *patient* tries a
refused upstream again, every 20 ms for up to 2 s, before it resets: that is for ZooKeeper's
quorum port, which only the leader opens, and only once elected. A follower that connects a
moment too early is refused, and ZooKeeper retries a refused connection (five tries, 100 ms
apart) but takes a reset as the leader failing, starts a new election round, and leaves the new
leader waiting for it for ``initLimit``: a failover took 10 s through the proxy, 0.2 s without.

A server of a *group* (a Redis primary with its replicas and Sentinels, an etcd cluster) is
dialled by the others at one address they learn from each other, so it gets a *front*: one
port, whose connections are told apart by the process that opened them (:mod:`lockviz.lab.peers`;
the lab names each server's process with ``{"owner": "redis-2", "pid": 4242}``, again after a
restart) and carried on that pair's link, ``redis-2>redis-1``: a link like any other, but with
no port of its own, and patient (the servers of a group start all at once: a replica may dial
its primary a moment before it listens). A connection from a process the front does not know
is reset.

No off-the-shelf proxy is installable here (toxiproxy's server is in neither Debian nor PyPI);
this one adds ~50 µs per round trip. It dies with the app (parent-death signal) and when its
stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from lockviz.lab.peers import who_dialled
from lockviz.lab.ports import split_address
from lockviz.lab.procs import die_with_parent

CHUNK = 65536


PATIENCE_S = 2.0  # how long a patient link tries a refused upstream again
RETRY_S = 0.02
WHO_S = 1.0  # how long a front waits to learn who dialled (a server just launched, say)


@dataclass
class Link:
    name: str
    host: str
    port: int
    patience_s: float = 0.0
    mode: str = "pass"
    ms: float = 0.0
    jitter_ms: float = 0.0
    writers: set[asyncio.StreamWriter] = field(default_factory=set)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    def deliver_at(self, last: float) -> float:
        """When a chunk read now may be delivered: never before the previous one."""
        if self.mode != "delay":
            return last
        jitter = random.uniform(-self.jitter_ms, self.jitter_ms) if self.jitter_ms else 0.0
        return max(last, time.monotonic() + max(0.0, self.ms + jitter) / 1000)

    async def set(self, mode: str, ms: float = 0.0, jitter_ms: float = 0.0) -> None:
        async with self.changed:
            self.mode, self.ms, self.jitter_ms = mode, ms, jitter_ms
            self.changed.notify_all()
        if mode == "reset":
            for writer in list(self.writers):
                _reset(writer)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.mode == "reset":
            _reset(writer)
            return
        try:
            up_reader, up_writer = await self._connect()
        except OSError:
            _reset(writer)
            return
        if self.mode == "reset":  # reset while this connection was being set up
            _reset(writer)
            _reset(up_writer)
            return
        self.writers.update((writer, up_writer))
        try:
            await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                self.writers.discard(w)
                w.close()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The upstream connection; on a patient link a refusal is tried again for a moment."""
        deadline = time.monotonic() + self.patience_s
        while True:
            try:
                return await asyncio.open_connection(self.host, self.port)
            except ConnectionRefusedError:
                if time.monotonic() >= deadline or self.mode == "reset":
                    raise
            await asyncio.sleep(RETRY_S)

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        sender = asyncio.create_task(self._send(queue, dst))
        last = 0.0
        try:
            while data := await src.read(CHUNK):
                last = self.deliver_at(last)
                queue.put_nowait((last, data))
        except (ConnectionError, OSError):
            pass
        finally:
            await queue.put((0.0, b""))  # end of stream, after what is still held
            with contextlib.suppress(ConnectionError, OSError):
                await sender

    async def _send(
        self, queue: asyncio.Queue[tuple[float, bytes]], dst: asyncio.StreamWriter
    ) -> None:
        while True:
            at, data = await queue.get()
            async with self.changed:  # a blackhole holds everything until it is healed
                await self.changed.wait_for(lambda: self.mode != "blackhole")
            if self.mode == "reset":
                _reset(dst)  # what was held is dropped, as a reset connection drops it
                return
            if not data:
                if dst.can_write_eof():
                    dst.write_eof()
                return
            delay = at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            dst.write(data)
            await dst.drain()


@dataclass
class Front:
    """One server's single address for the rest of its group (see the module docstring)."""

    node: str
    links: dict[str, Link]  # the dialling server's name -> the link it uses
    pids: dict[int, str] = field(default_factory=dict)  # the group's processes, by pid

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer, local = writer.get_extra_info("peername"), writer.get_extra_info("sockname")
        deadline = time.monotonic() + WHO_S
        source = None
        while source is None and time.monotonic() < deadline:
            source = who_dialled(peer[:2], local[:2], self.pids)
            if source is None:
                await asyncio.sleep(RETRY_S)
        link = self.links.get(source or "")
        if link is None:
            _reset(writer)
            return
        await link.serve(reader, writer)


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST, not FIN: the peer sees "connection reset", as after a crash."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class FrontConfig(TypedDict):
    """A server with a front: its address, and the servers of its group that dial it."""

    address: str
    sources: list[str]


class Config(TypedDict):
    """The first line the proxy reads: every link's server, which links are patient, and the
    servers that have a front."""

    links: dict[str, str]  # link name -> the server's address
    patient: list[str]
    fronts: NotRequired[dict[str, FrontConfig]]  # server -> its front


class Answer(TypedDict, total=False):
    """A line the proxy writes: ready (with each link's port), or a command's outcome."""

    ready: bool
    ports: dict[str, int]
    fronts: dict[str, int]  # server -> its front's port
    ok: bool
    error: str


async def serve(config: Config) -> None:
    links: dict[str, Link] = {}
    ports: dict[str, int] = {}
    patient = set(config.get("patient", ()))
    for name, address in config["links"].items():
        host, port = split_address(address)
        link = links[name] = Link(name, host, port, PATIENCE_S if name in patient else 0.0)
        server = await asyncio.start_server(link.serve, "127.0.0.1", 0)
        ports[name] = server.sockets[0].getsockname()[1]
    fronts: dict[str, Front] = {}
    front_ports: dict[str, int] = {}
    for node, front in config.get("fronts", {}).items():
        host, port = split_address(front["address"])
        fronts[node] = Front(node, {})
        for source in front["sources"]:
            name = f"{source}>{node}"
            link = Link(name, host, port, PATIENCE_S)  # a group's servers start all at once
            links[name] = fronts[node].links[source] = link
        server = await asyncio.start_server(fronts[node].serve, "127.0.0.1", 0)
        front_ports[node] = server.sockets[0].getsockname()[1]
    _say({"ready": True, "ports": ports, "fronts": front_ports})
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        try:
            command = json.loads(line)
            if "owner" in command:  # a server of a group (re)started: its process is this pid
                for served in fronts.values():
                    served.pids = {p: n for p, n in served.pids.items() if n != command["owner"]}
                    served.pids[int(command["pid"])] = str(command["owner"])
                _say({"ok": True})
                continue
            link = links[command["link"]]
            mode = command["mode"]
            if mode not in ("pass", "blackhole", "reset", "delay"):
                raise ValueError(f"unknown mode {mode!r}")
            await link.set(mode, float(command.get("ms", 0)), float(command.get("jitter_ms", 0)))
            _say({"ok": True})
        except (KeyError, ValueError, TypeError) as exc:
            _say({"ok": False, "error": str(exc)})


def _say(message: Answer) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    """Read the links (the first line), then serve them until stdin closes."""
    die_with_parent()
    first = sys.stdin.readline()  # nothing else comes before it has said it is ready
    if first:  # EOF: the app is stopping before it used it
        asyncio.run(serve(json.loads(first)))


if __name__ == "__main__":
    main()
