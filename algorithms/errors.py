"""The exceptions raised by lockviz's lock clients and fenced storage.

    LockError
    ├── BackendUnavailable   the server could not be reached or did not answer in time
    ├── NotHeld              release/extend/write by a client that holds no grant
    └── InvalidScenarioUse   an operation the algorithm cannot offer (e.g. fencing on Redlock)

Backend exceptions (redis-py, kazoo, psycopg) are converted at the boundary with
``raise ... from exc`` so callers handle one tree and still see the cause.
"""

from __future__ import annotations


class LockError(Exception):
    """Root of every error raised by :mod:`algorithms`."""


class BackendUnavailable(LockError):
    """The server could not be reached, or did not answer within the client's timeout."""

    def __init__(self, node: str, detail: str) -> None:
        super().__init__(f"{node}: {detail}")
        self.node = node
        self.detail = detail


class NotHeld(LockError):
    """The client tried to release, extend or write without holding a grant."""


class InvalidScenarioUse(LockError):
    """The algorithm cannot do what was asked of it (the message says why)."""
