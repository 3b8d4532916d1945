"""Runs in words: every event, click and verdict as lockviz says it, in one place.

The pages, the exports and the terminal all read their words here; the browser receives them
as data with each event (``said``), never makes its own. An event is said three ways:

* ``text``: a sentence with its subject, for the story panel, a replay's current event and
  the walkthrough ("alice ← storage: write REJECTED (1 < 2)");
* ``label``: the diagram's short label, on the event's arrow or beside its mark
  ("SET NX PX 2000", "REJECTED 1 < 2", "lease expired on redis-1");
* ``mark``: for a write's reply, what the storage did with it ("stored A (token 1)").

Some words need what came before (a write's reply names the value its request carried), so a
:class:`Narrator` follows one run's events in order. Nothing here trusts an event: an import
may carry any JSON, and a missing field is said as "?", never raised.

One module by design, past the usual ~300 lines: every word about a run lives here and nowhere
else, so a wording is changed once and reaches every page, export and the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from lockviz.catalogue import server_kind

Event = Mapping[str, Any]


@dataclass(frozen=True)
class Said:
    phrase: str  # what happened, without its subject (the terminal prints the actor apart)
    text: str  # a sentence with its subject
    label: str = ""  # the diagram's label
    mark: str = ""  # a write reply's mark at the storage

    def as_data(self) -> dict[str, str]:
        """What the browser gets with each event."""
        data = asdict(self)
        del data["phrase"]
        return data


def signed_ms(ms: Any) -> str:
    """``+20 s``, ``−500 ms``: a clock jump's size as a learner reads it."""
    if not isinstance(ms, int | float):
        return "?"
    sign = "\u2212" if ms < 0 else "+"
    return f"{sign}{abs(ms) / 1000:g} s" if abs(ms) >= 1000 else f"{sign}{abs(ms):g} ms"


def _token(value: Any) -> str:
    return f"token {value}" if value is not None else "no token"


class Narrator:
    """Says one run's events, in order (see the module docstring)."""

    def __init__(self, backend: str | None = None) -> None:
        self.backend = backend
        self.requests: dict[tuple[Any, Any], Event] = {}

    def said(self, e: Event) -> Said:
        try:
            return self._said(e)
        except (KeyError, TypeError, ValueError, AttributeError):
            kind = str(e.get("kind"))
            return Said(kind, f"{e.get('actor', '?')} {kind}")

    def narrate(self, e: Event) -> dict[str, Any]:
        """The event as the browser gets it: its fields and, under ``said``, its words."""
        return {**e, "said": self.said(e).as_data()}

    def _said(self, e: Event) -> Said:
        kind, who = e["kind"], str(e.get("actor", "?"))
        if kind == "run_started":
            self.backend = e.get("backend") or self.backend
        if kind == "request":
            self.requests[(who, e.get("call"))] = e
            phrase = f"→ {e.get('to')}  {e.get('op')}{self._args(e)}"
            text = f"{who} → {e.get('to')}: {e.get('op')}{self._args(e)}"
            return Said(phrase, text, self._request_label(e))
        if kind == "reply":
            request = self.requests.pop((who, e.get("call")), {})
            result = self._result(e)
            phrase = f"← {e.get('from')}  {e.get('op')}: {result}"
            text = f"{who} ← {e.get('from')}: {e.get('op')} {result}"
            return Said(phrase, text, self._reply_label(e), self._write_mark(request, e))
        phrase, label = self._phrase(e)
        return Said(phrase, phrase if who == "lab" else f"{who} {phrase}", label)

    # -- protocol messages ----------------------------------------------------------------

    @staticmethod
    def _args(e: Event) -> str:
        args = []
        if e.get("op") == "write":
            args.append(f"value {e.get('value')!r} with {_token(e.get('token'))}")
        elif e.get("ttl_ms") is not None:
            args.append(f"lease {e['ttl_ms']} ms")
        if e.get("unsafe"):
            args.append("plain DEL")
        return f" ({', '.join(args)})" if args else ""

    def _request_label(self, e: Event) -> str:
        """Redis users recognise the real command; other backends get the neutral verb."""
        ttl, op = e.get("ttl_ms"), str(e.get("op") or "request")
        if op == "acquire":
            if self.backend in (None, "redis"):
                return "SET NX" + (f" PX {ttl}" if ttl is not None else "")
            return "acquire" + (f" ttl {ttl} ms" if ttl is not None else "")
        if op == "extend":
            return "extend" + (f" {ttl} ms" if ttl is not None else "")
        if op == "write":
            value = e.get("value") if e.get("value") is not None else ""
            return f"write {value} ({_token(e.get('token'))})"
        return op + (" (plain DEL)" if e.get("unsafe") else "")

    @staticmethod
    def _result(e: Event) -> str:
        if e.get("op") == "write" and "accepted" in e:
            return "accepted" if e["accepted"] else f"REJECTED ({e.get('reason')})"
        if e.get("ok"):
            return f"OK token {e['token']}" if e.get("token") is not None else "OK"
        return str(e.get("error") or e.get("reason") or "no")

    @staticmethod
    def _reply_label(e: Event) -> str:
        if e.get("error"):
            return f"error: {e['error']}"
        if e.get("op") == "write":
            return (
                f"REJECTED {e.get('reason') or ''}".strip()
                if e.get("accepted") is False
                else "accepted"
            )
        if e.get("op") == "acquire":
            if e.get("ok"):
                return f"OK token {e['token']}" if e.get("token") is not None else "OK"
            return f"nil ({e.get('reason') or 'held'})"
        return "OK" if e.get("ok") else "failed" + (f": {e['reason']}" if e.get("reason") else "")

    @staticmethod
    def _write_mark(request: Event, e: Event) -> str:
        """What the storage did with a write, beside its mark on the storage's lifeline."""
        if e.get("op") != "write" or e.get("error"):
            return ""
        token = e.get("token", request.get("token"))
        if e.get("accepted") is False:
            return f"REJECTED {e.get('reason') or _token(token)}"
        value = request.get("value")
        value = value if value is not None else ""
        return f"stored {value} ({token if token is not None else 'no token'})"

    # -- everything else ------------------------------------------------------------------

    def _phrase(self, e: Event) -> tuple[str, str]:
        """(what happened, its diagram label) for an event that is not a message."""
        say = _PHRASES.get(str(e["kind"]))
        return say(e) if say is not None else (str(e["kind"]), "")


