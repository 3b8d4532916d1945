"""What a client process receives: the one contract across the engine → worker boundary.

The engine builds a :class:`ClientConfig` per client and writes it as one JSON line on the
client's stdin, before any command (never on its command line: argv is visible to every user
of the machine and limited in size). :mod:`lockviz.lab.children.worker` reads it back with
:meth:`ClientConfig.from_json`; every field is named here and nowhere else.

The servers' passwords travel in it too (``passwords``: server name → password, for the servers
that have one), so they never appear in a process listing.

A run whose storage checks sequencers has one more process, the storage service
(:mod:`lockviz.lab.children.storage_service`); it receives a :class:`StorageServiceConfig` the
same way.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lockviz.lab.ports import split_address

if TYPE_CHECKING:  # the client process never imports the schema (pydantic): only the engine
    from lockviz.scenarios.schema import Scenario


class _Config:
    """What every lab process's config does: the servers it reaches, their passwords, its line."""

    servers: Mapping[str, str]  # server -> the address this process reaches it at
    passwords: Mapping[str, str]

    def address(self, node: str) -> tuple[str, int]:
        """Where this process reaches ``node`` (a client: its own link, through the proxy)."""
        return split_address(self.servers[node])

    def password(self, node: str) -> str | None:
        """What ``node`` asks for (``None``: nothing, e.g. an external server)."""
        return self.passwords.get(node)

    def to_json(self) -> str:
        assert dataclasses.is_dataclass(self) and not isinstance(self, type)
        return json.dumps(dataclasses.asdict(self))


@dataclass(frozen=True)
class ClientConfig(_Config):
    name: str  # this client: "alice"
    backend: str  # the lock service, see lockviz.catalogue
    variant: str
    ttl_ms: int
    fencing: bool
    clients: tuple[str, ...]  # every client of the run, in the scenario's order
    nodes: tuple[str, ...]  # the lock servers
    servers: Mapping[str, str] = field(default_factory=dict)  # node -> this client's own link
    call_timeout_ms: int = 1_000  # how long one request to a server may take
    renew: bool = False  # a watchdog thread extends the lease every ttl/3
    node_timeout_ms: int | None = None  # Redlock: per node
    clock_file: str | None = None  # the client's own clock (algorithms.clock.ClockFile)
    # server -> its password (Redis AUTH, PostgreSQL and PgBouncer); never shown in repr
    passwords: Mapping[str, str] = field(default_factory=dict, repr=False)
    storage: str = "fenced"  # what the storage checks (lockviz.catalogue.STORAGE_KINDS)
    # A group's servers: the address they know each other by -> the server's name (what a
    # Sentinel answers for the primary, mapped to this client's own link to it).
    announced: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def for_client(
        cls,
        scenario: Scenario,
        name: str,
        servers: Mapping[str, str],
        clock_file: str | None,
        call_timeout_ms: int,
        passwords: Mapping[str, str] | None = None,
        announced: Mapping[str, str] | None = None,
    ) -> ClientConfig:
        """What client ``name`` of ``scenario`` receives, reaching the servers at ``servers``."""
        return cls(
            name=name,
            backend=scenario.backend,
            variant=scenario.variant or scenario.lock_service.default_variant,
            ttl_ms=scenario.ttl_ms,
            fencing=scenario.fencing,
            clients=tuple(scenario.clients),
            nodes=tuple(scenario.nodes),
            servers=dict(servers),
            call_timeout_ms=call_timeout_ms,
            renew=scenario.renew,
            node_timeout_ms=scenario.node_timeout_ms,
            clock_file=clock_file,
            passwords=dict(passwords or {}),
            storage=scenario.storage_kind,
            announced=dict(announced or {}),
        )

    @classmethod
    def from_json(cls, text: str) -> ClientConfig:
        data = json.loads(text)
        data["clients"], data["nodes"] = tuple(data["clients"]), tuple(data["nodes"])
        return cls(**data)


@dataclass(frozen=True)
class StorageServiceConfig(_Config):
    """What the storage service receives: the lock servers it asks and the storage it writes.

    Its addresses are the servers' own, not a client's links: the service is a server beside
    the storage, and a fault on a client's links does not cut it off.
    """

    backend: str
    variant: str
    nodes: tuple[str, ...]  # the lock servers
    ttl_ms: int
    servers: Mapping[str, str] = field(default_factory=dict)  # every server -> its address
    call_timeout_ms: int = 1_000
    passwords: Mapping[str, str] = field(default_factory=dict, repr=False)
    name: str = "storage"  # the actor its events are recorded as

    @classmethod
    def from_json(cls, text: str) -> StorageServiceConfig:
        data = json.loads(text)
        data["nodes"] = tuple(data["nodes"])
        return cls(**data)
