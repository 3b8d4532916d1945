"""PostgreSQL advisory locks: algorithms.postgres_lock on ``pg-1``, and an observer of pg_locks.

Variants: ``session`` (a session lock, no lease), ``xact`` (a transaction lock whose lease is
the scenario's ``ttl_ms``, enforced by the server as ``idle_in_transaction_session_timeout``),
``pooled`` (the session lock through the lab's PgBouncer in transaction pooling mode) and
``pooled_xact`` (the transaction lock through the same PgBouncer: the fix the literature gives,
since a transaction keeps its server session until it ends and its lock ends with it).

The observer of ``pg_locks`` is in :mod:`lockviz.lab.watchers.postgres`.

Pooled clients find PgBouncer through the server (``lockviz.pooler``) and reach it directly,
not through their per-client network links: a partition of ``pg-1`` does not cut them off.
"""

from __future__ import annotations

import psycopg
from psycopg.rows import TupleRow

from algorithms.clock import Clock
from algorithms.errors import InvalidScenarioUse
from algorithms.events import EventSink, Reporter
from algorithms.postgres_lock import PostgresLock
from algorithms.postgres_session import connect
from algorithms.sequencer import PostgresCheck
from lockviz.lab.backends.parts import lock_parts
from lockviz.lab.config import ClientConfig, StorageServiceConfig
from lockviz.lab.ports import split_address

LOCK_KEY = 0x6C6F636B  # "lock" in ASCII; any bigint names an advisory lock
LOCK = str(LOCK_KEY)  # the lock, as its sequencers name it
CHECK_NAME = "lockviz-storage"  # the storage service's session, as pg_stat_activity names it


def pooler_address(
    host: str, port: int, timeout_ms: int, password: str | None = None
) -> tuple[str, int]:
    """Where this server's PgBouncer listens: the lab publishes it as ``lockviz.pooler``."""
    with connect(
        host, port, application_name="lockviz-lab", timeout_ms=timeout_ms, password=password
    ) as conn:
        row = conn.execute("SELECT current_setting('lockviz.pooler', true)").fetchone()
    published = row[0] if row else None
    if not published:
        raise InvalidScenarioUse(
            f"{host}:{port} publishes no pooler: set lockviz.pooler = 'host:port' on the server"
        )
    return split_address(str(published))


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> PostgresLock:
    node = config.nodes[0]
    host, port = config.address(node)
    timeout_ms = config.call_timeout_ms
    password = config.password(node)  # PgBouncer asks for the server's own
    pooled = config.variant in ("pooled", "pooled_xact")
    if pooled:
        host, port = pooler_address(host, port, timeout_ms, password)

    def session() -> psycopg.Connection[TupleRow]:
        return connect(
            host,
            port,
            application_name=config.name,
            timeout_ms=timeout_ms,
            pooled=pooled,
            password=password,
        )

    xact = config.variant in ("xact", "pooled_xact")
    return PostgresLock(
        session(),
        LOCK_KEY,
        **lock_parts(config, clock, emit),
        scope="xact" if xact else "session",
        lease_ms=config.ttl_ms if xact else None,
        node=node,
        call_timeout_ms=timeout_ms,
        reconnect=session,
    )


def make_check(config: StorageServiceConfig, report: Reporter) -> PostgresCheck:
    """A session of the storage's own, straight to the server (never through the pooler:
    pooled sequencers are refused), opened again if the server ended it."""
    node = config.nodes[0]
    host, port = config.address(node)

    def session() -> psycopg.Connection[TupleRow]:
        return connect(
            host,
            port,
            application_name=CHECK_NAME,
            timeout_ms=config.call_timeout_ms,
            password=config.password(node),
        )

    return PostgresCheck(session, LOCK_KEY, node=node, report=report)
