"""A teacher's library: the runs and scenarios they keep, who may open them, and their archive.

    access.py   who may open a run or a saved scenario (``may_see``, ``run_or_404``): one check
                for every page, export and stream that shows one
    saving.py   Save, change the visibility, delete: ``save_run``, ``save_scenario``, ``forget``
    listing.py  what a page lists: a teacher's library (searched), the public gallery, the
                index's own runs
    archive.py  a whole library as one zip, and back on another installation

A saved item (``lockviz.models.SavedRun``, ``SavedScenario``) belongs to a teacher account and
is never pruned (lockviz.runs.recovery.prune leaves saved runs); its visibility says who may
open its permalink (private: its teacher, and the class they present it to; unlisted: anyone
with the link; public: anyone, and the index's gallery lists it). A run nobody saved is as it
always was: anyone with its link may open it, and it is pruned after the retention period.
"""
