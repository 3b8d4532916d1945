"""An imported run (lockviz.runs.imports, which only reads) kept as a run, with its words.

The import page and a library's archive (lockviz.library.archive) store what they read here.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from lockviz import accounts
from lockviz.lab import events as event_models
from lockviz.models import Run, RunEvent
from lockviz.narrator import Narrator
from lockviz.runs.imports import ImportedRun


@transaction.atomic
def store(found: ImportedRun, owner: str = "") -> Run:
    """``found`` as a finished (or failed) run of ``owner`` (lockviz.accounts: a browser, or a
    teacher's account, who may then save it), each event with its words."""
    run = Run.objects.create(
        title=found.scenario.title,
        scenario=found.scenario.to_json(),
        status=Run.Status.FINISHED if found.finished else Run.Status.FAILED,
        verdict=found.verdict,
        expect_met=found.expect_met,
        mismatches=found.mismatches,
        error=found.error,
        finished=timezone.now(),
        owner=owner,
        user_id=accounts.account_id(owner),
    )
    told = Narrator(found.scenario.backend)  # said once, here: every reader reads the words
    RunEvent.objects.bulk_create(
        (
            RunEvent(
                run=run, seq=m.seq, t_ms=m.t_ms, actor=m.actor, kind=m.kind, data=e,
                said=told.said(e).as_data(),
            )
            for e in found.events
            if (m := event_models.parse(e))
        ),
        batch_size=500,
    )  # fmt: skip
    return run
