"""The kinds of storage (the scenario's ``storage``): what the storage checks before it applies
a write, and the replicas a replicated one runs on."""

from __future__ import annotations

from dataclasses import dataclass

from lockviz.catalogue.servers import STORAGE, STORAGE_REPLICA


@dataclass(frozen=True)
class StorageKind:
    """What the storage checks before it applies a write (the scenario's ``storage``)."""

    name: str
    label: str  # as a lane or a page names it: "fenced (tokens)"
    summary: str  # one sentence for a learner
    tokens: bool = False  # it compares fencing tokens (so the lock service must give them)
    replicas: tuple[str, ...] = (STORAGE,)  # its servers: one node, or replicas
    lockless: str = ""  # why it takes no lock service, when it takes none ("" when it may)
    cost: str = ""  # what it costs, said beside it where the kinds are compared


LOCKLESS = (
    "It is storage without a lock: every replica accepts every write and the replicas settle "
    "their differences themselves."
)

STORAGE_KINDS: dict[str, StorageKind] = {
    k.name: k
    for k in (
        StorageKind("plain", "plain", "Accepts every write, as most storage does."),
        StorageKind(
            "fenced",
            "fenced (tokens)",
            "Rejects a write whose fencing token is lower than the highest it has seen.",
            tokens=True,
        ),
        StorageKind(
            "fenced_reads",
            "fenced reads (tokens on reads too)",
            "Rejects a write or a read whose fencing token is lower than the highest it has "
            "seen; a read raises the highest as a write does.",
            tokens=True,
            cost="Every read must carry a token, and a holder that writes without reading first "
            "still leaves the hole open until its write.",
        ),
        StorageKind(
            "sequencer",
            "sequencer (asks the lock)",
            "Asks the lock service, at each write, whether the writer's lock is still current.",
        ),
        StorageKind(
            "cas",
            "compare-and-set",
            "Applies a write only if the data is still at the version its writer last read.",
        ),
        StorageKind(
            "lww",
            "last-write-wins (2 replicas)",
            "Two replicas each accept every write and keep the one with the highest timestamp, "
            "its writer's wall clock.",
            replicas=(STORAGE, STORAGE_REPLICA),
            lockless=LOCKLESS,
            cost="A concurrent write, or a newer one from a client whose clock runs behind, is "
            "dropped silently: its writer was told OK.",
        ),
        StorageKind(
            "crdt",
            "add-wins set, a CRDT (2 replicas)",
            "Two replicas each accept every write as an add to a set, and merge by union: no "
            "acknowledged write is lost.",
            replicas=(STORAGE, STORAGE_REPLICA),
            lockless=LOCKLESS,
            cost="The data is a set of every value written, not one value: the application "
            "must decide what several values mean.",
        ),
    )
}
