"""Every recorded built-in run (tests/browser/data/runs, exported by ``manage.py run_scenario
<slug> --json``), imported once into an app of the test module's own, as a learner would import
it: the fixtures ``server`` and ``runs`` for the modules that read recorded runs."""

from __future__ import annotations

import http.cookiejar
import json
import re
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AppServer

DATA = Path(__file__).parent / "data"
RUNS = sorted(p.stem for p in (DATA / "runs").glob("*.json"))


def import_run(server: AppServer, data: dict[str, Any]) -> str:
    """Import an exported run through the import page; the new run's id."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(server.url + "/import/").read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), "text": json.dumps(data)})
    request = urllib.request.Request(
        server.url + "/import/", data=body.encode(), headers={"Referer": server.url + "/import/"}
    )
    with opener.open(request) as response:
        found = re.search(r"/runs/([^/]+)/replay/", response.geturl())
    assert found, "the import did not open a replay"
    return found.group(1)


@pytest.fixture(scope="module", name="server")
def recorded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    app = AppServer(tmp_path_factory.mktemp("recorded"))
    yield app
    app.stop()


@pytest.fixture(scope="module", name="runs")
def recorded_runs(server: AppServer) -> dict[str, str]:
    """Every recorded built-in, imported once: slug -> run id."""
    return {
        slug: import_run(server, json.loads((DATA / "runs" / f"{slug}.json").read_text()))
        for slug in RUNS
    }
