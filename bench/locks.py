"""Uncontended acquire+release latency: our lock clients against their peers and a raw baseline.

One script past the usual ~300 lines, on purpose: a bench is read and run as one file (ours and
each peer, side by side, in interleaved rounds).

For each backend it times our client (with the event callback the lab attaches, which turns
every event into a JSON line, as the client process does), our client with no callback (what
the teaching instrumentation costs), the peer library, and a raw one-round-trip baseline — on
the same servers, in the same run, interleaved in rounds (A B C D A B C D ...) so machine noise
hits all alike. The benchmark pins itself to CPU 0 and the servers to CPU 1: a loopback round
trip costs ~15 µs on one core and ~55 µs across cores, and the scheduler flips between the two
for seconds, so without pinning the ratios are noise.

    .venv/bin/python -m bench.locks                 # every backend the lab can start
    .venv/bin/python -m bench.locks --rounds 5 redis redlock

It prints a table and writes it into docs/performance.md.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from algorithms.clock import SystemClock
from algorithms.events import discard, json_line
from bench import ROOT, machine
from bench.doc import write_section
from lockviz.catalogue import BACKENDS as BACKENDS_CATALOGUE
from lockviz.catalogue import SERVER_KINDS
from lockviz.lab.backends import lock_factory
from lockviz.lab.config import ClientConfig
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers import missing

DOC = os.path.join(ROOT, "docs", "performance.md")
ANALYSIS = """### Where the time goes

- **Single Redis** (goal met). One round trip per step, as redis-py's `Lock`, but the acquire
  is a Lua script (`SET NX PX` and `INCR` of the fencing counter, atomically) where redis-py
  sends a plain `SET`. Through redis-py each command also paid its per-command Python (pool,
  packing, a general parser, retry bookkeeping) — as much as the round trip. The lock now talks
  RESP on its own socket (`algorithms/resp.py`: commands packed once, one small parser for the
  replies a lock gets, every failure closing the socket so a late reply is never read as the
  next answer) and calls its scripts by SHA1 (`EVALSHA`, `EVAL` after a `NOSCRIPT`).
- **Redlock** (goal out of reach here: the floor is about a third of pottery). The client sends
  each round to the five nodes at once on bare sockets and reads the replies as they arrive. The
  *SET + EVAL fan-outs* row is that floor measured directly: the same two rounds (acquire, then
  the release script) on the same sockets with no lock logic and no events; our client sits a
  few per cent above it. The issue's "two round trips are ~0.15×" counted *one* node's round
  trip (the *PING (one node)* row), but a round is five servers' work, and with the five
  redis-servers sharing one CPU (as here, where the benchmark pins them to one; the lab's
  machine has two cores for everything) it is done one server after another. cProfile of 2000
  acquire+release, events on (2026-11-26): 50% of the time in `poll` (waiting for the servers),
  13% in `sendall` (the kernel waking five servers), 10% encoding events (22 per
  acquire+release), the rest the round's bookkeeping.
