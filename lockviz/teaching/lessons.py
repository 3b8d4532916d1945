"""The course: the built-in scenarios in modules, each one a lesson with a take-away.

Nine modules: single Redis, Redis with replicas and Sentinel, Redlock, ZooKeeper, PostgreSQL,
etcd, fencing and beyond, what the storage checks, and beyond one lock (elections, lockless
storage, pitfalls). The first four go from one node to replicas and failover, to independent
nodes, to consensus (a ZooKeeper ensemble, and later an etcd cluster). Within a module the
basics come first (the lock doing its job, clients taking turns), then the ways it fails.
Lessons are looked up by the scenario's slug, so a lesson appears as soon as its scenario file
exists and a missing one is simply not listed. A built-in that no module names yet joins the
module of its lock service, at its end: every built-in scenario is a lesson. Lessons are
numbered once, 1 to n, across the course.

A walkthrough tells a real run of the lesson's scenario. It needs a run of the scenario *as
written* (``same_script``): the questions and their answers were written for that script, not
for a variation with fencing switched off or another backend.

One module past the usual ~300 lines, on purpose: the course plan is one table, read in the
order a learner meets it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from lockviz.errors import ScenarioError
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario, parse


@dataclass(frozen=True)
class Plan:
    """A module as the course plans it: its lessons by slug (and title; "" for the scenario's
    own), and the lock service whose other built-ins join it (None: only those named)."""

    slug: str
    title: str
    about: str
    backend: str | None
    lessons: tuple[tuple[str, str], ...]


# -- The storage module (issue 12) ---------------------------------------------------------
# What the storage checks: one story (the fencing hole) told with each kind of storage, side by
# side; then storage without any lock, and a retry that an idempotency key makes safe.
STORAGE_MODULE: tuple[tuple[str, str], ...] = (
    ("storage-hole-fenced", "Storage: the fencing hole"),
    ("storage-hole-plain", "Storage: the hole, on a plain storage"),
    ("storage-hole-sequencer", "Storage: a sequencer check closes the hole"),
    ("storage-hole-cas", "Storage: compare-and-set checks versions, not locks"),
    ("storage-hole-fenced-reads", "Storage: a read that carries the token closes the hole"),
    ("storage-lost-update", "Storage: no lock, a lost update"),
    ("storage-lost-update-cas", "Storage: no lock, compare-and-set"),
    ("storage-retry-duplicate", "Storage: a retried write, applied twice"),
    ("storage-retry-idempotent", "Storage: an idempotency key applies it once"),
)


# -- Replicas and failover (issue 35) ------------------------------------------------------
# Between the single node and Redlock: the failure that motivates both Redlock and consensus (a
# replica promoted without the key), then Redis's own remedies and what each leaves open.
FAILOVER_MODULE: tuple[tuple[str, str], ...] = (
    ("redis-failover", "Failover hands the lock out twice"),
    ("redis-failover-wait", "WAIT 1 keeps the lock"),
    ("redis-failover-wait-loses", "WAIT 1, and still two holders"),
    ("redis-split-primary", "A split primary: two primaries grant"),
)


MODULES: tuple[Plan, ...] = (
    Plan("redis", "Single Redis", "One Redis node: SET NX with a lease, and how a lease misleads "
         "its holder.", "redis", (
        ("contention", "Taking turns"),
        ("naive-no-ttl-crash", "Why SETNX needs a TTL"),
        ("unsafe-release", "Release only your own lock"),
        ("redis-restart", "A restart forgets the lock"),
        ("gc-pause-unfenced", "A lease expires under a GC pause"),
        ("watchdog-pause", "The watchdog freezes too"),
    )),
    Plan("failover", "Replicas and failover", "A primary, its replicas and Sentinel: a lock "
         "survives a failover only if its key did; WAIT and min-replicas-to-write narrow the "
         "window without closing it.", "redis-sentinel", FAILOVER_MODULE),
    Plan("redlock", "Redlock", "Five independent Redis nodes and a majority: what the quorum "
         "buys, and what it cannot.", "redlock", (
        ("redlock-happy", "Redlock: a majority of five"),
        ("redlock-contention", "Redlock: taking turns on five nodes"),
        ("redlock-two-down", "Redlock's quorum: two of five nodes down"),
        ("redlock-three-down", "Redlock's quorum: three of five nodes down"),
        ("redlock-slow-network", ""),
        ("redlock-restart-fsync", ""),
        ("redlock-restart", ""),
        ("redlock-clock-jump", ""),
        ("redlock-slow-clock", ""),
        ("redlock-gc-pause", "Why Redlock cannot fence"),
    )),
    Plan("zookeeper", "ZooKeeper", "Sessions, sequential nodes and watches: a queue the server "
         "keeps.", "zookeeper", (
        ("zk-happy", ""),
        ("zk-contention", ""),
        ("zk-herd", "The herd effect"),
        ("zk-no-herd", "No herd: watch only the node before yours"),
        ("zk-partition", ""),
        ("zk-ensemble-partition", ""),
        ("zk-session-survives", "A session survives its server"),
        ("zk-leader-crash", "The leader crashes"),
    )),
    Plan("postgres", "PostgreSQL", "Advisory locks held by a session: safe without a lease, "
         "until a session outlives its client.", "postgres", (
        ("pg-happy", ""),
        ("pg-contention", ""),
        ("pg-crash-frees", ""),
        ("pg-restart-frees", ""),
        ("pg-pause-blocks", ""),
        ("pg-ghost-holder", ""),
        ("pg-ghost-holder-timeout", ""),
        ("pg-ghost-holder-reset", ""),
        ("pg-pooled-leak", ""),
        ("pg-pooled-xact", "PostgreSQL: the pooling fix, a transaction lock"),
    )),
    Plan("etcd", "etcd", "A lease, a queue of keys and a cluster-wide revision.", "etcd", (
        ("etcd-happy", "etcd: a lease, a lock, a revision"),
        ("etcd-contention", "etcd: waiters queue"),
        ("etcd-renew-pause", "etcd: the keepalive freezes too"),
        ("etcd-leader-crash", "etcd: the leader crashes"),
    )),
    Plan("fencing", "Fencing and beyond", "Every lease can expire under a paused holder; a "
         "token checked by the storage saves the data, whichever service hands it out.", None, (
        ("gc-pause-fenced", "Fencing tokens save the data"),
        ("zk-gc-pause-fenced", "ZooKeeper: a session expires, fencing still saves the data"),
        ("pg-gc-pause-fenced", ""),
        ("etcd-gc-pause-fenced", "etcd: a lease expires, the revision fences"),
    )),
    Plan("storage", "What the storage checks", "The same hole with plain, fenced, sequencer and "
         "compare-and-set storage; storage with no lock at all; a retry made safe.", None,
         STORAGE_MODULE),
    Plan("beyond", "Beyond one lock", "Leader election and its epochs; last-write-wins and a "
         "CRDT instead of a lock; the mistakes people write with a lock in hand.", None, (
        ("leader-etcd-pause-fenced", "Leader election: a deposed leader, refused by its epoch"),
        ("leader-etcd-pause-plain", "Leader election: the deposed leader, on a plain storage"),
        ("leader-zk-partition-fenced", "Leader election on ZooKeeper: a partitioned leader"),
        ("lww-clock-behind", "Last-write-wins: a slow clock loses a newer write"),
        ("crdt-clock-behind", "A CRDT: no update lost"),
        ("pitfall-write-after-failed-acquire", "Pitfall: writing after a failed acquire"),
        ("pitfall-slow-write", "Pitfall: a critical section that outlives its lease"),
        ("pitfall-read-outside-lock", "Pitfall: the read outside the lock"),
    )),
)  # fmt: skip


# Lessons that tell one story with several kinds of storage, linked side by side (each runs as
# its own built-in, with its prediction): the fencing hole and its closers; lockless; and so on.
PLAIN_FENCED = ("plain", "fenced")
SIDE_BY_SIDE: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        [slug for slug, _ in STORAGE_MODULE[:5]], ("fenced", "fenced_reads", "sequencer", "cas")
    ),
    **dict.fromkeys(("lww-clock-behind", "crdt-clock-behind"), ("lww", "crdt")),
    **dict.fromkeys(
        ("leader-etcd-pause-fenced", "leader-etcd-pause-plain"), ("fenced", "plain", "sequencer")
    ),
    **dict.fromkeys(("pitfall-write-after-failed-acquire", "pitfall-slow-write"), PLAIN_FENCED),
    "pitfall-read-outside-lock": ("fenced", "cas"),
}


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
    module: str = ""  # its module's slug

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


@dataclass(frozen=True)
class Module:
    number: int
    slug: str
    title: str
    about: str
    lessons: tuple[Lesson, ...]

    @property
    def minutes(self) -> int:
        return sum(item.minutes for item in self.lessons)


def modules(scenarios: Mapping[str, Scenario] | None = None) -> list[Module]:
    """The course in modules (the built-ins by default); a module with no lesson is left out."""
    scenarios = builtin() if scenarios is None else scenarios
    named = {slug for plan in MODULES for slug, _ in plan.lessons}
    found: list[Module] = []
    number = 0
    for plan in MODULES:
        slugs = [slug for slug, _ in plan.lessons if slug in scenarios]
        slugs += sorted(
            slug
            for slug, s in scenarios.items()
            if slug not in named and s.backend == plan.backend and slug not in slugs
        )
        titles = dict(plan.lessons)
        items = []
        for slug in slugs:
            number += 1
            items.append(_lesson(number, slug, titles.get(slug, ""), scenarios[slug], plan.slug))
        if items:
            found.append(Module(len(found) + 1, plan.slug, plan.title, plan.about, tuple(items)))
    placed = {item.slug for m in found for item in m.lessons}
    rest = [slug for slug in sorted(scenarios) if slug not in placed]  # a service no module has
    if rest:
        items = []
        for slug in rest:
            number += 1
            items.append(_lesson(number, slug, "", scenarios[slug], "more"))
        found.append(Module(len(found) + 1, "more", "More", "Further scenarios.", tuple(items)))
    return found


def course(scenarios: Mapping[str, Scenario] | None = None) -> list[Lesson]:
    """Every scenario of ``scenarios`` (the built-ins by default) as a lesson, in course order."""
    return [item for module in modules(scenarios) for item in module.lessons]


def _lesson(number: int, slug: str, title: str, scenario: Scenario, module: str) -> Lesson:
    return Lesson(
        number=number,
        slug=slug,
        title=title or scenario.title,
        takeaway=takeaway(slug, scenario),
        minutes=minutes(scenario),
        scenario=scenario,
        module=module,
    )


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


def same_script(run_scenario: dict[str, object], lesson_: Lesson) -> bool:
    """Whether a run played the lesson's scenario as written (so its questions fit the run):
    the same on the servers, whatever the words."""
    try:
        return parse(run_scenario).script() == lesson_.scenario.script()
    except ScenarioError:
        return False
