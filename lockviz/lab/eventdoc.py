"""docs/events.md, written from :mod:`lockviz.lab.events` (``manage.py events --markdown``).

The tables (the four fields of every event, then each kind with its actor, meaning and
fields) come from the models; only the prose around them, which says how the events are used
rather than what they hold, is written here.
"""

from __future__ import annotations

import inspect
import json

from pydantic.fields import FieldInfo

from lockviz.lab import events

INTRO = """\
# Events: the one model from client to browser

<!-- Generated from lockviz/lab/events.py by `manage.py events --markdown > docs/events.md`:
edit the models there, not this file (tests/lockviz/lab/test_events.py compares them). -->

Every protocol step of a run is an **event**. Clients (in their own processes), the lab's
server watchers and the run engine all report events; the run engine gives each one a sequence
number and its time, checks it against its kind's model in `lockviz/lab/events.py` (the one
place a kind and its fields are declared), and hands it to the recorder, which stores it and
publishes it to the run's Channels group. The checker, the text timeline, the JSON export, the
live diagram and replays all read the same events. Their JSON Schema, generated from the same
models, is `static/lockviz/events.schema.json` (`manage.py events --schema`).
"""
# An example, checked against its model as the docs are written.
EXAMPLE = {"seq": 7, "t_ms": 2512.4, "actor": "bob", "kind": "granted", "node": "redis-1",
           "token": 34, "ttl_ms": 2000, "value": "bob:9f2c"}  # fmt: skip

SAID = """\
Viewers (the live stream, replays, lessons) get each event with one more field, `said`: its words
from `lockviz/narrator/` — `text` (a sentence), `label` (the diagram's label, `\\n` between
lines) and `mark` (the words of a second mark: what the storage did with a write, what a lease's
end leaves beside a holder that still believes, the verdict's overlaps on `run_finished`); and,
only when they apply, `short` (the label cut to what matters, where the label does not fit),
`tone` (`"damage"`: an accepted stale write, judged by the checker's own rule as it lands),
`round` (which round of a client's refused-and-retried acquire the event belongs to) and `fold`
(on the event that settles a refused round from the second on: "rounds 2–23 refused"). They are
not stored: the words are derived, so a better wording reaches old runs too. How the diagram
draws them: [Reading the diagram](reading-the-diagram.md).

A field marked *(optional)* is absent (or `null`) when it does not apply; every other field is
always there, though some may be `null` as their description says. An event never carries a
field its kind does not declare.
"""

AFTER = {
    "Protocol messages (drawn as arrows)": """\
For `op: "write"` the request carries `value`, `token` (the writer's latest), `read` (the version
the writer last read, when it read) and `key` (its idempotency key, when it has one); the reply
carries `accepted`, `token` (the writer's), `highest`, `found` and `version`. A sequencer's
rejected write never reached the storage, so its reply has no `found`. For `op: "read"` the
reply carries `value` and `version`.

With `"storage": "sequencer"` a storage service stands in front of the storage node: each write
goes to it, it asks the lock service whether the writer's lock is still current, and only then
applies the write. Its questions (`op: "check"`, `holder` the writer) name the grant by `key` and
`value` (Redis and Redlock, one request per node for Redlock), `path` and `token` (ZooKeeper:
the lock node and its czxid), `lease`, then `key` and `token` (etcd: two calls) or `session`
(PostgreSQL: the writer's backend pid); its reply has `current` and, when not, `why`, or `error`
when the lock service did not answer (the storage then refuses the write). The check is made by
the storage service's process, never by the writer's: docs/algorithms.md, "Sequencers", says why.
""",
}

READING = """\
## Reading a run as a sequence diagram
- A **lease bar** for a client starts at its `granted` and ends at the node's `expired` or
  `deleted` for that holder (where the *server* ended it), or at the run's end.
- A **belief bar** for a client runs from `granted` to `released`, `lost`, `crashed` or the
  run's end: it is what the client thinks. Where it outlives the lease bar, the client is wrong.
- A **pause band** spans `paused` → `resumed` on the client's lifeline.
- A write whose reply has `accepted: false` is a **rejected write**.
- A `check` request and reply by `storage` is the storage asking the lock service about the
  writer's lock, between the write's request and its reply.
- The verdict's `overlaps` are the intervals where two clients' belief bars overlap.
"""


def _line(text: str | None) -> str:
    """A docstring or description as one table cell: one line, no pipes."""
    return " ".join(inspect.cleandoc(text or "").split()).replace("|", "\\|")


def _detail(name: str, info: FieldInfo) -> str:
    optional = "" if info.is_required() else " *(optional)*"
    return f"`{info.alias or name}`{optional}: {_line(info.description)}"


def _row(kind: str, model: type[events.BaseEvent]) -> str:
    own = [
        _detail(name, info)
        for name, info in model.model_fields.items()
        if name not in events.BaseEvent.model_fields
    ]
    details = _line(model.__doc__) + ("<br>" + "; ".join(own) if own else "")
    return f"| `{kind}` | {model.recorded_by} | {details} |"


def markdown() -> str:
    """The whole of docs/events.md."""
    common = [
        "| field | meaning |",
        "|---|---|",
        *(
            f"| `{name}` | {_line(info.description)} |"
            for name, info in events.BaseEvent.model_fields.items()
        ),
    ]
    example = json.dumps(events.as_json(events.parse(EXAMPLE)), ensure_ascii=False)
    parts = [INTRO, f"```json\n{example}\n```\n", "\n".join(common) + "\n", SAID, "## Kinds\n"]
    groups: dict[str, list[str]] = {}
    for kind, model in events.KINDS.items():
        groups.setdefault(model.group, []).append(_row(kind, model))
    for group, rows in groups.items():
        table = "\n".join(["| kind | actor | details |", "|---|---|---|", *rows])
        parts.append(f"### {group}\n{table}\n")
        if group in AFTER:
            parts.append(AFTER[group])
    parts.append(READING)
    return "\n".join(parts)