def _released(e: Event) -> tuple[str, str]:
    if e.get("ok"):
        return "released", ""
    return f"released, but {e.get('reason', 'the lock was not ours')}", ""


def _paused(e: Event) -> tuple[str, str]:
    ms = f" {e['ms']} ms" if e.get("ms") is not None else ""
    return f"FROZEN (SIGSTOP) for {e.get('ms')} ms", f"GC pause (SIGSTOP){ms}"


def _crashed(e: Event) -> tuple[str, str]:
    server = server_kind(str(e.get("actor"))) is not None
    return "CRASHED (kill -9)", "kill -9" if server else "crashed (SIGKILL)"


def _deleted(e: Event) -> tuple[str, str]:
    holder = e.get("holder")
    return (
        f"lock key of {holder or '?'} deleted",
        f"deleted {holder}'s key" if holder else "deleted key",
    )


def _clock_jumped(e: Event) -> tuple[str, str]:
    total = signed_ms(e.get("offset_ms"))
    return f"wall clock jumped {signed_ms(e.get('ms'))} (offset now {total})", (
        f"clock {signed_ms(e.get('ms') or 0)}"
    )


def _granted(e: Event) -> str:
    token = _token(e.get("token")) if e.get("token") is not None else "no fencing token"
    lease = f"lease {e['ttl_ms']} ms" if e.get("ttl_ms") else "no lease"
    valid = f", valid {e['validity_ms']} ms" if e.get("validity_ms") else ""
    return f"believes it holds the lock ({token}, {lease}{valid})"


def _restarted(e: Event) -> tuple[str, str]:
    persistence = e.get("persistence")
    if persistence is None:
        return "restarted", "restarted"
    if persistence == "fsync":
        return "restarted (fsync: its keys kept)", "restarted (fsync: keys kept)"
    return "restarted (no fsync: empty)", "restarted (no fsync: empty)"


def _number(e: Event) -> str:
    index = e.get("index")
    return str(index + 1) if isinstance(index, int) else "?"


def _step(e: Event) -> str:
    return f"step {_number(e)}: {click(e)}" + (f" — {e['say']}" if e.get("say") else "")


def _shifted(e: Event) -> tuple[str, str]:
    late = f"{float(e.get('late_ms') or 0):.0f} ms"
    behind = f"the machine fell behind by {late} at {e.get('what')}"
    if e.get("kept") is not False:
        return f"{behind}: the rest of the schedule moves {late} later, keeping its intervals", (
            f"schedule +{late}"
        )
    at = f"{float(e.get('fixed_ms') or 0):.0f} ms"
    fixed = {
        "lease": f"{e.get('fixed_by')}'s lease ends at {at}",
        "wait": f"{e.get('fixed_by')}'s wait for the lock ends at {at}",
        "step": f"{e.get('fixed_by')} already came at {at}",
    }.get(str(e.get("fixed")), f"something came at {at}")
    return (
        f"{behind}: the schedule moves {late} later, but {fixed}, and {e.get('moved')} now "
        f"comes after it ({float(e.get('moved_to_ms') or 0):.0f} ms): this run cannot keep its "
        "story",
        "story lost",
    )


