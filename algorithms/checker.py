"""Judging a run from its history alone.

The checker is a pure function over the recorded events (docs/events.md). It never asks a
server anything: what it concludes is what the diagram shows.

* **Belief intervals.** A client believes it holds the lock from its ``granted`` until it starts
  ``releasing`` it (it has left its critical section; the server's answer may come after the
  next holder's grant), ``released`` it, learned it ``lost`` the lock, ``crashed``, or the run
  ended.
  A frozen client keeps believing: that is the point of a GC pause.
* **Mutual exclusion** is violated when two clients' belief intervals overlap for any positive
  time. Each overlap is reported with its clients and its interval. A run without a lock
  service (``"backend": "none"`` in ``run_started``) has no lock in play: ``"none"``.
* **Stale writes.** A write is stale when, after the writer's most recent grant and before the
  write was sent, the lock was granted to someone else; or when it is based on an out-of-date
  read: its writer last read version *v* (the request's ``read``) and the storage found another
  version when the write arrived (the reply's ``found``), so it would overwrite an update its
  writer never saw (a lost update). A rejected stale write was stopped by the storage's check
  (fencing, a sequencer, compare-and-set). A write by a client that was never granted the lock
  counts as stale too (it had no right to write at all), except where no lock is in play: there
  only the read counts.
* **Lost updates** (:mod:`algorithms.lost_updates`): an acknowledged update that vanished
  unseen, overwritten by a write based on a read that never saw it, or dropped by a
  last-write-wins storage for an older write stamped later by a clock that ran ahead. Each one
  names both writes (and, when stamped, both timestamps).
* **Data corrupted** means an update was lost: one of those, or an accepted write that
  overwrote an update its writer had not seen though it read nothing (:func:`overwrites_unseen`:
  a holder has seen every write sent before its grant, so a late blind write over the newer
  holder's data counts). A stale write that lands before anyone else wrote, on the version its
  writer read, loses nothing (compare-and-set lets exactly that through): it is counted as a
  stale write accepted, and the data is not called corrupted.
* **Liveness.** A client is stuck when it gave up acquiring while the lock was held for a
  client that had crashed holding a lock *without a lease* (``ttl_ms`` null) that no server
  had freed since (no ``expired`` or ``deleted`` for it): nobody can ever get that lock again.
  A crashed holder's lease, by contrast, runs out by itself; waiting for it is just slow.
* **Wake-ups** count the ``woken`` events: how often waiting clients were woken to re-check
  (a thundering herd wakes every waiter on each release; the ZooKeeper recipe wakes one).
* **Inconclusive.** A run whose machine fell behind shifts its schedule to keep its story; a
  ``schedule_shifted`` event with ``kept: false`` says the shift could not (a step moved across
  the end of a lease that was running). A run that did not start from its story's premise is
  inconclusive too: a client of a ZooKeeper ensemble whose session opened on another server than
  the one the story puts it on (``run_started``'s ``homes``), seen in its first request. The
  verdict still says what happened, but it is not the scenario's story: ``inconclusive`` says
  why, and :func:`compare` judges no expectation.

The rules are read together here; the values they make are :mod:`algorithms.verdict`'s, and
the summary that puts a verdict into words is :mod:`algorithms.summary`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from algorithms.events import Event
from algorithms.lost_updates import lost_updates
from algorithms.summary import summarize
from algorithms.verdict import Interval, Overlap, Verdict
from algorithms.writes import Write, WriteJudge

_BELIEF_ENDS = {"releasing", "released", "lost", "crashed"}


def belief_intervals(events: Sequence[Event], end_ms: float | None = None) -> list[Interval]:
    """Every interval in which some client believed it held the lock.

    A belief still open at the end lasts until ``end_ms`` (the end of the run; by default the
    last event's time).
    """
    last = max((float(e["t_ms"]) for e in events), default=0.0)
    end_of_run = last if end_ms is None else max(end_ms, last)
    open_grants: dict[str, tuple[float, int | None]] = {}
    intervals: list[Interval] = []
    for event in _in_time_order(events):
        actor, kind, t = event["actor"], event["kind"], float(event["t_ms"])
        if kind == "granted":
            if actor in open_grants:  # re-granted while holding: the old belief ends here
                start, token = open_grants.pop(actor)
                intervals.append(Interval(actor, start, t, token))
            open_grants[actor] = (t, event.get("token"))
        elif kind in _BELIEF_ENDS and actor in open_grants:
            start, token = open_grants.pop(actor)
            intervals.append(Interval(actor, start, t, token))
    for actor, (start, token) in open_grants.items():
        intervals.append(Interval(actor, start, end_of_run, token))
    return sorted(intervals, key=lambda i: (i.start_ms, i.client))


def overlaps(intervals: Iterable[Interval]) -> list[Overlap]:
    """Pairwise overlaps of positive length between different clients' intervals."""
    found: list[Overlap] = []
    items = list(intervals)
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            if a.client == b.client:
                continue
            start, end = max(a.start_ms, b.start_ms), min(a.end_ms, b.end_ms)
            if end > start:
                pair = (a.client, b.client) if a.start_ms <= b.start_ms else (b.client, a.client)
                found.append(Overlap(pair, round(start, 1), round(end, 1)))
    return sorted(found, key=lambda o: o.start_ms)


def lock_in_play(events: Sequence[Event]) -> bool:
    """Whether the run had a lock service (``run_started`` says ``"backend": "none"`` if not)."""
    started = next((e for e in events if e["kind"] == "run_started"), None)
    return started is None or started.get("backend") != "none"


def writes(events: Sequence[Event]) -> list[Write]:
    """Every write the storage answered, judged stale or not: the history fed in time order to
    the one rule, :class:`algorithms.writes.WriteJudge` (which a narrator keeps as a run goes)."""
    judge = WriteJudge(locked=lock_in_play(events))
    return [w for e in _in_time_order(events) if (w := judge.see(e)) is not None]


def overwrites_unseen(events: Sequence[Event], judged: Sequence[Write] | None = None) -> list[int]:
    """The accepted writes that overwrote an update their writer never saw, by ``seq``: the data
    corrupted. A writer has seen the version it last read (the request's ``read``), the version
    its own last accepted write made, and, holding a lock, every write sent before its grant
    (the holders before it finished theirs). A write that found the storage past all of those
    lost someone's update. A blind write with no lock and no read has seen nothing to lose
    (last writer wins). A run recorded without versions counts its accepted stale writes."""
    ordered = _in_time_order(events)
    judged = writes(events) if judged is None else judged
    stale = {w.seq for w in judged if w.stale and w.accepted}
    grants = [(float(e["t_ms"]), e["actor"]) for e in ordered if e["kind"] == "granted"]
    requests = {
        (e["actor"], e["call"]): e
        for e in ordered
        if e["kind"] == "request" and e.get("op") == "write"
    }
    applied = [
        (float(requests.get((e["actor"], e["call"]), e)["t_ms"]), e)
        for e in ordered
        if e["kind"] == "reply" and e.get("op") == "write" and e.get("accepted")
        and not e.get("duplicate")
    ]  # fmt: skip
    lost: list[int] = []
    for t_sent, e in applied:
        found = e.get("found")
        if not isinstance(found, int):
            lost += [int(e["seq"])] if int(e["seq"]) in stale else []
            continue
        seen = _seen(e, requests.get((e["actor"], e["call"]), e), t_sent, grants, applied)
        if seen is not None and found > seen:
            lost.append(int(e["seq"]))
    return lost


def _seen(
    reply: Event,
    request: Event,
    t_sent: float,
    grants: list[tuple[float, str]],
    applied: list[tuple[float, Event]],
) -> int | None:
    """The newest version a write's writer had seen when it sent it (None: it saw none)."""
    who = reply["actor"]
    seen: list[int] = [request["read"]] if isinstance(request.get("read"), int) else []
    seen += [
        e["version"]
        for t, e in applied
        if e["actor"] == who and t < t_sent and isinstance(e.get("version"), int)
    ]
    own = [t for t, holder in grants if holder == who and t <= t_sent]
    if own:  # every write sent before its grant came before its critical section
        before = [e.get("version") for t, e in applied if t < own[-1]]
        seen.append(max([v for v in before if isinstance(v, int)], default=0))
    return max(seen) if seen else None


def stuck_clients(events: Sequence[Event]) -> list[str]:
    """Clients that gave up waiting for a lock still held for a crashed client."""
    crashed_holders: dict[str, float] = {}  # holder -> when it crashed while believing it held
    holding: set[str] = set()
    stuck: list[str] = []
    for e in _in_time_order(events):
        actor, kind = e["actor"], e["kind"]
        if kind == "granted" and e.get("ttl_ms") is None:
            holding.add(actor)
        elif kind in ("released", "lost"):
            holding.discard(actor)
        elif kind == "crashed" and actor in holding:
            holding.discard(actor)
            crashed_holders[actor] = float(e["t_ms"])
        elif kind in ("expired", "deleted"):
            crashed_holders.pop(str(e.get("holder")), None)
        elif kind == "acquire_failed" and crashed_holders and actor not in stuck:
            stuck.append(actor)
    return stuck


def check(events: Sequence[Event], end_ms: float | None = None) -> Verdict:
    """The verdict on one run's history; ``end_ms`` is when the run ended."""
    holders = belief_intervals(events, end_ms)
    found = overlaps(holders)
    judged = writes(events)
    overwritten = overwrites_unseen(events, judged)
    accepted = sum(1 for w in judged if w.stale and w.accepted)
    rejected = sum(1 for w in judged if w.stale and not w.accepted)
    exclusion = "violated" if found else "held"
    lost = lost_updates(events)
    verdict = Verdict(
        mutual_exclusion=exclusion if lock_in_play(events) else "none",
        overlaps=tuple(found),
        stale_writes_accepted=accepted,
        stale_writes_rejected=rejected,
        data_corrupted=bool(overwritten) or bool(lost),  # an update was lost
        writes=tuple(judged),
        holders=tuple(holders),
        acquire_failures=sum(1 for e in events if e["kind"] == "acquire_failed"),
        liveness="stuck" if (stuck := stuck_clients(events)) else "ok",
        stuck_clients=tuple(stuck),
        wakeups=sum(1 for e in events if e["kind"] == "woken"),
        inconclusive=story_lost(events),
        lost_updates=len(lost),
        lost=tuple(lost),
    )
    summary = summarize(verdict, storage_kind(events))
    return Verdict(**{**verdict.__dict__, "summary": summary})


def premise_lost(events: Sequence[Event]) -> str:
    """Why the run did not start where its story does: a client whose session the story puts on
    one server of an ensemble (``run_started``'s ``homes``) sent its first request to another,
    before any step had done anything to that server; "" if none did."""
    started = next((e for e in events if e["kind"] == "run_started"), None) or {}
    homes = started.get("homes")
    if not isinstance(homes, Mapping):
        return ""
    touched: set[object] = set()  # servers a step has crashed, cut off, paused...
    checked: set[str] = set()
    for e in _in_time_order(events):
        if e["kind"] == "step":
            nodes = e.get("nodes")
            touched.update([e.get("node"), *(nodes if isinstance(nodes, list) else [])])
        elif e["kind"] == "request" and e["actor"] in homes and e["actor"] not in checked:
            who, to = e["actor"], e.get("to")
            checked.add(who)
            home = homes[who]
            if home not in touched and to is not None and to != home:
                return (
                    f"the machine fell behind: {who}'s session opened on {to}, not on {home} "
                    f"where the scenario puts it ({home} did not answer in time)"
                )
    return ""


def story_lost(events: Sequence[Event]) -> str:
    """Why the run could not keep its story: a premise it did not start from
    (:func:`premise_lost`), or its first shift that did not keep it; "" if none."""
    if why := premise_lost(events):
        return why
    for e in _in_time_order(events):
        if e["kind"] == "schedule_shifted" and e.get("kept") is False:
            if e.get("reply"):  # a late reply, not a late step (lockviz/lab/roundtrips.py)
                return f"the machine fell behind: {e.get('what', '?')}"
            index = e.get("index")
            where = f"step {index + 1}" if isinstance(index, int) else str(e.get("what", "?"))
            # Of the shift, a step's own time (a server booting) is not the machine's lateness
            behind = float(e.get("late_ms", 0)) - float(e.get("own_ms") or 0)
            return f"the machine fell behind by {behind:.0f} ms at {where}"
    return ""


def storage_kind(events: Sequence[Event]) -> str:
    """What the run's storage checked (``run_started``'s ``storage_kind``; fenced by default,
    or as its ``fencing`` said, for runs recorded before storage kinds)."""
    started = next((e for e in events if e["kind"] == "run_started"), None) or {}
    kind = started.get("storage_kind")
    if isinstance(kind, str):
        return kind
    return "plain" if started.get("fencing") is False else "fenced"


def compare(verdict: Mapping[str, object], expect: Mapping[str, object]) -> list[str]:
    """Each way the verdict contradicts ``expect``, as sentences; empty when it matches, and
    when the run was inconclusive: a story that was not kept neither meets nor contradicts it."""
    if verdict.get("inconclusive"):
        return []
    return [
        f"expected {key} = {want!r}, got {verdict.get(key)!r}"
        for key, want in expect.items()
        if verdict.get(key) != want
    ]


def _in_time_order(events: Iterable[Event]) -> list[Event]:
    return sorted(events, key=lambda e: (float(e["t_ms"]), int(e.get("seq", 0))))
