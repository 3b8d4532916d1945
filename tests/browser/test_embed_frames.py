"""An embed that cannot play in its frame says so inside it, with a way out: a lesson's run a
student is asked about first (before the class's reveal), framed by a course page on the same
site, is a notice that opens the question in a new tab; the question itself is never framed
(its link shows the outcome). A private run's refused embed opens in a new tab too.
lockviz/views/embeds.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import separate
from tests.browser.test_accessibility import violations
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
RECORDED = ROOT / "tests" / "browser" / "data" / "runs" / "gc-pause-fenced.json"

# The presenter's run of the lesson, as if they had played it: the lab's recorded run, stored
# in the app's own database for the room's presenter.
PRESENTED = """
import json, sys
from lockviz.models import Room, Run, RunEvent
room = Room.objects.get(pk=sys.argv[-2])
rec = json.loads(open(sys.argv[-1]).read())
run = Run.objects.create(title="GC pause", slug="gc-pause-fenced", scenario=rec["scenario"],
    status=Run.Status.FINISHED, verdict=rec["verdict"], owner=room.presenter)
RunEvent.objects.bulk_create(RunEvent(run=run, seq=e["seq"], t_ms=e["t_ms"], actor=e["actor"],
    kind=e["kind"], data=e) for e in rec["events"])
print(run.pk)
"""


def presented(app: AppServer, code: str) -> str:
    env = {**os.environ, "LOCKVIZ_DB": app.db}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", "import django, os, sys; os.environ.setdefault("
         "'DJANGO_SETTINGS_MODULE', 'lockviz.settings'); django.setup(); exec(sys.argv[1])",
         PRESENTED, code, str(RECORDED)],
        cwd=ROOT, env=env, text=True, capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def course_page(page: Any, course: tuple[Path, str], name: str, title: str, embed: str) -> Any:
    """A course page ``name`` on the course's origin that frames ``embed``, opened in ``page``:
    the frame's locator."""
    folder, origin = course
    (folder / name).write_text(
        f"<!doctype html><html lang='en'><title>{title}</title><h1>{title}</h1>"
        f"<iframe id='embed' title='replay' src='{embed}' width='900' height='500'></iframe>"
    )
    page.goto(f"{origin}/{name}")
    return page.frame_locator("#embed")


def test_a_framed_lesson_run_asks_first_in_a_tab_of_its_own(
    app_server: AppServer, browser: Any, course: tuple[Path, str]
) -> None:
    """It was a blank frame: the question was refused framing (DENY) with nothing said."""
    # The course is on http://localhost:<another port>: another origin, the same site.
    site = app_server.url.replace("127.0.0.1", "localhost")
    with separate(browser, {"teacher": (1280, 720), "ada": (1100, 800)}) as people:
        teacher, ada = people["teacher"], people["ada"]
        teacher.goto(site + "/")
        teacher.get_by_role("button", name="Teach a class").click()
        teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
        code = teacher.url.rstrip("/").rsplit("/", 1)[1]
        ada.goto(f"{site}/r/{code}")
        ada.get_by_label("Your name").fill("Ada")
        ada.get_by_role("button", name="Join and follow").click()
        ada.wait_for_url(f"**/rooms/{code}/follow/")
        run_id = presented(app_server, code)
        embed = f"{site}/embed/runs/{run_id}/"

        # A course page on the same site frames the embed: Ada's browser says who she is.
        framed = course_page(ada, course, "course.html", "Week 3", embed)
        framed.get_by_role("heading", name="This replay shows how the run ends").wait_for()
        link = framed.get_by_role("link", name="Open the replay in a new tab")
        assert link.get_attribute("target") == "_blank"
        assert framed.locator("#show-outcome").count() == 0  # no outcome clicked in a frame

        with ada.context.expect_page() as opened:
            link.click()
        tab = opened.value
        tab.get_by_role("heading", name="This shows how the run ends").wait_for()
        asked = tab.request.get(tab.url)
        assert asked.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in asked.headers["content-security-policy"]
        assert violations(tab) == []
        tab.get_by_role("link", name="Show me the outcome").click()
        tab.locator("#rp-seq").wait_for()  # she chose: the replay plays, in its own tab

        notice = ada.request.get(embed, headers={"Sec-Fetch-Dest": "iframe"})
        assert "x-frame-options" not in notice.headers
        assert "frame-ancestors *" in notice.headers["content-security-policy"]
        # the notice on its own, at an address of the site (its styles load): axe-clean
        ada.route(
            f"{site}/notice/", lambda r: r.fulfill(body=notice.text(), content_type="text/html")
        )
        ada.goto(f"{site}/notice/")
        ada.get_by_role("heading", name="This replay shows how the run ends").wait_for()
        assert violations(ada) == [] and ada.errors == [] and tab.url.startswith(embed)

        # A run this reader may not see (here: none): said in the frame, with the same way out.
        gone = f"{site}/embed/runs/nosuchrun/"
        refused = course_page(ada, course, "gone.html", "Week 4", gone)
        refused.get_by_role("heading", name="This replay is not shown here").wait_for()
        out = refused.get_by_role("link", name="open it in a new tab")
        assert out.get_attribute("target") == "_blank"
        with ada.context.expect_page() as again:
            out.click()
        again.value.get_by_role("heading", name="This replay is not shown here").wait_for()
        assert again.value.url == gone  # the embed itself, in a tab: the reader's own cookies
