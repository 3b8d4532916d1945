"""Request bodies are bounded before they are read; an upload stops at the import limit."""

from __future__ import annotations

import asyncio
import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from channels.testing import HttpCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from lockviz.bodylimit import BodyLimit
from tests.conftest import AppServer


def respond(communicator: HttpCommunicator) -> dict[str, Any]:
    """The app's answer, from an event loop in a thread of its own: a session-wide Playwright
    (tests/browser/) leaves this thread with a running loop, where async_to_sync refuses."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, communicator.get_response()).result()


class Recorder:
    def __init__(self) -> None:
        self.called = False
        self.body = b""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.called = True
        while True:
            message = await receive()
            self.body += message.get("body", b"")
            if message["type"] == "http.disconnect" or not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    app = Recorder()
    communicator = HttpCommunicator(
        BodyLimit(app, limit=100), "POST", "/import/", body=b"x" * 101,
        headers=[(b"content-length", b"101")],
    )  # fmt: skip
    response = respond(communicator)
    assert response["status"] == 413 and not app.called
    assert (
        b"larger than 0 MB" in response["body"] or b"the most lockviz accepts" in response["body"]
    )


def test_a_body_under_the_limit_goes_through_whole() -> None:
    app = Recorder()
    communicator = HttpCommunicator(
        BodyLimit(app, limit=100), "POST", "/", body=b"y" * 100,
        headers=[(b"content-length", b"100")],
    )  # fmt: skip
    response = respond(communicator)
    assert response["status"] == 200 and app.body == b"y" * 100


@pytest.mark.django_db
def test_an_upload_over_the_import_limit_is_not_kept_and_is_named(client: Client) -> None:
    big = SimpleUploadedFile("huge.json", b"{" + b" " * (5 * 1024 * 1024 + 10) + b"}")
    response = client.post("/import/", {"file": big})
    assert response.status_code == 400
    assert "<code>file</code>: huge.json is more than 5 MB" in response.content.decode()


@pytest.mark.live
def test_daphne_answers_413_before_the_body_is_sent(app_server: AppServer) -> None:
    with socket.create_connection(("127.0.0.1", app_server.port), timeout=10) as sock:
        sock.sendall(
            b"POST /import/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/octet-stream\r\nContent-Length: 52428800\r\n\r\n"
        )  # 50 MB announced, not one byte of it sent
        answer = sock.recv(4096).decode()
    assert answer.startswith("HTTP/1.1 413") and "the most lockviz accepts" in answer
