"""The ideas the course teaches, and the rule that keeps its order: nothing is used before it is
taught, and no lesson sends a learner forward.

Each lesson of the course plan (:data:`lockviz.teaching.lessons.MODULES`) is a :class:`Planned`
row that declares the :class:`Concept` s it **teaches** and the ones it **uses**. A concept is
taught by exactly one lesson, its home; every other lesson that needs it uses it, and may do so
only after that home in the course. Some concepts a lesson needs can be read off its scenario
(:func:`implied`: a Redlock scenario needs majorities, a ``"storage": "cas"`` one needs
compare-and-set, a ``pause`` step needs process pauses…), so a lesson counts as using those
whether it declares them or not: a row cannot forget them.

A lesson's words (description, take-away, narration, questions, choices, explanations) may name
another lesson in one way only, ``lesson “<its title>”`` (:data:`REFERENCE`), and only an
earlier one; a vaguer pointer ("the companion scenario", "the next lesson", "lesson 12") is
refused, since it can silently point the wrong way after a reorder.

:func:`problems` lists every breach of these rules for a course in order;
``tests/lockviz/teaching/test_concepts.py`` holds the built-in course to an empty list, and shows
it failing on a deliberately misordered one. What each lesson builds on, as the pages say it
("you met fencing tokens in lesson 4"), is :func:`builds_on`. docs/scenarios.md ("Adding a
lesson") says how a new lesson declares its concepts.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lockviz.scenarios.schema import Scenario


class Concept(enum.Enum):
    """An idea a lesson teaches; its value is how a sentence names it ("you met … in lesson 4")."""

    MUTUAL_EXCLUSION = "mutual exclusion"
    LEASE = "leases"
    TOKEN = "fencing tokens"
    LIVENESS = "a lock nobody can get (liveness)"
    PAUSE = "process pauses"
    STALE_WRITE = "stale writes"
    FENCED_STORAGE = "a storage that checks tokens"
    OWNER_CHECK = "releasing only your own lock"
    WATCHDOG = "renewing a lease from a thread"
    PERSISTENCE = "what a restart keeps"
    QUORUM = "majorities of independent nodes"
    VALIDITY = "Redlock's validity time"
    NETWORK = "faults on the network"
    FSYNC = "an append-only log, fsynced"
    CLOCKS = "clocks that jump or drift"
    ZK_SESSION = "ZooKeeper sessions"
    WATCH = "ZooKeeper watches"
    HERD = "the herd effect"
    ENSEMBLE = "a replicated lock service"
    SESSION_LOCK = "locks held by a database session"
    SILENT_FAILURE = "a network that fails silently"
    IDLE_TIMEOUT = "server-side idle timeouts"
    POOLING = "connection pooling"
    TXN_LOCK = "locks held by a transaction"
    KEEPALIVE = "etcd leases and keepalives"
    LOST_UPDATE = "lost updates"
    CAS = "compare-and-set"
    FENCING_HOLE = "the fencing hole"
    SEQUENCER = "sequencer checks"
    RETRY = "retries after a timeout"
    IDEMPOTENCY = "idempotency keys"
    FENCED_READ = "reads that carry the token"
    ELECTION = "leader election and its epochs"
    LWW = "last-write-wins replicas"
    CRDT = "CRDTs"
    REPLICATION = "asynchronous replication and failover"
    WAIT_REPLICAS = "waiting for replicas (WAIT)"
    SPLIT_PRIMARY = "a split primary (split brain)"
    SESSION_MOVES = "a session that moves to another server"


Concepts = tuple[Concept, ...]


@dataclass(frozen=True)
class Planned:
    """A lesson as the course plans it: its scenario's slug, its title ("" for the scenario's
    own), and the concepts it teaches and uses (beyond those its scenario implies)."""

    slug: str
    title: str = ""
    teaches: Concepts = ()
    uses: Concepts = ()


# How a lesson's words name another lesson: lesson “<its title>” (curly quotes), or several:
# lessons “<one>” and “<another>”. Every lesson's title in curly quotes counts as a pointer to it.
REFERENCE = re.compile(r"\blessons? “([^”]+)”")
QUOTED = re.compile(r"“([^”]+)”")
# Pointers that do not say which lesson they mean: refused in a lesson's words.
VAGUE = re.compile(
    r"\b(companion|(next|previous|last|later|earlier|following) (lesson|scenario)|lessons? \d+|"
    r"(fenced|unfenced) version of this)\b",
    re.IGNORECASE,
)


def implied(scenario: Scenario) -> frozenset[Concept]:
    """What a scenario cannot be followed without, read off its settings and steps."""
    found: set[Concept] = set()
    service, variant = scenario.lock_service, scenario.variant or ""
    verbs = {step.do for step in scenario.steps}
    expect = scenario.expect
    if service.lock:
        found.add(Concept.MUTUAL_EXCLUSION)
    found |= {
        "redlock": {Concept.QUORUM, Concept.VALIDITY, Concept.LEASE},
        "zookeeper": {Concept.ZK_SESSION},
        "postgres": {Concept.SESSION_LOCK},
        "etcd": {Concept.KEEPALIVE},
        "redis": {Concept.LEASE} if variant != "no_ttl" else set(),
        "redis-sentinel": {Concept.LEASE, Concept.REPLICATION},
    }.get(scenario.backend, set())
    found |= _of_variant(scenario)
    if scenario.idle_session_timeout_ms:
        found.add(Concept.IDLE_TIMEOUT)
    if scenario.zk_nodes == 3 or scenario.etcd_nodes == 3:
        found.add(Concept.ENSEMBLE)
    found |= {
        "fenced": {Concept.FENCED_STORAGE},
        "fenced_reads": {Concept.FENCED_STORAGE, Concept.FENCED_READ},
        "cas": {Concept.CAS},
        "sequencer": {Concept.SEQUENCER},
        "lww": {Concept.LWW},
        "crdt": {Concept.CRDT},
    }.get(scenario.storage_kind, set())
    found |= {
        concept
        for verb, concept in (
            ("pause", Concept.PAUSE),
            ("partition", Concept.NETWORK),
            ("delay", Concept.NETWORK),
            ("restart", Concept.PERSISTENCE),
            ("clock_jump", Concept.CLOCKS),
            ("clock_rate", Concept.CLOCKS),
            ("read", Concept.LOST_UPDATE),
            ("leader", Concept.ELECTION),
        )
        if verb in verbs
    }
    if any(step.do == "partition" and step.mode != "reset" for step in scenario.steps):
        found.add(Concept.SILENT_FAILURE)  # a blackhole: nothing arrives, nothing fails
    if scenario.renew:
        found.add(Concept.WATCHDOG if scenario.backend == "redis" else Concept.KEEPALIVE)
    if scenario.persistence == "fsync":
        found.add(Concept.FSYNC)
    if any(step.key for step in scenario.steps):
        found.add(Concept.IDEMPOTENCY)
    if expect is not None and (expect.stale_writes_accepted or expect.stale_writes_rejected):
        found.add(Concept.STALE_WRITE)
    if expect is not None and expect.lost_updates:
        found.add(Concept.LOST_UPDATE)
    return frozenset(found)


def _of_variant(scenario: Scenario) -> set[Concept]:
    """What a lock's variant implies (an unsafe release, a pooler, a transaction, an election)."""
    variant = scenario.variant or ""
    found = {
        "unsafe_release": {Concept.OWNER_CHECK},
        "pooled": {Concept.POOLING},
        "xact": {Concept.IDLE_TIMEOUT, Concept.TXN_LOCK},
        "pooled_xact": {Concept.POOLING, Concept.TXN_LOCK},
        "wait": {Concept.WAIT_REPLICAS},
    }.get(variant, set())
    chosen = scenario.lock_service.variant(scenario.variant)
    if chosen is not None and chosen.election:
        found.add(Concept.ELECTION)
    return found


