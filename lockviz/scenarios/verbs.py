"""The step vocabulary: every verb a scenario step (or a click on a live run) can use.

One table, read by everything that deals in steps: the schema validates steps against it, the
engine routes a step by its verb's target, the run recorder keeps exactly the fields a verb
has, free play builds its forms from it, and lessons compare scripts with it.

A verb is done by one of three kinds of target:

* ``client``  a client process: commands it runs (acquire, write, ...) and faults done to it
  from outside (a pause is SIGSTOP, a crash SIGKILL, a clock jump moves its clock file);
* ``node``    a server: crash, restart, pause, clock jump;
* ``link``    the network between a client and servers (or between ensemble peers).

Commands go to the client's process; everything else is a fault, done by the lab. A command
that talks to the lock service (``lock``) cannot be given to a scenario without one (``"backend":
"none"``): those clients only ``read`` and ``write`` the storage. In a leader election (a
variant with ``election``, :mod:`lockviz.catalogue`) ``acquire`` campaigns, ``release``
resigns, and ``leader`` asks who leads: that one only an election answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Target(StrEnum):
    CLIENT = "client"
    NODE = "node"
    LINK = "link"


@dataclass(frozen=True)
class Verb:
    name: str
    targets: frozenset[Target]
    required: frozenset[str] = frozenset()  # fields besides the target that must be given
    optional: frozenset[str] = frozenset()
    command: bool = False  # sent to the client's process to run, rather than done to it
    summary: str = ""
    lock: bool = False  # it talks to the lock service (so it needs one)
    election: bool = False  # it asks an election (so the lock service's variant must be one)

    @property
    def fields(self) -> frozenset[str]:
        """Every field the verb takes besides its target, the time and the words."""
        return self.required | self.optional


def _verb(
    name: str,
    targets: str,
    required: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
    *,
    command: bool = False,
    summary: str = "",
    lock: bool = False,
    election: bool = False,
) -> Verb:
    return Verb(
        name,
        frozenset(Target(t) for t in targets.split()),
        frozenset(required),
        frozenset(optional),
        command,
        summary,
        lock,
        election,
    )


VERBS: dict[str, Verb] = {
    v.name: v
    for v in (
        _verb("acquire", "client", optional=("timeout_ms",), command=True, lock=True,
              summary="ask for the lock, waiting up to timeout_ms"),
        _verb("read", "client", command=True,
              summary="read the storage's value and its version"),
        _verb("write", "client", ("value",), ("check_lease", "key"), command=True,
              summary="write a value to the storage with the client's token (and its "
              "idempotency key, if it has one)"),
        _verb("release", "client", command=True, lock=True, summary="give the lock up"),
        _verb("extend", "client", optional=("ttl_ms",), command=True, lock=True,
              summary="prolong the lease"),
        _verb("leader", "client", command=True, lock=True, election=True,
              summary="ask the election who leads now, and with which epoch"),
        _verb("pause", "client node", ("ms",),
              summary="freeze a client's process, or a server's (SIGSTOP)"),
        _verb("crash", "client node", summary="kill the process (SIGKILL, kill -9)"),
        _verb("clock_jump", "client node", ("ms",), summary="move a wall clock by ms"),
        _verb("clock_rate", "client", ("rate",), summary="make a client's clock run fast or slow"),
        _verb("restart", "node", summary="start a server again (after a crash, or kill it first)"),
        _verb("partition", "link", ("nodes",), ("mode",),
              summary="cut a client's links to servers (or a server from its peers, all or "
              "those in nodes)"),
        _verb("heal", "link", optional=("nodes",), summary="restore cut or slowed links"),
        _verb("delay", "link", ("nodes", "ms"), ("jitter_ms",),
              summary="slow a client's links to servers"),
    )
}  # fmt: skip

DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000  # how long an acquire waits when its step does not say

# The fields of a step that only say something (narration, a checkpoint): they change the
# story told about a run, never what happens on the servers.
WORDS = frozenset({"say", "ask"})
# Every field a verb may take besides its target (client, node), the time and the words.
VERB_FIELDS = frozenset().union(*(v.fields for v in VERBS.values()))


def commands() -> list[str]:
    return [name for name, verb in VERBS.items() if verb.command]
