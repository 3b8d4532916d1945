"""Which function says each kind of event: :data:`SAYERS`, the narrator's one table by kind.

Every kind that :data:`lockviz.lab.events.KINDS` declares has its row here (a test holds the two
together), so a new kind without words fails a test instead of being said by its bare name. A
row is a :data:`~lockviz.narrator.memory.Sayer`: ``(memory, event) -> Said``, reading the run so
far and never changing it; the :class:`~lockviz.narrator.telling.Narrator` looks the row up and
lets its memory follow. A kind missing from the table (an imported run may carry any) is said
by :func:`~lockviz.narrator.phrases.unknown`, its name.
"""

from __future__ import annotations

from lockviz.narrator import events, messages, phrases
from lockviz.narrator.memory import Sayer

SAYERS: dict[str, Sayer] = {
    # protocol messages, with what the storage did with a write
    "request": messages.say_request,
    "reply": messages.say_reply,
    # a client's belief and what it learns
    "granted": events.say_granted,
    "acquire_failed": phrases.acquire_failed,
    "releasing": phrases.releasing,
    "released": phrases.released,
    "extended": phrases.extended,
    "renewal_started": phrases.renewal_started,
    "lost": events.say_lost,
    "woken": events.say_woken,
    "session": events.say_session,
    "note": events.say_note,
    # what a server did to a key
    "expired": events.say_server_end,
    "deleted": events.say_server_end,
    # faults and the steps that make them
    "step": events.say_step,
    "step_refused": phrases.step_refused,
    "link": events.say_link,
    "paused": phrases.paused,
    "resumed": phrases.resumed,
    "crashed": phrases.crashed,
    "restarted": phrases.restarted,
    # a group's servers: who leads, who suspects whom, who votes, what a replica received
    "role": phrases.role,
    "voted": phrases.voted,
    "suspected": phrases.suspected,
    "replicated": phrases.replicated,
    "clock_jumped": phrases.clock_jumped,
    "clock_rate": phrases.clock_rate,
    # the run itself
    "run_started": phrases.run_started,
    "schedule_shifted": phrases.shifted,
    "ending": phrases.ending,
    "run_finished": events.say_finished,
    "run_failed": phrases.run_failed,
    "run_interrupted": phrases.run_interrupted,
    "run_cancelled": phrases.run_cancelled,
}
