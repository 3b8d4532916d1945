"""What lockviz refuses to do, and why: one tree, each refusal with its HTTP status and words.

    Refusal                the app will not do this now; ``problems`` are its sentences
    ├── Invalid       400  input that cannot be used: each problem names its field
    │   ├── ScenarioError      a scenario, or a click's step, that cannot be run
    │   │                      (lockviz.scenarios.schema)
    │   ├── ImportRefused      a file that cannot be imported (lockviz.runs.imports)
    │   ├── JsonRefused        JSON text from outside that is too big, too deep or holds a
    │   │                      number that is not one (lockviz.jsontext)
    │   ├── RoomRefused        what a room will not take (lockviz.teaching.rooms)
    │   ├── PlanRefused        a lecture plan that cannot be kept: each problem names its
    │   │                      item (lockviz.teaching.plans)
    │   └── ExerciseRefused    an exercise that cannot be kept, or an answer it does not
    │                          allow (a change it fixes, a fault past its budget), each
    │                          problem naming its field (lockviz.exercises)
    ├── NotYours      403  only the browser that started a run (a room's presenter) may
    ├── LaunchRefused 403  an LTI launch that cannot be trusted, or that this tool has no
    │                      registration or deployment for (lockviz.lms)
    ├── NoRoom        404  no open room this browser may enter has this code: one answer
                           for "none" and "not allowed" (lockviz.teaching.codes)
    ├── NotLive       409  the run has ended, or no live process runs it any more
    ├── NotAdmitted        a run the lab will not take now (lockviz.runs.admission.admit)
    │   ├── TooMany   429  this client has taken its share (runs, imports, rooms, joins,
    │   │                  answers: lockviz.shares), with ``retry_after_s``
    │   ├── Busy      503  the lab is full: try again after ``retry_after_s``
    │   └── DatabaseBusy 503  the database would not take a connection: try again soon
    └── LabError      503  the lab cannot provide what a run needs (lockviz.lab.errors):
                           recorded as the run's ``run_failed``, said as it is

Code that finds a problem raises the refusal that says it; ``lockviz.views.refusals`` turns any
of them into the response (a partial for htmx, a page or plain text otherwise) in one place.
Nothing here imports Django: the lab raises ``LabError`` from processes that have none.
"""

from __future__ import annotations


class Refusal(Exception):
    """Something the app will not do; ``problems`` say why, ``status`` is its HTTP status."""

    status = 400

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))

    @property
    def message(self) -> str:
        return " ".join(self.problems)

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled with its sentences apart (and a subclass's fields, ``retry_after_s``): a
        refusal raised in a worker process (lockviz.edge.workers) is raised in the app as it was."""
        return (type(self), (self.problems,), dict(self.__dict__))


class Invalid(Refusal):
    """Input that cannot be used; each problem names its field (``steps[2].ms: ...``)."""

    status = 400


class ScenarioError(Invalid):
    """A scenario, or a click's step, that cannot be run; ``problems`` name each field."""


class ImportRefused(Invalid):
    """A file that cannot be imported; ``problems`` name each offending field."""


class JsonRefused(Invalid):
    """JSON text from outside the app that is not read: too big, nested too deep, not JSON, or
    holding a number that is not a finite one (lockviz.jsontext); the problem names where."""


class RoomRefused(Invalid):
    """What a room will not take, in a sentence naming the field (``choices: ...``)."""


class PlanRefused(Invalid):
    """A lecture plan (its form, or an imported file) that cannot be kept; each problem names
    its item (``item 2 (replay): ...``)."""


class ExerciseRefused(Invalid):
    """An exercise that cannot be kept, or an answer it does not allow; each problem names its
    field (``ttl_ms: this exercise fixes the lease ...``, ``steps: at most 2 faults ...``)."""


class NotYours(Refusal):
    """Only the browser that started the run (or the room's presenter) may do this."""

    status = 403


class LaunchRefused(Refusal):
    """An LTI launch (or deep link) that cannot be trusted: a state, nonce, issuer, audience,
    deployment or signature that does not check out, or a platform this tool does not know."""

    status = 403


class NoRoom(Refusal):
    """No open room this browser may enter has this code (whether none has, or it may not);
    ``code`` as it was given, for the form to try again."""

    status = 404

    def __init__(self, problems: list[str] | str, code: str = "") -> None:
        super().__init__(problems)
        self.code = code


class NotLive(Refusal):
    """The run has ended, or no app process runs it any more: a click cannot reach it."""

    status = 409


class NotAdmitted(Refusal):
    """A run the lab will not take now; ``retry_after_s`` when trying later will help (by
    default its kind's ``wait_s``)."""

    status = 503
    wait_s: int | None = None

    def __init__(self, problems: list[str] | str, retry_after_s: int | None = None) -> None:
        super().__init__(problems)
        self.retry_after_s = self.wait_s if retry_after_s is None else retry_after_s


class TooMany(NotAdmitted):
    """This client has taken its share (lockviz.shares): try again after ``retry_after_s``."""

    status = 429
    wait_s = 30


class Busy(NotAdmitted):
    """The lab is full; try again after ``retry_after_s``."""

    status = 503
    wait_s = 60


class DatabaseBusy(NotAdmitted):
    """The database would not take a connection (PostgreSQL's ``max_connections`` reached, the
    server restarting): try again after ``retry_after_s``. Counted apart from a full lab."""

    status = 503
    wait_s = 5


class LabError(Refusal):
    """The lab cannot provide what a run needs (a server is missing or would not start)."""

    status = 503