def _link(e: Event) -> tuple[str, str]:
    who, mode = e.get("actor"), e.get("mode")
    if e.get("peers"):
        return f"links to its peers {', '.join(map(str, e['peers']))}: {mode}", f"cut off ({mode})"
    node = e.get("node")
    if mode == "pass":
        return f"link to {node} healed", f"{who} ⇹ {node} healed"
    if mode == "delay":
        jitter = f" ± {e['jitter_ms']}" if e.get("jitter_ms") else ""
        return f"link to {node} delayed {e.get('ms')}{jitter} ms", f"delayed {e.get('ms')} ms"
    held = "connections are reset" if mode == "reset" else "bytes are held, nothing arrives"
    return f"link to {node} cut ({mode}): {held}", f"{who} ⇹ {node} cut ({mode})"


_PHRASES: dict[str, Callable[[Event], tuple[str, str]]] = {
    "granted": lambda e: (_granted(e), f"lease · {_token(e.get('token'))}"),
    "acquire_failed": lambda e: (f"gave up acquiring: {e.get('reason')}", ""),
    "released": _released,
    "extended": lambda e: (
        f"extended to {e.get('ttl_ms')} ms" if e.get("ok") else "extend failed",
        "",
    ),
    "lost": lambda e: (
        f"learned it lost the lock: {e.get('reason')}",
        f"lost: {e.get('reason') or 'lock gone'}",
    ),
    "paused": _paused,
    "resumed": lambda e: (
        "thawed (SIGCONT)" + (f": {e['why']}" if e.get("why") else ""),
        "resumed (SIGCONT)",
    ),
    "step_refused": lambda e: (
        f"could not take step {_number(e)}: {e.get('why')}",
        f"refused: {e.get('why')}",
    ),
    "ending": lambda e: (f"the run ends now: {e.get('why')}", ""),
    "crashed": _crashed,
    "restarted": lambda e: _restarted(e),
    "expired": lambda e: (
        f"lease of {e.get('holder') or '?'} EXPIRED on the server",
        f"lease expired on {e.get('actor')}",
    ),
    "deleted": _deleted,
    "clock_jumped": _clock_jumped,
    "clock_rate": lambda e: (f"own clock now runs at ×{e.get('rate')}", f"clock ×{e.get('rate')}"),
    "step": lambda e: (_step(e), ""),
    "run_started": lambda e: (f"run started: {e.get('title')}", ""),
    "run_finished": lambda e: ("run finished", ""),
    "run_failed": lambda e: (f"run FAILED: {e.get('error')}", ""),
    "run_interrupted": lambda e: (f"run INTERRUPTED: {e.get('why')}", ""),
    "run_cancelled": lambda e: (f"run cancelled: {e.get('why')}", ""),
    "note": lambda e: (str(e.get("text")), ""),
    "releasing": lambda e: ("leaves its critical section and releases", ""),
    "session": lambda e: (f"ZooKeeper session {e.get('state')}", ""),
    "woken": lambda e: (f"woken to re-check ({e.get('by')})", ""),
    "renewal_started": lambda e: (f"watchdog renews every {e.get('interval_ms')} ms", ""),
    "link": lambda e: _link(e),
    "schedule_shifted": _shifted,
}


def click(step: Mapping[str, Any]) -> str:
    """A step (a click, or a scenario's step) in words: "alice paused for 500 ms (SIGSTOP)"."""
    who = step.get("client") or step.get("node") or "?"
    verb, ms = step.get("do"), step.get("ms")
    links = f"{who} ⇹ {', '.join(step.get('nodes') or []) or 'every server'}"
    if step.get("node") and verb in ("partition", "heal"):
        links = f"{who} ⇹ its peers"
    words = {
        "acquire": f"{who} asks for the lock",
        "write": f"{who} writes {step.get('value', '')!r} to the storage",
        "release": f"{who} releases the lock",
        "extend": f"{who} extends its lease",
        "pause": f"{who} paused for {ms} ms (SIGSTOP)",
        "crash": f"{who} killed (kill -9)" if step.get("node") else f"{who} crashed (SIGKILL)",
        "restart": f"{who} restarted",
        "clock_jump": f"{who}'s clock jumped {signed_ms(ms or 0)}",
        "clock_rate": f"{who}'s clock runs ×{step.get('rate')}",
        "partition": f"{links} cut ({step.get('mode') or 'blackhole'})",
        "heal": f"{links} healed",
        "delay": f"{links} delayed {ms} ms",
    }
    return words.get(str(verb), str(verb))


def narrate(events: Iterable[Event], backend: str | None = None) -> list[dict[str, Any]]:
    """Every event of a run with its words (``said``), in order."""
    narrator = Narrator(backend)
    return [narrator.narrate(e) for e in events if isinstance(e, Mapping)]


