"""Per-backend glue between the lab and algorithms/: one module per backend.

Each module (``redis``, ``redlock``, ``zookeeper``, ``postgres``, ``etcd``) provides:

* ``make_lock(config, owner, emit) -> algorithms.lock.Lock`` — runs in the client's process
  (lockviz.lab.worker). ``config`` holds the scenario's settings (``backend``, ``variant``,
  ``ttl_ms``, ``fencing``, ``renew``, ...), ``nodes`` (the lock servers' names), ``servers``
  (name -> "host:port": this client's own proxied links), ``timeout_ms`` (the per-call
  timeout) and ``clock`` (the client's algorithms.clock.Clock, which the lab may skew: pass it
  to the lock).
* ``watchers(servers, scenario, record) -> list`` — runs in the engine: objects with
  ``start()`` and ``stop()`` that observe what the servers decide (a lease expired, a session
  ended) and report it with ``record(actor, kind, details, t_ns)``.

A backend is available when its module imports; the scenario schema asks :func:`available`.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


def get(backend: str) -> ModuleType:
    return importlib.import_module(f"lockviz.lab.backends.{backend}")


def available(backend: str) -> bool:
    return importlib.util.find_spec(f"lockviz.lab.backends.{backend}") is not None
