"""Exercises that grade themselves on live servers, and the progress a learner makes.

    definition.py   exercise format 1: a scenario, a goal, what may change; parse()
    goals.py        what a goal asks of a run's verdict (pure: the verdict, never the client)
    builtin.py      the built-in exercises (builtin/<slug>.json), by kind
    library.py      finding an exercise by reference: a built-in's slug, or a teacher's saved one
    answers.py      a learner's answer (faults, changes, a prediction) as the scenario to run,
                    or the refusal that names what the exercise does not allow
    attempts.py     an attempt: its run started, judged from the stored run's verdict once it
                    ends (on the run's own save, and again on reading), never from the client
    progress.py     a learner's progress kept on the server: lessons, checkpoints, exercises;
                    told live to the presenters of the rooms the learner follows
    classview.py    a room's class table (each member by the plan's items) and its CSV
    forms.py        an answer as a form: a break's step rows, a fix's knobs, a prediction

A teacher's own exercise is written in lockviz/views/exercise_editor.py and kept as a
lockviz.models.SavedExercise (docs/exercises.md).

Who a learner is: the owner name (lockviz.accounts) of the browser, the teacher's account, or
the LMS user an LTI launch vouched for (lockviz.lms gives that browser the LMS user's own
stable name), so a learner's progress follows them where the app can tell it is them.
"""
