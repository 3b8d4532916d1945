"""The page notices a lost message by its seq and gets it back, in a real browser.

A scripted server speaks the run stream's protocol (lockviz/consumers/runs.py) to the page's own
static/lockviz/run/runstream.js (served beside the page, as an ES module), but loses a message on
purpose: the page must not draw past the gap, must ask ``{"type": "resume", "after": <last seq
it has>}``, and must end up with every event once, in order. (The app's consumer also reads a
gap back itself; this is what the page does when a message is lost between the two.)
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from tests.conftest import ROOT

pytestmark = pytest.mark.browser
STATIC = ROOT / "static" / "lockviz"  # run/runstream.js and the modules it imports, beside the page
PAGE = """<!doctype html><meta charset="utf-8"><title>stream</title>
<script type="module">
  import { openStream } from "./run/runstream.js";
  window.got = []; window.done = null;
  const run = new URLSearchParams(location.search).get("run");
  openStream(`/ws/runs/${run}/`, 0, {
    onEvent(ev) { window.got.push(ev.seq); },
    onDone(status) { window.done = status; },
  });
</script>"""


def event(seq: int, kind: str = "note") -> str:
    body = {"seq": seq, "t_ms": seq, "actor": "lab", "kind": kind}
    return json.dumps({"type": "event", "event": body})


def events(*seqs: int) -> str:
    """Live events that arrived together, as the app sends them."""
    return '{"type": "events", "frames": [' + ", ".join(event(n) for n in seqs) + "]}"


def status(value: str) -> str:
    return json.dumps({"type": "status", "status": value, "position": None})


class ScriptedServer:
    """Plays one script per run id; records what the page sends."""

    def __init__(self) -> None:
        self.heard: dict[str, list[dict[str, Any]]] = {"gap": [], "tail": []}
        self.ready = threading.Event()
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self.serve(),))
        self.stop = asyncio.Event()

    async def serve(self) -> None:
        async with serve(self.play, "127.0.0.1", 0, process_request=self.page) as server:
            self.port = server.sockets[0].getsockname()[1]
            self.ready.set()
            await self.stop.wait()

    def page(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path.startswith("/ws/"):
            return None
        module = request.path.endswith(".js")
        text = (STATIC / request.path.lstrip("/")).read_text() if module else PAGE
        response = connection.respond(HTTPStatus.OK, text)
        del response.headers["Content-Type"]
        kind = "text/javascript" if module else "text/html"
        response.headers["Content-Type"] = f"{kind}; charset=utf-8"
        return response

    async def play(self, ws: ServerConnection) -> None:
        assert ws.request is not None
        run = ws.request.path.split("/")[3]
        heard = self.heard[run]
        await ws.send(status("running"))
        if run == "gap":  # seq 3 is lost on the way
            for frame in (event(1), events(2, 4)):
                await ws.send(frame)
        else:  # the last event is lost, the run's end is not
            for frame in (event(1), event(2), event(3), status("finished")):
                await ws.send(frame)
        heard.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        after = heard[-1].get("after", 0)
        last = 5 if run == "gap" else 4
        for seq in range(after + 1, last + 1):  # what the consumer's catch-up sends
            await ws.send(event(seq, "run_finished" if seq == last else "note"))
        if run == "gap":
            await ws.send(status("finished"))
        await ws.wait_closed()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    scripted.thread.start()
    scripted.ready.wait(10)
    yield scripted
    scripted.loop.call_soon_threadsafe(scripted.stop.set)
    scripted.thread.join(10)


@pytest.mark.parametrize(
    ("run", "expected", "after"), [("gap", [1, 2, 3, 4, 5], 2), ("tail", [1, 2, 3, 4], 3)]
)
def test_a_lost_message_is_asked_for_again_and_drawn_in_order(
    server: ScriptedServer, page: Any, run: str, expected: list[int], after: int
) -> None:
    page.goto(f"http://127.0.0.1:{server.port}/?run={run}")
    page.wait_for_function("typeof window.done === 'string'", timeout=10_000)
    assert page.evaluate("window.got") == expected
    assert page.evaluate("window.done") == "finished"
    assert server.heard[run] == [{"type": "resume", "after": after}]
    assert page.errors == []
