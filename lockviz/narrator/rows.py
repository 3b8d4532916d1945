"""A row of the narrator's table (:data:`~lockviz.narrator.sayers.SAYERS`): :class:`Typed`, a
kind's model with the sayer that reads it, and :func:`plainly`, the words of an event that does
not fit its kind.

The :class:`~lockviz.narrator.telling.Narrator` parses each event once
(:func:`lockviz.lab.events.lenient`) and hands the model to the row's :meth:`Typed.say`; a row
called with an event's JSON parses it itself, so a sayer only ever reads a model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from lockviz.lab.events import BaseEvent, EventJson, lenient
from lockviz.narrator.memory import Memory
from lockviz.narrator.words import Said

M = TypeVar("M", bound=BaseEvent)


def plainly(e: EventJson) -> Said:
    """An event that does not fit its kind (an odd import's): its actor and its kind, as they
    are, for there is no model to read them from."""
    kind = str(e.get("kind"))
    return Said(kind, f"{e.get('actor', '?')} {kind}")


class Row(Protocol):
    """How one kind is said."""

    def say(self, memory: Memory, event: BaseEvent) -> Said | None:
        """``event`` in words; None if it is not of this row's kind."""

    def __call__(self, memory: Memory, e: EventJson) -> Said:
        """``e`` in words, parsed here."""


@dataclass(frozen=True)
class Typed(Generic[M]):
    """A kind's sayer, ``(memory, model) -> Said``, with the model it reads."""

    model: type[M]
    sayer: Callable[[Memory, M], Said]

    def say(self, memory: Memory, event: BaseEvent) -> Said | None:
        return self.sayer(memory, event) if isinstance(event, self.model) else None

    def __call__(self, memory: Memory, e: EventJson) -> Said:
        event = lenient(e)
        said = self.say(memory, event) if event is not None else None
        return said if said is not None else plainly(e)
