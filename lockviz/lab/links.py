"""The run engine's handle on the proxy process (lockviz.lab.children.proxy): a link per
client↔server.

Links are named ``"alice>redis-1"``. Every client reaches every server through its own link,
so a fault can be as asymmetric as real networks are: alice cut from redis-1 and redis-2 only,
bob untouched. The lab's own observers (watchers) talk to the servers directly.

A group of servers that dial each other at addresses they learn from each other (a Redis
primary, its replicas and their Sentinels; an etcd cluster) has a :class:`Mesh` instead: each
server one *front* that the others dial, each pair its own link (``redis-2>redis-1``), told apart
by the process that dialled (see :mod:`lockviz.lab.children.proxy`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection

from lockviz.lab import children, forkserver, procs
from lockviz.lab.children.proxy import Answer, Config, FrontConfig
from lockviz.lab.errors import LabError


def link_name(client: str, node: str) -> str:
    return f"{client}>{node}"


class Links:
    def __init__(
        self, clients: list[str], addresses: dict[str, str], patient: Collection[str] = ()
    ) -> None:
        """Links from each of ``clients`` to each server in ``addresses``; a connection on a
        link to a server in ``patient`` that refuses it is tried again for a moment (see
        :mod:`lockviz.lab.children.proxy`), as that server's own clients would."""
        self.targets = {
            link_name(client, node): address
            for client in clients
            for node, address in addresses.items()
        }
        self.patient = sorted(link_name(c, node) for c in clients for node in patient)
        self.modes = dict.fromkeys(self.targets, "pass")
        self.ports: dict[str, int] = {}
        self.fronts: dict[str, int] = {}  # a Mesh's servers -> their fronts' ports
        self.proc: procs.Child | None = None
        self._lock = threading.Lock()

    def config(self) -> Config:
        """What the proxy is told first: the links it listens for."""
        return {"links": self.targets, "patient": list(self.patient)}

    def start(self) -> None:
        self.proc = forkserver.start(children.PROXY)  # it waits for its links
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(self.config()) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise LabError("the network proxy exited") from exc
        ready = self._read()
        if not ready.get("ready"):
            raise LabError(f"the network proxy did not start: {ready}")
        self.ports = {name: int(port) for name, port in ready.get("ports", {}).items()}
        self.fronts = {name: int(port) for name, port in ready.get("fronts", {}).items()}

    def addresses_for(self, client: str) -> dict[str, str]:
        """Where ``client`` must connect to reach each server: its own links."""
        prefix = f"{client}>"
        return {
            name.removeprefix(prefix): f"127.0.0.1:{port}"
            for name, port in self.ports.items()
            if name.startswith(prefix)
        }

    def set(self, client: str, node: str, mode: str, ms: float = 0, jitter_ms: float = 0) -> None:
        name = link_name(client, node)
        if name not in self.targets:
            raise LabError(f"there is no link between {client} and {node}")
        self._command({"link": name, "mode": mode, "ms": ms, "jitter_ms": jitter_ms})
        self.modes[name] = mode

    def _command(self, command: dict[str, object]) -> None:
        with self._lock:
            assert self.proc is not None and self.proc.stdin is not None
            try:
                self.proc.stdin.write(json.dumps(command) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as exc:  # ValueError: stdin closed
                raise LabError("the network proxy exited") from exc
            answer = self._read()
        if not answer.get("ok"):
            raise LabError(f"the proxy refused {command}: {answer.get('error')}")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def faulty(self) -> list[tuple[str, str]]:
        """(client, node) of every link that is not passing bytes normally."""
        return [tuple(n.split(">", 1)) for n, m in self.modes.items() if m != "pass"]  # type: ignore[misc]

    def stop(self) -> None:
        if self.proc is not None:
            procs.stop(self.proc, grace_s=1.0)

    def _read(self) -> Answer:
        assert self.proc is not None and self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise LabError("the network proxy exited")
        answer: Answer = json.loads(line)
        return answer


class Mesh(Links):
    """The links between the servers of one group, through one front per server (see the
    module docstring): ``members`` is each server's real address, which only its front dials."""

    def __init__(self, members: dict[str, str]) -> None:
        super().__init__([], {})
        self.members = dict(members)
        self.targets = {
            link_name(source, node): address
            for node, address in members.items()
            for source in members
            if source != node
        }
        self.modes = dict.fromkeys(self.targets, "pass")

    def config(self) -> Config:
        fronts: dict[str, FrontConfig] = {
            node: {"address": address, "sources": [s for s in self.members if s != node]}
            for node, address in self.members.items()
        }
        return {"links": {}, "patient": [], "fronts": fronts}

    def front(self, node: str) -> str:
        """The one address the rest of the group dials ``node`` at."""
        return f"127.0.0.1:{self.fronts[node]}"

    def owner(self, node: str, pid: int) -> None:
        """``node``'s process is ``pid`` now (it started, or started again)."""
        self._command({"owner": node, "pid": pid})
