"""axe-core (node_modules/axe-core, an npm devDependency) with the WCAG 2.2 A and AA rules over
every kind of page a learner or a teacher opens: none may report a violation."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.conftest import settled
from tests.browser.test_library import import_run, log_in, make_teacher, save
from tests.browser.test_rooms import join
from tests.browser.test_walkthrough import jump_to_question
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WCAG_22_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]


def violations(page: Any) -> list[str]:
    """What axe finds on the page as it is now: each rule with the elements it names."""
    assert AXE.exists(), "npm install puts axe-core in node_modules/"
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async (tags) => {
            const result = await axe.run(document, { runOnly: { type: "tag", values: tags } });
            const where = (v) => v.nodes.slice(0, 4).map((n) => n.target.join(" ")).join(" | ");
            return result.violations.map((v) => `${v.id} (${v.nodes.length}): ${where(v)}`);
        }""",
        WCAG_22_A_AA,
    )
    return list(found)


def test_every_page_passes_axe_with_wcag_22_a_and_aa(app_server: AppServer, browser: Any) -> None:
    teacher_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    student_ctx = browser.new_context(viewport={"width": 390, "height": 844})
    page, student = teacher_ctx.new_page(), student_ctx.new_page()
    found: dict[str, list[str]] = {}

    def check(name: str, target: Any = page) -> None:
        problems = violations(target)
        if problems:
            found[name] = problems

    try:
        url = app_server.url
        for name, path in (("index", "/"), ("lessons", "/lessons/"),
                           ("a lesson", "/lessons/gc-pause-unfenced/"), ("free play", "/play/"),
                           ("import", "/import/"), ("compare form", "/compare/"),
                           ("new scenario", "/scenarios/new/")):  # fmt: skip
            page.goto(url + path)
            settled(page)
            check(name)

        # Lecture plans: my plans, the editor (and its refusal naming the item), a plan's page.
        page.goto(url + "/plans/")
        check("my plans")
        page.goto(url + "/plans/new/")
        check("plan editor")
        page.get_by_role("button", name="Add an item").click()
        page.locator(".plan-row").nth(1).get_by_label("What").select_option("poll")
        page.get_by_role("button", name="Save the plan").click()
        page.locator("#plan-problems").wait_for()
        check("plan editor, refused by item")
        page.get_by_label("Title").fill("A plan")
        page.get_by_role("button", name="Remove item 2").click()
        page.get_by_role("button", name="Save the plan").click()
        page.wait_for_url(re.compile(r".*/plans/\w+/$"))
        plan_url = page.url
        check("a plan")
        page.goto(plan_url.replace("/plans/", "/embed/plans/"))
        check("a plan's embed")

        # A lesson being told: its run ended, the telling at a checkpoint.
        page.goto(url + "/lessons/gc-pause-unfenced/")
        page.get_by_role("button", name="Start the lesson on live servers").click()
        page.wait_for_url("**/lessons/gc-pause-unfenced/?run=*")
        page.locator("#live[data-status=finished]").wait_for(timeout=40_000)
        jump_to_question(page, "Alice is frozen")
        check("a lesson, told")

        # A live run, while it plays; then the same run finished.
        page.goto(url + "/")
        page.locator("#scenario-gc-pause-fenced").get_by_role(
            "button", name="Run on live servers"
        ).click()
        page.wait_for_url("**/runs/*/")
        page.locator("svg#diagram .lifeline-header").first.wait_for()
        check("a live run")
        page.locator("#verdict .headline").wait_for(timeout=30_000)
        run_id = page.url.rstrip("/").split("/")[-1]
        check("a finished run")
        page.goto(f"{url}/runs/{run_id}/replay/")
        page.locator("#rp-seq").wait_for()
        check("replay")
        page.get_by_text("Embed", exact=True).click()  # the <iframe> snippet, open
        page.locator("#embed-code").wait_for()
        check("replay, its embed snippet shown")
        for theme in ("light", "dark"):  # the embed, as a course page frames it
            page.goto(f"{url}/embed/runs/{run_id}/?theme={theme}")
            page.locator("#rp-seq").wait_for()
            check(f"embed ({theme})")
        page.goto(f"{url}/runs/{run_id}/fork/?at=3")
        check("fork")
        page.goto(f"{url}/compare/?runs={run_id}")
        page.locator(".lane[data-done]").wait_for(timeout=30_000)
        check("compare")
        page.goto(f"{url}/runs/{run_id}/fork/?at=3")  # a fork, beside its original
        page.get_by_role("button", name="Run the fork live, beside the original").click()
        page.wait_for_url(re.compile(r".*/compare/\?runs=\w+,\w+$"))
        page.locator(".lane[data-done]").nth(1).wait_for(timeout=40_000)
        check("compare, a fork beside its original")

        # A room: its presenter's page and a student's, on a phone.
        page.goto(url + "/")
        page.get_by_role("button", name="Teach a class").click()
        page.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
        code = page.url.rstrip("/").rsplit("/", 1)[1]
        check("a room as presenter")
        join(student, app_server, code, "Ada")
        check("a room as student", student)
        page.goto(f"{url}/runs/{run_id}/replay/")  # the class follows the replay
        student.locator("svg#diagram .lifeline-header").first.wait_for(timeout=20_000)
        check("a room as student, following", student)
        page.goto(plan_url)  # a plan presented in the same room: the plan bar on each page
        page.get_by_role("button", name="Present this plan").click()
        page.wait_for_url(f"**/rooms/{code}/")
        check("a room presenting a plan")
        page.keyboard.press("PageDown")
        page.wait_for_url("**/lessons/*/")
        check("a lesson, presented from a plan")
    finally:
        teacher_ctx.close()
        student_ctx.close()
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())


