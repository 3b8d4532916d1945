"""Request bodies are bounded before they are read; an upload stops at the import limit."""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
from typing import Any

import pytest
from channels.testing import HttpCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from lockviz.edge.bodylimit import BodyLimit
from tests.conftest import AppServer


def in_thread(call: Any) -> Any:
    """Run a coroutine function on a loop of its own, in a thread of its own (the session's
    browser keeps an event loop in the main thread)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, call()).result()


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


def post(body: bytes, limit: int) -> tuple[Recorder, dict[str, Any]]:
    """POST ``body`` (its length declared) through a BodyLimit of ``limit`` bytes: the app behind
    it, and the response."""
    app = Recorder()
    headers = [(b"content-length", str(len(body)).encode())]
    communicator = HttpCommunicator(BodyLimit(app, limit), "POST", "/", body, headers)
    return app, in_thread(communicator.get_response)


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    app, response = post(b"x" * 101, limit=100)
    assert response["status"] == 413 and not app.called
    assert (
        b"larger than 0 MB" in response["body"] or b"the most lockviz accepts" in response["body"]
    )


def test_a_body_under_the_limit_goes_through_whole() -> None:
    app, response = post(b"y" * 100, limit=100)
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