- **ZooKeeper** (goal met). The recipe's create and first listing are sent together: ZooKeeper
  answers a session's requests in order, so the listing already holds our node, and joining
  the queue costs one round trip instead of two (kazoo's `Lock` makes them one after the other).
  Both requests are reported before either is sent: a queued request waits for kazoo's
  connection thread, which needs the GIL that the event encoding holds.
- **PostgreSQL** (goal met with `json_line`; 1.15–1.2× with the old `json.dumps` sink). Two
  statements, as the raw pair, plus the fencing token: `nextval()` runs in the same statement as
  `pg_try_advisory_lock`, so it costs server time, not a round trip. The two statements are
  prepared once per session and run by libpq directly (`psycopg.pq`'s `exec_prepared`, with the
  GIL released so the deadline thread can still end a hung call): psycopg's `execute` spent as
  long in Python as the loopback round trip. Each call still arms a client-side deadline (a
  PostgreSQL call can hang on a silent network whatever its timeouts say), now a small guard
  object and a heap push, under a microsecond. What is left are the six events: at this latency
  their encoding is the whole margin, hence the sink change below.
- **etcd** (beats the peer; ≤ 4× one read is out of reach: the floor is four writes, 7–8× one
  read here). One persistent HTTP/1.1 connection replaces a connection per request (headers and
  body in one segment), and when the lock is free one transaction (etcd's own
  `concurrency.Mutex` step: put our key under the lease, record the owner, read the head of the
  queue) both takes the lock and reads the token, where etcd's lock service needed a separate
  claim: five requests became four. What is left is four raft writes, each fsynced to the data
  dir (etcd 3.4 has no `--unsafe-no-fsync`): lease grant, the lock transaction, the unlock and
  the lease revoke. The *put (one write)* row is one such write, and *the four writes, raw*
  sends exactly our four requests on the same connection with no lock logic and no events: that
  is the floor, and our client sits a few per cent above it. A read (the baseline) skips raft
  and the disk. Fewer writes would change the lock: a lease kept from one grant to the next is
  not a lease that starts with the grant, and an unlock that is a revoke is seen as an expiry by
  the lab's watcher. cProfile of 2000 acquire+release, events on (2026-11-26): 70% of the time
  waiting for replies (`recv_into`), 6% sending, the rest http.client and JSON.

### The etcd peer

The etcd peer is [etcd3gw](https://pypi.org/project/etcd3gw/) 2.7.0 (OpenStack, released June
2026), a dev dependency: the best maintained synchronous etcd v3 client that installs on Python
3.11 and locks against etcd 3.4. It speaks the same JSON gateway (so no grpcio or protobuf pins)
and has a `Lock` with acquire, release and refresh. python-etcd3 (`etcd3`) last released in
March 2020; `aetcd`, `etcd3aio` and `async-etcd3gw` are asyncio-only; `etcd-client-py` binds a
Rust client. etcd3gw's lock makes three writes, not four: it never revokes its lease (the lease
lives on for its TTL after the release), and it has no queue, no fencing token and no events.

### The event sink

`lockviz/lab/children/worker.py`'s `Worker.emit` encoded each event with
`json.dumps({"t_ns": time.monotonic_ns(), "kind": kind, **details})`, and `json.dumps` builds a
new C encoder on every call: half its cost for an event-sized dict. `algorithms.events.json_line
(time.monotonic_ns(), kind, details)` returns the same text (a unit test compares them) from one
encoder built once. `Worker.emit` uses it now, as do the *events on* rows; the *events on,
json.dumps* rows keep the old sink, to show what the change saved.
"""
Op = Callable[[], object]  # what it returns is not used
EVENTS_ON = "ours (events on)"


@dataclass(frozen=True)
class Goal:
    """The issue's target for one backend: ``EVENTS_ON`` at most ``ratio`` × ``reference``."""

    reference: str
    ratio: float


# Per backend: the peer library (the "vs peer" column), the one-round-trip baseline (the "vs
# round trip" column), and the goals.
PEERS = {
    "redis": ("redis-py Lock", "PING"),
    "redlock": ("pottery Redlock", "PING (one node)"),
    "zookeeper": ("kazoo Lock", "exists()"),
    "postgres": ("raw try-lock + unlock", "SELECT 1"),
    "etcd": ("etcd3gw Lock", "range (one read)"),
}
GOALS = {
    "redis": [Goal("redis-py Lock", 1.0)],
    "redlock": [Goal("pottery Redlock", 0.25)],
    "zookeeper": [Goal("kazoo Lock", 0.85)],
    "postgres": [Goal("raw try-lock + unlock", 1.1)],
    "etcd": [
        Goal("range (one read)", 4.0),
        Goal("etcd3gw Lock", 1.0),
        Goal("the four writes, raw", 1.05),
    ],
}


