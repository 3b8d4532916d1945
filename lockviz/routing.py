from django.urls import path

from lockviz.consumers.rooms import RoomConsumer
from lockviz.consumers.runs import RunConsumer

# Channels routes ASGI consumers with Django's path(); django-stubs types path() for views only.
websocket_urlpatterns = [
    path("ws/runs/<str:run_id>/", RunConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/rooms/<str:code>/", RoomConsumer.as_asgi()),  # type: ignore[arg-type]
]
