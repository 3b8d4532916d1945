"""Replays, exports and imports in a browser: a live run travelled back and forth in time,
exported (JSON, Mermaid checked by Mermaid's own parser, SVG, PNG), imported again, and bad
imports named inline with the pasted text kept."""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import entry, told
from tests.conftest import ROOT, AppServer, builtin_json

pytestmark = [pytest.mark.live, pytest.mark.browser]
SHOTS = ROOT / "screenshots"
MERMAID = ROOT / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
HOSTILE_TITLE = '<script>alert(1)</script>; # %%{init: {"theme": "dark"}}%% end'


def run_live(server: AppServer, page: Any, headline: str = "fencing saved the data") -> str:
    """Run the fenced GC-pause scenario from the index page; its run id once it has finished
    and told its story (pressed again if the machine fell behind: :func:`told`)."""

    def press() -> None:
        page.goto(server.url + "/")
        page.locator("#scenario-gc-pause-fenced").get_by_role(
            "button", name="Run on live servers"
        ).click()

    return told(page, press, headline)


def current(page: Any) -> int:
    return int(page.locator("#rp-seq").text_content().lstrip("#"))


def parse_mermaid(page: Any, text: str) -> str:
    """'' if Mermaid's parser accepts the text, else its complaint."""
    assert MERMAID.exists(), "npm install in the repository root puts mermaid in node_modules/"
    if not page.evaluate("typeof window.mermaid !== 'undefined'"):
        page.add_script_tag(path=str(MERMAID))
    return page.evaluate(
        """async (t) => {
            try { await mermaid.parse(t); return ""; } catch (e) { return String(e.message || e); }
        }""",
        text,
    )


def download(page: Any, locator: Any) -> Path:
    with page.expect_download() as info:
        locator.click()
    return Path(info.value.path())


def import_replay(page: Any, server: AppServer, path: Path, run: object) -> None:
    """Write ``run`` as JSON to ``path``, import that file, and wait for its replay page."""
    path.write_text(json.dumps(run))
    page.goto(server.url + "/import/")
    page.set_input_files("#import-file", str(path))
    page.get_by_role("button", name="Check and import").click()
    page.wait_for_url("**/replay/")


def test_a_live_run_replays_back_and_forth_in_time(app_server: AppServer, page: Any) -> None:
    run_id = run_live(app_server, page)
    page.get_by_role("link", name="▶ replay").click()
    page.wait_for_url(f"**/runs/{run_id}/replay/")
    url = page.url.split("#")[0]
    rejected = page.locator("svg#diagram .rejected-write:visible")  # drawn at the moment shown
    verdict = page.locator("#rp-verdict")
    assert current(page) == 1 and rejected.count() == 0
    assert verdict.get_attribute("aria-hidden") == "true"

    page.keyboard.press("End")  # the whole run: the rejected write and the verdict
    assert rejected.count() == 1
    assert verdict.get_attribute("aria-hidden") == "false"
    assert "fencing saved the data" in verdict.locator(".headline").text_content()
    last = current(page)
    page.wait_for_url(f"**#seq={last}")  # the address follows the cursor once it stops

    write_seq = int(rejected.first.get_attribute("data-seq"))
    for _ in range(last - write_seq):
        page.keyboard.press("ArrowLeft")
    assert current(page) == write_seq and rejected.count() == 1
    assert "REJECTED" in page.locator("#rp-desc").text_content()
    page.get_by_role("button", name="Step back").click()  # before the write was rejected
    assert current(page) == write_seq - 1 and rejected.count() == 0
    assert verdict.get_attribute("aria-hidden") == "true"
    page.wait_for_url(f"**#seq={write_seq - 1}")

    page.keyboard.press("Shift+ArrowLeft")  # back to the step before it (every step is one)
    assert page.locator("#rp-kind").text_content() == "step"
    assert page.locator("#story li.current").count() == 1
    assert page.locator("#rp-story").text_content().startswith("step 6: alice writes 'A'")

    page.locator("#rp-time").fill("3000")  # scrub to 3 s into the run
    assert page.locator("#rp-clock").text_content().startswith("3.00 s")
    entry(page)
    at, after = page.evaluate(
        """() => { const r = window.entry.replay;
                   const ev = JSON.parse(document.getElementById('page-data').textContent).events;
                   return [ev[r.index].t_ms, (ev[r.index + 1] || {t_ms: Infinity}).t_ms]; }"""
    )
    assert at <= 3000 < after and rejected.count() == 0

    page.goto("about:blank")
    page.goto(f"{url}#seq={write_seq}")  # a link to the moment of the rejected write
    assert current(page) == write_seq
    assert page.locator(f'svg#diagram .rejected-write.current[data-seq="{write_seq}"]').count() == 1
    assert page.locator("#rp-message").is_hidden()
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=str(SHOTS / "replay-mid.png"))

    for fragment, says in [("banana", "#seq=banana"), ("99999", "no event #99999")]:
        page.goto("about:blank")
        page.goto(f"{url}#seq={fragment}")
        message = page.locator("#rp-message")
        message.wait_for()
        assert says in message.text_content() and "Showing the start" in message.text_content()
        assert current(page) == 1

    for _ in range(3):
        page.keyboard.press("]")
    assert page.locator("#rp-speed").input_value() == "8"
    page.keyboard.press("Space")  # play the whole run at 8x speed, to the verdict
    page.locator("#rp-verdict[aria-hidden=false] .headline").wait_for(
        state="visible", timeout=20_000
    )
    entry(page)
    page.wait_for_function("() => !window.entry.replay.playing", timeout=10_000)
    assert current(page) == last and rejected.count() == 1
    assert page.errors == []


