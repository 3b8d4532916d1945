"""The course: the built-in scenarios in teaching order, each one a lesson with a take-away.

The order runs from the simplest failure (a lock without a TTL) through leases, fencing and
releases to the other backends. Lessons are looked up by the scenario's slug, so a lesson
appears as soon as its scenario file exists and a missing one is simply not listed. A built-in
that the course does not name yet is appended at the end: every built-in scenario is a lesson.

A walkthrough tells a real run of the lesson's scenario. It needs a run of the scenario *as
written* (``same_script``): the questions and their answers were written for that script, not
for a variation with fencing switched off or another backend.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario, ScenarioError, parse

# (slug, or a "prefix-*" that takes the remaining slugs with that prefix in name order; the
# lesson's title, or "" for the scenario's own title)
COURSE: list[tuple[str, str]] = [
    ("naive-no-ttl-crash", "Why SETNX needs a TTL"),
    ("naive-*", ""),
    ("gc-pause-unfenced", "A lease expires under a GC pause"),
    ("gc-pause-fenced", "Fencing tokens save the data"),
    ("unsafe-release", "Release only your own lock"),
    ("contention", "Taking turns"),
    ("redis-restart", "A restart forgets the lock"),
    ("redis-*", ""),
    ("redlock-happy", "Redlock: a majority of five"),
    ("redlock-contention", "Redlock: taking turns on five nodes"),
    ("redlock-gc-pause", "Why Redlock cannot fence"),
    ("redlock-two-down", "Redlock's quorum: two of five nodes down"),
    ("redlock-three-down", "Redlock's quorum: three of five nodes down"),
    ("redlock-*", ""),
    ("watchdog-pause", "The watchdog freezes too"),
    ("watchdog-*", ""),
    ("zk-gc-pause-fenced", "ZooKeeper: a session expires, fencing still saves the data"),
    ("zk-herd", "The herd effect"),
    ("zk-no-herd", "No herd: watch only the node before yours"),
    ("zk-*", ""),
    ("pg-*", ""),
    ("etcd-happy", "etcd: a lease, a lock, a revision"),
    ("etcd-contention", "etcd: waiters queue"),
    ("etcd-gc-pause-fenced", "etcd: a lease expires, the revision fences"),
    ("etcd-renew-pause", "etcd: the keepalive freezes too"),
    ("etcd-*", ""),
]


# -- The storage module (issue 12) ---------------------------------------------------------
# What the storage checks: one story (the fencing hole) told with each kind of storage, side by
# side; then storage without any lock, and a retry that an idempotency key makes safe.
STORAGE_MODULE: list[tuple[str, str]] = [
    ("storage-hole-fenced", "Storage: the fencing hole"),
    ("storage-hole-plain", "Storage: the hole, on a plain storage"),
    ("storage-hole-sequencer", "Storage: a sequencer check closes the hole"),
    ("storage-hole-cas", "Storage: compare-and-set checks versions, not locks"),
    ("storage-lost-update", "Storage: no lock, a lost update"),
    ("storage-lost-update-cas", "Storage: no lock, compare-and-set"),
    ("storage-retry-duplicate", "Storage: a retried write, applied twice"),
    ("storage-retry-idempotent", "Storage: an idempotency key applies it once"),
]
COURSE += STORAGE_MODULE
# Lessons that tell one story with several kinds of storage: each links to all of them side by
# side (the comparison runs each as its own built-in, with its prediction).
SIDE_BY_SIDE: dict[str, tuple[str, ...]] = dict.fromkeys(
    [slug for slug, _ in STORAGE_MODULE[:4]], ("fenced", "plain", "sequencer", "cas")
)


def side_by_side(slug: str) -> str:
    """The comparison of lesson ``slug``'s story across storage kinds ('' when it has none)."""
    kinds = SIDE_BY_SIDE.get(slug)
    return f"/compare/?scenario={slug}&lanes={','.join(kinds)}" if kinds else ""