def json_sink() -> Callable[[str, dict[str, Any]], None]:
    """What the client process does with each event: one JSON line (kept, not printed).

    The encoding is ``algorithms.events.json_line``: the same text as ``json.dumps``, at half
    the cost. lockviz/lab/children/worker.py's ``emit`` still calls ``json.dumps``;
    ``dumps_sink`` is that sink, measured beside it.
    """
    lines: collections.deque[str] = collections.deque(maxlen=1000)

    def sink(kind: str, details: dict[str, Any]) -> None:
        lines.append(json_line(time.monotonic_ns(), kind, details))

    return sink


def dumps_sink() -> Callable[[str, dict[str, Any]], None]:
    """The worker's sink as it was before ``json_line``: ``json.dumps`` per event."""
    lines: collections.deque[str] = collections.deque(maxlen=1000)

    def sink(kind: str, details: dict[str, Any]) -> None:
        lines.append(json.dumps({"t_ns": time.monotonic_ns(), "kind": kind, **details}))

    return sink


def three(backend: str, servers: Any, nodes: list[str], **extra: Any) -> dict[str, Op]:
    """Our client with the proposed sink, with the worker's current sink, and with none."""
    return {
        EVENTS_ON: ours(backend, servers, nodes, json_sink(), **extra),
        "ours (events on, json.dumps)": ours(backend, servers, nodes, dumps_sink(), **extra),
        "ours (events off)": ours(backend, servers, nodes, discard, **extra),
    }


def ours(backend: str, servers: Any, nodes: list[str], sink: Any, **extra: Any) -> Op:
    service = BACKENDS_CATALOGUE[backend]
    config = ClientConfig(
        name=f"bench-{id(sink)}",
        backend=backend,
        variant=extra.pop("variant", service.default_variant),
        ttl_ms=10_000,
        fencing=service.fencing,
        clients=(f"bench-{id(sink)}",),
        nodes=tuple(nodes),
        servers=servers.addresses(),
        call_timeout_ms=1000,
        passwords=servers.passwords(),
        **extra,
    )
    lock = lock_factory(backend)(config, SystemClock(), sink)
    prepare = getattr(lock, "prepare", None)
    if prepare:
        prepare()

    def op() -> None:
        if lock.acquire(0) is None:
            raise RuntimeError(f"{backend}: uncontended acquire refused")
        lock.release()

    return op


def try_once(peer: Any) -> Op:
    """One uncontended acquire + release of a peer library's lock (redis-py's, pottery's: the
    same two calls)."""

    def op() -> None:
        peer.acquire(blocking=False)
        peer.release()

    return op


def redis_candidates(servers: Any) -> dict[str, Op]:
    import redis.lock

    client = servers["redis-1"].client()
    return {
        **three("redis", servers, ["redis-1"]),
        "redis-py Lock": try_once(redis.lock.Lock(client, "bench:peer", timeout=10)),
        "PING": lambda: client.ping(),
    }


def redlock_candidates(servers: Any) -> dict[str, Op]:
    from pottery import Redlock

    nodes = [f"redis-{i}" for i in range(1, 6)]
    masters = {servers[n].client() for n in nodes}
    peer = Redlock(key="bench-peer", masters=masters, auto_release_time=10)
    ping = servers["redis-1"].client()
    return {
        **three("redlock", servers, nodes, node_timeout_ms=500),
        "pottery Redlock": try_once(peer),
        "PING (one node)": lambda: ping.ping(),
        "SET + EVAL fan-outs": fan_outs(servers, nodes),
    }


def fan_outs(servers: Any, nodes: list[str]) -> Op:
    """Redlock's floor: its two rounds (SET NX PX, then the release script) sent to every node
    at once on bare sockets and every reply read, with no lock logic and no events."""
    import select

    from algorithms.redis_lock import RELEASE_SCRIPT
    from algorithms.resp import RespConnection, pack

    conns = [
        RespConnection(
            servers[n].host, servers[n].port, timeout_ms=500, password=servers[n].password
        )
        for n in nodes
    ]
    acquire = pack("SET", "bench:floor", "v", "NX", "PX", 10_000)
    release = pack("EVAL", RELEASE_SCRIPT, 1, "bench:floor", "v")

    def fan_out(command: bytes) -> None:
        poller, waiting = select.poll(), {}
        for conn in conns:
            conn.send(command)
            waiting[conn.fileno()] = conn
            poller.register(conn.fileno(), select.POLLIN)
        while waiting:
            for fd, _ in poller.poll(500):
                waiting.pop(fd).read()
                poller.unregister(fd)

    def op() -> None:
        fan_out(acquire)
        fan_out(release)

    return op