# -- verdicts ------------------------------------------------------------------------------


def headline(
    verdict: Mapping[str, Any] | None, error: str = "", status: str = ""
) -> tuple[str, str]:
    """A run's outcome in one line, and its tone (good, warn, bad, pending)."""
    if status == "interrupted":
        return "⏹ The run was interrupted: the app stopped before it ended", "bad"
    if status == "cancelled":
        return "⏹ The run was cancelled: nobody watched it while it waited", "pending"
    if error or status == "failed":
        return "✖ The run failed", "bad"
    if not verdict:
        return ("… waiting for the lab" if status == "queued" else "… running live"), "pending"
    if verdict.get("inconclusive"):
        return f"⚠ Inconclusive: {verdict['inconclusive']}", "warn"
    if verdict.get("data_corrupted"):
        return "✖ Mutual exclusion violated, data corrupted", "bad"
    if verdict.get("mutual_exclusion") == "violated":
        if verdict.get("stale_writes_rejected"):
            return "⚠ Mutual exclusion violated — fencing saved the data", "warn"
        return "⚠ Mutual exclusion violated", "warn"
    if verdict.get("liveness") == "stuck":
        return "⚠ Mutual exclusion held, but the lock is stuck", "warn"
    return "✔ Mutual exclusion held", "good"


def expectation(
    verdict: Mapping[str, Any] | None, expect_met: bool | None, mismatches: list[str]
) -> tuple[str, str] | None:
    """What became of the scenario's prediction, and its tone (met, missed, unjudged); None
    when there is nothing to say (no verdict, or no prediction)."""
    if verdict and verdict.get("inconclusive"):
        return (
            "⚠ Not judged: the machine fell behind and this run could not keep the story the "
            "scenario predicts. Run it again when the lab is quieter.",
            "unjudged",
        )
    if expect_met is None:
        return None
    if expect_met:
        return "✔ As the scenario predicted.", "met"
    return f"✖ Not what the scenario predicted: {'; '.join(mismatches)}", "missed"


def facts(verdict: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The verdict's findings, each as (what, how much), in the order the pages list them."""
    overlaps = "; ".join(
        f"{' & '.join(o['clients'])} from {o['start_ms']:.0f} to {o['end_ms']:.0f} ms"
        for o in verdict.get("overlaps") or []
    )
    found = [
        ("Two holders at once", overlaps or "never"),
        ("Stale writes accepted", str(verdict.get("stale_writes_accepted", 0))),
        ("Stale writes rejected by fencing", str(verdict.get("stale_writes_rejected", 0))),
    ]
    if verdict.get("acquire_failures"):
        found.append(("Acquires that gave up", str(verdict["acquire_failures"])))
    if verdict.get("stuck_clients"):
        found.append(("Stuck behind a crashed holder", ", ".join(verdict["stuck_clients"])))
    if verdict.get("wakeups"):
        found.append(("Wake-ups of waiting clients", str(verdict["wakeups"])))
    return found


# -- the terminal --------------------------------------------------------------------------


def render(events: Iterable[Event]) -> str:
    """A run as a text timeline: ``  2512.4 ms  #7   bob       believes it holds the lock``."""
    narrator, lines = Narrator(), []
    for e in events:
        said = narrator.said(e)
        lines.append(f"{e['t_ms']:>9.1f} ms  #{e['seq']:<3} {e['actor']:<9} {said.phrase}")
    return "\n".join(lines)


def verdict_text(verdict: Mapping[str, Any] | None, mismatches: list[str]) -> str:
    if verdict is None:
        return "No verdict: the run did not complete."
    lines = [
        f"mutual exclusion: {verdict['mutual_exclusion']}",
        f"stale writes accepted: {verdict['stale_writes_accepted']}",
        f"stale writes rejected: {verdict['stale_writes_rejected']}",
        f"data corrupted: {'yes' if verdict['data_corrupted'] else 'no'}",
    ]
    if verdict.get("liveness") == "stuck":
        lines.append(f"liveness: STUCK ({', '.join(verdict.get('stuck_clients', []))})")
    if verdict.get("acquire_failures"):
        lines.append(f"acquires that gave up: {verdict['acquire_failures']}")
    if verdict.get("wakeups"):
        lines.append(f"wake-ups of waiting clients: {verdict['wakeups']}")
    for o in verdict["overlaps"]:
        lines.append(
            f"two holders: {' & '.join(o['clients'])} from {o['start_ms']} to {o['end_ms']} ms"
        )
    lines.append(headline(verdict)[0])
    lines.append(verdict["summary"])
    lines.extend(f"NOT AS EXPECTED: {m}" for m in mismatches)
    return "\n".join(lines)
