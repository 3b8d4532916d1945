"""Protocol messages, drawn as arrows: a client's (or the storage's) request, a server's reply."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lockviz.lab.events.base import BaseEvent, Key, StampedJson, is_, may


class _Message(BaseEvent):
    group = "Protocol messages (drawn as arrows)"
    recorded_by = "client, or `storage`"


class Request(_Message):
    """A message to a server. With sequencer storage the storage service asks the lock service
    whether a writer's lock is still current (`op: "check"`), recorded as the storage's own
    request: drawn storage → lock node, between the write and its reply."""

    kind: Literal["request"]
    to: str = is_("the server")
    call: int = is_("the call's id, unique per actor (its reply has the same)")
    op: str = is_(
        "`acquire`, `release`, `extend`, `read`, `write`, each backend's own calls, `check` "
        "for the storage"
    )
    holder: str | None = may("a check's writer")
    ttl_ms: int | None = may("the lease asked for (null: no lease)")
    value: str | None = may("a write's value; a check's random value (Redis, Redlock)")
    token: int | None = may("a write's token (the writer's latest); a check's grant")
    read: int | None = may("the version the writer last read, when it read")
    key: Key | None = may(
        "a write's idempotency key; the lock key (a PostgreSQL advisory lock's is a number)"
    )
    unsafe: bool | None = may("a release by plain `DEL`, without checking the value")
    wait_ms: int | None = may("how long the server may queue the request")
    sql: str | None = may("how a PostgreSQL lock is released")
    path: str | None = may("a ZooKeeper node")
    mode: str | None = may("how a ZooKeeper node is created")
    watch: bool | None = may("the listing leaves a watch (the herd variant)")
    why: str | None = may("why the client sends it")
    lease: str | None = may("an etcd lease")
    session: int | None = may("a check's PostgreSQL backend pid")
    stamp: int | None = may(
        "a last-write-wins or CRDT write's stamp: its writer's wall clock, ms since the epoch"
    )
    holds: StampedJson | None = may("a last-write-wins merge: the write sent to the replica")
    values: list[str] | None = may("a CRDT merge: the set sent to the replica")
    numreplicas: int | None = may("`WAIT`: how many replicas must acknowledge the writes so far")


class Reply(_Message):
    """A server's answer. A write's says what the storage did: a rejected write has
    `accepted: false` and a `reason` (`"33 < 34"` fenced, `"read v0, now v1"`
    compare-and-set, or the lock service's answer); a repeated idempotency key's is the first
    write's result with `duplicate: true`. A fenced read (`fenced_reads`) refused has
    `accepted: false` too. A replicated storage's replica says what it holds: a last-write-wins
    one the write it keeps and the one it dropped (`holds`, `dropped`), a CRDT its set
    (`values`)."""

    kind: Literal["reply"]
    frm: str = Field(alias="from", description="the server")
    call: int = is_("the request's id")
    op: str = is_("the request's op")
    ok: bool = is_("whether the server did what was asked (a check: it answered)")
    path: str | None = may("the ZooKeeper node created")
    value: str | None = may("a read's value (null before any write); an etcd lock's key")
    accepted: bool | None = may("whether the storage applied the write")
    token: int | None = may("the fencing token granted, or the writer's")
    highest: int | None = may("the highest token the storage had seen before this write")
    found: int | None = may("the version the write found")
    version: int | None = may("the version after it (a read: the version read)")
    duplicate: bool | None = may("a repeated idempotency key: nothing was applied")
    current: bool | None = may("a check: whether the writer's lock is still current")
    error: str | None = may("the call failed: no answer, or the client library's error")
    reason: str | None = may("why the server said no")
    why: str | None = may("a check: why the lock is not current")
    children: list[str] | None = may("a ZooKeeper listing")
    exists: bool | None = may("whether a watched ZooKeeper node exists")
    lease: str | None = may("the etcd lease granted")
    ttl_ms: int | None = may("the lease's time to live")
    kept: bool | None = may(
        "last-write-wins: whether the replica now holds the incoming write (false: it kept a "
        "write with a higher stamp, and dropped the incoming one although it said OK)"
    )
    holds: StampedJson | None = may("last-write-wins: the write the replica holds after this")
    dropped: StampedJson | None = may("last-write-wins: the write the replica dropped")
    values: list[str] | None = may("a CRDT: the set's elements after this")
    added: list[str] | None = may("a CRDT merge: the elements new to this replica")
    primary: str | None = may("a Sentinel's answer: the node it names as the primary")
    acked: int | None = may("`WAIT`: how many replicas acknowledged")