def zookeeper_candidates(servers: Any) -> dict[str, Op]:
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=servers["zk-1"].address, timeout=5)
    zk.start(timeout=10)
    zk.ensure_path("/bench")
    peer = zk.Lock("/bench/peer", "bench")

    def peer_op() -> None:
        peer.acquire(blocking=False)
        peer.release()

    return {
        **three("zookeeper", servers, ["zk-1"]),
        "kazoo Lock": peer_op,
        "exists()": lambda: zk.exists("/bench"),
    }


def postgres_candidates(servers: Any) -> dict[str, Op]:
    import psycopg

    pg = servers["pg-1"]
    conn = psycopg.connect(
        host=pg.host,
        port=pg.port,
        user="postgres",
        dbname="postgres",
        autocommit=True,
        password=pg.password,
    )

    def peer_op() -> None:
        conn.execute("SELECT pg_try_advisory_lock(4242)")
        conn.execute("SELECT pg_advisory_unlock(4242)")

    return {
        **three("postgres", servers, ["pg-1"], variant="session"),
        "raw try-lock + unlock": peer_op,
        "SELECT 1": lambda: conn.execute("SELECT 1"),
    }


def etcd_candidates(servers: Any) -> dict[str, Op]:
    from etcd3gw.client import Etcd3Client

    from algorithms.etcd_gateway import Gateway, b64
    from algorithms.etcd_lock import _enqueue_txn

    node = servers["etcd-1"]
    gateway = Gateway(node.host, node.port, node="etcd-1", timeout_ms=1000)
    peer = Etcd3Client(host=node.host, port=node.port, api_path="/v3/", timeout=1).lock(
        "bench-peer", ttl=10
    )

    def peer_op() -> None:
        if not peer.acquire():
            raise RuntimeError("etcd3gw: uncontended acquire refused")
        peer.release()

    put = {"key": b64("bench-put"), "value": b64("x")}

    def four_writes() -> None:
        """Our lock's floor: its four requests (lease grant, the lock transaction, unlock,
        revoke) on the same connection, with no lock logic and no events."""
        lease = gateway.call("/v3/lease/grant", {"TTL": 10})["ID"]
        key = f"bench-floor/{int(lease):x}"
        txn = _enqueue_txn("bench-floor", key, f"bench-floor.owners/{int(lease):x}", "b", lease)
        gateway.call("/v3/kv/txn", txn)
        gateway.call("/v3/kv/deleterange", {"key": b64(key)})
        gateway.call("/v3/lease/revoke", {"ID": lease})

    return {
        **three("etcd", servers, ["etcd-1"]),
        "etcd3gw Lock": peer_op,
        "range (one read)": lambda: gateway.call("/v3/kv/range", {"key": "YQ=="}),
        "put (one write)": lambda: gateway.call("/v3/kv/put", put),
        "the four writes, raw": four_writes,
    }


BACKENDS: dict[str, tuple[list[str], str, Callable[[Any], dict[str, Op]]]] = {
    "redis": (["redis-1"], "redis", redis_candidates),
    "redlock": ([f"redis-{i}" for i in range(1, 6)], "redis", redlock_candidates),
    "zookeeper": (["zk-1"], "zk", zookeeper_candidates),
    "postgres": (["pg-1"], "pg", postgres_candidates),
    "etcd": (["etcd-1"], "etcd", etcd_candidates),
}


