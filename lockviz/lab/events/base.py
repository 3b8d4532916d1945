"""What every event has: the four fields, and how a kind declares its own (``is_``, ``may``)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from lockviz.jsontypes import Number, StrictDict

Key = Annotated[str | int, WithJsonSchema({"type": ["string", "integer"]})]


class StampedJson(StrictDict):
    """A stamped write of a last-write-wins register: who wrote what, stamped when by its own
    clock (ms since the epoch)."""

    writer: str
    value: str
    stamp: int


class BaseEvent(BaseModel):
    """The four fields of every event."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)
    group: ClassVar[str] = ""  # the section of docs/events.md that lists the kind
    recorded_by: ClassVar[str] = ""  # who records it (docs/events.md's "actor" column)

    seq: int = Field(
        ge=1,
        description="1, 2, 3 … in the order the recorder received the events. Unique per run; "
        "a viewer resumes after the last `seq` it has.",
    )
    t_ms: Number = Field(
        description="milliseconds since the run started, on **one reference clock**: the "
        "host's `CLOCK_MONOTONIC`, which every process on the machine shares. It is stamped "
        "where the event happened (in the client process for client events), so a frozen "
        "client's events carry the time it really saw them. Server clock jumps (libfaketime) "
        "never touch it.",
    )
    actor: str = Field(
        description="who did it: a client (`alice`), a server (`redis-1`, `storage`) or `lab` "
        "(the run engine).",
    )
    kind: str = Field(description="what happened (below). All other fields are its details.")


def is_(description: str) -> Any:
    """A field every event of its kind has."""
    return Field(description=description)


def may(description: str) -> Any:
    """A field only some events of its kind have: absent (or ``null``) otherwise."""
    return Field(default=None, description=description)
