"""The app's WebSocket routes, named once: Python asks :func:`run_stream` and :func:`room_stream`
for a stream's path (pages hand it to their script in the page data, lockviz/views/pagedata.py),
and no other module writes ``/ws/...`` by hand."""

from __future__ import annotations

from django.urls import path, reverse

from lockviz.consumers.rooms import RoomConsumer
from lockviz.consumers.runs import RunConsumer

# Channels routes ASGI consumers with Django's path(); django-stubs types path() for views only.
websocket_urlpatterns = [
    path("ws/runs/<str:run_id>/", RunConsumer.as_asgi(), name="run_stream"),  # type: ignore[arg-type]
    path("ws/rooms/<str:code>/", RoomConsumer.as_asgi(), name="room_stream"),  # type: ignore[arg-type]
]
urlpatterns = websocket_urlpatterns  # so reverse(..., urlconf="lockviz.routing") finds them


def run_stream(run_id: str) -> str:
    """The path of one run's event stream (lockviz/consumers/runs.py)."""
    return reverse("run_stream", urlconf=__name__, kwargs={"run_id": run_id})


def room_stream(code: str) -> str:
    """The path of one room's stream (lockviz/consumers/rooms.py)."""
    return reverse("room_stream", urlconf=__name__, kwargs={"code": code})
