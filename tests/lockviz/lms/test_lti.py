"""lockviz launched from an LMS, end to end: an LTI 1.3 platform this project did not write
(lti1p3platform, tests/lockviz/lms/platform.py) and the app as it serves, in a real browser.

The instructor deep-links an exercise into the course (the platform validates the tool's signed
answer against its JWKS and makes a line item); a learner launches it from the course, lands on
the exercise with no room code, solves it on the live lab; the tool posts the score (an access
token for its signed client assertion, then ``<lineitem>/scores``) and the platform's gradebook
holds it, read back through the platform's results service. The instructor's launch makes them
the presenter of the course's room, whose class view lists the course's learners from the
platform's class list (NRPS), the learner's exercise solved. A launch from a deployment the tool
does not know is refused."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.registration import Registration
from pylti1p3.service_connector import ServiceConnector

from tests.browser.conftest import separate
from tests.conftest import ROOT, AppServer
from tests.lockviz.lms.platform import Platform

pytestmark = [pytest.mark.live, pytest.mark.browser]
EXERCISE = "fix-redis-fencing"


def manage(app: AppServer, *args: str) -> str:
    env = {**os.environ, "LOCKVIZ_DB": app.db}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def lms(shared_app: AppServer) -> Iterator[Platform]:
    platform = Platform(shared_app.url)
    said = manage(
        shared_app, "lti", "register", "--name", "the test LMS", "--issuer", platform.url,
        "--client-id", platform.client_id, "--auth-url", platform.url + "/auth",
        "--token-url", platform.url + "/token", "--keyset-url", platform.url + "/jwks",
        "--deployment", platform.deployment,
    )  # fmt: skip
    assert "registered the test LMS" in said
    yield platform
    platform.close()


def solve(page: Any) -> None:
    """Fix the exercise as its worked solution does, until a run is not inconclusive."""
    for _ in range(3):
        page.get_by_label("The storage checks").select_option("fenced")
        page.get_by_role("button", name="Run it live").click()
        page.wait_for_url("**attempt=*")
        done = page.locator("#attempt-result:not([data-outcome=pending])")
        done.wait_for(timeout=90_000)
        if done.get_attribute("data-outcome") != "inconclusive":
            break
    assert page.locator("#attempt-result").get_attribute("data-outcome") == "solved"


def results(app: AppServer, platform: Platform, lineitem: str) -> list[dict[str, Any]]:
    """The line item's results, read from the platform's AGS results service as the tool
    reads them (an access token for a client assertion signed with the tool's key)."""
    with sqlite3.connect(app.db) as db:
        private, public = db.execute(
            "SELECT private_key, public_key FROM lti_tool_key WHERE is_active ORDER BY id DESC"
        ).fetchone()
    registration = (
        Registration()
        .set_issuer(platform.url)
        .set_client_id(platform.client_id)
        .set_auth_token_url(platform.url + "/token")
        .set_tool_private_key(private)
        .set_tool_public_key(public)
    )
    scopes = ["https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"]
    service = AssignmentsGradesService(
        ServiceConnector(registration), {"scope": scopes, "lineitem": lineitem}
    )
    return list(service.get_grades(None))  # type: ignore[arg-type]


def test_an_exercise_deep_linked_launched_solved_and_graded(
    browser: Any, shared_app: AppServer, lms: Platform
) -> None:
    sizes = {"prof": (1280, 900), "ann": (1280, 900)}
    with separate(browser, sizes) as pages:
        prof, ann = pages["prof"], pages["ann"]
        # The instructor places the exercise in the course, from inside the LMS.
        prof.goto(lms.start("prof", deep=True))
        prof.get_by_role("heading", name="Place lockviz in your course").wait_for()
        prof.get_by_label("Save the data from a paused client").check()
        prof.get_by_role("button", name="Place it in the course").click()
        prof.locator("#placed").wait_for()
        (link,) = lms.links
        placed = lms.links[link]
        assert placed["custom"] == {"item": f"exercise:{EXERCISE}"}
        lineitem = placed["lineitem"]
        assert lms.lineitems[lineitem]["scoreMaximum"] == 1
        # A learner opens it from the course: straight to the exercise, no room code.
        ann.goto(lms.start("ann", link=link))
        ann.wait_for_url(f"**/exercises/{EXERCISE}/")
        solve(ann)
        deadline = time.monotonic() + 30
        while "ann" not in lms.scores.get(lineitem, {}) and time.monotonic() < deadline:
            time.sleep(0.3)
        score = lms.scores[lineitem]["ann"]
        assert (score["scoreGiven"], score["scoreMaximum"]) == (1, 1)
        assert score["activityProgress"] == "Completed"
        assert score["gradingProgress"] == "FullyGraded"
        read = results(shared_app, lms, lineitem)
        assert [(r["userId"], r["resultScore"]) for r in read] == [("ann", 1)]
        # The instructor's launch of the link: the course room's presenter, the class listed
        # from the platform (Bob never came), Ann's exercise solved.
        prof.goto(lms.start("prof", link=link))
        prof.wait_for_url(f"**/exercises/{EXERCISE}/")
        code = prof.evaluate(
            "JSON.parse(document.getElementById('page-data').textContent).presenting.room"
        )
        prof.goto(f"{shared_app.url}/rooms/{code}/")
        table = prof.locator("#class-table")
        table.wait_for()
        ann_row = table.locator("tr", has_text="Ann Lee")
        assert "solved in 1 attempt" in ann_row.inner_text()
        assert "not started" in table.locator("tr", has_text="Bob Ray").inner_text()


def test_a_launch_from_an_unknown_deployment_is_refused(
    browser: Any, shared_app: AppServer, lms: Platform
) -> None:
    lms.deployment = "a-deployment-nobody-registered"
    lms.links["link-x"] = {"title": "x", "custom": {}, "url": "", "lineitem": None}
    with separate(browser, {"ann": (1024, 700)}) as pages:
        page = pages["ann"]
        response_codes: list[int] = []
        page.on(
            "response",
            lambda r: response_codes.append(r.status) if "/lti/launch/" in r.url else None,
        )
        page.goto(lms.start("ann", link="link-x"))
        page.wait_for_load_state()
        assert 403 in response_codes
        assert "not active" in page.content() or "cannot be trusted" in page.content()
    # A forged id token, with no state the tool gave: refused, never a traceback.
    forged = requests.post(
        f"{shared_app.url}/lti/launch/", data={"id_token": "a.b.c", "state": "s"}, timeout=10
    )
    assert forged.status_code == 403 and "cannot be trusted" in forged.text