@dataclass(frozen=True)
class Met:
    """A concept a lesson builds on, and the earlier lesson that taught it."""

    concept: Concept
    number: int
    slug: str
    title: str

    @property
    def sentence(self) -> str:
        return f"you met {self.concept.value} in lesson {self.number}"


@dataclass(frozen=True)
class Placed:
    """A lesson in course order, as the rules read it: where it is, what it declares, what its
    scenario implies, and its words."""

    number: int
    planned: Planned
    title: str
    scenario: Scenario

    @property
    def needs(self) -> frozenset[Concept]:
        """What it uses: declared, or implied by its scenario, less what it teaches itself."""
        return (frozenset(self.planned.uses) | implied(self.scenario)) - set(self.planned.teaches)


def builds_on(course: Sequence[Placed]) -> dict[str, tuple[Met, ...]]:
    """Each lesson's slug: the concepts it needs that an earlier lesson taught, in course order
    (a concept nobody taught before it is left out here; :func:`problems` names it)."""
    homes: dict[Concept, Placed] = {}
    found: dict[str, tuple[Met, ...]] = {}
    for placed in course:
        met = [
            Met(concept, homes[concept].number, homes[concept].planned.slug, homes[concept].title)
            for concept in placed.needs
            if concept in homes
        ]
        found[placed.planned.slug] = tuple(sorted(met, key=lambda m: (m.number, m.concept.name)))
        for concept in placed.planned.teaches:
            homes.setdefault(concept, placed)
    return found


