"""A live event is framed once for all of a process's viewers (lockviz.frames)."""

from __future__ import annotations

from typing import Any

from autobahn.websocket.protocol import PreparedMessage

from lockviz import frames
from lockviz.frames import Frame


class Viewer:
    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope
        self.texts: list[str] = []

    async def send(self, text_data: str | None = None) -> None:
        assert text_data is not None
        self.texts.append(text_data)


class Protocol:
    """As much of autobahn's server protocol as the writer touches."""

    STATE_OPEN = 3

    def __init__(self, state: int = STATE_OPEN) -> None:
        self.state = state
        self.wrote: list[PreparedMessage] = []

    def sendPreparedMessage(self, prepared: PreparedMessage) -> None:
        self.wrote.append(prepared)


async def test_every_viewer_under_daphne_gets_the_one_framing_and_others_the_text() -> None:
    frame = Frame('{"type": "event", "event": {"seq": 7, "said": "Alice asks for the lock ✓"}}')
    ones = [Protocol(), Protocol()]
    closed = Protocol(state=4)
    daphne = [Viewer({frames.PREPARED: frames.writer(p)}) for p in [*ones, closed]]
    plain = Viewer({})
    for viewer in [*daphne, plain]:
        await frames.send(viewer, frame)

    assert ones[0].wrote[0] is ones[1].wrote[0], "each viewer framed the event again"
    assert closed.wrote == [], "a frame was written to a connection that is not open"
    assert plain.texts == [frame.text]
    wire = ones[0].wrote[0].payloadHybi
    payload = frame.text.encode()
    assert wire[0] == 0x81, "not one final text frame"
    assert len(payload) < 126 and wire[1] == len(payload), "wrong length, or masked"
    assert wire[2:] == payload
