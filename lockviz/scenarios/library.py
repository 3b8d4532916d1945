"""The built-in scenarios (``builtin/<slug>.json``) and loading a scenario by slug or path."""

from __future__ import annotations

import os
from functools import cache

from lockviz.errors import ScenarioError
from lockviz.scenarios.schema import Scenario, loads

BUILTIN_DIR = os.path.join(os.path.dirname(__file__), "builtin")
# The order of the index page: from the lock working to the lock failing and fencing saving it.
ORDER = [
    "naive-no-ttl-crash",
    "contention",
    "gc-pause-unfenced",
    "gc-pause-fenced",
    "unsafe-release",
    "watchdog-pause",
    "redis-restart",
    "redlock-happy",
    "redlock-contention",
    "redlock-two-down",
    "redlock-three-down",
    "redlock-gc-pause",
    "redlock-clock-jump",
    "redlock-restart",
    "redlock-restart-fsync",
    "redlock-slow-clock",
    "redlock-slow-network",
    "zk-happy",
    "zk-contention",
    "zk-no-herd",
    "zk-herd",
    "zk-gc-pause-fenced",
    "zk-partition",
    "zk-ensemble-partition",
    "pg-happy",
    "pg-contention",
    "pg-pause-blocks",
    "pg-crash-frees",
    "pg-restart-frees",
    "pg-gc-pause-fenced",
    "pg-pooled-leak",
    "pg-ghost-holder",
    "pg-ghost-holder-timeout",
    "pg-ghost-holder-reset",
    "etcd-happy",
    "etcd-contention",
    "etcd-gc-pause-fenced",
    "etcd-renew-pause",
    "storage-hole-fenced",
    "storage-hole-plain",
    "storage-hole-sequencer",
    "storage-hole-cas",
    "storage-lost-update",
    "storage-lost-update-cas",
    "storage-retry-duplicate",
    "storage-retry-idempotent",
]


@cache
def builtin() -> dict[str, Scenario]:
    found = {}
    for name in sorted(os.listdir(BUILTIN_DIR)):
        if name.endswith(".json"):
            with open(os.path.join(BUILTIN_DIR, name), "rb") as f:
                found[name.removesuffix(".json")] = loads(f.read())
    rank = {slug: i for i, slug in enumerate(ORDER)}
    return dict(sorted(found.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))


def load(slug_or_path: str) -> tuple[str, Scenario]:
    """A built-in scenario by slug, or a scenario file by path; ``(slug, scenario)``."""
    if slug_or_path in builtin():
        return slug_or_path, builtin()[slug_or_path]
    if os.path.exists(slug_or_path):
        try:
            with open(slug_or_path, "rb") as f:
                text = f.read()
        except OSError as exc:
            raise ScenarioError([f"cannot read {slug_or_path}: {exc.strerror}"]) from None
        return "", loads(text)
    known = ", ".join(builtin())
    raise ScenarioError([f"{slug_or_path!r} is neither a built-in scenario ({known}) nor a file"])