@contextmanager
def pinned(servers: Any) -> Iterator[None]:
    """This process on CPU 0, every server process (and its children) on CPU 1."""
    if (os.cpu_count() or 1) < 2:
        yield
        return
    for server in servers.servers.values():
        for pid in server.pids():
            for task in _tree(pid):
                with suppress(OSError):  # a backend that just exited
                    os.sched_setaffinity(task, {1})
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {0})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _tree(pid: int) -> list[int]:
    """A process and all its descendants (PostgreSQL forks a backend per connection)."""
    found = [pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found += _tree(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def measure(candidates: dict[str, Op], rounds: int, per_round: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for op in candidates.values():  # warm up connections and caches
        for _ in range(20):
            op()
    for _ in range(rounds):
        for name, op in candidates.items():
            for _ in range(per_round):
                started = time.perf_counter_ns()
                op()
                samples[name].append((time.perf_counter_ns() - started) / 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", default=list(BACKENDS))
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--per-round", type=int, default=100)
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args()
    rows = [
        "| backend | client | median µs | p99 µs | vs peer | vs round trip | goal | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for backend in args.backends:
        nodes, kind, candidates_for = BACKENDS[backend]
        if missing(SERVER_KINDS[kind]):
            notes.append(f"- {backend}: skipped (its server is not installed here)")
            continue
        with ExitStack() as stack:
            servers = stack.enter_context(LocalLab().servers(nodes))
            candidates = candidates_for(servers)
            stack.enter_context(pinned(servers))
            samples = measure(candidates, args.rounds, args.per_round)
        medians = {name: statistics.median(values) for name, values in samples.items()}
        peer, baseline = PEERS[backend]
        for name, values in samples.items():
            p99 = sorted(values)[int(len(values) * 0.99) - 1]
            vs_peer = f"{medians[name] / medians[peer]:.2f}×" if name != peer else ""
            vs_rtt = f"{medians[name] / medians[baseline]:.2f}×" if name != baseline else ""
            goals = GOALS[backend] if name == EVENTS_ON else []
            goal = "; ".join(f"≤ {g.ratio}× {g.reference}" for g in goals)
            met = "; ".join(
                "yes" if medians[name] <= g.ratio * medians[g.reference] else "no" for g in goals
            )
            rows.append(
                f"| {backend} | {name} | {medians[name]:.0f} | {p99:.0f} | {vs_peer} | {vs_rtt}"
                f" | {goal} | {met} |"
            )
            print(rows[-1], flush=True)
    summary = (
        f"{args.rounds} interleaved rounds × {args.per_round} acquire+release per client; "
        f"{machine.cores()}, benchmark on CPU 0 and servers on CPU 1; {machine.now()}."
    )
    table = "\n".join([*rows, "", *notes])
    print("\n" + table + "\n" + summary)
    if not args.no_doc:
        write_doc(table, summary)


BEGIN, END = "<!-- bench/locks.py: begin -->", "<!-- bench/locks.py: end -->"
INTRO = """## Lock clients: one acquire + release

`bench/locks.py` times one uncontended acquire + release of each lock client against the peer
library and a one-round-trip baseline, on the same lab servers, interleaved in rounds, with the
benchmark and the servers pinned to different CPUs. *ours (events on)* is the client as the lab
runs it: every protocol step becomes an event encoded as a JSON line, by
`algorithms.events.json_line`, as `lockviz/lab/children/worker.py` does. *ours (events on,
json.dumps)* is the same with the encoding the worker used before (`json.dumps` per event; see
*The event sink* below). *ours (events off)* has no listener: the difference is what the
teaching instrumentation costs.
*vs peer* and *vs round trip* divide each median by the peer's and by the one-round-trip
baseline's (the row left blank is the reference); *goal* is the issue's target for that row.
"""


def write_doc(table: str, summary: str) -> None:
    """Replace this benchmark's section of docs/performance.md, keeping every other section."""
    section = (
        f"{BEGIN}\n{INTRO}\n{table}\n{summary}\n\n{ANALYSIS}\n"
        f"Regenerate with `.venv/bin/python -m bench.locks` (a few minutes).\n{END}"
    )
    write_section(DOC, section, begin=BEGIN, end=END)


if __name__ == "__main__":
    main()
