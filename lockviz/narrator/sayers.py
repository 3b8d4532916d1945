"""Which function says each kind of event: :data:`SAYERS`, the narrator's one table by kind.

Every kind that :data:`lockviz.lab.events.KINDS` declares has its row here (a test holds the two
together), so a new kind without words fails a test instead of being said by its bare name. A
row is a :class:`~lockviz.narrator.rows.Typed`: the kind's model and its sayer, ``(memory,
model) -> Said``, reading the run so far and never changing it; the
:class:`~lockviz.narrator.telling.Narrator` parses each event once
(:func:`lockviz.lab.events.lenient`), looks the row up and lets its memory follow. A kind
missing from the table (an imported run may carry any) is said by
:data:`~lockviz.narrator.phrases.unknown`, its name.
"""

from __future__ import annotations

import lockviz.lab.events as kinds
from lockviz.narrator import events, messages, phrases
from lockviz.narrator.rows import Row, Typed

SAYERS: dict[str, Row] = {
    # protocol messages, with what the storage did with a write
    "request": Typed(kinds.Request, messages.say_request),
    "reply": Typed(kinds.Reply, messages.say_reply),
    # a client's belief and what it learns
    "granted": Typed(kinds.Granted, events.say_granted),
    "acquire_failed": Typed(kinds.AcquireFailed, phrases.acquire_failed),
    "releasing": Typed(kinds.Releasing, phrases.releasing),
    "released": Typed(kinds.Released, phrases.released),
    "extended": Typed(kinds.Extended, phrases.extended),
    "renewal_started": Typed(kinds.RenewalStarted, phrases.renewal_started),
    "lost": Typed(kinds.Lost, events.say_lost),
    "woken": Typed(kinds.Woken, events.say_woken),
    "session": Typed(kinds.Session, events.say_session),
    "note": Typed(kinds.Note, events.say_note),
    # what a server did to a key
    "expired": Typed(kinds.Expired, events.say_server_end),
    "deleted": Typed(kinds.Deleted, events.say_server_end),
    # faults and the steps that make them
    "step": Typed(kinds.Step, events.say_step),
    "step_refused": Typed(kinds.StepRefused, phrases.step_refused),
    "link": Typed(kinds.Link, events.say_link),
    "paused": Typed(kinds.Paused, phrases.paused),
    "resumed": Typed(kinds.Resumed, phrases.resumed),
    "crashed": Typed(kinds.Crashed, phrases.crashed),
    "restarted": Typed(kinds.Restarted, phrases.restarted),
    # a group's servers: who leads, who suspects whom, who votes, what a replica received
    "role": Typed(kinds.Role, phrases.role),
    "voted": Typed(kinds.Voted, phrases.voted),
    "suspected": Typed(kinds.Suspected, phrases.suspected),
    "replicated": Typed(kinds.Replicated, phrases.replicated),
    "clock_jumped": Typed(kinds.ClockJumped, phrases.clock_jumped),
    "clock_rate": Typed(kinds.ClockRate, phrases.clock_rate),
    # the run itself
    "run_started": Typed(kinds.RunStarted, phrases.run_started),
    "schedule_shifted": Typed(kinds.ScheduleShifted, phrases.shifted),
    "ending": Typed(kinds.Ending, phrases.ending),
    "run_finished": Typed(kinds.RunFinished, events.say_finished),
    "run_failed": Typed(kinds.RunFailed, phrases.run_failed),
    "run_interrupted": Typed(kinds.RunInterrupted, phrases.run_interrupted),
    "run_cancelled": Typed(kinds.RunCancelled, phrases.run_cancelled),
}
