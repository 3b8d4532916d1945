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

from lockviz.lab.events import EventJson
from lockviz.narrator.memory import Memory
from lockviz.narrator.phrases import unknown
from lockviz.narrator.sayers import SAYERS
from lockviz.narrator.words import Said, Told

# What an imported run's odd event may raise on its way into words: it is said plainly instead.
ODD = (KeyError, TypeError, ValueError, AttributeError, IndexError)


class Narrator:
    """Says one run's events, in order (see the module docstring)."""

    def __init__(self, backend: str | None = None) -> None:
        self.memory = Memory(backend)

    def said(self, e: EventJson) -> Said:
        """``e`` in words, from the run so far; the memory then takes ``e`` in."""
        try:
            said: Said | None = SAYERS.get(str(e["kind"]), unknown)(self.memory, e)
        except ODD:
            said = None
        try:
            self.memory.see(e)  # even when the words failed: the run did what it did
        except ODD:
            said = None
        if said is None:
            kind = str(e.get("kind"))
            return Said(kind, f"{e.get('actor', '?')} {kind}")
        return said

    def narrate(self, e: EventJson) -> Told:
        """The event as the browser gets it: its fields and, under ``said``, its words."""
        return {**e, "said": self.said(e).as_data()}


def narrate(events: Iterable[EventJson], backend: str | None = None) -> list[Told]:
    """Every event of a run with its words (``said``), in order."""
    narrator = Narrator(backend)
    return [narrator.narrate(e) for e in events if isinstance(e, Mapping)]
