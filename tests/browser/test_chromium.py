"""The tests' chromium runs with what Playwright turns off still off, and without the omnibox
popup each new window would otherwise draw in a renderer of its own (tests/conftest.py:FLAGS)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import FEATURES_OFF

pytestmark = pytest.mark.browser
OMNIBOX = {"WebUIOmniboxPopup", "WebUIOmniboxAimPopup"}


def switch(line: str, name: str) -> list[set[str]]:
    """Each ``name`` switch's features on a command line of chrome://version, in order."""
    return [set(v.split(",")) for v in re.findall(rf'{name}="?([^" ]+)"?', line)]


def test_playwrights_features_stay_off_and_no_window_draws_an_omnibox_popup(browser: Any) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto("chrome://version/?show-variations-cmd")
        rows = dict(
            row.split("\t", 1) for row in page.inner_text("body").splitlines() if "\t" in row
        )
        given = switch(rows["Command Line"], "--disable-features")
        playwrights, ours = given[0], given[-1]  # Playwright's list comes before the caller's
        (off,) = switch(rows["Command-line Variations"], "--disable-features")
        assert playwrights <= off, playwrights - off  # a Playwright upgrade added one: FLAGS
        assert off >= OMNIBOX and ours == set(FEATURES_OFF)
        targets = browser.new_browser_cdp_session().send("Target.getTargets")["targetInfos"]
        assert not [t["url"] for t in targets if t["type"] == "browser_ui"]
    finally:
        context.close()
