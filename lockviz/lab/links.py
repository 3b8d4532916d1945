"""The run engine's handle on the proxy process (lockviz.lab.children.proxy): a link per
client↔server.

Links are named ``"alice>redis-1"``. Every client reaches every server through its own link,
so a fault can be as asymmetric as real networks are: alice cut from redis-1 and redis-2 only,
bob untouched. The lab's own observers (watchers) talk to the servers directly.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection

from lockviz.lab import children, forkserver, procs
from lockviz.lab.children.proxy import Answer, Config
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
        self.proc: procs.Child | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        self.proc = forkserver.start(children.PROXY)  # it waits for its links
        assert self.proc.stdin is not None
        try:
            config: Config = {"links": self.targets, "patient": list(self.patient)}
            self.proc.stdin.write(json.dumps(config) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise LabError("the network proxy exited") from exc
        ready = self._read()
        if not ready.get("ready"):
            raise LabError(f"the network proxy did not start: {ready}")
        self.ports = {name: int(port) for name, port in ready.get("ports", {}).items()}

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
        command = {"link": name, "mode": mode, "ms": ms, "jitter_ms": jitter_ms}
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
        self.modes[name] = mode

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