def test_the_scenario_editor_passes_axe_blank_refusing_and_valid(
    app_server: AppServer, page: Any
) -> None:
    """New scenario in each of its states: blank, a row's problem named, valid with its Run,
    download and link, and filled in from a built-in (tests/browser/test_editor.py drives it)."""
    found: dict[str, list[str]] = {}
    page.goto(app_server.url + "/scenarios/new/")
    found["blank"] = violations(page)
    row = page.locator("#editor-row-0")
    row.locator("input[name=at_ms_0]").fill("0")
    row.locator("select[name=do_0]").select_option("pause")
    row.locator("input[name=who_0]").fill("alice")
    row.locator("input[name=ms_0]").fill("0")
    page.locator("#editor-said").get_by_text("step 1 (pause): ms:").wait_for(timeout=10_000)
    found["a row's problem"] = violations(page)
    row.locator("input[name=ms_0]").fill("300")
    page.locator("#editor-valid").wait_for(timeout=10_000)
    found["valid"] = violations(page)
    page.goto(app_server.url + "/scenarios/new/?from=gc-pause-fenced")
    page.locator("#editor-valid").wait_for()
    found["a built-in, filled in"] = violations(page)
    found = {k: v for k, v in found.items() if v}
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())


def test_a_teachers_pages_pass_axe_with_wcag_22_a_and_aa(
    app_server: AppServer, browser: Any
) -> None:
    """Log in, sign-up (off), the library with a saved run and scenario, a saved scenario's
    page, a delete's confirmation, and the Save box on a replay, before and after saving."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    found: dict[str, list[str]] = {}

    def check(name: str) -> None:
        settled(page)
        problems = violations(page)
        if problems:
            found[name] = problems

    try:
        url = app_server.url
        for name, path in (("log in", "/accounts/login/"), ("sign-up, off", "/accounts/signup/")):
            page.goto(url + path)
            check(name)
        run_id = import_run(page, app_server, "gc-pause-fenced")
        check("replay, the Save box asking to log in")
        log_in(page, app_server, make_teacher(app_server))
        check("a library, with the run imported before logging in (now the account's)")
        run_id = import_run(page, app_server, "gc-pause-fenced")
        check("replay, the Save box")
        save(page, "unlisted")
        check("replay, saved")
        page.goto(url + "/library/")
        page.get_by_text("Add a scenario (JSON)").click()
        page.get_by_label("The scenario, as JSON").fill(
            (ROOT / "lockviz" / "scenarios" / "builtin" / "contention.json").read_text()
        )
        page.get_by_role("button", name="Save to my library").click()
        page.wait_for_url("**/scenarios/saved/*/")
        check("a saved scenario")
        page.goto(url + "/library/")
        check("a library")
        page.goto(f"{url}/library/runs/{run_id}/delete")
        check("delete, asked first")
    finally:
        context.close()
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())