def words(scenario: Scenario) -> Iterable[tuple[str, str]]:
    """Every text a learner reads of a lesson's scenario, with where it is."""
    yield "description", scenario.description
    yield "takeaway", scenario.takeaway
    for index, step in enumerate(scenario.steps):
        yield f"step {index + 1} say", step.say or ""
        if step.ask is not None:
            yield f"step {index + 1} question", step.ask.question
            yield f"step {index + 1} explain", step.ask.explain
            for choice in step.ask.choices:
                yield f"step {index + 1} choice", choice


def problems(course: Sequence[Placed]) -> list[str]:
    """Every breach of the course's order, one sentence each; empty when it can be followed."""
    found: list[str] = []
    homes: dict[Concept, Placed] = {}
    titles = {placed.title: placed for placed in course}
    for placed in course:
        slug = placed.planned.slug
        for concept in sorted(placed.needs - set(homes), key=lambda c: c.name):
            later = next((p for p in course if concept in p.planned.teaches), None)
            where = f"lesson {later.number} ({later.planned.slug})" if later else "no lesson"
            found.append(
                f"{slug} (lesson {placed.number}) uses {concept.value} ({concept.name}), "
                f"which {where} teaches"
            )
        for concept in placed.planned.teaches:
            if concept in homes:
                found.append(
                    f"{slug} (lesson {placed.number}) teaches {concept.name} again: "
                    f"{homes[concept].planned.slug} (lesson {homes[concept].number}) already did"
                )
            homes.setdefault(concept, placed)
        for where, text in words(placed.scenario):
            found += _pointers(placed, where, text, titles)
    found += [f"no lesson teaches {concept.name}" for concept in Concept if concept not in homes]
    return found


def _pointers(placed: Placed, where: str, text: str, titles: dict[str, Placed]) -> list[str]:
    slug, found = placed.planned.slug, []
    for vague in VAGUE.finditer(text):
        found.append(
            f"{slug} {where}: {vague.group(0)!r} does not name its lesson; write "
            "lesson “<its title>”"
        )
    for named in REFERENCE.finditer(text):
        if named.group(1) not in titles:
            found.append(f"{slug} {where}: no lesson is called “{named.group(1)}”")
    for quoted in QUOTED.finditer(text):
        target = titles.get(quoted.group(1))
        if target is None:
            continue  # a quotation, not a lesson's title (an unknown "lesson “…”" is above)
        if target.number >= placed.number:
            found.append(
                f"{slug} {where}: points to lesson {target.number} “{target.title}”, which "
                f"comes {'later' if target.number > placed.number else 'nowhere else'}"
            )
    return found
