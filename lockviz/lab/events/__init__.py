"""Every event a run records, each kind with its fields, declared once: this package.

The kinds are declared in the package's modules, one per section of docs/events.md: the four
fields every event has (:mod:`.base`), the run's own events (:mod:`.run`), protocol messages
(:mod:`.messages`), what a client believes (:mod:`.beliefs`), the faults (:mod:`.faults`) and
what the servers did (:mod:`.servers`). Here: their union, and the seams the lab records
through. Everyone imports the kinds from here (``from lockviz.lab.events import Granted``).

Everything that happens (a client's protocol step, a server ending a lease, a fault) is
*recorded* once, where it happens, through a :class:`Record`: the engine gives the event its
``seq`` and its time on the reference clock (the host's CLOCK_MONOTONIC, stamped where the
event happened when ``t_ns`` is given), validates it into its kind's model here, keeps it, and
hands the finished event to the run's :data:`Sink`, which stores and broadcasts it.

Each kind is a frozen pydantic model whose ``kind`` field is a literal; :data:`Event` is their
union, discriminated on ``kind``. What is declared here is all there is: the import check
(:mod:`lockviz.runs.fields`) derives its field checks from these models, ``manage.py events``
writes docs/events.md and static/lockviz/events.schema.json (the JSON Schema the front end's
tests read) from them, and a test fails when either file differs from what they generate.

A model keeps an event's JSON as it was: :func:`as_json` gives back exactly the fields that
were set (a field sent as ``null`` stays ``null``, one never sent stays absent), and numbers
keep their type (``500`` is not turned into ``500.0``). Models forbid fields they do not
declare, so a new field must be declared here before the lab can record it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Optional, Protocol, cast, get_args

from pydantic import Field, TypeAdapter, ValidationError

from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.lab.events.base import BaseEvent, Key, StampedJson
from lockviz.lab.events.beliefs import (
    AcquireFailed,
    Extended,
    Granted,
    Lost,
    Note,
    Released,
    Releasing,
    RenewalStarted,
    Session,
    Woken,
)
from lockviz.lab.events.faults import ClockJumped, ClockRate, Crashed, Link, Paused, Resumed
from lockviz.lab.events.messages import Reply, Request
from lockviz.lab.events.run import (
    Ending,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunInterrupted,
    RunStarted,
    ScheduleShifted,
    Step,
    StepRefused,
)
from lockviz.lab.events.servers import (
    Deleted,
    Expired,
    Replicated,
    Restarted,
    Role,
    Suspected,
    Voted,
)

__all__ = [
    "EVENT", "KINDS", "AcquireFailed", "BaseEvent", "ClockJumped", "ClockRate", "Crashed",
    "Deleted", "Ending", "Event", "EventJson", "Expired", "Extended", "Granted", "Key", "Link",
    "Lost", "Note", "Paused", "Record", "Released", "Releasing", "RenewalStarted", "Replicated",
    "Reply", "Request", "Restarted", "Resumed", "Role", "RunCancelled", "RunFailed",
    "RunFinished", "RunInterrupted", "RunStarted", "ScheduleShifted", "Session", "Sink",
    "StampedJson", "Step", "StepRefused", "Suspected", "Voted", "Woken", "as_json",
    "json_schema", "lenient", "parse",
]  # fmt: skip

EventJson = JsonObject  # an event as JSON: what the store keeps, the stream carries, an export has

# ---- the union, and the seams the lab records through -------------------------------------------

Event = Annotated[
    RunStarted | Step | ScheduleShifted | RunFinished | RunFailed | Ending | StepRefused
    | RunInterrupted | RunCancelled | Request | Reply | Granted | AcquireFailed | Releasing
    | Released | Extended | Lost | Session | Woken | RenewalStarted | Note | Paused | Resumed
    | Crashed | ClockJumped | ClockRate | Link | Expired | Deleted | Restarted | Role | Voted
    | Suspected | Replicated,
    Field(discriminator="kind"),
]  # fmt: skip
EVENT: TypeAdapter[Event] = TypeAdapter(Event)


def _kinds() -> dict[str, type[BaseEvent]]:
    union = get_args(get_args(Event)[0])
    return {get_args(model.model_fields["kind"].annotation)[0]: model for model in union}


KINDS: dict[str, type[BaseEvent]] = _kinds()  # every kind's model, by its name


def parse(data: Mapping[str, object]) -> Event:
    """The event's model, or :class:`pydantic.ValidationError` naming what does not fit."""
    return EVENT.validate_python(data)


def _lenient(model: type[BaseEvent], extra: str = "forbid") -> type[BaseEvent]:
    """``model`` with every field but ``kind`` optional: absent is ``None`` (``actor``: ``"?"``),
    and a field that is there is checked as strictly as ever (``extra``: what an undeclared
    field does)."""
    fields = {name: info for name, info in model.model_fields.items() if name != "kind"}
    namespace: dict[str, object] = {
        "__module__": __name__,
        "model_config": {**model.model_config, "extra": extra},
        "__annotations__": {
            name: Optional[info.annotation]  # noqa: UP045 (a type made at run time)
            for name, info in fields.items()
        },
        **{
            name: Field(default="?" if name == "actor" else None, alias=info.alias)
            for name, info in fields.items()
        },
    }
    return cast("type[BaseEvent]", type(model.__name__, (model,), namespace))


_SAID: dict[str, type[BaseEvent]] = {kind: _lenient(model) for kind, model in KINDS.items()}
_OTHER = _lenient(BaseEvent, extra="ignore")  # a kind not declared here: only the four fields


def lenient(data: Mapping[str, object]) -> BaseEvent | None:
    """The event as the narrator reads it: its kind's model (a kind not declared here: a
    :class:`BaseEvent`), or None when it does not fit.

    The narrator says any JSON (an imported run's, a test's ``{"kind": "crashed", "actor":
    "redis-2"}`` without ``seq`` or ``t_ms``), so here every field but ``kind`` may be missing:
    a missing one reads as ``None`` (the actor as ``"?"``), whatever its declared type, and
    ``model_fields_set`` tells it from one sent as ``null``. A field that is there must have
    its declared type; a field its kind does not declare, or a ``kind`` that is not a string,
    gives None: the narrator then says the event plainly."""
    kind = data.get("kind")
    if not isinstance(kind, str):
        return None
    try:
        return _SAID.get(kind, _OTHER).model_validate(data)
    except ValidationError:
        return None


def as_json(event: BaseEvent) -> EventJson:
    """The event as JSON has it: exactly the fields that were set, ``from`` by its name."""
    data: EventJson = event.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return data


def json_schema() -> dict[str, JsonValue]:
    """The JSON Schema of every event (static/lockviz/events.schema.json)."""
    schema: dict[str, JsonValue] = EVENT.json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "lockviz event",
        "description": "One event of a run, as the store keeps it and the stream carries it "
        "(generated from lockviz/lab/events/ by `manage.py events --schema`).",
        **schema,
    }


Sink = Callable[[Event], None]  # where finished events go (the store and the viewers)


class Record(Protocol):
    def __call__(
        self, actor: str, kind: str, details: Mapping[str, object], t_ns: int | None = None
    ) -> None:
        """Record that ``actor`` did or saw ``kind`` (stamped now, or at ``t_ns``)."""
