"""Every table of the app, one module per concern; each is a short declaration, and the rules
about them live in the features (lockviz.runs, lockviz.teaching, lockviz.library,
lockviz.exercises, lockviz.lms).

- :mod:`~lockviz.models.runs` — runs with all their events and verdicts (so they can be
  replayed later).
- :mod:`~lockviz.models.rooms` — rooms with their members, open pages, polls, votes and shares.
- :mod:`~lockviz.models.library` — lecture plans and teachers' libraries.
- :mod:`~lockviz.models.progress` — attempts at exercises, checkpoint answers, lesson marks.
- :mod:`~lockviz.models.lms` — LTI learners, course rooms and grade links.

Everything is named here too: ``from lockviz.models import Run`` is how the app reads them
(and how the migrations name the defaults: ``lockviz.models.new_run_id``).
"""

from __future__ import annotations

from lockviz.models.library import (
    Plan,
    Saved,
    SavedExercise,
    SavedRun,
    SavedScenario,
    Visibility,
    new_plan_id,
    new_saved_id,
)
from lockviz.models.lms import CourseRoom, GradeLink, LmsLearner
from lockviz.models.progress import Attempt, CheckpointAnswer, LessonMark
from lockviz.models.rooms import (
    ROOM_ALPHABET,
    ROOM_CODE_LENGTH,
    Member,
    Poll,
    Presence,
    Room,
    Share,
    Vote,
    default_runs_in_all,
    new_presence_id,
    new_room_code,
    rooms_idle_before,
)
from lockviz.models.runs import Run, RunEvent, new_run_id

__all__ = [
    "ROOM_ALPHABET",
    "ROOM_CODE_LENGTH",
    "Attempt",
    "CheckpointAnswer",
    "CourseRoom",
    "GradeLink",
    "LessonMark",
    "LmsLearner",
    "Member",
    "Plan",
    "Poll",
    "Presence",
    "Room",
    "Run",
    "RunEvent",
    "Saved",
    "SavedExercise",
    "SavedRun",
    "SavedScenario",
    "Share",
    "Visibility",
    "Vote",
    "default_runs_in_all",
    "new_plan_id",
    "new_presence_id",
    "new_room_code",
    "new_run_id",
    "new_saved_id",
    "rooms_idle_before",
]
