"""ASGI entry point: HTTP through Django (static files: WhiteNoise), WebSockets through Channels."""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lockviz.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from channels.sessions import SessionMiddlewareStack  # noqa: E402

from lockviz.bodylimit import BodyLimit  # noqa: E402
from lockviz.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": BodyLimit(django_asgi_app),
        # The session says which browser is on the other end: a room's presenter, or not.
        "websocket": AllowedHostsOriginValidator(
            SessionMiddlewareStack(
                URLRouter(websocket_urlpatterns)  # type: ignore[arg-type]  # see lockviz.routing
            )
        ),
    }
)

# Everything loaded so far lives as long as the process: keep it out of the collector's way, or
# each full collection walks it and pauses every live stream for tens of milliseconds.
gc.collect()
gc.freeze()
