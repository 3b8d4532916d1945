"""Whether a shifted schedule still tells the scenario's story.

A scenario's story is a set of moments: its steps and the lab's own follow-ups (a pause's
thaw), all on the run's schedule, and the timers those started that run elsewhere — a lease
counting down on a server, a client giving up an acquire after its timeout. When the machine
falls behind, the schedule shifts as a whole (:mod:`lockviz.lab.scheduler`): the steps keep
their intervals between them, but the timers already running do not move. The story is kept
unless a moment that was due *before* a running timer's end now comes at or after it (within a
margin): "Bob asks for the lock" scripted 800 ms after Alice's lease expires is still after it
when everything moves later, but "Alice is frozen" scripted while her lease runs is no longer
while it runs if the machine stalled past its end.

:class:`Story` follows a run's events (the engine hands it each one as it is recorded) to know
its timers and when each ends, estimated on the run's clock:

* a **lease**: from a ``granted`` with a ``ttl_ms`` to that time plus the ttl, on each node that
  granted it (a Redlock grant runs one per node) — or sooner, when the client lets it go
  (``releasing``, ``released``, ``lost``, ``crashed``) or the server ends it (``expired``,
  ``deleted`` on that node). A renewal seen (``extended``) moves its end; one not yet made does
  not, which errs towards "not kept";
* an **acquire's wait**: from the ``step`` that sent it to that time plus its ``timeout_ms``, or
  sooner, when the client is ``granted`` or gives up.

A grant something keeps alive has **no fixed end** while it does, and nothing a shift moves can
cross its end: a ZooKeeper grant lives as long as its session, which the client's heartbeats
renew in the background (the catalogue's ``kept_alive_by``); any lease lives on while a
watchdog renews it (``renewal_started``). Its countdown starts only when the keepalive stops:
the client frozen (``paused``), killed, cut off from the server it holds the grant on (a
``link`` that does not pass, a ``session`` SUSPENDED), or that server crashed or cut off from
its peers; it runs again when they come back (``resumed``, the link passing, CONNECTED). A
stopped session ends its timeout after its last heartbeat, which came up to a third of it
before the stop (kazoo pings that often): that end is an estimate, and a moment coming within
that third of it counts as crossing it. A watchdog's lease ends its ttl after its last
``extended``.

Points that stay besides the timers' ends (:meth:`Story.marks`): a **thaw** already done (the
run's timers do it on a thread of their own, whether or not the schedule's is late) for every
moment due before it; the later steps already taken, for a command its client took or ran late;
and, when the schedule itself or a thaw fell behind, every step already done that was due after
the moment. And a lease the story has end while its holder is frozen must be over, as its
server said, by her thaw (:meth:`Story.outlived`): whatever waited for it by design (another
client's grant) would otherwise come after the thaw with nothing measured (issue 48,
docs/fidelity.md).

What the lab cannot see is not guarded: PostgreSQL's ``idle_session_timeout`` is not counted.

One module past the usual ~300 lines, on purpose: one :class:`Story` keeps a run's timers, and
what starts, renews, keeps alive and ends them are the rules above, read in this order. The points
it is made of are :mod:`lockviz.lab.moments`' values; what a server ended while a holder was
frozen is followed by :mod:`lockviz.lab.outlived`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from lockviz.lab import events
from lockviz.lab.moments import STEP_RESOLUTION_MS, Crossing, Done, Mark, Timer
from lockviz.lab.outlived import FrozenLeases
from lockviz.scenarios.verbs import DEFAULT_ACQUIRE_TIMEOUT_MS, VERBS

_LETS_GO = (events.Releasing, events.Released, events.Lost, events.Crashed)
# A fault done to a client, recorded once it was done (a stalled engine does it after its step)
_LANDS = (events.Paused, events.Crashed, events.ClockJumped, events.ClockRate)
# Two moments due within this of each other have no order the story depends on (a step's due is
# known from its recorded time and lateness, each to 0.1 ms).
SAME_MOMENT_MS = 1.0
KEPT_ALIVE = math.inf  # the end of a grant kept alive: none, while its keepalive runs
HEARTBEATS = 3  # a session's heartbeats per timeout (kazoo's ping, every third of it)
# What stops a client's keepalive, and what lets it run again (see the module docstring).
_STOPS = (events.Paused, events.Crashed)


class Story:
    """The timers of one run, from its events (see the module docstring).

    A timer that has ended is kept with the time it ended: a stall can carry a moment past an
    end that the lab only learned of afterwards (a watcher in the stalled app reports a lease
    the server expired on time as expired when the app wakes up).
    """

    def __init__(self, sessions: bool = False) -> None:
        """``sessions``: the backend's grants live as long as the client's session (its
        catalogue entry's ``kept_alive_by``)."""
        self.sessions = sessions
        self.renewing: set[str] = set()  # clients whose watchdog renews their lease
        self.stopped: set[tuple[str, str]] = set()  # (client, node) cut off, or (client, "")
        self.running: dict[tuple[str, str, str], Timer] = {}  # (kind, client, node)
        self.ended: list[Timer] = []
        self.taken: list[Done] = []  # the steps done, in the order they were
        self.thawed: list[Done] = []  # the thaws done on their timers
        self.frozen = FrozenLeases()  # what a server ended while its holder was frozen

    def see(self, event: events.Event) -> None:
        if isinstance(event, _LANDS):
            self._landed(event.actor, float(event.t_ms))
        self.frozen.see(event)
        if isinstance(event, events.Resumed) and event.late_ms is not None:  # on its timer
            t = float(event.t_ms)
            thaw = Done(t, f"{event.actor}'s thaw", None, event.actor, False, t - event.late_ms)
            self.thawed.append(thaw)
            # before the thaw lets a kept-alive grant live again
            self.frozen.thawed(thaw, [*self.running.values(), *self.ended])
        self._keepalive(event)
        self._timers(event)

    def _timers(self, event: events.Event) -> None:
        who, t = event.actor, float(event.t_ms)
        if isinstance(event, events.Step):
            self._step(event, t)
        elif isinstance(event, events.Granted):
            self._end(lambda timer: timer.kind == "wait" and timer.client == who, t)
            self._lease(event, who, t)
        elif isinstance(event, events.Extended) and event.ok and event.ttl_ms is not None:
            self._renewed(who, event.ttl_ms, t)
        elif isinstance(event, events.RenewalStarted):
            self.renewing.add(who)
            self._revive(who)
        elif isinstance(event, events.AcquireFailed):
            self._end(lambda timer: timer.kind == "wait" and timer.client == who, t)
        elif isinstance(event, events.Crashed):  # its waits end; a kept-alive grant counts down
            self.renewing.discard(who)
            self._end(lambda timer: timer.client == who and not timer.keeper, t)
        elif isinstance(event, _LETS_GO):
            self.renewing.discard(who)
            released = isinstance(event, events.Releasing | events.Released)
            lease = lambda timer: timer.client == who and timer.kind == "lease"  # noqa: E731
            self._end(lease, t, released, exact=True)  # its own clock: no estimate
        elif isinstance(event, events.Expired | events.Deleted) and event.holder:
            holder = event.holder
            self._end(
                lambda timer: timer.kind == "lease" and (timer.client, timer.node) == (holder, who),
                t,
            )

    def _renewed(self, client: str, ttl_ms: float, t: float) -> None:
        """An extend renewed ``client``'s lease wherever it runs: its ttl from ``t`` (kept
        alive, it still has no end; its countdown, once it stops, counts from here)."""
        for key, timer in self.running.items():
            if timer.kind == "lease" and timer.client == client:
                end = KEPT_ALIVE if timer.end_ms == KEPT_ALIVE else t + ttl_ms
                self.running[key] = replace(timer, end_ms=end, ttl_ms=ttl_ms, renewed_ms=t)

    def _step(self, step: events.Step, t: float) -> None:
        actor = step.client or step.node or ""
        command = step.do in VERBS and VERBS[step.do].command
        # When it was due. Each estimate is late only if the engine, between beginning the step
        # and recording it, was stalled (its time less its lateness) or saw the schedule shift
        # (its scripted time plus the shift): the earlier of the two.
        due = t - float(step.late_ms or 0)
        if step.at_ms is not None:
            due = min(due, step.at_ms + float(step.shift_ms or 0))
        what = f"step {step.index + 1} ({step.do})"
        self.taken.append(Done(t, what, step.index, actor, command, due))
        if step.do == "acquire" and step.client:
            timeout = step.timeout_ms or DEFAULT_ACQUIRE_TIMEOUT_MS
            self._start(Timer("wait", step.client, t + timeout))

    def _landed(self, client: str, t: float) -> None:
        """A fault done to ``client`` landed at ``t``: its step is fixed there, not where it
        was recorded, a stalled engine in between (the latest such step not yet landed)."""
        for n in range(len(self.taken) - 1, -1, -1):
            done = self.taken[n]
            if done.actor == client and not done.command:
                if done.at_ms <= t:
                    self.taken[n] = replace(done, at_ms=t)
                return

    def _lease(self, grant: events.Granted, client: str, t: float) -> None:
        if grant.ttl_ms:  # a lease counts down on each node that granted it
            keeper = "session" if self.sessions else "watchdog" if client in self.renewing else ""
            for node in grant.nodes or [grant.node]:
                timer = Timer("lease", client, t + grant.ttl_ms, node, grant.ttl_ms, t, keeper)
                self._start(timer if not keeper else self._kept(timer, t))
        else:  # no lease: nothing counts down
            self._end(lambda timer: timer.kind == "lease" and timer.client == client, t)

    # -- what keeps a grant alive -------------------------------------------------------------

    def _keepalive(self, event: events.Event) -> None:
        """Stop, or let run again, the keepalive of the grants ``event`` cuts off or brings
        back (see the module docstring)."""
        who, t = event.actor, float(event.t_ms)
        if isinstance(event, _STOPS):  # a client frozen or killed, or a server killed
            self._cut(lambda timer: who in (timer.client, timer.node), t, (who, ""))
        elif isinstance(event, events.Resumed | events.Restarted):
            self._heal((who, ""), t)
        elif isinstance(event, events.Session):
            if event.state == "CONNECTED":
                self._heal((who, "session"), t)
            else:
                self._cut(lambda timer: timer.client == who, t, (who, "session"))
        elif isinstance(event, events.Link) and event.peers is not None:  # a server cut off
            if event.mode == "pass":
                self._heal((who, ""), t)
            else:
                self._cut(lambda timer: timer.node == who, t, (who, ""))
        elif isinstance(event, events.Link) and event.node:  # a client's link to a server
            if event.mode == "pass":
                self._heal((who, event.node), t)
            elif event.mode != "delay":
                node = event.node
                self._cut(lambda tm: (tm.client, tm.node) == (who, node), t, (who, node))

    def _kept(self, timer: Timer, t: float) -> Timer:
        """``timer`` kept alive from ``t``, unless what would keep it is cut off: then counting
        down from its last renewal."""
        if any(cut in self.stopped for cut in self._cuts(timer)):
            return self._countdown(timer, t)
        return replace(timer, end_ms=KEPT_ALIVE, early_ms=0.0)

    def _cuts(self, timer: Timer) -> list[tuple[str, str]]:
        return [(timer.client, ""), (timer.node, ""), (timer.client, timer.node),
                (timer.client, "session")]  # fmt: skip

    def _countdown(self, timer: Timer, t: float) -> Timer:
        """A kept-alive grant whose keepalive stopped at ``t``: a session ends its timeout
        after its last heartbeat (up to a third of it before ``t``); a watchdog's lease its
        ttl after the last extend."""
        if timer.end_ms != KEPT_ALIVE:
            return timer  # counting down already
        if timer.keeper == "session":
            return replace(timer, end_ms=t + timer.ttl_ms, early_ms=timer.ttl_ms / HEARTBEATS)
        return replace(timer, end_ms=timer.renewed_ms + timer.ttl_ms)

    def _cut(self, which: Callable[[Timer], bool], t: float, cut: tuple[str, str]) -> None:
        self.stopped.add(cut)
        for key, timer in self.running.items():
            if timer.kind == "lease" and timer.keeper and which(timer):
                self.running[key] = self._countdown(timer, t)

    def _heal(self, cut: tuple[str, str], t: float) -> None:
        self.stopped.discard(cut)
        for key, timer in self.running.items():
            if timer.kind == "lease" and timer.keeper and cut[0] in (timer.client, timer.node):
                self.running[key] = self._kept(timer, t)

    def _revive(self, client: str) -> None:
        """A watchdog now renews ``client``'s leases: kept alive from their last renewal."""
        for key, timer in self.running.items():
            if timer.kind == "lease" and timer.client == client and not timer.keeper:
                kept = replace(timer, keeper="watchdog")
                self.running[key] = self._kept(kept, timer.renewed_ms)

    def _start(self, timer: Timer) -> None:
        self.running[(timer.kind, timer.client, timer.node)] = timer

    def _end(
        self,
        which: Callable[[Timer], bool],
        t: float,
        released: bool = False,
        exact: bool = False,
    ) -> None:
        """End the running timers ``which`` picks, at ``t`` or their own end if sooner (a
        server that expired a lease on time but was heard late); ``released``: by their
        client's own release; ``exact``: ``t`` is when it ended, told by the client itself,
        no longer an estimate with a margin (a session's third)."""
        for key, timer in list(self.running.items()):
            if which(timer):
                del self.running[key]
                ended = min(timer.end_ms, t)
                seen = ended == t
                early = 0.0 if exact and seen else timer.early_ms
                self.ended.append(
                    replace(timer, end_ms=ended, released=released and seen, early_ms=early)
                )

    def timers(self) -> list[Timer]:
        """Every timer, running or ended, in the order of their ends."""
        return sorted([*self.running.values(), *self.ended], key=lambda t: t.end_ms)

    def outlived(self, now_ms: float) -> Crossing | None:
        """A lease the story has end while its holder was frozen that its server ended only
        after the thaw, or not by ``now_ms`` (:meth:`FrozenLeases.outlived`)."""
        return self.frozen.outlived(now_ms)

    def marks(
        self, late_client: tuple[int, str] | None = None, own: int | None = None
    ) -> list[Mark]:
        """What a shift cannot move: every timer's end and every thaw already done (the timers'
        own thread does it, whether or not the schedule's is late); for step ``index`` that
        ``client`` took late (``late_client``), each later step already taken, except the
        client's own later commands: those wait for it in its queue, in order, whenever they
        were sent. A fault done *to* the client (a pause, a crash) waits for nothing: it came
        when it came. With no late client (the schedule itself fell behind, or a thaw did),
        every step already done is fixed too, for the moments due before it: the schedule and
        the thaws are two threads, and one may do its moment while the other is stalled; but
        not step ``own``, the late step itself, done already (as the lab did it)."""
        late = late_client[1] if late_client is not None else None
        # The late command's own wait is not fixed: its client counts it from when it began;
        # nor is a lease its client's release ended: its commands come in order, that one too.
        found = [
            Mark(t.kind, t.client, t.end_ms, t.early_ms)
            for t in self.timers()
            if not ((t.kind == "wait" or t.released) and t.client == late)
            and t.end_ms != KEPT_ALIVE
        ]
        found += [Mark("step", d.what, d.at_ms, due_ms=d.due_ms) for d in self.thawed]
        if late_client is not None:
            index, client = late_client
            found += [
                Mark("step", d.what, d.at_ms)
                for d in self.taken
                if d.index is not None and d.index > index and not (d.actor == client and d.command)
            ]
        else:
            found += [
                Mark("step", d.what, d.at_ms, due_ms=d.due_ms) for d in self.taken if d.index != own
            ]
        return sorted(found, key=lambda mark: mark.at_ms)

    def crossing(
        self,
        moments: Sequence[tuple[float, str]],
        late_ms: float,
        margin_ms: float,
        late_client: tuple[int, str] | None = None,
        own: int | None = None,
    ) -> Crossing | None:
        """The first moment (due time, what) that moving ``late_ms`` later carries across a
        point that stays (:meth:`marks`) — or, for a timer, to within ``margin_ms`` of its end,
        which is an estimate; a step's time is not, but is recorded to 0.1 ms
        (:data:`STEP_RESOLUTION_MS`). None: the story is kept."""
        for mark in self.marks(late_client, own):
            margin = STEP_RESOLUTION_MS if mark.kind == "step" else max(margin_ms, mark.early_ms)
            for due, what in sorted(moments):
                if mark.due_ms is not None and mark.due_ms <= due + SAME_MOMENT_MS:
                    continue  # due at or before the moment: the script's order is kept
                if due < mark.at_ms <= due + late_ms + margin:
                    return Crossing(mark, what, due, due + late_ms)
        return None
