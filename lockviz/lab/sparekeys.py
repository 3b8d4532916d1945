"""What a spare is: one kind's servers by name, with the options that kind reads (a spare
started with ``persistence: fsync`` is no spare for a run that asks for none). The pool
(:mod:`lockviz.lab.spares`) keeps its stock by these keys, and a run asks for its sets by them."""

from __future__ import annotations

from dataclasses import dataclass

from lockviz.catalogue import BACKENDS, STORAGE, server_kind
from lockviz.lab.errors import LabError
from lockviz.lab.servers import module_for
from lockviz.lab.servers.base import ServerOptions

# The options each kind's servers read (lockviz.lab.servers.<kind>.create): part of the key.
OPTIONS_READ: dict[str, tuple[str, ...]] = {
    "redis": ("persistence", "min_replicas_to_write"),
    "sentinel": (),
    "zk": ("persistence",),
    "pg": ("idle_session_timeout_ms",),
    "etcd": (),
}
DEFAULTS: dict[str, object] = {
    "persistence": "none",
    "idle_session_timeout_ms": None,
    "min_replicas_to_write": 0,
}


@dataclass(frozen=True)
class SpareKey:
    """What a run asks of one kind: the servers' names and the options that kind reads."""

    kind: str  # the server kinds' prefixes: redis, zk, pg, etcd, redis+sentinel
    names: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()

    @property
    def options_dict(self) -> ServerOptions:
        found = ServerOptions(persistence="none", idle_session_timeout_ms=None)
        for name, value in self.options:
            if name == "persistence":
                found["persistence"] = value
            elif name == "idle_session_timeout_ms":
                found["idle_session_timeout_ms"] = int(value)
            elif name == "min_replicas_to_write":
                found["min_replicas_to_write"] = int(value)
        return found

    def __str__(self) -> str:
        extra = "".join(f" {name}={value}" for name, value in self.options)
        return f"{'+'.join(self.names)}{extra}"


def key_for(names: list[str], options: ServerOptions | None = None) -> SpareKey:
    """The key of one module's servers ``names`` under ``options`` (LabError: servers that
    different modules start; a Redis set with its Sentinels is one module's)."""
    kinds = [server_kind(name) for name in names]
    if None in kinds or len({module_for(name) for name in names}) != 1:
        raise LabError(f"a spare is one kind of server, not {', '.join(names)}")
    prefixes = sorted({kind.prefix for kind in kinds if kind is not None})
    given = options or {}
    read = [
        (name, str(value))
        for name in sorted({o for prefix in prefixes for o in OPTIONS_READ.get(prefix, ())})
        if (value := given.get(name)) is not None and value != DEFAULTS.get(name)
    ]
    return SpareKey("+".join(prefixes), tuple(sorted(names)), tuple(read))


def first_keys() -> list[SpareKey]:
    """The sets kept warm from the start: the one free play and the first lessons ask for
    (single-node Redis and the storage node: 2 redis-servers, ~12 MB each). Every other set
    is kept once learners ask for it (:meth:`SparePool.target`)."""
    return [key_for([*BACKENDS["redis"].nodes(), STORAGE])]
