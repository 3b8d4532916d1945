"""A teacher's library in a browser: log in on one context, save a run, see it in the library;
the same account on a second context sees it too; who may open a saved run is its visibility
(private: nobody else, 404; unlisted: anyone with the link, not in the gallery; public: in the
gallery)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
RECORDED = ROOT / "tests" / "browser" / "data" / "runs"
PASSWORD = "pauses-outlive-leases"


def make_teacher(app: AppServer, prefix: str = "teacher") -> str:
    """A teacher account on ``app``, made as an admin makes one (``manage.py createteacher``,
    the password on stdin); its name."""
    name = f"{prefix}-{secrets.token_hex(3)}"
    env = {**os.environ, "LOCKVIZ_DB": app.db}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "createteacher", name, "--password-stdin"],
        cwd=ROOT, env=env, input=PASSWORD + "\n", text=True, capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return name


def log_in(page: Any, app: AppServer, name: str) -> None:
    """Log in from the site's own link, with the keyboard."""
    page.goto(app.url + "/")
    page.get_by_role("link", name="Teacher log in").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Password").press("Enter")
    page.wait_for_url("**/library/")


def import_run(page: Any, app: AppServer, slug: str) -> str:
    """Import the lab's recorded run of ``slug``; its id, on its replay."""
    page.goto(app.url + "/import/")
    page.set_input_files("#import-file", str(RECORDED / f"{slug}.json"))
    page.get_by_role("button", name="Check and import").click()
    page.wait_for_url("**/runs/*/replay/")
    return str(page.url.rstrip("/").split("/")[-2])


def save(page: Any, visibility: str) -> None:
    page.get_by_label("Who may open it").select_option(visibility)
    page.get_by_role("button", name="Save to my library").click()
    page.locator("#save-box", has_text="Saved in").wait_for()


def test_a_teacher_saves_a_run_and_sees_it_on_a_second_context(
    app_server: AppServer, browser: Any
) -> None:
    name = make_teacher(app_server)
    first, second, other = (browser.new_context() for _ in range(3))
    try:
        page = first.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        log_in(page, app_server, name)
        ids = {}
        for slug, shown in (("gc-pause-fenced", "private"), ("gc-pause-unfenced", "unlisted"),
                            ("etcd-happy", "public")):  # fmt: skip
            ids[shown] = import_run(page, app_server, slug)
            save(page, shown)
        page.get_by_role("link", name="your library").click()
        rows = page.locator("table.library-table tbody tr")
        assert rows.count() == 3
        assert page.locator(f"#run-{ids['private']}").get_by_role("combobox").input_value() == (
            "private"
        )

        again = second.new_page()  # the same account, another browser
        log_in(again, app_server, name)
        for shown, run_id in ids.items():
            row = again.locator(f"#run-{run_id}")
            assert row.get_by_role("combobox").input_value() == shown
        again.locator(f"#run-{ids['private']} a").first.click()
        again.wait_for_url(f"**/runs/{ids['private']}/replay/")
        assert again.locator("#save-box", has_text="Saved in").is_visible()

        stranger = other.new_page()  # anonymous, then another teacher: the same answers
        for who in ("anyone", make_teacher(app_server, "other")):
            if who != "anyone":
                log_in(stranger, app_server, who)
            private = stranger.goto(f"{app_server.url}/runs/{ids['private']}/replay/")
            assert private is not None and private.status == 404, who
            unlisted = stranger.goto(f"{app_server.url}/runs/{ids['unlisted']}/replay/")
            assert unlisted is not None and unlisted.status == 200, who
            stranger.goto(app_server.url + "/")
            gallery = stranger.locator("#gallery")
            assert gallery.locator(f"#gallery-run-{ids['public']}").is_visible(), who
            assert gallery.locator(f"#gallery-run-{ids['unlisted']}").count() == 0, who
            assert gallery.locator(f"#gallery-run-{ids['private']}").count() == 0, who
        assert errors == []
    finally:
        for context in (first, second, other):
            context.close()
