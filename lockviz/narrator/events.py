"""The :class:`Narrator`: says one run's events in order, each as a
:class:`~lockviz.narrator.words.Said`.

It is the last of three layers: :mod:`~lockviz.narrator.memory` remembers the run so far,
:mod:`~lockviz.narrator.messages` says requests and replies; here are the entry points and
every event that is not a message (the words only its own fields decide are in
:mod:`~lockviz.narrator.phrases`), and :func:`narrate`, a whole run at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lockviz.narrator.messages import Messages
from lockviz.narrator.phrases import PHRASES, link_phrase
from lockviz.narrator.steps import click, step_number
from lockviz.narrator.words import Event, Said, Told, duration, items, seconds


class Narrator(Messages):
    """Says one run's events, in order (see the package docstring)."""

    # -- the entry points -------------------------------------------------------------------

    def said(self, e: Event) -> Said:
        try:
            return self._said(e)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            kind = str(e.get("kind"))
            return Said(kind, f"{e.get('actor', '?')} {kind}")

    def narrate(self, e: Event) -> Told:
        """The event as the browser gets it: its fields and, under ``said``, its words."""
        return {**e, "said": self.said(e).as_data()}

    def _said(self, e: Event) -> Said:
        kind, who = e["kind"], str(e.get("actor", "?"))
        if kind == "run_started":
            backend = e.get("backend")
            self.backend = str(backend) if backend else self.backend
            self.nodes = [str(n) for n in items(e.get("nodes") or [])]
        if kind == "request":
            return self._request(e, who)
        if kind == "reply":
            return self._reply(e, who)
        said = self._other(e, who)
        self._follow(e, who)
        return said

    # -- everything else ------------------------------------------------------------------

    def _other(self, e: Event, who: str) -> Said:
        kind = str(e["kind"])
        if kind == "note":
            return self._note(e, who)
        if kind == "lost":
            return self._lost(e, who)
        if kind == "link":
            return self._link(e, who)
        if kind in ("expired", "deleted"):
            return self._server_end(e, who)
        if kind == "run_finished":
            return self._finished(e)
        if kind == "woken":
            text = f"woken by its watch: {e.get('by')}"
            return Said(text, f"{who} {text}", f"watch fired: {e.get('by')}", short="watch fired")
        if kind == "granted":
            label, short = self._granted_label(e)
            return Said(_granted(e, self), f"{who} {_granted(e, self)}", label, short=short)
        if kind == "step":
            words = click(e)
            text = f"step {step_number(e.get('index'))}: {words}"
            if e.get("say"):
                text += f" — {e['say']}"
            return Said(text, text, words)
        phrase, label = self._phrase(e)
        return Said(phrase, phrase if who == "lab" else f"{who} {phrase}", label)

    def _granted_label(self, e: Event) -> tuple[str, str]:
        ttl = e.get("ttl_ms")
        if self.backend == "redlock" or e.get("nodes"):
            nodes = items(e.get("nodes") or [])
            got = f"{len(nodes)} of {len(self.nodes) or '?'}"
            return f"lease {duration(ttl)} on {got}\nno fencing token", got
        lease = "session" if self.backend == "zookeeper" else "lease"
        held = f"{lease} {duration(ttl)}" if ttl else "no lease"
        token = self.token(e.get("token"))
        return f"{held} · {token}", token if token != "no token" else held

    def _note(self, e: Event, who: str) -> Said:
        text = str(e.get("text"))
        state = self.rounds.get(who)
        if state is None or not state.open or "undoing" not in text:
            return Said(text, f"{who}: {text}", text)
        quorum = len(self.nodes) // 2 + 1 if self.nodes else 0
        label = (
            f"{state.yes} of {len(self.nodes)} said yes, {quorum} needed: undo everywhere"
            if state.yes < quorum
            else "a majority said yes, too late: undo everywhere"
        )
        number, fold = state.number, self._settle(e, who)
        return Said(text, f"{who}: {text}", label, short=f"{state.yes} of {len(self.nodes)}",
                    round=number, fold=fold)  # fmt: skip

    def _lost(self, e: Event, who: str) -> Said:
        reason = str(e.get("reason") or "lock gone")
        ended = self.expired.get(who)
        if self.backend == "zookeeper" and ended is not None:
            text = (
                f"learned it lost the lock: ZooKeeper had expired its session at "
                f"{seconds(ended)} (it noticed when its connection was {reason.split(':')[0]})"
            )
            return Said(text, f"{who} {text}", "lost: session expired", short="lost")
        if "suspended" in reason:
            label = "lost: connection suspended"
        elif "expired" in reason:
            label = "lost: " + ("session expired" if "session" in reason else "lease expired")
        else:
            label = f"lost: {reason.split(':')[0]}"
        text = f"learned it lost the lock: {reason}"
        return Said(text, f"{who} {text}", label, short="lost")

    def _server_end(self, e: Event, who: str) -> Said:
        holder = str(e.get("holder") or "?")
        gap = "believes it holds\n(lease gone)"
        state = self.rounds.get(holder)  # a key left by a round of an acquire still going on
        rounds = state.number if state is not None else 0
        if e["kind"] == "expired":
            what = "session" if self.backend == "zookeeper" else "lease"
            phrase = f"{what} of {holder} EXPIRED on the server"
            return Said(phrase, f"{who}: {phrase}", f"{holder}'s {what} expired", gap, round=rounds)
        node = "lock node" if self.backend == "zookeeper" else "key"
        phrase = f"lock {node} of {holder} deleted"
        mine = holder in self.releasing  # its own release: the mark is enough
        label = "" if mine else f"deleted {holder}'s {node}"
        return Said(phrase, f"{who}: {phrase}", label, gap, round=rounds)

    def _link(self, e: Event, who: str) -> Said:
        phrase, label = link_phrase(e)
        nodes = self.linking.get(who) or []
        node, mode = e.get("node"), e.get("mode")
        if not e.get("peers") and node in nodes and len(nodes) > 1:  # one click, several links
            names = ", ".join(nodes)
            label = {
                "pass": f"{who} ⇹ {names} healed",
                "delay": f"{who} ⇹ {names} delayed {e.get('ms')} ms",
            }.get(str(mode), f"✂ {who} ⇹ {names} cut ({mode})")
        elif mode in ("blackhole", "reset") and not e.get("peers"):
            label = "✂ " + label
        return Said(phrase, f"{who} {phrase}", label)

    def _finished(self, e: Event) -> Said:
        found = e.get("verdict")
        verdict: Mapping[str, object] = found if isinstance(found, Mapping) else {}
        overlaps = [
            f"two holders: {' & '.join(map(str, o.get('clients') or []))} "
            f"({seconds(float(o['end_ms']) - float(o['start_ms']))})"
            for o in items(verdict.get("overlaps") or [])
            if isinstance(o, Mapping)
        ]
        end = f"run end {seconds(e.get('t_ms'))}"
        return Said("run finished", "run finished", end, "\n".join(overlaps))

    def _phrase(self, e: Event) -> tuple[str, str]:
        """(what happened, its diagram label) for an event that is not a message."""
        say = PHRASES.get(str(e["kind"]))
        return say(e) if say is not None else (str(e["kind"]), "")


def _granted(e: Event, narrator: Narrator) -> str:
    token = narrator.token(e.get("token"))
    token = "no fencing token" if token == "no token" else token
    lease = f"lease {e['ttl_ms']} ms" if e.get("ttl_ms") else "no lease"
    valid = f", valid {e['validity_ms']} ms" if e.get("validity_ms") else ""
    return f"believes it holds the lock ({token}, {lease}{valid})"


def narrate(events: Iterable[Event], backend: str | None = None) -> list[Told]:
    """Every event of a run with its words (``said``), in order."""
    narrator = Narrator(backend)
    return [narrator.narrate(e) for e in events if isinstance(e, Mapping)]
