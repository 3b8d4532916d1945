"""Runs in words: every event, click and verdict as lockviz says it, in one place.

The pages, the exports and the terminal all read their words here; the browser receives them
as data with each event (``said``), never makes its own. An event is said in a few ways:

* ``text``: a sentence with its subject, for the story panel, a replay's current event and
  the walkthrough ("alice ← storage: write REJECTED (1 < 2)");
* ``label``: the diagram's label, on the event's arrow or beside its mark ("SET NX PX 2000",
  "✖ redis-3 said no: key held by bob", "alice's lease expired"); a ``\\n`` starts a new line;
* ``short``: the same label cut to what matters ("✖ redis-3"), for where the label does not fit;
* ``mark``: the words of a second mark the event makes elsewhere: what the storage did with a
  write ("stored A (token 1)", "A (token 1) overwrote B (token 2)"), what a lease's end leaves
  beside a holder that still believes ("believes it holds\\n(lease gone)"), the verdict's
  overlaps at the end of a run (one line each);
* ``tone``: ``"damage"`` on an accepted stale write, which the diagram draws in red;
* ``round`` and ``fold``: an acquire that is refused and retried is a series of rounds;
  ``round`` numbers the round an event belongs to, and the event that settles a refused round
  from the second on says what the diagram folds away ("rounds 2–23 refused").

Some words need what came before (a write's reply names the value its request carried, a refusal
names who holds the key, a stale write names what it overwrote), so a :class:`Narrator` follows
one run's events in order. An event enters as JSON (an import may carry any) and is parsed once,
where it enters (:func:`lockviz.lab.events.lenient`), into its kind's model: a field it lacks
reads as ``None``; an event that does not fit its kind is said plainly ("alice granted"), never
raised. Behind that, every sayer and the memory read the model's attributes, never the JSON by
key. Steps are numbered once, 1 to n in script order,
narrated or not: the story, the diagram's badges, the replay and the exports all use
:func:`~lockviz.narrator.steps.step_number`.

The narrator sits below the app's features (``runs/``, ``teaching/``, the views) and beside
``models/runs.py``, which imports it: it reads only the catalogue, the events' declaration
(``lab/events.py``) and the checker, never a feature.

Every word about a run lives in this package and nowhere else, so a wording is changed once and
reaches every page, export and the terminal. Its parts, by what they say:

* :mod:`.words`: :class:`Said` (an event's words, as above) and how a value is read aloud: a
  lease, a clock jump, a time, a client library's error, a ZooKeeper queue node;
* :mod:`.steps`: a scenario before it runs: a click, a step's number, the story panels, the
  setting, a checkpoint's question;
* how a run is followed and said: :mod:`.memory` (:class:`~.memory.Memory`, all that the run
  has done so far, which changes in one place, ``Memory.see``), the sayers, plain functions
  ``(memory, model) -> Said`` that read it, each with its kind's model in a row of
  :mod:`.rows` (:mod:`.messages` for requests and replies,
  :mod:`.storage` for what the storage did with a write, :mod:`.events` for the other events whose
  words need the past, :mod:`.phrases` for those whose own fields decide), :mod:`.sayers` (the one
  table of sayers by kind) and :mod:`.telling` (the thin :class:`Narrator` that, for each event,
  asks its kind's sayer and lets its memory follow; and :func:`narrate`, a whole run at once);
* :mod:`.verdicts`: a run's outcome (its headline, the prediction met or missed, the findings,
  the damage) and the labels of a What if…? fork beside its original;
* :mod:`.terminal`: a run and its verdict as text, for ``manage.py run_scenario``.

The names below are the package's API: other modules import them from here.
"""

from __future__ import annotations

from lockviz.narrator.steps import checkpoint, click, electing, hold, setup, story
from lockviz.narrator.telling import Narrator, narrate
from lockviz.narrator.terminal import render, verdict_text
from lockviz.narrator.verdicts import (
    damage,
    divergence,
    expectation,
    facts,
    fork_label,
    headline,
)
from lockviz.narrator.words import Said, Told, plain_error

__all__ = [
    "Narrator",
    "Said",
    "Told",
    "checkpoint",
    "click",
    "damage",
    "divergence",
    "electing",
    "expectation",
    "facts",
    "fork_label",
    "headline",
    "hold",
    "narrate",
    "plain_error",
    "render",
    "setup",
    "story",
    "verdict_text",
]
