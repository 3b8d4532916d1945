"""Whether Sentinel's failover came in the story's time (issue 51, docs/fidelity.md).

A Sentinel set's story turns on a failover the lab does not do itself: the primary is killed,
and the Sentinels, each after its ``down-after-milliseconds`` (2, 2.5 and 3 s, staggered), agree
that it is down, elect one of them, and that one promotes a replica. The script puts the next
client's step (Bob "asks Sentinel, redis-2 now") seconds after that. On a machine too busy to
run the Sentinels, the promotion comes later: Bob's acquire, taken on time, waits by design (it
asks Sentinel again until a primary answers) and is granted after the later steps of the story
(Alice's stale write), or not at all; every step was on time and no reply was late, so nothing
else measured it, and the run told another story with confidence ("expected stale writes
accepted 1, got 0"; reproduced by stopping the Sentinels from outside for 9 s after the kill).

The rule: a client's step scripted more than :func:`failover_by_ms` after the step that killed
the primary, or cut it off from the Sentinels, must come after the promotion (``role`` primary,
as its watcher heard it), or the run is inconclusive. The promotion is heard late when the
watcher is, which errs towards "inconclusive". A primary that restarts before then is not
judged (Sentinel may see it back).
"""

from __future__ import annotations

from collections.abc import Sequence

from lockviz.lab import events
from lockviz.lab.moments import Crossing, Mark
from lockviz.lab.outlived import SERVER_SLACK_MS
from lockviz.lab.servers.replicated import DOWN_AFTER_MS, STAGGER_MS

# A vote round and the promoted replica's next answer to Sentinel's INFO (once a second during
# a failover): on a machine that keeps up, a promotion comes 3.6-4.2 s after the kill.
ELECTION_MS = 1500.0


def failover_by_ms(sentinels: int) -> float:
    """How long after the primary's kill the story may count on its replica being promoted."""
    longest_down_after = DOWN_AFTER_MS + STAGGER_MS * max(0, sentinels - 1)
    return longest_down_after + ELECTION_MS + SERVER_SLACK_MS


def late_failover(run: Sequence[events.Event], now_ms: float) -> Crossing | None:
    """The first client step scripted after the failover's estimated end that came before the
    promotion (none by ``now_ms``: not at all): the failover moved across it."""
    started = next((e for e in run if isinstance(e, events.RunStarted)), None)
    roles = (started.roles or {}) if started is not None else {}
    sentinels = sum(role == "sentinel" for role in roles.values())
    primary = next((node for node, role in roles.items() if role == "primary"), None)
    if not sentinels or primary is None:
        return None
    by_ms = failover_by_ms(sentinels)
    kill: events.Step | None = None
    for n, event in enumerate(run):
        if isinstance(event, events.Step) and _fails_over(event, primary, roles):
            kill = event
        elif isinstance(event, events.Role) and event.role == "primary":
            primary, kill = event.actor, None
        elif isinstance(event, events.Restarted) and event.actor == primary:
            kill = None
        elif kill is not None and _after(event, kill, by_ms):
            assert isinstance(event, events.Step)
            promoted = next(
                (float(e.t_ms) for e in run[n:] if isinstance(e, events.Role) and
                 e.role == "primary"), now_ms,
            )  # fmt: skip
            fixed = Mark("step", f"step {event.index + 1} ({event.do})", float(event.t_ms))
            moved = f"Sentinel's failover of {primary}"
            return Crossing(fixed, moved, float(kill.t_ms) + by_ms, promoted)
    return None


def _fails_over(step: events.Step, primary: str, roles: dict[str, str]) -> bool:
    """Whether ``step`` makes the Sentinels fail ``primary`` over: it kills it, or cuts it off
    from them (a partition of the node from all its peers, or from a Sentinel)."""
    if step.node != primary:
        return False
    cut = step.do == "partition" and any(roles.get(n) == "sentinel" for n in step.nodes or roles)
    return step.do == "crash" or cut


def _after(event: events.Event, kill: events.Step, by_ms: float) -> bool:
    """Whether ``event`` is a client's step the script puts after the failover's end."""
    return (
        isinstance(event, events.Step)
        and bool(event.client)
        and (event.at_ms or 0) - (kill.at_ms or 0) > by_ms
    )
