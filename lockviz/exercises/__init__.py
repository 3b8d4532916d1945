"""Exercises that grade themselves on live servers, and the progress a learner makes.

    definition.py   exercise format 1: a scenario, a goal, what may change; parse()
    goals.py        what a goal asks of a run's verdict (pure: the verdict, never the client)
    builtin.py      the built-in exercises (builtin/<slug>.json), and finding one by reference
    answers.py      a learner's answer (faults, changes, a prediction) as the scenario to run,
                    or the refusal that names what the exercise does not allow
    attempts.py     an attempt: its run started, judged from the stored run's verdict once it
                    ends (on the run's own save, and again on reading), never from the client
    progress.py     a learner's progress kept on the server: lessons, checkpoints, exercises;
                    told live to the presenters of the rooms the learner follows
    classview.py    a room's class table (each member by the plan's items) and its CSV
    forms.py        the exercise editor: a teacher's exercise from a form

Who a learner is: the owner name (lockviz.accounts) of the browser, the teacher's account, or
the LMS user an LTI launch vouched for (lockviz.lms gives that browser the LMS user's own
stable name), so a learner's progress follows them where the app can tell it is them.
"""