def test_exports_parse_and_a_reimported_run_replays_the_same(
    app_server: AppServer, page: Any, tmp_path: Path
) -> None:
    run_live(app_server, page)
    exported = json.loads(
        download(page, page.get_by_role("link", name="JSON", exact=True)).read_text()
    )
    assert exported["events"][-1]["kind"] == "run_finished"

    mmd = download(page, page.get_by_role("link", name="Mermaid", exact=True)).read_text()
    assert mmd.startswith("sequenceDiagram") and "break " in mmd
    assert parse_mermaid(page, mmd) == ""

    svg = download(page, page.get_by_role("link", name="SVG", exact=True)).read_text()
    assert 'width="1920"' in svg and 'height="1080"' in svg and "<foreignObject" not in svg
    assert "rejected-write" in svg and "GC pause outlives the lease" in svg
    # The diagram fills the slide's box (drawn again for its shape), not a third of it.
    box = re.search(
        r'<svg x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="([\d.]+)" '
        r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"',
        svg,
    )
    assert box
    width, height, view_w, view_h = (float(v) for v in box.groups())
    scale = min(width / view_w, height / view_h)
    assert view_w * scale / width > 0.8 and view_h * scale / height > 0.8
    png = download(page, page.get_by_role("link", name="PNG", exact=True)).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1920, 1080)

    import_replay(page, app_server, tmp_path / "exported-run.json", exported)
    assert exported["run_id"] not in page.url  # a new run
    replayed = page.evaluate("JSON.parse(document.getElementById('page-data').textContent)")
    unsaid = [{k: v for k, v in e.items() if k != "said"} for e in replayed["events"]]
    assert unsaid == exported["events"] and all("said" in e for e in replayed["events"])
    page.keyboard.press("End")
    assert page.locator("svg#diagram .rejected-write").count() == 1
    assert "fencing saved the data" in page.locator("#rp-verdict .headline").text_content()
    assert page.errors == []


