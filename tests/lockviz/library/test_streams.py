"""A private saved run's live stream: its teacher's, on any device (a login, not a browser),
and nobody else's (as if there were no such run). Through the app's own LazyAuthMiddlewareStack, as
lockviz.asgi serves it."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from django.test import Client

from lockviz.consumers.lazyauth import LazyAuthMiddlewareStack
from lockviz.library import saving
from lockviz.models import Visibility
from lockviz.routing import websocket_urlpatterns
from tests.communicator import WebsocketCommunicator
from tests.lockviz.library.helpers import teacher, teachers_run

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]
app = LazyAuthMiddlewareStack(URLRouter(websocket_urlpatterns))


async def first_message(client: Client | None, run_id: str) -> tuple[dict[str, object], int]:
    headers = []
    if client is not None:
        headers = [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]
    ws = WebsocketCommunicator(app, f"/ws/runs/{run_id}/", headers=headers)
    assert (await ws.connect())[0]
    message = json.loads(await ws.receive_from())
    closed = await ws.receive_output(timeout=2) if message["type"] == "error" else {}
    await ws.disconnect()
    return message, int(closed.get("code", 0)) if isinstance(closed, dict) else 0


async def test_a_private_runs_stream_is_its_teachers_on_a_second_device_only() -> None:
    ada, _ = await database_sync_to_async(teacher)("ada")
    run = await database_sync_to_async(teachers_run)(ada)
    await database_sync_to_async(saving.save_run)(ada, run, Visibility.PRIVATE)
    second = Client()  # another device: logged in, no browser token of the first
    await database_sync_to_async(second.force_login)(ada)
    message, _ = await first_message(second, run.pk)
    assert message["type"] != "error", message
    _, bob_client = await database_sync_to_async(teacher)("bob")
    for client in (None, bob_client):  # anonymous; another teacher
        message, code = await first_message(client, run.pk)
        assert message == {"type": "error", "message": f"there is no run {run.pk!r}"}
        assert code == 4404
