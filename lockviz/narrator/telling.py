"""The :class:`Narrator`: says one run's events in order, each as a
:class:`~lockviz.narrator.words.Said`; and :func:`narrate`, a whole run at once.

It is thin on purpose: a :class:`~lockviz.narrator.memory.Memory` holds everything the run has
done so far, :data:`~lockviz.narrator.sayers.SAYERS` holds how each kind is said, and for each
event the narrator asks the kind's sayer for its words, then lets the memory follow. Words never
change the memory and the memory changes in one place, so what a sayer reads is the run up to
the event it says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lockviz.lab.events import BaseEvent, EventJson, lenient
from lockviz.narrator.memory import Memory
from lockviz.narrator.phrases import unknown
from lockviz.narrator.rows import plainly
from lockviz.narrator.sayers import SAYERS
from lockviz.narrator.words import Said, Told

# What an imported run's odd event may raise on its way into words: it is said plainly instead.
ODD = (KeyError, TypeError, ValueError, AttributeError, IndexError)


class Narrator:
    """Says one run's events, in order (see the module docstring)."""

    def __init__(self, backend: str | None = None) -> None:
        self.memory = Memory(backend)

    def said(self, e: EventJson) -> Said:
        """``e`` in words, from the run so far; the memory then takes ``e`` in.

        ``e`` is parsed here, once, into its kind's model (:func:`lenient`), and its kind's
        sayer reads the model; an event that does not fit its kind is said plainly."""
        return self.words(lenient(e), e)

    def words(self, event: BaseEvent | None, e: EventJson) -> Said:
        """:meth:`said`, for ``e`` already parsed (``event``: None if it did not fit)."""
        said = None
        try:
            if event is not None:
                said = SAYERS.get(event.kind, unknown).say(self.memory, event)
        except ODD:
            said = None
        try:
            if event is not None:  # even when the words failed: the run did what it did
                self.memory.see(event)
        except ODD:
            said = None
        return said if said is not None else plainly(e)

    def narrate(self, e: EventJson, event: BaseEvent | None = None) -> Told:
        """The event as the browser gets it: its fields and, under ``said``, its words (from
        ``event``, its model, when the caller has it: the recorder's, validated by the engine)."""
        said = self.words(event, e) if event is not None else self.said(e)
        return {**e, "said": said.as_data()}


def narrate(events: Iterable[EventJson], backend: str | None = None) -> list[Told]:
    """Every event of a run with its words (``said``), in order."""
    narrator = Narrator(backend)
    return [narrator.narrate(e) for e in events if isinstance(e, Mapping)]
