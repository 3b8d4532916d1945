"""Scores back to the LMS (LTI Assignment and Grade Services).

:func:`on_scored` hears :data:`lockviz.exercises.progress.scored` (a solved exercise: 1; a
lesson whose checkpoints are all answered: the share answered right) and sends the score to
each line item a launch of that learner on that item named (lockviz.models.GradeLink), as a
``Score`` (``activityProgress: Completed``, ``gradingProgress: FullyGraded``) through pylti1p3's
service connector: it fetches an access token from the platform (a client assertion signed
with the tool's key) and posts ``<lineitem>/scores``. A score never goes down: a lesson answered
again worse keeps its best. Sending happens on a thread of its own, after the commit that
judged the attempt, so the lab and the page never wait for an LMS; a failure is kept on the
link (``problem``), shown in the admin, and the next score tries again.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from typing import Any

from django.db import close_old_connections, transaction
from django.utils import timezone
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException
from pylti1p3.grade import Grade
from pylti1p3.service_connector import ServiceConnector
from requests import RequestException

from lockviz.lms import bounded
from lockviz.models import GradeLink

log = logging.getLogger(__name__)
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


def on_scored(sender: object, learner: str, item: str, score: float, **_: Any) -> None:
    """The ``scored`` receiver: send ``score`` on every line item of ``learner``'s ``item``."""
    links = [link.pk for link in GradeLink.objects.filter(learner=learner, item=item)]
    if links:
        transaction.on_commit(
            lambda: threading.Thread(
                target=_send_all, args=(links, score), name="lms-grades", daemon=True
            ).start()
        )


def _send_all(links: list[int], score: float) -> None:
    try:
        for link in GradeLink.objects.filter(pk__in=links).select_related("registration"):
            send(link, score)
    finally:
        close_old_connections()


def send(link: GradeLink, score: float) -> bool:
    """Post ``score`` (0..1, never below what was sent before) to ``link``'s line item."""
    best = max(score, link.score or 0.0)
    if SCORE_SCOPE not in link.scopes:
        return _kept(link, link.score, "the launch did not grant posting scores")
    grade = (
        Grade()
        .set_score_given(round(best, 4))
        .set_score_maximum(1)
        .set_timestamp(datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"))
        .set_activity_progress("Completed")
        .set_grading_progress("FullyGraded")
        .set_user_id(link.sub)
    )
    service = AssignmentsGradesService(
        ServiceConnector(link.registration.to_registration(), bounded.session()),
        {"scope": list(link.scopes), "lineitem": link.lineitem},
    )
    try:
        service.put_grade(grade)
    except (LtiException, RequestException, ValueError) as exc:
        log.warning("score for %s on %s not sent: %s", link.learner, link.lineitem, exc)
        return _kept(link, link.score, str(exc))
    return _kept(link, best, "")


def _kept(link: GradeLink, score: float | None, problem: str) -> bool:
    sent = timezone.now() if not problem else link.sent
    GradeLink.objects.filter(pk=link.pk).update(score=score, sent=sent, problem=problem[:300])
    return not problem