def test_import_names_bad_fields_inline_and_runs_a_hostile_scenario(
    app_server: AppServer, page: Any
) -> None:
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    scenario = builtin_json("gc-pause-fenced")
    scenario["steps"][1]["ms"] = 0
    pasted = json.dumps(scenario, indent=1)
    page.goto(app_server.url + "/import/")
    page.locator("#import-text").fill(pasted)
    page.get_by_role("button", name="Check and import").click()
    errors = page.locator(".import-errors")
    errors.wait_for()
    assert "steps[1].ms: a pause must last more than 0 ms" in errors.text_content()
    assert page.locator("#import-text").input_value() == pasted  # nothing lost
    assert page.url == app_server.url + "/import/"
    page.screenshot(path=str(SHOTS / "import-error.png"))

    page.locator("#import-text").fill("[1, 2]")
    page.get_by_role("button", name="Check and import").click()
    page.locator(".import-errors").filter(has_text="holds a JSON array").wait_for()
    for size, says in [
        (3, "text: nested 3,145,728 deep; the most is 32"),
        (6, "text: more than 5 MB of text; the most an import may be is 5 MB"),
    ]:
        # beyond Django's 2.5 MB for a form field: sent as a file part (import.js)
        page.locator("#import-text").evaluate(f"el => el.value = '['.repeat({size} * 1048576)")
        page.get_by_role("button", name="Check and import").click()
        page.locator(".import-errors").filter(has_text=says).wait_for()

    scenario["steps"][1]["ms"] = 3500
    scenario["title"] = HOSTILE_TITLE
    scenario["steps"][0]["say"] = "one;\nend\n<b>two</b> #lt; %%{init}%%"
    summary = page.locator(".import-scenario")

    def import_and_run() -> None:
        if not page.url.endswith("/import/"):  # a run that could not keep its story: again
            page.goto(app_server.url + "/import/")
        page.locator("#import-text").fill(json.dumps(scenario))
        page.get_by_role("button", name="Check and import").click()
        summary.wait_for()
        assert HOSTILE_TITLE in summary.locator("h2").text_content()
        page.get_by_role("button", name="Run it live").click()

    run_id = told(page, import_and_run, "fencing saved the data")
    assert page.locator("h1").text_content() == HOSTILE_TITLE
    mmd = page.evaluate(f"fetch('/runs/{run_id}/export.mmd').then((r) => r.text())")
    assert "<script" not in mmd and "%%{" not in mmd
    assert parse_mermaid(page, mmd) == ""

    page.goto(f"{app_server.url}/runs/{run_id}/replay/")
    page.keyboard.press("End")
    assert page.locator("h1").text_content() == HOSTILE_TITLE
    assert alerts == [] and page.errors == []


def test_an_import_with_three_problems_names_all_three(app_server: AppServer, page: Any) -> None:
    scenario = builtin_json("contention")
    scenario["steps"][0]["at_ms"] = "soon"  # a value of the wrong type...
    scenario["steps"][1]["client"] = "carol"  # ...hid these two, which need the whole scenario
    scenario["steps"][2]["do"] = "fly"
    page.goto(app_server.url + "/import/")
    page.locator("#import-text").fill(json.dumps(scenario, indent=1))
    page.get_by_role("button", name="Check and import").click()
    problems = page.locator(".import-errors .problems li")
    problems.first.wait_for()
    assert problems.count() == 3
    assert "3 problems" in page.locator(".import-errors h2").text_content()
    assert '(got "soon")' in problems.nth(0).text_content()  # the bad value, quoted
    assert "'carol'" in problems.nth(1).text_content() and "'fly'" in problems.nth(2).text_content()
    page.locator(".import-errors").get_by_role("link", name="the scenario format").click()
    page.wait_for_url("**/import/format/")
    assert '"format": 1' in page.locator("#scenario-format").text_content()
    assert page.errors == []


def test_a_long_run_replays_whole_from_its_chunks(
    app_server: AppServer, page: Any, tmp_path: Path
) -> None:
    from bench.diagram import long_run

    run = long_run("redlock-contention", 1_234)  # the page's 500 events, then 500 and 234
    run["scenario"]["steps"] = [s for s in run["scenario"]["steps"] if s["at_ms"] <= 120_000]
    run["status"] = "finished"
    import_replay(page, app_server, tmp_path / "long.json", run)
    page.wait_for_function("document.getElementById('rp-seq').textContent !== ''")
    page.locator("#rp-end").click()
    assert current(page) == 1_234
    assert "(event 1234 of 1234)" in page.locator("#rp-when").text_content()
    page.locator("#rp-start").click()
    assert current(page) == 1