# The take-away of scenarios that do not carry their own "takeaway" field.
TAKEAWAYS: dict[str, str] = {
    "naive-no-ttl-crash": "A lock without a TTL dies with its holder: once the holder crashes, "
    "nobody can ever take the lock again.",
    "redis-restart": "A lock is only as durable as the server that keeps it: a restart without "
    "fsync hands it out twice.",
    "redlock-happy": "Redlock holds the lock when a majority of independent nodes said yes with "
    "time left on the lease.",
    "redlock-contention": "A Redlock waiter that misses the majority undoes its attempt on every "
    "node and retries after a random delay.",
    "redlock-gc-pause": "Redlock's random lock values cannot fence: a client that wakes from a "
    "pause overwrites newer data, whatever the quorum decided.",
    "redlock-two-down": "With two of five nodes down a majority of three still answers, so "
    "Redlock keeps granting the lock.",
    "redlock-three-down": "With three of five nodes down no majority can answer, so nobody gets "
    "the lock: Redlock gives up availability to stay safe.",
    "watchdog-pause": "A watchdog that renews the lease lives in the client's process: a pause "
    "freezes it too, and the lease expires anyway.",
    "zk-gc-pause-fenced": "A ZooKeeper session expires under a pause just as a lease does; a "
    "token checked by the storage still saves the data.",
    "zk-herd": "When every waiter watches the lock node, each release wakes them all: a herd "
    "that grows with the number of clients.",
    "zk-no-herd": "Watching only the node just before yours wakes exactly one waiter per "
    "release, however many wait.",
    "etcd-happy": "etcd's lock key has a create revision, a counter shared by the whole "
    "cluster: a fencing token for free.",
    "etcd-contention": "etcd queues waiters by revision and wakes exactly the next one: no "
    "retries, first come first served.",
    "etcd-gc-pause-fenced": "An etcd lease expires under a pause too; the key's revision is a "
    "fencing token that the storage can check.",
    "etcd-renew-pause": "A keepalive thread freezes with its process: the lease expires during "
    "the pause and the client learns it only afterwards.",
}


@dataclass(frozen=True)
class Lesson:
    number: int
    slug: str
    title: str
    takeaway: str
    minutes: int
    scenario: Scenario

    @property
    def backend(self) -> str:
        """The lock service, as a learner names it: "Redis", "Redlock (5 nodes)", ..."""
        s = self.scenario
        return s.lock_service.describe(s.variant, s.node_count)

    @property
    def side_by_side(self) -> str:
        return side_by_side(self.slug)

    @property
    def checkpoints(self) -> int:
        return sum(1 for step in self.scenario.steps if step.ask is not None)


def course(scenarios: Mapping[str, Scenario] | None = None) -> list[Lesson]:
    """Every scenario of ``scenarios`` (the built-ins by default) as a lesson, in course order."""
    scenarios = builtin() if scenarios is None else scenarios
    slugs: list[str] = []
    for key, _title in COURSE:
        if key.endswith("*"):
            prefix = key[:-1]
            slugs += sorted(s for s in scenarios if s.startswith(prefix) and s not in slugs)
        elif key in scenarios and key not in slugs:
            slugs.append(key)
    slugs += sorted(s for s in scenarios if s not in slugs)
    titles = {key: title for key, title in COURSE if title}
    return [
        Lesson(
            number=n,
            slug=slug,
            title=titles.get(slug) or scenarios[slug].title,
            takeaway=takeaway(slug, scenarios[slug]),
            minutes=minutes(scenarios[slug]),
            scenario=scenarios[slug],
        )
        for n, slug in enumerate(slugs, start=1)
    ]


def lesson(slug: str) -> Lesson | None:
    return next((item for item in course() if item.slug == slug), None)


def takeaway(slug: str, scenario: Scenario) -> str:
    """The scenario's own take-away, else the course's, else its description's first sentence."""
    if scenario.takeaway:
        return scenario.takeaway
    if slug in TAKEAWAYS:
        return TAKEAWAYS[slug]
    first = re.split(r"(?<=[.!?])\s", scenario.description.strip(), maxsplit=1)[0]
    return first or scenario.title


def minutes(scenario: Scenario) -> int:
    """A reading estimate, 2 to 4 minutes: narration and questions take the time, not the run."""
    narrated = sum(1 for step in scenario.steps if step.say)
    asks = sum(1 for step in scenario.steps if step.ask)
    estimate = 1.5 + narrated * 0.2 + asks * 0.5 + scenario.duration_ms / 20_000
    return max(2, min(4, round(estimate)))


def same_script(run_scenario: dict[str, Any], lesson_: Lesson) -> bool:
    """Whether a run played the lesson's scenario as written (so its questions fit the run):
    the same on the servers, whatever the words."""
    try:
        return parse(run_scenario).script() == lesson_.scenario.script()
    except ScenarioError:
        return False
